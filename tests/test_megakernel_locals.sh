#!/bin/sh
# The path-tracing megakernels keep the shaded material (and the path state) in registers: their
# local memory (the PTX `__local_depot` of every pt_megakernel entry: the traversal's stack lives in
# the traversal function's own frame) stays under BOUND bytes. A material field indexed at run time
# (a per-material table) once moved the whole by-value copy of the material into local memory
# (224 -> 488 bytes in the "all" megakernel, docs/performance-log.md, "the shaded material in local
# memory"): this test fails on such a change before a GPU measures it.
# usage: test_megakernel_locals.sh BOUND PTXDIR VARIANT...  (PTXDIR/megakernel_VARIANT*.ptx: the build
# keeps them, CMakeLists.txt's CAUSTIC_PTX_DIR; or PTX files named instead of variants)
set -u
BOUND=$1
PTXDIR=$2
shift 2
fail=0
for v in "$@"; do
    case "$v" in
    *.ptx) f=$v ;;
    *) f=$(ls "$PTXDIR"/megakernel_"$v"*.ptx 2>/dev/null | head -1) ;;
    esac
    [ -n "$f" ] && [ -f "$f" ] || { echo "FAILED: no PTX of megakernel_$v in $PTXDIR (the build keeps it: nvcc --keep)"; exit 1; }
    awk -v bound="$BOUND" -v file="$(basename "$f")" '
        /\.entry/ { entry = $0; sub(/^.*\.entry[ \t]+/, "", entry); sub(/\(.*$/, "", entry); if (entry ~ /pt_megakernel/) entries++; next }
        /__local_depot[0-9]*\[/ {
            if (entry ~ /pt_megakernel/) {
                n = $0; sub(/^.*__local_depot[0-9]*\[/, "", n); sub(/\].*$/, "", n); seen++
                if (n + 0 > bound) { printf "FAILED: %s: %s has %d bytes of local memory (bound %d)\n", file, entry, n, bound; bad++ }
            }
            entry = ""
        }
        END {
            if (!entries) { printf "FAILED: %s: no pt_megakernel entry\n", file; exit 1 }
            printf "%s: %d pt_megakernel entries (%d with local memory), within %d bytes: %s\n", file, entries, seen, bound, bad ? "no" : "yes"
            exit bad ? 1 : 0
        }' "$f" || fail=1
done
exit $fail
