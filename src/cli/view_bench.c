/* caustic view --bench: the frame loop measured moving and still against caustic_render on the same
 * camera, and optionally the denoiser and the window's presents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "render_output.h"
#include "view_internal.h"
#include "view_window.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n ? (n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2])) : 0.0;
}

#define BENCH_DENOISE_RUNS 7
#define BENCH_PRESENTS     200

/* --bench-denoise: the time to denoise the current frame as the viewer does (read back the image
 * and its guides, filter), median of BENCH_DENOISE_RUNS after one untimed call (the filter's
 * set-up, if the still frames did not already pay it). */
static int bench_denoise(viewer *v, double *med, char *err, size_t errlen) {
    double t[BENCH_DENOISE_RUNS];
    for (int i = -1; i < BENCH_DENOISE_RUNS; ++i) {
        double t0 = cli_now();
        if (denoise_render(v->dn, v->r, 1, v->den, err, errlen)) return -1;
        if (i >= 0) t[i] = cli_now() - t0;
    }
    *med = median(t, BENCH_DENOISE_RUNS);
    return 0;
}

/* --bench-window: BENCH_PRESENTS presents of the current frame (texture upload, copy, readout,
 * present), each timed: the median (seconds) and the presents per second. */
static int bench_presents(viewer *v, double *med, double *per_second, char *err, size_t errlen) {
    double t[BENCH_PRESENTS], t0 = cli_now();
    for (int i = 0; i < BENCH_PRESENTS; ++i) {
        double ti = cli_now();
        view_event e;
        while (v->wo->poll(v->win, &e)) {}
        if (view_show(v, err, errlen)) return -1;
        t[i] = cli_now() - ti;
    }
    *per_second = BENCH_PRESENTS / (cli_now() - t0);
    *med = median(t, BENCH_PRESENTS);
    return 0;
}

/* --bench: the loop (in a window with --bench-window: every frame shown), moving (an orbit of 1
 * degree per frame) then still at the starting camera, and caustic_render over a fresh renderer
 * on that camera for as long. */
int view_bench(viewer *v, int frames, double seconds, char *err, size_t errlen) {
    double t0 = cli_now();
    long long spp_moving = 0;
    for (int f = 0; f < frames; ++f) {
        view_orbit(v, 3.49, 0.0); /* 0.005 rad per pixel of drag: ~1 degree */
        if (view_frame(v, NULL, MOVING_BUDGET, err, errlen) || (v->win && view_show(v, err, errlen))) return -1;
        spp_moving += caustic_renderer_spp(v->r); /* each frame starts a new image */
    }
    double moving_s = cli_now() - t0;
    /* still: back at the starting camera (the one caustic render sees without --camera), frames
     * keep coming with the still budget */
    v->cam = v->home;
    view_changed(v);
    if (view_frame(v, NULL, MOVING_BUDGET, err, errlen)) return -1;
    v->last_change = cli_now() - 1.0;
    int spp0 = caustic_renderer_spp(v->r), nframes = 0;
    double t1 = cli_now();
    while (cli_now() - t1 < seconds && caustic_renderer_spp(v->r) < v->opt.spp) {
        if (view_frame(v, NULL, STILL_BUDGET, err, errlen) || (v->win && view_show(v, err, errlen))) return -1;
        nframes++;
    }
    double still_s = cli_now() - t1;
    double px = (double)v->width * v->height;
    double view_rate = still_s > 0.0 ? (caustic_renderer_spp(v->r) - spp0) * px / still_s : 0.0;
    /* caustic render's loop on the same camera, options and device (time_limit 0 would be none) */
    if (seconds <= 0.0) seconds = 1e-3;
    caustic_options o = v->opt;
    o.width = v->width;
    o.height = v->height;
    o.time_limit = seconds;
    o.adaptive_depth = 0;
    caustic_renderer *r = caustic_renderer_create(v->scene, &o, err, errlen);
    if (!r) return -1;
    int rc = caustic_renderer_set_camera(r, &v->cam, err, errlen) || caustic_render(r, NULL, NULL, err, errlen);
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    caustic_renderer_free(r);
    if (rc) return -1;
    double render_rate = st.seconds > 0.0 ? (double)st.spp * px / st.seconds : 0.0;
    caustic_render_stats_get(v->r, &v->st);
    const char *sync = getenv("CAUSTIC_CUDA_SYNC_COPY");
    printf("view-bench: device=%s integrator=%s res=%dx%d gpu_tonemap=%d sync_copy=%d passes_sized=%d "
           "adaptive_depth=%d window=%d moving_frames=%d moving_fps=%.1f moving_spp_per_frame=%.2f "
           "still_frames=%d still_fps=%.1f still_Msamples/s=%.2f render_Msamples/s=%.2f still/render=%.3f",
           v->st.device, caustic_integrator_name(v->opt.integrator), v->width, v->height, v->gpu_tonemap,
           sync && *sync && strcmp(sync, "0"), !v->one_pass, v->adaptive_depth, v->win != NULL, frames,
           moving_s > 0.0 ? frames / moving_s : 0.0, frames ? (double)spp_moving / frames : 0.0, nframes,
           still_s > 0.0 ? nframes / still_s : 0.0, view_rate * 1e-6, render_rate * 1e-6,
           render_rate > 0.0 ? view_rate / render_rate : 0.0);
    if (v->denoise) {
        double med;
        if (bench_denoise(v, &med, err, errlen)) return -1;
        printf(" denoise_device=%s denoise_ms=%.1f", caustic_denoiser_device(v->dn), med * 1e3);
    }
    if (v->win) {
        double med, per_second;
        if (bench_presents(v, &med, &per_second, err, errlen)) return -1;
        printf(" present_ms=%.2f presents/s=%.1f sdl_renderer=%s", med * 1e3, per_second, v->wo->renderer(v->win));
    }
    printf("\n");
    return 0;
}
