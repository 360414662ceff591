#!/usr/bin/env python3
"""Renders a Mitsuba 3 XML scene with Mitsuba itself (PyPI mitsuba) and times it: the other side of
caustic's matched-scene checks (tests/test_mitsuba_media.sh: caustic reads the same file) and of
its samples/s comparisons (docs/PERFORMANCE.md).

  render_xml.py SCENE.xml --spp N [--variant scalar_rgb] [--threads 1] [--seed 1] [--out img.npy]
                [--runs 1] [--warmup] [--integrator volpathmis [--max-depth -1]]
prints per run: time=... cpu_seconds=... Msamples/s=... cpu_Msamples/s=... mean=R,G,B (the render
alone; --warmup renders once before, at 1 spp, so that a JIT variant's kernels are compiled; cpu:
the process's CPU time)."""
import argparse
import os
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scene")
    ap.add_argument("--spp", type=int, required=True)
    ap.add_argument("--variant", default="scalar_rgb")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--warmup", action="store_true")
    ap.add_argument("--max-depth", type=int, default=-1, help="with --integrator: its max_depth (-1: unlimited)")
    ap.add_argument("--integrator", help="render with this integrator instead of the file's (its max_depth kept), "
                    "e.g. volpathmis: volpath's spectral-MIS sibling")
    a = ap.parse_args()
    import drjit as dr
    import mitsuba as mi

    mi.set_variant(a.variant)
    if a.threads > 0:
        dr.set_thread_count(a.threads)
    scene = mi.load_file(a.scene)
    integrator = scene.integrator()
    if a.integrator:
        integrator = mi.load_dict({"type": a.integrator, "max_depth": int(a.max_depth)})
    film = scene.sensors()[0].film()
    w, h = film.crop_size()
    if a.warmup:
        np.array(mi.render(scene, integrator=integrator, spp=1, seed=1000 + a.seed))
    img = None
    for run in range(a.runs):
        c0, t0 = time.process_time(), time.perf_counter()
        img = np.array(mi.render(scene, integrator=integrator, spp=a.spp, seed=a.seed + run))
        t1, c1 = time.perf_counter(), time.process_time()
        n = w * h * a.spp / 1e6
        m = img.reshape(-1, img.shape[-1])[:, :3].mean(0)
        print("time=%.3f cpu_seconds=%.3f Msamples/s=%.4f cpu_Msamples/s=%.4f mean=%.6g,%.6g,%.6g"
              % (t1 - t0, c1 - c0, n / (t1 - t0), n / max(c1 - c0, 1e-9), m[0], m[1], m[2]))
        sys.stdout.flush()
    if a.out:
        np.save(a.out, img[:, :, :3].astype(np.float32))


if __name__ == "__main__":
    main()
