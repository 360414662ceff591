/* The output side of `caustic render`: display images, previews, the denoised image. */
#include "cli/render_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/denoise.h"
#include "image/image.h"
#include "util/timer.h"

void render_output_init(render_output *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->path = path;
    tonemap_settings_init(&o->look);
    o->last_preview = timer_now();
    o->denoise_guides = 1;
}

int render_output_set_denoise(render_output *o, caustic_options *opt) {
    const char *dot = strrchr(o->path, '.'), *slash = strrchr(o->path, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - o->path) : strlen(o->path);
    int n = snprintf(o->denoised_path, sizeof o->denoised_path, "%.*s.denoised%s", (int)stem, o->path, o->path + stem);
    if (n < 0 || (size_t)n >= sizeof o->denoised_path) return -1;
    /* say it before the render, not after it */
    char why[1024];
    if (denoise_load(why, sizeof why)) fprintf(stderr, "caustic: --denoise: %s; rendering without denoising\n", why);
    else o->denoise = 1;
    if (o->denoise && o->denoise_guides)
        opt->aovs |= CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL);
    return 0;
}

/* The renderer's current image as an image (not owned: the renderer's buffer). */
static image current(caustic_renderer *r) {
    image img;
    img.rgb = (float *)caustic_image(r, &img.width, &img.height);
    return img;
}

/* clamp at 0 EV through the library (a GPU render tone-maps on the GPU), as are linear outputs
 * (an EXR with its AOV layers), other looks here */
static int save(const render_output *o, caustic_renderer *r, const char *path, char *err, size_t errlen) {
    if (tonemap_is_identity(&o->look) || image_format_from_path(path) != IMAGE_FMT_PNG)
        return caustic_save_image(r, path, err, errlen);
    image img = current(r);
    return tonemap_save(&img, path, &o->look, err, errlen);
}

void render_output_preview(render_output *o, caustic_renderer *r, double now) {
    if (o->preview_every <= 0.0 || now - o->last_preview < o->preview_every) return;
    char err[1024];
    if (save(o, r, o->path, err, sizeof err)) {
        if (!o->preview_failed) fprintf(stderr, "\ncaustic: preview: %s\n", err);
        o->preview_failed = 1;
    } else o->previews++;
    o->last_preview = timer_now();
    o->denoise_guides = 1;
}

/* OIDN on the GPU where the render ran there (its CUDA device), else (or when that device does
 * not load: said once) on the CPU. */
static denoiser *open_denoiser(caustic_renderer *r, char *why, size_t n) {
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    if (st.device && !strcmp(st.device, "cuda")) {
        denoiser *d = denoiser_create(DENOISE_DEVICE_CUDA, why, n);
        if (d) return d;
        fprintf(stderr, "caustic: --denoise: %s; denoising on the CPU\n", why);
    }
    return denoiser_create(DENOISE_DEVICE_CPU, why, n);
}

static int save_denoised(render_output *o, caustic_renderer *r, char *err, size_t errlen) {
    char why[1024];
    denoiser *d = open_denoiser(r, why, sizeof why);
    if (!d) {
        fprintf(stderr, "caustic: --denoise: %s; wrote the noisy image only\n", why);
        return 0;
    }
    denoise_guides g = {NULL, NULL};
    if (o->denoise_guides) {
        g.albedo = caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL);
        g.normal = caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL);
    }
    image noisy = current(r), clean;
    if (image_init(&clean, noisy.width, noisy.height)) {
        denoiser_free(d);
        snprintf(err, errlen, "out of memory for the denoised image");
        return -1;
    }
    double t0 = timer_now();
    int rc = denoiser_run(d, noisy.rgb, g.albedo ? &g : NULL, noisy.width, noisy.height, clean.rgb, err, errlen);
    o->denoise_seconds = timer_now() - t0;
    snprintf(o->denoise_device, sizeof o->denoise_device, "%s", denoiser_device_name(d));
    denoiser_free(d);
    if (rc == 0) rc = tonemap_save(&clean, o->denoised_path, &o->look, err, errlen);
    if (rc == 0) o->denoised = 1;
    image_free(&clean);
    return rc;
}

int render_output_save(render_output *o, caustic_renderer *r, char *err, size_t errlen) {
    int rc = save(o, r, o->path, err, errlen);
    if (rc == 0 && o->aovs) rc = caustic_save_aovs(r, o->path, o->aovs, err, errlen);
    if (o->denoise) {
        char err2[1024];
        if (save_denoised(o, r, err2, sizeof err2)) {
            if (rc == 0) snprintf(err, errlen, "%s", err2);
            else fprintf(stderr, "caustic: %s\n", err2);
            rc = -1;
        }
    }
    return rc;
}

void render_output_summary(const render_output *o, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    if (o->preview_every > 0.0) used += (size_t)snprintf(buf + used, n - used, " previews=%d", o->previews);
    for (int a = 0, first = 1; a < CAUSTIC_AOV_COUNT && used < n; ++a)
        if (o->aovs & CAUSTIC_AOV_MASK(a)) {
            used += (size_t)snprintf(buf + used, n - used, "%s%s", first ? " aovs=" : ",", caustic_aov_name((caustic_aov)a));
            first = 0;
        }
    if (o->denoised && used < n)
        snprintf(buf + used, n - used, " denoised=%s denoise_s=%.3f denoise_device=%s denoise_guides=%s",
                 o->denoised_path, o->denoise_seconds, o->denoise_device, o->denoise_guides ? "albedo,normal" : "none");
}
