#!/usr/bin/env bash
# Interrupting a render: the first SIGINT says it finishes the pass, the second stops at the next
# safe point (a tile, an iteration); either way the image and the checkpoint are written, the exit
# status is 130, and --resume finishes the very image an uninterrupted render makes. Also: an
# existing checkpoint is not overwritten without --resume or --force, unwritable outputs fail
# before rendering, and a killed run's temporary files are cleaned up.
set -u
C=${1:?usage: test_interrupt.sh path/to/caustic}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { if [ "$1" -eq 0 ]; then echo "ok: $2"; else echo "FAILED: $2" >&2; fail=1; fi; }
# rendering: the first progress line is out (the signal handlers are in place), up to 20 s
rendering() { for i in $(seq 1 200); do grep -q "spp" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# interrupt NAME ARGS...: a render stopped by two SIGINTs, then resumed to the end
interrupt() {
    name=$1; shift
    "$C" render cornell "$@" --checkpoint "$T/$name.ckpt" -o "$T/$name.pfm" >"$T/$name.out" 2>"$T/$name.err" &
    pid=$!
    rendering "$T/$name.err"
    sleep 0.5
    kill -INT $pid
    sleep 0.3
    kill -INT $pid
    start=$(date +%s%N)
    wait $pid
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ $rc -eq 130 ]; check $? "$name: exit 130 after two SIGINTs (got $rc)"
    grep -q "finishing the current pass, press Ctrl-C again to stop now" "$T/$name.err"; check $? "$name: the first Ctrl-C says so"
    [ $ms -lt 5000 ]; check $? "$name: stopped ${ms} ms after the second"
    [ -s "$T/$name.pfm" ] && [ -s "$T/$name.ckpt" ]; check $? "$name: the image and the checkpoint were written"
    grep -q "output=$T/$name.pfm" "$T/$name.out"; check $? "$name: the summary names the image"
    "$C" render cornell "$@" --checkpoint "$T/$name.ckpt" --resume -o "$T/$name-done.pfm" --quiet >/dev/null 2>"$T/$name.err2"
    check $? "$name: --resume finishes it ($(head -c 200 "$T/$name.err2"))"
    "$C" render cornell "$@" -o "$T/$name-ref.pfm" --quiet >/dev/null 2>&1
    cmp -s "$T/$name-done.pfm" "$T/$name-ref.pfm"; check $? "$name: the resumed image is the uninterrupted one"
}
interrupt pt --res 64x48 --spp 3000 --threads 2
interrupt bdpt --res 64x48 --spp 400 --threads 2 --integrator bdpt --device cpu
# an iteration of seconds (the issue's 2000x2000 BDPT; long enough that the first Ctrl-C cannot end
# it before the second arrives): the second Ctrl-C drops the one in flight
interrupt bdpt-long --res 1280x960 --spp 3 --threads 1 --integrator bdpt --device cpu
grep -q "stopping now" "$T/bdpt-long.err"; check $? "bdpt-long: the second Ctrl-C was caught, not fatal"

# a third SIGINT during the writes changes nothing: still exit 130 with both files
"$C" render cornell --res 64x48 --spp 100000 --threads 1 --checkpoint "$T/three.ckpt" -o "$T/three.pfm" >/dev/null 2>"$T/three.err" &
pid=$!
rendering "$T/three.err"
kill -INT $pid; kill -INT $pid; kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && [ -s "$T/three.pfm" ] && [ -s "$T/three.ckpt" ]; check $? "three SIGINTs at once: exit 130 ($rc) with image and checkpoint"

# an existing checkpoint: --resume continues it, --force replaces it, neither is an error
"$C" render cornell --res 16x16 --spp 2 --checkpoint "$T/pt.ckpt" -o "$T/x.png" --quiet >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "exists: continue it with --resume, or replace it with --force" "$T/err"
check $? "an existing checkpoint is not overwritten ($(head -c 200 "$T/err"))"
[ ! -e "$T/x.png" ]; check $? "... and nothing was rendered"
"$C" render cornell --res 16x16 --spp 2 --checkpoint "$T/pt.ckpt" --force -o "$T/x.png" --quiet >/dev/null 2>&1
check $? "--force replaces it"

