#!/usr/bin/env bash
# Reproduces docs/RESULTS.md: the paper protocol (30 rounds x 3 local epochs, 6 transformed
# clients, plain FedAvg with SGD lr 0.01; central 30 epochs) and fedtrain's defaults, on the
# shared 8,000/2,000 digits and on Fashion-MNIST, over 3 seeds; then a table (mean ± std).
# usage: scripts/fed-experiments.sh [OUTROOT]   (env: BUILD, DIGITS, FASHION, SEEDS, NP)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUTROOT=${1:-out/fed-experiments}
DIGITS=${DIGITS:-../shared/data}
FASHION=${FASHION:-/usr/share/datasets/fashion-mnist}
SEEDS=${SEEDS:-"1 2 3"}
NP=${NP:-7}
F=$BUILD/fedtrain
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$OUTROOT"
for set in digits fashion; do
    data=$DIGITS; [ $set = fashion ] && data=$FASHION
    [ -d "$data" ] || { echo "skip $set: no $data" >&2; continue; }
    for s in $SEEDS; do
        d=$OUTROOT/$set-paper-s$s
        "$F" central --data "$data" --out "$d" --preset paper --epochs 30 --seed "$s" --quiet
        mpirun --oversubscribe -np "$NP" "$F" federated --data "$data" --out "$d" --preset paper \
            --rounds 30 --local-epochs 3 --seed "$s" --quiet
        d=$OUTROOT/$set-default-s$s
        "$F" central --data "$data" --out "$d" --central-set paper --epochs 30 --seed "$s" --quiet
        mpirun --oversubscribe -np "$NP" "$F" federated --data "$data" --out "$d" \
            --rounds 30 --local-epochs 3 --seed "$s" --quiet
    done
done
python3 - "$OUTROOT" <<'PY'
import glob, json, os, statistics as st, sys
root = sys.argv[1]
keys = ["central_test", "central_transformed", "federated_test", "federated_transformed"]
print("| data | setting | seeds | " + " | ".join(k.upper() for k in keys) + " | federated s |")
print("|---|---|---|" + "---|" * (len(keys) + 1))
for set_ in ["digits", "fashion"]:
    for setting in ["paper", "default"]:
        runs = [json.load(open(p)) for p in sorted(glob.glob(f"{root}/{set_}-{setting}-s*/summary.json"))]
        if not runs: continue
        cells = []
        for k in keys:
            v = [100 * r[k] for r in runs if k in r]
            cells.append(f"{st.mean(v):.2f} ± {st.stdev(v) if len(v) > 1 else 0:.2f}" if v else "-")
        secs = [r["federated"]["seconds"] for r in runs if "federated" in r]
        print(f"| {set_} | {setting} | {len(runs)} | " + " | ".join(cells) + f" | {st.mean(secs):.1f} |")
PY
