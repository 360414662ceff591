/* PNG via libpng. Write: 8-bit RGB, sRGB-encoded. Read: any bit depth / colour type,
 * treated as sRGB-encoded and decoded to linear floats (or kept as 8-bit codes), row by row into
 * the output; alpha is dropped.
 *
 * libpng reports errors by longjmp. Every resource is owned by a context struct that lives
 * in the caller's frame (not in the frame that calls setjmp), so nothing depends on the
 * values of automatic variables after a longjmp. */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

typedef struct png_ctx {
    png_structp png;
    png_infop info;
    unsigned char *buf;        /* one decoded/encoded row */
    char msg[256];             /* last libpng error */
    int claim_refused;         /* image__claim_ok refused the header's size: err is set */
    image_reserve8_fn reserve; /* keep 8-bit codes (image_load_srgb8): no float image */
    void *reserve_ctx;
    unsigned char *out8; /* where reserve put them */
    int not8;            /* reserve, but the file has 16-bit samples */
} png_ctx;

static void on_png_error(png_structp png, png_const_charp msg) {
    png_ctx *ctx = (png_ctx *)png_get_error_ptr(png);
    if (ctx) snprintf(ctx->msg, sizeof ctx->msg, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) {
    (void)png, (void)msg; /* warnings (e.g. odd ancillary chunks) are not errors: stay quiet */
}

/* ---- write --------------------------------------------------------------------------- */

static int png_write_inner(png_ctx *ctx, FILE *f, const image *img, const unsigned char *rgb8) {
    if (setjmp(png_jmpbuf(ctx->png))) return -1;
    png_init_io(ctx->png, f);
    png_set_IHDR(ctx->png, ctx->info, (png_uint_32)img->width, (png_uint_32)img->height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_sRGB_gAMA_and_cHRM(ctx->png, ctx->info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(ctx->png, ctx->info);
    size_t n = (size_t)img->width * 3u;
    for (int y = 0; y < img->height; y++) {
        if (rgb8)
            memcpy(ctx->buf, rgb8 + (size_t)y * n, n);
        else {
            const float *src = img->rgb + (size_t)y * n;
            for (size_t i = 0; i < n; i++) ctx->buf[i] = image_quantize8(src[i]);
        }
        png_write_row(ctx->png, ctx->buf);
    }
    png_write_end(ctx->png, NULL);
    return 0;
}

int image__png_write(FILE *f, const image *img, const char *path, char *err, size_t errlen) {
    return image__png_write8(f, img, NULL, path, err, errlen);
}

int image__png_write8(FILE *f, const image *img, const unsigned char *rgb8, const char *path, char *err,
                      size_t errlen) {
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.buf = malloc((size_t)img->width * 3u);
    ctx.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, on_png_error, on_png_warning);
    if (ctx.png) ctx.info = png_create_info_struct(ctx.png);
    if (!ctx.buf || !ctx.png || !ctx.info) {
        image__set_err(err, errlen, "%s: out of memory (PNG writer)", path);
        png_destroy_write_struct(ctx.png ? &ctx.png : NULL, ctx.info ? &ctx.info : NULL);
        free(ctx.buf);
        return -1;
    }
    int rc = png_write_inner(&ctx, f, img, rgb8);
    if (rc != 0) image__set_err(err, errlen, "%s: PNG encode error: %s", path, ctx.msg);
    png_destroy_write_struct(&ctx.png, &ctx.info);
    free(ctx.buf);
    return rc;
}

/* ---- read ---------------------------------------------------------------------------- */

/* One decoded row (ctx->buf: 8- or 16-bit RGB) of n pixels into the output, the pixels at x0,
 * x0 + dx, ... of image row y: interlaced files come as Adam7's seven reduced images. */
static void png_store_row(png_ctx *ctx, image *img, int is16, size_t y, size_t x0, size_t dx, size_t n) {
    size_t w = (size_t)img->width;
    const unsigned char *src = ctx->buf;
    if (ctx->out8) {
        unsigned char *dst = ctx->out8 + 3u * (y * w + x0);
        if (dx == 1)
            memcpy(dst, src, 3u * n);
        else
            for (size_t i = 0; i < n; i++, dst += 3u * dx) memcpy(dst, src + 3u * i, 3);
        return;
    }
    float *dst = img->rgb + 3u * (y * w + x0);
    const float *lut = image_srgb8_table();
    for (size_t i = 0; i < n; i++, dst += 3u * dx)
        for (size_t c = 0; c < 3; c++) {
            if (is16) {
                const unsigned char *q = src + 6u * i + 2u * c;
                unsigned v = (unsigned)q[0] << 8 | q[1]; /* big-endian */
                dst[c] = image_srgb_decode((float)((double)v / 65535.0));
            } else {
                dst[c] = lut[src[3u * i + c]];
            }
        }
}

/* Reads the header, then the pixels row by row straight into the output (the float image, or the
 * 8-bit codes where ctx->reserve says): the only whole-image allocation is the output itself. */
static int png_read_inner(png_ctx *ctx, FILE *f, image *img, const char *path, char *err, size_t errlen) {
    if (setjmp(png_jmpbuf(ctx->png))) return -1;
    png_init_io(ctx->png, f);
    /* lift libpng's own per-side limit (1e6) to the format maximum so that every oversized
   * image gets our explicit size check and message below */
    png_set_user_limits(ctx->png, 0x7fffffffu, 0x7fffffffu);
    png_read_info(ctx->png, ctx->info);

    png_uint_32 w = png_get_image_width(ctx->png, ctx->info);
    png_uint_32 h = png_get_image_height(ctx->png, ctx->info);
    int depth = png_get_bit_depth(ctx->png, ctx->info);
    if (ctx->reserve && depth == 16) {
        ctx->not8 = 1;
        return -1;
    }
    /* the output (float image or 8-bit codes); one row besides is not counted. Deflate packs at
   * most 1032 bytes into one, and a 1-bit image 8 pixels into a byte */
    if (image__claim_ok(path, "PNG", (long long)w, (long long)h, ctx->reserve ? 3.0 : 12.0, image__file_size(f),
                        8.0 * 1032.0, err, errlen)) {
        ctx->claim_refused = 1;
        return -1;
    }
    int ctype = png_get_color_type(ctx->png, ctx->info);

    /* normalise to 8- or 16-bit RGB without alpha */
    if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(ctx->png);
    if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(ctx->png);
    if (ctype == PNG_COLOR_TYPE_GRAY || ctype == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(ctx->png);
    /* alpha (including a tRNS chunk, which palette expansion turns into alpha) is dropped */
    if ((ctype & PNG_COLOR_MASK_ALPHA) || png_get_valid(ctx->png, ctx->info, PNG_INFO_tRNS))
        png_set_strip_alpha(ctx->png);
    /* no png_set_interlace_handling: libpng would need the whole image to assemble the passes;
   * each pass's rows are scattered into place here instead */
    int interlaced = png_get_interlace_type(ctx->png, ctx->info) == PNG_INTERLACE_ADAM7;
    png_read_update_info(ctx->png, ctx->info);

    int odepth = png_get_bit_depth(ctx->png, ctx->info);
    int ochan = png_get_channels(ctx->png, ctx->info);
    size_t rowbytes = png_get_rowbytes(ctx->png, ctx->info);
    if ((odepth != 8 && odepth != 16) || ochan != 3 || rowbytes != (size_t)w * 3u * (size_t)(odepth / 8)) {
        snprintf(ctx->msg, sizeof ctx->msg, "unsupported pixel layout (depth %d, %d channels)", odepth, ochan);
        return -1;
    }
    ctx->buf = malloc(rowbytes);
    if (ctx->reserve) {
        ctx->out8 = ctx->buf ? ctx->reserve(ctx->reserve_ctx, (int)w, (int)h) : NULL;
        img->width = (int)w;
        img->height = (int)h;
    }
    if (!ctx->buf || (ctx->reserve ? !ctx->out8 : image_init(img, (int)w, (int)h) != 0)) {
        snprintf(ctx->msg, sizeof ctx->msg, "out of memory for %lux%lu image", (unsigned long)w, (unsigned long)h);
        return -1;
    }
    for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
        size_t y0 = interlaced ? PNG_PASS_START_ROW(pass) : 0,
               dy = interlaced ? (size_t)1 << PNG_PASS_ROW_SHIFT(pass) : 1;
        size_t x0 = interlaced ? PNG_PASS_START_COL(pass) : 0,
               dx = interlaced ? (size_t)1 << PNG_PASS_COL_SHIFT(pass) : 1;
        size_t rows = interlaced ? PNG_PASS_ROWS(h, pass) : h, cols = interlaced ? PNG_PASS_COLS(w, pass) : w;
        if (rows == 0 || cols == 0) continue; /* libpng skips empty passes */
        for (size_t r = 0; r < rows; r++) {
            png_read_row(ctx->png, ctx->buf, NULL);
            png_store_row(ctx, img, odepth == 16, y0 + r * dy, x0, dx, cols);
        }
    }
    png_read_end(ctx->png, NULL);
    return 0;
}

/* Both readers: float (image__png_read) or 8-bit codes kept (reserve != NULL: 1 with the codes
 * where it put them, or 0 for a 16-bit file). */
static int png_read(FILE *f, image *img, image_reserve8_fn reserve, void *reserve_ctx, const char *path, char *err,
                    size_t errlen) {
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.reserve = reserve;
    ctx.reserve_ctx = reserve_ctx;
    img->width = img->height = 0;
    img->rgb = NULL;
    ctx.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_png_error, on_png_warning);
    if (ctx.png) ctx.info = png_create_info_struct(ctx.png);
    if (!ctx.png || !ctx.info) {
        image__set_err(err, errlen, "%s: out of memory (PNG reader)", path);
        png_destroy_read_struct(ctx.png ? &ctx.png : NULL, ctx.info ? &ctx.info : NULL, NULL);
        return -1;
    }
    int rc = png_read_inner(&ctx, f, img, path, err, errlen);
    if (rc != 0 && ctx.not8) {
        rc = 0; /* 16-bit: the caller reads it as floats */
    } else if (rc == 0 && reserve) {
        rc = 1;
    } else if (rc != 0) {
        const char *m = ctx.msg[0] ? ctx.msg : "unknown error";
        if (ctx.claim_refused)
            ;
        else if (strcmp(m, "Read Error") == 0)
            image__set_err(err, errlen, "%s: truncated or unreadable PNG data (%s)", path, m);
        else
            image__set_err(err, errlen, "%s: PNG decode error: %s", path, m);
        if (!reserve) image_free(img);
    }
    png_destroy_read_struct(&ctx.png, &ctx.info, NULL);
    free(ctx.buf);
    return rc;
}

int image__png_read(FILE *f, image *img, const char *path, char *err, size_t errlen) {
    return png_read(f, img, NULL, NULL, path, err, errlen);
}

int image__png_read8(FILE *f, image_reserve8_fn reserve, void *ctx, int *width, int *height, const char *path,
                     char *err, size_t errlen) {
    image size = {0, 0, NULL};
    int rc = png_read(f, &size, reserve, ctx, path, err, errlen);
    *width = rc == 1 ? size.width : 0;
    *height = rc == 1 ? size.height : 0;
    return rc;
}
