#!/usr/bin/env bash
# Smoke run on the real 8,000/2,000 digits in ../shared/data (skipped when absent).
source "$(dirname "$0")/lib.sh" "$@"
[ -n "$SHARED_DATA" ] && [ -e "$SHARED_DATA/mnist-digits-train-images.idx3-ubyte.gz" ] \
    || { echo "shared digits not present: skipping"; exit 77; }
mpi 7 "$FEDTRAIN" federated --data "$SHARED_DATA" --out "$T/run" --rounds 2 --local-epochs 1 --quiet \
    2> "$T/err" || { cat "$T/err"; fail "run failed"; }
cat "$T/err"
python3 - "$T/run/summary.json" <<'PY' || fail "accuracy too low"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["config"]["clients"] == 6
# after 2 short rounds the model is far from done but clearly learning
assert s["federated_test"] > 0.3 and s["federated_transformed"] > 0.3, (s["federated_test"], s["federated_transformed"])
PY
echo "shared_digits: all checks passed"
