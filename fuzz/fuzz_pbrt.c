/* Fuzz target for the pbrt-v4 reader (src/import/pbrt.c, pbrt_lex.c, pbrt_shapes.c,
 * pbrt_spectrum.c): the bytes are a pbrt file in a folder that does not exist (Include, plymesh
 * and image files exercise the missing-file path), read with warnings on (not --strict); a scene
 * that loads is prepared (BVH, light tables).
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_pbrt.c (every .c file of src/scene, src/import, src/accel, src/image, src/cpu and src/util) \
 *     -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o /tmp/fuzz_pbrt
 *   mkdir -p /tmp/fzp && /tmp/fuzz_pbrt -max_total_time=180 -dict=fuzz/pbrt.dict /tmp/fzp fuzz/corpus_pbrt
 * Quicker, with only the reader instrumented (the rest from an ordinary build's libcaustic.a):
 *   clang ... fuzz/fuzz_pbrt.c src/import/pbrt*.c build/libcaustic.a (the same -l list) -ldl -lstdc++
 *   (120 s of that, from the seeds: 157,834 runs, cov 3271, no crash, on the day the reader landed)
 * Without -DCAUSTIC_LIBFUZZER: the standalone driver replays files (ctest's fuzz_smoke_pbrt).
 *
 * Each input must load, or fail with a one-line message and no scene. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"
#include "import/pbrt_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_warning(void *user, const char *msg) {
    if (!msg[0] || strchr(msg, '\n')) abort(); /* warnings are one non-empty line */
    ++*(size_t *)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t warnings = 0;
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    o.warn = count_warning;
    o.warn_user = &warnings;
    scene_source src = {"/nonexistent-caustic-fuzz/fuzz.pbrt", "/nonexistent-caustic-fuzz", text, size};
    scene *s = NULL;
    char err[512];
    err[0] = '\0';
    int rc = pbrt_load(&s, &src, &o, err, sizeof err);
    if (rc == 0) {
        if (!s) abort();
        for (size_t t = 0; t < s->ntriangles; ++t) {
            if (s->triangles[t].material < 0 || (size_t)s->triangles[t].material >= s->nmaterials) abort();
            for (int k = 0; k < 3; ++k)
                if (s->triangles[t].v[k] >= s->nvertices) abort();
        }
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
        scene_destroy(s);
    } else if (s != NULL || err[0] == '\0' || strchr(err, '\n')) {
        abort();
    }
    free(text);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_pbrt"
#include "driver.h"
