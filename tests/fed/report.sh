#!/usr/bin/env bash
# fedtrain report draws the PNG figures of a run directory holding central + federated runs.
source "$(dirname "$0")/lib.sh" "$@"
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipping"; exit 77; }
make_data
"$FEDTRAIN" central --data "$T/data" --out "$T/run" --epochs 2 --quiet 2>/dev/null || fail "central failed"
"$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 1 --quiet 2>/dev/null || fail "federated failed"
"$FEDTRAIN" report "$T/run" || fail "report failed"
for f in learning_curves central_loss client_accuracy client_loss clientwise_accuracy clientwise_micro_f1 \
         per_class_f1 per_class_precision per_class_recall confusion_federated_test confusion_central_transformed; do
    [ -s "$T/run/figures/$f.png" ] || fail "missing figures/$f.png"
    head -c 8 "$T/run/figures/$f.png" | od -An -c | grep -q "P   N   G" || fail "$f.png is not a PNG"
done
out=$("$FEDTRAIN" report "$T/nothing" 2>&1); [ $? -eq 2 ] || fail "report on a missing dir should exit 2: $out"
# runs in separate directories, as in the README: each reports on its own, and the federated
# one can take its central baseline from the other directory
"$FEDTRAIN" central --data "$T/data" --out "$T/c" --epochs 1 --quiet 2>/dev/null || fail "central failed"
"$FEDTRAIN" federated --data "$T/data" --out "$T/f" --rounds 1 --local-epochs 1 --quiet 2>/dev/null || fail "federated failed"
"$FEDTRAIN" report "$T/f" || fail "report on a federated-only RUN_DIR failed"
[ -s "$T/f/figures/clientwise_accuracy.png" ] && [ -s "$T/f/figures/client_accuracy.png" ] || fail "federated-only figures missing"
"$FEDTRAIN" report "$T/c" || fail "report on a central-only RUN_DIR failed"
[ -s "$T/c/figures/central_loss.png" ] || fail "central-only figures missing"
"$FEDTRAIN" report "$T/f" --central "$T/c" || fail "report --central failed"
grep -q "$T/c/central_epochs.csv" "$T/f/figures/report.gp" || fail "report --central did not plot the central curve"
[ -s "$T/f/figures/confusion_central_test.png" ] || fail "report --central: no central confusion matrix"
out=$("$FEDTRAIN" report "$T/f" --central "$T/f" 2>&1); [ $? -eq 2 ] || fail "--central without a central run should exit 2: $out"
echo "report: all checks passed"
