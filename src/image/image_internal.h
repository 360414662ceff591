/* Private to src/image/: per-format readers/writers and shared helpers. */
#ifndef CAUSTIC_IMAGE_INTERNAL_H
#define CAUSTIC_IMAGE_INTERNAL_H

#include <stdio.h>

#include "image.h"

#if defined(__GNUC__)
#define IMAGE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IMAGE_PRINTF(a, b)
#endif

/* Formats a message into err (if err && errlen), folding any newlines into spaces so the
 * message stays on one line. */
void image__set_err(char *err, size_t errlen, const char *fmt, ...) IMAGE_PRINTF(3, 4);

/* 1 if width x height is within IMAGE_MAX_DIM / IMAGE_MAX_PIXELS and positive. */
int image__size_ok(long long width, long long height);

/* Before a reader allocates anything for a w x h image that its header claims: the size is in
 * range (image__size_ok), the decode (mem_per_pixel bytes a pixel: the float image plus the
 * decoder's own buffers) fits the memory cap (image_memory_limit), and a file of file_bytes can
 * hold that many pixels at the format's best compression (max_pixels_per_byte; 0: no bound).
 * 0, or -1 with "PATH: FORMAT ..." in err. */
int image__claim_ok(const char *path, const char *format, long long w, long long h, double mem_per_pixel,
                    long long file_bytes, double max_pixels_per_byte, char *err, size_t errlen);
/* The size of the open file f (-1 if unknown). */
long long image__file_size(FILE *f);

/* Writers: write img to the open file f (positioned at 0). path is only used in messages.
 * They do not close f. Return 0 or -1 (+ message). */
int image__png_write(FILE *f, const image *img, const char *path, char *err, size_t errlen);
/* rgb8 != NULL: writes those bytes instead of quantising img->rgb (img gives the size) */
int image__png_write8(FILE *f, const image *img, const unsigned char *rgb8, const char *path, char *err, size_t errlen);
/* EXR: the colour (R, G, B; half unless use_float) and nlayers layers (32-bit float) */
int image__exr_write(FILE *f, const image *img, int use_float, const image_layer *layers, int nlayers, const char *path,
                     char *err, size_t errlen);
int image__pfm_write(FILE *f, const image *img, const char *path, char *err, size_t errlen);

/* Readers: f is open at offset 0 (PNG, PFM); the EXR reader works on the path. On success
 * *img holds a freshly allocated image. On failure *img is empty. */
int image__png_read(FILE *f, image *img, const char *path, char *err, size_t errlen);
int image__exr_read(const char *path, image *img, char *err, size_t errlen);
int image__pfm_read(FILE *f, image *img, const char *path, char *err, size_t errlen);
/* Radiance RGBE (image_hdr.c, stb_image): f open at offset 0; linear. */
int image__hdr_read(FILE *f, image *img, const char *path, char *err, size_t errlen);
/* JPEG (image_jpeg.c, libjpeg): f open at offset 0; sRGB decoded to linear. */
int image__jpeg_read(FILE *f, image *img, const char *path, char *err, size_t errlen);
/* The same keeping the 8-bit sRGB codes (image_load_srgb8): 1 with the codes where reserve put
 * them, 0 for a file that is not 8-bit (16-bit PNG; nothing reserved), -1 with a message. */
int image__png_read8(FILE *f, image_reserve8_fn reserve, void *ctx, int *width, int *height, const char *path,
                     char *err, size_t errlen);
int image__jpeg_read8(FILE *f, image_reserve8_fn reserve, void *ctx, int *width, int *height, const char *path,
                      char *err, size_t errlen);

#endif
