/* libcaustic public API: options, the renderer and its passes (the rest of the API: renderer.h). */
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

#define CAUSTIC_VERSION          "0.1.0"
/* A pass should take about this long: short enough for responsive progress and time limits. */
#define PASS_TARGET_SECONDS      0.25
/* Passes cut by sample count (backend_ops.cuts_by_count) hold at most this many pixel samples:
 * about a second of path tracing on an H100 (dragon at 1080p: 256 spp), long enough that
 * backend_multi's and the distributed layer's transfers cost little beside a pass. */
#define PASS_PIXEL_SAMPLES       (1u << 29)
/* ... and at least this many (about 60 ms on an H100, 16 spp at 1080p): passes of one sample per
 * pixel to start with cost a 16-spp 1080p Cornell render 11 % (424 vs 474 Msamples/s, H100). */
#define PASS_FIRST_PIXEL_SAMPLES (1u << 25)

const char *caustic_version(void) { return CAUSTIC_VERSION; }

void caustic_options_init(caustic_options *o) {
    memset(o, 0, sizeof(*o));
    o->max_depth = -1;
    o->seed = 1;
    o->schedule = CAUSTIC_SCHEDULE_TILES;
    o->sampler = CAUSTIC_SAMPLER_SOBOL;
}

/* Option names, indexed by the enum values of include/caustic.h. */

static int start_backend(caustic_renderer *r, const backend_desc *d, char *err, size_t errlen) {
    const char *want = r->opt.device == CAUSTIC_DEVICE_CPU    ? "cpu"
                       : r->opt.device == CAUSTIC_DEVICE_CUDA ? "cuda"
                                                              : NULL;
    snprintf(err, errlen, "no backend renders --integrator %s", caustic_integrator_name(r->opt.integrator));
    for (int i = 0; backend_table[i]; ++i) {
        const backend_ops *ops = backend_table[i];
        if (want && ops->device && strcmp(ops->device, want)) continue; /* device NULL: a layer over all */
        char why[512];
        int sup = ops->supports(d, why, sizeof why);
        if (sup == 0) continue;
        if (sup < 0) {
            snprintf(err, errlen, "%s", why);
            if (!ops->device) return -1; /* a layer over all (MPI ranks) cannot be bypassed */
            continue;
        }
        r->backend = ops->create(d, why, sizeof why);
        if (r->backend) {
            r->ops = ops;
            return 0;
        }
        snprintf(err, errlen, "%s", why);
        if (want) return -1;
        if (backend_table[i + 1]) lib_log("caustic: %s; rendering on the CPU", why);
    }
    return -1;
}

/* The camera of the whole image, narrowed to the window [x0, x1) x [y0, y1): the same rays through
 * the window's pixels as through those of the whole image. camera_ray maps a pixel to
 * forward + right * sx + up * sy with sx, sy linear in the pixel: a smaller field of view and
 * aspect scale the window to its size, and an offset folded into `forward` (right and up are
 * orthogonal to it, so the focal plane stays where it was) moves it to its place. */
static void camera_crop(camera *c, const int crop[4]) {
    float w = (float)c->width, h = (float)c->height;
    float cw = (float)(crop[2] - crop[0]), ch = (float)(crop[3] - crop[1]);
    float t = c->tan_half_fovy, a = c->aspect;
    float bx = t * a * (2.0f * (float)crop[0] + cw - w) / w;
    float by = t * (h - 2.0f * (float)crop[1] - ch) / h;
    c->forward = vadd(c->forward, vadd(vscale(c->right, bx), vscale(c->up, by)));
    c->tan_half_fovy = t * ch / h;
    c->aspect = a * (cw / w) * (h / ch);
    c->width = crop[2] - crop[0];
    c->height = crop[3] - crop[1];
}

