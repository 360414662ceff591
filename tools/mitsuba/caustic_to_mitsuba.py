#!/usr/bin/env python3
"""Renders a caustic scene file with Mitsuba 3, matched to caustic's conventions, and times it:
the comparison in docs/performance-log.md ("2026-11-25: a cheaper Sobol sampler, AVX-512 kernels,
against Mitsuba 3"). Translates the subset the comparison scenes use: Diffuse / Emitter (or
Emitting) / Specular (mirror) materials, named-metal conductors (METAL "Au": Mitsuba's conductor /
roughconductor with the same material name); cube, sphere, quad, plane and OBJ mesh objects (TRANS, ROTAT, SCALE; quads also ORIGIN/U/V); a constant
Environment; the pinhole Camera; Media (Homogeneous, and Grid over a .vol file: heterogeneous with
gridvolume) bound by INTERIOR/EXTERIOR to shapes whose Interface material is Mitsuba's null BSDF,
rendered by volpathmis. A mesh without MATERIAL takes its materials from its MTL files as
caustic's OBJ loader does (src/import/obj.c, mtl.c), for the diffuse case only (Kd, map_Kd): one
Mitsuba mesh per usemtl material, map_Kd as a `bitmap` texture holding Kd * the sRGB-decoded
texels (caustic's albedo: Kd times the texture, 8-bit codes decoded by the same table, bilinear,
texel centres at +0.5, repeat), and the smooth normals caustic generates for corners without vn
(area-weighted, 60-degree threshold). caustic ignores bump/map_bump and map_d, and so does this.
caustic's conventions: FOVY is half the vertical field of view; a cube is [-0.5, 0.5]^3 and a
sphere has radius 0.5 before TRANS * Rx * Ry * Rz * SCALE; a quad / plane is the unit square in
xy facing +z; diffuse surfaces reflect on both sides; emitters emit on the side of their normal
and reflect nothing; DEPTH bounces = Mitsuba max_depth DEPTH + 1;
Russian roulette from the third bounce (rr_depth 3). A mesh with a MATERIAL goes to Mitsuba's obj
plugin with face normals, although caustic smooths the corners of an OBJ without vn (60 degrees):
the matched dragon's means agreed within 0.02 % so (docs/performance-log.md); the MTL path below
matches the normals.

  caustic_to_mitsuba.py SCENE.json --spp N [--res WxH] [--variant llvm_ad_rgb] [--threads 1]
                        [--out image.npy] [--runs 1] [--seed 1]
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


SMOOTH_ANGLE_DEG = 60.0  # caustic's OBJ_SMOOTH_ANGLE_DEG (src/import/mtl.h)
SMOOTH_MAX_DEGREE = 1024  # positions shared by more triangles keep face normals (obj.c)


def srgb8_table():
    """caustic's image_srgb8_table: the exact sRGB curve at (float)(i / 255), in float."""
    x = (np.arange(256) / 255.0).astype(np.float32).astype(np.float64)
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4).astype(np.float32)


def read_mtl(path):
    """newmtl -> its statements that decide caustic's material (mtl_to_material)."""
    mats, cur = {}, None
    with open(path, errors="replace") as f:
        for no, line in enumerate(f, 1):
            t = line.split()
            if not t or t[0].startswith("#"):
                continue
            k = t[0]
            if k == "newmtl":
                cur = mats[" ".join(t[1:])] = {"Kd": [0.8] * 3, "Ks": [0.0] * 3, "Ke": [0.0] * 3, "illum": 2,
                                               "d": 1.0, "Ni": 1.0, "Pm": 0.0, "file": path, "line": no}
            elif cur is None:
                continue
            elif k in ("Kd", "Ks", "Ke"):
                c = [float(x) for x in t[1:4]]
                cur[k] = c * 3 if len(c) == 1 else c
            elif k in ("illum", "Ni", "Pm"):
                cur[k] = float(t[1])
            elif k == "d":
                cur["d"] = float(t[-1])
            elif k == "Tr" and "d_set" not in cur:
                cur["d"] = 1.0 - float(t[1])
            elif k == "map_Kd":
                if any(x.startswith("-") for x in t[1:]):
                    sys.exit(f"caustic_to_mitsuba.py: {path}:{no}: map_Kd options are not translated")
                cur["map_Kd"] = " ".join(t[1:])
            if k == "d":
                cur["d_set"] = True
    return mats


