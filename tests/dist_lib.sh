# What the mpirun tests share (test_dist.sh, test_dist_faults.sh): a temporary directory, the
# environment that lets Open MPI run as root and oversubscribed, check, and finding a rank.
# Sourced with C (caustic) and MPIRUN set.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail=0
check() { if [ "$1" -eq 0 ]; then echo "ok: $2"; else echo "FAILED: $2"; fail=1; fi; }

# rank_pid MPIRUN-PID RANK: the process of that rank (a child of mpirun whose environment says so)
rank_pid() {
    for i in $(seq 1 100); do
        for c in $(pgrep -P "$1"); do
            tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$c"; return; }
        done
        sleep 0.1
    done
}
# wait_cpu PID: until the process has used half a second of CPU time (it renders)
wait_cpu() {
    half=$(( $(getconf CLK_TCK) / 2 ))
    for i in $(seq 1 600); do
        [ "$(awk '{print $14}' "/proc/$1/stat" 2>/dev/null || echo 0)" -ge "$half" ] && return
        sleep 0.1
    done
}

