#!/bin/sh
# Distributed rendering under mpirun (3 ranks, oversubscribed): the image equals the
# single-process image bit for bit (path tracing, adaptive sampling, BDPT, VCM); frames and
# scenes spread over ranks are each written once; a rank killed
# mid-render stops the job with the rank named and a checkpoint that a run with another number
# of ranks finishes to the same image (faults of Ctrl-C, rank 0 lost, a stopped rank:
# test_dist_faults.sh); the VCM summary's rate is right; a rank lost while the job starts ends the others after
# CAUSTIC_MPI_INIT_TIMEOUT seconds (a bad value is refused). Skips (77) where caustic was built
# without MPI.
# usage: test_dist.sh CAUSTIC MPIEXEC
C=$1
MPIRUN=$2
. "$(dirname "$0")/dist_lib.sh"

[ -x "$MPIRUN" ] || { echo "no mpirun: skipped"; exit 77; }
# a build without MPI refuses to run under mpirun with several ranks
if ! "$MPIRUN" -np 2 "$C" render cornell --res 8x8 --spp 1 -o "$T/probe.pfm" --quiet >"$T/probe.out" 2>&1; then
    grep -q "built without MPI" "$T/probe.out" && { echo "caustic built without MPI: skipped"; exit 77; }
    cat "$T/probe.out"; exit 1
fi
grep -q "ranks=2" "$T/probe.out"; check $? "mpirun -np 2 renders with 2 ranks"

same() {   # same NAME OPTIONS...: single process vs 3 ranks
    name=$1; shift
    "$C" render cornell "$@" --threads 1 -o "$T/$name-1.pfm" --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; check 1 "$name single"; return; }
    "$MPIRUN" -np 3 "$C" render cornell "$@" --threads 1 -o "$T/$name-3.pfm" --quiet >"$T/out" 2>"$T/err" || { cat "$T/err"; check 1 "$name mpirun"; return; }
    grep -q "ranks=3" "$T/out"; check $? "$name: the summary counts 3 ranks"
    cmp -s "$T/$name-1.pfm" "$T/$name-3.pfm"; check $? "$name: 3 ranks give the single-process image bit for bit"
}
same pt --res 80x60 --spp 24
same pt-adaptive --res 80x60 --spp 64 --adaptive 0.1 --adaptive-min 16
same vcm --res 48x40 --spp 5 --integrator vcm --device cpu
# the summary's rate is the samples taken over the time (a distributed VCM unit's count once
# wrapped around: billions of Msamples/s)
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
     END { t = v["time"] + 0; r = v["Msamples/s"] + 0; want = 5 * 48 * 40 / t / 1e6;
           exit !(t > 0 && r > 0.9 * want && r < 1.1 * want) }' "$T/out"
check $? "vcm: the summary's Msamples/s is spp x pixels / time ($(grep -o 'Msamples/s=[^ ]*' "$T/out"))"
same bdpt --res 48x40 --spp 3 --integrator bdpt --device cpu

# AOV planes do not travel in work units yet: refused by name, nothing written
"$MPIRUN" -np 2 "$C" render cornell --res 8x8 --spp 1 --aov albedo -o "$T/aov.png" --quiet >"$T/out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "not supported in distributed renders" "$T/out" && [ ! -e "$T/aov.png" ]
check $? "--aov under mpirun is refused (exit $rc)"

# a checkpoint split across rank counts: 3 ranks stopped by --time-limit, 2 ranks finish
"$C" render cornell --res 64x48 --spp 400 --threads 1 -o "$T/split-1.pfm" --quiet >/dev/null 2>&1
"$MPIRUN" -np 3 "$C" render cornell --res 64x48 --spp 400 --threads 1 --time-limit 1 --checkpoint "$T/split.ckpt" \
    -o "$T/split-a.pfm" --quiet >"$T/out" 2>&1
check $? "3 ranks stop at the time limit and save"
"$MPIRUN" -np 2 "$C" render cornell --res 64x48 --spp 400 --threads 1 --checkpoint "$T/split.ckpt" --resume \
    -o "$T/split-b.pfm" --quiet >"$T/out" 2>&1
