#!/usr/bin/env python3
"""Traces the ray sets that `caustic-bench-rays --write-rays DIR` writes with Mitsuba 3, so that
caustic's traversal can be set beside NVIDIA OptiX on the same card (docs/performance-log.md, "OptiX
through Mitsuba 3 on caustic's benchmark rays"). In `cuda_ad_rgb` Mitsuba hands the rays to OptiX,
which on a GPU without RT cores (H100, H200) traverses in software.

A ray file (tools/bench_rays/bench_rays.c): a uint64 count, then per ray seven float32 (origin
xyz, direction xyz, tmax), little-endian. Files named *.shadow.rays are any-hit rays, traced by
`scene.ray_test`; the others are closest-hit rays, traced by `scene.ray_intersect_preliminary`
(once per value of --coherent; Mitsuba documents the flag as used by Embree in the llvm variants
only). The mesh is loaded whole as one Mitsuba shape (`obj` or `ply` plugin; OBJ materials,
groups and normals are ignored, as caustic-bench-rays does); a caustic SCENE.json is translated by
caustic_to_mitsuba.py as the render comparison does (every shape, e.g. the Cornell box's sphere as
Embree user geometry in the llvm variants).

  trace_rays.py MESH.obj|MESH.ply|SCENE.json RAYS... [--variant cuda_ad_rgb] [--runs 7] [--warmup 2]
                [--coherent 0,1] [--order rows,tiles] [--limit N] [--threads N]

Per set and mode, after --warmup untimed calls (the first compiles the kernel and the OptiX
pipeline; later calls find it in Dr.Jit's kernel cache), --runs timed calls, each
`dr.sync_thread(); call; dr.eval(result); dr.sync_thread()`. Printed: the median of the calls'
wall time (Python included: building the traced graph, code generation, the cache look-up,
the launch), the median of the kernels' execution time from Dr.Jit's kernel history (CUDA
events around the launch): the latter is the figure to set beside caustic's kernel time, and the
median of the process's CPU time per call (the llvm variants with --threads 1 on a shared machine:
the figure to set beside caustic-bench-rays --cpu-time). Hit
counts and the sum of hit distances (closest hit; float64) as caustic-bench-rays prints them.
--order tiles also traces a primary set (a square image) in caustic's order: warps of 8x4 pixels
(src/cuda/trace_kernel.cuh, trace_fetch), by permuting the rays before the timed calls.
In scalar variants (for checking this script without a GPU) the rays are traced one by one in
Python, the first --limit of each set, untimed."""
import argparse
import array
import json
import os
import statistics
import struct
import sys
import time


