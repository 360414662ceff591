#!/bin/sh
# Several GPUs in one process (backend_multi) and the GPU tile pass: --device cuda:0,0 (the same
# GPU twice: two renderers, two host threads, one queue) gives the cuda:0 image bit for bit for
# path tracing (and adaptive sampling), the VCM image within float rounding; with two GPUs or
# more, cuda:0,1 and every visible GPU (--device cuda) give it too; under mpirun, ranks on the GPU
# (tile passes, two in flight per rank) give it as well, and a GPU rank beside a CPU rank gives it
# within float rounding; a device that is not there is one clear error. Skips (77) the whole test
# where there is no CUDA device, the two-GPU part where there is one (the option's syntax:
# test_cli.sh).
# usage: test_multi_gpu.sh CAUSTIC [MPIEXEC]
C=$1
MPIRUN=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { if [ "$1" -eq 0 ]; then echo "ok: $2"; else echo "FAILED: $2"; fail=1; fi; }

n=$("$C" devices 2>/dev/null | grep -c '^[0-9]*: ')
if [ "$n" -lt 1 ]; then echo "no CUDA device: skipped"; exit 77; fi

"$C" render cornell --res 8x8 --spp 1 --device cuda:$n -o "$T/x.pfm" --quiet >/dev/null 2>"$T/err"
[ $? -ne 0 ] && grep -q "cuda:$n" "$T/err"; check $? "--device cuda:$n (one past the last) is refused, named"

same() {   # same NAME DEVICES OPTIONS...: --device cuda:0 vs --device DEVICES, bit for bit
    name=$1; dev=$2; shift 2
    "$C" render cornell "$@" --device cuda:0 -o "$T/$name-0.pfm" --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; check 1 "$name cuda:0"; return; }
    "$C" render cornell "$@" --device "$dev" -o "$T/$name-m.pfm" --quiet >"$T/out" 2>"$T/err" || { cat "$T/err"; check 1 "$name $dev"; return; }
    cmp -s "$T/$name-0.pfm" "$T/$name-m.pfm"; check $? "$name: --device $dev gives the cuda:0 image bit for bit"
}
close() {   # close NAME DEVICES OPTIONS...: VCM (atomics on one GPU too): within float rounding
    name=$1; dev=$2; shift 2
    "$C" render cornell "$@" --device cuda:0 -o "$T/$name-0.pfm" --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; check 1 "$name cuda:0"; return; }
    "$C" render cornell "$@" --device "$dev" -o "$T/$name-m.pfm" --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; check 1 "$name $dev"; return; }
    psnr=$("$C" compare "$T/$name-0.pfm" "$T/$name-m.pfm" | sed -n 's/.*PSNR=\([^ ]*\).*/\1/p')
    echo "$name: PSNR $psnr dB"
    [ "$psnr" = inf ] || awk -v p="$psnr" 'BEGIN { exit !(p > 60) }'; check $? "$name: --device $dev within float rounding of cuda:0"
}

# GPU passes are cut by sample count (1, 1, 2, 4, ...), never by time: both renders cut alike
same pt-twice cuda:0,0 --res 96x64 --spp 24
same pt-adaptive-twice cuda:0,0 --res 96x64 --spp 64 --adaptive 0.1 --adaptive-min 16
close vcm-twice cuda:0,0 --res 64x48 --spp 6 --integrator vcm
if [ "$n" -ge 2 ]; then
    same pt-two cuda:0,1 --res 96x64 --spp 24
    same pt-all cuda --res 96x64 --spp 24
    close vcm-two cuda:0,1 --res 64x48 --spp 6 --integrator vcm
else
    echo "one CUDA device: the two-GPU checks skipped"
fi

# distributed path tracing on the GPU: tile passes on each rank
if [ -x "$MPIRUN" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    "$C" render cornell --res 96x64 --spp 24 --device cuda:0 -o "$T/d-1.pfm" --quiet >/dev/null 2>&1
    "$MPIRUN" -np 2 "$C" render cornell --res 96x64 --spp 24 --device cuda:0 -o "$T/d-2.pfm" --quiet >"$T/out" 2>"$T/err"
    if grep -q "built without MPI" "$T/err"; then
        echo "caustic built without MPI: the mpirun check skipped"
    else
        grep -q "ranks=2" "$T/out"; check $? "2 ranks on the GPU render"
        cmp -s "$T/d-1.pfm" "$T/d-2.pfm"; check $? "2 ranks sharing the GPU give the single-GPU image bit for bit"
        # a GPU rank beside a CPU rank (whose rows continue in double): within float rounding
        "$MPIRUN" -np 1 "$C" render cornell --res 96x64 --spp 24 --device cuda:0 -o "$T/d-m.pfm" --quiet : \
            -np 1 "$C" render cornell --res 96x64 --spp 24 --device cpu --threads 1 --quiet >"$T/out" 2>"$T/err"
        psnr=$("$C" compare "$T/d-1.pfm" "$T/d-m.pfm" | sed -n 's/.*PSNR=\([^ ]*\).*/\1/p')
        echo "GPU rank + CPU rank: PSNR $psnr dB"
        [ "$psnr" = inf ] || awk -v p="$psnr" 'BEGIN { exit !(p > 60) }'; check $? "a GPU rank and a CPU rank: the single-GPU image within float rounding"
    fi
fi
exit $fail
