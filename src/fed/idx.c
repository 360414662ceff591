#include "idx.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Limits well above any MNIST-like set; they reject absurd headers before allocating. */
#define IDX_MAX_COUNT         100000000u
#define IDX_MAX_SIDE          4096u
/* The decoded bytes kept (each becomes a float in the data set, and training copies it): 256 MiB,
 * five times Fashion-MNIST's training set; FEDTRAIN_IDX_MAX_MB raises it, --limit-train cuts the
 * items read. A small gzip file can claim and hold a thousand times its size. */
#define IDX_MAX_BYTES_DEFAULT (256ull << 20)

static unsigned long long idx_max_bytes(void) {
    const char *e = getenv("FEDTRAIN_IDX_MAX_MB");
    char *end;
    unsigned long long mb = e && *e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && mb > 0 && mb < (1ull << 24) ? mb << 20 : IDX_MAX_BYTES_DEFAULT;
}

enum { RD_OK = 0, RD_CORRUPT = -1, RD_TRAILING = -2, RD_GZ_TRUNCATED = -3, RD_IO = -4 };

/* The input: a file or a memory image, read raw or through zlib's inflate. `in` doubles as
 * the read-ahead buffer of both modes (the first bytes are looked at to detect gzip). */
typedef struct {
    FILE *f;
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    unsigned long long size; /* bytes of the (compressed) input */
    int gz, zinit, member_done;
    z_stream zs;
    uint8_t in[1 << 16];
} source;

static size_t raw_fill(source *s, uint8_t *dst, size_t n) {
    if (s->f) return fread(dst, 1, n, s->f);
    size_t k = s->mem_len - s->mem_pos < n ? s->mem_len - s->mem_pos : n;
    memcpy(dst, s->mem + s->mem_pos, k);
    s->mem_pos += k;
    return k;
}

/* Makes sure at least `want` (<= sizeof in) read-ahead bytes are buffered if the input has them. */
static size_t lookahead(source *s, size_t want) {
    if (s->zs.avail_in >= want) return s->zs.avail_in;
    memmove(s->in, s->zs.next_in ? s->zs.next_in : s->in, s->zs.avail_in);
    size_t have = s->zs.avail_in;
    while (have < want) {
        size_t k = raw_fill(s, s->in + have, sizeof s->in - have);
        if (k == 0) break;
        have += k;
    }
    s->zs.next_in = s->in;
    s->zs.avail_in = (uInt)have;
    return have;
}

static int raw_read(source *s, uint8_t *dst, size_t n, size_t *got) {
    *got = 0;
    if (s->zs.avail_in) { /* the detection look-ahead first */
        size_t k = s->zs.avail_in < n ? s->zs.avail_in : n;
        memcpy(dst, s->zs.next_in, k);
        s->zs.next_in += k;
        s->zs.avail_in -= (uInt)k;
        *got = k;
    }
    while (*got < n) {
        size_t k = raw_fill(s, dst + *got, n - *got);
        if (k == 0) break;
        *got += k;
    }
    return s->f && ferror(s->f) ? RD_IO : RD_OK;
}

/* Inflates up to n bytes; *got < n only at the end of the data. After a gzip member only
 * another member may follow (as in `cat a.gz b.gz`); anything else is trailing garbage. */
static int gz_read(source *s, uint8_t *dst, size_t n, size_t *got) {
    *got = 0;
    while (*got < n) {
        if (s->member_done) {
            size_t have = lookahead(s, 2);
            if (have == 0) return RD_OK; /* clean end of input */
            if (have < 2 || s->zs.next_in[0] != 0x1f || s->zs.next_in[1] != 0x8b) return RD_TRAILING;
            if (inflateReset(&s->zs) != Z_OK) return RD_CORRUPT;
            s->member_done = 0;
        }
        if (lookahead(s, 1) == 0) return s->f && ferror(s->f) ? RD_IO : RD_GZ_TRUNCATED;
        size_t want = n - *got > (1u << 30) ? (1u << 30) : n - *got;
        s->zs.next_out = dst + *got;
        s->zs.avail_out = (uInt)want;
        int r = inflate(&s->zs, Z_NO_FLUSH);
        *got += want - s->zs.avail_out;
        if (r == Z_STREAM_END)
            s->member_done = 1;
        else if (r != Z_OK && r != Z_BUF_ERROR)
            return RD_CORRUPT;
    }
    return RD_OK;
}

