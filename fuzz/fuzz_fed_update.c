/* Fuzz target for fedtrain's update decoder (src/fed/update.c: update_accept over
 * src/fed/mpi/msgframe.c), the code that judges every frame a client sends to the server.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -Isrc/fed \
 *     fuzz/fuzz_fed_update.c src/fed/update.c src/fed/mpi/msgframe.c -lz -lm -o fuzz_fed_update
 *   mkdir -p /tmp/fzupd && ./fuzz_fed_update -max_total_time=300 /tmp/fzupd fuzz/corpus_fed_update
 * Without FUZZ_LIBFUZZER: the standalone driver (ctest: fuzz_smoke_fed_update).
 *
 * The first byte picks the sending rank, whether client 1 already answered, a norm bound, and
 * whether the checksums are recomputed before decoding (so that mutations reach the payload
 * rules instead of stopping at the CRC); the rest is the frame (a server with 3 clients on ranks 1..3, round 4, 5 parameters). An accepted update must
 * name a selected client hosted by the sender, carry its exact shard size and finite parameters
 * within the bounds; a refusal must give a reason and may only blame a client that exists. */
#include "mpi/msgframe.h"
#include "update.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const int shard_n[3] = {10, 20, 30};
    static const uint8_t selected[3] = {1, 1, 0};
    uint32_t answered[3] = {0, data[0] & 4 ? 4 : 0, 0};
    static const float global[5] = {0.5f, -0.25f, 0, 1, 2};
    update_rules r = {4,        3,      4,      1 + (data[0] & 3) % 3,     5, shard_n, selected,
                      answered, global, 100.0f, data[0] & 8 ? 50.0f : 0.0f};
    /* a copy: the decoder must not need more than the bytes it is given */
    uint8_t *frame = malloc(size - 1 ? size - 1 : 1);
    memcpy(frame, data + 1, size - 1);
    if ((data[0] & 16) && size - 1 >= CMSG_HEADER_BYTES) {
        uint16_t ver = (uint16_t)(frame[4] | frame[5] << 8), kind = (uint16_t)(frame[6] | frame[7] << 8);
        uint32_t seq, sender;
        memcpy(&seq, frame + 8, 4);
        memcpy(&sender, frame + 12, 4);
        cmsg_seal(frame, ver, kind, seq, sender, size - 1 - CMSG_HEADER_BYTES);
    }
    float dst[5];
    update_meta meta;
    int client, counts;
    const char *why = update_accept(frame, size - 1, &r, dst, &meta, &client, &counts);
    if (client < -1 || client >= 3 || (counts && client < 0)) abort();
    if (!why) {
        if (client < 0 || !counts || !selected[client] || fed_host_rank(client, 4) != r.from_rank ||
            meta.n_samples != (uint32_t)shard_n[client] || meta.nparams != 5 || answered[client] == 4)
            abort();
        for (int i = 0; i < 5; i++)
            if (!isfinite(dst[i]) || fabsf(dst[i]) > r.max_abs) abort();
    } else if (!*why) {
        abort();
    }
    free(frame);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_fed_update"
#include "driver.h"
