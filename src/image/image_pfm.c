/* Portable FloatMap (PFM): "PF" (RGB) or "Pf" (gray), then width, height and a scale
 * whose sign gives the byte order (negative = little-endian), separated by whitespace,
 * one whitespace byte, then width*height*channels 32-bit floats, rows bottom to top. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

static void put_le32(unsigned char *p, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    p[0] = (unsigned char)(u & 0xffu);
    p[1] = (unsigned char)((u >> 8) & 0xffu);
    p[2] = (unsigned char)((u >> 16) & 0xffu);
    p[3] = (unsigned char)((u >> 24) & 0xffu);
}

static float get32(const unsigned char *p, int little) {
    uint32_t u = little ? ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24)
                        : ((uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

int image__pfm_write(FILE *f, const image *img, const char *path, char *err, size_t errlen) {
    int w = img->width, h = img->height;
    size_t rowbytes = (size_t)w * 12u;
    unsigned char *row = malloc(rowbytes);
    if (!row) {
        image__set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int ok = fprintf(f, "PF\n%d %d\n-1.0\n", w, h) > 0;
    for (int r = 0; ok && r < h; r++) {
        const float *src = img->rgb + (size_t)(h - 1 - r) * (size_t)w * 3u; /* bottom row first */
        for (size_t i = 0; i < (size_t)w * 3u; i++) put_le32(row + 4 * i, src[i]);
        ok = fwrite(row, 1, rowbytes, f) == rowbytes;
    }
    free(row);
    if (!ok) {
        image__set_err(err, errlen, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int is_space(int c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'; }

/* Reads one whitespace-separated header token; consumes exactly one whitespace byte after
 * it. Returns 0, or -1 on EOF / overlong token. */
static int read_token(FILE *f, char *buf, size_t cap) {
    int c;
    do c = fgetc(f);
    while (c != EOF && is_space(c));
    size_t n = 0;
    while (c != EOF && !is_space(c)) {
        if (n + 1 >= cap) return -1;
        buf[n++] = (char)c;
        c = fgetc(f);
    }
    buf[n] = '\0';
    if (n == 0 || c == EOF) return -1; /* the token must be followed by whitespace */
    return 0;
}

static int parse_dim(const char *s, long long *out) {
    if (!*s) return -1;
    long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        v = v * 10 + (*s - '0');
        if (v > 1000000000LL) return -1; /* far beyond any accepted size */
    }
    *out = v;
    return 0;
}

int image__pfm_read(FILE *f, image *img, const char *path, char *err, size_t errlen) {
    char magic[3] = {0, 0, 0};
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || (magic[1] != 'F' && magic[1] != 'f')) {
        image__set_err(err, errlen, "%s: not a PFM file (bad magic)", path);
        return -1;
    }
    int channels = magic[1] == 'F' ? 3 : 1;
    char tw[32], th[32], ts[64];
    long long w = 0, h = 0;
    if (read_token(f, tw, sizeof tw) || read_token(f, th, sizeof th) || read_token(f, ts, sizeof ts)) {
        image__set_err(err, errlen, "%s: truncated or malformed PFM header", path);
        return -1;
    }
    if (parse_dim(tw, &w) || parse_dim(th, &h)) {
        image__set_err(err, errlen, "%s: malformed PFM size '%s %s'", path, tw, th);
        return -1;
    }
    char *end = NULL;
    errno = 0;
    double scale = strtod(ts, &end);
    if (end == ts || *end != '\0' || errno == ERANGE || scale == 0.0 || scale != scale) {
        image__set_err(err, errlen, "%s: malformed PFM scale '%s'", path, ts);
        return -1;
    }
    int little = scale < 0.0;
    /* raw floats: the data must be in the file before a byte of it is allocated */
    long long size = image__file_size(f), at = ftell(f);
    if (image__claim_ok(path, "PFM", w, h, 12.0, size >= 0 && at >= 0 ? size - at : -1, 1.0 / (4.0 * channels), err,
                        errlen))
        return -1;

    if (image_init(img, (int)w, (int)h) != 0) {
        image__set_err(err, errlen, "%s: out of memory for %lldx%lld image", path, w, h);
        return -1;
    }
    size_t rowbytes = (size_t)w * (size_t)channels * 4u;
    unsigned char *row = malloc(rowbytes);
    if (!row) {
        image__set_err(err, errlen, "%s: out of memory", path);
        image_free(img);
        return -1;
    }
    for (long long r = 0; r < h; r++) {
        size_t got = fread(row, 1, rowbytes, f);
        if (got != rowbytes) {
            if (ferror(f))
                image__set_err(err, errlen, "%s: read error: %s", path, strerror(errno));
            else
                image__set_err(err, errlen,
                               "%s: truncated PFM: pixel data ends in row %lld of %lld "
                               "(expected %llu data bytes)",
                               path, r + 1, h, (unsigned long long)rowbytes * (unsigned long long)h);
            free(row);
            image_free(img);
            return -1;
        }
        float *dst = img->rgb + (size_t)(h - 1 - r) * (size_t)w * 3u; /* file is bottom-up */
        for (long long x = 0; x < w; x++) {
            if (channels == 3) {
                for (int c = 0; c < 3; c++) dst[3 * x + c] = get32(row + 12 * x + 4 * c, little);
            } else {
                float v = get32(row + 4 * x, little);
                dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = v;
            }
        }
    }
    free(row);
    return 0;
}
