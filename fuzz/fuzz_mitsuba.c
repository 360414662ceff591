/* Fuzz target for the Mitsuba XML reader (src/import/mitsuba_xml.c over libexpat, and
 * src/import/mitsuba.c): the bytes are a scene file whose folder does not exist (files it names
 * take the missing-file paths), loaded with warnings on (not --strict) and two -D parameters; a
 * scene that loads is prepared (BVH, lights).
 *
 * libFuzzer: scripts/fuzz.sh mitsuba [SECONDS] (dictionary fuzz/mitsuba.dict, seeds
 * fuzz/corpus_mitsuba). Without -DCAUSTIC_LIBFUZZER: the standalone driver replays files (ctest's
 * fuzz_smoke_mitsuba).
 *
 * Each input must load, or fail with a one-line message naming the file and no scene. */
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
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    static const char *const defines[] = {"spp=2", "radius=0.5"};
    size_t warnings = 0;
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    o.warn = count_warning;
    o.warn_user = &warnings;
    o.defines = defines;
    o.ndefines = 2;
    scene_source src = {"/nonexistent-caustic-fuzz/fuzz.xml", "/nonexistent-caustic-fuzz", text, size};
    scene *s = NULL;
    char err[512];
    err[0] = '\0';
    int rc = mitsuba_load(&s, &src, &o, err, sizeof err);
    if (rc == 0) {
        if (!s) abort();
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
        scene_destroy(s);
    } else if (s != NULL || err[0] == '\0' || strchr(err, '\n') || !strstr(err, "fuzz")) {
        abort();
    }
    free(text);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_mitsuba"
#include "driver.h"
