#!/usr/bin/env python3
"""Writes a procedural cloud as a Mitsuba 3 .vol grid (header 'VOL' 3, encoding 1 float32, x/y/z
resolution, 1 channel, bounding box; values x fastest), for caustic's grid media (scene JSON
"TYPE": "Grid", docs/scene-format.md) and Mitsuba's gridvolume alike.

  make_cloud_vol.py OUT.vol [--res 512] [--seed 1] [--bbox x0 y0 z0 x1 y1 z1] [--scene OUT.json]

The density is a few soft blobs with fractal value noise carved out of them, in [0, 1]. With
--scene it also writes a caustic scene that renders the cloud at 1080p in a unit-free box lit by
a sun-like distant light and a sky (the GPU frame-rate check of the issue: `caustic render
OUT.json --device cuda`). Needs numpy; 512^3 takes about a minute and 512 MiB."""
import argparse
import json
import os
import struct
import sys

import numpy as np


def value_noise(res, cells, rng):
    """Trilinear value noise over res^3 from a random lattice of cells^3 (+1) values."""
    lat = rng.random((cells + 1, cells + 1, cells + 1), dtype=np.float32)
    x = (np.arange(res, dtype=np.float32) + 0.5) / res * cells
    i = np.minimum(x.astype(np.int32), cells - 1)
    f = x - i
    f = f * f * (3 - 2 * f)
    # separable trilinear: z, y, x axes in turn (array index order z, y, x)
    a = lat[i][:, :, :] * (1 - f)[:, None, None] + lat[i + 1] * f[:, None, None]
    a = a[:, i, :] * (1 - f)[None, :, None] + a[:, i + 1, :] * f[None, :, None]
    a = a[:, :, i] * (1 - f)[None, None, :] + a[:, :, i + 1] * f[None, None, :]
    return a


def cloud(res, seed):
    rng = np.random.default_rng(seed)
    c = (np.arange(res, dtype=np.float32) + 0.5) / res
    z, y, x = c[:, None, None], c[None, :, None], c[None, None, :]
    d = np.zeros((res, res, res), dtype=np.float32)
    for _ in range(6):
        cx, cy, cz = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.55), rng.uniform(0.3, 0.7)
        r = rng.uniform(0.12, 0.22)
        q = ((x - cx) ** 2 + ((y - cy) * 1.4) ** 2 + (z - cz) ** 2) / (r * r)
        d = np.maximum(d, np.clip(1.0 - q, 0.0, 1.0))
    n = np.zeros_like(d)
    amp, cells = 0.5, 4
    while cells <= min(res // 2, 64):
        n += amp * value_noise(res, cells, rng)
        amp *= 0.5
        cells *= 2
    return np.clip(d * 1.6 - 0.55 * n, 0.0, 1.0).astype(np.float32)


def write_vol(path, d, bbox):
    res_z, res_y, res_x = d.shape
    with open(path, "wb") as f:
        f.write(b"VOL" + bytes([3]) + struct.pack("<iiiii", 1, res_x, res_y, res_z, 1))
        f.write(struct.pack("<6f", *bbox))
        f.write(np.ascontiguousarray(d, dtype="<f4").tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--res", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bbox", type=float, nargs=6, default=[-1, -1, -1, 1, 1, 1])
    ap.add_argument("--scene", help="also write a caustic scene JSON rendering the cloud at 1080p")
    a = ap.parse_args()
    if a.res < 2 or a.res > 1024:
        sys.exit("make_cloud_vol.py: --res must be 2 to 1024")
    d = cloud(a.res, a.seed)
    write_vol(a.out, d, a.bbox)
    print(f"{a.out}: {a.res}^3 voxels, {d.nbytes / 2**20:.0f} MiB, mean density {d.mean():.4f}, max {d.max():.3f}")
    if a.scene:
        lo, hi = a.bbox[:3], a.bbox[3:]
        scene = {
            "Media": {"cloud": {"TYPE": "Grid", "FILE": os.path.relpath(a.out, os.path.dirname(a.scene) or "."),
                                "ALBEDO": 0.95, "DENSITY": 1, "SCALE": 20, "G": 0.6, "BOX": [lo, hi]}},
            "Materials": {"boundary": {"TYPE": "Interface"},
                          "ground": {"TYPE": "Diffuse", "RGB": [0.4, 0.4, 0.4]}},
            "Environment": {"RGB": [0.5, 0.7, 1.0]},
            "Lights": [{"TYPE": "directional", "DIRECTION": [-0.4, -1, -0.3], "RGB": [3, 2.8, 2.5]}],
            "Camera": {"RES": [1920, 1080], "FOVY": 14, "EYE": [0, 0.3, 4.2], "LOOKAT": [0, 0, 0], "UP": [0, 1, 0],
                       "ITERATIONS": 64, "DEPTH": 32},
            "Objects": [
                {"TYPE": "cube", "MATERIAL": "boundary", "INTERIOR": "cloud",
                 "TRANS": [(l + h) / 2 for l, h in zip(lo, hi)], "SCALE": [h - l for l, h in zip(lo, hi)]},
                {"TYPE": "cube", "MATERIAL": "ground", "TRANS": [0, lo[1] - 0.55, 0], "SCALE": [20, 0.1, 20]}]}
        with open(a.scene, "w") as f:
            json.dump(scene, f, indent=1)
        print(f"{a.scene}: the cloud in its box at 1920x1080")


if __name__ == "__main__":
    main()
