# Thin wrapper around CMake. The two commands a new user needs: `make demo` and `make test`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps oidn build install python demo test test-asan demo-fed bench fuzz clean

all: build

deps:
	@scripts/deps.sh

# Open Image Denoise (--denoise) again after a failed download (deps remembers a failure)
oidn:
	@scripts/fetch-oidn.sh --retry

# Without a GPU (CI, a laptop with nvcc), the CUDA code is compiled to PTX only: every kernel still
# goes through nvcc's front end (a compile error fails the build), but ptxas, which takes most of
# the build on a small machine (the megakernel variants), does not run; a driver would JIT the PTX.
# With a GPU (or CMAKE_ARGS naming CMAKE_CUDA_ARCHITECTURES) the build makes sm_90 code as before.
CUDA_ARCH_ARGS := $(if $(findstring CMAKE_CUDA_ARCHITECTURES,$(CMAKE_ARGS)),,$(shell nvidia-smi -L >/dev/null 2>&1 || echo -DCMAKE_CUDA_ARCHITECTURES=90-virtual))

# build/Makefile, not CMakeCache.txt: a configure that failed leaves the cache behind, and the
# next make must configure again rather than build nothing
$(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CUDA_ARCH_ARGS) $(CMAKE_ARGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# The library (libcaustic.a and libcaustic.so, caustic_* symbols only), caustic.h, caustic.pc, the
# CLI, fedtrain and Open Image Denoise under PREFIX. Builds only what it installs (no tests,
# fuzzers or tools: the target install-targets).
PREFIX ?= /usr/local
install: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS) --target install-targets
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Python module into python3's site-packages (pip over pyproject.toml: scikit-build-core runs
# this CMake build). Debian's own python3 refuses pip installs (PEP 668, "externally managed"):
# there the install is made with --break-system-packages; inside a venv it is not needed.
PYTHON ?= python3
python: deps
	@if $(PYTHON) -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) and sys.prefix == sys.base_prefix else 1)'; then \
	  echo "make python: $(PYTHON) is externally managed (PEP 668): pip install --break-system-packages ." >&2; \
	  $(PYTHON) -m pip install --break-system-packages . ; \
	else \
	  $(PYTHON) -m pip install . ; \
	fi

# A clean first image in seconds: 32 spp denoised by Open Image Denoise (out/cornell.denoised.png;
# the noisy out/cornell.png is kept, and both are named at the end).
demo: build
	@mkdir -p out
	$(BUILD)/caustic render cornell -o out/cornell.png --spp 32 --denoise

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Unit tests and fedtrain's end-to-end MPI tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer (CI runs this too); leaks are suppressed only inside Open MPI and
# OpenBLAS (tests/fed/lsan.supp). One ISA: the kernels are the same source per ISA, the dispatch
# is tested by `make test`, and every extra kernel copy costs CI minutes under ASan.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DCAUSTIC_SANITIZE=ON -DCAUSTIC_CUDA=OFF -DCAUSTIC_ISA_DISPATCH=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS) -L 'unit|fed'

demo-fed: build
	scripts/demo-fed.sh

bench: build
	$(BUILD)/caustic bench

# Every libFuzzer target in turn, FUZZ_SECONDS each at low priority (clang; fuzz/README.md)
FUZZ_SECONDS ?= 240
FUZZ_TARGETS ?= scene obj ply text gltf image checkpoint fed_idx fed_update fed_msgframe fed_ckpt fed_args args serve
fuzz:
	@for t in $(FUZZ_TARGETS); do nice scripts/fuzz.sh $$t $(FUZZ_SECONDS) || exit 1; done

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
