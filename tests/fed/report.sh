#!/usr/bin/env bash
# fedtrain report draws the PNG figures of a run directory holding central + federated runs.
source "$(dirname "$0")/lib.sh" "$@"
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipping"; exit 77; }
make_data
"$FEDTRAIN" central --data "$T/data" --out "$T/run" --epochs 2 --quiet 2>/dev/null || fail "central failed"
"$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 1 --quiet 2>/dev/null || fail "federated failed"
"$FEDTRAIN" report "$T/run" > "$T/report.out" 2>&1 || { cat "$T/report.out"; fail "report failed"; }
# gnuplot's chatter goes to figures/gnuplot.log: the console gets fedtrain's one line
[ "$(wc -l < "$T/report.out")" -eq 1 ] && grep -q "figures written to" "$T/report.out" \
    || { cat "$T/report.out"; fail "report printed more than its one line"; }
[ -f "$T/run/figures/gnuplot.log" ] || fail "no figures/gnuplot.log"
gp=$T/run/figures/report.gp
# whole-number epoch / round tics, heatmap rows named in words with room for them, digit classes
grep -q "^set xtics 1,1$" "$gp" && grep -q "^set format x '%.0f'$" "$gp" || fail "no integer x tics in report.gp"
grep -q "'federated, transformed test'" "$gp" && grep -q "^set lmargin 27$" "$gp" || fail "heatmap row labels"
grep -q "FEDERATED_TRANSFORMED" "$gp" && fail "upper-case eval names (clipped) in report.gp"
grep -q "'9' 9" "$gp" || fail "digit class tics for a data set that is not Fashion-MNIST"
for f in learning_curves central_loss client_accuracy client_loss clientwise_accuracy clientwise_micro_f1 \
         per_class_f1 per_class_precision per_class_recall confusion_federated_test confusion_central_transformed; do
    [ -s "$T/run/figures/$f.png" ] || fail "missing figures/$f.png"
    head -c 8 "$T/run/figures/$f.png" | od -An -c | grep -q "P   N   G" || fail "$f.png is not a PNG"
done
out=$("$FEDTRAIN" report "$T/nothing" 2>&1); [ $? -eq 2 ] || fail "report on a missing dir should exit 2: $out"
# Fashion-MNIST (its data directory says so): the classes by name
ln -s "$T/data" "$T/fashion-mnist"
"$FEDTRAIN" central --data "$T/fashion-mnist" --out "$T/fm" --epochs 1 --quiet 2>/dev/null || fail "central (fashion) failed"
"$FEDTRAIN" report "$T/fm" 2>/dev/null || fail "report (fashion) failed"
grep -q "'Ankle boot' 9" "$T/fm/figures/report.gp" && grep -q "'T-shirt/top' 0" "$T/fm/figures/report.gp" \
    || fail "no Fashion-MNIST class names in report.gp"
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
