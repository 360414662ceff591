#!/usr/bin/env bash
# CLI contract: every bad input exits with status 2, prints one message naming the problem,
# and writes no output file. Also: help texts, a tiny good render, compare, info.
set -u
CAUSTIC=${1:?usage: test_cli.sh path/to/caustic [source dir]}
# ctest runs this once per CPU kernel level (CAUSTIC_ISA): a level this CPU lacks is skipped
if [ -n "${CAUSTIC_ISA:-}" ] && "$CAUSTIC" devices 2>&1 | grep -q "this CPU lacks that level"; then
  echo "SKIP: CAUSTIC_ISA=$CAUSTIC_ISA: this CPU lacks that level"; exit 77
fi
SRC=${2:-$(dirname "$0")/..}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAILED: $*" >&2; fails=$((fails + 1)); }

# expect_fail NAME PATTERN ARGS... : status 2, stderr matches PATTERN, no $T/out.png
expect_fail() {
  local name=$1 pattern=$2; shift 2
  rm -f "$T/out.png"
  "$CAUSTIC" "$@" >"$T/stdout" 2>"$T/stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, expected 2 ($(head -c 300 "$T/stderr"))"; return; fi
  if ! grep -qiE -- "$pattern" "$T/stderr"; then bad "$name: message does not match '$pattern': $(head -c 300 "$T/stderr")"; return; fi
  if ls "$T"/out.png* >/dev/null 2>&1; then bad "$name: an output file was written"; return; fi
  ok
}

scene() { printf '%s' "$2" > "$T/$1"; }
GOOD_MATS='"Materials": {"light": {"TYPE": "Emitting", "RGB": [1,1,1], "EMITTANCE": 5}, "white": {"TYPE": "Diffuse", "RGB": [0.8,0.8,0.8]}}'
GOOD_CAM='"Camera": {"RES": [32,24], "FOVY": 45, "ITERATIONS": 4, "DEPTH": 4, "FILE": "x", "EYE": [0,5,10], "LOOKAT": [0,5,0], "UP": [0,1,0]}'
GOOD_OBJ='{"TYPE": "cube", "MATERIAL": "white", "TRANS": [0,0,0], "ROTAT": [0,0,0], "SCALE": [10,0.1,10]}, {"TYPE": "sphere", "MATERIAL": "light", "TRANS": [0,8,0], "ROTAT": [0,0,0], "SCALE": [2,2,2]}'
scene good.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [$GOOD_OBJ]}"

# --- flags
expect_fail "unknown command" "unknown command" frobnicate
expect_fail "unknown flag" "unknown option" render "$T/good.json" --frobnicate 3 -o "$T/out.png"
expect_fail "missing flag value" "needs a value" render "$T/good.json" -o "$T/out.png" --spp
expect_fail "spp not a number" "--spp" render "$T/good.json" --spp ten -o "$T/out.png"
expect_fail "spp zero" "--spp" render "$T/good.json" --spp 0 -o "$T/out.png"
expect_fail "negative time" "--time-limit" render "$T/good.json" --time-limit -1 -o "$T/out.png"
# a CPU kernel level that does not exist (CAUSTIC_ISA is read once, at the first render)
CAUSTIC_ISA=bogus expect_fail "unknown CAUSTIC_ISA" "CAUSTIC_ISA=bogus" render "$T/good.json" -o "$T/out.png"
expect_fail "nan time" "--time-limit" render "$T/good.json" --time-limit nan -o "$T/out.png"
expect_fail "zero res" "--res" render "$T/good.json" --res 0x10 -o "$T/out.png"
expect_fail "absurd res" "--res" render "$T/good.json" --res 100000x100000 -o "$T/out.png"
expect_fail "garbage res" "--res" render "$T/good.json" --res 10by10 -o "$T/out.png"
expect_fail "bad schedule" "--schedule" render "$T/good.json" --schedule random -o "$T/out.png"
expect_fail "bad sampler" "--sampler" render "$T/good.json" --sampler halton -o "$T/out.png"
"$CAUSTIC" render "$T/good.json" --device gpu -o "$T/out.png" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad --device value"
expect_fail "malformed device list" "cuda:I,J" render "$T/good.json" --device cuda:0,x -o "$T/out.png"
expect_fail "empty device list" "cuda:I,J" render "$T/good.json" --device cuda: -o "$T/out.png"
if "$CAUSTIC" devices | grep -q "^no CUDA"; then
  expect_fail "cuda without a device" "no CUDA" render "$T/good.json" --device cuda -o "$T/out.png"
  expect_fail "vcm on cuda without a device" "no CUDA" render "$T/good.json" --integrator vcm --device cuda -o "$T/out.png"
else
  "$CAUSTIC" render "$T/good.json" --device cuda --spp 2 --quiet -o "$T/gpu.png" | grep -q "device=cuda" && ok || bad "cuda render"
  "$CAUSTIC" render "$T/good.json" --device cuda --gpu-bvh cwbvh --spp 2 --quiet -o "$T/gpucw.png" | grep -q "device=cuda" \
    && ok || bad "cuda render through the compressed BVH"
  "$CAUSTIC" render "$T/good.json" --integrator vcm --device cuda --spp 2 --quiet -o "$T/gpuvcm.png" | grep -q "device=cuda" \
    && ok || bad "cuda vcm render"
  "$CAUSTIC" render "$T/good.json" --integrator bdpt --spp 2 --quiet -o "$T/gpubdpt.png" | grep -q "device=cuda" \
    && ok || bad "--device auto renders bdpt on the GPU"
fi
expect_fail "bad gpu mode" "--gpu-mode" render "$T/good.json" --gpu-mode hybrid -o "$T/out.png"
expect_fail "bad gpu bvh" "--gpu-bvh" render "$T/good.json" --gpu-bvh kd -o "$T/out.png"
"$CAUSTIC" render "$T/good.json" --device cpu --gpu-bvh cwbvh --spp 1 --quiet -o "$T/cw.png" >/dev/null 2>&1 && ok \
  || bad "--gpu-bvh cwbvh is a known value"
expect_fail "bench bad gpu mode" "--gpu-mode" bench --device cuda --gpu-mode x
expect_fail "bad threads" "--threads" render "$T/good.json" --threads 0 -o "$T/out.png"
expect_fail "bad integrator" "--integrator" render "$T/good.json" --integrator mlt -o "$T/out.png"
expect_fail "vcm adaptive" "adaptive" render "$T/good.json" --integrator bdpt --adaptive 0.1 -o "$T/out.png"
expect_fail "bad radius" "--radius" render "$T/good.json" --integrator vcm --radius 0 -o "$T/out.png"
expect_fail "bad alpha" "--alpha" render "$T/good.json" --integrator vcm --alpha 2 -o "$T/out.png"
expect_fail "bench bad integrator" "--integrator" bench --integrator pt,xyz --scenes smallvcm0
expect_fail "bench bad clock" "--clock" bench --integrator pt --clock sundial --scenes smallvcm0
expect_fail "bench bad device" "--device" bench --integrator vcm --device gpu --scenes smallvcm0
expect_fail "bench auto device" "--device" bench --integrator vcm --device auto --scenes smallvcm0
# a tiny equal-CPU-time bench: one JSON line per integrator, the reference rendered and cached
if "$CAUSTIC" bench --integrator pt,vcm,vcm-all --scenes smallvcm2 --res 16x16 --time 0.05 --runs 1 --reference-time 0.2 \
     --reference-dir "$T/ref" --json >"$T/bench.json" 2>/dev/null && [ "$(grep -c '"clock":"cpu"' "$T/bench.json")" = 3 ] \
     && grep -q '"integrator":"vcm-all"' "$T/bench.json" \
     && [ -s "$T/ref/smallvcm2_16x16.pfm" ]; then ok; else bad "bench --integrator smoke run: $(head -c 300 "$T/bench.json")"; fi
