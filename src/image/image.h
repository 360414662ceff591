/* caustic image module: float RGB image buffers, PNG/EXR/PFM I/O, comparison metrics.
 *
 * Pixels are linear RGB, 3 floats per pixel, row-major, top row first:
 *   img->rgb[3 * ((size_t)y * width + x) + c]   (c = 0 R, 1 G, 2 B)
 *
 * Error reporting: functions taking (char *err, size_t errlen) write a single line
 * (no trailing newline) naming the file and the problem when they fail. err may be NULL
 * or errlen 0, in which case nothing is written.
 */
#ifndef CAUSTIC_IMAGE_H
#define CAUSTIC_IMAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest accepted image: per side and in total. Anything larger is rejected by
 * image_init and image_load (protects against absurd headers and size overflow). */
#define IMAGE_MAX_DIM    65536
#define IMAGE_MAX_PIXELS (1LL << 28)

/* The memory one decoded image may take (the float image and the decoder's buffers), checked
 * against the file header's claim before anything is allocated: CAUSTIC_IMAGE_MEMORY in bytes
 * (suffix K, M or G for KiB, MiB, GiB), default IMAGE_MEMORY_DEFAULT (1 GiB). 0 with a message
 * in err when the variable is not a size. */
#define IMAGE_MEMORY_DEFAULT (1ULL << 30)
unsigned long long image_memory_limit(char *err, size_t errlen);
/* The same cap for anything held per pixel of an image besides the image (an environment map's
 * sampling tables): 0 when `bytes` fit, else -1 with "PATH: WHAT needs N MiB PURPOSE, over the
 * limit of ..." in err. */
int image_memory_fits(double bytes, const char *path, const char *what, const char *purpose, char *err, size_t errlen);

typedef struct image {
    int width, height;
    float *rgb; /* linear RGB, 3 floats/pixel, row-major, top row first */
} image;

/* Allocates width*height zeroed pixels. Returns 0, or -1 on a bad size (<= 0, larger than
 * IMAGE_MAX_DIM / IMAGE_MAX_PIXELS) or allocation failure; on failure *img is empty
 * ({0, 0, NULL}). */
int image_init(image *img, int width, int height);

/* Frees the pixels and resets *img to {0, 0, NULL}. Safe on NULL and on an empty image. */
void image_free(image *img);

typedef enum { IMAGE_FMT_UNKNOWN, IMAGE_FMT_PNG, IMAGE_FMT_EXR, IMAGE_FMT_PFM } image_format;

/* Format by file extension (".png", ".exr", ".pfm"), case-insensitive. */
image_format image_format_from_path(const char *path);

/* Writes img in the format chosen by the extension of path:
 *   PNG: 8-bit RGB, sRGB-encoded (clamp to [0,1], sRGB OETF, round to nearest), sRGB chunk.
 *   EXR: linear, ZIP-compressed, channels B,G,R; half by default, 32-bit float if exr_float.
 *   PFM: linear 32-bit float "PF", little-endian (scale -1.0), rows bottom-to-top.
 * The data go to "<path>.tmp.<pid>" which is then rename()d over path, so an interrupted
 * run never leaves a partial file at path; on any failure the temp file is removed.
 * Returns 0, or -1 with a one-line message in err. */
int image_save(const image *img, const char *path, int exr_float, char *err, size_t errlen);

/* A layer of a multi-layer EXR: channels "NAME.C" for each character C of `channels` (e.g.
 * name "albedo", channels "RGB": albedo.R, albedo.G, albedo.B), from data holding
 * strlen(channels) interleaved floats per pixel, stored as 32-bit float. */
typedef struct image_layer {
    const char *name;
    const char *channels;
    const float *data;
} image_layer;

/* Writes img (channels R, G, B, half) and the layers into one EXR file, atomically like
 * image_save. path must end in .exr. */
int image_save_exr_layers(const image *img, const image_layer *layers, int nlayers, const char *path, char *err,
                          size_t errlen);

/* Writes an already quantised 8-bit RGB image (width*height*3 bytes, e.g. tonemapped on the
 * GPU with image_quantize8's rule) as PNG, atomically like image_save. */
int image_save_png8(const unsigned char *rgb8, int width, int height, const char *path, char *err, size_t errlen);

