/* Unit tests for src/image/: buffers, sRGB helpers, PNG/EXR/PFM I/O, error paths, metrics.
 * Plain C program: prints every failed check and returns non-zero if any failed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tinyexr.h>

#include "image/image.h"

static int g_checks, g_failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        g_checks++;                                                                                                    \
        if (!(cond)) {                                                                                                 \
            g_failures++;                                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

static char g_dir[256];

static const char *tpath(const char *name) {
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static unsigned char *read_file(const char *p, size_t *n) {
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1u);
    if (buf && len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *n = (size_t)len;
    return buf;
}

static int write_file(const char *p, const void *data, size_t n) {
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    int ok = fwrite(data, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* deterministic PRNG (xorshift64*) */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (double)((g_rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double gauss(void) {
    double u = rnd(), v = rnd();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static float *px(image *img, int x, int y) { return img->rgb + 3 * ((size_t)y * img->width + x); }

static void fill_random(image *img, float lo, float hi) {
    size_t n = (size_t)img->width * img->height * 3;
    for (size_t i = 0; i < n; i++) img->rgb[i] = (float)(lo + (hi - lo) * rnd());
}

static int one_line(const char *s) { return strchr(s, '\n') == NULL && strchr(s, '\r') == NULL; }

/* ---- buffers, paths, sRGB ------------------------------------------------------------ */

static void test_init_free(void) {
    image img;
    CHECK(image_init(&img, 7, 5) == 0, "init 7x5");
    CHECK(img.width == 7 && img.height == 5 && img.rgb, "fields %dx%d", img.width, img.height);
    int zero = 1;
    for (int i = 0; img.rgb && i < 7 * 5 * 3; i++) zero &= img.rgb[i] == 0.0f;
    CHECK(zero, "pixels not zeroed");
    image_free(&img);
    CHECK(img.rgb == NULL && img.width == 0 && img.height == 0, "free resets");
    image_free(&img); /* idempotent */
    image_free(NULL);

    CHECK(image_init(&img, 0, 5) == -1 && img.rgb == NULL, "zero width accepted");
    CHECK(image_init(&img, 5, -1) == -1 && img.rgb == NULL, "negative height accepted");
    CHECK(image_init(&img, IMAGE_MAX_DIM + 1, 1) == -1, "over-wide accepted");
    CHECK(image_init(&img, IMAGE_MAX_DIM, IMAGE_MAX_DIM) == -1, "2^32 pixels accepted");
    CHECK(image_init(NULL, 2, 2) == -1, "NULL image accepted");
}

static void test_format_from_path(void) {
    CHECK(image_format_from_path("out.png") == IMAGE_FMT_PNG, "png");
    CHECK(image_format_from_path("OUT.PnG") == IMAGE_FMT_PNG, "PnG");
    CHECK(image_format_from_path("/a/b.c/x.EXR") == IMAGE_FMT_EXR, "EXR");
    CHECK(image_format_from_path("x.pfm") == IMAGE_FMT_PFM, "pfm");
    CHECK(image_format_from_path("x.Pfm") == IMAGE_FMT_PFM, "Pfm");
    CHECK(image_format_from_path("dir.png/file") == IMAGE_FMT_UNKNOWN, "dot in dir");
    CHECK(image_format_from_path("noext") == IMAGE_FMT_UNKNOWN, "no ext");
    CHECK(image_format_from_path("x.png.tmp") == IMAGE_FMT_UNKNOWN, "png.tmp");
    CHECK(image_format_from_path("x.pngx") == IMAGE_FMT_UNKNOWN, "pngx");
    CHECK(image_format_from_path("x.jpg") == IMAGE_FMT_UNKNOWN, "jpg");
    CHECK(image_format_from_path(NULL) == IMAGE_FMT_UNKNOWN, "NULL");
}

static void test_srgb(void) {
    /* reference values of the IEC 61966-2-1 curve */
    CHECK(fabsf(image_srgb_encode(0.5f) - 0.7353570f) < 2e-6f, "encode(0.5)=%.7f", image_srgb_encode(0.5f));
    CHECK(fabsf(image_srgb_decode(0.5f) - 0.2140411f) < 2e-6f, "decode(0.5)=%.7f", image_srgb_decode(0.5f));
    CHECK(fabsf(image_srgb_encode(0.001f) - 0.01292f) < 1e-7f, "linear segment %.8f", image_srgb_encode(0.001f));
    CHECK(image_srgb_encode(0.0f) == 0.0f && fabsf(image_srgb_encode(1.0f) - 1.0f) < 1e-6f, "endpoints");
    CHECK(fabsf(image_srgb_decode(1.0f) - 1.0f) < 1e-6f, "decode(1)");
    double worst = 0.0;
    for (int i = 0; i <= 10000; i++) {
        float x = (float)i / 10000.0f;
        double e1 = fabs(image_srgb_decode(image_srgb_encode(x)) - x);
        double e2 = fabs(image_srgb_encode(image_srgb_decode(x)) - x);
        double e = (e1 > e2 ? e1 : e2) / (x > 1e-3f ? x : 1e-3f);
        if (e > worst) worst = e;
    }
    CHECK(worst < 2e-6, "encode/decode not inverse: worst relative error %g", worst);
    int bad = -1;
    for (int q = 0; q < 256 && bad < 0; q++)
        if (image_quantize8(image_srgb_decode((float)q / 255.0f)) != q) bad = q;
    CHECK(bad < 0, "quantize8(decode(q/255)) != q for q=%d", bad);
    CHECK(image_quantize8(NAN) == 0 && image_quantize8(-1.0f) == 0, "NaN/negative -> 0");
    CHECK(image_quantize8(2.0f) == 255 && image_quantize8(INFINITY) == 255, "overrange -> 255");
    CHECK(image_quantize8(0.5f) == 188, "quantize8(0.5)=%d", image_quantize8(0.5f));
}

static void test_luminance(void) {
    image img;
    image_init(&img, 2, 1);
    px(&img, 0, 0)[0] = 1.0f;                           /* pure red */
    px(&img, 1, 0)[1] = 2.0f, px(&img, 1, 0)[2] = 1.0f; /* green 2, blue 1 */
    double want = (0.2126 + 2 * 0.7152 + 0.0722) / 2.0;
    CHECK(fabs(image_luminance_mean(&img) - want) < 1e-7, "luminance %.9f want %.9f", image_luminance_mean(&img), want);
    image_free(&img);
    CHECK(image_luminance_mean(&img) == 0.0, "empty image luminance");
}

/* ---- round trips --------------------------------------------------------------------- */

static void test_png_roundtrip(void) {
    image a, b;
    image_init(&a, 37, 23);
    fill_random(&a, 0.0f, 1.0f);
    px(&a, 0, 0)[0] = -0.5f; /* out of range: clamped */
    px(&a, 1, 0)[1] = 3.0f;
    px(&a, 2, 0)[2] = NAN;
    char err[256] = "";
    const char *p = tpath("rt.png");
    CHECK(image_save(&a, p, 0, err, sizeof err) == 0, "save png: %s", err);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load png: %s", err);
    if (b.rgb) {
        CHECK(b.width == 37 && b.height == 23, "size %dx%d", b.width, b.height);
        int mism = 0;
        double worst = 0.0;
        for (int i = 0; i < 37 * 23 * 3; i++) {
            if (image_quantize8(a.rgb[i]) != image_quantize8(b.rgb[i])) mism++;
            float want = image_srgb_decode(image_quantize8(a.rgb[i]) / 255.0f);
            double e = fabs(b.rgb[i] - want);
            if (e > worst) worst = e;
        }
        CHECK(mism == 0, "%d channel values changed 8-bit code", mism);
        CHECK(worst < 1e-6, "loaded value != decode(code): %g", worst);
        CHECK(b.rgb[0] == 0.0f && b.rgb[4] == 1.0f && b.rgb[8] == 0.0f, "clamp/NaN: %g %g %g", b.rgb[0], b.rgb[4],
              b.rgb[8]);
    }
    CHECK(!file_exists(tpath("rt.png.tmp")), "stray temp file");
    image_free(&a);
    image_free(&b);
}

/* writes a PNG with libpng directly (to exercise the loader's format conversions), Adam7
 * interlaced or not */
static int write_png_il(const char *path, int w, int h, int depth, int ctype, const unsigned char *data,
                        size_t rowbytes, const png_color *pal, int npal, const unsigned char *trns, int ntrns,
                        int interlace) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, ctype,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (pal) png_set_PLTE(png, info, pal, npal);
    if (trns) png_set_tRNS(png, info, trns, ntrns, NULL);
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    for (int pass = 0; pass < passes; pass++)
        for (int y = 0; y < h; y++) png_write_row(png, data + (size_t)y * rowbytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(f) == 0 ? 0 : -1;
}
static int write_png_raw(const char *path, int w, int h, int depth, int ctype, const unsigned char *data,
                         size_t rowbytes, const png_color *pal, int npal, const unsigned char *trns, int ntrns) {
    return write_png_il(path, w, h, depth, ctype, data, rowbytes, pal, npal, trns, ntrns, 0);
}

static unsigned char *reserve_malloc(void *ctx, int w, int h) {
    unsigned char **out = ctx;
    return *out = malloc((size_t)w * (size_t)h * 3u);
}

/* The reader decodes row by row into the output; Adam7 files arrive as seven reduced images that
 * it scatters into place itself: every size (empty passes included), 8- and 16-bit, and the 8-bit
 * codes kept (image_load_srgb8), must give exactly what the same pixels give non-interlaced. */
static void test_png_interlaced(void) {
    static const int sizes[][2] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}, {5, 7}, {8, 8}, {9, 9}, {17, 11}, {33, 2}};
    char err[256] = "";
    uint32_t seed = 7;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        for (int depth = 8; depth <= 16; depth += 8) {
            size_t rowbytes = (size_t)w * 3u * (size_t)(depth / 8);
            unsigned char *data = malloc(rowbytes * (size_t)h);
            for (size_t i = 0; i < rowbytes * (size_t)h; i++) {
                seed = seed * 1664525u + 1013904223u;
                data[i] = (unsigned char)(seed >> 24);
            }
            const char *pa = tpath("il_a.png"), *pb = tpath("il_b.png");
            CHECK(write_png_il(pa, w, h, depth, PNG_COLOR_TYPE_RGB, data, rowbytes, NULL, 0, NULL, 0, 0) == 0 &&
                      write_png_il(pb, w, h, depth, PNG_COLOR_TYPE_RGB, data, rowbytes, NULL, 0, NULL, 0, 1) == 0,
                  "writing %dx%d", w, h);
            image a, b;
            int la = image_load(&a, pa, err, sizeof err), lb = image_load(&b, pb, err, sizeof err);
            CHECK(la == 0 && lb == 0 && a.width == w && b.width == w && b.height == h &&
                      memcmp(a.rgb, b.rgb, sizeof(float) * 3u * (size_t)w * (size_t)h) == 0,
                  "%dx%d %d-bit interlaced: floats differ (%s)", w, h, depth, err);
            image_free(&a);
            image_free(&b);
            unsigned char *c8 = NULL;
            int w8 = 0, h8 = 0;
            int r8 = image_load_srgb8(pb, reserve_malloc, &c8, &w8, &h8, err, sizeof err);
            if (depth == 8)
                CHECK(r8 == 1 && w8 == w && h8 == h && c8 && memcmp(c8, data, rowbytes * (size_t)h) == 0,
                      "%dx%d interlaced: 8-bit codes differ (%d: %s)", w, h, r8, err);
            else
                CHECK(r8 == 0 && !c8, "%dx%d 16-bit: not an 8-bit file (%d)", w, h, r8);
            free(c8);
            free(data);
        }
    }
    /* a 1-bit gray Adam7 file: pass rows packed 8 pixels a byte, expanded per row */
    const unsigned char bits[3] = {0xA0 /* 101 */, 0x40 /* 010 */, 0xE0 /* 111 */};
    const char *p = tpath("il_1bit.png");
    image b;
    CHECK(write_png_il(p, 3, 3, 1, PNG_COLOR_TYPE_GRAY, bits, 1, NULL, 0, NULL, 0, 1) == 0, "w");
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load 1-bit interlaced: %s", err);
    if (b.rgb) {
        int bad = 0;
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++) bad += (px(&b, x, y)[1] == 1.0f) != ((bits[y] >> (7 - x)) & 1);
        CHECK(bad == 0, "1-bit interlaced: %d pixels wrong", bad);
    }
    image_free(&b);
}