expect_fail "bad output ext" "must end in" render "$T/good.json" -o "$T/out.jpg"
expect_fail "resume without checkpoint" "checkpoint" render "$T/good.json" --resume -o "$T/out.png"
# --- scene files
scene badlight.json "{$GOOD_MATS, $GOOD_CAM, \"Lights\": [{\"TYPE\": \"point\", \"DIRECTION\": [0,1,0], \"RGB\": [1,1,1]}], \"Objects\": [$GOOD_OBJ]}"
expect_fail "point light with a direction" "Lights\[0\].DIRECTION" render "$T/badlight.json" -o "$T/out.png"
scene zerodir.json "{$GOOD_MATS, $GOOD_CAM, \"Lights\": [{\"TYPE\": \"directional\", \"DIRECTION\": [0,0,0], \"RGB\": [1,1,1]}], \"Objects\": [$GOOD_OBJ]}"
expect_fail "zero light direction" "zero vector" render "$T/zerodir.json" -o "$T/out.png"
scene hotphong.json "{\"Materials\": {\"p\": {\"TYPE\": \"Phong\", \"RGB\": [0.5,0.5,0.5], \"SPECRGB\": [0.7,0.7,0.7], \"EXPONENT\": 20}, \"light\": {\"TYPE\": \"Emitting\", \"RGB\": [1,1,1]}, \"white\": {\"TYPE\": \"Diffuse\", \"RGB\": [1,1,1]}}, $GOOD_CAM, \"Objects\": [$GOOD_OBJ]}"
expect_fail "phong creating energy" "SPECRGB" render "$T/hotphong.json" --strict -o "$T/out.png"
scene goodlights.json "{$GOOD_MATS, $GOOD_CAM, \"Lights\": [{\"TYPE\": \"point\", \"POSITION\": [0,5,0], \"RGB\": [10,10,10]}, {\"TYPE\": \"directional\", \"DIRECTION\": [0,-1,0], \"RGB\": [1,1,1], \"EMITTANCE\": 2}], \"Objects\": [$GOOD_OBJ]}"
for integ in pt lt bdpt ppm bpm vcm; do
  "$CAUSTIC" render "$T/goodlights.json" --integrator $integ --spp 2 --quiet --device cpu -o "$T/l_$integ.png" >/dev/null 2>&1 && [ -s "$T/l_$integ.png" ] && ok || bad "render with point/directional lights, --integrator $integ"
done
expect_fail "missing scene" "no such file" render "$T/nope.json" -o "$T/out.png"
scene trunc.json "{$GOOD_MATS, \"Camera\": {\"RES\": [32"
expect_fail "truncated json" "trunc.json" render "$T/trunc.json" -o "$T/out.png"
scene garbage.json $'\x01\x02garbage'
expect_fail "garbage json" "garbage.json" render "$T/garbage.json" -o "$T/out.png"
scene unknownkey.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"white\", \"TRANS\": [0,0,0], \"ROTAT\": [0,0,0], \"SCLAE\": [1,1,1]}]}"
expect_fail "unknown key" "SCLAE.*did you mean" render "$T/unknownkey.json" --strict -o "$T/out.png"
scene unknownmat.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"gold\", \"TRANS\": [0,0,0], \"ROTAT\": [0,0,0], \"SCALE\": [1,1,1]}]}"
expect_fail "unknown material" "gold" render "$T/unknownmat.json" --strict -o "$T/out.png"
scene unknowntype.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"torus\", \"MATERIAL\": \"white\", \"TRANS\": [0,0,0], \"ROTAT\": [0,0,0], \"SCALE\": [1,1,1]}]}"
expect_fail "unknown object type" "torus" render "$T/unknowntype.json" --strict -o "$T/out.png"
scene badmattype.json "{\"Materials\": {\"m\": {\"TYPE\": \"Skin\", \"RGB\": [1,1,1]}}, $GOOD_CAM, \"Objects\": []}"
expect_fail "unknown material type" "Skin" render "$T/badmattype.json" --strict -o "$T/out.png"
# without --strict the same files render, with one warning line naming the file and the JSON path
# (expect_warn NAME PATTERN ARGS...: status 0, a "warning:" line on stderr matching PATTERN, an image)
expect_warn() {
  local name=$1 pattern=$2; shift 2
  rm -f "$T/out.png"
  "$CAUSTIC" "$@" >"$T/stdout" 2>"$T/stderr"
  local rc=$?
  if [ $rc -ne 0 ]; then bad "$name: exit $rc, expected 0 ($(head -c 300 "$T/stderr"))"; return; fi
  if ! grep -E -- "warning: .*$pattern" "$T/stderr" >/dev/null; then bad "$name: no warning matching '$pattern': $(head -c 300 "$T/stderr")"; return; fi
  if [ ! -s "$T/out.png" ]; then bad "$name: no image written"; return; fi
  ok
}
expect_warn "unknown key warns" "unknownkey.json: Objects\\[0\\].SCLAE: unknown key, ignored" render "$T/unknownkey.json" --quiet -o "$T/out.png"
expect_warn "unknown object type warns" "unknowntype.json: Objects\\[0\\].TYPE: .*torus.*skipped" render "$T/unknowntype.json" --quiet -o "$T/out.png"
expect_warn "unknown material warns" "unknownmat.json: Objects.*MATERIAL: unknown material \"gold\"" render "$T/unknownmat.json" --quiet -o "$T/out.png"
expect_warn "material fallback warns" "badmattype.json: Materials.m.TYPE: .*Skin.*Diffuse" render "$T/badmattype.json" --quiet -o "$T/out.png"
# one warning per key: the same unknown key in three objects is one line
scene threekeys.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"white\", \"GLOW\": 1}, {\"TYPE\": \"cube\", \"MATERIAL\": \"white\", \"GLOW\": 1}, {\"TYPE\": \"sphere\", \"MATERIAL\": \"light\", \"GLOW\": 2, \"TRANS\": [0,8,0]}]}"
expect_warn "one warning per key" "Objects\\[0\\].GLOW: unknown key, ignored \\(and 2 more like it\\)" render "$T/threekeys.json" --quiet -o "$T/out.png"
[ "$(grep -c GLOW "$T/stderr")" = 1 ] && ok || bad "one warning per key: $(grep -c GLOW "$T/stderr") GLOW lines"
# bad values stay errors without --strict
scene nanrgb.json "{\"Materials\": {\"m\": {\"TYPE\": \"PBR\", \"BASECOLOR\": [1,1e999,1]}}, $GOOD_CAM, \"Objects\": []}"
expect_fail "non-finite colour in a dialect key" "Materials.m.RGB" render "$T/nanrgb.json" -o "$T/out.png"

# --- quick look: a model without a scene file; --dump-scene writes the scene it built
printf 'v -1 0 -1\nv 1 0 -1\nv 0 1.5 0\nv 0 0 1\nf 1 2 3\nf 2 4 3\nf 4 1 3\nf 1 4 2\n' > "$T/tet.obj"
rm -f "$T/out.png" "$T/ql.json"
if "$CAUSTIC" render "$T/tet.obj" --spp 2 --res 40x30 --dump-scene "$T/ql.json" -o "$T/out.png" >/dev/null 2>"$T/stderr" \
   && [ -s "$T/out.png" ] && grep -q '"Camera"' "$T/ql.json" && grep -q 'tet.obj' "$T/ql.json"; then ok; else bad "quick look obj: $(head -c 300 "$T/stderr")"; fi
