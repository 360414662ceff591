/* Image buffers, sRGB helpers, format dispatch and atomic save (temp file + rename). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_internal.h"
#include "util/file.h"

void image__set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* one line: fold control characters (newlines from library messages) into spaces,
   * then drop trailing spaces */
    size_t n = strlen(err);
    for (size_t i = 0; i < n; i++)
        if (err[i] == '\n' || err[i] == '\r' || err[i] == '\t') err[i] = ' ';
    while (n > 0 && err[n - 1] == ' ') err[--n] = '\0';
}

int image__size_ok(long long width, long long height) {
    return width > 0 && height > 0 && width <= IMAGE_MAX_DIM && height <= IMAGE_MAX_DIM &&
           width * height <= IMAGE_MAX_PIXELS;
}

unsigned long long image_memory_limit(char *err, size_t errlen) {
    const char *v = getenv("CAUSTIC_IMAGE_MEMORY");
    if (!v || !*v) return IMAGE_MEMORY_DEFAULT;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (v[0] < '0' || v[0] > '9' || errno || *end || n == 0 || n > (~0ULL >> shift)) {
        image__set_err(err, errlen, "CAUSTIC_IMAGE_MEMORY='%s' is not a size in bytes (e.g. 4G, 512M)", v);
        return 0;
    }
    return n << shift;
}

long long image__file_size(FILE *f) {
    struct stat st;
    return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}

/* "12 KiB", "960 MiB": bytes for a message, rounded up. */
static void format_bytes(double b, char *out, size_t n) {
    if (b < 1048576.0)
        snprintf(out, n, "%.0f KiB", ceil(b / 1024.0));
    else
        snprintf(out, n, "%.0f MiB", ceil(b / 1048576.0));
}

int image__claim_ok(const char *path, const char *format, long long w, long long h, double mem_per_pixel,
                    long long file_bytes, double max_pixels_per_byte, char *err, size_t errlen) {
    if (!image__size_ok(w, h)) {
        image__set_err(err, errlen, "%s: unsupported %s size %lldx%lld (max %d per side, %lld pixels)", path, format, w,
                       h, IMAGE_MAX_DIM, (long long)IMAGE_MAX_PIXELS);
        return -1;
    }
    double pixels = (double)w * (double)h;
    if (max_pixels_per_byte > 0.0 && file_bytes >= 0 && pixels > (double)file_bytes * max_pixels_per_byte) {
        image__set_err(err, errlen,
                       "%s: %s header claims %lldx%lld pixels, more than a file of %lld bytes can hold "
                       "(truncated or corrupt)",
                       path, format, w, h, file_bytes);
        return -1;
    }
    char what[128];
    snprintf(what, sizeof what, "a %lldx%lld %s image", w, h, format);
    return image_memory_fits(pixels * mem_per_pixel, path, what, "to decode", err, errlen);
}

