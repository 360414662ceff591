#!/usr/bin/env python3
"""Renders a caustic scene file with Mitsuba 3, matched to caustic's conventions, and times it:
the comparison in docs/PERFORMANCE.md ("caustic vs Mitsuba 3"). Translates the subset the
comparison scenes use: Diffuse / Emitting / Specular (mirror) materials; cube, sphere, quad,
plane and OBJ mesh objects (TRANS, ROTAT, SCALE; quads also ORIGIN/U/V); a constant
Environment; the pinhole Camera. caustic's conventions: FOVY is half the vertical field of view;
a cube is [-0.5, 0.5]^3 and a sphere has radius 0.5 before TRANS * Rx * Ry * Rz * SCALE; a quad /
plane is the unit square in xy facing +z; diffuse surfaces reflect on both sides; emitters emit
on the side of their normal and reflect nothing; DEPTH bounces = Mitsuba max_depth DEPTH + 1;
Russian roulette from the third bounce (rr_depth 3); OBJ files without normals are flat shaded.

  caustic_to_mitsuba.py SCENE.json --spp N [--res WxH] [--variant llvm_ad_rgb] [--threads 1]
                        [--out image.npy] [--runs 1]
prints per run: time=... cpu_seconds=... Msamples/s=... cpu_Msamples/s=... mean=... (the render
alone, after one warm-up render that JIT-compiles the kernels; cpu: the process's CPU time)."""
import argparse
import json
import os
import sys
import time

import numpy as np


def trs(mi, o, unit_scale):
    T = mi.ScalarTransform4f
    t = o.get("TRANS", [0, 0, 0])
    r = o.get("ROTAT", [0, 0, 0])
    s = o.get("SCALE", [1, 1, 1])
    m = T().translate(t) @ T().rotate([1, 0, 0], r[0]) @ T().rotate([0, 1, 0], r[1]) @ T().rotate([0, 0, 1], r[2])
    return m @ T().scale([s[0] * unit_scale, s[1] * unit_scale, s[2] * unit_scale])


def load(mi, path, res, spp):
    with open(path) as f:
        sc = json.load(f)
    cam = sc["Camera"]
    w, h = res or cam["RES"]
    d = {"type": "scene",
         "integrator": {"type": "path", "max_depth": int(cam.get("DEPTH", 8)) + 1, "rr_depth": 3},
         "sensor": {"type": "perspective", "fov_axis": "y", "fov": 2.0 * cam["FOVY"],
                    "to_world": mi.ScalarTransform4f().look_at(origin=cam["EYE"], target=cam["LOOKAT"], up=cam["UP"]),
                    "film": {"type": "hdrfilm", "width": w, "height": h, "rfilter": {"type": "box"},
                             "pixel_format": "rgb"},
                    "sampler": {"type": "independent", "sample_count": spp}}}
    mats = {}
    for name, m in sc["Materials"].items():
        rgb = m.get("RGB", [1, 1, 1])
        if m["TYPE"] == "Emitting":
            e = m.get("EMITTANCE", 1.0)
            mats[name] = ("emit", [c * e for c in rgb])
        elif m["TYPE"] == "Diffuse":
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": rgb}}})
        elif m["TYPE"] in ("Specular", "Mirror"):
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": {"type": "conductor", "material": "none",
                                                                "specular_reflectance": {"type": "rgb", "value": rgb}}})
        else:
            sys.exit(f"caustic_to_mitsuba.py: material type {m['TYPE']} is not translated")
    base = os.path.dirname(os.path.abspath(path))
    for i, o in enumerate(sc["Objects"]):
        kind, val = mats[o["MATERIAL"]]
        t = o["TYPE"]
        if t == "cube":
            s = {"type": "cube", "to_world": trs(mi, o, 0.5)}
        elif t == "sphere":
            s = {"type": "sphere", "to_world": trs(mi, o, 0.5)}
        elif t in ("quad", "plane") and "ORIGIN" in o:
            org, u, v = (np.array(o[k], dtype=float) for k in ("ORIGIN", "U", "V"))
            n = np.cross(u, v)
            n /= np.linalg.norm(n)
            c = org + 0.5 * (u + v)
            m = [[u[0] / 2, v[0] / 2, n[0], c[0]], [u[1] / 2, v[1] / 2, n[1], c[1]], [u[2] / 2, v[2] / 2, n[2], c[2]], [0, 0, 0, 1]]
            s = {"type": "rectangle", "to_world": mi.ScalarTransform4f(m)}
        elif t in ("quad", "plane"):
            s = {"type": "rectangle", "to_world": trs(mi, o, 0.5)}
        elif t == "mesh":
            s = {"type": "obj", "filename": os.path.join(base, o["FILE"]), "face_normals": True,
                 "to_world": trs(mi, o, 1.0)}
        else:
            sys.exit(f"caustic_to_mitsuba.py: object type {t} is not translated")
        if kind == "emit":
            # Mitsuba's area emitter lights one side; caustic's materials emit from both sides unless
            # TWO_SIDED is false. Closed shapes match either way (the back faces look inwards), open
            # ones would not: refuse rather than time two different scenes.
            if t not in ("cube", "sphere") and sc["Materials"][o["MATERIAL"]].get("TWO_SIDED", True):
                sys.exit(f"caustic_to_mitsuba.py: Objects[{i}] ({t}) emits from both sides in caustic; "
                         "give its material \"TWO_SIDED\": false to match Mitsuba's one-sided area emitter")
            s["emitter"] = {"type": "area", "radiance": {"type": "rgb", "value": val}}
            s["bsdf"] = {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0, 0, 0]}}
        else:
            s["bsdf"] = val
        d[f"obj{i}"] = s
    env = sc.get("Environment")
    if env:
        e = env.get("EMITTANCE", 1.0)
        d["env"] = {"type": "constant", "radiance": {"type": "rgb", "value": [c * e for c in env["RGB"]]}}
    return d, w, h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scene")
    ap.add_argument("--spp", type=int, required=True)
    ap.add_argument("--res")
    ap.add_argument("--variant", default="llvm_ad_rgb")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()
    import drjit as dr
    import mitsuba as mi
    mi.set_variant(a.variant)
    dr.set_thread_count(a.threads)
    res = [int(x) for x in a.res.split("x")] if a.res else None
    d, w, h = load(mi, a.scene, res, a.spp)
    scene = mi.load_dict(d)
    img = mi.render(scene, spp=a.spp, seed=0)  # warm-up: JIT compilation
    dr.eval(img)
    for r in range(a.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        img = mi.render(scene, spp=a.spp, seed=r + 1)
        dr.eval(img)
        dr.sync_thread()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        arr = np.array(img)
        n = w * h * a.spp
        print(f"time={t:.3f}s cpu_seconds={c:.3f} spp={a.spp} Msamples/s={n / t / 1e6:.3f} "
              f"cpu_Msamples/s={n / c / 1e6:.4f} mean={arr.mean():.6f}", flush=True)
    if a.out:
        np.save(a.out, arr)


if __name__ == "__main__":
    main()