# the dumped scene is editable JSON that renders by itself
if "$CAUSTIC" render "$T/ql.json" --spp 2 --res 40x30 -o "$T/out2.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out2.png" ]; then ok; else bad "dumped scene: $(head -c 300 "$T/stderr")"; fi
"$CAUSTIC" render "$T/tet.obj" --spp 1 --res 8x8 -o "$T/out.png" >/dev/null 2>"$T/stderr"
grep -q -- "--dump-scene" "$T/stderr" && ok || bad "quick look does not mention --dump-scene: $(head -c 300 "$T/stderr")"
printf 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n' > "$T/tri.ply"
if "$CAUSTIC" render "$T/tri.ply" --spp 2 --res 16x16 -o "$T/out.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out.png" ]; then ok; else bad "quick look ply: $(head -c 300 "$T/stderr")"; fi
# other renderers' formats are named; a .glb is recognised, not "a NUL byte"
printf 'glTF\002\000\000\000\024\000\000\000\000\000\000\000JSON' > "$T/model.glb"
# (a build without tinygltf names what is missing instead)
glb_msg="glTF 2.0 binary"
"$CAUSTIC" --version | grep -q "^gltf: yes" || glb_msg="built without glTF support"
expect_fail "glb recognised" "$glb_msg" render "$T/model.glb" -o "$T/out.png"
grep -q "NUL byte" "$T/stderr" && bad "glb: says NUL byte" || ok
# dump_roundtrip SCENE NAME: render SCENE and its --dump-scene JSON alike: the same bytes
dump_roundtrip() {
  local sc=$1 name=$2
  rm -f "$T/rt.json" "$T/rt_a.pfm" "$T/rt_b.pfm"
  if "$CAUSTIC" render "$sc" --spp 2 --threads 1 -o "$T/rt_a.pfm" --dump-scene "$T/rt.json" >/dev/null 2>"$T/stderr" \
     && grep -q "wrote the scene" "$T/stderr" \
     && "$CAUSTIC" render "$T/rt.json" --spp 2 --threads 1 -o "$T/rt_b.pfm" >/dev/null 2>"$T/stderr"; then
    cmp -s "$T/rt_a.pfm" "$T/rt_b.pfm" && ok || bad "$name --dump-scene round trip: the JSON renders another image"
  else
    bad "$name --dump-scene round trip: $(head -c 300 "$T/stderr")"
  fi
}
# pbrt-v4 scenes are read; a bad one is one line naming the file and line
printf 'LookAt 0 0 5  0 0 0  0 1 0\nCamera "perspective"\nWorldBegin\nLightSource "infinite"\nShape "sphere"\n' > "$T/scene.pbrt"
if "$CAUSTIC" render "$T/scene.pbrt" --spp 2 --res 16x16 -o "$T/out.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out.png" ]; then ok; else bad "pbrt render: $(head -c 300 "$T/stderr")"; fi
"$CAUSTIC" info "$T/scene.pbrt" 2>/dev/null | grep -q "1 spheres" && ok || bad "pbrt info"
printf 'LookAt 0 0 5  0 0 0  0 1 0\nCamera "perspective"\nWorldBegin\nShap "sphere"\n' > "$T/scene.pbrt"
expect_fail "bad pbrt" "scene.pbrt:4: unknown directive" render "$T/scene.pbrt" -o "$T/out.png"
# pbrt --dump-scene (a disk area light on a diffuse surface, coateddiffuse, a spectral conductor,
# a triangle mesh with normals, glass, a point light), and one clear refusal for what the JSON
# cannot say (no file written)
dump_roundtrip "$SRC/tests/data/dump/roundtrip.pbrt" pbrt
printf 'LookAt 0 0 5  0 0 0  0 1 0\nCamera "perspective"\nWorldBegin\nLightSource "infinite"\nMaterial "coatedconductor"\nShape "sphere"\n' > "$T/cc.pbrt"
expect_fail "pbrt dump refused" "cc.json: --dump-scene cannot write this scene: material .*coat over a complex-IOR conductor" \
  render "$T/cc.pbrt" --dump-scene "$T/cc.json" -o "$T/out.png"
[ ! -e "$T/cc.json" ] && ok || bad "a refused --dump-scene wrote its file"
# Mitsuba XML: rendered, -D sets its $name parameters, info, bad input names FILE:LINE (without
# libexpat the build says what is missing)
printf '<?xml version="1.0"?>\n<scene version="3.0.0">\n<default name="r" value="1"/>\n<sensor type="perspective"><float name="fov" value="40"/><transform name="to_world"><lookat origin="0,0,6" target="0,0,0" up="0,1,0"/></transform><film type="hdrfilm"><integer name="width" value="24"/><integer name="height" value="16"/></film></sensor>\n<shape type="sphere"><float name="radius" value="$r"/><bsdf type="diffuse"/></shape>\n<emitter type="constant"/>\n</scene>\n' > "$T/scene.xml"
if "$CAUSTIC" --version | grep -q "^mitsuba: yes"; then
  if "$CAUSTIC" render "$T/scene.xml" --spp 2 -D r=0.5 -o "$T/out.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out.png" ]; then ok; else bad "mitsuba render: $(head -c 300 "$T/stderr")"; fi
  "$CAUSTIC" info "$T/scene.xml" >"$T/stdout" 2>"$T/stderr" && grep -q "24x16" "$T/stdout" && ok || bad "mitsuba info: $(head -c 300 "$T/stderr")"
  sed 's/value="\$r"/value="$nope"/' "$T/scene.xml" > "$T/bad.xml"
  expect_fail "mitsuba bad parameter" 'bad.xml:5: \$nope is not a parameter' render "$T/bad.xml" -o "$T/out.png"
  # --dump-scene: the imported scene as caustic JSON renders the same image, bit for bit (spheres,
  # rectangles, a textured diffuse, a named-metal conductor, glass, a plastic, an area light on a
  # reflecting surface, spot, point and constant lights)
  dump_roundtrip "$SRC/tests/data/dump/roundtrip.xml" mitsuba
  "$CAUSTIC" info "$SRC/tests/data/dump/roundtrip.xml" --dump-scene "$T/info.json" >/dev/null 2>&1 \
    && cmp -s "$T/info.json" "$T/rt.json" && ok || bad "info --dump-scene does not write what render's does"
  # with media: homogeneous media (Media), the media shapes bound (INTERIOR/EXTERIOR), the camera's
  dump_roundtrip "$SRC/tests/data/dump/media.xml" "mitsuba media"
  grep -q '"MEDIUM":"fog#0"' "$T/rt.json" && grep -q '"INTERIOR":"ink#1","EXTERIOR":"fog#0"' "$T/rt.json" && ok \
    || bad "mitsuba media dump: no camera MEDIUM or INTERIOR/EXTERIOR in $(head -c 300 "$T/rt.json")"
  # a heterogeneous medium: its density and albedo grids as .vol files beside the JSON, BOX
  dump_roundtrip "$SRC/tests/data/media/grid.xml" "mitsuba grid"
  [ -s "$T/rt.med0.vol" ] && [ -s "$T/rt.med0.albedo.vol" ] && grep -q '"TYPE":"Grid","FILE":"rt.med0.vol"' "$T/rt.json" \
    && ok || bad "mitsuba grid dump: no grid files or keys in $(head -c 400 "$T/rt.json")"
