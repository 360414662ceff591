/* Fuzz target for the .vol grid reader (src/import/vol.c), through its in-memory entry point, and
 * the grid medium built over what it read (scene_add_grid_medium: the majorant grid).
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -D_POSIX_C_SOURCE=200809L \
 *     -Isrc -Iinclude fuzz/fuzz_vol.c (every .c file of src/scene, src/import, src/accel, src/image and src/util) \
 *     -lcjson -lpng -ljpeg -lz -ltinyexr -lstb -lm -lpthread -o fuzz_vol
 *   mkdir -p /tmp/fzvol && ./fuzz_vol -max_total_time=120 -max_len=4096 /tmp/fzvol fuzz/corpus_vol
 * Standalone (no -fsanitize=fuzzer): runs every file named (or in every directory named) once;
 * ctest's fuzz_smoke_vol replays fuzz/corpus_vol.
 *
 * Each input must either load (then a grid medium is built over a 1-channel grid) or fail with a
 * one-line message starting "fuzz.vol: "; never crash, hang or leak, and never keep voxels on
 * failure. The same bytes go to the NanoVDB (.nvdb) reader as well (src/import/nvdb.c), with the
 * same contract ("fuzz.nvdb: " messages); fuzz/corpus_vol holds .nvdb seeds too. */
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
    char err[512];
    err[0] = '\0';
    vol_header h;
    int rc = vol_load_memory(s, data, size, "fuzz.vol", &h, err, sizeof err);
    if (rc == 0) {
        if (s->nvoxels != h.nvalues || h.offset != 0) abort();
        if (h.channels == 1) {
            medium m;
            memset(&m, 0, sizeof m);
            m.kind = MEDIUM_GRID;
            m.sigma_s = v3s(1.0f);
            m.density_grid = h.offset;
            m.albedo_grid = MEDIUM_NO_GRID;
            memcpy(m.res, h.res, sizeof m.res);
            m.to_grid[0] = m.to_grid[5] = m.to_grid[10] = 1.0f;
            if (scene_add_grid_medium(s, "g", m) < 0) abort(); /* every voxel read is valid */
        }
    } else if (rc != -1 || err[0] == '\0' || strchr(err, '\n') || strncmp(err, "fuzz.vol: ", 10) != 0 ||
               s->nvoxels != 0) {
        abort();
    }
    scene_destroy(s);
    /* the same bytes as a NanoVDB file (src/import/nvdb.c): its grid "density" found, then loaded
     * (the tree walked through checked reads, the majorant grid built), or one message */
    s = scene_create();
    if (!s) return 0;
    size_t off = 0, n = 0;
    err[0] = '\0';
    rc = nvdb_find_grid(data, size, "fuzz.nvdb", NULL, &off, &n, err, sizeof err);
    if (rc == 0) {
        if (off > size || n > size - off) abort();
        medium m;
        memset(&m, 0, sizeof m);
        m.sigma_s = v3s(1.0f);
        rc = nvdb_grid_medium_memory(s, "g", m, data + off, n, "fuzz.nvdb", NULL, err, sizeof err);
        if (rc == 0 && (s->nmedia != 1 || s->media[0].kind != MEDIUM_NANOVDB)) abort();
    }
    if (rc != 0 && (rc != -1 || err[0] == '\0' || strchr(err, '\n') || strncmp(err, "fuzz.nvdb: ", 11) != 0 ||
                    s->nvoxels != 0 || s->nnanovdb != 0 || s->nmedia != 0))
        abort();
    scene_destroy(s);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_vol"
#include "driver.h"
