#!/usr/bin/env python3
"""Writes a scene JSON that places one mesh N x N x M times through INSTANCES (true instancing:
docs/scene-format.md, "Instancing"): the benchmark scenes of docs/PERFORMANCE.md, "Instancing".

  make_scene.py MESH.obj OUT.json --grid 100x100x1 [--spacing 16] [--seed 1] [--res 256x256]

Each placement is the mesh under a random rotation about y, a scale in [0.8, 1.2] and a grid
position (spacing apart, on the ground plane), so that the top-level boxes overlap as in a real
scene; a quad ground and a sun-like sky light it. --flat writes every placement as an object of
its own FILE instead (the same scene, read once and placed by scene_instance_mesh)."""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mesh")
    ap.add_argument("out")
    ap.add_argument("--grid", default="10x10x1")
    ap.add_argument("--spacing", type=float, default=16.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--res", default="256x256")
    a = ap.parse_args()
    nx, nz, ny = (int(v) for v in a.grid.split("x"))
    rnd = random.Random(a.seed)
    placements = []
    for i in range(nx):
        for j in range(nz):
            for k in range(ny):
                s = rnd.uniform(0.8, 1.2)
                placements.append({
                    "TRANS": [round((i - (nx - 1) / 2) * a.spacing, 4), round(k * a.spacing * 0.8, 4),
                              round((j - (nz - 1) / 2) * a.spacing, 4)],
                    "ROTAT": [0, round(rnd.uniform(0, 360), 3), 0],
                    "SCALE": [round(s, 4)] * 3,
                })
    ext = max(nx, nz) * a.spacing
    w, h = (int(v) for v in a.res.split("x"))
    mesh = os.path.relpath(os.path.abspath(a.mesh), os.path.dirname(os.path.abspath(a.out)))
    scene = {
        "Materials": {
            "ground": {"TYPE": "Diffuse", "RGB": [0.6, 0.6, 0.6]},
            "model": {"TYPE": "Diffuse", "RGB": [0.8, 0.5, 0.3]},
        },
        "Environment": {"RGB": [0.8, 0.85, 1.0]},
        "Lights": [{"TYPE": "directional", "DIRECTION": [-0.4, -1.0, -0.3], "RGB": [3.0, 2.9, 2.7]}],
        "Camera": {"RES": [w, h], "FOVY": 30.0, "ITERATIONS": 16, "DEPTH": 4, "FILE": "instanced",
                   "EYE": [ext * 0.35, ext * 0.18, ext * 0.55], "LOOKAT": [0.0, 0.0, 0.0], "UP": [0, 1, 0]},
        "Objects": [
            {"TYPE": "plane", "MATERIAL": "ground", "ROTAT": [-90, 0, 0], "SCALE": [ext * 1.5, ext * 1.5, 1]},
            {"TYPE": "mesh", "FILE": mesh, "MATERIAL": "model", "INSTANCES": placements},
        ],
    }
    with open(a.out, "w") as f:
        json.dump(scene, f, separators=(",", ":"))
        f.write("\n")
    print(f"{a.out}: {len(placements)} placements of {a.mesh}")


if __name__ == "__main__":
    main()