static void test_png_variants(void) {
    char err[256] = "";
    image b;

    /* 16-bit gray, 3x2 */
    const unsigned v16[6] = {0, 65535, 32768, 1000, 50000, 12345};
    unsigned char g16[12];
    for (int i = 0; i < 6; i++) g16[2 * i] = (unsigned char)(v16[i] >> 8), g16[2 * i + 1] = (unsigned char)v16[i];
    const char *p = tpath("g16.png");
    CHECK(write_png_raw(p, 3, 2, 16, PNG_COLOR_TYPE_GRAY, g16, 6, NULL, 0, NULL, 0) == 0, "w");
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load 16-bit gray: %s", err);
    if (b.rgb) {
        CHECK(b.width == 3 && b.height == 2, "size");
        for (int i = 0; i < 6; i++) {
            float want = image_srgb_decode((float)(v16[i] / 65535.0));
            float *q = b.rgb + 3 * i;
            CHECK(fabsf(q[0] - want) < 1e-6f && q[0] == q[1] && q[1] == q[2], "gray16 px %d: %g %g %g want %g", i, q[0],
                  q[1], q[2], want);
        }
    }
    image_free(&b);

    /* 8-bit RGBA 2x1: alpha dropped, not composited */
    const unsigned char rgba[8] = {10, 20, 30, 0, 200, 100, 50, 128};
    p = tpath("rgba.png");
    CHECK(write_png_raw(p, 2, 1, 8, PNG_COLOR_TYPE_RGB_ALPHA, rgba, 8, NULL, 0, NULL, 0) == 0, "w");
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load rgba: %s", err);
    if (b.rgb) {
        const unsigned char want[6] = {10, 20, 30, 200, 100, 50};
        for (int i = 0; i < 6; i++)
            CHECK(image_quantize8(b.rgb[i]) == want[i], "rgba ch %d: code %d want %d", i, image_quantize8(b.rgb[i]),
                  want[i]);
    }
    image_free(&b);

    /* 1-bit palette with tRNS, 5x2 */
    const png_color pal[2] = {{255, 0, 0}, {0, 64, 255}};
    const unsigned char trns[1] = {0};
    const unsigned char bits[2] = {0x50 /* 01010 */, 0xA8 /* 10101 */};
    p = tpath("pal.png");
    CHECK(write_png_raw(p, 5, 2, 1, PNG_COLOR_TYPE_PALETTE, bits, 1, pal, 2, trns, 1) == 0, "w");
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load palette: %s", err);
    if (b.rgb) {
        CHECK(b.width == 5 && b.height == 2, "palette size %dx%d", b.width, b.height);
        int bad = 0;
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 5; x++) {
                int idx = (bits[y] >> (7 - x)) & 1;
                float *q = px(&b, x, y);
                bad += image_quantize8(q[0]) != pal[idx].red || image_quantize8(q[1]) != pal[idx].green ||
                       image_quantize8(q[2]) != pal[idx].blue;
            }
        CHECK(bad == 0, "%d palette pixels wrong", bad);
    }
    image_free(&b);

    /* 2-bit gray */
    const unsigned char g2[1] = {0x1B}; /* 0,1,2,3 */
    p = tpath("g2.png");
    CHECK(write_png_raw(p, 4, 1, 2, PNG_COLOR_TYPE_GRAY, g2, 1, NULL, 0, NULL, 0) == 0, "w");
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load 2-bit gray: %s", err);
    if (b.rgb)
        for (int x = 0; x < 4; x++)
            CHECK(image_quantize8(b.rgb[3 * x + 1]) == x * 85, "2-bit gray %d -> %d", x,
                  image_quantize8(b.rgb[3 * x + 1]));
    image_free(&b);
}