else
  expect_fail "mitsuba without expat" "libexpat" render "$T/scene.xml" -o "$T/out.png"
fi
printf 'scene.camera.lookat.orig = 0 0 5\nscene.objects.box.ply = box.ply\n' > "$T/scene.scn"
expect_fail "luxcore refused" "LuxCore" render "$T/scene.scn" -o "$T/out.png"
# the older CIS 565 text format
printf 'MATERIAL 0\nRGB 1 1 1\nSPECEX 0\nSPECRGB 0 0 0\nREFL 0\nREFR 0\nREFRIOR 0\nEMITTANCE 5\n\nMATERIAL 1\nRGB .8 .8 .8\nSPECEX 0\nSPECRGB 0 0 0\nREFL 0\nREFR 0\nREFRIOR 0\nEMITTANCE 0\n\nCAMERA\nRES 32 24\nFOVY 45\nITERATIONS 4\nDEPTH 4\nFILE t\nEYE 0 5 10\nLOOKAT 0 5 0\nUP 0 1 0\n\nOBJECT 0\nsphere\nmaterial 0\nTRANS 0 8 0\nROTAT 0 0 0\nSCALE 2 2 2\n\nOBJECT 1\ncube\nmaterial 1\nTRANS 0 0 0\nROTAT 0 0 0\nSCALE 10 .1 10\n' > "$T/old.txt"
if "$CAUSTIC" render "$T/old.txt" --spp 2 -o "$T/out.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out.png" ]; then ok; else bad "text scene: $(head -c 300 "$T/stderr")"; fi
printf 'MATERIAL 0\nRGB 1 1 1\nCAMERA\nRES 32 24\nFOVY 45\nEYE 0 5 10\nLOOKAT 0 5 0\nOBJECT 0\nsphere\nmaterial 0\nTRANS 0 x 0\n' > "$T/badold.txt"
expect_fail "text scene bad number" "badold.txt: Objects\\[0\\].TRANS" render "$T/badold.txt" -o "$T/out.png"
printf 'RGB 1 1 1\n' > "$T/orphan.txt"
expect_fail "text scene key outside a block" "orphan.txt:1:" render "$T/orphan.txt" -o "$T/out.png"
# our dialect test scenes (tests/data/dialects) render, with warnings; --strict refuses the ones that warn
for f in "$SRC"/tests/data/dialects/*; do
  rm -f "$T/out.png"
  if "$CAUSTIC" render "$f" --spp 2 --res 24x18 --quiet -o "$T/out.png" >/dev/null 2>"$T/stderr" && [ -s "$T/out.png" ]; then ok
  else bad "dialect scene $(basename "$f"): $(head -c 300 "$T/stderr")"; fi
done
expect_fail "dialect scene --strict" "materials.json: .*an error with --strict" render "$SRC/tests/data/dialects/materials.json" --strict -o "$T/out.png"
scene negscale.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"white\", \"TRANS\": [0,0,0], \"ROTAT\": [0,0,0], \"SCALE\": [0,1,1]}]}"
expect_fail "zero scale" "SCALE" render "$T/negscale.json" -o "$T/out.png"
scene nan.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"white\", \"TRANS\": [NaN,0,0], \"ROTAT\": [0,0,0], \"SCALE\": [1,1,1]}]}"
expect_fail "nan value" "nan.json" render "$T/nan.json" -o "$T/out.png"
scene zerores.json "{$GOOD_MATS, \"Camera\": {\"RES\": [0,24], \"FOVY\": 45, \"ITERATIONS\": 4, \"DEPTH\": 4, \"FILE\": \"x\", \"EYE\": [0,5,10], \"LOOKAT\": [0,5,0], \"UP\": [0,1,0]}, \"Objects\": [$GOOD_OBJ]}"
expect_fail "zero resolution in file" "RES" render "$T/zerores.json" -o "$T/out.png"
scene hugeres.json "{$GOOD_MATS, \"Camera\": {\"RES\": [1000000,24], \"FOVY\": 45, \"ITERATIONS\": 4, \"DEPTH\": 4, \"FILE\": \"x\", \"EYE\": [0,5,10], \"LOOKAT\": [0,5,0], \"UP\": [0,1,0]}, \"Objects\": [$GOOD_OBJ]}"
expect_fail "absurd resolution in file" "RES" render "$T/hugeres.json" -o "$T/out.png"
scene missingmesh.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"mesh\", \"MATERIAL\": \"white\", \"FILE\": \"nowhere.obj\", \"TRANS\": [0,0,0], \"ROTAT\": [0,0,0], \"SCALE\": [1,1,1]}]}"
expect_fail "missing mesh" "nowhere.obj" render "$T/missingmesh.json" -o "$T/out.png"
expect_fail "info on missing" "no such file" info "$T/nope.json"
expect_fail "compare missing" "nope.png" compare "$T/nope.png" "$T/nope2.png"

# --- good paths
"$CAUSTIC" --help | grep -q "render \[SCENE" && ok || bad "--help"
for c in render info compare bench; do "$CAUSTIC" $c --help | grep -q "usage: caustic $c" && ok || bad "$c --help"; done
if "$CAUSTIC" render "$T/good.json" --spp 2 --quiet -o "$T/a.png" > "$T/summary" 2>"$T/stderr"; then
  grep -qE '^time=[0-9.]+s spp=2 Msamples/s=[0-9.]+ Mrays/s=[0-9.]+' "$T/summary" && ok || bad "summary line: $(cat "$T/summary")"
  [ -s "$T/a.png" ] && ok || bad "no image written"
  ls "$T"/a.png.tmp* >/dev/null 2>&1 && bad "temp file left behind" || ok
else bad "good render failed: $(cat "$T/stderr")"; fi
"$CAUSTIC" render "$T/good.json" --spp 2 --quiet -o "$T/b.pfm" >/dev/null 2>&1 && [ -s "$T/b.pfm" ] && ok || bad "pfm output"
"$CAUSTIC" render "$T/good.json" --spp 2 --quiet -o "$T/c.exr" >/dev/null 2>&1 && [ -s "$T/c.exr" ] && ok || bad "exr output"
"$CAUSTIC" compare "$T/a.png" "$T/a.png" | grep -q "AE=0 PSNR=inf RMSE=0.0000 SSIM=1.00000" && ok || bad "compare identical"
"$CAUSTIC" info "$T/good.json" | grep -q "primitives:  13" && ok || bad "info counts: $("$CAUSTIC" info "$T/good.json")"
# progress lines when stderr is not a terminal
"$CAUSTIC" render "$T/good.json" --spp 4 -o "$T/d.png" 2>"$T/progress" >/dev/null && grep -q "4/4 spp" "$T/progress" && ok || bad "progress: $(cat "$T/progress")"
# checkpoint + resume: the checkpoint holds the samples and a resumed run completes them
"$CAUSTIC" render "$T/good.json" --spp 4 --quiet --checkpoint "$T/ck" -o "$T/e.png" >/dev/null 2>&1 && [ -s "$T/ck" ] && ok || bad "checkpoint written"
"$CAUSTIC" render "$T/good.json" --spp 8 --quiet --checkpoint "$T/ck" --resume -o "$T/f.png" > "$T/s2" 2>&1 && grep -q "spp=8" "$T/s2" && ok || bad "resume: $(cat "$T/s2")"
"$CAUSTIC" render "$T/good.json" --spp 8 --quiet -o "$T/g.png" >/dev/null 2>&1
"$CAUSTIC" compare "$T/f.png" "$T/g.png" | grep -q "AE=0 " && ok || bad "resumed image differs from uninterrupted: $("$CAUSTIC" compare "$T/f.png" "$T/g.png")"
# a checkpoint of another format version (the magic's last digit) is refused as such, not as garbage
sed '1s/^CAUSTIC-CKPT-[0-9]/CAUSTIC-CKPT-0/' "$T/ck" > "$T/ck0"
expect_fail "old checkpoint" "another version of caustic" render "$T/good.json" --spp 8 --checkpoint "$T/ck0" --resume -o "$T/out.png"
# a checkpoint that lies is refused, never resumed: every byte is under a CRC-32 (format 9)
size=$(stat -c %s "$T/ck")
cp "$T/ck" "$T/ckfilm"; printf '\377' | dd of="$T/ckfilm" bs=1 seek=$((size - 3)) conv=notrunc 2>/dev/null
expect_fail "flipped bit in the film" "checkpoint film is corrupt" render "$T/good.json" --spp 8 --checkpoint "$T/ckfilm" --resume -o "$T/out.png"
cp "$T/ck" "$T/ckhead"; printf '\377' | dd of="$T/ckhead" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_fail "flipped bit in the header" "checkpoint header is corrupt" render "$T/good.json" --spp 8 --checkpoint "$T/ckhead" --resume -o "$T/out.png"
head -c 500 "$T/ck" > "$T/cktrunc"
expect_fail "truncated checkpoint" "truncated" render "$T/good.json" --spp 8 --checkpoint "$T/cktrunc" --resume -o "$T/out.png"
expect_fail "checkpoint over the target" "holds 8 spp, more than this render's target of 2" render "$T/good.json" --spp 2 --checkpoint "$T/ck" --resume -o "$T/out.png"

# --- flags, files and limits (issue 17)
expect_fail "unknown last flag" "unknown option '--frobnicate'" render "$T/good.json" -o "$T/out.png" --frobnicate
expect_fail "res overflow" "--res" render "$T/good.json" --res 4294967328x32 -o "$T/out.png"
expect_fail "res with a sign" "--res" render "$T/good.json" --res 32x-32 -o "$T/out.png"
expect_fail "spp over the scene files' limit" "--spp.*1073741824" render "$T/good.json" --spp 1073741825 -o "$T/out.png"
"$CAUSTIC" render "$T/good.json" --spp 1073741824 --time-limit 0.01 --quiet -o "$T/big.png" >/dev/null 2>&1 && ok || bad "--spp 2^30 (the scene files' limit) accepted"
"$CAUSTIC" render "$T/good.json" --threads 999 --spp 1 --quiet -o "$T/th.png" >/dev/null 2>"$T/stderr" \
  && grep -q "warning: --threads 999 is more than the [0-9]* cores" "$T/stderr" && ok || bad "--threads 999 warned: $(cat "$T/stderr")"
ln -s "$T/loop1" "$T/loop2"; ln -s "$T/loop2" "$T/loop1"
expect_fail "symlink loop" "loop1: Too many levels of symbolic links" render "$T/loop1" -o "$T/out.png"
scene dark.json "{\"Materials\": {\"white\": {\"TYPE\": \"Diffuse\", \"RGB\": [0.8,0.8,0.8]}}, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"white\"}]}"
expect_warn "no light" "dark.json has no light" render "$T/dark.json" --spp 1 --quiet -o "$T/out.png"
# texels no light has (NaN, negative) are reported once and zeroed, an error with --strict; huge ones warned
printf 'PF\n3 1\n-1\n' > "$T/bad.pfm"
printf '\000\000\300\177\000\000\200\277\000\000\200\077\000\000\200\077\200\226\030\113\000\000\200\077\000\000\200\077\000\000\200\077\000\000\200\077' >> "$T/bad.pfm"
scene badenv.json "{$GOOD_MATS, $GOOD_CAM, \"Environment\": {\"FILE\": \"bad.pfm\"}, \"Objects\": [$GOOD_OBJ]}"
expect_warn "bad texels" "badenv.json: Environment.FILE: .*bad.pfm: 1 non-finite and 1 negative values replaced by 0" render "$T/badenv.json" --spp 1 --quiet -o "$T/out.png"
grep -q "bad.pfm: 1 values above 1e+06 (largest 1e+07)" "$T/stderr" && ok || bad "huge texels warned: $(cat "$T/stderr")"
expect_fail "bad texels with --strict" "1 non-finite and 1 negative values replaced by 0 \(an error with --strict\)" render "$T/badenv.json" --strict -o "$T/out.png"
# images whose header claims more than the file holds, or than the memory cap allows: refused at once
printf 'PF\n20000 13421\n-1\n' > "$T/claim.pfm"
expect_fail "18-byte PFM claiming 3.2 GB" "claim.pfm: PFM header claims 20000x13421 pixels, more than a file of 0 bytes" compare "$T/claim.pfm" "$T/claim.pfm"
CAUSTIC_IMAGE_MEMORY=1K expect_fail "memory cap" "needs 9 KiB to decode, over the limit of 1 KiB \(raise CAUSTIC_IMAGE_MEMORY" compare "$T/a.png" "$T/a.png"
# render and info follow the same rules for a texture whose header lies (the issue: 6.3 GB each)
cp "$SRC/fuzz/corpus_image/claim.png" "$T/claim.png"
scene claimtex.json "{\"Materials\": {\"light\": {\"TYPE\": \"Emitting\", \"RGB\": [1,1,1], \"EMITTANCE\": 5}, \"white\": {\"TYPE\": \"Diffuse\", \"TEXTURE\": {\"TYPE\": \"image\", \"FILE\": \"claim.png\"}}}, $GOOD_CAM, \"Objects\": [$GOOD_OBJ]}"
expect_fail "texture claiming 16000x16000 (render)" "claim.png: PNG header claims 16000x16000 pixels, more than a file of" render "$T/claimtex.json" -o "$T/out.png"
expect_fail "texture claiming 16000x16000 (info)" "claim.png: PNG header claims 16000x16000 pixels, more than a file of" info "$T/claimtex.json"
# an 8-bit environment map's sampling tables count against the cap too (4 bytes a texel more
# than its 3): a.png fits by itself under the limit below, not with its tables
scene envcap.json "{$GOOD_MATS, $GOOD_CAM, \"Environment\": {\"FILE\": \"a.png\"}, \"Objects\": [$GOOD_OBJ]}"
CAUSTIC_IMAGE_MEMORY=5K expect_fail "environment tables over the cap" "Environment.FILE: a.png: a 32x24 environment map \\(8-bit\\) needs 6 KiB with its sampling tables, over the limit of 5 KiB" render "$T/envcap.json" -o "$T/out.png"
CAUSTIC_IMAGE_MEMORY=5K expect_fail "environment tables over the cap (info)" "needs 6 KiB with its sampling tables" info "$T/envcap.json"
CAUSTIC_IMAGE_MEMORY=16K "$CAUSTIC" render "$T/envcap.json" --spp 1 --quiet -o "$T/env.png" >/dev/null 2>&1 && ok || bad "environment under a raised cap"

# adaptive sampling with a heat map of the samples per pixel
"$CAUSTIC" render "$T/good.json" --spp 64 --adaptive 0.3 --heatmap "$T/heat.png" --quiet -o "$T/ad.png" >/dev/null 2>"$T/stderr" \
  && [ -s "$T/heat.png" ] && ok || bad "adaptive + heatmap: $(cat "$T/stderr")"
expect_fail "bad adaptive" "--adaptive" render "$T/good.json" --adaptive -1 -o "$T/out.png"
# adaptive depth: renders; refused with adaptive sampling
"$CAUSTIC" render "$T/good.json" --spp 8 --adaptive-depth --max-depth 6 --quiet -o "$T/adepth.png" > "$T/summary" 2>"$T/stderr" \
  && grep -q "spp=8" "$T/summary" && ok || bad "adaptive depth: $(cat "$T/stderr")"
expect_fail "adaptive depth + adaptive" "adaptive-depth" render "$T/good.json" --adaptive-depth --adaptive 0.1 -o "$T/out.png"
expect_fail "bad heatmap name" "heatmap" render "$T/good.json" --heatmap "$T/heat.gif" -o "$T/out.png"

# an environment map: any image caustic reads, here one it rendered itself
"$CAUSTIC" render rtow --res 64x32 --spp 1 --quiet -o "$T/sky.pfm" >/dev/null 2>&1
scene envmap.json "{$GOOD_MATS, $GOOD_CAM, \"Environment\": {\"FILE\": \"sky.pfm\", \"EMITTANCE\": 2}, \"Objects\": [$GOOD_OBJ]}"
"$CAUSTIC" render "$T/envmap.json" --spp 2 --quiet -o "$T/env.png" >/dev/null 2>"$T/stderr" && [ -s "$T/env.png" ] && ok || bad "environment map: $(cat "$T/stderr")"
scene envmissing.json "{$GOOD_MATS, $GOOD_CAM, \"Environment\": {\"FILE\": \"nosky.exr\"}, \"Objects\": [$GOOD_OBJ]}"
expect_fail "missing environment map" "Environment.FILE.*nosky.exr" render "$T/envmissing.json" -o "$T/out.png"

# Radiance HDR (RGBE): 2x2 pixels of (1.0, 0.5, 0.25) load; a truncated one is a clear error
printf '#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 2\n' > "$T/sky.hdr"
for i in 1 2 3 4; do printf '\200\100\040\201' >> "$T/sky.hdr"; done
"$CAUSTIC" compare "$T/sky.hdr" "$T/sky.hdr" 2>&1 | grep -q "AE=0 " && ok || bad "hdr load: $("$CAUSTIC" compare "$T/sky.hdr" "$T/sky.hdr" 2>&1)"
head -c 40 "$T/sky.hdr" > "$T/trunc.hdr"
expect_fail "truncated hdr" "trunc.hdr" compare "$T/trunc.hdr" "$T/sky.hdr"
scene envhdr.json "{$GOOD_MATS, $GOOD_CAM, \"Environment\": {\"FILE\": \"sky.hdr\"}, \"Objects\": [$GOOD_OBJ]}"
"$CAUSTIC" render "$T/envhdr.json" --spp 1 --quiet -o "$T/envhdr.png" >/dev/null 2>"$T/stderr" && ok || bad "hdr environment: $(cat "$T/stderr")"

# instancing: the same mesh file placed twice is read once and placed again (true instancing: its
# 20 triangles held once, 52 placed)
cp "$SRC/scenes/meshes/icosahedron.obj" "$T/ico.obj"
scene inst.json "{$GOOD_MATS, $GOOD_CAM, \"Objects\": [{\"TYPE\": \"mesh\", \"FILE\": \"ico.obj\", \"MATERIAL\": \"white\", \"TRANS\": [0,2,0], \"ROTAT\": [0,0,0], \"SCALE\": [1,1,1]}, {\"TYPE\": \"mesh\", \"FILE\": \"ico.obj\", \"MATERIAL\": \"white\", \"TRANS\": [3,2,0], \"ROTAT\": [0,45,0], \"SCALE\": [2,2,2]}, $GOOD_OBJ]}"
"$CAUSTIC" info "$T/inst.json" > "$T/info" 2>&1
grep -q "(32 triangles" "$T/info" && grep -q "instances:.* 53 primitives placed" "$T/info" && ok ||
    bad "instanced mesh triangle count: $(grep -E 'primitives|instances' "$T/info")"
grep -q "bounds:.*(5" "$T/info" && ok || bad "second instance placed: $(grep bounds "$T/info")"

# the course's stock scene and every shipped example scene load and render unchanged
# (scenes that use the test assets render from a copy next to an assets/ link, when ../shared exists)
ASSETS="$SRC/../shared/assets"
mkdir -p "$T/scenes"
[ -d "$ASSETS" ] && ln -s "$(cd "$ASSETS" && pwd)" "$T/scenes/assets"
for f in "$SRC"/scenes/*.json; do
  g=$f
  if grep -q '"assets/' "$f"; then
    [ -d "$ASSETS" ] || { echo "skip $f (no test assets)"; continue; }
    cp "$f" "$T/scenes/"; g="$T/scenes/$(basename "$f")"
  fi
  "$CAUSTIC" render "$g" --res 40x30 --spp 2 --quiet -o "$T/scene.png" >/dev/null 2>"$T/stderr" && [ -s "$T/scene.png" ] \
    && ok || bad "scene $f: $(cat "$T/stderr")"
done
for b in cornell cornell-glass rtow; do
  "$CAUSTIC" render $b --res 40x30 --spp 2 --quiet -o "$T/b.png" >/dev/null 2>&1 && ok || bad "built-in $b"
done

# --camera FILE: a scene file's Camera object replaces the scene's camera; a file without one is refused
printf '{"Camera": {"RES": [40, 30], "FOVY": 30, "EYE": [3, 6, 9], "LOOKAT": [0, 4, 0]}}' > "$T/cam.json"
"$CAUSTIC" render cornell --res 40x30 --spp 2 --quiet --seed 3 -o "$T/cam0.png" >/dev/null 2>&1 &&
  "$CAUSTIC" render cornell --res 40x30 --spp 2 --quiet --seed 3 --camera "$T/cam.json" -o "$T/cam1.png" >/dev/null 2>&1 &&
  ! cmp -s "$T/cam0.png" "$T/cam1.png" && ok || bad "--camera does not move the view"
printf '{"Objects": []}' > "$T/nocam.json"
"$CAUSTIC" render cornell --spp 1 --quiet --camera "$T/nocam.json" -o "$T/nocam.png" >/dev/null 2>"$T/stderr"
[ $? -eq 2 ] && grep -q "nocam.json.*Camera" "$T/stderr" && [ ! -e "$T/nocam.png" ] && ok || bad "--camera without a Camera: $(cat "$T/stderr")"

# ---- the command line of the field (issue 41) ------------------------------------------------
# --opt=value is --opt value: the same image
"$CAUSTIC" render "$T/good.json" --spp=2 --res=24x16 --quiet -o "$T/eq.pfm" >/dev/null 2>&1 &&
  "$CAUSTIC" render "$T/good.json" --spp 2 --res 24x16 --quiet -o "$T/sp.pfm" >/dev/null 2>&1 &&
  cmp -s "$T/eq.pfm" "$T/sp.pfm" && ok || bad "--spp=2 --res=24x16 differs from --spp 2 --res 24x16"
"$CAUSTIC" tonemap "$T/eq.pfm" "$T/tm.png" --tonemap=agx --exposure=-1 >/dev/null 2>&1 && [ -s "$T/tm.png" ] && ok \
  || bad "caustic tonemap --tonemap=agx"
expect_fail "flag given a value" "takes no value" render "$T/good.json" --quiet=1 -o "$T/out.png"
# did-you-mean for flags, commands and built-in scene names
expect_fail "flag typo" "did you mean '--sampler'" render "$T/good.json" --sampelr sobol -o "$T/out.png"
expect_fail "single dash" "did you mean '--spp'" render "$T/good.json" -spp 3 -o "$T/out.png"
expect_fail "command typo" "did you mean 'render'" rendr cornell
expect_fail "scene as command" "caustic render" cornell
expect_fail "built-in typo" "did you mean 'cornell'" render cornel --spp 1 -o "$T/out.png"
# help: grouped, at most 80 columns, generated with the man page and the completion from one table
"$CAUSTIC" render --help >"$T/help" && [ "$(awk 'length > 80' "$T/help" | wc -l)" -eq 0 ] && ok \
  || bad "render --help has lines over 80 columns: $(awk 'length > 80' "$T/help" | head -2)"
"$CAUSTIC" --help | awk 'length > 80 {exit 1}' && ok || bad "caustic --help has lines over 80 columns"
grep -q "^Sampling:" "$T/help" && grep -q "^Look, AOVs and denoising:" "$T/help" && ok || bad "render --help is not grouped"
"$CAUSTIC" --help | grep -q "smallvcm3" && ok || bad "caustic --help does not list every built-in scene"
"$CAUSTIC" help --man >"$T/caustic.1" && grep -q '^\.TH CAUSTIC 1' "$T/caustic.1" && ok || bad "help --man"
if command -v groff >/dev/null; then
  [ -z "$(groff -man -ww -z "$T/caustic.1" 2>&1)" ] && ok || bad "caustic.1: groff warns: $(groff -man -ww -z "$T/caustic.1" 2>&1 | head -3)"
fi
"$CAUSTIC" help --bash-completion >"$T/comp.bash" && bash -n "$T/comp.bash" && ok || bad "help --bash-completion: not bash"
# every option of the help is in the man page and the completion (one table)
for o in $(grep -oE '^  (-[a-zA-Z], )?--?[a-zA-Z][-a-z]*' "$T/help" | sed 's/.*, //; s/^ *//'); do
  grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$T/caustic.1" && grep -qF -- " $o" "$T/comp.bash" \
    || { bad "option $o missing from the man page or the completion"; break; }
