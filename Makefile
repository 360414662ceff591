# Thin wrapper around CMake. The two commands a new user needs: `make demo` and `make test`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps oidn build install demo test test-asan demo-fed bench fuzz clean

all: build

deps:
	@scripts/deps.sh

# Open Image Denoise (--denoise) again after a failed download (deps remembers a failure)
oidn:
	@scripts/fetch-oidn.sh --retry

# build/Makefile, not CMakeCache.txt: a configure that failed leaves the cache behind, and the
# next make must configure again rather than build nothing
$(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# The library (libcaustic.a, caustic_* symbols only), caustic.h, caustic.pc and the CLI under PREFIX.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A clean first image in seconds: 32 spp denoised by Open Image Denoise (out/cornell.denoised.png;
# the noisy out/cornell.png is kept, and both are named at the end).
demo: build
	@mkdir -p out
	$(BUILD)/caustic render cornell -o out/cornell.png --spp 32 --denoise

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Unit tests and fedtrain's end-to-end MPI tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer (CI runs this too); leaks are suppressed only inside Open MPI and
# OpenBLAS (tests/fed/lsan.supp).
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DCAUSTIC_SANITIZE=ON -DCAUSTIC_CUDA=OFF $(CMAKE_ARGS)
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
