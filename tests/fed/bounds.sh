#!/usr/bin/env bash
# Memory bounded by need: a 1.5 MB gzipped IDX file holding 2,000,000 (zero) images loads only
# the --limit-train samples asked for. A CRC-valid checkpoint with an absurd field is refused.
source "$(dirname "$0")/lib.sh" "$@"
have_python || { echo "python3 missing: skipping"; exit 77; }
make_data
mkdir -p "$T/bomb"
cp "$T/data/"*t10k* "$T/bomb/" 2>/dev/null || cp "$T/data/"*test* "$T/bomb/"
python3 - "$T/bomb" <<'PY' || fail "cannot write the gzip bomb"
import struct, sys, zlib
def gz(path, header, nbytes):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [c.compress(header)]
    z = bytes(1 << 20)
    while nbytes > 0:
        k = min(nbytes, len(z)); out.append(c.compress(z[:k])); nbytes -= k
    out.append(c.flush())
    open(path, 'wb').write(b''.join(out))
n = 2000000
gz(sys.argv[1] + '/train-images-idx3-ubyte.gz', struct.pack('>IIII', 0x803, n, 28, 28), n * 784)
gz(sys.argv[1] + '/train-labels-idx1-ubyte.gz', struct.pack('>II', 0x801, n), n)
PY
python3 - "$FEDTRAIN" "$T" <<'PY' || fail "--limit-train 100 on a 2,000,000-image gzip"
import resource, subprocess, sys
fed, t = sys.argv[1], sys.argv[2]
r = subprocess.run([fed, 'central', '--data', t + '/bomb', '--out', t + '/runb', '--limit-train', '100',
                    '--epochs', '1', '--quiet'], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print('exit %d, peak RSS %.0f MB' % (r.returncode, peak))
if r.returncode != 0: print(r.stderr); sys.exit(1)
if peak > 600: print('peak RSS %.0f MB: the whole file was loaded' % peak); sys.exit(1)
PY
# a checkpoint that passes its CRC but claims 4e9 finished rounds
"$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 1 --local-epochs 1 --clients 2 --quiet 2>/dev/null \
    || fail "federated run failed"
python3 - "$T/run/federated.ckpt" <<'PY' || fail "cannot patch the checkpoint"
import struct, sys, zlib
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
b[12:16] = struct.pack('<I', 4000000000)
b[-4:] = struct.pack('<I', zlib.crc32(bytes(b[:-4])) & 0xffffffff)
open(p, 'wb').write(bytes(b))
PY
out=$("$FEDTRAIN" federated --data "$T/data" --out "$T/run" --rounds 2 --local-epochs 1 --clients 2 --resume 2>&1)
[ $? -eq 2 ] || fail "resume from steps_done=4e9 should exit 2: $out"
grep -q "federated.ckpt: inconsistent checkpoint header: rounds/epochs done out of range" <<<"$out" || fail "message: $out"
echo "bounds: all checks passed"