caustic_renderer *caustic_renderer_create(caustic_scene *cs, const caustic_options *opt, char *err, size_t errlen) {
    scene *s = cs->s;
    if (cpu_isa_check(err, errlen)) return NULL;
    /* a scene built in code is prepared by its first renderer (loaded scenes at load) */
    if (!s->prepared && scene_prepare(s, cpu_kernels_get()->bvh_width, err, errlen)) return NULL;
    caustic_renderer *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&r->cancel, 0);
    r->scene = cs;
    r->opt = *opt;
    r->width = opt->width > 0 ? opt->width : s->camera.width;
    r->height = opt->height > 0 ? opt->height : s->camera.height;
    r->spp_target = opt->spp > 0 ? opt->spp : s->spp;
    r->max_depth = opt->max_depth >= 0 ? opt->max_depth : s->max_depth;
    if (r->width <= 0 || r->height <= 0 || r->width > 16384 || r->height > 16384 ||
        (int64_t)r->width * r->height > (1 << 26)) {
        snprintf(err, errlen, "resolution %dx%d is out of range (1..16384 per side, at most 2^26 pixels)", r->width,
                 r->height);
        free(r);
        return NULL;
    }
    kpass *p = &r->pass;
    r->camera = s->camera;
    if (camera_from_desc(&r->camera, r->width, r->height, &p->cam, err, errlen)) {
        free(r);
        return NULL;
    }
    const int *cr = opt->crop;
    if (cr[0] || cr[1] || cr[2] || cr[3]) {
        if (cr[0] < 0 || cr[1] < 0 || cr[2] > r->width || cr[3] > r->height || cr[0] >= cr[2] || cr[1] >= cr[3]) {
            snprintf(err, errlen, "crop window %d,%d,%d,%d is not a window of the %dx%d image", cr[0], cr[1], cr[2],
                     cr[3], r->width, r->height);
            free(r);
            return NULL;
        }
        if (opt->integrator != CAUSTIC_INTEGRATOR_PT) {
            snprintf(err, errlen, "a crop window needs path tracing (--integrator pt)");
            free(r);
            return NULL;
        }
        camera_crop(&p->cam, cr);
        r->width = p->cam.width;
        r->height = p->cam.height;
    }
    if ((int)opt->integrator < 0 || (int)opt->integrator > CAUSTIC_INTEGRATOR_VCM) {
        snprintf(err, errlen, "unknown integrator %d", (int)opt->integrator);
        free(r);
        return NULL;
    }
    if (opt->integrator != CAUSTIC_INTEGRATOR_PT) {
        if (r->opt.merge_radius <= 0.0f) r->opt.merge_radius = 0.003f;
        if (r->opt.merge_alpha <= 0.0f) r->opt.merge_alpha = 0.75f;
        r->opt.merge_everywhere = r->opt.merge_everywhere != 0;
    } else if (opt->adaptive_depth && opt->adaptive > 0.0f) {
        /* the depth weights assume that every pixel takes the spp target's samples */
        snprintf(err, errlen, "--adaptive-depth and --adaptive cannot be combined");
        free(r);
        return NULL;
    }
    if (r->opt.adaptive > 0.0f && r->opt.adaptive_min_spp <= 0) r->opt.adaptive_min_spp = 16;
    if (opt->aovs >= CAUSTIC_AOV_MASK(CAUSTIC_AOV_COUNT)) {
        snprintf(err, errlen, "unknown AOV in mask 0x%x", opt->aovs);
        free(r);
        return NULL;
    }
    p->sampler = (int32_t)r->opt.sampler;
    p->seed = r->opt.seed;
    p->spp_total = (uint32_t)r->spp_target;
    p->max_depth = r->max_depth;
    p->rr_depth = KPASS_RR_DEPTH;
    p->depth_start = opt->adaptive_depth ? ADAPTIVE_DEPTH_START : 0;
    p->clamp = r->opt.clamp;
    p->adaptive_threshold = r->opt.adaptive;
    p->adaptive_min = (uint32_t)(r->opt.adaptive_min_spp > 0 ? r->opt.adaptive_min_spp : 0);

    if (api_start_film(r, err, errlen)) {
        caustic_renderer_free(r);
        return NULL;
    }
    return r;
}