int image_memory_fits(double bytes, const char *path, const char *what, const char *purpose, char *err, size_t errlen) {
    char why[256];
    unsigned long long cap = image_memory_limit(why, sizeof why);
    if (!cap) {
        image__set_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    if (bytes > (double)cap) {
        char needs[32], limit[32];
        format_bytes(bytes, needs, sizeof needs);
        format_bytes((double)cap, limit, sizeof limit);
        image__set_err(err, errlen,
                       "%s: %s needs %s %s, over the limit of %s "
                       "(raise CAUSTIC_IMAGE_MEMORY, e.g. CAUSTIC_IMAGE_MEMORY=%.0fM)",
                       path, what, needs, purpose, limit, ceil(bytes / 1048576.0));
        return -1;
    }
    return 0;
}

int image_init(image *img, int width, int height) {
    if (!img) return -1;
    img->width = img->height = 0;
    img->rgb = NULL;
    if (!image__size_ok(width, height)) return -1;
    float *p = calloc((size_t)width * (size_t)height * 3u, sizeof(float));
    if (!p) return -1;
    img->width = width;
    img->height = height;
    img->rgb = p;
    return 0;
}

void image_free(image *img) {
    if (!img) return;
    free(img->rgb);
    img->rgb = NULL;
    img->width = img->height = 0;
}

static int lower_ascii(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

static int ext_equals(const char *ext, const char *want) {
    while (*ext && *want) {
        if (lower_ascii((unsigned char)*ext) != *want) return 0;
        ext++, want++;
    }
    return *ext == '\0' && *want == '\0';
}

image_format image_format_from_path(const char *path) {
    if (!path) return IMAGE_FMT_UNKNOWN;
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    const char *bslash = strrchr(path, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
    if (!dot || (slash && dot < slash)) return IMAGE_FMT_UNKNOWN;
    const char *ext = dot + 1;
    if (ext_equals(ext, "png")) return IMAGE_FMT_PNG;
    if (ext_equals(ext, "exr")) return IMAGE_FMT_EXR;
    if (ext_equals(ext, "pfm")) return IMAGE_FMT_PFM;
    return IMAGE_FMT_UNKNOWN;
}

/* ---- sRGB ---------------------------------------------------------------------------- */

static double srgb_encode_d(double x) { return x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1.0 / 2.4) - 0.055; }

static double srgb_decode_d(double x) { return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4); }

float image_srgb_encode(float linear) { return (float)srgb_encode_d(linear); }
float image_srgb_decode(float srgb) { return (float)srgb_decode_d(srgb); }

static float srgb8_table[256];
static pthread_once_t srgb8_once = PTHREAD_ONCE_INIT;
static void srgb8_init(void) {
    for (int i = 0; i < 256; i++) srgb8_table[i] = (float)srgb_decode_d((double)(float)((double)i / 255.0));
}
const float *image_srgb8_table(void) {
    pthread_once(&srgb8_once, srgb8_init);
    return srgb8_table;
}

unsigned char image_quantize8(float linear) {
    if (!(linear > 0.0f)) return 0; /* also NaN */
    if (linear >= 1.0f) return 255;
    double v = srgb_encode_d(linear) * 255.0 + 0.5;
    if (v >= 255.0) return 255;
    return (unsigned char)v; /* truncation of v + 0.5 == round half up */
}

void image_sanitize(image *img, image_value_report *r) {
    memset(r, 0, sizeof *r);
    size_t n = img && img->rgb ? (size_t)img->width * (size_t)img->height * 3u : 0;
    for (size_t i = 0; i < n; i++) {
        float v = img->rgb[i];
        if (!isfinite(v)) {
            r->nonfinite++;
            img->rgb[i] = 0.0f;
            continue;
        }
        if (v < 0.0f) {
            r->negative++;
            img->rgb[i] = 0.0f;
            continue;
        }
        if (v > IMAGE_HUGE_VALUE) r->huge++;
        if (v > r->largest) r->largest = v;
    }
}

double image_luminance_mean(const image *img) {
    if (!img || !img->rgb || img->width <= 0 || img->height <= 0) return 0.0;
    size_t n = (size_t)img->width * (size_t)img->height;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const float *p = img->rgb + 3 * i;
        sum += 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
    }
    return sum / (double)n;
}

/* ---- save ---------------------------------------------------------------------------- */

static int save_impl(const image *img, const unsigned char *rgb8, const char *path, int exr_float,
                     const image_layer *layers, int nlayers, char *err, size_t errlen);

int image_save(const image *img, const char *path, int exr_float, char *err, size_t errlen) {
    return save_impl(img, NULL, path, exr_float, NULL, 0, err, errlen);
}

int image_save_exr_layers(const image *img, const image_layer *layers, int nlayers, const char *path, char *err,
                          size_t errlen) {
    if (image_format_from_path(path ? path : "") != IMAGE_FMT_EXR) {
        image__set_err(err, errlen, "%s: layers are written to .exr files only", path ? path : "");
        return -1;
    }
    for (int l = 0; l < nlayers; l++)
        if (!layers[l].name || !*layers[l].name || !layers[l].channels || !*layers[l].channels || !layers[l].data) {
            image__set_err(err, errlen, "%s: layer %d has no name, channels or data", path, l);
            return -1;
        }
    return save_impl(img, NULL, path, 0, layers, nlayers, err, errlen);
}

int image_save_png8(const unsigned char *rgb8, int width, int height, const char *path, char *err, size_t errlen) {
    if (image_format_from_path(path ? path : "") != IMAGE_FMT_PNG) {
        image__set_err(err, errlen, "%s: 8-bit images are written as .png only", path ? path : "");
        return -1;
    }
    image img;
    img.width = width;
    img.height = height;
    img.rgb = NULL;
    return save_impl(&img, rgb8, path, 0, NULL, 0, err, errlen);
}

/* The encoder's half of save_impl: fills the temporary file that file_write_atomic renames. */
typedef struct image_writer {
    const image *img;
    const unsigned char *rgb8;
    const char *path;
    int exr_float;
    const image_layer *layers;
    int nlayers;
    image_format fmt;
} image_writer;

