/* Fuzz target for the image readers (src/image/: PNG via libpng, JPEG via libjpeg, OpenEXR via
 * tinyexr, Radiance HDR via stb_image, PFM), through image_load: the bytes go to a file, the
 * reader is picked by the file's signature as for any texture, environment map or `compare`.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_image.c src/image/image*.c src/util/file.c src/util/log.c \
 *     -lpng -ljpeg -ltinyexr -lz -lm -o /tmp/fuzz_image
 *   mkdir -p /tmp/fzimg && /tmp/fuzz_image -max_total_time=300 -rss_limit_mb=512 /tmp/fzimg fuzz/corpus_image
 * Without FUZZ_LIBFUZZER: the standalone driver (ctest: fuzz_smoke_image). The seeds are written
 * by `test_image_limits --write-seeds fuzz/corpus_image`.
 *
 * The memory cap is 32 MiB here (CAUSTIC_IMAGE_MEMORY), so an input whose header claims a large
 * image must be refused before the reader allocates it; -rss_limit_mb catches one that is not.
 * A load either gives an image of the size it says with every pixel a number that is not NaN
 * (Inf is a legal HDR value), or fails with one line naming the file and leaves the image empty. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) {
        setenv("CAUSTIC_IMAGE_MEMORY", "32M", 1);
        snprintf(path, sizeof path, "/tmp/fuzz_image.%ld", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    image img;
    char err[512] = "";
    int rc = image_load(&img, path, err, sizeof err);
    if (rc == 0) {
        if (img.width <= 0 || img.height <= 0 || !img.rgb || (long long)img.width * img.height * 12 > (32ll << 20))
            abort();
        size_t n = (size_t)img.width * (size_t)img.height * 3u;
        volatile float sink = 0.0f;
        for (size_t i = 0; i < n; ++i) sink += img.rgb[i] * 0.0f; /* every pixel readable (ASan) */
        (void)sink;
        image_free(&img);
    } else if (rc != -1 || !err[0] || strchr(err, '\n') || strncmp(err, path, strlen(path)) != 0 || img.rgb ||
               img.width || img.height) {
        fprintf(stderr, "bad failure: rc %d, '%s'\n", rc, err);
        abort();
    }
    unlink(path);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_image"
#include "driver.h"
