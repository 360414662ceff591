#!/bin/sh
# Build one libFuzzer target (clang, ASan + UBSan) and run it for SECONDS, printing libFuzzer's
# final statistics; fuzz/README.md lists the targets and records the results.
#   scripts/fuzz.sh TARGET [SECONDS]     e.g. scripts/fuzz.sh scene 240
# TARGET: scene obj ply vol text mitsuba gltf image checkpoint fed_idx fed_update fed_msgframe fed_ckpt fed_args args serve.
# Binaries and grown corpora go to $FUZZ_DIR (default /tmp/caustic-fuzz); crashes land there as
# crash-* files. Run from the repository root.
set -eu
t=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}
secs=${2:-240}
dir=${FUZZ_DIR:-/tmp/caustic-fuzz}
mkdir -p "$dir/corpus_$t"
san="-g -O1 -fsanitize=fuzzer,address,undefined"
scene_src="$(ls src/scene/*.c src/import/*.c src/accel/*.c src/image/*.c src/util/*.c)" # none calls into src/cpu
scene_libs="-lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lexpat -lm -lpthread"
root=$(pwd)
opts="-print_final_stats=1 -max_total_time=$secs -timeout=30" # a hang is a finding, not a stall
# The scene sources, instrumented once per source tree into an archive that the scene-format
# targets share (rebuilt when a source or header is newer); the archive's gltf_stub.o is not
# pulled in where gltf.o already defines its symbols.
scene_lib() {
    lib="$dir/scene-$(pwd | cksum | cut -d' ' -f1).a"
    if [ ! -f "$lib" ] || [ -n "$(find src include -newer "$lib" -name '*.[ch]' | head -1)" ]; then
        rm -rf "$lib.obj" && mkdir -p "$lib.obj"
        for f in $scene_src; do
            clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined -D_POSIX_C_SOURCE=200809L -DCAUSTIC_HAVE_EXPAT \
                -Isrc -Iinclude -c "$f" -o "$lib.obj/$(echo "$f" | tr / _).o"
        done
        rm -f "$lib" && ar rcs "$lib" "$lib.obj"/*.o
    fi
}
case $t in
scene | obj | ply | vol | text | mitsuba)
    scene_lib
    clang $san -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L -Isrc -Iinclude "fuzz/fuzz_$t.c" "$lib" \
        $scene_libs -o "$dir/fuzz_$t"
    case $t in
    scene) seeds=fuzz/corpus opts="$opts -dict=$root/fuzz/scene.dict" ;;
    ply) seeds=fuzz/corpus_ply opts="$opts -dict=$root/fuzz/ply.dict -max_len=4096" ;;
    vol) seeds=fuzz/corpus_vol opts="$opts -max_len=4096" ;;
    *) seeds=fuzz/corpus_$t opts="$opts -dict=$root/fuzz/$t.dict" ;;
    esac ;;
args)
    # the render command's parser and the -D overrides it hands the scene loader
    scene_lib
    clang $san -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L -Isrc -Iinclude fuzz/fuzz_args.c src/cli/options.c \
        src/cli/args.c "$lib" $scene_libs -o "$dir/fuzz_args"
    seeds=fuzz/corpus_args opts="$opts -dict=$root/fuzz/args.dict -max_len=1024" ;;
gltf)
    clang++ -std=c++17 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -Isrc -Iinclude \
        -c src/import/gltf.cpp -o "$dir/gltf.o"
    # every scene source but the stub that gltf.cpp replaces: textures, materials and the
    # image memory cap the importer charges
    # linked by clang++: UBSan's C++ checks (vptr) need its C++ runtime
    scene_lib
    clang $san -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L -Isrc -Iinclude -c fuzz/fuzz_gltf.c \
        -o "$dir/fuzz_gltf_main.o"
    clang++ $san "$dir/fuzz_gltf_main.o" "$dir/gltf.o" "$lib" -ltinygltf $scene_libs -o "$dir/fuzz_gltf"
    seeds=fuzz/corpus_gltf opts="$opts -dict=$root/fuzz/gltf.dict -max_len=16384" ;;
image)
    clang $san -DFUZZ_LIBFUZZER -D_POSIX_C_SOURCE=200809L -Isrc -Iinclude fuzz/fuzz_image.c \
        src/image/image*.c src/util/file.c src/util/log.c -lpng -ljpeg -ltinyexr -lstb -lz -lm \
        -o "$dir/fuzz_image"
    seeds=fuzz/corpus_image opts="$opts -rss_limit_mb=512" ;;
checkpoint)
    clang $san -DFUZZ_LIBFUZZER -D_GNU_SOURCE -Isrc -Iinclude -Ifuzz fuzz/fuzz_checkpoint.c \
        src/api/checkpoint.c -lz -lm -o "$dir/fuzz_checkpoint"
    seeds=fuzz/corpus_checkpoint ;;
fed_idx)
    clang $san -DFUZZ_LIBFUZZER -Isrc/fed fuzz/fuzz_fed_idx.c src/fed/idx.c -lz -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_fed_idx opts="$opts -rss_limit_mb=2048 -max_len=65536" ;;
fed_update)
    clang $san -DFUZZ_LIBFUZZER -Isrc/fed fuzz/fuzz_fed_update.c src/fed/update.c \
        src/fed/mpi/msgframe.c -lz -lm -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_fed_update opts="$opts -max_len=4096" ;;
fed_ckpt)
    clang $san -DFUZZ_LIBFUZZER -Isrc/fed -Ifuzz fuzz/fuzz_fed_ckpt.c src/fed/checkpoint.c src/fed/fileio.c \
        src/fed/mpi/msgframe.c -lz -lm -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_fed_ckpt opts="$opts -max_len=4096" ;;
fed_args)
    # config_parse and the parsers it calls (partitions, aggregators, layers: OpenBLAS for mlp.c)
    fed="config aggregate dataset mlp train rng idx optim fileio metrics update checkpoint mlp_cuda_stub"
    clang $san -DFUZZ_LIBFUZZER -D_POSIX_C_SOURCE=200809L -Isrc/fed -Ifuzz \
        -I/usr/include/x86_64-linux-gnu/openblas-pthread fuzz/fuzz_fed_args.c \
        $(for f in $fed; do printf 'src/fed/%s.c ' "$f"; done) src/fed/mpi/msgframe.c -lopenblas -lz -lm \
        -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_fed_args opts="$opts -max_len=1024 -close_fd_mask=3" ;;
fed_msgframe)
    clang $san -DFUZZ_LIBFUZZER -Isrc/fed/mpi fuzz/fuzz_fed_msgframe.c src/fed/mpi/msgframe.c -lz \
        -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_fed_msgframe ;;
serve)
    clang $san -DFUZZ_LIBFUZZER -Isrc/serve -Isrc/cli fuzz/fuzz_serve.c src/serve/serve_proto.c \
        -o "$dir/fuzz_$t"
    seeds=fuzz/corpus_serve opts="$opts -max_len=256" ;;
*) echo "scripts/fuzz.sh: unknown target '$t'" >&2; exit 2 ;;
esac
cd "$dir"
# shellcheck disable=SC2086
exec "./fuzz_$t" $opts -artifact_prefix="$dir/$t-" "corpus_$t" "$root/$seeds"