static void test_exr_roundtrip(void) {
    image a, b;
    image_init(&a, 19, 13);
    fill_random(&a, 0.0f, 4.0f);
    px(&a, 0, 0)[0] = 0.1f;     /* not representable in half */
    px(&a, 1, 0)[1] = 1000.25f; /* large */
    px(&a, 2, 0)[2] = -0.75f;   /* negative */
    px(&a, 3, 0)[0] = 1e-6f;    /* half subnormal range */
    char err[256] = "";
    const char *p = tpath("rt_half.exr");
    CHECK(image_save(&a, p, 0, err, sizeof err) == 0, "save exr half: %s", err);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load exr half: %s", err);
    if (b.rgb) {
        CHECK(b.width == 19 && b.height == 13, "size %dx%d", b.width, b.height);
        int bad = 0, inexact = 0;
        for (int i = 0; i < 19 * 13 * 3; i++) {
            double tol = fabs(a.rgb[i]) * (1.0 / 2048.0) + 6e-8; /* half: 11-bit significand */
            if (fabs(b.rgb[i] - a.rgb[i]) > tol) bad++;
            if (b.rgb[i] != a.rgb[i]) inexact++;
        }
        CHECK(bad == 0, "%d values outside half precision", bad);
        CHECK(b.rgb[0] != 0.1f && fabsf(b.rgb[0] - 0.1f) < 1e-4f,
              "0.1 should come back as half 0.0999755859, got %.10f", b.rgb[0]);
        CHECK(inexact > 0, "half file is bit-exact: not stored as half?");
    }
    image_free(&b);

    p = tpath("rt_float.exr");
    px(&a, 4, 0)[0] = 1e30f;
    px(&a, 5, 0)[1] = -0.0f;
    CHECK(image_save(&a, p, 1, err, sizeof err) == 0, "save exr float: %s", err);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load exr float: %s", err);
    if (b.rgb)
        CHECK(b.width == a.width && b.height == a.height && memcmp(a.rgb, b.rgb, sizeof(float) * 19 * 13 * 3) == 0,
              "float EXR round trip not bit-exact");
    CHECK(file_size(tpath("rt_float.exr")) > file_size(tpath("rt_half.exr")), "float EXR not larger than half EXR");
    image_free(&b);
    image_free(&a);

    /* single-channel EXR written by tinyexr itself -> gray */
    float gray[6] = {0.0f, 0.25f, 0.5f, 1.0f, 2.0f, 8.0f};
    const char *xe = NULL;
    p = tpath("gray.exr");
    CHECK(SaveEXR(gray, 3, 2, 1, 0, p, &xe) == TINYEXR_SUCCESS, "tinyexr SaveEXR gray");
    if (xe) FreeEXRErrorMessage(xe);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load gray exr: %s", err);
    if (b.rgb) {
        int bad = 0;
        for (int i = 0; i < 6; i++)
            bad += b.rgb[3 * i] != gray[i] || b.rgb[3 * i + 1] != gray[i] || b.rgb[3 * i + 2] != gray[i];
        CHECK(b.width == 3 && b.height == 2 && bad == 0, "gray exr: %d wrong", bad);
    }
    image_free(&b);
}