done
ok
# the completion completes: options after render, values of --tonemap
( source "$T/comp.bash"; COMP_WORDS=(caustic render --ton); COMP_CWORD=2; _caustic; [ "${COMPREPLY[*]}" = "--tonemap" ] ) \
  && ok || bad "completion of --ton"
( source "$T/comp.bash"; COMP_WORDS=(caustic render --tonemap a); COMP_CWORD=3; _caustic; [ "${COMPREPLY[*]}" = "aces agx" ] ) \
  && ok || bad "completion of --tonemap a"
# --version names the build's features
"$CAUSTIC" --version >"$T/ver" && grep -q "^caustic [0-9]" "$T/ver" && grep -q "^cuda: " "$T/ver" && grep -q "^mpi: " "$T/ver" \
  && grep -q "^gltf: " "$T/ver" && grep -q "^cpu kernels: " "$T/ver" && grep -q "^oidn: " "$T/ver" && grep -q "^sdl: " "$T/ver" \
  && ok || bad "--version: $(cat "$T/ver")"
# -D PATH=VALUE: scene keys overridden before the scene is read, the loader's paths and messages
"$CAUSTIC" render "$T/good.json" -D Camera.RES=[20,10] -DCamera.ITERATIONS=2 --quiet -o "$T/d.pfm" >"$T/stdout" 2>&1 \
  && grep -q "res=20x10" "$T/stdout" && grep -q "spp=2 " "$T/stdout" && ok || bad "-D Camera.RES: $(cat "$T/stdout")"