def read_rays(path):
    """(count, array('f') of 7 * count floats) from a caustic-bench-rays ray file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        sys.exit(f"trace_rays.py: {path}: not a ray file (too short)")
    (n,) = struct.unpack_from("<Q", data, 0)
    if len(data) != 8 + 28 * n:
        sys.exit(f"trace_rays.py: {path}: {len(data)} bytes, expected {8 + 28 * n} for {n} rays")
    a = array.array("f")
    a.frombytes(data[8:])
    if sys.byteorder != "little":
        a.byteswap()
    return n, a


def set_name(path):
    """primary / diffuse / shadow from <stem>.<set>.rays."""
    parts = os.path.basename(path).split(".")
    return parts[-2] if len(parts) >= 3 else parts[0]


def load_scene(mi, mesh):
    ext = os.path.splitext(mesh)[1].lower()
    if ext == ".json":  # a caustic scene, translated as the render comparison does (its BVH: every shape)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from caustic_to_mitsuba import load
        return mi.load_dict(load(mi, mesh, None, 1)[0])
    plugin = {".obj": "obj", ".ply": "ply"}.get(ext)
    if plugin is None:
        sys.exit(f"trace_rays.py: {mesh}: expected .obj or .ply")
    return mi.load_dict({"type": "scene", "mesh": {"type": plugin, "filename": mesh}})


def tile_order(dr, UInt32, n, width):
    """Index of the ray each launch slot takes in caustic's 8x4 warp tiles (trace_fetch)."""
    s = dr.arange(UInt32, n)
    base, lane = s - (s & 31), s & 31
    band, col = base // (4 * width), (base % (4 * width)) // 32
    tiled = (band * 4 + lane // 8) * width + col * 8 + (lane & 7)
    full = band < n // (4 * width)  # a partial last band stays in order
    return dr.select(full, tiled, s)


def trace_scalar(mi, scene, name, n, a, limit):
    m = min(n, limit)
    hits, tsum = 0, 0.0
    for i in range(m):
        r = a[7 * i : 7 * i + 7]
        ray = mi.Ray3f(mi.Point3f(r[0], r[1], r[2]), mi.Vector3f(r[3], r[4], r[5]))
        ray.maxt = r[6]
        if name == "shadow":
            hits += bool(scene.ray_test(ray))
        else:
            pi = scene.ray_intersect_preliminary(ray)
            if pi.is_valid():
                hits += 1
                tsum += float(pi.t)
    return m, hits, tsum


def first(x):
    """A reduction's result as a Python number (Dr.Jit returns an array of one)."""
    try:
        return x[0]
    except TypeError:
        return x


def kernel_ms(dr, hist):
    """Summed execution time of the launches in a kernel history, how many there were, whether
    OptiX ran them and whether all came from Dr.Jit's in-memory cache (no compilation)."""
    jit = [h for h in hist if h.get("type") == dr.KernelType.JIT]
    return (sum(h["execution_time"] for h in jit), len(jit), any(h.get("uses_optix") for h in jit),
            all(h.get("cache_hit") for h in jit))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mesh")
    ap.add_argument("rays", nargs="+")
    ap.add_argument("--variant", default="cuda_ad_rgb")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--coherent", default="0,1", help="closest hit: values of ray_intersect_preliminary's flag")
    ap.add_argument("--order", default="rows,tiles", help="primary rays: rows (the file's order), tiles (8x4 warps)")
    ap.add_argument("--limit", type=int, default=1 << 62, help="scalar variants: trace this many rays per set")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--threads", type=int, help="llvm variants: Dr.Jit's thread count (1: one core)")
    args = ap.parse_args()

    import drjit as dr
    import mitsuba as mi

    mi.set_variant(args.variant)
    if args.threads:
        dr.set_thread_count(args.threads)
    t0 = time.perf_counter()
    scene = load_scene(mi, args.mesh)
    load_s = time.perf_counter() - t0
    ntri = sum(s.primitive_count() for s in scene.shapes())
    scalar = args.variant.startswith("scalar")
    if not args.json:
        print(f"# Mitsuba {mi.__version__}, Dr.Jit {dr.__version__}, variant {args.variant}; {args.mesh}: "
              f"{ntri} primitives, scene loaded in {load_s:.2f} s")

    def report(**kw):
        if args.json:
            print(json.dumps(kw))
        else:
            rate = "(untimed)"
            if "kernel_mrays" in kw:
                rate = (f"{kw['kernel_mrays']:9.2f} Mrays/s kernel, {kw['wall_mrays']:9.2f} wall, {kw['cpu_mrays']:9.2f} CPU "
                        f"(median of {kw['runs']}; "
                        f"{kw['kernels_per_call']} kernel(s) a call, OptiX {int(kw['uses_optix'])}, "
                        f"cached {int(kw['timed_from_cache'])})")
            print(f"{kw['set']:8} {kw['mode']:18} {kw['count']:9} {kw['hits']:9} {kw['t_checksum']:16.4f}  {rate}")
        sys.stdout.flush()

    for path in args.rays:
        name = set_name(path)
        n, a = read_rays(path)
        if scalar:
            m, hits, tsum = trace_scalar(mi, scene, name, n, a, args.limit)
            report(set=name, mode="scalar", count=m, hits=hits, t_checksum=tsum)
            continue
        # the rays as Mitsuba's SoA arrays on the device, evaluated before any timing
        buf = mi.Float(a)
        idx = dr.arange(mi.UInt32, n) * 7
        comp = [dr.gather(mi.Float, buf, idx + c) for c in range(7)]
        dr.eval(*comp)
        del buf
        modes = []
        if name == "shadow":
            modes.append(("ray_test", None, None))
        else:
            orders = [o for o in args.order.split(",") if o]
            width = int(round(n**0.5))
            for o in orders:
                if o == "tiles" and (name != "primary" or width * width != n or width % 8):
                    continue
                for c in [int(x) for x in args.coherent.split(",") if x]:
                    modes.append(("preliminary", bool(c), o))
        for kind, coherent, order in modes:
            cs = comp
            if order == "tiles":
                perm = tile_order(dr, mi.UInt32, n, width)
                cs = [dr.gather(mi.Float, x, perm) for x in comp]
                dr.eval(*cs)
            ray = mi.Ray3f(mi.Point3f(cs[0], cs[1], cs[2]), mi.Vector3f(cs[3], cs[4], cs[5]))
            ray.maxt = cs[6]
            dr.eval(ray)

            def call():
                if kind == "ray_test":
                    r = scene.ray_test(ray)
                else:
                    r = scene.ray_intersect_preliminary(ray, coherent=coherent).t
                dr.eval(r)
                return r

            wall, kern, cpu, nk, optix, cached = [], [], [], 0, False, True
            dr.set_flag(dr.JitFlag.KernelHistory, True)
            for i in range(args.warmup + args.runs):
                dr.sync_thread()
                dr.kernel_history_clear()
                t0, c0 = time.perf_counter(), time.process_time()
                r = call()
                dr.sync_thread()
                t1, c1 = time.perf_counter(), time.process_time()
                ms, nk, optix, hit = kernel_ms(dr, dr.kernel_history())
                if i >= args.warmup:
                    cached = cached and bool(hit)
                    wall.append(t1 - t0)
                    cpu.append(c1 - c0)
                    kern.append(ms * 1e-3)
            dr.set_flag(dr.JitFlag.KernelHistory, False)
            if kind == "ray_test":
                hits, tsum = first(dr.count(r)), 0.0
            else:
                valid = r < dr.inf
                hits = first(dr.count(valid))
                tsum = float(first(dr.sum(dr.select(valid, mi.Float64(r), 0.0))))
            mode = kind if kind == "ray_test" else f"coherent={int(coherent)},{order}"
            wm, km, cm = statistics.median(wall), statistics.median(kern), statistics.median(cpu)
            report(set=name, mode=mode, count=n, hits=int(hits), t_checksum=tsum, kernel_s=km, wall_s=wm, cpu_s=cm,
                   kernel_mrays=n / km * 1e-6 if km > 0 else 0.0, wall_mrays=n / wm * 1e-6,
                   cpu_mrays=n / cm * 1e-6 if cm > 0 else 0.0,
                   kernels_per_call=nk, uses_optix=bool(optix), timed_from_cache=cached, runs=args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