static void put_be32(unsigned char *d, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    d[0] = (unsigned char)(u >> 24), d[1] = (unsigned char)(u >> 16), d[2] = (unsigned char)(u >> 8),
    d[3] = (unsigned char)u;
}

static float get_le32(const unsigned char *d) {
    uint32_t u = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static void test_pfm(void) {
    image a, b;
    image_init(&a, 5, 3);
    fill_random(&a, -2.0f, 100.0f);
    px(&a, 0, 0)[0] = INFINITY;
    px(&a, 1, 1)[1] = -0.0f;
    px(&a, 2, 2)[2] = 1e-40f; /* float subnormal */
    char err[256] = "";
    const char *p = tpath("rt.pfm");
    CHECK(image_save(&a, p, 0, err, sizeof err) == 0, "save pfm: %s", err);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load pfm: %s", err);
    if (b.rgb)
        CHECK(b.width == 5 && b.height == 3 && memcmp(a.rgb, b.rgb, sizeof(float) * 45) == 0,
              "PFM round trip not bit-exact");
    image_free(&b);

    /* on-disk layout: header, little-endian, bottom row first */
    size_t n = 0;
    unsigned char *raw = read_file(p, &n);
    const char *hdr = "PF\n5 3\n-1.0\n";
    size_t hl = strlen(hdr);
    CHECK(raw && n == hl + 45 * 4, "pfm size %zu", n);
    if (raw && n == hl + 45 * 4) {
        CHECK(memcmp(raw, hdr, hl) == 0, "pfm header");
        CHECK(get_le32(raw + hl) == px(&a, 0, 2)[0], "first stored float is not bottom-left R");
        CHECK(get_le32(raw + hl + 4 * 3 * 5 * 2 + 4) == px(&a, 0, 0)[1], "last row is not top");
    }
    free(raw);
    image_free(&a);

    /* big-endian gray "Pf" 3x2, written by hand; file rows are bottom-up */
    const float vals[2][3] = {{1.5f, -2.0f, 0.125f} /* bottom */, {7.0f, 8.5f, 1e10f} /* top */};
    unsigned char buf[64];
    int hlen = snprintf((char *)buf, sizeof buf, "Pf\n3  2\n1.0\n");
    for (int r = 0; r < 2; r++)
        for (int x = 0; x < 3; x++) put_be32(buf + hlen + 4 * (3 * r + x), vals[r][x]);
    p = tpath("gray_be.pfm");
    write_file(p, buf, (size_t)hlen + 24);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load BE gray pfm: %s", err);
    if (b.rgb) {
        int bad = 0;
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                float want = vals[1 - y][x], *q = px(&b, x, y);
                bad += q[0] != want || q[1] != want || q[2] != want;
            }
        CHECK(b.width == 3 && b.height == 2 && bad == 0, "BE gray pfm: %d wrong", bad);
    }
    image_free(&b);

    /* big-endian colour "PF" 1x1 */
    hlen = snprintf((char *)buf, sizeof buf, "PF\n1 1\n2.5\n");
    put_be32(buf + hlen, 0.5f), put_be32(buf + hlen + 4, 3.0f), put_be32(buf + hlen + 8, -1.0f);
    p = tpath("be.pfm");
    write_file(p, buf, (size_t)hlen + 12);
    CHECK(image_load(&b, p, err, sizeof err) == 0, "load BE pfm: %s", err);
    if (b.rgb)
        CHECK(b.rgb[0] == 0.5f && b.rgb[1] == 3.0f && b.rgb[2] == -1.0f, "BE pfm %g %g %g", b.rgb[0], b.rgb[1],
              b.rgb[2]);
    image_free(&b);
}

