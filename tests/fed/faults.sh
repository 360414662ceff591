#!/usr/bin/env bash
# Corrupted client updates (NaN, Inf, wrong size, bad checksum) are rejected and logged;
# the round goes on with the other clients.
source "$(dirname "$0")/lib.sh" "$@"
make_data
check_fault() { # KIND CLIENT MESSAGE
    rm -rf "$T/run"
    mpi 4 "$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 1 --clients 6 \
        --inject-fault "$1:$2" --quiet 2> "$T/err" || { cat "$T/err"; fail "$1: run failed"; }
    grep -q "$3" "$T/err" || { cat "$T/err"; fail "$1: no rejection message '$3'"; }
    awk -F, 'NR>1 && ($6!=5 || $7!=1) {bad=1} END {exit bad}' "$T/run/federated_rounds.csv" \
        || fail "$1: expected 5 accepted and 1 rejected per round"
    grep -q "^1,$2,.*,rejected" "$T/run/federated_clients.csv" || [ "$1" = checksum ] \
        || fail "$1: client row not marked rejected"
    python3 -c "import json,sys,math; s=json.load(open(sys.argv[1])); assert math.isfinite(s['federated_test'])" \
        "$T/run/summary.json" || fail "$1: summary not finite"
}
check_fault nan 1 "rejected update from client 1: contains NaN"
check_fault inf 4 "rejected update from client 4: contains Inf"
check_fault size 2 "rejected update from client 2: wrong number of parameters"
check_fault checksum 5 "payload checksum mismatch"
# robust combinations run end to end and are recorded in the summary
for robust in median trimmed:0.2; do
    rm -rf "$T/run"
    mpi 4 "$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 1 --clients 6 \
        --robust $robust --clip-norm 5 --quiet 2> "$T/err" || { cat "$T/err"; fail "--robust $robust: run failed"; }
    python3 -c "import json,sys,math; s=json.load(open(sys.argv[1])); c=s['federated']['config']; \
assert math.isfinite(s['federated_test']) and s['federated_test'] > 0.3 and c['robust'] == sys.argv[2].split(':')[0] and c['clip_norm'] == 5" \
        "$T/run/summary.json" "$robust" || fail "--robust $robust: summary"
done
echo "faults: all checks passed"
