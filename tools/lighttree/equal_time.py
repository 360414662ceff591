#!/usr/bin/env python3
"""RMSE at equal CPU time of NEE's light samplers (docs/PERFORMANCE.md, "Light tree").

For each sampler, renders SCENE with `--light-sampler S --spp N --threads 1` for several seeds,
takes each run's CPU time (user + system, minus a 1-spp run's: loading, BVH and light tree) and
its RMSE against REF (a PFM), and scales the mean squared error to equal time: MSE x t / t_ref,
the error of a Monte Carlo estimate being inversely proportional to its samples. Prints one line
per sampler and the ratio of each to the first.

  equal_time.py --caustic build/caustic --ref ref.pfm --res 160x90 --spp power=64 tree=32 -- scene.json
"""
import argparse, os, subprocess, sys, tempfile
import numpy as np


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        a = np.fromfile(f, dtype="<f4" if scale < 0 else ">f4")
    return a.reshape(h, w, 3 if kind == b"PF" else 1)


def cpu_run(cmd):
    t0 = os.times()
    r = subprocess.run(cmd, capture_output=True, text=True)
    t1 = os.times()
    if r.returncode:
        sys.exit("equal_time.py: %s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--caustic", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--res", default="160x90")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--spp", nargs="+", required=True, help="SAMPLER=SPP ...")
    ap.add_argument("scene", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    scene = a.scene[1:] if a.scene and a.scene[0] == "--" else a.scene
    ref = read_pfm(a.ref).astype(np.float64)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for item in a.spp:
            sampler, spp = item.split("=")
            base = [a.caustic, "render", *scene, "--res", a.res, "--threads", "1", "-q", "--light-sampler", sampler]
            setup = cpu_run(base + ["--spp", "1", "-o", os.path.join(d, "setup.pfm")])
            mse, t = [], []
            for s in range(a.seeds):
                out = os.path.join(d, "%s_%d.pfm" % (sampler, s))
                t.append(max(1e-3, cpu_run(base + ["--spp", spp, "--seed", str(s + 1), "-o", out]) - setup))
                mse.append(float(np.mean((read_pfm(out) - ref) ** 2)))
            rows.append((sampler, int(spp), float(np.mean(t)), float(np.mean(mse))))
    t0 = rows[0][2]
    for sampler, spp, t, mse in rows:
        eq = mse * t / t0  # the MSE this sampler reaches in the first one's time
        print("%-6s spp=%4d cpu_s=%7.2f rmse=%.5f rmse_at_equal_time=%.5f ratio=%.3f" %
              (sampler, spp, t, mse ** 0.5, eq ** 0.5, (eq / rows[0][3]) ** 0.5))


if __name__ == "__main__":
    main()
