/* Fuzz target for fedtrain's checkpoint and model reader (src/fed/checkpoint.c: ckpt_parse), the
 * code that --resume and --model run on a file from disk.
 *
 * libFuzzer: scripts/fuzz.sh fed_ckpt 60 (clang; fuzz/README.md). Without FUZZ_LIBFUZZER the
 * standalone driver replays files (ctest: fuzz_smoke_fed_ckpt).
 *
 * The first byte says whether the trailing CRC is recomputed before parsing (so that mutations
 * reach the field checks instead of stopping at the checksum); the rest is the file. A parse
 * that succeeds must describe a model whose parameter count matches its layer sizes and whose
 * values are finite; a refusal must say why in one line. */
#include "mpi/msgframe.h"
#include "checkpoint.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > (1u << 20)) return 0;
    size_t n = size - 1;
    uint8_t *buf = malloc(n ? n : 1); /* a copy: the reader must not need more than it is given */
    if (!buf) return 0;
    memcpy(buf, data + 1, n);
    if ((data[0] & 1) && n >= 4) {
        uint32_t crc = cmsg_crc32(buf, n - 4);
        memcpy(buf + n - 4, &crc, 4);
    }
    checkpoint c;
    char err[512];
    err[0] = 0;
    if (ckpt_parse(buf, n, "fuzz.ckpt", &c, err, sizeof err) == 0) {
        uint64_t np = 0;
        for (int i = 0; i < c.nlayers; i++) np += (uint64_t)c.sizes[i] * c.sizes[i + 1] + c.sizes[i + 1];
        if (np != c.nparams || !c.params) abort();
        for (size_t i = 0; i < c.nparams; i++)
            if (!isfinite(c.params[i]) || (c.state && !isfinite(c.state[i]))) abort();
        ckpt_free(&c);
    } else if (!err[0] || strchr(err, '\n'))
        abort();
    free(buf);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_fed_ckpt"
#include "driver.h"
