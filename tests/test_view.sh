#!/bin/sh
# caustic view under Xvfb (CPU): scripted input moves the camera; the frame the viewer saves, and a
# screenshot of its window, equal an offline render of the camera it wrote at the same spp (the
# readout drawn over the top-left corner, changing nothing below it, until the o key hides it); a
# missing font is said once and the viewer runs on; resizing,
# every integrator, the display toggles and closing through real X events (xdotool) do not crash;
# ? and F1 toggle the key help; h without --adaptive explains itself; the denoiser label is honest;
# no display exits 2; a bad input script is refused with FILE:LINE. Skipped (77) where caustic has
# no window (built without SDL2) or Xvfb is missing. Usage: test_view.sh CAUSTIC
set -u
CAUSTIC=$1
if [ -z "${CAUSTIC_TEST_IN_XVFB:-}" ]; then
    command -v xvfb-run >/dev/null 2>&1 || { echo "test_view: SKIP: xvfb-run not installed (make deps)"; exit 77; }
    if env -u DISPLAY -u WAYLAND_DISPLAY "$CAUSTIC" view cornell 2>&1 | grep -q "built without SDL2"; then
        echo "test_view: SKIP: caustic was built without SDL2"
        exit 77
    fi
    CAUSTIC_TEST_IN_XVFB=1 exec xvfb-run -a -s "-screen 0 1024x768x24" "$0" "$@"
fi
T=$(mktemp -d /tmp/caustic_view_XXXXXX)
trap 'rm -rf "$T"' EXIT
passes=0 fails=0
ok() { passes=$((passes + 1)); }
bad() { fails=$((fails + 1)); echo "test_view: FAIL: $*" >&2; }
cd "$T" || exit 1
V="$CAUSTIC view cornell --device cpu --threads 2 --res 96x72"

# no display: exit 2 and say so, before rendering anything
env -u DISPLAY -u WAYLAND_DISPLAY $V > out 2> err
[ $? -eq 2 ] && grep -q "no display" err && ok || bad "without a display: $(cat err)"

# a bad script line is named
printf 'frames 2\ndrag sideways 1 2\n' > bad.txt
$V --input-script bad.txt > out 2> err
[ $? -eq 2 ] && grep -q "bad.txt:2:" err && ok || bad "bad input script: $(cat err)"

# a FIFO as the script is refused before anything opens (it would block for ever)
mkfifo fifo.txt
timeout 20 $V --input-script fifo.txt > out 2> err
[ $? -eq 2 ] && grep -q "fifo.txt: cannot read the input script: not a regular file" err && ok || bad "FIFO input script: $(cat err)"

# scripted orbit, pan and zoom, then 16 spp: save the frame and the camera
cat > move.txt <<'EOF'
frames 2
drag left 30 -8 3     # orbit
drag right 6 4        # pan
wheel 2               # zoom in
hold w 2              # fly forward
spp 16
key p
key c
quit
EOF
$V --spp 16 -o v --input-script move.txt > out 2> err || bad "scripted viewer: $(cat err)"
[ -s v.000.png ] && [ -s v.000.exr ] && [ -s v.camera.json ] && ok || bad "the viewer saved nothing: $(cat out err)"
grep -q '"EYE": \[0, 5, 10.5\]' v.camera.json && bad "the camera did not move: $(cat v.camera.json)" || ok
# the same camera and spp offline (the viewer traces path tracing with --adaptive-depth's schedule)
"$CAUSTIC" render cornell --camera v.camera.json --spp 16 --adaptive-depth --device cpu --threads 2 --quiet \
    -o off.png > /dev/null 2> err || bad "offline render: $(cat err)"
"$CAUSTIC" render cornell --camera v.camera.json --spp 16 --adaptive-depth --device cpu --threads 2 --quiet \
    -o off.exr > /dev/null 2> err || bad "offline render: $(cat err)"
"$CAUSTIC" compare off.png v.000.png | grep -q "^AE=0 " && ok || bad "viewer PNG vs offline: $("$CAUSTIC" compare off.png v.000.png)"
"$CAUSTIC" compare off.exr v.000.exr | grep -q "^AE=0 " && ok || bad "viewer EXR vs offline: $("$CAUSTIC" compare off.exr v.000.exr)"

