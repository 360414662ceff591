/* Radiance RGBE (.hdr) through Debian's stb_image (libstb): linear float RGB. */
#include <stb/stb_image.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

static const unsigned char *next_line(const unsigned char *p, const unsigned char *end) {
    while (p < end && *p != '\n') ++p;
    return p < end ? p + 1 : end;
}

/* Debian 12's stb_image (git 2022-09-08) loops forever on a run-length scanline whose count byte
 * is 0, which is also what it reads past the end of the data (found by fuzz_image). The
 * scanlines are walked here first, as stb will read them: 0 if one would hang it. */
static int hdr_runs_ok(const unsigned char *b, size_t n, int w, int h) {
    /* the header as stb reads it: the signature line, then lines up to an empty one, where a line
     * whose first byte is NUL is empty too (stb compares them as C strings: found by fuzz_image);
     * then "-Y H +X W" */
    const unsigned char *end = b + n, *p = next_line(b, end);
    for (int empty = 0; !empty;) {
        if (p >= end) return 1; /* no end of header: stb refuses it itself */
        empty = *p == '\n' || *p == '\0';
        p = next_line(p, end);
    }
    p = next_line(p, end);
    if (w < 8 || w >= 32768) return 1; /* flat pixels: stb reads them without counts */
    for (int y = 0; y < h; ++y) {
        if (end - p < 4 || p[0] != 2 || p[1] != 2 || (p[2] & 0x80) || ((p[2] << 8) | p[3]) != w)
            return 1; /* flat from here on, or stb's own error */
        p += 4;
        for (int k = 0; k < 4; ++k)
            for (int x = 0; x < w;) {
                if (p >= end) return 0;
                int count = *p++;
                if (count > 128)
                    count -= 128, ++p;
                else
                    p += count;
                if (count == 0 || count > w - x) return 0;
                x += count;
            }
    }
    return 1;
}

int image__hdr_read(FILE *f, image *img, const char *path, char *err, size_t errlen) {
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_file(f, &w, &h, &comp)) {
        image__set_err(err, errlen, "%s: not a readable Radiance HDR file (%s)", path, stbi_failure_reason());
        return -1;
    }
    /* the float image is stb_image's own buffer (taken over below), plus the file (at most 4 bytes
     * a pixel); a run-length scanline spends at least 2 bytes on 127 pixels of each of 4 components */
    long long size = image__file_size(f);
    if (image__claim_ok(path, "Radiance HDR", w, h, 16.0, size, 127.0 / 8.0, err, errlen)) return -1;
    long long most = (long long)w * h * 4 + 65536; /* header and flat pixels: stb reads no more */
    if (size > most) size = most;
    unsigned char *bytes = size > 0 ? malloc((size_t)size) : NULL;
    if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) {
        free(bytes);
        image__set_err(err, errlen, "%s: cannot read the Radiance HDR file", path);
        return -1;
    }
    if (!hdr_runs_ok(bytes, (size_t)size, w, h)) {
        free(bytes);
        image__set_err(err, errlen, "%s: corrupt or truncated run-length data in Radiance HDR", path);
        return -1;
    }
    float *data = stbi_loadf_from_memory(bytes, (int)size, &w, &h, &comp, 3);
    free(bytes);
    if (!data) {
        image__set_err(err, errlen, "%s: cannot decode Radiance HDR: %s", path, stbi_failure_reason());
        return -1;
    }
    /* stb_image allocates with malloc (STBI_MALLOC's default): image_free's free() releases it */
    img->width = w;
    img->height = h;
    img->rgb = data;
    return 0;
}
