/* The output side of `caustic render`: display images, previews, the denoised image. */
#include "render_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void render_output_init(render_output *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->path = path;
    caustic_look_init(&o->look);
    o->last_preview = cli_now();
    o->denoise_guides = 1;
}

int render_output_set_denoise(render_output *o, caustic_options *opt) {
    const char *dot = strrchr(o->path, '.'), *slash = strrchr(o->path, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - o->path) : strlen(o->path);
    int n = snprintf(o->denoised_path, sizeof o->denoised_path, "%.*s.denoised%s", (int)stem, o->path, o->path + stem);
    if (n < 0 || (size_t)n >= sizeof o->denoised_path) return -1;
    /* say it before the render, not after it */
    char why[1024];
    if (caustic_denoise_load(why, sizeof why))
        fprintf(stderr, "caustic: --denoise: %s; rendering without denoising\n", why);
    else
        o->denoise = 1;
    if (o->denoise && o->denoise_guides)
        opt->aovs |= CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL);
    return 0;
}

/* through the library: a GPU render is tone-mapped on the GPU */
static int save(const render_output *o, caustic_renderer *r, const char *path, char *err, size_t errlen) {
    return caustic_save_image_look(r, path, &o->look, err, errlen);
}

void render_output_preview(render_output *o, caustic_renderer *r, double now) {
    if (o->preview_every <= 0.0 || now - o->last_preview < o->preview_every) return;
    char err[1024];
    if (save(o, r, o->path, err, sizeof err)) {
        if (!o->preview_failed) fprintf(stderr, "\ncaustic: preview: %s\n", err);
        o->preview_failed = 1;
    } else
        o->previews++;
    o->last_preview = cli_now();
}

caustic_denoiser *denoiser_for(caustic_renderer *r, char *why, size_t n) {
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    if (st.device && !strcmp(st.device, "cuda")) {
        caustic_denoiser *d = caustic_denoiser_create_on(CAUSTIC_DENOISE_CUDA, why, n);
        if (d) return d;
        fprintf(stderr, "caustic: denoiser: %s; denoising on the CPU\n", why);
    }
    return caustic_denoiser_create_on(CAUSTIC_DENOISE_CPU, why, n);
}

int denoise_render(caustic_denoiser *d, caustic_renderer *r, int guided, float *out, char *err, size_t errlen) {
    int w, h;
    const float *noisy = caustic_image(r, &w, &h);
    const float *albedo = guided ? caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL) : NULL;
    const float *normal = albedo ? caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL) : NULL;
    return caustic_denoise(d, noisy, albedo, normal, w, h, out, err, errlen);
}

static int save_denoised(render_output *o, caustic_renderer *r, char *err, size_t errlen) {
    char why[1024];
    caustic_denoiser *d = denoiser_for(r, why, sizeof why);
    if (!d) {
        fprintf(stderr, "caustic: --denoise: %s; wrote the noisy image only\n", why);
        return 0;
    }
    caustic_rgb_image clean;
    int w, h;
    caustic_image(r, &w, &h);
    if (caustic_image_init(&clean, w, h, err, errlen)) {
        caustic_denoiser_free(d);
        return -1;
    }
    double t0 = cli_now();
    int rc = denoise_render(d, r, o->denoise_guides, clean.rgb, err, errlen);
    o->denoise_seconds = cli_now() - t0;
    snprintf(o->denoise_device, sizeof o->denoise_device, "%s", caustic_denoiser_device(d));
    caustic_denoiser_free(d);
    if (rc == 0) rc = caustic_image_save(&clean, o->denoised_path, &o->look, 0, err, errlen);
    if (rc == 0) o->denoised = 1;
    caustic_image_free(&clean);
    return rc;
}

int render_output_save(render_output *o, caustic_renderer *r, char *err, size_t errlen) {
    int rc = save(o, r, o->path, err, errlen);
    if (rc == 0 && o->aovs) rc = caustic_save_aovs(r, o->path, o->aovs, err, errlen);
    if (o->denoise) {
        char err2[1024];
        if (save_denoised(o, r, err2, sizeof err2)) {
            if (rc == 0)
                snprintf(err, errlen, "%s", err2);
            else
                fprintf(stderr, "caustic: %s\n", err2);
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
            used += (size_t)snprintf(buf + used, n - used, "%s%s", first ? " aovs=" : ",",
                                     caustic_aov_name((caustic_aov)a));
            first = 0;
        }
    if (o->denoised && used < n)
        snprintf(buf + used, n - used, " denoised=%s denoise_s=%.3f denoise_device=%s denoise_guides=%s",
                 o->denoised_path, o->denoise_seconds, o->denoise_device, o->denoise_guides ? "albedo,normal" : "none");
}
