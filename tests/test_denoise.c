/* The denoiser (image/denoise.c) on a real render: the Cornell box at 64x64 and 4 spp, denoised
 * on OIDN's CPU device, must be much closer to the 4096-spp reference than the noisy image, in
 * PSNR and SSIM; guided by the render's albedo and normal AOVs it must be closer still; a second
 * call of the same size reuses the filter. Skipped (77) where Open Image Denoise is not installed.
 *   test_denoise REFERENCE.pfm            the check above
 *   test_denoise --expect-missing         OIDN must be reported missing with a message (run with
 *                                         CAUSTIC_OIDN_LIB pointing nowhere)
 *   test_denoise --bench W H N [cpu|cuda|auto] [guided]
 *                                         not a test: the first call (device set-up, filter
 *                                         commit) and the median of N further calls on a WxH
 *                                         noisy image, with albedo and normal guides if asked
 *                                         (docs/performance-log.md) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "caustic.h"
#include "image/denoise.h"
#include "image/image.h"
#include "testing.h"
#include "util/timer.h"

/* What the guides must add at 4 spp on the 64x64 Cornell box (measured: see the printout). */
#define GUIDED_GAIN_DB 0.3

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench(int w, int h, int n, denoise_device dev, int guided) {
    char err[1024];
    if (denoise_load(err, sizeof err)) {
        printf("SKIP: %s\n", err);
        return 77;
    }
    float *img = malloc(sizeof(float) * 3 * (size_t)w * h), *out = malloc(sizeof(float) * 3 * (size_t)w * h);
    if (!img || !out || n < 1 || n > 1000) return 2;
    uint32_t state = 1;
    for (size_t i = 0; i < 3 * (size_t)w * h; ++i) { /* a gradient with heavy per-pixel noise */
        state = state * 1664525u + 1013904223u;
        img[i] = (float)(i % (3 * (size_t)w)) / (3.0f * w) * (float)(state >> 8) / (float)(1u << 23);
    }
    /* guides: a smooth albedo and normal field (their values do not change the work) */
    float *alb = malloc(sizeof(float) * 3 * (size_t)w * h), *nrm = malloc(sizeof(float) * 3 * (size_t)w * h);
    if (!alb || !nrm) return 2;
    for (size_t i = 0; i < (size_t)w * h; ++i) {
        float u = (float)(i % (size_t)w) / (float)w;
        alb[3 * i] = 0.2f + 0.6f * u;
        alb[3 * i + 1] = 0.5f;
        alb[3 * i + 2] = 0.8f - 0.6f * u;
        nrm[3 * i] = u - 0.5f;
        nrm[3 * i + 1] = 0.0f;
        nrm[3 * i + 2] = sqrtf(1.0f - (u - 0.5f) * (u - 0.5f));
    }
    denoise_guides g = {alb, nrm};
    const denoise_guides *gp = guided ? &g : NULL;
    double t0 = timer_now();
    denoiser *d = denoiser_create(dev, err, sizeof err);
    if (!d || denoiser_run(d, img, gp, w, h, out, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double first = timer_now() - t0;
    double *t = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i) {
        double a = timer_now();
        if (denoiser_run(d, img, gp, w, h, out, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        t[i] = timer_now() - a;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("denoise %dx%d%s on %s: first call (with set-up) %.3f s, then median of %d %.3f s (min %.3f, max %.3f)\n", w,
           h, guided ? " guided" : "", denoiser_device_name(d), first, n, t[n / 2], t[0], t[n - 1]);
    denoiser_free(d);
    free(t);
    free(alb);
    free(nrm);
    free(img);
    free(out);
    return 0;
}

int main(int argc, char **argv) {
    char err[1024] = "";
    if (argc >= 5 && !strcmp(argv[1], "--bench"))
        return bench(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
                     argc > 5 && !strcmp(argv[5], "auto")   ? DENOISE_DEVICE_AUTO
                     : argc > 5 && !strcmp(argv[5], "cuda") ? DENOISE_DEVICE_CUDA
                                                            : DENOISE_DEVICE_CPU,
                     argc > 6 && !strcmp(argv[6], "guided"));
    if (argc > 1 && !strcmp(argv[1], "--expect-missing")) {
        CHECK(denoise_load(err, sizeof err) != 0, "OIDN loaded from %s", denoise_library_path());
        CHECK(strstr(err, "Open Image Denoise") != NULL, "message does not name OIDN: '%s'", err);
        CHECK(denoiser_create(DENOISE_DEVICE_CPU, err, sizeof err) == NULL, "a denoiser without OIDN");
        printf("missing OIDN reported as: %s\n", err);
        return test_result("test_denoise --expect-missing");
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_denoise REFERENCE.pfm | --expect-missing\n");
        return 2;
    }
    if (denoise_load(err, sizeof err)) {
        printf("SKIP: %s\n", err);
        return 77;
    }
    printf("OIDN: %s\n", denoise_library_path());
    image ref;
    if (image_load(&ref, argv[1], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const int W = ref.width, H = ref.height;

    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    caustic_options o;
    caustic_options_init(&o);
    o.width = W;
    o.height = H;
    o.spp = 4;
    o.seed = 7;
    o.device = CAUSTIC_DEVICE_CPU;
    o.aovs = CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL);
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    caustic_render(r, NULL, NULL, NULL, 0);
    image noisy, clean;
    CHECK(image_init(&noisy, W, H) == 0 && image_init(&clean, W, H) == 0, "image_init");
    memcpy(noisy.rgb, caustic_image(r, NULL, NULL), sizeof(float) * 3 * W * H);

    denoiser *d = denoiser_create(DENOISE_DEVICE_CPU, err, sizeof err);
    CHECK(d != NULL, "denoiser_create: %s", err);
    if (d) {
        CHECK(!strcmp(denoiser_device_name(d), "cpu"), "device %s", denoiser_device_name(d));
        double t0 = timer_now();
        CHECK(denoiser_run(d, noisy.rgb, NULL, W, H, clean.rgb, err, sizeof err) == 0, "denoise: %s", err);
        double t1 = timer_now();
        int finite = 1;
        for (int i = 0; i < 3 * W * H; ++i) finite &= isfinite(clean.rgb[i]) && clean.rgb[i] >= 0.0f;
        CHECK(finite, "denoised image has negative or non-finite values");
        image_metrics mn, md;
        CHECK(image_compare(&noisy, &ref, &mn, err, sizeof err) == 0, "%s", err);
        CHECK(image_compare(&clean, &ref, &md, err, sizeof err) == 0, "%s", err);
        printf("4 spp %dx%d: noisy PSNR %.2f dB SSIM %.4f; denoised PSNR %.2f dB SSIM %.4f (%.1f ms)\n", W, H, mn.psnr,
               mn.ssim, md.psnr, md.ssim, (t1 - t0) * 1e3);
        CHECK(md.psnr > mn.psnr + 5.0, "denoising gained only %.2f dB", md.psnr - mn.psnr);
        CHECK(md.ssim > mn.ssim + 0.1, "SSIM %.4f -> %.4f", mn.ssim, md.ssim);
        /* the mean brightness survives (a denoiser must not darken or brighten the image) */
        double ln = image_luminance_mean(&noisy), ld = image_luminance_mean(&clean);
        CHECK(fabs(ld - ln) < 0.05 * ln, "mean luminance %.4f -> %.4f", ln, ld);

        /* guided by the render's own albedo and normal AOVs: the edges and textures they show
         * need not be guessed from the noise, so the result is closer still to the reference;
         * then the plain call again after reconfiguring */
        image out2;
        CHECK(image_init(&out2, W, H) == 0, "init");
        denoise_guides g = {caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL),
                            caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL)};
        CHECK(g.albedo && g.normal, "albedo and normal AOVs");
        CHECK(denoiser_run(d, noisy.rgb, &g, W, H, out2.rgb, err, sizeof err) == 0, "denoise with guides: %s", err);
        image_metrics mg;
        CHECK(image_compare(&out2, &ref, &mg, err, sizeof err) == 0, "%s", err);
        printf("guided by the albedo and normal AOVs: PSNR %.2f dB SSIM %.4f\n", mg.psnr, mg.ssim);
        CHECK(mg.psnr > md.psnr + GUIDED_GAIN_DB, "guided denoise %.2f dB, unguided %.2f dB", mg.psnr, md.psnr);
        CHECK(denoiser_run(d, noisy.rgb, NULL, W, H, out2.rgb, err, sizeof err) == 0, "denoise again: %s", err);
        int same = memcmp(out2.rgb, clean.rgb, sizeof(float) * 3 * W * H) == 0;
        CHECK(same, "the same input denoised twice gives different images");
        /* in place */
        CHECK(denoiser_run(d, out2.rgb, NULL, W, H, out2.rgb, err, sizeof err) == 0, "in place: %s", err);
        image_free(&out2);
        denoiser_free(d);
    }
    image_free(&noisy);
    image_free(&clean);
    image_free(&ref);
    caustic_renderer_free(r);
    caustic_scene_free(cs);
    return test_result("test_denoise");
}