static int src_read(source *s, uint8_t *dst, size_t n, size_t *got) {
    return s->gz ? gz_read(s, dst, n, got) : raw_read(s, dst, n, got);
}

static const char *rd_what(int rc) {
    switch (rc) {
    case RD_TRAILING: return "trailing garbage after the gzip stream";
    case RD_GZ_TRUNCATED: return "truncated gzip stream";
    case RD_IO: return "read error";
    default: return "corrupt gzip stream";
    }
}

static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int parse(source *s, const char *path, int ndims, uint32_t max_items, idx_array *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    s->gz = lookahead(s, 2) >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b;
    if (s->gz) {
        /* zlib reads the look-ahead bytes from next_in, where they already are */
        uInt avail = s->zs.avail_in;
        Bytef *next = s->zs.next_in;
        s->zs.zalloc = Z_NULL;
        s->zs.zfree = Z_NULL;
        s->zs.opaque = Z_NULL;
        if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK) {
            snprintf(err, errlen, "%s: cannot start gzip decoder", path);
            return -1;
        }
        s->zinit = 1;
        s->zs.next_in = next;
        s->zs.avail_in = avail;
    }
    /* Magic first (2 zero bytes, element type, dimension count), then the dimensions. */
    uint8_t hdr[16];
    size_t hdr_bytes = 4 + 4 * (size_t)ndims, got;
    int rc = src_read(s, hdr, 4, &got);
    if (rc != RD_OK && !(rc == RD_GZ_TRUNCATED && got < 4)) {
        snprintf(err, errlen, "%s: %s", path, rd_what(rc));
        return -1;
    }
    if (got < 4) {
        snprintf(err, errlen, "%s: truncated IDX header (%zu of %zu bytes)", path, got, hdr_bytes);
        return -1;
    }
    if (hdr[0] != 0 || hdr[1] != 0) {
        snprintf(err, errlen, "%s: not an IDX file (bad magic %02x%02x%02x%02x)", path, hdr[0], hdr[1], hdr[2], hdr[3]);
        return -1;
    }
    if (hdr[2] != 0x08) {
        snprintf(err, errlen, "%s: IDX element type 0x%02x is not unsigned byte (0x08)", path, hdr[2]);
        return -1;
    }
    if (hdr[3] != ndims) {
        snprintf(err, errlen, "%s: IDX file has %d dimensions, expected %d (%s)", path, hdr[3], ndims,
                 ndims == 3 ? "images" : "labels");
        return -1;
    }
    rc = src_read(s, hdr + 4, hdr_bytes - 4, &got);
    if (rc != RD_OK && rc != RD_GZ_TRUNCATED) {
        snprintf(err, errlen, "%s: %s", path, rd_what(rc));
        return -1;
    }
    if (got < hdr_bytes - 4) {
        snprintf(err, errlen, "%s: truncated IDX header (%zu of %zu bytes)", path, got + 4, hdr_bytes);
        return -1;
    }
    uint32_t dims[3] = {1, 1, 1};
    for (int i = 0; i < ndims; i++) dims[i] = be32(hdr + 4 + 4 * i);
    if (dims[0] == 0 || dims[0] > IDX_MAX_COUNT) {
        snprintf(err, errlen, "%s: implausible item count %u", path, dims[0]);
        return -1;
    }
    if (dims[1] == 0 || dims[2] == 0 || dims[1] > IDX_MAX_SIDE || dims[2] > IDX_MAX_SIDE) {
        snprintf(err, errlen, "%s: implausible image size %ux%u", path, dims[1], dims[2]);
        return -1;
    }
    unsigned long long item = (unsigned long long)dims[1] * dims[2];
    unsigned long long n = dims[0] * item;
    /* The claim against the bytes available, before allocating anything. */
    if (!s->gz && s->size != hdr_bytes + n) {
        if (s->size < hdr_bytes + n)
            snprintf(err, errlen,
                     "%s: truncated: header promises %u items (%llu data bytes) but the "
                     "file holds only %llu",
                     path, dims[0], n, s->size - hdr_bytes);
        else
            snprintf(err, errlen,
                     "%s: unexpected trailing data: %llu bytes after the %u items the "
                     "header declares",
                     path, s->size - hdr_bytes - n, dims[0]);
        return -1;
    }
    if (s->gz && hdr_bytes + n > s->size * IDX_GZ_MAX_RATIO) {
        snprintf(err, errlen,
                 "%s: truncated: header promises %u items (%llu data bytes), more than a "
                 "gzip file of %llu bytes can hold",
                 path, dims[0], n, s->size);
        return -1;
    }
    uint32_t keep = max_items && max_items < dims[0] ? max_items : dims[0];
    unsigned long long need = keep * item;
    if (need > idx_max_bytes()) {
        snprintf(err, errlen,
                 "%s: %u items of %llu bytes (%llu MiB) exceed the limit of %llu MiB (read fewer with "
                 "--limit-train/--limit-test, or raise FEDTRAIN_IDX_MAX_MB)",
                 path, keep, item, (need + (1u << 20) - 1) >> 20, idx_max_bytes() >> 20);
        return -1;
    }
    /* Raw files were checked to hold the data; gzip output grows only as it is decoded. */
    size_t cap = s->gz && need > (1u << 20) ? (1u << 20) : (size_t)need, have = 0;
    out->data = malloc(cap ? cap : 1);
    while (out->data) {
        rc = src_read(s, out->data + have, cap - have, &got);
        have += got;
        if (rc != RD_OK || have < cap || cap == need) break;
        size_t ncap = cap * 2 > need ? (size_t)need : cap * 2;
        uint8_t *p = realloc(out->data, ncap);
        if (!p) {
            free(out->data);
            out->data = NULL;
            break;
        }
        out->data = p;
        cap = ncap;
    }
    if (!out->data) {
        snprintf(err, errlen, "%s: out of memory for %llu bytes", path, need);
        return -1;
    }
    if (rc != RD_OK && rc != RD_GZ_TRUNCATED) {
        snprintf(err, errlen, "%s: %s", path, rd_what(rc));
        return -1;
    }
    if (have < need) {
        snprintf(err, errlen, "%s: truncated: header promises %u items (%llu data bytes) but only %zu %s", path,
                 dims[0], n, have, rc == RD_GZ_TRUNCATED ? "could be decoded (truncated gzip stream)" : "are present");
        return -1;
    }
    if (keep == dims[0]) { /* all of it read: nothing may follow */
        uint8_t extra;
        rc = src_read(s, &extra, 1, &got);
        if (rc != RD_OK || got != 0) {
            snprintf(err, errlen, "%s: %s after the %u items the header declares", path,
                     rc == RD_OK ? "unexpected trailing data" : rd_what(rc), dims[0]);
            return -1;
        }
    }
    out->count = keep;
    out->declared = dims[0];
    out->rows = dims[1];
    out->cols = dims[2];
    return 0;
}