/* Loads an image; the format is detected from the file's content (signature), not its name.
 *   PNG: 1/2/4/8/16-bit gray, gray+alpha, RGB, RGBA, palette; values are treated as
 *        sRGB-encoded and decoded to linear; alpha is dropped (not composited).
 *   EXR: single-part scanline or tiled; R,G,B channels (or Y, or a single channel as gray);
 *        half/float/uint converted to float.
 *   PFM: "PF" (RGB) and "Pf" (gray, replicated to RGB), either endianness.
 * *img is overwritten (not freed first); on failure it is left empty ({0, 0, NULL}).
 * Missing, unreadable, truncated, garbage files and sizes over IMAGE_MAX_DIM per side or
 * IMAGE_MAX_PIXELS in total fail with a one-line message in err. Returns 0 or -1. */
int image_load(image *img, const char *path, char *err, size_t errlen);

/* An 8-bit sRGB file (PNG of at most 8 bits a sample, JPEG) as its codes, RGB, 3 bytes a pixel
 * (textures keep them: a quarter of the floats' memory), decoded row by row straight to where
 * reserve(ctx, width, height) says, which is called once the header has passed the checks (the
 * memory cap counts those 3 bytes a pixel and nothing more) and may return NULL (out of memory).
 * 1 with the size, 0 when the file is of another kind (nothing reserved: read it with
 * image_load), -1 with a message as image_load gives; on -1 the reserved bytes hold garbage. */
typedef unsigned char *(*image_reserve8_fn)(void *ctx, int width, int height);
int image_load_srgb8(const char *path, image_reserve8_fn reserve, void *ctx, int *width, int *height, char *err,
                     size_t errlen);

/* Image comparison metrics, computed on the 8-bit sRGB-encoded values (image_quantize8),
 * i.e. what a viewer of the PNG sees. See docs/image-metrics.md and metrics.c:
 *   ae   number of pixels where any of R,G,B differs (ImageMagick `compare -metric AE`,
 *        fuzz 0)
 *   rmse sqrt(mean over all pixels and the 3 channels of (a-b)^2), in [0,255] units
 *        (divide by 255 for the normalised [0,1] value ImageMagick prints in brackets)
 *   psnr 20*log10(255/rmse) in dB; INFINITY when rmse == 0
 *   ssim mean SSIM (Wang et al. 2004; 11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03,
 *        L 255, windows fully inside the image), computed per channel, averaged over R,G,B */
typedef struct image_metrics {
    double ae, rmse, psnr, ssim;
} image_metrics;

/* Compares two images of the same size; -1 with a message if sizes differ or an image is
 * empty. */
int image_compare(const image *a, const image *b, image_metrics *m, char *err, size_t errlen);

/* sRGB transfer functions (IEC 61966-2-1), on [0,1]. Values outside are not clamped:
 * encode/decode are linear (slope 12.92) below the threshold and use the power curve above. */
float image_srgb_encode(float linear);
float image_srgb_decode(float srgb);

/* Linear value -> 8-bit sRGB code, exactly as the PNG writer does it: NaN -> 0,
 * clamp to [0,1], sRGB OETF, round to nearest. */
unsigned char image_quantize8(float linear);

/* The 256 codes of an 8-bit sRGB file decoded to linear, as every 8-bit reader decodes them (and
 * 8-bit textures on lookup). */
const float *image_srgb8_table(void);

/* Values that no light or reflectance can have, in an image used as a texture or environment:
 * non-finite and negative values are counted and replaced by 0 (image_sanitize); values above
 * IMAGE_HUGE_VALUE are counted (a warning: they are legal but usually a broken file). */
#define IMAGE_HUGE_VALUE 1e6f
typedef struct image_value_report {
    size_t nonfinite, negative, huge;
    float largest; /* the largest finite value */
} image_value_report;
void image_sanitize(image *img, image_value_report *r);

/* Mean Rec.709 luminance (0.2126 R + 0.7152 G + 0.0722 B) of the linear pixels;
 * 0 for an empty image. */
double image_luminance_mean(const image *img);

#ifdef __cplusplus
}
#endif

#endif /* CAUSTIC_IMAGE_H */
