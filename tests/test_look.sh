#!/usr/bin/env bash
# What `caustic render` writes: live previews (--preview-every: the output file appears during the
# render, is a complete image whenever it is read, no temp files are left), exposure and tone
# maps (--exposure/--tonemap: 8-bit files change, linear files do not; `caustic tonemap` gives
# the same bytes), --aov (files beside a PNG, none that were not asked for, bad lists refused
# with nothing written; a checkpoint resumed only with the same AOV planes) and --denoise (the
# denoised file beside the noisy one, guided by albedo and normal unless --denoise-guides off,
# or one message and the noisy image where Open Image Denoise is missing).
set -u
CAUSTIC=${1:?usage: test_look.sh path/to/caustic [source dir]}
SRC=${2:-$(dirname "$0")/..}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAILED: $*" >&2; fails=$((fails + 1)); }
valid() { "$CAUSTIC" compare "$1" "$1" >/dev/null 2>&1; }   # loads as an image

# ---- previews ------------------------------------------------------------------------------
"$CAUSTIC" render cornell --device cpu --threads 1 --res 96x96 --spp 1000000 --time-limit 6 --preview-every 0.3 \
  -o "$T/p.png" --quiet >"$T/p.out" 2>"$T/p.err" &
pid=$!
seen=0 reads=0 broken=0
for _ in $(seq 1 120); do
  kill -0 $pid 2>/dev/null || break
  if [ -e "$T/p.png" ]; then
    if valid "$T/p.png"; then
      reads=$((reads + 1))
      kill -0 $pid 2>/dev/null && seen=1   # a complete image while the render still runs
    else broken=$((broken + 1)); fi
  fi
  sleep 0.05
done
wait $pid; rc=$?
[ $rc -eq 0 ] && ok || bad "preview render exited $rc: $(cat "$T/p.err")"
[ $seen -eq 1 ] && ok || bad "no complete preview while rendering"
[ $reads -ge 2 ] && ok || bad "previews read back as images only $reads times"
[ $broken -eq 0 ] && ok || bad "$broken reads of the preview found a broken image"
grep -qE "previews=[1-9][0-9]*( |$)" "$T/p.out" && grep -q "output=$T/p.png" "$T/p.out" && ok || bad "summary: $(cat "$T/p.out")"
ls "$T"/p.png.tmp* >/dev/null 2>&1 && bad "temp files left behind" || ok
valid "$T/p.png" && ok || bad "final image"
# a linear preview too
"$CAUSTIC" render cornell --device cpu --res 32x32 --spp 100000 --time-limit 1.5 --preview-every 0.2 -o "$T/p.exr" --quiet \
  | grep -qE "previews=[1-9]" && valid "$T/p.exr" && ok || bad "EXR previews"
"$CAUSTIC" render cornell --preview-every 0 -o "$T/bad.png" >/dev/null 2>&1; [ $? -eq 2 ] && [ ! -e "$T/bad.png" ] && ok || bad "--preview-every 0 accepted"

# ---- exposure and tone maps ------------------------------------------------------------------
R="render $SRC/scenes/sky-sphere.json --device cpu --res 48x36 --spp 8 --quiet"
"$CAUSTIC" $R -o "$T/lin.exr" >/dev/null && "$CAUSTIC" $R -o "$T/lin.pfm" >/dev/null && "$CAUSTIC" $R -o "$T/plain.png" >/dev/null || bad "sky renders"
"$CAUSTIC" $R -o "$T/clamp.png" --tonemap clamp --exposure 0 >/dev/null && cmp -s "$T/plain.png" "$T/clamp.png" && ok \
  || bad "--tonemap clamp --exposure 0 is not the default image"
for t in aces agx; do
  "$CAUSTIC" $R -o "$T/$t.png" --tonemap $t >/dev/null || bad "--tonemap $t"
  cmp -s "$T/plain.png" "$T/$t.png" && bad "--tonemap $t changes nothing" || ok
  "$CAUSTIC" tonemap "$T/lin.pfm" "$T/$t.again.png" --tonemap $t && cmp -s "$T/$t.png" "$T/$t.again.png" && ok \
    || bad "caustic tonemap $t differs from render --tonemap $t"
  "$CAUSTIC" $R -o "$T/$t.exr" --tonemap $t --exposure 3 >/dev/null
  "$CAUSTIC" compare "$T/lin.exr" "$T/$t.exr" | grep -q "^AE=0 " && ok || bad "--tonemap $t --exposure 3 changed the linear EXR"
done
# the bright sky clips under clamp: many more white pixels than under agx
white() { "$CAUSTIC" compare "$1" "$T/white.png" | sed -E 's/^AE=([0-9]+).*/\1/'; }
"$CAUSTIC" render "$SRC/scenes/sky-sphere.json" --res 48x36 --spp 1 --exposure 30 -o "$T/white.png" --quiet >/dev/null
nw_clamp=$((48 * 36 - $(white "$T/plain.png"))) nw_agx=$((48 * 36 - $(white "$T/agx.png")))
[ $nw_clamp -gt $((nw_agx + 200)) ] && ok || bad "clamp has $nw_clamp white pixels, agx $nw_agx"
"$CAUSTIC" $R -o "$T/dark.png" --exposure -3 >/dev/null && "$CAUSTIC" compare "$T/plain.png" "$T/dark.png" | grep -qv "^AE=0 " && ok \
  || bad "--exposure -3 changes nothing"