expect_fail "-D unknown key" 'Camera.RSE.*did you mean "RES"' render "$T/good.json" -D Camera.RSE=[20,10] -o "$T/out.png"
expect_fail "-D unknown parent" 'did you mean "light"' render "$T/good.json" -D Materials.ligth.EMITTANCE=1 -o "$T/out.png"
expect_fail "-D bad index" "out of range" render "$T/good.json" -D "Objects[9].TRANS=[0,0,0]" -o "$T/out.png"
expect_fail "-D bad value" "Camera.RES" render "$T/good.json" -D Camera.RES=[0,10] -o "$T/out.png"
expect_fail "-D without =" "PATH=VALUE" render "$T/good.json" -D Camera.RES -o "$T/out.png"
expect_fail "-D on a built-in made in code" "no JSON form" render rtow -D Camera.RES=[8,8] -o "$T/out.png"
"$CAUSTIC" render cornell -D "Objects[6].TRANS=[2,4,-1]" --res 16x16 --spp 1 --quiet -o "$T/dc.pfm" >/dev/null 2>&1 &&
  "$CAUSTIC" render cornell --res 16x16 --spp 1 --quiet -o "$T/c.pfm" >/dev/null 2>&1 && ! cmp -s "$T/dc.pfm" "$T/c.pfm" \
  && ok || bad "-D Objects[6].TRANS does not move the sphere of the built-in cornell"
