#!/bin/sh
# A heterogeneous grid against Mitsuba 3 (PyPI mitsuba, volpathmis): a procedural cloud written as
# a .vol grid (tools/make_cloud_vol.py, 32^3), filling an Interface box under a constant
# environment, rendered by caustic from scene JSON and by Mitsuba from the same scene translated by
# tools/mitsuba/caustic_to_mitsuba.py (heterogeneous medium, gridvolume over the same .vol); the
# image means per channel within 0.5 %, with the samples/s of both (CPU, one thread each).
# Opt-in (label mitsuba): skipped (77) with one message where the Python that runs it
# ($CAUSTIC_MITSUBA_PYTHON, else python3) lacks mitsuba or numpy.
#   test_mitsuba_grid.sh CAUSTIC_BINARY SOURCE_DIR
set -u
CAUSTIC=$1
SRC=$2
PY=${CAUSTIC_MITSUBA_PYTHON:-python3}
SPP=${CAUSTIC_MITSUBA_GRID_SPP:-256}
if ! "$PY" -c 'import mitsuba, numpy' 2>/dev/null; then
  echo "test_mitsuba_grid: SKIPPED: $PY has no mitsuba/numpy (pip install mitsuba numpy, or set CAUSTIC_MITSUBA_PYTHON)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" "$SRC/tools/make_cloud_vol.py" "$T/cloud.vol" --res 32 --seed 3 > /dev/null || { echo "FAIL: make_cloud_vol.py"; exit 1; }
cat > "$T/scene.json" <<'JSON'
{"Media": {"cloud": {"TYPE": "Grid", "FILE": "cloud.vol", "ALBEDO": [0.9, 0.7, 0.5], "DENSITY": 1, "SCALE": 40,
                     "G": 0.4, "BOX": [[-1, -1, -1], [1, 1, 1]]}},
 "Materials": {"boundary": {"TYPE": "Interface"}},
 "Environment": {"RGB": [1.0, 0.9, 0.8]},
 "Camera": {"RES": [48, 48], "FOVY": 22, "EYE": [0.4, 0.6, 4.0], "LOOKAT": [0, 0, 0], "UP": [0, 1, 0], "DEPTH": 256},
 "Objects": [{"TYPE": "cube", "MATERIAL": "boundary", "INTERIOR": "cloud", "SCALE": [2, 2, 2]}]}
JSON
start=$(date +%s.%N)
"$CAUSTIC" render "$T/scene.json" --spp "$SPP" --seed 1 --threads 1 --quiet -o "$T/caustic.pfm" > /dev/null 2> "$T/err" \
  || { echo "FAIL: caustic render failed: $(cat "$T/err")"; exit 1; }
end=$(date +%s.%N)
"$PY" "$SRC/tools/mitsuba/caustic_to_mitsuba.py" "$T/scene.json" --spp "$SPP" --variant scalar_rgb \
  --out "$T/mitsuba.npy" > "$T/mi.txt" 2> "$T/err" || { echo "FAIL: mitsuba render failed: $(cat "$T/err")"; exit 1; }
"$PY" - "$T/caustic.pfm" "$T/mitsuba.npy" "$start" "$end" "$SPP" "$T/mi.txt" <<'PY'
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
n = w * h * int(sys.argv[5])
secs = float(sys.argv[4]) - float(sys.argv[3])
mi = open(sys.argv[6]).read().split()
mis = [x for x in mi if x.startswith('Msamples/s=') or x.startswith('cpu_Msamples/s=')]
print('%s grid cloud: caustic %s mitsuba %s: %.3f %% (caustic %.4f Msamples/s incl. load, 1 thread; mitsuba scalar_rgb %s)'
      % ('ok' if ok else 'FAIL', ma, mb, 100 * rel.max(), n / secs / 1e6, '; '.join(mis[-2:]) if mis else '?'))
sys.exit(0 if ok else 1)
PY
