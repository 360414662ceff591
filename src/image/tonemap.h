/* Exposure and tone mapping for 8-bit (display) outputs: PNG files, live previews, and later the
 * viewer's frames. The per-pixel transform is kernel/tonemap.h (shared with the GPU); this module
 * names the operators, applies them to whole images and writes display images. Linear outputs
 * (EXR, PFM) are written unchanged: no exposure, no curve. */
#ifndef CAUSTIC_IMAGE_TONEMAP_H
#define CAUSTIC_IMAGE_TONEMAP_H

#include <stddef.h>

#include "image/image.h"
#include "kernel/tonemap.h"

typedef struct tonemap_settings {
    int op;         /* TONEMAP_CLAMP (default), TONEMAP_ACES, TONEMAP_AGX */
    float exposure; /* EV: the scene-linear image is multiplied by 2^exposure (default 0) */
} tonemap_settings;

void tonemap_settings_init(tonemap_settings *s);
/* "clamp", "aces", "agx" -> TONEMAP_*; -1 for anything else */
int tonemap_parse(const char *name, int *op);
const char *tonemap_name(int op);
/* 1 for clamp at 0 EV: the display image is image_quantize8 of the linear one, as before */
int tonemap_is_identity(const tonemap_settings *s);

/* npixels scene-linear RGB pixels -> display-linear RGB in [0, 1] (out may equal rgb) */
void tonemap_apply(const tonemap_settings *s, const float *rgb, size_t npixels, float *out);
/* ... -> 8-bit sRGB codes (image_quantize8 of the display-linear value), 3 bytes per pixel */
void tonemap_to_rgb8(const tonemap_settings *s, const float *rgb, size_t npixels, unsigned char *out);

/* Saves img to path: a .png through the tone map (exposure, curve, sRGB, 8 bits), a .exr or
 * .pfm linear as image_save does. Atomic (temp file + rename) like image_save. */
int tonemap_save(const image *img, const char *path, const tonemap_settings *s, char *err, size_t errlen);

#endif
