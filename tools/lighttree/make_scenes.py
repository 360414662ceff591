#!/usr/bin/env python3
"""Writes the light-tree benchmark scenes (docs/PERFORMANCE.md, "Light tree") into DIR:

  city.json   a ground plane and 40 boxes under 12,000 small emissive triangles hung 4-6 m up
              and facing down (city_lights.obj, four emission colours), out of the camera's view
              (seen directly, 12,000 sub-pixel lights make pixel noise no light sampler changes):
              the ">= 10,000 emissive triangles" scene
  lamps.json  a hall with pillars lit by 600 small ceiling panels (quads) and 300 point lights:
              the "many small lights" scene

Deterministic (fixed seed). Usage: make_scenes.py DIR"""
import json, math, os, random, sys

def city(d):
    rnd = random.Random(7)
    mtl = ["newmtl warm\nKd 0 0 0\nKe 6 4 2\n", "newmtl cold\nKd 0 0 0\nKe 1 2 6\n",
           "newmtl white\nKd 0 0 0\nKe 5 5 5\n", "newmtl dim\nKd 0 0 0\nKe 1 1 0.6\n"]
    with open(os.path.join(d, "city_lights.mtl"), "w") as f:
        f.write("\n".join(mtl))
    v, faces = [], {m: [] for m in ("warm", "cold", "white", "dim")}
    names = list(faces)
    for i in range(12000):
        c = (rnd.uniform(-20, 20), rnd.uniform(4.0, 6.0), rnd.uniform(-20, 20))
        # a small triangle facing down-ish (n.y in [-1, -0.3])
        z = -rnd.uniform(0.3, 1.0); phi = rnd.uniform(0, 2 * math.pi); r = math.sqrt(max(0.0, 1 - z * z))
        n = (r * math.cos(phi), z, r * math.sin(phi))
        a = (1, 0, 0) if abs(n[0]) < 0.9 else (0, 0, 1)
        t = (a[1] * n[2] - a[2] * n[1], a[2] * n[0] - a[0] * n[2], a[0] * n[1] - a[1] * n[0])
        tl = math.sqrt(sum(x * x for x in t)); t = tuple(x / tl for x in t)
        b = (n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0])
        s = rnd.uniform(0.04, 0.12)
        base = len(v) + 1
        for k in range(3):
            ang = 2 * math.pi * k / 3
            v.append(tuple(c[j] + s * (math.cos(ang) * t[j] + math.sin(ang) * b[j]) for j in range(3)))
        faces[names[i % 4]].append((base, base + 1, base + 2))
    with open(os.path.join(d, "city_lights.obj"), "w") as f:
        f.write("mtllib city_lights.mtl\n")
        for p in v:
            f.write("v %.5f %.5f %.5f\n" % p)
        for m in names:
            f.write("usemtl %s\n" % m)
            for a, b, c in faces[m]:
                f.write("f %d %d %d\n" % (a, b, c))
    objs = [{"TYPE": "plane", "MATERIAL": "ground", "ROTAT": [-90, 0, 0], "SCALE": [60, 60, 1]},
            {"TYPE": "mesh", "FILE": "city_lights.obj"}]
    for i in range(40):
        h = rnd.uniform(1, 3.5)
        objs.append({"TYPE": "cube", "MATERIAL": "wall", "TRANS": [rnd.uniform(-18, 18), h / 2, rnd.uniform(-18, 18)],
                     "ROTAT": [0, rnd.uniform(0, 90), 0], "SCALE": [rnd.uniform(1, 3), h, rnd.uniform(1, 3)]})
    scene = {"Materials": {"ground": {"TYPE": "Diffuse", "RGB": [0.5, 0.5, 0.5]},
                           "wall": {"TYPE": "Diffuse", "RGB": [0.7, 0.6, 0.5]}},
             "Camera": {"RES": [320, 180], "FOVY": 12, "ITERATIONS": 64, "DEPTH": 4, "FILE": "city",
                        "EYE": [0, 3.5, 16], "LOOKAT": [0, 0, 2], "UP": [0, 1, 0]},
             "Objects": objs}
    with open(os.path.join(d, "city.json"), "w") as f:
        json.dump(scene, f, indent=1)

def lamps(d):
    rnd = random.Random(11)
    objs = [{"TYPE": "plane", "MATERIAL": "floor", "ROTAT": [-90, 0, 0], "SCALE": [80, 80, 1]},
            {"TYPE": "quad", "MATERIAL": "floor", "ORIGIN": [-30, 6, -30], "U": [60, 0, 0], "V": [0, 0, 60]}]
    for i in range(600):
        x, z = rnd.uniform(-29, 29), rnd.uniform(-29, 29)
        s = rnd.uniform(0.1, 0.3)
        objs.append({"TYPE": "quad", "MATERIAL": "panel%d" % (i % 3), "ORIGIN": [x, 5.99, z], "U": [0, 0, s],
                     "V": [s, 0, 0]})
    for i in range(60):
        objs.append({"TYPE": "cube", "MATERIAL": "pillar", "TRANS": [rnd.uniform(-25, 25), 3, rnd.uniform(-25, 25)],
                     "SCALE": [0.6, 6, 0.6]})
    lights = [{"TYPE": "point", "POSITION": [rnd.uniform(-29, 29), rnd.uniform(0.3, 2.0), rnd.uniform(-29, 29)],
               "RGB": [rnd.uniform(0.2, 2), rnd.uniform(0.2, 2), rnd.uniform(0.2, 2)]} for i in range(300)]
    scene = {"Materials": {"floor": {"TYPE": "Diffuse", "RGB": [0.6, 0.6, 0.6]},
                           "pillar": {"TYPE": "Diffuse", "RGB": [0.8, 0.4, 0.3]},
                           "panel0": {"TYPE": "Emitting", "RGB": [1, 0.9, 0.7], "EMITTANCE": 20},
                           "panel1": {"TYPE": "Emitting", "RGB": [0.7, 0.8, 1], "EMITTANCE": 12},
                           "panel2": {"TYPE": "Emitting", "RGB": [1, 1, 1], "EMITTANCE": 5}},
             "Camera": {"RES": [320, 180], "FOVY": 35, "ITERATIONS": 64, "DEPTH": 4, "FILE": "lamps",
                        "EYE": [-20, 2.5, 24], "LOOKAT": [5, 1.5, -10], "UP": [0, 1, 0]},
             "Lights": lights, "Objects": objs}
    with open(os.path.join(d, "lamps.json"), "w") as f:
        json.dump(scene, f, indent=1)

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    city(sys.argv[1])
    lamps(sys.argv[1])
