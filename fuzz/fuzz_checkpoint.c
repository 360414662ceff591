/* Fuzz target for the checkpoint reader (src/api/checkpoint.c: ckpt_read), the code that decides
 * whether a file on disk may become the start of a render.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -D_GNU_SOURCE -Isrc -Iinclude -Ifuzz \
 *     fuzz/fuzz_checkpoint.c src/api/checkpoint.c -lz -lm -o /tmp/fuzz_checkpoint
 *   mkdir -p /tmp/fzckpt && /tmp/fuzz_checkpoint -max_total_time=300 /tmp/fzckpt fuzz/corpus_checkpoint
 * Without FUZZ_LIBFUZZER: the standalone driver (ctest: fuzz_smoke_checkpoint).
 *
 * The first byte picks the resuming render (adaptive sampling or not, its spp target) and whether
 * the CRCs are recomputed before reading, so that mutations reach the field and value checks
 * instead of stopping at a checksum; the rest is the file. An accepted checkpoint must hold only
 * what a render can produce (finite sums, non-negative lum2, counts within the recorded spp, spp
 * within the target); a refusal must be one line naming the file, with the film left zeroed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "checkpoint_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Makes both CRCs of a (possibly mutated) file right again, where its shape allows. */
static void reseal(uint8_t *file, size_t size) {
    if (size < sizeof(ckpt_header)) return;
    ckpt_header h;
    memcpy(&h, file, sizeof h);
    h.film_crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), file + sizeof h, size - sizeof h);
    h.header_crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), (const Bytef *)&h, offsetof(ckpt_header, header_crc));
    memcpy(file, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    ckpt_settings want;
    fixture_settings(&want, mode & 1);
    const int spp_target = (mode & 2) ? FIXTURE_SPP : FIXTURE_SPP / 2;
    uint8_t *file = malloc(size);
    if (!file) return 0;
    memcpy(file, data + 1, size - 1);
    if (mode & 4) reseal(file, size - 1);
    FILE *f = fmemopen(file, size - 1 ? size - 1 : 1, "rb");
    if (!f) abort();
    if (size == 1) fgetc(f); /* an empty file: fmemopen cannot open 0 bytes */
    enum { N = FIXTURE_W * FIXTURE_H };
    double sum[3 * N], lum2[N];
    uint32_t count[N];
    for (int i = 0; i < N; ++i) sum[3 * i] = sum[3 * i + 1] = sum[3 * i + 2] = lum2[i] = 9.0, count[i] = 9;
    kfilm film = {.sum = sum, .count = count, .lum2 = lum2, .width = FIXTURE_W, .height = FIXTURE_H};
    ckpt_state st;
    char err[512] = "";
    int rc = ckpt_read(f, "fuzz.ckpt", &want, spp_target, &film, &st, err, sizeof err);
    fclose(f);
    if (rc == 0) {
        if (st.spp_done < 0 || st.spp_done > spp_target || st.spp_done > st.spp_target || !isfinite(st.seconds) ||
            st.seconds < 0.0)
            abort();
        for (int i = 0; i < N; ++i) {
            if (!isfinite(sum[3 * i]) || !isfinite(sum[3 * i + 1]) || !isfinite(sum[3 * i + 2]) || !isfinite(lum2[i]) ||
                lum2[i] < 0.0 || count[i] > (uint32_t)st.spp_target)
                abort();
            if (!(mode & 1) && count[i] < (uint32_t)st.spp_done) abort();
        }
    } else {
        if (rc != -1 || !err[0] || strchr(err, '\n') || strncmp(err, "fuzz.ckpt: ", 11) != 0) abort();
        for (int i = 0; i < N; ++i) /* a refused film is not half-loaded */
            if ((sum[3 * i] != 0.0 && sum[3 * i] != 9.0) || (count[i] != 0 && count[i] != 9)) abort();
    }
    free(file);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_checkpoint"
#include "driver.h"
