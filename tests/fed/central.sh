#!/usr/bin/env bash
# Central baseline: 80/20 split, per-epoch CSV, summary keys; federated output merges in.
source "$(dirname "$0")/lib.sh" "$@"
make_data
"$FEDTRAIN" central --data "$T/data" --out "$T/run" --epochs 2 2> "$T/err" || { cat "$T/err"; fail "central failed"; }
grep -q "central epoch   2/2" "$T/err" || fail "no progress line"
[ "$(tail -n +2 "$T/run/central_epochs.csv" | wc -l)" -eq 2 ] || fail "expected 2 epoch rows"
python3 - "$T/run/summary.json" <<'PY' || fail "summary check failed"
import json, sys
s = json.load(open(sys.argv[1]))
for k in ["central_test", "central_transformed", "per_transform", "macro_f1", "micro_f1", "weighted_f1", "seconds", "config"]:
    assert k in s, k
assert s["central"]["train_samples"] == 960 and s["central"]["validation_samples"] == 240
assert s["central_test"] > 0.9, s["central_test"]
PY
"$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 1 --local-epochs 1 --quiet 2>/dev/null || fail "federated failed"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert all(k in s for k in ['central_test','central_transformed','federated_test','federated_transformed'])" \
    "$T/run/summary.json" || fail "central and federated results did not merge"
echo "central: all checks passed"