# outputs that cannot be written fail before the render, and the summary names no such file
start=$(date +%s%N)
"$C" render cornell --res 64x48 --spp 100000 -o /nonexistent/dir/x.png >"$T/out" 2>"$T/err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 2 ] && grep -q "/nonexistent/dir/x.png: cannot write image: directory /nonexistent/dir: No such file" "$T/err" && [ $ms -lt 3000 ]
check $? "-o into a missing directory fails at once (exit $rc, $ms ms: $(head -c 200 "$T/err"))"
! grep -q "output=" "$T/out"; check $? "... and the summary names no output"
"$C" render cornell --res 8x8 --spp 1 --checkpoint /nonexistent/dir/c.ckpt -o "$T/y.png" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cannot write checkpoint" "$T/err"; check $? "a checkpoint in a missing directory fails at once"
mkdir "$T/adir"
"$C" render cornell --res 8x8 --spp 1 -o "$T/adir" >/dev/null 2>"$T/err"
[ $? -eq 2 ]; check $? "an output that is a directory fails at once"

# a killed run's temporary (PATH.tmp.PID of a process that is gone) is removed by the next write;
# one of a live process is left alone
sleep 100 &
live=$!
dead=$(sh -c 'echo $$')
touch "$T/z.png.tmp.$dead" "$T/z.png.tmp.$live"
"$C" render cornell --res 8x8 --spp 1 -o "$T/z.png" --quiet >/dev/null 2>&1
[ ! -e "$T/z.png.tmp.$dead" ] && [ -e "$T/z.png.tmp.$live" ] && [ -s "$T/z.png" ]
check $? "a stale temporary file is removed, a live one kept"
kill $live

# a checkpoint resumes only into the scene that wrote it (its prepared geometry, materials and
# lights are hashed): an edited material or light is refused by name, the scene unchanged resumes
cat >"$T/s.json" <<'EOF'
{"Camera": {"RES": [16, 16], "EYE": [0, 1, 4], "LOOKAT": [0, 1, 0], "FOV": 40},
 "Materials": {"red": {"TYPE": "Diffuse", "COLOR": [0.8, 0.2, 0.2]},
               "lamp": {"TYPE": "Emitting", "COLOR": [1, 1, 1], "EMITTANCE": 5}},
 "Objects": [{"TYPE": "sphere", "MATERIAL": "red", "TRANSLATE": [0, 1, 0]},
             {"TYPE": "sphere", "MATERIAL": "lamp", "TRANSLATE": [0, 3, 0], "SCALE": [0.5, 0.5, 0.5]}]}
EOF
"$C" render "$T/s.json" --res 16x16 --spp 4 --checkpoint "$T/s.ckpt" -o "$T/s.png" --quiet >/dev/null 2>"$T/err"
check $? "a JSON scene renders with a checkpoint ($(head -c 200 "$T/err"))"
sed -e 's/0.8, 0.2, 0.2/0.2, 0.8, 0.2/' "$T/s.json" >"$T/s2.json"
"$C" render "$T/s2.json" --res 16x16 --spp 8 --checkpoint "$T/s.ckpt" --resume -o "$T/s2.png" --quiet >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "s.ckpt: checkpoint was made from another scene (changed: materials)" "$T/err"
check $? "a checkpoint into a scene with another material colour is refused ($(head -c 200 "$T/err"))"
sed -e 's/"EMITTANCE": 5/"EMITTANCE": 9/' "$T/s.json" >"$T/s3.json"
"$C" render "$T/s3.json" --res 16x16 --spp 8 --checkpoint "$T/s.ckpt" --resume -o "$T/s3.png" --quiet >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "another scene (changed: materials" "$T/err"
check $? "another emittance: refused, naming the materials (where emission lives) ($(head -c 200 "$T/err"))"
"$C" render "$T/s.json" --res 16x16 --spp 8 --checkpoint "$T/s.ckpt" --resume -o "$T/s4.png" --quiet >/dev/null 2>"$T/err"
check $? "the same scene resumes ($(head -c 200 "$T/err"))"

# caustic tonemap checks its output before it decodes the input or allocates its strip
"$C" render cornell --res 8x8 --spp 1 -o "$T/tm.pfm" --quiet >/dev/null 2>&1
"$C" tonemap "$T/tm.pfm" /nonexistent/dir/strip.png --tonemap clamp,aces,agx >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "/nonexistent/dir/strip.png: cannot write image" "$T/err"
check $? "tonemap into a missing directory fails before reading its input ($(head -c 200 "$T/err"))"

exit $fail