# --dump-scene writes what it says, or refuses; "wrote" only after writing
"$CAUSTIC" render cornell -D Camera.RES=[16,16] --spp 1 --dump-scene "$T/dc.json" -o "$T/out.png" >/dev/null 2>"$T/stderr" \
  && grep -q '16, 16\|16,16' "$T/dc.json" && grep -q "wrote the scene" "$T/stderr" && ok \
  || bad "--dump-scene of the built-in cornell with -D: $(cat "$T/stderr")"
"$CAUSTIC" render "$T/dc.json" --spp 1 --quiet -o "$T/dc2.png" >/dev/null 2>&1 && ok || bad "the dumped cornell does not load"
expect_fail "--dump-scene of rtow" "no JSON form" render rtow --spp 1 --dump-scene "$T/rtow.json" -o "$T/out.png"
[ ! -e "$T/rtow.json" ] && ! grep -q "wrote" "$T/stderr" && ok || bad "--dump-scene of rtow said wrote or wrote a file"
# a glTF file without lights: the quick look's rig (environment, key light, ground), as OBJ/PLY get
if grep -q "^gltf: yes" "$T/ver"; then
  cat > "$T/tri.gltf" <<'GLTF'
{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0,0,0], "max": [1,1,0]}],
 "bufferViews": [{"buffer": 0, "byteLength": 36}],
 "buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]}
GLTF
  "$CAUSTIC" render "$T/tri.gltf" --res 24x16 --spp 1 --dump-scene "$T/tri.json" -o "$T/tri.png" >/dev/null 2>"$T/stderr" \
    && grep -q '"directional"' "$T/tri.json" && grep -q '"plane"' "$T/tri.json" && grep -q "tri.gltf" "$T/tri.json" \
    && grep -q "wrote the scene" "$T/stderr" && ok || bad "glTF quick look: $(cat "$T/stderr") $(head -c 300 "$T/tri.json")"
else
  echo "skip: the glTF quick look (built without glTF)"