check $? "2 ranks resume the checkpoint of 3"
cmp -s "$T/split-1.pfm" "$T/split-b.pfm"; check $? "resumed with another rank count: the single-process image"

# frames: a turntable of 5 frames and two scenes over 3 ranks, each frame rendered by one rank,
# written once, and equal to the same frame rendered alone
"$MPIRUN" -np 3 "$C" render cornell --res 24x24 --spp 2 --frames 5 -o "$T/fr.pfm" --quiet >"$T/fout" 2>"$T/ferr"
check $? "mpirun -np 3 --frames 5"
ok=0
for f in 0 1 2 3 4; do
    name="$T/fr.000$f.pfm"
    [ "$(grep -c -- "-> $name\$" "$T/ferr")" -eq 1 ] || ok=1
    [ "$(grep -c "output=$name" "$T/fout")" -eq 1 ] || ok=1
done
check $ok "every frame was rendered and written by exactly one rank"
[ "$(grep -o 'rank [0-9] of 3' "$T/ferr" | sort -u | wc -l)" -eq 3 ]; check $? "the frames were spread over all 3 ranks"
"$C" render cornell --res 24x24 --spp 2 --orbit 216 -o "$T/fr3.pfm" --quiet >/dev/null 2>&1
cmp -s "$T/fr3.pfm" "$T/fr.0003.pfm"; check $? "frame 3 is the camera turned by 216 degrees"
cmp -s "$T/fr.0000.pfm" "$T/fr.0003.pfm"; [ $? -ne 0 ]; check $? "the camera moves between frames"
(cd "$T" && "$MPIRUN" -np 2 "$C" render cornell cornell-glass --res 16x16 --spp 1 --quiet >"$T/sout" 2>&1)
check $? "two scenes over 2 ranks"
[ -s "$T/cornell.png" ] && [ -s "$T/cornell-glass.png" ]; check $? "each scene's image is written under its name"

# a killed rank: the job stops within seconds naming the rank, the checkpoint keeps the finished
# units, and a run with a different rank count (here one process) finishes the same image
kill_test() {   # kill_test NAME MPIRUN-OPTIONS...
    name=$1; shift
    rm -f "$T/kill.ckpt"
    CAUSTIC_DIST_TIMEOUT=3 "$MPIRUN" "$@" -np 3 "$C" render cornell --res 64x48 --spp 4000 --threads 1 \
        --checkpoint "$T/kill.ckpt" -o "$T/kill.pfm" --quiet >"$T/kout" 2>"$T/kerr" &
    mp=$!
    pid=$(rank_pid $mp 2)
    # kill it once it renders, not inside MPI_Init: a rank lost there leaves the others in Open
    # MPI's collective MPI_Init under --enable-recovery until caustic's watchdog ends them (tested
    # below)
    [ -n "$pid" ] && wait_cpu "$pid"
    start=$(date +%s)
    [ -n "$pid" ] && kill -9 "$pid"
    ( sleep 60; kill -9 $mp 2>/dev/null ) &
    watchdog=$!
    wait $mp
    rc=$?
    kill $watchdog 2>/dev/null
    took=$(( $(date +%s) - start ))
    [ -n "$pid" ]; check $? "$name: found rank 2's process"
    # (with --enable-recovery Open MPI 4.1's mpirun exits 0 whatever the ranks return)
    [ $rc -ne 0 ] || [ "$1" = --enable-recovery ]; check $? "$name: the job fails (exit $rc)"
    [ $took -le 15 ]; check $? "$name: it stops within seconds ($took s)"
    grep -q "rank 2" "$T/kerr" "$T/kout"; check $? "$name: the message names rank 2"
    [ -s "$T/kill.ckpt" ] || [ "${NEED_CKPT:-1}" = 0 ]; check $? "$name: rank 0 saved the checkpoint"
    "$C" render cornell --res 64x48 --spp 4000 --threads 1 --checkpoint "$T/kill.ckpt" --resume \
        -o "$T/kill-done.pfm" --quiet >/dev/null 2>"$T/err"
    check $? "$name: one process resumes it"
    [ -f "$T/kill-ref.pfm" ] || "$C" render cornell --res 64x48 --spp 4000 --threads 1 -o "$T/kill-ref.pfm" --quiet >/dev/null 2>&1
    cmp -s "$T/kill-ref.pfm" "$T/kill-done.pfm"; check $? "$name: the resumed image is the uninterrupted one"
    if [ $fail -ne 0 ]; then cat "$T/kerr"; fi
}
# with --enable-recovery the job goes on without the dead rank: rank 0 notices the silence
kill_test recovery --enable-recovery
# by default mpirun ends the job itself: SIGTERM to every rank, SIGKILL 1 s later (Open MPI 4.1's
# odls_base_sigkill_timeout). Rank 0 stops at the SIGTERM and saves, but on a loaded machine one
# second is not always enough, so here the checkpoint is optional (the last periodic one, or
# none): the job must still stop at once, name the rank, and whatever was saved must resume
# to the right image
NEED_CKPT=0 kill_test default