/* ---- load errors --------------------------------------------------------------------- */

/* loading path must fail cleanly: -1, an empty image, a one-line message naming the file
 * and containing `needle` (if given) */
static void expect_load_fail(const char *path, const char *needle, const char *what) {
    image b = {123, 456, NULL};
    char err[512] = "";
    int rc = image_load(&b, path, err, sizeof err);
    CHECK(rc == -1, "%s: load succeeded", what);
    CHECK(b.rgb == NULL && b.width == 0 && b.height == 0, "%s: image not left empty", what);
    CHECK(err[0] && strstr(err, path) && one_line(err), "%s: bad message '%s'", what, err);
    if (needle) CHECK(strstr(err, needle) != NULL, "%s: '%s' lacks '%s'", what, err, needle);
    image_free(&b);
}

static void truncate_copy(const char *src, const char *dst, size_t keep) {
    size_t n = 0;
    unsigned char *d = read_file(src, &n);
    if (!d) return;
    write_file(dst, d, keep < n ? keep : n);
    free(d);
}

static void test_load_errors(void) {
    image a;
    char err[256] = "";
    image_init(&a, 40, 30);
    fill_random(&a, 0.0f, 1.0f);
    char png[512], exr[512], pfm[512]; /* tpath() buffers are recycled: keep copies */
    snprintf(png, sizeof png, "%s", tpath("src.png"));
    snprintf(exr, sizeof exr, "%s", tpath("src.exr"));
    snprintf(pfm, sizeof pfm, "%s", tpath("src.pfm"));
    CHECK(image_save(&a, png, 0, err, sizeof err) == 0, "%s", err);
    CHECK(image_save(&a, exr, 0, err, sizeof err) == 0, "%s", err);
    CHECK(image_save(&a, pfm, 0, err, sizeof err) == 0, "%s", err);
    image_free(&a);

    expect_load_fail(tpath("does_not_exist.png"), "No such file", "missing file");
    write_file(tpath("empty.png"), "", 0);
    expect_load_fail(tpath("empty.png"), "empty", "empty file");
    expect_load_fail(g_dir, NULL, "directory");

    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(rnd() * 256);
    junk[0] = 'x';
    write_file(tpath("garbage.png"), junk, sizeof junk);
    expect_load_fail(tpath("garbage.png"), "unrecognised", "garbage .png");

    /* valid signatures followed by garbage */
    memcpy(junk, "\x89PNG\r\n\x1a\n", 8);
    write_file(tpath("sig.png"), junk, sizeof junk);
    expect_load_fail(tpath("sig.png"), "PNG", "PNG signature + garbage");
    memcpy(junk, "\x76\x2f\x31\x01\x02\0\0\0", 8);
    write_file(tpath("sig.exr"), junk, sizeof junk);
    expect_load_fail(tpath("sig.exr"), "OpenEXR", "EXR magic + garbage");
    memcpy(junk, "PF\nzz", 5);
    write_file(tpath("sig.pfm"), junk, sizeof junk);
    expect_load_fail(tpath("sig.pfm"), "PFM", "PFM magic + garbage");

    /* truncations at several lengths */
    const size_t cuts[] = {3, 8, 20, 40, 100, 300, 1000, 2000};
    long sizes[3] = {file_size(png), file_size(exr), file_size(pfm)};
    const char *srcs[3] = {png, exr, pfm};
    const char *names[3] = {"cut.png", "cut.exr", "cut.pfm"};
    for (int k = 0; k < 3; k++) {
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            if ((long)cuts[c] >= sizes[k]) continue;
            truncate_copy(srcs[k], tpath(names[k]), cuts[c]);
            char what[64];
            snprintf(what, sizeof what, "%s cut to %zu bytes", names[k], cuts[c]);
            expect_load_fail(tpath(names[k]), NULL, what);
        }
        truncate_copy(srcs[k], tpath(names[k]), (size_t)(sizes[k] - 1));
        expect_load_fail(tpath(names[k]), NULL, "truncated by one byte");
        truncate_copy(srcs[k], tpath(names[k]), (size_t)sizes[k] / 2);
        expect_load_fail(tpath(names[k]), NULL, "truncated to half");
    }

    /* absurd sizes */
    const char *big = "PF\n100000 100000\n-1.0\n";
    write_file(tpath("big.pfm"), big, strlen(big));
    expect_load_fail(tpath("big.pfm"), "unsupported", "PFM 100000^2");
    const char *many = "Pf\n65536 4097\n-1.0\n"; /* sides ok, > 2^28 pixels */
    write_file(tpath("many.pfm"), many, strlen(many));
    expect_load_fail(tpath("many.pfm"), "unsupported", "PFM > 2^28 pixels");
    const char *neg = "PF\n-5 3\n-1.0\n";
    write_file(tpath("neg.pfm"), neg, strlen(neg));
    expect_load_fail(tpath("neg.pfm"), NULL, "PFM negative width");
    const char *zsc = "PF\n1 1\n0\nxxxxxxxxxxxx";
    write_file(tpath("zscale.pfm"), zsc, strlen(zsc));
    expect_load_fail(tpath("zscale.pfm"), "scale", "PFM zero scale");

    unsigned char row[70000 / 8 + 1];
    memset(row, 0, sizeof row);
    CHECK(write_png_raw(tpath("wide.png"), 70000, 1, 1, PNG_COLOR_TYPE_GRAY, row, sizeof row, NULL, 0, NULL, 0) == 0,
          "write wide png");
    expect_load_fail(tpath("wide.png"), "size", "PNG 70000 wide");

    /* EXR with its dataWindow patched to 100000 x 1 */
    size_t n = 0;
    unsigned char *d = read_file(exr, &n);
    const char key[] = "dataWindow\0box2i";
    int patched = 0;
    for (size_t i = 0; d && i + sizeof key + 4 + 16 <= n; i++)
        if (memcmp(d + i, key, sizeof key) == 0) {
            unsigned char *box = d + i + sizeof key + 4; /* after name, type, size */
            uint32_t mx = 99999;
            for (int k = 0; k < 4; k++) box[8 + k] = (unsigned char)(mx >> (8 * k));
            patched = 1;
            break;
        }
    CHECK(patched, "dataWindow attribute not found");
    if (d) write_file(tpath("huge.exr"), d, n);
    free(d);
    expect_load_fail(tpath("huge.exr"), "unsupported", "EXR 100000 wide");

    /* tiny error buffers are respected and terminated */
    char small[8];
    memset(small, 'Z', sizeof small);
    image b;
    CHECK(image_load(&b, tpath("nope.pfm"), small, sizeof small) == -1, "small buf load");
    CHECK(memchr(small, '\0', sizeof small) != NULL, "small err buffer not terminated");
    CHECK(image_load(&b, tpath("nope.pfm"), NULL, 0) == -1, "NULL err buffer");
}