def mtl_bsdf(mi, name, e, textures):
    """caustic's diffuse MTL material (mtl_to_material) as a two-sided Mitsuba diffuse BSDF."""
    path = e["file"]
    clamp = lambda c: [min(max(x, 0.0), 1.0) for x in c]
    il = int(e["illum"])
    if il in (3, 4, 5, 6, 7) or (e["d"] < 1.0 and e["Ni"] > 1.0) or e["Pm"] > 0.5 or max(e["Ke"]) > 0.0:
        sys.exit(f"caustic_to_mitsuba.py: {path}:{e['line']}: material {name} is not diffuse in caustic "
                 "(illum, d/Ni, Pm or Ke): not translated")
    kd = clamp(e["Kd"])
    refl = {"type": "rgb", "value": kd}
    if "map_Kd" in e:
        f = os.path.join(os.path.dirname(path), e["map_Kd"])
        if not os.path.exists(f):  # caustic matches the file name case-insensitively
            d = os.path.dirname(f)
            low = {x.lower(): x for x in os.listdir(d)}
            f = os.path.join(d, low.get(os.path.basename(f).lower(), os.path.basename(f)))
        key = (f, tuple(kd))
        if key not in textures:
            b = mi.Bitmap(f)
            if b.component_format() != mi.Struct.Type.UInt8 or not b.srgb_gamma():
                sys.exit(f"caustic_to_mitsuba.py: {f}: only 8-bit sRGB textures are translated")
            a = np.array(b)
            a = a.reshape(a.shape[0], a.shape[1], -1)
            if a.shape[2] == 1:
                a = np.repeat(a, 3, axis=2)
            lin = srgb8_table()[a[:, :, :3]] * np.array(kd, dtype=np.float32)
            textures[key] = mi.Bitmap(np.ascontiguousarray(lin, dtype=np.float32), mi.Bitmap.PixelFormat.RGB)
        refl = {"type": "bitmap", "bitmap": textures[key], "raw": True, "filter_type": "bilinear",
                "wrap_mode": "repeat"}
    return {"type": "twosided", "bsdf": {"type": "diffuse", "reflectance": refl}}


def read_obj(path):
    """Positions, uvs, normals and fan-triangulated corners of an OBJ file, as caustic reads them."""
    v, vt, vn, tris, slot, libs, slots = [], [], [], [], [], [], {}
    cur = -1
    with open(path, errors="replace") as f:
        for line in f:
            t = line.split()
            if not t:
                continue
            k = t[0]
            if k == "v":
                v.append([float(x) for x in t[1:4]])
            elif k == "vt":
                vt.append([float(x) for x in (t[1:3] + ["0"])[:2]])
            elif k == "vn":
                vn.append([float(x) for x in t[1:4]])
            elif k == "f":
                cs = []
                for tok in t[1:]:
                    p = (tok.split("/") + ["", ""])[:3]
                    ix = [int(x) if x else 0 for x in p]
                    n = (len(v), len(vt), len(vn))
                    cs.append([i - 1 if i > 0 else (n[j] + i if i < 0 else -1) for j, i in enumerate(ix)])
                for j in range(1, len(cs) - 1):
                    tris.append([cs[0], cs[j], cs[j + 1]])
                    slot.append(cur)
            elif k == "usemtl":
                cur = slots.setdefault(" ".join(t[1:]), len(slots))
            elif k == "mtllib":
                libs += [os.path.join(os.path.dirname(path), x) for x in t[1:]]
    P = np.array(v, dtype=np.float32)
    T = np.array(vt, dtype=np.float32).reshape(-1, 2)
    N = np.array(vn, dtype=np.float32).reshape(-1, 3)
    C = np.array(tris, dtype=np.int64).reshape(-1, 3, 3)
    S = np.array(slot, dtype=np.int64)
    # caustic skips zero-area triangles (cross product of the edges, in double)
    p = P.astype(np.float64)[C[:, :, 0]]
    fn = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    keep = (fn * fn).sum(1) > 0.0
    return P, T, N, C[keep], S[keep], fn[keep], libs, {i: n for n, i in slots.items()}