fi
# --crop: the window alone, in pixels or fractions, where it is in the whole image (per-pixel
# difference against the whole render's window: noise only, against a shifted window: far more)
# pfm_window_diff FULL CROP X0 Y0: mean |crop - full window at (X0,Y0)| over the crop, relative to the window's mean
pfm_window_diff() {
  local full=$1 crop=$2 x0=$3 y0=$4
  { head -c 100 "$full" | sed -n 2p; tail -c +$(( $(head -3 "$full" | wc -c) + 1 )) "$full" | od -An -v -f;
    echo SPLIT; head -c 100 "$crop" | sed -n 2p; tail -c +$(( $(head -3 "$crop" | wc -c) + 1 )) "$crop" | od -An -v -f; } |
  awk -v x0="$x0" -v y0="$y0" '
    NR == 1 { W = $1; H = $2; part = 0; n = 0; next }
    $1 == "SPLIT" { part = 1; getline; CW = $1; CH = $2; n = 0; next }
    { for (i = 1; i <= NF; i++) { if (part == 0) f[n++] = $i; else c[n++] = $i } }
    END {
      d = 0; m = 0
      for (y = 0; y < CH; y++) for (x = 0; x < CW; x++) for (k = 0; k < 3; k++) {
        cv = c[((CH - 1 - y) * CW + x) * 3 + k]; fv = f[((H - 1 - (y + y0)) * W + x + x0) * 3 + k]
        d += (cv > fv ? cv - fv : fv - cv); m += fv }
      printf "%.4f\n", d / m }'
}
"$CAUSTIC" render cornell --res 64x48 --spp 64 --no-denoise --quiet -o "$T/full.pfm" >/dev/null 2>&1
"$CAUSTIC" render cornell --res 64x48 --spp 64 --crop 16,12,48,36 --quiet -o "$T/crop.pfm" >"$T/stdout" 2>&1 \
  && grep -q "res=32x24" "$T/stdout" && ok || bad "--crop 16,12,48,36: $(cat "$T/stdout")"
"$CAUSTIC" render cornell --res 64x48 --spp 64 --crop=0.25,0.25,0.75,0.75 --quiet -o "$T/cropf.pfm" >/dev/null 2>&1 \
  && cmp -s "$T/crop.pfm" "$T/cropf.pfm" && ok || bad "--crop in fractions differs from the same window in pixels"
here=$(pfm_window_diff "$T/full.pfm" "$T/crop.pfm" 16 12) shifted=$(pfm_window_diff "$T/full.pfm" "$T/crop.pfm" 20 12)
awk -v a="$here" -v b="$shifted" 'BEGIN { exit !(a < 0.3 && b > 2 * a) }' && ok \
  || bad "--crop: the window is not where it is in the whole image (difference $here, shifted $shifted)"
"$CAUSTIC" render cornell --res 64x48 --spp 2 --crop 0,0,64,48 --no-denoise --quiet -o "$T/cropw.pfm" >/dev/null 2>&1 &&
  "$CAUSTIC" render cornell --res 64x48 --spp 2 --no-denoise --quiet -o "$T/full2.pfm" >/dev/null 2>&1 &&
  cmp -s "$T/cropw.pfm" "$T/full2.pfm" && ok || bad "--crop of the whole image differs from the whole image"
expect_fail "crop outside" "not a window of the 64x48 image" render cornell --res 64x48 --crop 0,0,65,48 -o "$T/out.png"
expect_fail "crop malformed" "--crop" render cornell --crop 1,,2,3,4 -o "$T/out.png"
expect_fail "crop empty" "--crop" render cornell --crop 10,0,10,48 -o "$T/out.png"
expect_fail "crop with vcm" "path tracing" render cornell --res 64x48 --crop 0,0,8,8 --integrator vcm -o "$T/out.png"
# --frames N --orbit D: frame f turns D*f/N degrees
"$CAUSTIC" render cornell --res 16x16 --spp 1 --frames 2 --orbit=90 --quiet -o "$T/fo.pfm" >/dev/null 2>&1 &&
  "$CAUSTIC" render cornell --res 16x16 --spp 1 --orbit 45 --quiet -o "$T/o45.pfm" >/dev/null 2>&1 &&
  cmp -s "$T/fo.0001.pfm" "$T/o45.pfm" && ok || bad "--frames 2 --orbit 90: frame 1 is not the 45 degree view"
# the summary: load and BVH time
"$CAUSTIC" render "$T/good.json" --spp 1 --quiet -o "$T/s.pfm" 2>/dev/null | grep -qE "load_s=[0-9.]+ bvh_s=[0-9.]+" && ok \
  || bad "summary without load_s/bvh_s"
# a look flag with a linear output: one warning; a mostly clipped PNG: a warning with a suggestion
"$CAUSTIC" render "$T/good.json" --spp 1 --tonemap agx -o "$T/l.exr" >/dev/null 2>"$T/stderr" \
  && [ "$(grep -c "stays linear" "$T/stderr")" -eq 1 ] && ok || bad "--tonemap with an EXR: $(cat "$T/stderr")"
"$CAUSTIC" render "$T/good.json" --spp 1 --no-denoise --exposure 12 -o "$T/clip.png" >/dev/null 2>"$T/stderr" \
  && grep -q "clip to white.*--tonemap agx" "$T/stderr" && ok || bad "no clipping warning: $(cat "$T/stderr")"
"$CAUSTIC" render "$T/good.json" --spp 1 --no-denoise -o "$T/noclip.png" >/dev/null 2>"$T/stderr" \
  && ! grep -q "clip" "$T/stderr" && ok || bad "clipping warning on a normal image: $(cat "$T/stderr")"
# a long render says how long after its first pass, how to shorten it, and that Ctrl-C saves
timeout -s INT 4 "$CAUSTIC" render cornell --res 64x64 --spp 100000000 --threads 1 --no-denoise -o "$T/long.png" >/dev/null 2>"$T/stderr"
grep -q "needs about .*--spp 64.*--time-limit.*Ctrl-C" "$T/stderr" && [ -s "$T/long.png" ] && ok || bad "no ETA line: $(head -c 400 "$T/stderr")"
"$CAUSTIC" render "$T/good.json" --spp 1 --no-denoise -o "$T/short.png" >/dev/null 2>"$T/stderr" \
  && ! grep -q "needs about" "$T/stderr" && ok || bad "ETA line on a short render"
# no scene: the built-in cornell, said
ABS=$(cd "$(dirname "$CAUSTIC")" && pwd)/$(basename "$CAUSTIC")
(cd "$T" && "$ABS" render --res 8x8 --spp 1 --no-denoise >/dev/null 2>"$T/stderr") && grep -q "no scene given" "$T/stderr" \
  && [ -s "$T/cornell.png" ] && ok || bad "caustic render without a scene: $(cat "$T/stderr")"
# denoised by default for 8-bit outputs where Open Image Denoise is there; --no-denoise opts out
if grep -q "^oidn: yes" "$T/ver"; then
  "$CAUSTIC" render "$T/good.json" --spp 2 -o "$T/dn.png" >/dev/null 2>"$T/stderr" && [ -s "$T/dn.denoised.png" ] \
    && grep -q "dn.denoised.png (denoised) and .*dn.png (noisy)" "$T/stderr" && ok || bad "no default denoise: $(cat "$T/stderr")"
  "$CAUSTIC" render "$T/good.json" --spp 2 --no-denoise -o "$T/nd.png" >/dev/null 2>&1 && [ ! -e "$T/nd.denoised.png" ] \
    && ok || bad "--no-denoise wrote a denoised image"
  "$CAUSTIC" render "$T/good.json" --spp 2 -o "$T/nd.pfm" >/dev/null 2>&1 && [ ! -e "$T/nd.denoised.pfm" ] \
    && ok || bad "a linear output was denoised by default"
  "$CAUSTIC" render "$T/good.json" --spp 2 --checkpoint "$T/nd.ckpt" -o "$T/ck.png" >/dev/null 2>&1 \
    && [ ! -e "$T/ck.denoised.png" ] && ok || bad "a render with --checkpoint was denoised by default"
else
  echo "skip: default denoising (no Open Image Denoise: $(grep '^oidn' "$T/ver"))"
fi

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
