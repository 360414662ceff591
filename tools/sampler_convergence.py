#!/usr/bin/env python3
"""Error against samples per pixel for several samplers (and binaries): RMSE of each image
against a high-spp reference (rendered with the independent sampler, its own seed), the MSE
averaged over --seeds renders per point. Needs numpy; prints a markdown table.

  tools/sampler_convergence.py --scene cornell --res 128x128 --ref-spp 8192 \
      'old sobol=/tmp/old/caustic --sampler sobol' 'sobol=build/caustic --sampler sobol' \
      'random=build/caustic --sampler random'
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4")
    c = 3 if kind == b"PF" else 1
    return data.reshape(h, w, c).astype(np.float64)


def render(cmd, scene, res, spp, seed, extra, out):
    binary, *opts = cmd.split()
    args = [binary, "render", scene, "--res", res, "--spp", str(spp), "--seed", str(seed), "--quiet", "-o", out]
    args += opts + extra
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sampler_convergence.py: {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    return read_pfm(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scene", required=True)
    ap.add_argument("--res", default="128x128")
    ap.add_argument("--ref-spp", type=int, default=8192)
    ap.add_argument("--ref-cmd", help="binary for the reference (default: the last LABEL's, --sampler random)")
    ap.add_argument("--max-spp", type=int, default=256)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--extra", default="", help="more render options for every run, e.g. '--max-depth 8'")
    ap.add_argument("cmds", nargs="+", help="LABEL=BINARY [render options]")
    a = ap.parse_args()
    extra = a.extra.split()
    cmds = [c.partition("=")[::2] for c in a.cmds]
    tmp = tempfile.mkdtemp()
    ref_cmd = a.ref_cmd or (cmds[-1][1].split()[0] + " --sampler random")
    ref = render(ref_cmd, a.scene, a.res, a.ref_spp, 987654, extra, os.path.join(tmp, "ref.pfm"))
    spps = [1 << k for k in range(0, a.max_spp.bit_length()) if (1 << k) <= a.max_spp]
    rows = {}
    for label, cmd in cmds:
        rows[label] = []
        for spp in spps:
            mse = 0.0
            for s in range(a.seeds):
                img = render(cmd, a.scene, a.res, spp, 1 + s, extra, os.path.join(tmp, "img.pfm"))
                mse += float(np.mean((img - ref) ** 2))
            rows[label].append((mse / a.seeds) ** 0.5)
            print(f"{label} spp {spp}: RMSE {rows[label][-1]:.5f}", file=sys.stderr, flush=True)
    print(f"RMSE against a {a.ref_spp}-spp reference ({a.scene}, {a.res}, mean of {a.seeds} seeds' MSE)\n")
    print("| spp | " + " | ".join(l for l, _ in cmds) + " |")
    print("|---:|" + "---:|" * len(cmds))
    for i, spp in enumerate(spps):
        print(f"| {spp} | " + " | ".join(f"{rows[l][i]:.5f}" for l, _ in cmds) + " |")
    if len(cmds) > 1:
        last = cmds[-1][0]
        print(f"\nratio to {last}: " + "; ".join(
            f"{l}: " + ", ".join(f"{rows[l][i] / rows[last][i]:.2f}" for i in range(len(spps))) for l, _ in cmds[:-1]))


if __name__ == "__main__":
    main()
