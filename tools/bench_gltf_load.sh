#!/usr/bin/env bash
# Loading time and peak RSS of a glTF scene of >= 1 M triangles (docs/performance-log.md), against the
# same triangles as OBJ, side by side, median of RUNS runs each (alternating):
#   tools/bench_gltf_load.sh [MESH.obj] [N] [RUNS]
# (default: the 100 k-triangle dragon of /work/shared/assets, 4 x 4 copies = 1.6 M triangles, 5 runs).
# Needs a built tree (make build); writes its files under ${TMPDIR:-/tmp}/caustic-gltf-bench.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
mesh=${1:-/work/shared/assets/dragon/dragon_100k.obj}
n=${2:-4}
runs=${3:-5}
dir=${TMPDIR:-/tmp}/caustic-gltf-bench
mkdir -p "$dir"
[ -f "$dir/big.glb" ] && [ -f "$dir/big.obj" ] || python3 "$root/tools/make_big_gltf.py" "$mesh" "$n" "$dir/big"
cuda=""
[ -d /usr/local/cuda/lib64 ] && cuda="-L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt"
cc -O2 -I"$root/src" "$root/tools/gltf_load_bench.c" -o "$dir/gltf_load_bench" "$root/build/libcaustic.a" $cuda \
   -ltinygltf -lstb -lcjson -lpng -ljpeg -lz -ltinyexr -lstdc++ -lm -lpthread
for i in $(seq "$runs"); do
  for f in glb obj; do echo "$f $("$dir/gltf_load_bench" "$dir/big.$f")"; done
done | python3 -c '
import sys, statistics
t, rest = {}, {}
for line in sys.stdin:
    f, load, rss, tri, vert = line.split()
    t.setdefault(f, []).append(float(load.split("=")[1]))
    rest[f] = (rss.split("=")[1], tri, vert)
for f in t:
    print("%s: median load %.3f s of %d runs (%s), peak RSS %s MiB, %s %s" % (f, statistics.median(t[f]), len(t[f]),
          " ".join("%.3f" % x for x in t[f]), *rest[f]))
print("obj / glb load time: %.1fx" % (statistics.median(t["obj"]) / statistics.median(t["glb"])))
'
