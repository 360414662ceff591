/* Fuzz target for the CIS 565 text scene format (src/import/scene_text.c) and the JSON rules it
 * feeds: the text is converted to JSON, which is loaded with warnings on (not --strict), so the
 * dialect mappings run too; a scene that loads is prepared at a tiny resolution (BVH, lights).
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_text.c (every .c file of src/scene, src/import, src/accel, src/image, src/cpu and src/util) \
 *     -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o /tmp/fuzz_text
 *   mkdir -p /tmp/fzt && /tmp/fuzz_text -max_total_time=180 -dict=fuzz/text.dict /tmp/fzt fuzz/corpus_text
 * Without -DCAUSTIC_LIBFUZZER: the standalone driver replays files (ctest's fuzz_smoke_text).
 *
 * Each input must convert and load, or fail with a one-line message and no scene. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"

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
    char err[512];
    err[0] = '\0';
    /* base_dir that does not exist: FILE keys exercise the missing-file path */
    char *json = scene_text_to_json((const char *)data, size, "fuzz.txt", "/nonexistent-caustic-fuzz", err, sizeof err);
    if (!json) {
        if (err[0] == '\0' || strchr(err, '\n')) abort();
        return 0;
    }
    size_t warnings = 0;
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    o.warn = count_warning;
    o.warn_user = &warnings;
    scene *s = NULL;
    err[0] = '\0';
    int rc = scene_load_json_text_opts(&s, json, "fuzz.txt", "/nonexistent-caustic-fuzz", &o, err, sizeof err);
    if (rc == 0) {
        if (!s) abort();
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
        scene_destroy(s);
    } else if (s != NULL || err[0] == '\0' || strchr(err, '\n')) {
        abort();
    }
    free(json);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_text"
#include "driver.h"