/* ---- save errors & atomicity --------------------------------------------------------- */

static int dir_has_tmp(const char *dir, const char *base) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s.tmp.%ld", dir, base, (long)getpid());
    return file_exists(p);
}

static void test_save_errors(void) {
    image a;
    image_init(&a, 4, 4);
    fill_random(&a, 0.0f, 1.0f);
    char err[512] = "";

    const char *nodir = tpath("no_such_dir/out.png");
    CHECK(image_save(&a, nodir, 0, err, sizeof err) == -1, "save into missing dir succeeded");
    CHECK(err[0] && strstr(err, nodir) && one_line(err), "bad message '%s'", err);
    CHECK(!file_exists(tpath("no_such_dir")), "missing dir got created");

    /* target is an existing directory: temp file is written, rename fails -> temp removed */
    const char *exts[3] = {"d.png", "d.exr", "d.pfm"};
    for (int k = 0; k < 3; k++) {
        const char *dp = tpath(exts[k]);
        mkdir(dp, 0700);
        err[0] = '\0';
        CHECK(image_save(&a, dp, 0, err, sizeof err) == -1, "save over a directory succeeded");
        CHECK(err[0] && strstr(err, dp) && one_line(err), "bad message '%s'", err);
        CHECK(!dir_has_tmp(g_dir, exts[k]), "temp file left behind for %s", exts[k]);
        rmdir(dp);
    }

    CHECK(image_save(&a, tpath("x.jpg"), 0, err, sizeof err) == -1, "unknown ext accepted");
    CHECK(strstr(err, "extension") != NULL, "message '%s'", err);
    CHECK(!file_exists(tpath("x.jpg")) && !dir_has_tmp(g_dir, "x.jpg"), "file created for .jpg");

    image empty = {0, 0, NULL};
    CHECK(image_save(&empty, tpath("e.png"), 0, err, sizeof err) == -1, "empty image saved");
    CHECK(!file_exists(tpath("e.png")), "file created for empty image");

    /* overwrite an existing file: new content replaces old, no temp left */
    const char *p = tpath("over.pfm");
    image b, c;
    image_init(&b, 2, 2);
    fill_random(&b, 0.0f, 1.0f);
    CHECK(image_save(&a, p, 0, err, sizeof err) == 0, "%s", err);
    CHECK(image_save(&b, p, 0, err, sizeof err) == 0, "%s", err);
    CHECK(image_load(&c, p, err, sizeof err) == 0, "%s", err);
    CHECK(c.width == 2 && c.height == 2 && c.rgb && memcmp(c.rgb, b.rgb, 12 * sizeof(float)) == 0,
          "overwritten file has wrong content");
    CHECK(!dir_has_tmp(g_dir, "over.pfm"), "temp file left after success");
    image_free(&a);
    image_free(&b);
    image_free(&c);
}

/* ---- metrics ------------------------------------------------------------------------- */

static float code(int q) { return image_srgb_decode((float)q / 255.0f); }

static void fill_code(image *img, int q) {
    for (size_t i = 0; i < (size_t)img->width * img->height * 3; i++) img->rgb[i] = code(q);
}

/* Independent brute-force SSIM (direct 2D window, no separability, no ring buffer) on the
 * 8-bit codes, same definition as documented: mean over valid windows, mean over RGB. */
