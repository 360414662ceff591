/* Fuzz target for the OBJ and MTL readers.
 *
 * An input is OBJ text, optionally followed by a line "%%MTL" and MTL text: every `mtllib`
 * statement of the OBJ then reads that MTL text (no file is opened for it). Texture paths in the
 * MTL resolve against a directory that does not exist, so they exercise the missing-texture path.
 * Each input is loaded twice: with the MTL's materials (material < 0) and with a fixed material.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DCAUSTIC_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_obj.c (every .c file of src/scene, src/import, src/accel, src/image and src/util) \
 *     -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o fuzz_obj
 *   mkdir -p /tmp/fzo && ./fuzz_obj -max_total_time=180 /tmp/fzo fuzz/corpus_obj
 * Standalone (any compiler, no -fsanitize=fuzzer): without -DCAUSTIC_LIBFUZZER this file builds a
 * driver that runs every file (or every file in every directory) named on the command line once,
 * e.g. `fuzz_obj fuzz/corpus_obj`: the CI smoke over the seed corpus.
 *
 * Each input must either load (then the scene is prepared at a tiny resolution, which builds the
 * BVH and light tables) or fail with a one-line message; never crash, hang or leak. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/mtl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_once(const char *obj, size_t nobj, const char *mtl, size_t nmtl, int override) {
    scene *s = scene_create();
    if (!s) return;
    material m;
    memset(&m, 0, sizeof m);
    m.albedo_tex = -1;
    m.albedo = v3s(0.5f);
    int mat = scene_add_material(s, "fixed", m);
    obj_options opt;
    memset(&opt, 0, sizeof opt);
    opt.quiet = 1;
    opt.mtl_text = mtl ? mtl : "";
    opt.mtl_size = mtl ? nmtl : 0;
    char err[512];
    err[0] = '\0';
    int rc = scene_load_obj_memory(s, obj, nobj, "fuzz.obj", "/nonexistent-caustic-fuzz", xform_identity(),
                                   override ? mat : -1, &opt, err, sizeof err);
    if (rc == 0) {
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
    } else if (err[0] == '\0' || strchr(err, '\n') || s->ntriangles != 0) {
        abort(); /* a failure explains itself in one line and adds no geometry */
    }
    scene_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    static const char marker[] = "\n%%MTL\n";
    const char *obj = text, *mtl = NULL;
    size_t nobj = size, nmtl = 0;
    for (size_t i = 0; i + sizeof marker - 1 <= size; ++i) {
        if (memcmp(text + i, marker, sizeof marker - 1) == 0) {
            nobj = i + 1;
            mtl = text + i + sizeof marker - 1;
            nmtl = size - (i + sizeof marker - 1);
            break;
        }
    }
    run_once(obj, nobj, mtl, nmtl, 0);
    run_once(obj, nobj, mtl, nmtl, 1);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_obj"
#include "driver.h"
