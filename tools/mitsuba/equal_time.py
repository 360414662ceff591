#!/usr/bin/env python3
"""Error at equal time, caustic against Mitsuba 3 (issue 18's "lower error at equal time"): RMSE of
each renderer's images against one high-spp reference, with the CPU seconds each took, one thread.
The reference is caustic's independent sampler at --ref-spp (its own seed); Mitsuba renders
--mi-spp samples through caustic_to_mitsuba.py (box filter, matched scene), caustic --spp, each
--seeds times with different seeds; the MSE is averaged over the seeds. Equal time: choose
--spp so that caustic's CPU seconds match Mitsuba's (the table prints both), or read the
efficiency column, 1 / (MSE x seconds), which does not depend on the spp for the independent
sampler (Sobol's error falls faster than 1/spp, so compare at matched seconds where it matters).
Run with a Python that has numpy and mitsuba (and DRJIT_LIBLLVM_PATH set, docs/performance-log.md).

  equal_time.py --caustic build/caustic --scene cornell --res 256x256 --mi-spp 64 --spp 56 \\
      --ref-spp 4096 --seeds 3
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from sampler_convergence import read_pfm  # noqa: E402  (tools/, one PFM reader)
BUILTIN_JSON = {"cornell": os.path.join(HERE, "..", "..", "scenes", "cornell.json")}


def read_image(path):
    """A caustic PFM, rows from the top as Mitsuba's arrays (PFM rows run bottom to top)."""
    return np.flipud(read_pfm(path))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"equal_time.py: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


def cpu_of(cmd):
    t0 = os.times()
    out = run(cmd)
    t1 = os.times()
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system), out


def caustic(binary, scene, res, spp, seed, sampler, threads, out):
    """CPU seconds of the render alone (minus a 1-spp run's loading and BVH build, scaled back to
    spp samples; Mitsuba's are its render alone too) and the image at out."""
    args = [binary, "render", scene, "--res", res, "--seed", str(seed), "--sampler", sampler, "--threads", str(threads),
            "--quiet"]
    t, _ = cpu_of(args + ["--spp", str(spp), "-o", out])
    if spp < 2:
        return t
    t1, _ = cpu_of(args + ["--spp", "1", "-o", out + ".1.pfm"])
    return (t - t1) * spp / (spp - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--caustic", required=True, help="the caustic binary")
    ap.add_argument("--scene", required=True, help="a caustic scene file, or cornell")
    ap.add_argument("--res", required=True)
    ap.add_argument("--mi-spp", type=int, required=True)
    ap.add_argument("--spp", type=int, required=True, help="caustic's samples per pixel")
    ap.add_argument("--ref-spp", type=int, default=4096)
    ap.add_argument("--ref-threads", type=int, default=os.cpu_count())
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sampler", default="sobol", help="caustic's sampler for the compared images")
    a = ap.parse_args()
    mi_scene = BUILTIN_JSON.get(a.scene, a.scene)
    with tempfile.TemporaryDirectory() as tmp:
        ref_path = os.path.join(tmp, "ref.pfm")
        caustic(a.caustic, a.scene, a.res, a.ref_spp, 1000003, "random", a.ref_threads, ref_path)
        ref = read_image(ref_path)
        rows = {"caustic": [], "mitsuba": []}
        for s in range(a.seeds):
            path = os.path.join(tmp, f"c{s}.pfm")
            t = caustic(a.caustic, a.scene, a.res, a.spp, s + 1, a.sampler, 1, path)
            rows["caustic"].append((t, float(np.mean((read_image(path) - ref) ** 2))))
            npy = os.path.join(tmp, f"m{s}.npy")
            out = run([sys.executable, os.path.join(HERE, "caustic_to_mitsuba.py"), mi_scene, "--spp", str(a.mi_spp),
                       "--res", a.res, "--threads", "1", "--out", npy, "--seed", str(s + 1)])
            m = re.search(r"cpu_seconds=([0-9.]+)", out)
            img = np.load(npy).astype(np.float64)[..., :3]
            if np.mean((img[::-1] - ref) ** 2) < np.mean((img - ref) ** 2):
                sys.exit("equal_time.py: Mitsuba's image matches the reference better upside down: orientation")
            rows["mitsuba"].append((float(m.group(1)), float(np.mean((img - ref) ** 2))))
        print(f"reference: caustic random, {a.ref_spp} spp, mean {ref.mean():.6f}")
        print("| renderer | spp | CPU seconds (mean) | RMSE | 1 / (MSE x seconds) |")
        print("|---|---:|---:|---:|---:|")
        for name, spp in (("caustic " + a.sampler, a.spp), ("mitsuba independent", a.mi_spp)):
            r = rows[name.split()[0]]
            t = float(np.mean([x[0] for x in r]))
            mse = float(np.mean([x[1] for x in r]))
            print(f"| {name} | {spp} | {t:.2f} | {mse ** 0.5:.5f} | {1.0 / (mse * t):.1f} |")


if __name__ == "__main__":
    main()
