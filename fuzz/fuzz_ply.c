/* Fuzz target for the PLY reader (src/import/ply.c), through its in-memory entry point.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_ply.c (every .c file of src/scene, src/import, src/accel, src/image and src/util) \
 *     -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o fuzz_ply
 *   mkdir -p /tmp/fzply && ./fuzz_ply -max_total_time=120 -max_len=4096 /tmp/fzply SEEDS
 * where SEEDS is a folder of small PLY files, e.g. the crafted ones test_ply leaves behind when run
 * with CAUSTIC_PLY_KEEP=1 (it prints their folder).
 * (-DCAUSTIC_LIBFUZZER, as fuzz_scene.c uses, works too.)
 * Standalone (any compiler, no -fsanitize=fuzzer): without FUZZ_LIBFUZZER it builds a driver that
 * runs every file (or every file in every directory) named on the command line once, e.g.
 * `fuzz_ply /work/shared/assets/bunny/ply`.
 *
 * Each input must either load (then the scene is prepared at a tiny resolution, which builds the
 * BVH and light tables over the triangles) or fail with a one-line message; never crash, hang or
 * leak, and never leave triangles behind on failure. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scene_load_ply_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                          char *err, size_t errlen);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    scene *s = scene_create();
    if (!s) return 0;
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    m.albedo = v3s(0.5f);
    m.emission = v3s(1.0f); /* emissive: scene_prepare also builds the light tables over the mesh */
    m.ior = 1.5f;
    if (scene_add_material(s, "m", m) < 0) abort();
    char err[512];
    err[0] = '\0';
    int rc = scene_load_ply_memory(s, data, size, "fuzz.ply", xform_identity(), 0, err, sizeof err);
    if (rc == 0) {
        if (s->ntriangles == 0) abort(); /* success means something to render */
        for (size_t t = 0; t < s->ntriangles; ++t)
            for (int k = 0; k < 3; ++k)
                if (s->triangles[t].v[k] >= s->nvertices) abort();
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
    } else if (rc != -1 || err[0] == '\0' || strchr(err, '\n') || strncmp(err, "fuzz.ply: ", 10) != 0 ||
               s->ntriangles != 0) {
        abort();
    }
    scene_destroy(s);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_ply"
#include "driver.h"
