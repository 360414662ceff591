#define _POSIX_C_SOURCE 200809L
/* Checkpoint reader: a valid file loads; every field out of range, a size whose check would
 * overflow (nparams = 2^61), non-finite values and a bad CRC are refused with a message, even
 * when the CRC has been recomputed to match (a CRC proves integrity, not sanity). */
#include "../../src/fed/mpi/msgframe.h"
#include "check.h"
#include "checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    OFF_KIND = 8,
    OFF_STEPS = 12,
    OFF_NLAYERS = 20,
    OFF_SIZES = 24,
    OFF_NP = 60,
    OFF_STATE = 68,
    OFF_ELAPSED = 72,
    OFF_PARAMS = 80
};

static char path[] = "/tmp/fedtest-ckpt-XXXXXX";
static uint8_t good[4096];
static size_t good_n;

static void reseal(uint8_t *b, size_t n) {
    uint32_t crc = cmsg_crc32(b, n - 4);
    memcpy(b + n - 4, &crc, 4);
}

/* Loads b (n bytes); 1 if refused with a message containing `needle`. */
static int refused(const uint8_t *b, size_t n, const char *needle) {
    checkpoint c;
    char err[512] = "";
    int rc = ckpt_parse(b, n, path, &c, err, sizeof err);
    if (rc == 0) {
        ckpt_free(&c);
        fprintf(stderr, "  accepted, expected '%s'\n", needle);
        return 0;
    }
    if (!strstr(err, needle) || !strstr(err, path)) {
        fprintf(stderr, "  message '%s' lacks '%s' or the path\n", err, needle);
        return 0;
    }
    return 1;
}

/* A copy of the good file with a 4- or 8-byte field replaced and the CRC recomputed. */
static int refused_with(size_t off, uint64_t v, size_t width, const char *needle) {
    uint8_t b[4096];
    memcpy(b, good, good_n);
    memcpy(b + off, &v, width); /* little-endian host, like the format */
    reseal(b, good_n);
    return refused(b, good_n, needle);
}

int main(void) {
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    float params[55], state[55];
    for (int i = 0; i < 55; i++) params[i] = 0.01f * (float)i, state[i] = -0.5f;
    checkpoint ck = {CKPT_FEDERATED, 7, 0xABCD, 2, {4, 3, 10}, 55, params, state, 12.5};
    char err[512];
    CHECK(ckpt_save(path, &ck, err, sizeof err) == 0);
    FILE *f = fopen(path, "rb");
    good_n = fread(good, 1, sizeof good, f);
    fclose(f);
    CHECK(good_n == OFF_PARAMS + 2 * 55 * 4 + 4);

    checkpoint c;
    CHECK(ckpt_load(path, &c, err, sizeof err) == 0);
    CHECK(c.steps_done == 7 && c.nparams == 55 && c.params[54] == params[54] && c.state[3] == -0.5f);
    ckpt_free(&c);

    uint8_t b[4096];
    memcpy(b, good, good_n);
    b[100] ^= 1;
    CHECK(refused(b, good_n, "checksum"));
    CHECK(refused(good, 20, "not a fedtrain checkpoint"));
    /* np = 2^61 with state: 4 * 2^61 * 2 wraps to 0 in size_t arithmetic */
    {
        uint8_t h[OFF_PARAMS + 4];
        memcpy(h, good, OFF_PARAMS);
        uint64_t np = 1ull << 61;
        memcpy(h + OFF_NP, &np, 8);
        reseal(h, sizeof h);
        CHECK(refused(h, sizeof h, "inconsistent"));
        np = 1ull << 62;
        uint32_t no = 0;
        memcpy(h + OFF_NP, &np, 8);
        memcpy(h + OFF_STATE, &no, 4);
        reseal(h, sizeof h);
        CHECK(refused(h, sizeof h, "inconsistent"));
    }
    CHECK(refused_with(OFF_STEPS, 4000000000u, 4, "rounds/epochs done out of range"));
    CHECK(refused_with(OFF_KIND, 9, 4, "unknown kind"));
    CHECK(refused_with(OFF_NLAYERS, 0, 4, "layer count"));
    CHECK(refused_with(OFF_NLAYERS, 9, 4, "layer count"));
    CHECK(refused_with(OFF_SIZES + 4, 0, 4, "layer size"));
    CHECK(refused_with(OFF_SIZES + 4, 70000, 4, "layer size"));
    CHECK(refused_with(OFF_SIZES + 12, 5, 4, "layer size")); /* beyond nlayers */
    CHECK(refused_with(OFF_SIZES + 4, 4, 4, "does not match the layer sizes"));
    CHECK(refused_with(OFF_NP, 54, 8, "does not match"));
    CHECK(refused_with(OFF_STATE, 2, 4, "state flag"));
    CHECK(refused_with(OFF_STATE, 0, 4, "file size"));
    double bad = NAN;
    uint64_t bits;
    memcpy(&bits, &bad, 8);
    CHECK(refused_with(OFF_ELAPSED, bits, 8, "elapsed"));
    bad = -1.0;
    memcpy(&bits, &bad, 8);
    CHECK(refused_with(OFF_ELAPSED, bits, 8, "elapsed"));
    float fnan = NAN;
    uint32_t fb;
    memcpy(&fb, &fnan, 4);
    CHECK(refused_with(OFF_PARAMS + 40, fb, 4, "non-finite parameter"));
    CHECK(refused_with(OFF_PARAMS + 55 * 4 + 8, fb, 4, "non-finite optimizer state"));
    unlink(path);
    CHECK_DONE();
}
