#!/usr/bin/env bash
# Every way an update can be refused, end to end over MPI: a test client (fed_testclient, rank
# 2, client 1) sends crafted frames next to a real client (rank 1, client 0). Each bad frame is
# refused with its message, the round carries on with what is valid, a duplicate does not
# stall the round, a silent client is skipped at the deadline and comes back afterwards.
source "$(dirname "$0")/lib.sh" "$@"
TESTCLIENT=${5:?path of fed_testclient}
make_data
#      round: 1           2                             3   4    5     6      7   8                  9     10  11     12
plans=(magic,good version,round,unknown,spoof,good dup huge count length crc oversize,kind,good short nan silent good)
"$MPIEXEC" --oversubscribe -np 2 "$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 12 \
    --local-epochs 1 --layers 784,32,10 --round-timeout 6 --quiet : \
    -np 1 "$TESTCLIENT" 600 "${plans[@]}" > "$T/out" 2> "$T/err" &
pid=$!
for _ in $(seq 1 240); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
if kill -0 $pid 2>/dev/null; then kill -9 $pid; cat "$T/err"; fail "the run hung (more than 120 s)"; fi
wait $pid || { cat "$T/err"; fail "the run failed"; }
expect() { grep -q -- "$1" "$T/err" || { cat "$T/err"; fail "no message '$1'"; }; }
expect "round 1: rejected update from rank 2: bad magic number"
expect "round 2: rejected update from rank 2: unsupported protocol version"
expect "round 2: rejected update from client 1: update for round 3, not 2"
expect "round 2: rejected update from rank 2: unknown client id"
expect "round 2: rejected update from rank 2: client 0 is not hosted by rank 2"
expect "rejected update from client 1: duplicate update" # in round 3, or in 4 if it came late
expect "round 4: rejected update from client 1: parameter 0 = 3e+38 exceeds --max-param"
expect "round 5: rejected update from client 1: claims 4294967295 training samples, its shard has 600"
expect "round 6: rejected update from client 1: payload length does not match"
expect "round 7: rejected update from client 1: payload checksum mismatch"
expect "round 8: rejected update from rank 2: frame larger than an update"
expect "round 8: rejected update from client 1: unexpected message kind"
expect "round 9: rejected update from client 1: payload too short"
expect "round 10: rejected update from client 1: contains NaN"
expect "round 11: no answer from client(s) 1 within --round-timeout"
# round,...,accepted($6),rejected($7),...,skipped($15); client 0 is real and always accepted
want=( "" "2 1 0" "2 4 0" "" "" "1 1 0" "1 1 0" "1 1 0" "2 2 0" "1 1 0" "1 1 0" "1 0 1" "2 0 0" )
r34=$(awk -F, 'NR>1 && ($1==3 || $1==4) {a+=$6; j+=$7} END {print a, j}' "$T/run/federated_rounds.csv")
[ "$r34" = "3 2" ] || fail "rounds 3+4: accepted/rejected = '$r34', want '3 2' (dup and huge)"
for r in 1 2 $(seq 5 12); do
    got=$(awk -F, -v r=$r 'NR>1 && $1==r {print $6, $7, $15}' "$T/run/federated_rounds.csv")
    [ "$got" = "${want[$r]}" ] || { cat "$T/run/federated_rounds.csv"; fail "round $r: accepted/rejected/skipped = '$got', want '${want[$r]}'"; }
done
grep -q "^11,1,.*,timeout$" "$T/run/federated_clients.csv" || fail "client 1 not marked timeout in round 11"
grep -q "^12,1,.*,accepted$" "$T/run/federated_clients.csv" || fail "client 1 did not rejoin in round 12"
grep -q "^4,1,.*,rejected$" "$T/run/federated_clients.csv" || fail "client 1 not marked rejected in round 4"
python3 -c "import json,sys,math; s=json.load(open(sys.argv[1])); assert math.isfinite(s['federated_test']) and s['federated_test'] > 0.3, s['federated_test']" \
    "$T/run/summary.json" || fail "poisoned updates reached the model"
echo "rejects: all checks passed"
