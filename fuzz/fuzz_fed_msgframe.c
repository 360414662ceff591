/* Fuzz target for the message frames (src/fed/mpi/msgframe.c): cmsg_open and cmsg_peek_header on
 * arbitrary bytes.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -Isrc/fed/mpi \
 *     fuzz/fuzz_fed_msgframe.c src/fed/mpi/msgframe.c -lz -o fuzz_fed_msgframe
 *   mkdir -p /tmp/fzmsg && ./fuzz_fed_msgframe -max_total_time=300 /tmp/fzmsg fuzz/corpus_fed_msgframe
 * Without FUZZ_LIBFUZZER: the standalone driver (ctest: fuzz_smoke_fed_msgframe).
 *
 * Properties: never reads past the input; a frame that opens has a payload of exactly the
 * remaining bytes, and sealing its payload again with the same header fields reproduces it
 * byte for byte; whatever opens also passes cmsg_peek_header with the same fields. */
#include "msgframe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *frame = malloc(size ? size : 1);
    memcpy(frame, data, size);
    cmsg_header h, p;
    uint16_t version = size >= 6 ? (uint16_t)(data[4] | data[5] << 8) : 1; /* any version */
    cmsg_status st = cmsg_open(frame, size, version, &h);
    cmsg_status ps = cmsg_peek_header(frame, size, &p);
    if (st == CMSG_OK) {
        if (ps != CMSG_OK || h.payload_bytes != size - CMSG_HEADER_BYTES || p.seq != h.seq || p.sender != h.sender ||
            p.kind != h.kind || p.version != version)
            abort();
        uint8_t *again = malloc(size);
        memcpy(again + CMSG_HEADER_BYTES, frame + CMSG_HEADER_BYTES, size - CMSG_HEADER_BYTES);
        if (cmsg_seal(again, h.version, h.kind, h.seq, h.sender, h.payload_bytes) != size ||
            memcmp(again, frame, size) != 0)
            abort();
        free(again);
    } else if (!cmsg_status_str(st)[0]) {
        abort();
    }
    free(frame);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_fed_msgframe"
#include "driver.h"
