/* Fuzz target for the glTF 2.0 importer (src/import/gltf.cpp), through its in-memory entry point
 * (JSON text or binary .glb; external files are never read from memory).
 *
 * libFuzzer (clang 14), from the repository root: scripts/fuzz.sh gltf [SECONDS] (the importer
 * compiled with -fsanitize=fuzzer-no-link, linked with every scene source but gltf_stub.c).
 * (tinygltf itself is Debian's shared library, so coverage is that of caustic's importer: accessors,
 * views, node hierarchy, materials, textures, camera and lights.)
 * Standalone (no -fsanitize=fuzzer): without CAUSTIC_LIBFUZZER it builds the driver of driver.h,
 * which ctest runs over fuzz/corpus_gltf.
 *
 * Each input must either load (then every triangle's vertices and material exist and the scene
 * is prepared at a tiny resolution: BVH and light tables) or fail with one line starting with
 * the name and leave the scene as it was; never crash, hang or leak. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    scene *s = scene_create();
    if (!s) return 0;
    char err[1024];
    err[0] = '\0';
    int rc = scene_load_gltf_memory(s, data, size, "fuzz.gltf", xform_identity(), -1, GLTF_CAMERA | GLTF_LIGHTS, err,
                                    sizeof err);
    if (rc == 0) {
        if (s->ntriangles == 0 || s->nmaterials == 0) abort();
        for (size_t t = 0; t < s->ntriangles; ++t) {
            for (int k = 0; k < 3; ++k)
                if (s->triangles[t].v[k] >= s->nvertices) abort();
            if (s->triangles[t].material < 0 || (size_t)s->triangles[t].material >= s->nmaterials) abort();
        }
        for (size_t m = 0; m < s->nmaterials; ++m) {
            const material *mt = &s->materials[m];
            if (mt->albedo_tex >= (int)s->ntextures) abort();
            if ((mt->maps & MAP_NORMAL) && (mt->normal_tex < 0 || mt->normal_tex >= (int)s->ntextures)) abort();
        }
        char perr[512];
        (void)scene_prepare(s, BVH4_WIDTH, perr, sizeof perr);
    } else if (rc != -1 || err[0] == '\0' || strchr(err, '\n') || strncmp(err, "fuzz.gltf: ", 11) != 0 ||
               s->ntriangles != 0 || s->nmaterials != 0 || s->ntextures != 0 || s->npunctual != 0) {
        abort();
    }
    scene_destroy(s);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_gltf"
#include "driver.h"