def corner_normals(P, N, C, fn):
    """caustic's corner_normals: the given vn, else the area-weighted sum of the face normals around
    the corner's position within SMOOTH_ANGLE_DEG of its own triangle's."""
    nt = len(C)
    un = (fn / np.linalg.norm(fn, axis=1)[:, None]).astype(np.float32)
    cv = C[:, :, 0].ravel()
    tri = np.repeat(np.arange(nt), 3)
    order = np.argsort(cv, kind="stable")
    deg = np.bincount(cv, minlength=len(P))
    start = np.concatenate([[0], np.cumsum(deg)])
    adj = tri[order]
    d = deg[cv]
    pc = np.repeat(np.arange(3 * nt), d)
    off = np.arange(d.sum()) - np.repeat(np.cumsum(d) - d, d)
    pt = adj[start[cv][pc] + off]
    own = tri[pc]
    cos = np.float32(np.cos(np.float32(SMOOTH_ANGLE_DEG * np.float32(3.14159265) / np.float32(180.0))))
    ok = (pt == own) | ((un[own] * un[pt]).sum(1, dtype=np.float32) >= cos)
    s = np.stack([np.bincount(pc, weights=fn[pt, k] * ok, minlength=3 * nt) for k in range(3)], 1)
    n = (s / np.linalg.norm(s, axis=1)[:, None]).astype(np.float32)
    n[deg[cv] > SMOOTH_MAX_DEGREE] = un[tri][deg[cv] > SMOOTH_MAX_DEGREE]
    given = C[:, :, 2].ravel() >= 0
    n[given] = N[C[:, :, 2].ravel()[given]]
    return n


def obj_mtl_meshes(mi, path, to_world):
    """One Mitsuba mesh per usemtl material of an OBJ file, with caustic's MTL materials."""
    P, T, N, C, S, fn, libs, slot_names = read_obj(path)
    mtl = {}
    for lib in libs:
        mtl.update(read_mtl(lib))
    cn = corner_normals(P, N, C, fn)
    M = np.array(to_world.matrix, dtype=np.float64)
    Pw = (P @ M[:3, :3].T + M[:3, 3]).astype(np.float32)
    Nm = np.linalg.inv(M[:3, :3]).T  # normals by the inverse transpose, as caustic's mesh objects
    cn = cn @ Nm.T
    cn = (cn / np.linalg.norm(cn, axis=1)[:, None]).astype(np.float32)
    shapes, textures = [], {}
    for sl in np.unique(S):
        name = slot_names.get(int(sl))
        if name not in mtl:
            sys.exit(f"caustic_to_mitsuba.py: {path}: faces without a known usemtl material are not translated")
        tri = np.nonzero(S == sl)[0]
        c = C[tri].reshape(-1, 3)
        nb = cn.reshape(-1, 3)[(tri[:, None] * 3 + np.arange(3)).ravel()]
        key = np.concatenate([c[:, :2], (nb + np.float32(0.0)).view(np.int32)], 1)  # -0 == +0
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        first = np.zeros(len(uniq), dtype=np.int64)
        first[inv.ravel()] = np.arange(len(inv.ravel()))
        has_uv = bool((c[:, 1] >= 0).any())
        props = mi.Properties()
        props["bsdf"] = mi.load_dict(mtl_bsdf(mi, name, mtl[name], textures))
        m = mi.Mesh(name, len(uniq), len(tri), props, True, has_uv)
        prm = mi.traverse(m)
        fl, ui = type(prm["vertex_positions"]), type(prm["faces"])
        prm["vertex_positions"] = fl(np.ascontiguousarray(Pw[uniq[:, 0]]).ravel())
        prm["vertex_normals"] = fl(np.ascontiguousarray(nb[first]).ravel())
        if has_uv:
            uv = np.where(uniq[:, 1:2] >= 0, T[np.maximum(uniq[:, 1], 0)], 0.0).astype(np.float32)
            uv[:, 1] = 1.0 - uv[:, 1]  # Mitsuba's image rows run from the top; OBJ's v from the bottom
            prm["vertex_texcoords"] = fl(np.ascontiguousarray(uv).ravel())
        prm["faces"] = ui(np.ascontiguousarray(inv.reshape(-1).astype(np.uint32)))
        prm.update()
        shapes.append(m)
    return shapes


