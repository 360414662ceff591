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
 * (Inf is a legal HDR value), or fails with one line naming the file and leaves the image empty.
 * The 8-bit path of textures (image_load_srgb8) reads the file first: it reserves the output once
 * and writes only inside it, and what it keeps is exactly what image_load decodes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reserved {
    unsigned char *p;
    int w, h, calls;
} reserved;
static unsigned char *reserve(void *ctx, int w, int h) {
    reserved *r = ctx;
    r->calls++;
    r->w = w;
    r->h = h;
    return r->p = malloc((size_t)w * (size_t)h * 3u); /* exactly: ASan catches a write past it */
}

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
    /* the 8-bit path (textures) first: what it keeps must be what image_load decodes */
    reserved r8 = {NULL, 0, 0, 0};
    int w8 = 0, h8 = 0;
    char err8[512] = "";
    int rc8 = image_load_srgb8(path, reserve, &r8, &w8, &h8, err8, sizeof err8);
    if (r8.calls > 1 || (rc8 == 1 && (!r8.p || w8 != r8.w || h8 != r8.h || (long long)w8 * h8 * 3 > (32ll << 20))) ||
        (rc8 == 0 && r8.calls) ||
        (rc8 == -1 && (!err8[0] || strchr(err8, '\n') || strncmp(err8, path, strlen(path)) != 0)) || rc8 < -1 ||
        rc8 > 1) {
        fprintf(stderr, "bad 8-bit load: rc %d, %d reserve calls, '%s'\n", rc8, r8.calls, err8);
        abort();
    }
    image img;
    char err[512] = "";
    int rc = image_load(&img, path, err, sizeof err);
    if (rc8 == 1) { /* the same file as floats: the same size, each value the code's decode */
        const float *lut = image_srgb8_table();
        int same = rc == 0 && img.width == w8 && img.height == h8;
        for (size_t i = 0; same && i < (size_t)w8 * (size_t)h8 * 3u; ++i) same = img.rgb[i] == lut[r8.p[i]];
        if (!same) {
            fprintf(stderr, "8-bit and float loads differ: rc %d, '%s'\n", rc, err);
            abort();
        }
    }
    free(r8.p);
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