static double ssim_bruteforce(const image *a, const image *b) {
    int W = a->width, H = a->height;
    int wx = W < 11 ? W : 11, wy = H < 11 ? H : 11;
    double w2[11][11], s = 0.0;
    for (int j = 0; j < wy; j++)
        for (int i = 0; i < wx; i++) {
            double dx = i - 0.5 * (wx - 1), dy = j - 0.5 * (wy - 1);
            w2[j][i] = exp(-(dx * dx + dy * dy) / 4.5);
            s += w2[j][i];
        }
    const double C1 = 6.5025, C2 = 58.5225;
    double total = 0.0;
    for (int c = 0; c < 3; c++) {
        double sum = 0.0;
        int cnt = 0;
        for (int y0 = 0; y0 + wy <= H; y0++)
            for (int x0 = 0; x0 + wx <= W; x0++) {
                double ma = 0, mb = 0;
                for (int j = 0; j < wy; j++)
                    for (int i = 0; i < wx; i++) {
                        size_t k = 3 * ((size_t)(y0 + j) * W + (x0 + i)) + c;
                        ma += w2[j][i] / s * image_quantize8(a->rgb[k]);
                        mb += w2[j][i] / s * image_quantize8(b->rgb[k]);
                    }
                double va = 0, vb = 0, cv = 0;
                for (int j = 0; j < wy; j++)
                    for (int i = 0; i < wx; i++) {
                        size_t k = 3 * ((size_t)(y0 + j) * W + (x0 + i)) + c;
                        double da = image_quantize8(a->rgb[k]) - ma, db = image_quantize8(b->rgb[k]) - mb;
                        va += w2[j][i] / s * da * da;
                        vb += w2[j][i] / s * db * db;
                        cv += w2[j][i] / s * da * db;
                    }
                sum += ((2 * ma * mb + C1) * (2 * cv + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
                cnt++;
            }
        total += sum / cnt;
    }
    return total / 3.0;
}

/* adds Gaussian noise of `sigma` 8-bit levels (in sRGB space) to a copy of src */
static void noisy_copy(const image *src, image *dst, double sigma) {
    image_init(dst, src->width, src->height);
    for (size_t i = 0; i < (size_t)src->width * src->height * 3; i++) {
        double s = image_srgb_encode(src->rgb[i]) + sigma / 255.0 * gauss();
        dst->rgb[i] = image_srgb_decode((float)(s < 0 ? 0 : s > 1 ? 1 : s));
    }
}

static void test_metrics(void) {
    char err[256] = "";
    image_metrics m;
    image a, b;

    /* identical */
    image_init(&a, 32, 24);
    fill_random(&a, 0.0f, 1.0f);
    image_init(&b, 32, 24);
    memcpy(b.rgb, a.rgb, sizeof(float) * 32 * 24 * 3);
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.ae == 0 && m.rmse == 0, "identical: ae %g rmse %g", m.ae, m.rmse);
    CHECK(isinf(m.psnr) && m.psnr > 0, "identical: psnr %g", m.psnr);
    CHECK(fabs(m.ssim - 1.0) < 1e-12, "identical: ssim %.15f", m.ssim);

    /* difference below 8-bit quantisation is invisible */
    px(&b, 5, 5)[0] = code(100) + 1e-5f;
    px(&a, 5, 5)[0] = code(100);
    memcpy(px(&b, 6, 5), px(&a, 6, 5), 3 * sizeof(float));
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0 && m.ae == 0 && m.rmse == 0,
          "sub-quantum difference counted: ae %g", m.ae);
    image_free(&a);
    image_free(&b);

    /* known differences on a flat 16x16 image of code 100 */
    image_init(&a, 16, 16);
    image_init(&b, 16, 16);
    fill_code(&a, 100);
    fill_code(&b, 100);
    px(&b, 3, 5)[0] = code(110);                               /* +10 in R */
    px(&b, 10, 2)[0] = code(101), px(&b, 10, 2)[1] = code(99); /* +1, -1 */
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0, "%s", err);
    double rmse = sqrt((100.0 + 1.0 + 1.0) / (3.0 * 256.0));
    CHECK(m.ae == 2.0, "ae %g want 2", m.ae);
    CHECK(fabs(m.rmse - rmse) < 1e-12, "rmse %.15f want %.15f", m.rmse, rmse);
    CHECK(fabs(m.psnr - 20.0 * log10(255.0 / rmse)) < 1e-9, "psnr %.12f", m.psnr);
    CHECK(m.ssim < 1.0 && m.ssim > 0.9, "ssim %.6f", m.ssim);
    /* symmetric */
    image_metrics m2;
    CHECK(image_compare(&b, &a, &m2, err, sizeof err) == 0 && m2.ae == m.ae && m2.rmse == m.rmse &&
              fabs(m2.ssim - m.ssim) < 1e-12,
          "compare not symmetric");
    /* one pixel, all channels off by 255 */
    fill_code(&b, 100);
    fill_code(&a, 100);
    px(&a, 0, 0)[0] = px(&a, 0, 0)[1] = px(&a, 0, 0)[2] = 0.0f;
    px(&b, 0, 0)[0] = px(&b, 0, 0)[1] = px(&b, 0, 0)[2] = 1.0f;
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0 && m.ae == 1.0 && fabs(m.rmse - 255.0 / 16.0) < 1e-12 &&
              fabs(m.psnr - 20.0 * log10(16.0)) < 1e-9,
          "full-range pixel: ae %g rmse %g psnr %g", m.ae, m.rmse, m.psnr);
    image_free(&a);
    image_free(&b);

    /* flat images: SSIM reduces to the luminance term (2ab + C1) / (a^2 + b^2 + C1) */
    image_init(&a, 20, 15);
    image_init(&b, 20, 15);
    fill_code(&a, 100);
    fill_code(&b, 110);
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0, "%s", err);
    double want = (2.0 * 100 * 110 + 6.5025) / (100.0 * 100 + 110.0 * 110 + 6.5025);
    CHECK(fabs(m.ssim - want) < 1e-9, "flat ssim %.12f want %.12f", m.ssim, want);
    CHECK(m.ae == 300 && fabs(m.rmse - 10.0) < 1e-12, "flat ae %g rmse %g", m.ae, m.rmse);
    image_free(&a);
    image_free(&b);

    /* SSIM against an independent brute-force implementation, big and small images */
    const int sizes[3][2] = {{31, 27}, {8, 6}, {11, 40}};
    for (int s = 0; s < 3; s++) {
        image_init(&a, sizes[s][0], sizes[s][1]);
        fill_random(&a, 0.0f, 1.0f);
        noisy_copy(&a, &b, 30.0);
        CHECK(image_compare(&a, &b, &m, err, sizeof err) == 0, "%s", err);
        double bf = ssim_bruteforce(&a, &b);
        CHECK(fabs(m.ssim - bf) < 1e-9, "%dx%d: ssim %.12f brute force %.12f", a.width, a.height, m.ssim, bf);
        CHECK(m.ssim < 0.99 && m.ssim > 0.0, "%dx%d: ssim %.6f out of expected range", a.width, a.height, m.ssim);
        image_free(&a);
        image_free(&b);
    }

    /* more noise -> lower SSIM, higher RMSE, lower PSNR */
    image_init(&a, 64, 48);
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++) {
            float v = (float)(0.5 + 0.4 * sin(x * 0.3) * cos(y * 0.2));
            px(&a, x, y)[0] = v, px(&a, x, y)[1] = v * v, px(&a, x, y)[2] = 1.0f - v;
        }
    image n1, n2;
    image_metrics m1;
    noisy_copy(&a, &n1, 4.0);
    noisy_copy(&a, &n2, 16.0);
    CHECK(image_compare(&a, &n1, &m1, err, sizeof err) == 0, "%s", err);
    CHECK(image_compare(&a, &n2, &m2, err, sizeof err) == 0, "%s", err);
    CHECK(m1.ssim > m2.ssim, "ssim: low noise %.6f <= high noise %.6f", m1.ssim, m2.ssim);
    CHECK(m1.ssim < 1.0 && m2.ssim > 0.0, "ssim range %.6f %.6f", m1.ssim, m2.ssim);
    CHECK(m1.rmse < m2.rmse && m1.psnr > m2.psnr, "rmse %g %g psnr %g %g", m1.rmse, m2.rmse, m1.psnr, m2.psnr);
    CHECK(fabs(m2.rmse - 16.0) < 2.0 && fabs(m1.rmse - 4.0) < 0.6, "rmse vs noise sigma: %g %g", m1.rmse, m2.rmse);
    CHECK(m1.ae > 0.5 * 64 * 48 && m1.ae <= 64 * 48, "noisy AE %g", m1.ae);
    image_free(&n1);
    image_free(&n2);

    /* size mismatch and bad arguments */
    image_init(&b, 64, 47);
    err[0] = '\0';
    CHECK(image_compare(&a, &b, &m, err, sizeof err) == -1, "size mismatch accepted");
    CHECK(strstr(err, "64x48") && strstr(err, "64x47") && one_line(err), "message '%s'", err);
    image empty = {0, 0, NULL};
    CHECK(image_compare(&a, &empty, &m, err, sizeof err) == -1, "empty image accepted");
    CHECK(image_compare(&a, &a, NULL, err, sizeof err) == -1, "NULL metrics accepted");
    image_free(&a);
    image_free(&b);
}