def texture_mean(m, rgb):
    """A material's albedo without its procedural TEXTURE (Mitsuba has no marble or wood, and its
    checkerboard is in uv where caustic's is in world space): RGB times the mean of the two colours."""
    t = m.get("TEXTURE")
    if not isinstance(t, dict):
        return rgb, False
    a, b = t.get("RGB1", [1, 1, 1]), t.get("RGB2", [0, 0, 0])
    return [c * 0.5 * (x + y) for c, x, y in zip(rgb, a, b)], True


def approximate_bsdf(name, m, rgb, differs):
    """Materials Mitsuba 3 has no model of (--approximate): the closest plugin, and the row named
    in `differs` (printed: the means of those rows are not comparable)."""
    t = m["TYPE"]
    differs.append(f"{name} ({t})")
    if t == "Phong":
        return {"type": "twosided", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": rgb}}}
    if t == "DiffuseTransmission":
        return {"type": "diffuse", "reflectance": {"type": "rgb", "value": rgb}}
    if t in ("Conductor", "Metal"):  # Schlick with F0 = RGB: a perfect conductor tinted by it
        r = float(m.get("ROUGHNESS", 0.0))
        b = ({"type": "conductor", "material": "none"} if r * r < 1e-3 else
             {"type": "roughconductor", "material": "none", "distribution": "ggx", "alpha": r * r})
        b["specular_reflectance"] = {"type": "rgb", "value": rgb}
        return {"type": "twosided", "bsdf": b}
    if t == "Coated":  # a conductor base under a coat: roughconductor of the named metal, no coat
        metal = m.get("METAL", m.get("METALLIC"))
        r = max(float(m.get("ROUGHNESS", 0.0)), 0.05)
        return {"type": "twosided", "bsdf": {"type": "roughconductor", "material": metal if isinstance(metal, str) else "none",
                                             "distribution": "ggx", "alpha": r * r}}
    sys.exit(f"caustic_to_mitsuba.py: material type {t} is not translated")


def colour(v):
    return [float(v)] * 3 if isinstance(v, (int, float)) else [float(x) for x in v]


def medium(mi, m, base):
    """A caustic Media entry as a Mitsuba medium: Homogeneous (SIGMA_A/SIGMA_S or ALBEDO with
    DENSITY, times SCALE) or Grid (the same per unit density, its FILE a .vol read by gridvolume
    over BOX: caustic's default BOX, the file's bounding box, is Mitsuba's use_grid_bbox). G is
    an hg phase; EMISSION and ALBEDO_FILE are not translated."""
    for k in ("EMISSION", "ALBEDO_FILE", "MFP"):
        if k in m:
            sys.exit(f"caustic_to_mitsuba.py: medium key {k} is not translated")
    if "ALBEDO" in m or "DENSITY" in m:
        albedo, st = colour(m.get("ALBEDO", 1.0)), colour(m.get("DENSITY", 1.0))
    elif "SIGMA_A" in m or "SIGMA_S" in m:
        sa, ss = colour(m.get("SIGMA_A", 0.0)), colour(m.get("SIGMA_S", 0.0))
        st = [a + b for a, b in zip(sa, ss)]
        albedo = [b / t if t > 0 else 0.0 for b, t in zip(ss, st)]
    else:
        albedo, st = [1.0] * 3, [1.0] * 3
    scale = float(m.get("SCALE", 1.0))
    if len(set(st)) != 1:
        sys.exit("caustic_to_mitsuba.py: a chromatic sigma_t is not translated (Mitsuba's scale is a float)")
    med = {"phase": {"type": "hg", "g": float(m.get("G", 0.0))},
           "albedo": {"type": "rgb", "value": albedo}, "scale": scale * st[0]}
    if m.get("TYPE", "Homogeneous") == "Grid":
        grid = {"type": "gridvolume", "filename": os.path.join(base, m["FILE"]), "filter_type": "trilinear"}
        if "BOX" in m:
            lo, hi = m["BOX"]
            grid["to_world"] = mi.ScalarTransform4f().translate(lo) @ mi.ScalarTransform4f().scale(
                [h - l for l, h in zip(lo, hi)])
        else:
            grid["use_grid_bbox"] = True
        med.update({"type": "heterogeneous", "sigma_t": grid})
    else:
        med.update({"type": "homogeneous", "sigma_t": {"type": "rgb", "value": [1.0] * 3}})
    return med


def load(mi, path, res, spp, approximate=False):
    with open(path) as f:
        sc = json.load(f)
    differs = []
    cam = sc["Camera"]
    w, h = res or cam["RES"]
    d = {"type": "scene",
         "integrator": {"type": "path", "max_depth": int(cam.get("DEPTH", 8)) + 1, "rr_depth": 3},
         "sensor": {"type": "perspective", "fov_axis": "y", "fov": 2.0 * cam["FOVY"],
                    "to_world": mi.ScalarTransform4f().look_at(origin=cam["EYE"], target=cam["LOOKAT"], up=cam["UP"]),
                    "film": {"type": "hdrfilm", "width": w, "height": h, "rfilter": {"type": "box"},
                             "pixel_format": "rgb"},
                    "sampler": {"type": "independent", "sample_count": spp}}}
    base = os.path.dirname(os.path.abspath(path))
    media = {n: medium(mi, m, base) for n, m in sc.get("Media", {}).items()}
    if media:  # null-scattering volumetric path tracing, with spectral MIS (caustic's per-segment one)
        d["integrator"]["type"] = "volpathmis"
    mats = {}
    for name, m in sc["Materials"].items():
        rgb = m.get("RGB", [1, 1, 1])
        if approximate:
            rgb, textured = texture_mean(m, rgb)
            if textured:
                differs.append(f"{name} (procedural texture as its mean colour)")
        if m["TYPE"] == "Interface":
            mats[name] = ("bsdf", {"type": "null"})
        elif m["TYPE"] in ("Emitter", "Emitting"):
            e = m.get("EMITTANCE", 1.0)
            mats[name] = ("emit", [c * e for c in rgb])
        elif m["TYPE"] == "Diffuse":
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": rgb}}})
        elif m["TYPE"] in ("Specular", "Mirror"):
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": {"type": "conductor", "material": "none",
                                                                "specular_reflectance": {"type": "rgb", "value": rgb}}})
        elif m["TYPE"] in ("Conductor", "Metal") and isinstance(m.get("METAL", m.get("METALLIC")), str):
            # a named conductor: Mitsuba's conductor (smooth) or roughconductor (GGX, alpha =
            # ROUGHNESS^2, visible normals); caustic's rough conductor uses the height-correlated
            # Smith G2, Mitsuba's the separable one, so only the smooth one matches exactly
            metal = m.get("METAL", m.get("METALLIC"))
            r = float(m.get("ROUGHNESS", 0.0))
            b = ({"type": "conductor", "material": metal} if r * r < 1e-3 else
                 {"type": "roughconductor", "material": metal, "distribution": "ggx", "alpha": r * r})
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": b})
        elif m["TYPE"] in ("Dielectric", "Glass", "Refractive", "RoughGlass"):
            # caustic's tint weights reflection and transmission alike; dispersion (ABBE, ...) has
            # no Mitsuba 3 model: such a row renders at its d-line IOR there
            r = float(m.get("ROUGHNESS", 0.0)) if m["TYPE"] == "RoughGlass" else 0.0
            b = {"type": "dielectric"} if r * r < 1e-3 else {"type": "roughdielectric", "distribution": "ggx", "alpha": r * r}
            b.update({"int_ior": float(m.get("IOR", 1.5)), "ext_ior": 1.0,
                      "specular_reflectance": {"type": "rgb", "value": rgb},
                      "specular_transmittance": {"type": "rgb", "value": rgb}})
            if any(k in m for k in ("ABBE", "DISPERSION", "CAUCHY_B")):
                differs.append(f"{name} (dispersion: Mitsuba 3 has none)")
            mats[name] = ("bsdf", b)
        elif m["TYPE"] == "ThinDielectric":
            mats[name] = ("bsdf", {"type": "thindielectric", "int_ior": float(m.get("IOR", 1.5)), "ext_ior": 1.0,
                                   "specular_reflectance": {"type": "rgb", "value": rgb},
                                   "specular_transmittance": {"type": "rgb", "value": rgb}})
        elif m["TYPE"] == "Coated" and m.get("BASE", "Diffuse") == "Diffuse" and not isinstance(m.get("METALLIC"), str):
            # Mitsuba's plastic / roughplastic (linear), the coat's roughness COAT_ROUGHNESS (or ROUGHNESS)
            r = float(m.get("COAT_ROUGHNESS", m.get("ROUGHNESS", 0.0)))
            b = ({"type": "plastic"} if r * r < 1e-3 else {"type": "roughplastic", "distribution": "ggx", "alpha": r * r})
            b.update({"diffuse_reflectance": {"type": "rgb", "value": rgb}, "int_ior": float(m.get("IOR", 1.5)),
                      "ext_ior": 1.0, "nonlinear": False})
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": b})
        elif m["TYPE"] == "PBR":
            # Mitsuba's principled without its other lobes; caustic's sheen/specular layers are
            # another model than Disney's sheen/specular
            b = {"type": "principled", "base_color": {"type": "rgb", "value": rgb},
                 "metallic": float(m.get("METALLIC", 0.0)), "roughness": float(m.get("ROUGHNESS", 0.5))}
            if any(k in m for k in ("SHEEN_RGB", "SPECULAR_TINT", "SPECULAR_WEIGHT")):
                differs.append(f"{name} (sheen/specular layers: Disney's lobes in Mitsuba)")
            differs.append(f"{name} (PBR: glTF metallic-roughness against Disney's principled)")
            mats[name] = ("bsdf", {"type": "twosided", "bsdf": b})
        elif approximate:
            mats[name] = ("bsdf", approximate_bsdf(name, m, rgb, differs))
        else:
            sys.exit(f"caustic_to_mitsuba.py: material type {m['TYPE']} is not translated (--approximate: "
                     "the closest plugin, the row reported)")
    base = os.path.dirname(os.path.abspath(path))
    for i, o in enumerate(sc["Objects"]):
        t = o["TYPE"]
        if t == "mesh" and "MATERIAL" not in o:
            for k, m in enumerate(obj_mtl_meshes(mi, os.path.join(base, o["FILE"]), trs(mi, o, 1.0))):
                d[f"obj{i}_{k}"] = m
            continue
        kind, val = mats[o["MATERIAL"]]
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
        for key, mname in (("INTERIOR", "interior"), ("EXTERIOR", "exterior")):
            if o.get(key):
                s[mname] = media[o[key]]
        d[f"obj{i}"] = s
    env = sc.get("Environment")
    if env:
        e = env.get("EMITTANCE", 1.0)
        d["env"] = {"type": "constant", "radiance": {"type": "rgb", "value": [c * e for c in env["RGB"]]}}
    if differs:
        print("rows that differ from caustic's models: " + "; ".join(differs), file=sys.stderr)
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
    ap.add_argument("--seed", type=int, default=1, help="the first timed run's seed (run r: seed + r)")
    ap.add_argument("--approximate", action="store_true",
                    help="translate materials Mitsuba 3 lacks to the closest plugin (listed on stderr)")
    a = ap.parse_args()
    import drjit as dr
    import mitsuba as mi
    mi.set_variant(a.variant)
    dr.set_thread_count(a.threads)
    res = [int(x) for x in a.res.split("x")] if a.res else None
    d, w, h = load(mi, a.scene, res, a.spp, a.approximate)
    scene = mi.load_dict(d)
    img = mi.render(scene, spp=a.spp, seed=0)  # warm-up: JIT compilation
    dr.eval(img)
    for r in range(a.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        img = mi.render(scene, spp=a.spp, seed=a.seed + r)
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
