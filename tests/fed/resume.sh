#!/usr/bin/env bash
# A run killed (SIGKILL) after round 2 and resumed gives the same final model, bit for bit,
# as an uninterrupted run; the same for central training. FedAvgM makes the server
# momentum part of the state that must survive.
source "$(dirname "$0")/lib.sh" "$@"
make_data
args=(federated --data "$T/data" --rounds 4 --local-epochs 1 --clients 6 --seed 9
      --aggregator fedavgm --server-momentum 0.7 --quiet)
mpi 3 "$FEDTRAIN" "${args[@]}" --out "$T/full" 2>/dev/null || fail "uninterrupted run failed"
mpi 3 "$FEDTRAIN" "${args[@]}" --out "$T/cut" --kill-after 2 >/dev/null 2>&1 && fail "killed run reported success"
[ -e "$T/cut/federated_model.bin" ] && fail "killed run wrote a final model"
[ "$(tail -n +2 "$T/cut/federated_rounds.csv" | wc -l)" -eq 2 ] || fail "killed run should have logged 2 rounds"
mpi 3 "$FEDTRAIN" "${args[@]}" --out "$T/cut" --resume 2> "$T/err" || { cat "$T/err"; fail "resume failed"; }
grep -q "resuming federated training after round 2" "$T/err" || fail "did not resume from round 2"
cmp "$T/full/federated_model.bin" "$T/cut/federated_model.bin" || fail "resumed federated model differs"
cmp <(cut -d, -f1-7 "$T/full/federated_rounds.csv") <(cut -d, -f1-7 "$T/cut/federated_rounds.csv") \
    || fail "resumed round log differs"
# central
c=(central --data "$T/data" --epochs 4 --seed 4 --quiet)
"$FEDTRAIN" "${c[@]}" --out "$T/cfull" 2>/dev/null || fail "central run failed"
"$FEDTRAIN" "${c[@]}" --out "$T/ccut" --kill-after 1 >/dev/null 2>&1 && fail "killed central run reported success"
"$FEDTRAIN" "${c[@]}" --out "$T/ccut" --resume 2>/dev/null || fail "central resume failed"
cmp "$T/cfull/central_model.bin" "$T/ccut/central_model.bin" || fail "resumed central model differs"
# a different seed must give a different model (the comparison can fail)
"$FEDTRAIN" central --data "$T/data" --epochs 4 --seed 5 --quiet --out "$T/cother" 2>/dev/null
cmp -s "$T/cfull/central_model.bin" "$T/cother/central_model.bin" && fail "seed has no effect"
echo "resume: all checks passed"
