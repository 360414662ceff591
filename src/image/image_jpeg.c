/* JPEG reader through libjpeg (Debian: libjpeg62-turbo). Baseline and progressive; grayscale,
 * YCbCr/RGB and (Adobe) CMYK/YCCK are converted to RGB. Values are sRGB-encoded and decoded to
 * linear. libjpeg reports fatal errors through error_exit, which must not return: ours longjmps
 * back here and the message becomes a normal one-line error naming the file. A truncated file
 * (libjpeg's "premature end of data" warning, after which it would invent grey pixels) is an
 * error too; other corrupt-data warnings are tolerated like every viewer does. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "image_internal.h"

typedef struct jpeg_guard {
    struct jpeg_error_mgr mgr; /* first: libjpeg hands us a pointer to it */
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    int truncated;
} jpeg_guard;

static void guard_error_exit(j_common_ptr cinfo) {
    jpeg_guard *g = (jpeg_guard *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, g->msg);
    longjmp(g->jump, 1);
}

static void guard_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; /* trace messages */
    jpeg_guard *g = (jpeg_guard *)cinfo->err;
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) g->truncated = 1;
    cinfo->err->num_warnings++;
}

static void guard_output_message(j_common_ptr cinfo) { (void)cinfo; /* never print */ }

/* Everything the longjmp must find intact lives in this struct (not in locals). */
typedef struct jpeg_job {
    struct jpeg_decompress_struct cinfo;
    jpeg_guard guard;
    unsigned char *row;
    unsigned char *out8; /* image_load_srgb8: the 8-bit codes, where its reserve callback put them */
    const float *lut;    /* image_srgb8_table */
} jpeg_job;

/* Decodes to floats (img), or keeps the 8-bit codes (reserve != NULL: where it says; img gets the
 * size). */
static int jpeg_read(FILE *f, image *img, image_reserve8_fn reserve, void *ctx, const char *path, char *err,
                     size_t errlen) {
    img->width = img->height = 0;
    img->rgb = NULL;
    jpeg_job *job = calloc(1, sizeof *job);
    if (!job) {
        image__set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    job->lut = image_srgb8_table();

    job->cinfo.err = jpeg_std_error(&job->guard.mgr);
    job->guard.mgr.error_exit = guard_error_exit;
    job->guard.mgr.emit_message = guard_emit_message;
    job->guard.mgr.output_message = guard_output_message;
    if (setjmp(job->guard.jump)) {
        image__set_err(err, errlen, "%s: invalid JPEG: %s", path, job->guard.msg);
        goto fail;
    }
    jpeg_create_decompress(&job->cinfo);
    jpeg_stdio_src(&job->cinfo, f);
    jpeg_read_header(&job->cinfo, TRUE);
    if (job->guard.truncated) {
        image__set_err(err, errlen, "%s: truncated JPEG file", path);
        goto fail;
    }
    /* the float image, and a progressive file's coefficients (2 bytes a component); a Huffman
   * coded 8x8 block takes at least 2 bits (DC difference and end of block) */
    if (image__claim_ok(path, "JPEG", job->cinfo.image_width, job->cinfo.image_height,
                        (reserve ? 3.0 : 12.0) + (job->cinfo.progressive_mode ? 2.0 * job->cinfo.num_components : 0.0),
                        image__file_size(f), 256.0, err, errlen))
        goto fail;
    int cmyk = job->cinfo.jpeg_color_space == JCS_CMYK || job->cinfo.jpeg_color_space == JCS_YCCK;
    job->cinfo.out_color_space = cmyk ? JCS_CMYK : (job->cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB);
    jpeg_start_decompress(&job->cinfo);
    int w = (int)job->cinfo.output_width, h = (int)job->cinfo.output_height, nc = job->cinfo.output_components;
    if (!image__size_ok(w, h) || (nc != 1 && nc != 3 && nc != 4)) {
        image__set_err(err, errlen, "%s: unsupported JPEG layout (%dx%d, %d components)", path, w, h, nc);
        goto fail;
    }
    if (reserve ? !(job->out8 = reserve(ctx, w, h)) : image_init(img, w, h) != 0) {
        image__set_err(err, errlen, "%s: out of memory for a %dx%d image", path, w, h);
        goto fail;
    }
    job->row = malloc((size_t)w * (size_t)nc);
    if (!job->row) {
        image__set_err(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    /* Adobe writes CMYK inverted; libjpeg passes it through, so value = ink-free amount */
    int inverted = cmyk && job->cinfo.saw_Adobe_marker;
    while (job->cinfo.output_scanline < job->cinfo.output_height) {
        size_t y = job->cinfo.output_scanline;
        JSAMPROW rows[1] = {job->row};
        if (jpeg_read_scanlines(&job->cinfo, rows, 1) != 1) break;
        if (job->guard.truncated) break;
        const unsigned char *src = job->row;
        for (int x = 0; x < w; x++) {
            unsigned char code[3];
            if (nc == 1) {
                code[0] = code[1] = code[2] = src[x];
            } else if (nc == 3) {
                for (int c = 0; c < 3; c++) code[c] = src[3 * x + c];
            } else {
                unsigned k = src[4 * x + 3];
                for (int c = 0; c < 3; c++) {
                    unsigned v = src[4 * x + c];
                    unsigned rgb = inverted ? (v * k + 127) / 255 : ((255 - v) * (255 - k) + 127) / 255;
                    code[c] = (unsigned char)(rgb > 255 ? 255 : rgb);
                }
            }
            size_t at = 3u * (y * (size_t)w + (size_t)x);
            for (int c = 0; c < 3; c++) {
                if (job->out8)
                    job->out8[at + (size_t)c] = code[c];
                else
                    img->rgb[at + (size_t)c] = job->lut[code[c]];
            }
        }
    }
    if (job->guard.truncated || job->cinfo.output_scanline < job->cinfo.output_height) {
        image__set_err(err, errlen, "%s: truncated JPEG file", path);
        goto fail;
    }
    /* the trailing markers do not matter; skip jpeg_finish_decompress's checks of them */
    jpeg_destroy_decompress(&job->cinfo);
    free(job->row);
    free(job);
    if (reserve) {
        img->width = w;
        img->height = h;
        return 1;
    }
    return 0;

fail:
    jpeg_destroy_decompress(&job->cinfo);
    free(job->row);
    free(job);
    image_free(img);
    return -1;
}

int image__jpeg_read(FILE *f, image *img, const char *path, char *err, size_t errlen) {
    return jpeg_read(f, img, NULL, NULL, path, err, errlen);
}

int image__jpeg_read8(FILE *f, image_reserve8_fn reserve, void *ctx, int *width, int *height, const char *path,
                      char *err, size_t errlen) {
    image size;
    int rc = jpeg_read(f, &size, reserve, ctx, path, err, errlen);
    *width = size.width;
    *height = size.height;
    return rc;
}
