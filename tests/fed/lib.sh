# Shared setup for fedtrain's end-to-end tests.
# usage from a test: source lib.sh "$@"   (args: FEDTRAIN MKDATA MPIEXEC SHARED_DATA_DIR)
set -u
FEDTRAIN=$1
MKDATA=$2
MPIEXEC=${3:-mpirun}
SHARED_DATA=${4:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
T=$(mktemp -d /tmp/fedtest.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mpi() { local np=$1; shift; "$MPIEXEC" --oversubscribe -np "$np" "$@"; }
# synthetic MNIST-format data: 1,200 train / 300 test
make_data() { mkdir -p "$T/data" && "$MKDATA" "$T/data" 1200 300 5 || fail "cannot make test data"; }
# value of a top-level number in summary.json
json_num() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
have_python() { command -v python3 >/dev/null; }
