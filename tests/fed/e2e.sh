#!/usr/bin/env bash
# Two federated rounds under mpirun: 1 server + 6 clients, paper partition.
source "$(dirname "$0")/lib.sh" "$@"
make_data
mpi 7 "$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 2 --seed 3 \
    2> "$T/err" || { cat "$T/err"; fail "federated run failed"; }
cat "$T/err"
for f in summary.json federated_rounds.csv federated_clients.csv federated.ckpt federated_model.bin; do
    [ -s "$T/run/$f" ] || fail "missing $f"
done
[ "$(ls "$T/run" | grep -c tmp)" -eq 0 ] || fail "temporary files left behind"
[ "$(tail -n +2 "$T/run/federated_rounds.csv" | wc -l)" -eq 2 ] || fail "expected 2 round rows"
[ "$(tail -n +2 "$T/run/federated_clients.csv" | wc -l)" -eq 12 ] || fail "expected 12 client rows"
grep -q "round   2/2  clients 6/6 ok" "$T/err" || fail "no progress line for round 2"
python3 - "$T/run/summary.json" <<'PY' || fail "summary.json check failed"
import json, sys
s = json.load(open(sys.argv[1]))
for k in ["federated_test", "federated_transformed", "per_transform", "macro_f1", "micro_f1",
          "weighted_f1", "seconds", "config"]:
    assert k in s, k
assert 0.0 <= s["federated_test"] <= 1.0 and 0.0 <= s["federated_transformed"] <= 1.0
assert set(s["per_transform"]) == {"identity", "rot90", "rot180", "rot270", "hflip", "vflip"}
assert s["config"]["clients"] == 6 and s["config"]["mpi_ranks"] == 7
assert s["federated_test"] > 0.25, s["federated_test"]   # chance is 0.1
ev = s["federated"]["evaluations"]["federated_test"]
assert len(ev["confusion"]) == 10 and len(ev["per_class"]) == 10
assert sum(map(sum, ev["confusion"])) == 300
print("summary ok:", s["federated_test"], s["federated_transformed"])
PY
# rounds CSV: 6 accepted, bytes reported
awk -F, 'NR>1 && ($6!=6 || $7!=0 || $13<=0 || $14<=0) {bad=1} END {exit bad}' "$T/run/federated_rounds.csv" \
    || fail "rounds CSV: accepted/rejected/bytes wrong"
# the number of ranks does not change the result (here with client sampling and FedProx)
a=(federated --data "$T/data" --clients 6 --rounds 2 --local-epochs 1 --client-fraction 0.5
   --aggregator fedprox --prox-mu 0.01 --quiet)
mpi 4 "$FEDTRAIN" "${a[@]}" --out "$T/r4" 2>/dev/null || fail "4-rank run failed"
"$FEDTRAIN" "${a[@]}" --out "$T/r1" 2>/dev/null || fail "1-process run failed"
cmp "$T/r4/federated_model.bin" "$T/r1/federated_model.bin" || fail "4 ranks and 1 process disagree"
[ "$(grep -c '^1,' "$T/r4/federated_clients.csv")" -eq 3 ] || fail "client fraction 0.5 should select 3 of 6"
echo "e2e: all checks passed"
