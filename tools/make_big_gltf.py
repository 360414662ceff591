#!/usr/bin/env python3
"""Writes a large glTF scene for loader benchmarks: an N x N grid of copies of a triangle mesh
(Wavefront OBJ: its v and f lines; polygons fan-triangulated) as one .glb (POSITION + uint32
indices, one mesh, one node, one material), and the same triangles as an .obj for comparison.

    tools/make_big_gltf.py /work/shared/assets/dragon/dragon_100k.obj 4 /tmp/big

writes /tmp/big.glb and /tmp/big.obj (4 x 4 copies: 1.6 M triangles for the 100 k dragon).
Only the standard library is used (no numpy)."""
import array
import json
import struct
import sys


def read_obj(path):
    pos, tris = array.array('f'), array.array('I')
    with open(path) as f:
        for line in f:
            if line.startswith('v '):
                x, y, z = line.split()[1:4]
                pos.extend((float(x), float(y), float(z)))
            elif line.startswith('f '):
                ids = [int(t.split('/')[0]) for t in line.split()[1:]]
                nv = len(pos) // 3
                ids = [i - 1 if i > 0 else nv + i for i in ids]
                for k in range(1, len(ids) - 1):
                    tris.extend((ids[0], ids[k], ids[k + 1]))
    return pos, tris


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    pos, tris = read_obj(src)
    nv = len(pos) // 3
    lo = [min(pos[i::3]) for i in range(3)]
    hi = [max(pos[i::3]) for i in range(3)]
    step = [1.1 * (hi[i] - lo[i]) for i in range(3)]
    P, T = array.array('f'), array.array('I')
    for gy in range(n):
        for gx in range(n):
            dx, dy = gx * step[0], gy * step[1]
            base = len(P) // 3
            for i in range(nv):
                P.extend((pos[3 * i] + dx, pos[3 * i + 1] + dy, pos[3 * i + 2]))
            T.extend(t + base for t in tris)
    if sys.byteorder != 'little':
        P.byteswap(); T.byteswap()
    pb, tb = P.tobytes(), T.tobytes()
    nvert, nidx = len(P) // 3, len(T)
    plo = [min(P[i::3]) for i in range(3)]
    phi = [max(P[i::3]) for i in range(3)]
    doc = {
        "asset": {"version": "2.0", "generator": "caustic tools/make_big_gltf.py"},
        "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.8, 0.8, 1], "metallicFactor": 0,
                                                "roughnessFactor": 0.5}}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": nvert, "type": "VEC3", "min": plo, "max": phi},
                      {"bufferView": 1, "componentType": 5125, "count": nidx, "type": "SCALAR"}],
        "bufferViews": [{"buffer": 0, "byteLength": len(pb)},
                        {"buffer": 0, "byteOffset": len(pb), "byteLength": len(tb)}],
        "buffers": [{"byteLength": len(pb) + len(tb)}],
    }
    j = json.dumps(doc).encode()
    j += b' ' * ((4 - len(j) % 4) % 4)
    b = pb + tb
    with open(out + '.glb', 'wb') as f:
        f.write(struct.pack('<III', 0x46546C67, 2, 12 + 8 + len(j) + 8 + len(b)))
        f.write(struct.pack('<II', len(j), 0x4E4F534A) + j)
        f.write(struct.pack('<II', len(b), 0x004E4942) + b)
    with open(out + '.obj', 'w') as f:
        f.write('# %d copies of %s\n' % (n * n, src))
        f.write(''.join('v %.6g %.6g %.6g\n' % (P[3 * i], P[3 * i + 1], P[3 * i + 2]) for i in range(nvert)))
        f.write(''.join('f %d %d %d\n' % (T[3 * i] + 1, T[3 * i + 1] + 1, T[3 * i + 2] + 1) for i in range(nidx // 3)))
    print('%s.glb / %s.obj: %d triangles, %d vertices' % (out, out, nidx // 3, nvert))


if __name__ == '__main__':
    main()
