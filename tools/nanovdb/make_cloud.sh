#!/bin/sh
# The NanoVDB cloud benchmark scene (issue 37: a cloud of at least 512^3 voxels at 1080p):
#   tools/nanovdb/make_cloud.sh OUTDIR [RES] [BUILD]
# writes OUTDIR/cloud.vol (tools/make_cloud_vol.py, RES^3, default 512), OUTDIR/cloud.nvdb (zero
# voxels inactive: caustic_vol_to_nvdb --sparse from BUILD, default ./build) and OUTDIR/cloud.json
# (make_cloud_vol.py's 1080p scene with the medium read as "TYPE": "NanoVDB" from cloud.nvdb,
# placed where the .vol is by the grid's map). Then: caustic render OUTDIR/cloud.json [--device cuda], caustic view ...
set -e
out=${1:?usage: make_cloud.sh OUTDIR [RES] [BUILD]}
res=${2:-512}
build=${3:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/caustic_vol_to_nvdb" ] || { echo "make_cloud.sh: $build/caustic_vol_to_nvdb not built (needs libopenvdb-dev)" >&2; exit 1; }
mkdir -p "$out"
python3 "$src/tools/make_cloud_vol.py" "$out/cloud.vol" --res "$res" --scene "$out/cloud_grid.json"
"$build/caustic_vol_to_nvdb" "$out/cloud.vol" "$out/cloud.nvdb" --sparse
# the grid's own map places it (BOX would be the active voxels' box, smaller than the .vol's)
python3 - "$out/cloud_grid.json" "$out/cloud.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
m = s["Media"]["cloud"]
m.update(TYPE="NanoVDB", FILE="cloud.nvdb")
m.pop("BOX", None)
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
echo "$out/cloud.json: the cloud as NanoVDB ($out/cloud_grid.json: the same as a dense .vol Grid)"