# the window shows that frame: a screenshot of it equals the offline render
if command -v xdotool >/dev/null 2>&1 && command -v import >/dev/null 2>&1; then
    printf 'spp 16\nkey p\nframes 1000000\n' > still.txt
    $V --spp 16 -o w --camera v.camera.json --input-script still.txt > wout 2> werr &
    pid=$!
    i=0
    while [ ! -s w.000.png ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
    sleep 0.5
    WID=$(xdotool search --name "caustic view" | head -n 1)
    if [ -n "$WID" ] && import -window "$WID" shot.png 2> err; then
        if grep -q "no on-screen readout" werr; then
            echo "test_view: no readout ($(cat werr)): readout checks skipped"
        else
            # the readout (on by default) covers the top-left corner: the screenshot differs there
            # and equals the offline render below it (the 20 bottom rows)
            "$CAUSTIC" compare shot.png off.png | grep -q "^AE=0 " && bad "no readout drawn over the frame" || ok
            convert shot.png -crop 96x20+0+52 +repage shot_low.png && convert off.png -crop 96x20+0+52 +repage off_low.png &&
                "$CAUSTIC" compare shot_low.png off_low.png | grep -q "^AE=0 " && ok ||
                bad "below the readout, screenshot vs offline: $("$CAUSTIC" compare shot_low.png off_low.png)"
            xdotool key --window "$WID" o # readout off
            sleep 0.7
            import -window "$WID" shot.png 2> err || bad "second screenshot: $(cat err)"
        fi
        "$CAUSTIC" compare shot.png off.png | grep -q "^AE=0 " && ok || bad "screenshot vs offline: $("$CAUSTIC" compare shot.png off.png)"
        if ! grep -q "no on-screen readout" werr; then
            # ? (shift+/) draws the key help over the frame, down to its bottom rows; F1 hides it
            xdotool key --window "$WID" question
            sleep 0.7
            import -window "$WID" help.png 2> err || bad "help screenshot: $(cat err)"
            convert help.png -crop 96x20+0+52 +repage help_low.png &&
                "$CAUSTIC" compare help_low.png off_low.png | grep -q "^AE=0 " &&
                bad "? drew no key help over the frame" || ok
            xdotool key --window "$WID" F1
            sleep 0.7
            import -window "$WID" shot.png 2> err || bad "screenshot after F1: $(cat err)"
            "$CAUSTIC" compare shot.png off.png | grep -q "^AE=0 " && ok || bad "F1 did not hide the key help"
            grep -q "key help on" wout && grep -q "key help off" wout && ok || bad "? and F1: $(cat wout)"
        fi
        # real X events: resize the window, switch integrator twice, close with Escape
        xdotool windowsize "$WID" 120 90
        sleep 0.5
        xdotool key --window "$WID" i
        sleep 0.5
        xdotool key --window "$WID" i
        sleep 0.5
        xdotool key --window "$WID" Escape
        i=0
        while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
        if kill -0 $pid 2>/dev/null; then kill $pid; bad "Escape did not close the viewer"; else
            wait $pid && ok || bad "viewer after X events: $(cat werr)"
            grep -q "integrator bdpt" wout && ok || bad "the i key did not switch integrators: $(cat wout)"
        fi
    else
        kill $pid 2>/dev/null
        bad "no window to take a screenshot of: $(cat err werr)"
    fi
else
    echo "test_view: no xdotool/import: screenshot and X-event checks skipped"
fi

# the readout's font missing: said once, and the viewer runs on (title only)
printf 'frames 2\nkey o\nframes 2\nkey o\nframes 2\nquit\n' > font.txt
CAUSTIC_VIEW_FONT=/nonexistent/mono.ttf $V --input-script font.txt > out 2> err || bad "without a font: $(cat err)"
[ "$(grep -c "no on-screen readout" err)" = 1 ] && grep -q "CAUSTIC_VIEW_FONT" err && ok ||
    bad "a missing font should be said once: $(cat err)"

# resizing, every integrator, the look, heat map and denoiser toggles, a lens: no crash
cat > all.txt <<'EOF'
frames 2
resize 64 48
frames 2
key i
frames 2
key i
frames 2
key i
frames 2
key i
frames 2
key i
frames 2
key i          # back to pt
key .          # a lens
click 32 24    # focus there
frames 2
key h
frames 2
key h
key =
key t
key o
key n          # guided denoiser: the renderer restarts with albedo and normal
spp 16
key n
frames 1
key [
key r
frames 2
key p
quit
EOF
$V --spp 64 -o a --input-script all.txt > out 2> err || bad "resize/integrators/toggles: $(cat err)"
grep -q "integrator vcm" out && grep -q "integrator pt" out && ok || bad "integrator cycle: $(cat out)"
grep -q "focus distance" out && ok || bad "click to focus: $(cat out)"
if grep -q "denoiser:" out; then echo "test_view: no denoiser here: $(grep denoiser: out)"; else
    grep -q "denoiser on (cpu, guided by albedo and normal)" out && grep -q "denoiser off" out && ok ||
        bad "denoiser toggle: $(cat out)"
fi
[ "$(identify -format %wx%h a.000.png 2>/dev/null || echo 64x48)" = 64x48 ] && ok || bad "size after resize: $(identify a.000.png)"

# key help from a script (? and f1), and h without --adaptive: a one-line explanation, not a
# white screen (the heat map stays off); with --adaptive the heat map shows
printf 'frames 2\nkey ?\nframes 2\nkey f1\nframes 2\nkey h\nframes 2\nquit\n' > help.txt
$V -o hh --input-script help.txt > out 2> err || bad "key help script: $(cat err)"
[ "$(grep -c "key help on" out)" = 1 ] && [ "$(grep -c "key help off" out)" = 1 ] && ok || bad "? / f1: $(cat out)"
grep -q "no heat map: it shows where --adaptive E put samples" out && ok || bad "h without --adaptive: $(cat out)"
tail -n 1 out | grep -q "| heat map" && bad "h without --adaptive showed the (white) heat map: $(tail -n 1 out)" || ok
$V --adaptive 0.05 -o ha --input-script help.txt > out 2> err || bad "heat map with --adaptive: $(cat err)"
! grep -q "no heat map" out && tail -n 1 out | grep -q "| heat map" && ok || bad "h with --adaptive: $(cat out)"
# the denoiser's label says what the frame is: denoised once still, raw while the camera moves
printf 'key n\nspp 8\nsleep 0.6\nframes 3\nquit\n' > dstill.txt
printf 'key n\nspp 8\nsleep 0.6\nframes 3\ndrag left 30 0 1\nquit\n' > dmove.txt
$V --spp 8 -o ds --input-script dstill.txt > out 2> err || bad "denoiser, still: $(cat err)"
if grep -q "denoiser:" out; then echo "test_view: no denoiser here: its label not checked"; else
    tail -n 1 out | grep -q "| denoised at [0-9]* spp (" && ok || bad "still view, denoiser on: $(tail -n 1 out)"
    $V --spp 8 -o dm --input-script dmove.txt > out 2> err || bad "denoiser, moving: $(cat err)"
    tail -n 1 out | grep -q "raw, denoiser waits for a still view" && ! tail -n 1 out | grep -q "denoised" && ok ||
        bad "a moved view is labelled denoised: $(tail -n 1 out)"
fi
# a bad sleep is named
printf 'sleep forever\n' > badsleep.txt
$V --input-script badsleep.txt > out 2> err
[ $? -eq 2 ] && grep -q "badsleep.txt:1:" err && ok || bad "bad sleep: $(cat err)"

# the headless benchmark runs the same loop
"$CAUSTIC" view cornell --device cpu --threads 2 --res 64x48 --bench --bench-frames 5 --bench-seconds 0.5 > out 2> err &&
    grep -q "view-bench: .*moving_fps=.*still_Msamples/s=.*render_Msamples/s=" out && ok || bad "--bench: $(cat out err)"
# with pieces of the recipe taken away; in the window (presents timed); with the denoiser
"$CAUSTIC" view cornell --device cpu --threads 2 --res 64x48 --bench --bench-frames 5 --bench-seconds 0.3 \
    --no-gpu-tonemap --one-pass-per-frame --no-adaptive-depth > out 2> err &&
    grep -q "view-bench: .*gpu_tonemap=0 .*passes_sized=0 adaptive_depth=0 .*moving_spp_per_frame=1.00 " out && ok ||
    bad "--bench without the recipe: $(cat out err)"
"$CAUSTIC" view cornell --device cpu --threads 2 --res 64x48 --bench-window --bench-frames 5 --bench-seconds 0.3 > out 2> err &&
    grep -q "view-bench: .*window=1 .*present_ms=.*presents/s=" out && ok || bad "--bench-window: $(cat out err)"
"$CAUSTIC" view cornell --device cpu --threads 2 --res 64x48 --bench-denoise --bench-frames 5 --bench-seconds 0.3 > out 2> err
rc=$?
if grep -q "no denoiser" err; then echo "test_view: no denoiser here: --bench-denoise not checked"; else
    [ $rc -eq 0 ] && grep -q "view-bench: .*denoise_device=cpu denoise_ms=" out && ok ||
        bad "--bench-denoise: $(cat out err)"
fi

echo "test_view: $passes passed, $fails failed"
[ $fails -eq 0 ]