static int finish(source *s, int rc, idx_array *out) {
    if (s->zinit) inflateEnd(&s->zs);
    if (s->f) fclose(s->f);
    free(s);
    if (rc != 0) idx_free(out);
    return rc;
}

int idx_load(const char *path, int ndims, uint32_t max_items, idx_array *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    struct stat st;
    /* O_NONBLOCK: a FIFO without a writer would block fopen; it is refused below */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return finish(s, -1, out);
    }
    int fl = S_ISREG(st.st_mode) ? fcntl(fd, F_GETFL) : -1;
    if (!S_ISREG(st.st_mode) || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || !(s->f = fdopen(fd, "rb"))) {
        snprintf(err, errlen, "%s: cannot open: %s", path,
                 S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
        close(fd);
        return finish(s, -1, out);
    }
    s->size = (unsigned long long)st.st_size;
    return finish(s, parse(s, path, ndims, max_items, out, err, errlen), out);
}

int idx_load_mem(const char *name, const uint8_t *bytes, size_t len, int ndims, uint32_t max_items, idx_array *out,
                 char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    s->mem = bytes;
    s->mem_len = len;
    s->size = len;
    return finish(s, parse(s, name, ndims, max_items, out, err, errlen), out);
}

void idx_free(idx_array *a) {
    free(a->data);
    a->data = NULL;
}