void api_desc_of(const caustic_renderer *r, const camera *cam, backend_desc *d) {
    d->scene = r->scene->s;
    d->opt = &r->opt;
    d->width = cam->width;
    d->height = cam->height;
    d->cam = *cam;
    d->max_depth = r->max_depth;
    d->gpu = r->opt.ngpus > 0 ? r->opt.gpus[0] : 0;
    d->cancel = &r->cancel;
    d->aov = r->film.aov != NULL;
}

void api_free_film(caustic_renderer *r) {
    if (r->backend) r->ops->free(r->backend);
    r->backend = NULL;
    film_host_free(&r->film);
    free(r->image);
    for (int a = 0; a < CAUSTIC_AOV_COUNT; ++a) free(r->aov_out[a]);
    memset(r->aov_out, 0, sizeof r->aov_out);
    r->image = NULL;
}

static void clear_stats(caustic_renderer *r) {
    r->spp_done = 0;
    r->seconds = 0.0;
    r->rays = r->shadow_rays = r->bad = r->samples = 0;
    r->film_stale = 0;
}

/* The host film and a backend for r->width x r->height (r->pass.cam): a new, empty image. */
int api_start_film(caustic_renderer *r, char *err, size_t errlen) {
    size_t n = (size_t)r->width * (size_t)r->height;
    r->image = calloc(3 * n, sizeof(float));
    if (film_host_alloc(&r->film, r->width, r->height, (r->opt.aovs & AOV_TRACED) != 0) || !r->image) {
        snprintf(err, errlen, "out of memory for a %dx%d image", r->width, r->height);
        return -1;
    }
    clear_stats(r);
    backend_desc d;
    api_desc_of(r, &r->pass.cam, &d);
    return start_backend(r, &d, err, errlen);
}

/* One backend pass of `spp` samples per pixel after those taken. */
static int run_pass(caustic_renderer *r, int spp, char *err, size_t errlen) {
    kpass p = r->pass;
    p.sample_begin = (uint32_t)r->spp_done;
    p.sample_end = (uint32_t)(r->spp_done + spp);
    backend_stats ps;
    memset(&ps, 0, sizeof ps);
    char why[512];
    if (r->ops->pass(r->backend, &p, &ps, why, sizeof why)) {
        if (errlen) snprintf(err, errlen, "%s", why);
        return -1;
    }
    r->film_stale = 1;
    if (ps.stopped) atomic_store(&r->cancel, 1);
    r->spp_done += spp;
    r->rays += ps.rays;
    r->shadow_rays += ps.shadow_rays;
    r->bad += ps.bad_samples;
    r->samples += ps.samples;
    return 0;
}

int caustic_render_passes(caustic_renderer *r, int passes, int spp, char *err, size_t errlen) {
    if (r->ops->serve) {
        snprintf(err, errlen, "a distributed renderer renders with caustic_render");
        return -1;
    }
    if (passes < 0 || spp < 1) {
        snprintf(err, errlen, "caustic_render_passes: %d passes of %d spp", passes, spp);
        return -1;
    }
    int added = 0;
    for (int i = 0; i < passes && r->spp_done < r->spp_target; ++i) {
        int n = spp < r->spp_target - r->spp_done ? spp : r->spp_target - r->spp_done;
        double t0 = timer_now();
        if (run_pass(r, n, err, errlen)) return -1;
        r->seconds += timer_now() - t0;
        added += n;
    }
    return added;
}

int caustic_renderer_spp(const caustic_renderer *r) { return r->spp_done; }

