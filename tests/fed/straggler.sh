#!/usr/bin/env bash
# A client rank that stops answering (SIGSTOP) does not stall the server: with --round-timeout
# the rounds go on without it (logged, 'timeout'/'busy' in the client CSV, counted as skipped),
# and after SIGCONT it rejoins with the newest global model.
source "$(dirname "$0")/lib.sh" "$@"
make_data
rows() { [ -f "$T/run/federated_rounds.csv" ] && awk 'END {print NR - 1}' "$T/run/federated_rounds.csv" || echo 0; }
wait_rows() { # N SECONDS
    for _ in $(seq 1 $((10 * $2))); do [ "$(rows)" -ge "$1" ] && return 0; sleep 0.1; done
    return 1
}
# Rounds take ~40 ms here: after SIGCONT the client must take its stale model, answer and be
# sent a new one before the run ends, so leave it seconds of rounds, not a fraction of one.
ROUNDS=150
mpi 4 "$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds $ROUNDS --local-epochs 1 \
    --layers 784,64,10 --round-timeout 8 --quiet > "$T/out" 2> "$T/err" &
pid=$!
# rank 2 hosts client 1
victim=""
for _ in $(seq 1 300); do
    for p in $(pgrep -f -- "--out $T/run"); do
        { tr '\0' '\n' < /proc/$p/environ | grep -qx "OMPI_COMM_WORLD_RANK=2"; } 2>/dev/null && victim=$p
    done
    [ -n "$victim" ] && break
    sleep 0.1
done
[ -n "$victim" ] || { kill -9 $pid; fail "cannot find rank 2"; }
wait_rows 1 120 || { kill -9 $pid; cat "$T/err"; fail "round 1 did not finish"; }
kill -STOP "$victim"
stopped_at=$(rows)
[ "$stopped_at" -le $((ROUNDS - 8)) ] || { kill -CONT "$victim"; wait $pid; fail "the run was too fast to stop a client in time"; }
if ! wait_rows $((stopped_at + 3)) 90; then
    kill -CONT "$victim"; kill -9 $pid; cat "$T/err"; fail "the server stalled behind a stopped client"
fi
kill -CONT "$victim"
for _ in $(seq 1 240); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
if kill -0 $pid 2>/dev/null; then kill -9 $pid; cat "$T/err"; fail "the run did not end after SIGCONT"; fi
wait $pid || { cat "$T/err"; fail "the run failed"; }
grep -q "no answer from client(s) 1 within --round-timeout 8 s" "$T/err" || { cat "$T/err"; fail "no timeout message"; }
grep -Eq "^[0-9]+,1,.*,(timeout|busy)$" "$T/run/federated_clients.csv" || fail "client 1 never marked timeout/busy"
awk -F, 'NR>1 && $15>0 {s=1} END {exit !s}' "$T/run/federated_rounds.csv" || fail "no round counts a skipped client"
# back after SIGCONT: accepted again in a round after the last one it missed
last_missed=$(awk -F, '$2==1 && ($8=="timeout" || $8=="busy") {r=$1} END {print r}' "$T/run/federated_clients.csv")
awk -F, -v m="$last_missed" '$2==1 && $1>m && $8=="accepted" {ok=1} END {exit !ok}' "$T/run/federated_clients.csv" \
    || { cat "$T/run/federated_clients.csv"; fail "client 1 did not rejoin after round $last_missed"; }
[ "$(rows)" -eq $ROUNDS ] || fail "expected $ROUNDS rounds"
echo "straggler: all checks passed (stopped after round $stopped_at, last missed round $last_missed)"