/* ---- main ---------------------------------------------------------------------------- */

static void cleanup_dir(void) {
    static const char *names[] = {
        "il_a.png",    "il_b.png",     "il_1bit.png", "rt.png",  "g16.png",     "rgba.png", "pal.png",  "g2.png",
        "rt_half.exr", "rt_float.exr", "gray.exr",    "rt.pfm",  "gray_be.pfm", "be.pfm",   "src.png",  "src.exr",
        "src.pfm",     "empty.png",    "garbage.png", "sig.png", "sig.exr",     "sig.pfm",  "cut.png",  "cut.exr",
        "cut.pfm",     "big.pfm",      "many.pfm",    "neg.pfm", "zscale.pfm",  "wide.png", "huge.exr", "over.pfm"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) remove(tpath(names[i]));
    if (rmdir(g_dir) != 0) fprintf(stderr, "note: could not remove %s: %s\n", g_dir, strerror(errno));
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/caustic_test_image_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "cannot create temp dir: %s\n", strerror(errno));
        return 2;
    }
    test_init_free();
    test_format_from_path();
    test_srgb();
    test_luminance();
    test_png_roundtrip();
    test_png_variants();
    test_png_interlaced();
    test_exr_roundtrip();
    test_pfm();
    test_load_errors();
    test_save_errors();
    test_metrics();
    cleanup_dir();
    if (g_failures) {
        fprintf(stderr, "test_image: %d of %d checks FAILED\n", g_failures, g_checks);
        return 1;
    }
    printf("test_image: all %d checks passed\n", g_checks);
    return 0;
}
