#!/usr/bin/env python3
"""caustic against Mitsuba 3 on the Mitsuba scenes of the public corpus (docs/corpus.md), one CPU
thread each: samples/s (median of --runs, CPU seconds of the render alone), the mean's ratio, the
RMSE against the scene's ref-mitsuba.exr at the same spp, and caustic's RMSE at equal time (the spp
that takes Mitsuba's median CPU seconds). Mitsuba runs in this process (llvm_ad_rgb unless
--variant; a 1 spp render first so that its kernels are compiled before timing); caustic runs as a
process, its 1 spp run's CPU seconds (loading, BVH) subtracted. Each run uses its own seed.

  DRJIT_LIBLLVM_PATH=/path/to/libLLVM.so.19.1 corpus_equal_time.py --caustic build/caustic \\
      --corpus ../shared/scenes-real --runs 5
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from sampler_convergence import read_pfm  # noqa: E402  (tools/, one PFM reader)

# (folder, file, spp): the scenes whose reference is the scene's own meaning (the glass
# chandelier's reference is Mitsuba's particle tracer, which disagrees with its path tracer on
# that file: docs/corpus.md)
SCENES = [
    ("mi3-infinite-mirrors", "tests/scenes/infinite_mirrors/scene_path.xml", 256),
    ("mi3-bsdf-sphere-grid", "tests/scenes/bsdf_spheres/test_envmap_path.xml", 256),
    ("mi3-bumpmap-sphere", "tests/scenes/bsdf_spheres/test_bumpmap_path.xml", 256),
    ("mi3-spot-textured", "tests/scenes/spot_light/test_spot_direct.xml", 256),
    ("mi3-principled-textured", "tests/scenes/bsdf_spheres/test_texturedprincipled1_path.xml", 256),
    ("mi3-various-shapes", "tests/scenes/various_shapes/test_various_shapes_path.xml", 16),
    ("mi05-layered-shoes", "layered_shoes.mitsuba3.xml", 16),
]


def cpu_of(cmd):
    t0 = os.times()
    r = subprocess.run(cmd, capture_output=True, text=True)
    t1 = os.times()
    if r.returncode != 0:
        sys.exit(f"corpus_equal_time.py: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)


def caustic(binary, scene, res, spp, seed, out):
    args = [binary, "render", scene, "--res", res, "--threads", "1", "--seed", str(seed), "--quiet"]
    t = cpu_of(args + ["--spp", str(spp), "-o", out])
    t1 = cpu_of(args + ["--spp", "1", "-o", out + ".1.pfm"])
    return max(t - t1, 1e-6) * spp / max(spp - 1, 1), np.flipud(read_pfm(out))[:, :, :3]


def luminance(img):
    return float(np.mean(0.2126 * img[:, :, 0] + 0.7152 * img[:, :, 1] + 0.0722 * img[:, :, 2]))


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--caustic", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--variant", default="llvm_ad_rgb")
    ap.add_argument("--only", help="comma-separated folder names")
    a = ap.parse_args()
    import drjit as dr
    import mitsuba as mi

    mi.set_variant(a.variant)
    only = set(a.only.split(",")) if a.only else None
    tmp = tempfile.mkdtemp(prefix="corpus_et_")
    print("| scene | res, spp | Mitsuba Ms/s (CPU s) | caustic Ms/s (CPU s) | caustic / Mitsuba | "
          "mean Mitsuba / ref | mean caustic / ref | RMSE Mitsuba | RMSE caustic, same spp | "
          "RMSE caustic, equal time (spp) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for folder, rel, spp in SCENES:
        if only and folder not in only:
            continue
        d = os.path.join(a.corpus, folder)
        path = os.path.abspath(os.path.join(d, rel))
        ref = np.array(mi.Bitmap(os.path.join(d, "ref-mitsuba.exr")).convert(
            mi.Bitmap.PixelFormat.RGB, mi.Struct.Type.Float32, srgb_gamma=False))
        h, w = ref.shape[:2]
        cwd = os.getcwd()
        os.chdir(os.path.dirname(path))  # Mitsuba resolves relative paths from the working folder too
        try:
            # loading with a one-thread pool waits for itself (Mitsuba 3.9.1): load with all
            # cores, render with one
            dr.set_thread_count(os.cpu_count())
            # at the reference's size (some were rendered larger and averaged down: the corpus README)
            with open(path) as f:
                xml = f.read()
            xml = re.sub(r'(<integer\s+name="width"\s+value=")\d+', rf"\g<1>{w}", xml)
            xml = re.sub(r'(<integer\s+name="height"\s+value=")\d+', rf"\g<1>{h}", xml)
            scene = mi.load_string(xml)
            dr.set_thread_count(1)
            mi.render(scene, spp=1, seed=1)  # compiles the kernels
            mt, mimg = [], []
            for k in range(a.runs):
                t0 = time.process_time()
                img = mi.render(scene, spp=spp, seed=100 + k)
                img = np.array(img)[:, :, :3]
                mt.append(time.process_time() - t0)
                mimg.append(img)
        finally:
            os.chdir(cwd)
        ct, cimg = [], []
        for k in range(a.runs):
            t, img = caustic(a.caustic, path, f"{w}x{h}", spp, 200 + k, os.path.join(tmp, f"{folder}_{k}.pfm"))
            ct.append(t)
            cimg.append(img)
        tm, tc = statistics.median(mt), statistics.median(ct)
        work = w * h * spp / 1e6
        eq = max(1, round(spp * tm / tc))
        eqerr = []
        for k in range(3):
            _, img = caustic(a.caustic, path, f"{w}x{h}", eq, 300 + k, os.path.join(tmp, f"{folder}_eq{k}.pfm"))
            eqerr.append(rmse(img, ref))
        lref = luminance(ref)
        print(f"| {folder} | {w}x{h}, {spp} | {work / tm:.3f} ({tm:.3f}) | {work / tc:.3f} ({tc:.3f}) | "
              f"{tm / tc:.2f} | {statistics.mean(luminance(i) for i in mimg) / lref:.4f} | "
              f"{statistics.mean(luminance(i) for i in cimg) / lref:.4f} | "
              f"{statistics.mean(rmse(i, ref) for i in mimg):.4f} | "
              f"{statistics.mean(rmse(i, ref) for i in cimg):.4f} | {statistics.mean(eqerr):.4f} ({eq}) |",
              flush=True)


if __name__ == "__main__":
    main()
