#!/usr/bin/env bash
# Bad input: exit status 2, one message naming the flag or file, and no RUN_DIR left behind.
source "$(dirname "$0")/lib.sh" "$@"
make_data
expect_2() { # expect_2 NEEDLE ARGS...
    local needle=$1; shift
    local out rc
    out=$("$FEDTRAIN" "$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "exit $rc (want 2) for: $* -> $out"
    grep -qF -- "$needle" <<<"$out" || fail "message for '$*' lacks '$needle': $out"
    [ ! -e "$T/run" ] || fail "RUN_DIR created for bad input: $*"
}
expect_2 "unknown command" frobnicate
expect_2 "--lr" central --data "$T/data" --out "$T/run" --lr -1
expect_2 "--lr" central --data "$T/data" --out "$T/run" --lr abc
expect_2 "--batch" central --data "$T/data" --out "$T/run" --batch 0
expect_2 "--epochs" central --data "$T/data" --out "$T/run" --epochs 99999999999
expect_2 "--partition" federated --data "$T/data" --out "$T/run" --partition dirichlet:-2
expect_2 "--aggregator" federated --data "$T/data" --out "$T/run" --aggregator fedsgd
expect_2 "--normalize" central --data "$T/data" --out "$T/run" --normalize bogus
expect_2 "--torch" bench --torch maybe
expect_2 "--device" central --data "$T/data" --out "$T/run" --device gpu
expect_2 "--layers" central --data "$T/data" --out "$T/run" --layers 784,10,11
expect_2 "--layers" central --data "$T/data" --out "$T/run" --layers 100,10
expect_2 "--out" central --data "$T/data"
expect_2 "unknown flag" central --data "$T/data" --out "$T/run" --bogus 1
expect_2 "needs a value" central --data "$T/data" --out "$T/run" --lr
expect_2 "no file matching" central --data "$T" --out "$T/run"
expect_2 "cannot open directory" central --data "$T/nonexistent" --out "$T/run"
# malformed IDX: truncated test images
mkdir -p "$T/bad" && cp "$T"/data/* "$T/bad/"
head -c 5000 "$T/data/t10k-images-idx3-ubyte" > "$T/bad/t10k-images-idx3-ubyte"
expect_2 "t10k-images-idx3-ubyte: truncated" central --data "$T/bad" --out "$T/run"
# garbage instead of labels
echo "not an idx file" > "$T/bad/t10k-images-idx3-ubyte"
expect_2 "not an IDX file" federated --data "$T/bad" --out "$T/run"
# explicit override wins over --data
cp "$T/data/t10k-images-idx3-ubyte" "$T/bad/t10k-images-idx3-ubyte"
expect_2 "missing.idx" central --data "$T/bad" --test-labels "$T/missing.idx" --out "$T/run"
# resume with different settings is refused
"$FEDTRAIN" central --data "$T/data" --out "$T/ok" --epochs 1 --quiet 2>/dev/null || fail "central run failed"
out=$("$FEDTRAIN" central --data "$T/data" --out "$T/ok" --epochs 2 --lr 0.3 --resume 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "different settings" <<<"$out" || fail "resume with other settings: rc $rc: $out"
"$FEDTRAIN" --help >/dev/null 2>&1 || fail "--help should exit 0"
# a run directory holding a finished run is not written over without --force (or --resume)
out=$("$FEDTRAIN" central --data "$T/data" --out "$T/ok" --epochs 1 --quiet 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "already holds a central run.*--force" <<<"$out" || fail "rerun into a finished run: rc $rc: $out"
before=$(cksum < "$T/ok/central_model.bin")
"$FEDTRAIN" central --data "$T/data" --out "$T/ok" --epochs 1 --seed 9 --quiet --force 2>/dev/null || fail "--force rerun failed"
[ "$(cksum < "$T/ok/central_model.bin")" != "$before" ] || fail "--force did not replace the run"
out=$("$FEDTRAIN" --version) && grep -q "^fedtrain [0-9]" <<<"$out" || fail "--version: $out"
echo "cli: all checks passed"
