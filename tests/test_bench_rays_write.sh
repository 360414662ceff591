#!/bin/sh
# caustic-bench-rays --write-rays: the files hold what the bench traced. Per set the header's
# count equals the count the bench prints and the file is 8 + 28 * count bytes; read back, every
# direction has unit length, the primary rays share one origin (the camera) and have tmax = inf,
# the diffuse rays (one per primary hit) have tmax = inf and the shadow rays a finite positive one.
# A directory that does not exist: one message naming the file, exit 1, no file left behind.
BENCH=${1:?usage: test_bench_rays_write.sh path/to/caustic-bench-rays source-dir}
SRC=${2:?usage: test_bench_rays_write.sh path/to/caustic-bench-rays source-dir}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BENCH" "$SRC/scenes/meshes/icosahedron.obj" --res 16 --runs 1 --threads 1 --write-rays "$T" >"$T/out" || {
  echo "FAILED: the bench exited with $?"
  exit 1
}
fails=0
bad() { echo "FAILED: $*"; fails=$((fails + 1)); }
primary_hits=$(awk '$1 == "icosahedron.obj" && $2 == "primary" { print $4 }' "$T/out")
for set in primary diffuse shadow; do
  f="$T/icosahedron.$set.rays"
  [ -f "$f" ] || { bad "$set: $f not written"; continue; }
  printed=$(awk -v s="$set" '$1 == "icosahedron.obj" && $2 == s { print $3 }' "$T/out")
  count=$(od -An -t u8 -N 8 "$f" | tr -d ' ')
  [ -n "$printed" ] && [ "$count" = "$printed" ] || bad "$set: header count '$count', the bench printed '$printed'"
  size=$(wc -c <"$f" | tr -d ' ')
  [ "$size" -eq $((8 + 28 * count)) ] || bad "$set: $size bytes for $count rays"
  # seven floats per ray, one per line
  msg=$(od -An -v -t f4 -j 8 "$f" | tr -s ' \t' '\n\n' | sed '/^$/d' | awk -v s="$set" '
    { v[NR % 7] = $1 }
    NR % 7 == 0 {
      n++
      len = v[4] * v[4] + v[5] * v[5] + v[6] * v[6]
      if (len < 0.9999 || len > 1.0001) { print "ray " n ": direction length^2 " len; exit }
      if (s == "shadow" && (v[0] == "inf" || v[0] + 0 <= 0)) { print "ray " n ": tmax " v[0]; exit }
      if (s != "shadow" && v[0] != "inf") { print "ray " n ": tmax " v[0] ", expected inf"; exit }
      o = v[1] " " v[2] " " v[3]
      if (s == "primary" && n > 1 && o != o1) { print "ray " n ": origin " o ", the first " o1; exit }
      if (n == 1) o1 = o
    }
    END { if (NR % 7) print NR " floats, not a multiple of 7" }')
  [ -z "$msg" ] || bad "$set: $msg"
done
diffuse=$(od -An -t u8 -N 8 "$T/icosahedron.diffuse.rays" | tr -d ' ')
[ "$diffuse" = "$primary_hits" ] || bad "$diffuse diffuse rays for $primary_hits primary hits"
if "$BENCH" "$SRC/scenes/meshes/icosahedron.obj" --res 16 --runs 1 --threads 1 --write-rays "$T/missing" \
  >"$T/out2" 2>"$T/err2"; then
  bad "--write-rays to a missing directory exited 0"
else
  rc=$?
  [ "$rc" -eq 1 ] || bad "--write-rays to a missing directory: exit $rc, expected 1"
  [ "$(wc -l <"$T/err2" | tr -d ' ')" -eq 1 ] && grep -q "$T/missing/icosahedron" "$T/err2" ||
    bad "--write-rays to a missing directory: not one message naming the file: $(cat "$T/err2")"
  [ ! -e "$T/missing" ] || bad "--write-rays to a missing directory left $T/missing behind"
fi
[ "$fails" -eq 0 ] && echo "bench-rays ray files: 3 sets round-trip; a missing directory is one message"
exit "$fails"
