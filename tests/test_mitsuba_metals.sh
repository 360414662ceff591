#!/bin/sh
# Named conductors against Mitsuba 3 (PyPI mitsuba, scalar_rgb): a sphere of Au, Cu and rough Au
# under a constant environment, caustic's image mean against Mitsuba's per channel, within 0.5 %
# (measured: 0.004 % smooth Au, 0.015 % rough Au). Opt-in: skipped (77) with one message where
# the Python that runs it ($CAUSTIC_MITSUBA_PYTHON, else python3) lacks mitsuba or numpy
# (pip install mitsuba numpy; about 60 MB).
#   test_mitsuba_metals.sh CAUSTIC_BINARY SOURCE_DIR
set -u
CAUSTIC=$1
SRC=$2
PY=${CAUSTIC_MITSUBA_PYTHON:-python3}
if ! "$PY" -c 'import mitsuba, numpy' 2>/dev/null; then
  echo "test_mitsuba_metals: SKIPPED: $PY has no mitsuba/numpy (pip install mitsuba numpy, or set CAUSTIC_MITSUBA_PYTHON)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
for case in "Au 0.0" "Cu 0.0" "Au 0.3" "Ag 0.2"; do
  set -- $case
  sed -e "s/\"METAL\": \"Au\"/\"METAL\": \"$1\"/" -e "s/\"ROUGHNESS\": 0.0/\"ROUGHNESS\": $2/" \
    "$SRC/tests/data/materials/metal_au_env.json" > "$T/scene.json"
  "$CAUSTIC" render "$T/scene.json" --spp 128 --seed 1 --quiet -o "$T/caustic.pfm" > /dev/null 2>&1 \
    || { echo "FAIL $case: caustic render failed"; fail=1; continue; }
  "$PY" "$SRC/tools/mitsuba/caustic_to_mitsuba.py" "$T/scene.json" --spp 128 --variant scalar_rgb \
    --out "$T/mitsuba.npy" > /dev/null 2>&1 || { echo "FAIL $case: mitsuba render failed"; fail=1; continue; }
  "$PY" - "$T/caustic.pfm" "$T/mitsuba.npy" "$case" <<'PY' || fail=1
import sys
import numpy as np
with open(sys.argv[1], 'rb') as f:
    kind = f.readline().strip()
    w, h = map(int, f.readline().split())
    scale = float(f.readline())
    a = np.frombuffer(f.read(), dtype='<f4' if scale < 0 else '>f4').reshape(h, w, 3)
b = np.load(sys.argv[2])
ma, mb = a.reshape(-1, 3).mean(0), b.reshape(-1, 3).mean(0)
rel = np.abs(ma - mb) / mb
ok = bool((rel < 0.005).all())
print('%s %s: caustic %s mitsuba %s: %.4f %%' % ('ok' if ok else 'FAIL', sys.argv[3], ma, mb, 100 * rel.max()))
sys.exit(0 if ok else 1)
PY
done
[ $fail = 0 ] && echo "test_mitsuba_metals: all passed" || echo "test_mitsuba_metals: FAILED"
exit $fail