static int write_image(FILE *f, void *user, char *err, size_t errlen) {
    const image_writer *w = user;
    switch (w->fmt) {
    case IMAGE_FMT_PNG: return image__png_write8(f, w->img, w->rgb8, w->path, err, errlen);
    case IMAGE_FMT_EXR: return image__exr_write(f, w->img, w->exr_float, w->layers, w->nlayers, w->path, err, errlen);
    case IMAGE_FMT_PFM: break;
    case IMAGE_FMT_UNKNOWN: break; /* PFM (image_write's default) */
    }
    return image__pfm_write(f, w->img, w->path, err, errlen);
}

static int save_impl(const image *img, const unsigned char *rgb8, const char *path, int exr_float,
                     const image_layer *layers, int nlayers, char *err, size_t errlen) {
    if (!path || !*path) {
        image__set_err(err, errlen, "image_save: empty output path");
        return -1;
    }
    if (!img || !(img->rgb || rgb8) || !image__size_ok(img->width, img->height)) {
        image__set_err(err, errlen, "%s: cannot save: image is empty or has an invalid size", path);
        return -1;
    }
    image_format fmt = image_format_from_path(path);
    if (fmt == IMAGE_FMT_UNKNOWN) {
        image__set_err(err, errlen, "%s: unknown image extension (expected .png, .exr or .pfm)", path);
        return -1;
    }

    image_writer w = {img, rgb8, path, exr_float, layers, nlayers, fmt};
    return file_write_atomic(path, "cannot write image", write_image, &w, err, errlen);
}

/* ---- load ---------------------------------------------------------------------------- */

int image_load_srgb8(const char *path, image_reserve8_fn reserve, void *ctx, int *width, int *height, char *err,
                     size_t errlen) {
    *width = *height = 0;
    char why[256];
    FILE *f = file_open_regular(path, 0, why, sizeof why);
    if (!f) {
        image__set_err(err, errlen, "%s: %s", path ? path : "", why);
        return -1;
    }
    unsigned char sig[4] = {0, 0, 0, 0};
    size_t got = fread(sig, 1, sizeof sig, f);
    rewind(f);
    int rc = 0; /* another format: the caller reads it with image_load */
    if (got >= 4 && sig[0] == 0x89 && sig[1] == 'P' && sig[2] == 'N' && sig[3] == 'G')
        rc = image__png_read8(f, reserve, ctx, width, height, path, err, errlen);
    else if (got >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF)
        rc = image__jpeg_read8(f, reserve, ctx, width, height, path, err, errlen);
    fclose(f);
    return rc;
}

int image_load(image *img, const char *path, char *err, size_t errlen) {
    if (!img) {
        image__set_err(err, errlen, "image_load: NULL image");
        return -1;
    }
    img->width = img->height = 0;
    img->rgb = NULL;
    if (!path || !*path) {
        image__set_err(err, errlen, "image_load: empty input path");
        return -1;
    }
    char why[256];
    FILE *f = file_open_regular(path, 0, why, sizeof why);
    if (!f) {
        image__set_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    unsigned char sig[4] = {0, 0, 0, 0};
    size_t got = fread(sig, 1, sizeof sig, f);
    if (got == 0 && ferror(f)) {
        image__set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    if (got == 0) {
        image__set_err(err, errlen, "%s: empty file", path);
        fclose(f);
        return -1;
    }
    rewind(f);

    int rc;
    if (got >= 4 && sig[0] == 0x89 && sig[1] == 'P' && sig[2] == 'N' && sig[3] == 'G') {
        rc = image__png_read(f, img, path, err, errlen);
        fclose(f);
    } else if (got >= 4 && sig[0] == 0x76 && sig[1] == 0x2f && sig[2] == 0x31 && sig[3] == 0x01) {
        fclose(f);
        rc = image__exr_read(path, img, err, errlen);
    } else if (got >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF) {
        rc = image__jpeg_read(f, img, path, err, errlen);
        fclose(f);
    } else if (got >= 2 && sig[0] == 'P' && (sig[1] == 'F' || sig[1] == 'f')) {
        rc = image__pfm_read(f, img, path, err, errlen);
        fclose(f);
    } else if (got >= 2 && sig[0] == '#' && sig[1] == '?') { /* "#?RADIANCE" / "#?RGBE" */
        rc = image__hdr_read(f, img, path, err, errlen);
        fclose(f);
    } else {
        image__set_err(err, errlen, "%s: unrecognised file format (not PNG, JPEG, OpenEXR, PFM or Radiance HDR)", path);
        fclose(f);
        rc = -1;
    }
    if (rc != 0) image_free(img);
    return rc;
}
