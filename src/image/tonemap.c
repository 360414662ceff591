/* Tone mapping of whole images and display-image output (see tonemap.h). */
#include "image/tonemap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

static const char *const op_names[TONEMAP_COUNT] = {"clamp", "aces", "agx"};

void tonemap_settings_init(tonemap_settings *s) {
    s->op = TONEMAP_CLAMP;
    s->exposure = 0.0f;
}

int tonemap_parse(const char *name, int *op) {
    for (int i = 0; name && i < TONEMAP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0) {
            *op = i;
            return 0;
        }
    return -1;
}

const char *tonemap_name(int op) { return op >= 0 && op < TONEMAP_COUNT ? op_names[op] : "?"; }

int tonemap_is_identity(const tonemap_settings *s) { return s->op == TONEMAP_CLAMP && s->exposure == 0.0f; }

void tonemap_apply(const tonemap_settings *s, const float *rgb, size_t npixels, float *out) {
    float scale = exp2f(s->exposure);
    for (size_t i = 0; i < npixels; i++) tonemap_pixel(s->op, scale, rgb + 3 * i, out + 3 * i);
}

void tonemap_to_rgb8(const tonemap_settings *s, const float *rgb, size_t npixels, unsigned char *out) {
    float scale = exp2f(s->exposure);
    for (size_t i = 0; i < npixels; i++) {
        float d[3];
        tonemap_pixel(s->op, scale, rgb + 3 * i, d);
        for (int c = 0; c < 3; c++) out[3 * i + c] = image_quantize8(d[c]);
    }
}

int tonemap_save(const image *img, const char *path, const tonemap_settings *s, char *err, size_t errlen) {
    if (image_format_from_path(path) != IMAGE_FMT_PNG || !img || !img->rgb)
        return image_save(img, path, 0, err, errlen);
    size_t n = (size_t)img->width * (size_t)img->height;
    unsigned char *rgb8 = malloc(n * 3u);
    if (!rgb8) {
        image__set_err(err, errlen, "%s: out of memory for the 8-bit image", path);
        return -1;
    }
    tonemap_to_rgb8(s, img->rgb, n, rgb8);
    int rc = image_save_png8(rgb8, img->width, img->height, path, err, errlen);
    free(rgb8);
    return rc;
}