for args in "--tonemap filmic" "--tonemap" "--exposure 100" "--exposure x"; do
  "$CAUSTIC" render cornell $args -o "$T/bad.png" >/dev/null 2>"$T/e"; rc=$?
  [ $rc -eq 2 ] && [ ! -e "$T/bad.png" ] && grep -q -- "${args%% *}" "$T/e" && ok || bad "'$args': exit $rc, $(cat "$T/e")"
done
"$CAUSTIC" tonemap --help | grep -q "usage: caustic tonemap" && ok || bad "tonemap --help"
"$CAUSTIC" render --help | grep -q -- "--preview-every" && ok || bad "render --help lacks --preview-every"
"$CAUSTIC" tonemap "$T/lin.exr" "$T/bad.exr" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "tonemap to .exr accepted"
"$CAUSTIC" tonemap "$T/nope.exr" "$T/x.png" >/dev/null 2>"$T/e"; [ $? -eq 2 ] && grep -q nope.exr "$T/e" && ok || bad "tonemap of a missing file"

# ---- AOVs --------------------------------------------------------------------------------------
"$CAUSTIC" render cornell-glass --device cpu --res 24x16 --spp 2 --aov albedo,normal,depth,samples,variance \
  -o "$T/a.png" --quiet >"$T/a.out" 2>"$T/a.err" && ok || bad "--aov render: $(cat "$T/a.err")"
for a in albedo normal depth samples variance; do
  valid "$T/a.$a.png" && ok || bad "--aov: $T/a.$a.png missing or not an image"
done
grep -q "aovs=albedo,normal,depth,samples,variance" "$T/a.out" && ok || bad "--aov: the summary does not list them: $(cat "$T/a.out")"
"$CAUSTIC" render cornell --device cpu --res 24x16 --spp 2 --aov depth -o "$T/b.pfm" --quiet >/dev/null 2>&1 && valid "$T/b.depth.pfm" \
  && [ ! -e "$T/b.albedo.pfm" ] && ok || bad "--aov depth: only b.depth.pfm expected"
"$CAUSTIC" render cornell --device cpu --res 24x16 --spp 2 --aov depth -o "$T/c.exr" --quiet >/dev/null 2>&1 && valid "$T/c.exr" \
  && [ ! -e "$T/c.depth.exr" ] && ok || bad "--aov with an EXR: one file (layers) expected"
for v in "" "albedo,,depth" "colour" "albedo,"; do
  "$CAUSTIC" render cornell --device cpu --res 8x8 --spp 1 --aov "$v" -o "$T/x.png" --quiet >/dev/null 2>"$T/x.err"
  rc=$?
  [ $rc -eq 2 ] && [ ! -e "$T/x.png" ] && grep -q -- "--aov" "$T/x.err" && ok || bad "--aov '$v': exit $rc, $(cat "$T/x.err")"
done
"$CAUSTIC" render cornell --device cpu --res 16x16 --spp 2 --aov albedo --checkpoint "$T/k.ckpt" -o "$T/k.png" --quiet >/dev/null 2>&1
"$CAUSTIC" render cornell --device cpu --res 16x16 --spp 4 --checkpoint "$T/k.ckpt" --resume -o "$T/k2.png" --quiet \
  >/dev/null 2>"$T/k.err"; rc=$?
[ $rc -ne 0 ] && grep -q "AOV" "$T/k.err" && ok || bad "resume without the checkpoint's AOVs: exit $rc, $(cat "$T/k.err")"
"$CAUSTIC" render cornell --device cpu --res 16x16 --spp 4 --aov albedo --checkpoint "$T/k.ckpt" --resume -o "$T/k3.png" \
  --quiet >/dev/null 2>"$T/k.err" && valid "$T/k3.albedo.png" && ok || bad "resume with the same AOVs: $(cat "$T/k.err")"

# ---- denoise -----------------------------------------------------------------------------------
CAUSTIC_OIDN_LIB=none "$CAUSTIC" render cornell --device cpu --res 32x32 --spp 2 --denoise -o "$T/d.png" --quiet \
  >"$T/d.out" 2>"$T/d.err"; rc=$?
[ $rc -eq 0 ] && valid "$T/d.png" && [ ! -e "$T/d.denoised.png" ] && ok || bad "--denoise without OIDN: exit $rc"
[ "$(grep -c "Open Image Denoise" "$T/d.err")" = 1 ] && ok || bad "--denoise without OIDN should say so once: $(cat "$T/d.err")"
if "$CAUSTIC" render cornell --device cpu --res 32x32 --spp 2 --denoise -o "$T/e.exr" --quiet >"$T/e.out" 2>"$T/e.err"; then
  if grep -q "denoised=$T/e.denoised.exr" "$T/e.out"; then
    valid "$T/e.exr" && valid "$T/e.denoised.exr" && ok || bad "denoised EXR"
    grep -q "denoise_guides=albedo,normal" "$T/e.out" && ok || bad "--denoise without its guides: $(cat "$T/e.out")"
    "$CAUSTIC" render cornell --device cpu --res 32x32 --spp 2 --denoise --denoise-guides off -o "$T/f.png" --quiet \
      >"$T/f.out" 2>&1 && grep -q "denoise_guides=none" "$T/f.out" && valid "$T/f.denoised.png" && ok \
      || bad "--denoise-guides off: $(cat "$T/f.out")"
  else
    grep -q "Open Image Denoise" "$T/e.err" && echo "note: Open Image Denoise not installed; denoised output not checked" || bad "--denoise: $(cat "$T/e.out" "$T/e.err")"
  fi
else bad "--denoise render failed: $(cat "$T/e.err")"; fi

echo "test_look: $passes passed, $fails failed"
[ $fails -eq 0 ]