int caustic_renderer_reset(caustic_renderer *r, char *err, size_t errlen) {
    size_t n = (size_t)r->width * (size_t)r->height;
    memset(r->film.sum, 0, 3 * n * sizeof(double));
    memset(r->film.count, 0, n * sizeof(uint32_t));
    memset(r->film.lum2, 0, n * sizeof(double));
    if (r->film.aov) memset(r->film.aov, 0, AOV_FLOATS * n * sizeof(double));
    clear_stats(r);
    /* an empty film written is the reset every backend supports; clear is the fast path */
    if (r->ops->clear) return r->ops->clear(r->backend, err, errlen);
    return r->ops->write_film(r->backend, &r->film, err, errlen);
}

static int count_pass(const caustic_renderer *r) {
    uint64_t pixels = (uint64_t)r->width * (uint64_t)r->height;
    uint64_t most = PASS_PIXEL_SAMPLES / pixels, least = PASS_FIRST_PIXEL_SAMPLES / pixels;
    uint64_t n = r->spp_done > 0 ? (uint64_t)r->spp_done : 1u;
    if (most < 1) most = 1;
    if (n < least) n = least;
    return (int)(n < most ? n : most);
}

int caustic_render(caustic_renderer *r, caustic_progress_fn progress, void *user, char *err, size_t errlen) {
    if (r->ops->serve) {
        /* a distributed render: only the coordinating process runs the pass loop */
        int rc = r->ops->serve(r->backend, err, errlen);
        if (rc <= 0) return rc;
    }
    const double pass_target = r->ops->pass_seconds > 0.0 ? r->ops->pass_seconds : PASS_TARGET_SECONDS;
    const int by_count = r->ops->cuts_by_count && r->ops->cuts_by_count(r->backend);
    const double t_start = timer_now();
    const double prior = r->seconds;
    double per_sample = 0.0; /* seconds per image-wide sample, measured */
    while (r->spp_done < r->spp_target && !atomic_load(&r->cancel)) {
        double elapsed = prior + (timer_now() - t_start);
        if (r->opt.time_limit > 0.0 && elapsed >= r->opt.time_limit) break;
        int pass = by_count ? count_pass(r) : 1;
        if (per_sample > 0.0) {
            if (!by_count) pass = (int)(pass_target / per_sample);
            /* a time limit cuts the last pass by time (no image is promised equal then) */
            if (r->opt.time_limit > 0.0) {
                int left = (int)((r->opt.time_limit - elapsed) / per_sample);
                if (left < pass) pass = left;
            }
            if (pass < 1) pass = 1;
        }
        if (pass > r->spp_target - r->spp_done) pass = r->spp_target - r->spp_done;
        double t0 = timer_now();
        if (run_pass(r, pass, err, errlen)) return -1;
        if (atomic_load(&r->cancel)) {
            /* a cancelled pass is not whole: its pixels keep what they took (their counts), the
             * whole passes stay the spp done, and a resumed render continues every pixel exactly */
            r->spp_done -= pass;
            r->seconds = prior + (timer_now() - t_start);
            break;
        }
        per_sample = (timer_now() - t0) / pass;
        r->seconds = prior + (timer_now() - t_start);
        if (progress) {
            caustic_progress pr;
            pr.spp_done = r->spp_done;
            pr.spp_target = r->spp_target;
            pr.elapsed = r->seconds;
            pr.time_limit = r->opt.time_limit;
            double f = (double)r->spp_done / r->spp_target;
            if (r->opt.time_limit > 0.0 && r->seconds / r->opt.time_limit > f) f = r->seconds / r->opt.time_limit;
            pr.fraction = f > 1.0 ? 1.0 : f;
            pr.samples_per_second = r->seconds > 0.0 ? (double)r->spp_done * r->width * r->height / r->seconds : 0.0;
            if (progress(user, &pr)) break;
        }
    }
    return 0;
}

void caustic_cancel(caustic_renderer *r) { atomic_store(&r->cancel, 1); }

void caustic_renderer_free(caustic_renderer *r) {
    if (!r) return;
    api_free_film(r);
    free(r);
}
