/* The public face of src/image: display looks (exposure + tone map), image files, comparison
 * metrics and the denoiser, so that programs (the CLI included) need caustic.h only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "caustic.h"
#include "image/denoise.h"
#include "image/image.h"
#include "image/tonemap.h"

_Static_assert((int)CAUSTIC_TONEMAP_CLAMP == TONEMAP_CLAMP, "caustic_tonemap == kernel/tonemap.h");
_Static_assert((int)CAUSTIC_TONEMAP_ACES == TONEMAP_ACES, "caustic_tonemap == kernel/tonemap.h");
_Static_assert((int)CAUSTIC_TONEMAP_AGX == TONEMAP_AGX && TONEMAP_COUNT == 3, "caustic_tonemap == kernel/tonemap.h");

void caustic_look_init(caustic_look *l) {
    l->tonemap = CAUSTIC_TONEMAP_CLAMP;
    l->exposure = 0.0f;
}

void api_look_internal(const caustic_look *look, tonemap_settings *ts) {
    tonemap_settings_init(ts);
    if (!look) return;
    ts->op = (int)look->tonemap >= 0 && (int)look->tonemap < TONEMAP_COUNT ? (int)look->tonemap : TONEMAP_CLAMP;
    ts->exposure = look->exposure;
}

int caustic_parse_tonemap(const char *name, caustic_tonemap *out) {
    int op;
    if (tonemap_parse(name, &op)) return -1;
    *out = (caustic_tonemap)op;
    return 0;
}

const char *caustic_tonemap_name(caustic_tonemap t) { return tonemap_name((int)t); }

void caustic_tonemap_rgb8(const caustic_look *look, const float *rgb, size_t npixels, unsigned char *out) {
    tonemap_settings ts;
    api_look_internal(look, &ts);
    tonemap_to_rgb8(&ts, rgb, npixels, out);
}

/* caustic_rgb_image and image have the same members: converted member by member. */
static image internal_of(const caustic_rgb_image *c) {
    image i;
    i.width = c->width;
    i.height = c->height;
    i.rgb = c->rgb;
    return i;
}

static void public_of(const image *i, caustic_rgb_image *c) {
    c->width = i->width;
    c->height = i->height;
    c->rgb = i->rgb;
}

int caustic_image_init(caustic_rgb_image *img, int width, int height, char *err, size_t errlen) {
    image i;
    if (image_init(&i, width, height)) {
        snprintf(err, errlen, "cannot allocate a %dx%d image", width, height);
        public_of(&i, img);
        return -1;
    }
    public_of(&i, img);
    return 0;
}

void caustic_image_free(caustic_rgb_image *img) {
    if (!img) return;
    image i = internal_of(img);
    image_free(&i);
    public_of(&i, img);
}

int caustic_image_load(caustic_rgb_image *img, const char *path, char *err, size_t errlen) {
    image i;
    int rc = image_load(&i, path, err, errlen);
    public_of(&i, img);
    return rc;
}

int caustic_image_save(const caustic_rgb_image *img, const char *path, const caustic_look *look, int exr_float,
                       char *err, size_t errlen) {
    image i = internal_of(img);
    if (image_format_from_path(path) != IMAGE_FMT_PNG) return image_save(&i, path, exr_float, err, errlen);
    tonemap_settings ts;
    api_look_internal(look, &ts);
    return tonemap_save(&i, path, &ts, err, errlen);
}

int caustic_image_save_rgb8(const unsigned char *rgb8, int width, int height, const char *path, char *err,
                            size_t errlen) {
    return image_save_png8(rgb8, width, height, path, err, errlen);
}

int caustic_image_compare(const caustic_rgb_image *a, const caustic_rgb_image *b, caustic_image_metrics *m, char *err,
                          size_t errlen) {
    image ia = internal_of(a), ib = internal_of(b);
    image_metrics im;
    if (image_compare(&ia, &ib, &im, err, errlen)) return -1;
    m->ae = im.ae;
    m->rmse = im.rmse;
    m->psnr = im.psnr;
    m->ssim = im.ssim;
    return 0;
}

/* ---- denoising ------------------------------------------------------------------------------ */
struct caustic_denoiser {
    denoiser *d;
};

int caustic_denoise_load(char *err, size_t errlen) { return denoise_load(err, errlen); }

caustic_denoiser *caustic_denoiser_create(char *err, size_t errlen) {
    return caustic_denoiser_create_on(CAUSTIC_DENOISE_AUTO, err, errlen);
}

_Static_assert((int)CAUSTIC_DENOISE_AUTO == (int)DENOISE_DEVICE_AUTO &&
                   (int)CAUSTIC_DENOISE_CPU == (int)DENOISE_DEVICE_CPU &&
                   (int)CAUSTIC_DENOISE_CUDA == (int)DENOISE_DEVICE_CUDA,
               "caustic_denoise_device == denoise_device");

caustic_denoiser *caustic_denoiser_create_on(caustic_denoise_device device, char *err, size_t errlen) {
    caustic_denoiser *cd = malloc(sizeof *cd);
    if (!cd) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cd->d = denoiser_create((denoise_device)device, err, errlen);
    if (!cd->d) {
        free(cd);
        return NULL;
    }
    return cd;
}

int caustic_denoise(caustic_denoiser *d, const float *color, const float *albedo, const float *normal, int width,
                    int height, float *out, char *err, size_t errlen) {
    denoise_guides g;
    g.albedo = albedo;
    g.normal = normal;
    return denoiser_run(d->d, color, albedo || normal ? &g : NULL, width, height, out, err, errlen);
}

const char *caustic_denoiser_device(const caustic_denoiser *d) { return denoiser_device_name(d->d); }

void caustic_denoiser_free(caustic_denoiser *d) {
    if (!d) return;
    denoiser_free(d->d);
    free(d);
}