# a rank lost while the job starts (here rank 2 exits before MPI_Init): under --enable-recovery
# Open MPI leaves the others in its collective MPI_Init for good; the watchdog ends each after
# CAUSTIC_MPI_INIT_TIMEOUT seconds with one line that names it. mpirun exits 0 under
# --enable-recovery whatever the ranks return, so the wrapper reports each rank's status. The
# outer timeout turns a hang into a failure; its 120 s leave a loaded machine ample room.
rm -f "$T/hang.pfm"
# shellcheck disable=SC2016 # the script's variables are the ranks' own
CAUSTIC_MPI_INIT_TIMEOUT=5 timeout -k 10 120 "$MPIRUN" -np 3 --enable-recovery sh -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 2 ]; then exit 1; fi
     "$0" render cornell --res 16x16 --spp 1 --threads 1 -o "$1" --quiet
     echo "rank $OMPI_COMM_WORLD_RANK exited $?"' "$C" "$T/hang.pfm" >"$T/hout" 2>&1
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ]; check $? "a rank lost in MPI_Init: the job ends (exit $rc, not the 120 s timeout)"
grep -q "rank 0 exited 1" "$T/hout" && grep -q "rank 1 exited 1" "$T/hout"
check $? "a rank lost in MPI_Init: the other ranks exit with status 1"
ok=0
for r in 0 1; do
    [ "$(grep -cF "caustic: rank $r: MPI_Init has not returned after 5 s: a process of the job was probably lost while the job started; stopping (CAUSTIC_MPI_INIT_TIMEOUT=SECONDS changes the limit)" "$T/hout")" -eq 1 ] || ok=1
done
check $ok "a rank lost in MPI_Init: each waiting rank says why, once, naming itself"
[ ! -e "$T/hang.pfm" ]; check $? "a rank lost in MPI_Init: no image written"
if [ $fail -ne 0 ]; then cat "$T/hout"; fi

# CAUSTIC_MPI_INIT_TIMEOUT: a bad value is refused by name before MPI starts, a good one renders
for v in soon 0 -3 inf 1e8; do
    CAUSTIC_MPI_INIT_TIMEOUT=$v timeout -k 10 120 "$MPIRUN" -np 2 "$C" render cornell --res 8x8 --spp 1 \
        -o "$T/bad.pfm" --quiet >"$T/out" 2>&1
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ ! -e "$T/bad.pfm" ] &&
        grep -qF "caustic: CAUSTIC_MPI_INIT_TIMEOUT='$v' is not a number of seconds in (0, 1e7]" "$T/out"
    check $? "CAUSTIC_MPI_INIT_TIMEOUT=$v is refused (exit $rc)"
done
CAUSTIC_MPI_INIT_TIMEOUT=120 timeout -k 10 120 "$MPIRUN" -np 2 "$C" render cornell --res 8x8 --spp 1 \
    -o "$T/good.pfm" --quiet >"$T/out" 2>&1 && [ -s "$T/good.pfm" ]
check $? "CAUSTIC_MPI_INIT_TIMEOUT=120 renders"

exit $fail
