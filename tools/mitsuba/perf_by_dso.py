#!/usr/bin/env python3
"""Splits Mitsuba 3 renders (llvm variants) into traversal and the rest, from two `perf record -e
cpu-clock` profiles (no call graph) of tools/mitsuba/caustic_to_mitsuba.py: one with --runs 1 and
one with --runs 6, so that their difference is five renders (loading, the BVH build, the warm-up
render and the JIT compilation cancel). Traversal = Embree (Mitsuba's libembree3.so) plus the
user-geometry intersection Embree calls back (sphere.so, libmitsuba's embree_* glue); the rest =
the JIT-compiled megakernel (camera, sampler, BSDF, emitter sampling, MIS, film). Closest-hit and
any-hit traversal are told apart by symbol (intersect / occluded, ray_intersect / ray_test).
docs/performance-log.md, 2026-11-28, branch `bound18` ("where a sample's time goes").

  tools/mitsuba/perf_by_dso.py RUNS1.data RUNS6.data [RUNS1.data RUNS6.data ...]
"""
import collections
import re
import subprocess
import sys


def categories(data):
    out = subprocess.run(["perf", "report", "-i", data, "--sort", "dso,sym", "--stdio", "-F", "sample,dso,sym"],
                         capture_output=True, text=True, check=True).stdout
    c = collections.Counter()
    for line in out.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        n, rest = line.split(None, 1)
        if rest.startswith("[JIT]"):
            k = "JIT megakernel"
        elif "libembree3.so" in rest or rest.startswith("sphere.so") or ("libmitsuba.so" in rest and "embree_" in rest):
            q = ("any hit" if re.search(r"occluded|ray_test", rest) else
                 "closest hit" if re.search(r"intersect", rest) else "other (build)")
            k = f"traversal {q}: " + ("embree" if "libembree3" in rest else "user geometry")
        elif "libLLVM" in rest:
            k = "LLVM (compilation)"
        else:
            k = "other: " + rest.split()[0]
        c[k] += int(n)
    return c


def main():
    if len(sys.argv) < 3 or len(sys.argv) % 2 == 0:
        sys.exit("usage: perf_by_dso.py RUNS1.data RUNS6.data [RUNS1.data RUNS6.data ...]")
    for a, b in zip(sys.argv[1::2], sys.argv[2::2]):
        ca, cb = categories(a), categories(b)
        d = {k: cb[k] - ca[k] for k in set(ca) | set(cb)}
        jit = d.get("JIT megakernel", 0)
        closest = sum(v for k, v in d.items() if k.startswith("traversal closest"))
        anyhit = sum(v for k, v in d.items() if k.startswith("traversal any"))
        base = jit + closest + anyhit
        print(f"{b} - {a}: {sum(d.values())} samples; of traversal + JIT ({base}): closest hit "
              f"{100 * closest / base:.1f} %, any hit {100 * anyhit / base:.1f} %, JIT {100 * jit / base:.1f} %")
        for k, v in sorted(d.items(), key=lambda x: -x[1]):
            if abs(v) >= 10:
                print(f"   {k:42s} {v:6d}")


if __name__ == "__main__":
    main()
