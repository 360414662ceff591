/* libcaustic: what a renderer gives back: the image, sample counts, statistics, AOVs, 8-bit frames
 * and saved images. */
#include "caustic.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "api/renderer.h"
#include "api/backend.h"
#include "api/checkpoint.h"
#include "api/film_host.h"
#include "cpu/isa.h"
#include "cpu/render_cpu.h"
#include "cuda/render_cuda.h"
#include "image/image.h"
#include "image/tonemap.h"
#include "kernel/adaptive_depth.h"
#include "kernel/camera.h"
#include "kernel/sampler.h"
#include "kernel/vcm.h"
#include "scene/scene.h"
#include "util/file.h"
#include "util/log.h"
#include "util/timer.h"

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* Brings the backend's film to the host copy (images, checkpoints). */
int api_sync_film(caustic_renderer *r, char *err, size_t errlen) {
    if (!r->film_stale) return 0;
    if (r->ops->read_film(r->backend, &r->film, err, errlen)) return -1;
    r->film_stale = 0;
    return 0;
}

const float *caustic_image(caustic_renderer *r, int *width, int *height) {
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    char err[512];
    if (api_sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
    for (size_t i = 0; i < n; ++i) {
        uint32_t c = r->film.count[i / 3u];
        r->image[i] = c ? (float)(r->film.sum[i] / c) : 0.0f;
    }
    if (width) *width = r->width;
    if (height) *height = r->height;
    return r->image;
}

const uint32_t *caustic_sample_counts(caustic_renderer *r, int *width, int *height) {
    char err[512];
    if (api_sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
    if (width) *width = r->width;
    if (height) *height = r->height;
    return r->film.count;
}

void caustic_render_stats_get(const caustic_renderer *r, caustic_render_stats *st) {
    st->seconds = r->seconds;
    st->spp = r->spp_done;
    st->samples = r->samples;
    st->rays = r->rays;
    st->shadow_rays = r->shadow_rays;
    st->bad_samples = r->bad;
    st->threads = r->ops->threads(r->backend);
    st->device = r->ops->device ? r->ops->device : "mpi";
    st->kernel = r->ops->kernel ? r->ops->kernel(r->backend) : NULL;
    st->width = r->width;
    st->height = r->height;
}

const float *caustic_aov_image(caustic_renderer *r, caustic_aov a, int *channels) {
    if ((int)a < 0 || a >= CAUSTIC_AOV_COUNT || !(r->opt.aovs & CAUSTIC_AOV_MASK(a))) return NULL;
    size_t n = (size_t)r->width * (size_t)r->height;
    int nc = caustic_aov_channels(a);
    if (!r->aov_out[a] && !(r->aov_out[a] = malloc(n * (size_t)nc * sizeof(float)))) {
        lib_log("caustic: out of memory for the %s AOV", caustic_aov_name((caustic_aov)a));
        return NULL;
    }
    char err[512];
    if (api_sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
    float *out = r->aov_out[a];
    const double *v = r->film.aov;
    for (size_t i = 0; i < n; ++i) {
        uint32_t c = r->film.count[i];
        switch (a) {
        case CAUSTIC_AOV_ALBEDO:
        case CAUSTIC_AOV_NORMAL: {
            int at = a == CAUSTIC_AOV_ALBEDO ? AOV_ALBEDO : AOV_NORMAL;
            for (int k = 0; k < 3; ++k) out[3 * i + k] = c ? (float)(v[AOV_FLOATS * i + at + k] / c) : 0.0f;
            break;
        }
        case CAUSTIC_AOV_DEPTH: {
            double hits = v[AOV_FLOATS * i + AOV_HITS];
            out[i] = hits > 0.0 ? (float)(v[AOV_FLOATS * i + AOV_DEPTH] / hits) : INFINITY;
            break;
        }
        case CAUSTIC_AOV_SAMPLES: out[i] = (float)c; break;
        case CAUSTIC_AOV_VARIANCE: {
            double mean = c ? luminance_d(r->film.sum[3 * i], r->film.sum[3 * i + 1], r->film.sum[3 * i + 2]) / c : 0.0;
            double var = c >= 2 ? (r->film.lum2[i] - c * mean * mean) / ((double)c * (c - 1.0)) : 0.0;
            out[i] = var > 0.0 ? (float)var : 0.0f;
            break;
        }
        case CAUSTIC_AOV_COUNT: break;
        }
    }
    if (channels) *channels = nc;
    return out;
}

/* EXR channel letters of each AOV's layer */
static const char *const aov_channels[] = {"RGB", "XYZ", "Z", "Y", "Y"};
_Static_assert(COUNT(aov_channels) == CAUSTIC_AOV_COUNT, "channel letters per caustic_aov");

/* The image and every AOV the renderer computes in one EXR. */
static int save_exr_layers(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    image_layer layers[CAUSTIC_AOV_COUNT];
    int nl = 0;
    for (int a = 0; a < CAUSTIC_AOV_COUNT; ++a) {
        if (!(r->opt.aovs & CAUSTIC_AOV_MASK(a))) continue;
        layers[nl].name = caustic_aov_name((caustic_aov)a);
        layers[nl].channels = aov_channels[a];
        if (!(layers[nl].data = caustic_aov_image(r, (caustic_aov)a, NULL))) {
            snprintf(err, errlen, "%s: out of memory for the %s AOV", path, caustic_aov_name((caustic_aov)a));
            return -1;
        }
        nl++;
    }
    image img;
    img.width = r->width;
    img.height = r->height;
    img.rgb = (float *)caustic_image(r, NULL, NULL);
    return image_save_exr_layers(&img, layers, nl, path, err, errlen);
}

/* An AOV as a display image (caustic_save_aovs): 3 channels, in [0, 1] for PNG. */
static void aov_display(caustic_aov a, const float *v, size_t n, int png, float *rgb) {
    float top = 0.0f; /* the largest finite value of a one-channel AOV */
    if (caustic_aov_channels(a) == 1)
        for (size_t i = 0; i < n; ++i)
            if (isfinite(v[i]) && v[i] > top) top = v[i];
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            float x = caustic_aov_channels(a) == 3 ? v[3 * i + k] : v[i];
            if (png && a == CAUSTIC_AOV_NORMAL)
                x = 0.5f * (x + 1.0f);
            else if (png && caustic_aov_channels(a) == 1)
                x = isfinite(x) ? (top > 0.0f ? x / top : 0.0f) : 1.0f;
            /* PNG encodes sRGB: the normal and the grey scales are stored as their code values */
            rgb[3 * i + k] = png && a != CAUSTIC_AOV_ALBEDO ? image_srgb_decode(x) : x;
        }
    }
}

int caustic_save_aovs(caustic_renderer *r, const char *path, unsigned mask, char *err, size_t errlen) {
    image_format fmt = image_format_from_path(path);
    if (fmt == IMAGE_FMT_UNKNOWN) {
        snprintf(err, errlen, "%s: unknown image format (use .png, .exr or .pfm)", path);
        return -1;
    }
    mask &= r->opt.aovs;
    if (fmt == IMAGE_FMT_EXR || !mask) return 0;
    const char *dot = strrchr(path, '.');
    size_t stem = (size_t)(dot - path);
    image img;
    if (image_init(&img, r->width, r->height)) {
        snprintf(err, errlen, "out of memory for the AOV images");
        return -1;
    }
    int rc = 0;
    for (int a = 0; a < CAUSTIC_AOV_COUNT && rc == 0; ++a) {
        if (!(mask & CAUSTIC_AOV_MASK(a))) continue;
        const float *v = caustic_aov_image(r, (caustic_aov)a, NULL);
        if (!v) {
            snprintf(err, errlen, "out of memory for the %s AOV", caustic_aov_name((caustic_aov)a));
            rc = -1;
            break;
        }
        char name[4096];
        int len = snprintf(name, sizeof name, "%.*s.%s%s", (int)stem, path, caustic_aov_name((caustic_aov)a), dot);
        if (len < 0 || (size_t)len >= sizeof name) {
            snprintf(err, errlen, "%s: name too long", path);
            rc = -1;
            break;
        }
        aov_display((caustic_aov)a, v, (size_t)r->width * (size_t)r->height, fmt == IMAGE_FMT_PNG, img.rgb);
        rc = image_save(&img, name, 0, err, errlen);
    }
    image_free(&img);
    return rc;
}

int caustic_image_rgb8(caustic_renderer *r, const caustic_look *look, unsigned char *rgb8, char *err, size_t errlen) {
    tonemap_settings ts;
    api_look_internal(look, &ts);
    if (r->ops->tonemap8) /* where the film lives (the GPU): only the bytes come back */
        return r->ops->tonemap8(r->backend, ts.op, exp2f(ts.exposure), rgb8, err, errlen);
    const float *rgb = caustic_image(r, NULL, NULL);
    tonemap_to_rgb8(&ts, rgb, (size_t)r->width * (size_t)r->height, rgb8);
    return 0;
}

int caustic_save_image_look(caustic_renderer *r, const char *path, const caustic_look *look, char *err, size_t errlen) {
    image_format f = image_format_from_path(path);
    if (f == IMAGE_FMT_UNKNOWN) {
        snprintf(err, errlen, "%s: unknown image format (use .png, .exr or .pfm)", path);
        return -1;
    }
    if (f == IMAGE_FMT_PNG) {
        size_t n = (size_t)r->width * (size_t)r->height * 3u;
        unsigned char *rgb8 = malloc(n);
        if (!rgb8) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        int rc = caustic_image_rgb8(r, look, rgb8, err, errlen);
        if (rc == 0) rc = image_save_png8(rgb8, r->width, r->height, path, err, errlen);
        free(rgb8);
        return rc;
    }
    if (r->opt.aovs && f == IMAGE_FMT_EXR) return save_exr_layers(r, path, err, errlen);
    image img;
    img.width = r->width;
    img.height = r->height;
    img.rgb = (float *)caustic_image(r, NULL, NULL);
    return image_save(&img, path, 0, err, errlen);
}

int caustic_save_image(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    return caustic_save_image_look(r, path, NULL, err, errlen);
}
