/* Fuzz target for fedtrain's IDX reader (src/fed/idx.c), raw and gzip, through idx_load_mem.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -Isrc/fed \
 *     fuzz/fuzz_fed_idx.c src/fed/idx.c -lz -o fuzz_fed_idx
 *   mkdir -p /tmp/fzidx && ./fuzz_fed_idx -max_total_time=300 -rss_limit_mb=2048 /tmp/fzidx fuzz/corpus_fed_idx
 * Without FUZZ_LIBFUZZER: the standalone driver (driver.h) replays files once (ctest: fuzz_smoke_fed_idx).
 *
 * The first byte picks the dimension count (images or labels) and an item limit; the rest is
 * the file. Each input either loads, with a buffer of exactly count*rows*cols bytes and at most
 * as many items as declared (and the limit), or fails with a message naming the input; memory
 * stays bounded by what the input can hold (-rss_limit_mb catches a reader that trusts a claim). */
#include "idx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int ndims = data[0] & 1 ? 1 : 3;
    uint32_t limit = (data[0] >> 1) & 7; /* 0 = no limit */
    idx_array a;
    char err[512] = "";
    if (idx_load_mem("fuzz.idx", data + 1, size - 1, ndims, limit, &a, err, sizeof err) == 0) {
        if (a.count == 0 || a.count > a.declared || (limit && a.count > limit) || !a.data ||
            (ndims == 1 && (a.rows != 1 || a.cols != 1)))
            abort();
        size_t n = (size_t)a.count * a.rows * a.cols;
        volatile uint8_t sink = a.data[n - 1]; /* ASan: the buffer holds n bytes */
        (void)sink;
        idx_free(&a);
    } else if (!strstr(err, "fuzz.idx") || strchr(err, '\n')) {
        abort(); /* one line naming the input */
    }
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_fed_idx"
#include "driver.h"
