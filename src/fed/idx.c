#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Limits well above any MNIST-like set; they reject absurd headers before allocating. */
#define IDX_MAX_COUNT 100000000u
#define IDX_MAX_SIDE 4096u
#define IDX_MAX_BYTES (8ull << 30)

static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Reads up to n bytes; returns bytes read or -1 on a decompression error. */
static long long read_full(gzFile f, uint8_t *dst, size_t n) {
    size_t got = 0;
    while (got < n) {
        size_t want = n - got > (1u << 30) ? (1u << 30) : n - got;
        int r = gzread(f, dst + got, (unsigned)want);
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long long)got;
}

int idx_load(const char *path, int ndims, idx_array *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    fclose(probe);
    gzFile f = gzopen(path, "rb"); /* reads uncompressed files transparently */
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    /* Magic first (2 zero bytes, element type, dimension count), then the dimensions. */
    uint8_t hdr[16];
    size_t hdr_bytes = 4 + 4 * (size_t)ndims;
    long long r = read_full(f, hdr, 4);
    if (r < 0) {
        snprintf(err, errlen, "%s: corrupt gzip stream", path);
        goto fail;
    }
    if (r < 4) {
        snprintf(err, errlen, "%s: truncated IDX header (%lld of %zu bytes)", path, r, hdr_bytes);
        goto fail;
    }
    if (hdr[0] != 0 || hdr[1] != 0) {
        snprintf(err, errlen, "%s: not an IDX file (bad magic %02x%02x%02x%02x)", path, hdr[0],
                 hdr[1], hdr[2], hdr[3]);
        goto fail;
    }
    if (hdr[2] != 0x08) {
        snprintf(err, errlen, "%s: IDX element type 0x%02x is not unsigned byte (0x08)", path,
                 hdr[2]);
        goto fail;
    }
    if (hdr[3] != ndims) {
        snprintf(err, errlen, "%s: IDX file has %d dimensions, expected %d (%s)", path, hdr[3],
                 ndims, ndims == 3 ? "images" : "labels");
        goto fail;
    }
    r = read_full(f, hdr + 4, hdr_bytes - 4);
    if (r < 0) {
        snprintf(err, errlen, "%s: corrupt gzip stream", path);
        goto fail;
    }
    if ((size_t)r < hdr_bytes - 4) {
        snprintf(err, errlen, "%s: truncated IDX header (%lld of %zu bytes)", path, r + 4, hdr_bytes);
        goto fail;
    }
    uint32_t dims[3] = {1, 1, 1};
    for (int i = 0; i < ndims; i++) dims[i] = be32(hdr + 4 + 4 * i);
    if (dims[0] == 0 || dims[0] > IDX_MAX_COUNT) {
        snprintf(err, errlen, "%s: implausible item count %u", path, dims[0]);
        goto fail;
    }
    if (dims[1] == 0 || dims[2] == 0 || dims[1] > IDX_MAX_SIDE || dims[2] > IDX_MAX_SIDE) {
        snprintf(err, errlen, "%s: implausible image size %ux%u", path, dims[1], dims[2]);
        goto fail;
    }
    unsigned long long n = (unsigned long long)dims[0] * dims[1] * dims[2];
    if (n > IDX_MAX_BYTES) {
        snprintf(err, errlen, "%s: data size %llu bytes is too large", path, n);
        goto fail;
    }
    out->data = malloc((size_t)n);
    if (!out->data) {
        snprintf(err, errlen, "%s: out of memory for %llu bytes", path, n);
        goto fail;
    }
    r = read_full(f, out->data, (size_t)n);
    if (r < 0) {
        snprintf(err, errlen, "%s: corrupt gzip stream", path);
        goto fail;
    }
    if ((unsigned long long)r < n) {
        snprintf(err, errlen, "%s: truncated: header promises %u items (%llu data bytes) but only %lld are present",
                 path, dims[0], n, r);
        goto fail;
    }
    uint8_t extra;
    r = read_full(f, &extra, 1);
    if (r != 0) {
        snprintf(err, errlen, "%s: %s after the %u items the header declares", path,
                 r < 0 ? "corrupt gzip stream" : "unexpected trailing data", dims[0]);
        goto fail;
    }
    gzclose(f);
    out->count = dims[0];
    out->rows = dims[1];
    out->cols = dims[2];
    return 0;
fail:
    gzclose(f);
    free(out->data);
    out->data = NULL;
    return -1;
}

void idx_free(idx_array *a) {
    free(a->data);
    a->data = NULL;
}
