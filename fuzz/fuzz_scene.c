/* Fuzz target for the JSON scene loader.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_scene.c (every .c file of src/scene, src/import, src/accel, src/image, src/cpu and
 *     src/util) -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o fuzz_scene   (fuzz/README.md)
 *   mkdir -p /tmp/fz && ./fuzz_scene -max_total_time=60 -dict=fuzz/scene.dict /tmp/fz fuzz/corpus
 * Standalone (any compiler, no -fsanitize=fuzzer): the same file without -DCAUSTIC_LIBFUZZER
 *   builds a driver that runs every file (or every file in every directory) named on the command
 *   line once, e.g. `fuzz_scene fuzz/corpus`: the CI smoke over the seed corpus.
 *
 * Each input must either load (then it is prepared at a tiny resolution, which builds the BVH
 * and light tables) or fail with a one-line message; never crash, hang or leak. */
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

static void check_warning(void *user, const char *msg) {
    (void)user;
    if (!msg[0] || strchr(msg, '\n')) abort(); /* warnings are one non-empty line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the loader takes NUL-terminated text, like scene_load_json_file gives it */
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    scene *s = NULL;
    char err[512];
    err[0] = '\0';
    /* base_dir NULL: relative mesh/texture paths resolve against the working directory. Twice:
     * strict (every dialect mapping an error), then as the CLI loads (mappings warn) */
    for (int strict = 1; strict >= 0; --strict) {
        scene_load_opts o;
        memset(&o, 0, sizeof o);
        o.strict = strict;
        o.warn = check_warning;
        int rc = scene_load_json_text_opts(&s, text, "fuzz.json", NULL, &o, err, sizeof err);
        if (rc == 0) {
            if (!s) abort();
            char perr[512];
            (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
            scene_destroy(s);
            s = NULL;
        } else if (s != NULL || err[0] == '\0' || strchr(err, '\n')) {
            abort(); /* a failure must leave *out NULL and explain itself in one line */
        }
    }
    free(text);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_scene"
#include "driver.h"
