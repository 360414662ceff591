/* libcaustic public API: scenes, options, progressive rendering in passes, images, checkpoints. */
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

struct caustic_scene {
    scene *s;
};

struct caustic_renderer {
    caustic_scene *scene;
    caustic_options opt; /* resolved (defaults filled in) */
    int width, height, spp_target, max_depth;
    camera_desc camera;     /* this renderer's camera (the scene's at creation) */
    kpass pass;             /* every pass's settings; the sample range is set per pass */
    const backend_ops *ops; /* the backend that renders (backend_table) */
    void *backend;
    kfilm film;                        /* host copy of the backend's film (images, checkpoints) */
    int film_stale;                    /* the backend has samples that the host copy lacks */
    float *image;                      /* current mean, refreshed by caustic_image */
    float *aov_out[CAUSTIC_AOV_COUNT]; /* current AOV means, refreshed by caustic_aov_image */
    int spp_done;
    double seconds; /* rendering time across calls */
    uint64_t rays, bad;
    uint64_t shadow_rays; /* of rays; not in checkpoints (counted from a resume on) */
    uint64_t samples;     /* pixel samples taken (fewer than spp x pixels with adaptive sampling) */
    atomic_int cancel;    /* caustic_cancel: the backends stop at their next safe point */
};

const char *caustic_version(void) { return CAUSTIC_VERSION; }

const char *const *caustic_builtin_scenes(void) { return scene_builtin_names(); }

int caustic_scene_load(caustic_scene **out, const char *path, char *err, size_t errlen) {
    return caustic_scene_load_ex(out, path, NULL, err, errlen);
}

void caustic_load_options_init(caustic_load_options *o) { memset(o, 0, sizeof *o); }

int caustic_scene_load_ex(caustic_scene **out, const char *path, const caustic_load_options *o, char *err,
                          size_t errlen) {
    *out = NULL;
    scene *s = NULL;
    struct stat st;
    int rc;
    int stat_errno = stat(path, &st) == 0 ? 0 : errno;
    if (stat_errno == 0) {
        char *json = NULL;
        void *log_user = NULL;
        lib_log_fn log_fn = lib_log_get(&log_user);
        int own = o && o->warning;
        scene_load_opts so = {o ? o->strict : 0, own ? o->warning : log_fn, own ? o->warning_user : log_user,
                              o && o->dump_scene ? &json : NULL, 0};
        rc = scene_load_file(&s, path, &so, err, errlen);
        if (rc == 0 && json && scene_dump_json(o->dump_scene, json, err, errlen)) rc = -1;
        free(json);
    } else {
        const char *const *names = scene_builtin_names();
        int builtin = 0;
        for (int i = 0; names[i]; ++i) builtin |= strcmp(names[i], path) == 0;
        if (builtin) {
            rc = scene_load_builtin(&s, path, err, errlen);
        } else if (stat_errno != ENOENT) {
            /* the file is there but cannot be reached (a symlink loop, a permission): say why */
            snprintf(err, errlen, "%s: %s", path, strerror(stat_errno));
            return -1;
        } else {
            snprintf(err, errlen,
                     "%s: no such file or built-in scene (built-ins: cornell, cornell-glass, rtow, smallvcm0-3)", path);
            return -1;
        }
    }
    if (rc) {
        scene_destroy(s);
        return -1;
    }
    return caustic_scene_wrap(out, s, err, errlen);
}

int caustic_scene_wrap_unprepared(caustic_scene **out, scene *s, char *err, size_t errlen) {
    *out = NULL;
    /* a CAUSTIC_ISA this CPU or build lacks: refused here, before any kernel is chosen */
    if (cpu_isa_check(err, errlen)) {
        scene_destroy(s);
        return -1;
    }
    caustic_scene *cs = malloc(sizeof(*cs));
    if (!cs) {
        scene_destroy(s);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->s = s;
    *out = cs;
    return 0;
}

int caustic_scene_wrap(caustic_scene **out, scene *s, char *err, size_t errlen) {
    if (caustic_scene_wrap_unprepared(out, s, err, errlen)) return -1;
    /* Once per scene: its BVH at the width of the CPU kernels that trace it (every renderer over
     * the scene shares it; the GPU's tree is built on first use, scene_bvh). */
    if (scene_prepare(s, cpu_kernels_get()->bvh_width, err, errlen)) {
        caustic_scene_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

scene *caustic_scene_internal(caustic_scene *cs) { return cs->s; }

void caustic_scene_free(caustic_scene *s) {
    if (!s) return;
    scene_destroy(s->s);
    free(s);
}

int caustic_scene_stats_get(const caustic_scene *cs, caustic_scene_stats *st) {
    const scene *s = cs->s;
    memset(st, 0, sizeof(*st));
    st->triangles = s->ntriangles;
    st->spheres = s->nspheres;
    st->quads = s->nquads;
    st->primitives = s->ntriangles + s->nspheres + s->nquads;
    st->materials = s->nmaterials;
    st->textures = s->ntextures;
    st->lights = s->nlights + (vis_black(s->env_radiance) ? 0 : 1);
    st->vertices = s->nvertices;
    st->bounds_lo[0] = s->bounds_lo.x;
    st->bounds_lo[1] = s->bounds_lo.y;
    st->bounds_lo[2] = s->bounds_lo.z;
    st->bounds_hi[0] = s->bounds_hi.x;
    st->bounds_hi[1] = s->bounds_hi.y;
    st->bounds_hi[2] = s->bounds_hi.z;
    st->bvh_nodes = s->bvh.nwnodes;
    st->bvh_leaves = s->bvh.nleaves;
    st->bvh_width = s->bvh.width;
    st->bvh_max_depth = s->bvh.max_depth;
    st->bvh_max_leaf = s->bvh.max_leaf;
    st->bvh_sah_cost = s->bvh.sah_cost;
    st->bvh_wide_sah_cost = s->bvh.wide_sah_cost;
    st->bvh_build_seconds = s->bvh.build_seconds;
    const kscene *k = &s->k;
    size_t bytes = s->bvh.nwnodes * bvh_wnode_size(s->bvh.width) + s->bvh.nleaf4 * sizeof(bvh_leaf4);
#define ARRAY_BYTES(type, name, count)                                                                                 \
    if (k->name) bytes += (size_t)(count) * sizeof(type);
    KSCENE_ARRAYS(ARRAY_BYTES)
#undef ARRAY_BYTES
    st->memory_bytes = bytes;
    st->width = s->camera.width;
    st->height = s->camera.height;
    st->spp = s->spp;
    st->max_depth = s->max_depth;
    return 0;
}

void caustic_options_init(caustic_options *o) {
    memset(o, 0, sizeof(*o));
    o->size = (uint32_t)sizeof(*o);
    o->max_depth = -1;
    o->seed = 1;
    o->schedule = CAUSTIC_SCHEDULE_TILES;
    o->sampler = CAUSTIC_SAMPLER_SOBOL;
}

/* Option names, indexed by the enum values of include/caustic.h. */
static const char *const schedule_names[] = {"tiles", "rows", "rows-static", "pixels"};
static const char *const device_names[] = {"auto", "cpu", "cuda"};
static const char *const gpu_mode_names[] = {"mega", "wavefront"};
static const char *const gpu_bvh_names[] = {"sah", "lbvh", "cwbvh"};
static const char *const integrator_names[] = {"pt", "lt", "bdpt", "ppm", "bpm", "vcm"};
static const char *const sampler_names[] = {"random", "stratified", "sobol"};
static const char *const aov_names[] = {"albedo", "normal", "depth", "samples", "variance"};
#define NAMES(a) (a), (int)(sizeof(a) / sizeof((a)[0]))
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))
_Static_assert(COUNT(schedule_names) == CAUSTIC_SCHEDULE_PIXELS + 1, "a name per caustic_schedule");
_Static_assert(COUNT(device_names) == CAUSTIC_DEVICE_CUDA + 1, "a name per caustic_device");
_Static_assert(COUNT(gpu_mode_names) == CAUSTIC_GPU_WAVEFRONT + 1, "a name per caustic_gpu_mode");
_Static_assert(COUNT(gpu_bvh_names) == CAUSTIC_GPU_BVH_CWBVH + 1, "a name per caustic_gpu_bvh");
_Static_assert(COUNT(integrator_names) == CAUSTIC_INTEGRATOR_VCM + 1, "a name per caustic_integrator");
_Static_assert(COUNT(sampler_names) == CAUSTIC_SAMPLER_SOBOL + 1, "a name per caustic_sampler");
_Static_assert(COUNT(aov_names) == CAUSTIC_AOV_COUNT, "a name per caustic_aov");

/* The public enums are passed to the library's internals by value (a cast): each pair agrees
 * member by member. */
#define SAME_VALUE(pub, internal) _Static_assert((int)(pub) == (int)(internal), #pub " == " #internal);
SAME_VALUE(CAUSTIC_SCHEDULE_TILES, CPU_TILES)
SAME_VALUE(CAUSTIC_SCHEDULE_ROWS, CPU_ROWS)
SAME_VALUE(CAUSTIC_SCHEDULE_ROWS_STATIC, CPU_ROWS_STATIC)
SAME_VALUE(CAUSTIC_SCHEDULE_PIXELS, CPU_PIXELS)
SAME_VALUE(CAUSTIC_SAMPLER_RANDOM, SAMPLER_RANDOM)
SAME_VALUE(CAUSTIC_SAMPLER_STRATIFIED, SAMPLER_STRATIFIED)
SAME_VALUE(CAUSTIC_SAMPLER_SOBOL, SAMPLER_SOBOL)
/* the bidirectional integrators are vcm_algorithm + 1 (backend_cpu.c, backend_cuda.c) */
SAME_VALUE(CAUSTIC_INTEGRATOR_LT - 1, VCM_ALG_LT)
SAME_VALUE(CAUSTIC_INTEGRATOR_BDPT - 1, VCM_ALG_BDPT)
SAME_VALUE(CAUSTIC_INTEGRATOR_PPM - 1, VCM_ALG_PPM)
SAME_VALUE(CAUSTIC_INTEGRATOR_BPM - 1, VCM_ALG_BPM)
SAME_VALUE(CAUSTIC_INTEGRATOR_VCM - 1, VCM_ALG_VCM)

/* The index of n in names, or -1. */
static int parse_name(const char *n, const char *const *names, int count) {
    for (int i = 0; i < count; ++i)
        if (!strcmp(n, names[i])) return i;
    return -1;
}

int caustic_parse_schedule(const char *n, caustic_schedule *out) {
    int i = parse_name(n, NAMES(schedule_names));
    if (i < 0) return -1;
    *out = (caustic_schedule)i;
    return 0;
}

int caustic_parse_device(const char *n, caustic_device *out) {
    int i = parse_name(n, NAMES(device_names));
    if (i < 0) return -1;
    *out = (caustic_device)i;
    return 0;
}

int caustic_options_set_device(caustic_options *o, const char *spec) {
    if (strncmp(spec, "cuda:", 5) != 0) {
        if (caustic_parse_device(spec, &o->device)) return -1;
        o->ngpus = 0;
        return 0;
    }
    int gpus[CAUSTIC_MAX_GPUS], n = 0;
    const char *c = spec + 5;
    for (;;) {
        char *end;
        if (*c < '0' || *c > '9' || n == CAUSTIC_MAX_GPUS) return -1;
        long g = strtol(c, &end, 10);
        if (g > 4096) return -1;
        gpus[n++] = (int)g;
        if (*end == 0) break;
        if (*end != ',') return -1;
        c = end + 1;
    }
    o->device = CAUSTIC_DEVICE_CUDA;
    o->ngpus = n;
    memcpy(o->gpus, gpus, (size_t)n * sizeof(int));
    return 0;
}

void caustic_describe_devices(char *buf, size_t n) { cuda_describe_devices(buf, n); }

const char *caustic_cpu_isa(char *err, size_t errlen) {
    static char desc[96];
    if (cpu_isa_check(err, errlen)) return NULL;
    const cpu_kernels *k = cpu_kernels_get();
    snprintf(desc, sizeof desc, "%s (%s)", k->name, k->desc);
    return desc;
}

int caustic_parse_gpu_mode(const char *n, caustic_gpu_mode *out) {
    int i = parse_name(n, NAMES(gpu_mode_names));
    if (i < 0) return -1;
    *out = (caustic_gpu_mode)i;
    return 0;
}

int caustic_parse_gpu_bvh(const char *n, caustic_gpu_bvh *out) {
    int i = parse_name(n, NAMES(gpu_bvh_names));
    if (i < 0) return -1;
    *out = (caustic_gpu_bvh)i;
    return 0;
}

int caustic_parse_integrator(const char *n, caustic_integrator *out) {
    int i = parse_name(n, NAMES(integrator_names));
    if (i < 0) return -1;
    *out = (caustic_integrator)i;
    return 0;
}
const char *caustic_integrator_name(caustic_integrator i) {
    return (int)i >= 0 && (int)i < (int)(sizeof integrator_names / sizeof integrator_names[0]) ? integrator_names[i]
                                                                                               : "?";
}

/* ---- AOVs ------------------------------------------------------------------------------------ */
/* The AOVs traced per sample into the film's AOV planes (kernel/aov.h); the others come from the
 * film's sums and counts. */
#define AOV_TRACED                                                                                                     \
    (CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_DEPTH))

int caustic_parse_aovs(const char *list, unsigned *mask) {
    unsigned m = 0;
    const char *p = list;
    if (!p) return -1;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < CAUSTIC_AOV_COUNT; ++i)
            if (strlen(aov_names[i]) == len && !strncmp(p, aov_names[i], len)) found = i;
        if (found < 0) return -1;
        m |= CAUSTIC_AOV_MASK(found);
        if (!p[len]) break;
        p += len + 1;
    }
    *mask = m;
    return 0;
}

const char *caustic_aov_name(caustic_aov a) { return (int)a >= 0 && a < CAUSTIC_AOV_COUNT ? aov_names[a] : "?"; }

int caustic_aov_channels(caustic_aov a) {
    return a == CAUSTIC_AOV_ALBEDO || a == CAUSTIC_AOV_NORMAL ? 3 : (int)a >= 0 && a < CAUSTIC_AOV_COUNT ? 1 : 0;
}

int caustic_parse_sampler(const char *n, caustic_sampler *out) {
    int i = parse_name(n, NAMES(sampler_names));
    if (i < 0) return -1;
    *out = (caustic_sampler)i;
    return 0;
}

/* Picks the first backend of the table that supports the renderer and starts it. A GPU backend
 * that fails to start hands over to the next entry unless the device was asked for. */
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

static int start_film(caustic_renderer *r, char *err, size_t errlen);

caustic_renderer *caustic_renderer_create(caustic_scene *cs, const caustic_options *opt, char *err, size_t errlen) {
    scene *s = cs->s;
    if (opt->size != sizeof(caustic_options)) {
        snprintf(err, errlen,
                 "caustic_options: size field %u, this library's options are %zu bytes: start from "
                 "caustic_options_init (a program built against another caustic.h, or options not initialised)",
                 (unsigned)opt->size, sizeof(caustic_options));
        return NULL;
    }
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

    if (start_film(r, err, errlen)) {
        caustic_renderer_free(r);
        return NULL;
    }
    return r;
}

static void desc_of(const caustic_renderer *r, const camera *cam, backend_desc *d) {
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

static void free_film(caustic_renderer *r) {
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
static int start_film(caustic_renderer *r, char *err, size_t errlen) {
    size_t n = (size_t)r->width * (size_t)r->height;
    r->image = calloc(3 * n, sizeof(float));
    if (film_host_alloc(&r->film, r->width, r->height, (r->opt.aovs & AOV_TRACED) != 0) || !r->image) {
        snprintf(err, errlen, "out of memory for a %dx%d image", r->width, r->height);
        return -1;
    }
    clear_stats(r);
    backend_desc d;
    desc_of(r, &r->pass.cam, &d);
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

static void vec_of(vec3 *v, const double a[3]) { *v = v3((float)a[0], (float)a[1], (float)a[2]); }
static void array_of(double a[3], vec3 v) {
    a[0] = v.x;
    a[1] = v.y;
    a[2] = v.z;
}

void api_camera_public(const camera_desc *d, caustic_camera *c) {
    array_of(c->eye, d->eye);
    array_of(c->lookat, d->lookat);
    array_of(c->up, d->up);
    c->fov_y = d->fovy_deg;
    c->lens_radius = d->aperture_radius;
    c->focus_distance = d->focus_distance;
}

void api_camera_internal(const caustic_camera *c, camera_desc *d) {
    vec_of(&d->eye, c->eye);
    vec_of(&d->lookat, c->lookat);
    vec_of(&d->up, c->up);
    d->fovy_deg = (float)c->fov_y;
    d->aperture_radius = (float)c->lens_radius;
    d->focus_distance = (float)c->focus_distance;
}

void caustic_renderer_get_camera(const caustic_renderer *r, caustic_camera *c) { api_camera_public(&r->camera, c); }

int caustic_renderer_set_camera(caustic_renderer *r, const caustic_camera *c, char *err, size_t errlen) {
    camera_desc d = r->camera;
    api_camera_internal(c, &d);
    camera cam;
    if (camera_from_desc(&d, r->width, r->height, &cam, err, errlen)) return -1;
    backend_desc bd;
    desc_of(r, &cam, &bd);
    if (r->ops->supports(&bd, err, errlen) <= 0) return -1; /* e.g. a lens for VCM */
    r->camera = d;
    r->pass.cam = cam;
    return caustic_renderer_reset(r, err, errlen);
}

int caustic_renderer_set_resolution(caustic_renderer *r, int width, int height, char *err, size_t errlen) {
    if (width <= 0 || height <= 0 || width > 16384 || height > 16384 || (int64_t)width * height > (1 << 26)) {
        snprintf(err, errlen, "resolution %dx%d is out of range (1..16384 per side, at most 2^26 pixels)", width,
                 height);
        return -1;
    }
    if (width == r->width && height == r->height) return caustic_renderer_reset(r, err, errlen);
    camera cam;
    if (camera_from_desc(&r->camera, width, height, &cam, err, errlen)) return -1;
    free_film(r);
    r->width = width;
    r->height = height;
    r->pass.cam = cam;
    /* on failure the renderer has no backend: only caustic_renderer_free may follow */
    return start_film(r, err, errlen);
}

int caustic_renderer_pick_depth(caustic_renderer *r, int x, int y, double *depth) {
    camera cam = r->pass.cam;
    if (x < 0 || y < 0 || x >= cam.width || y >= cam.height) return -1;
    cam.lens_radius = 0.0f; /* the ray through the lens centre */
    ray ray_ = camera_ray(&cam, x, y, v2(0.5f, 0.5f), v2(0.5f, 0.5f));
    hit h;
    surface sf;
    if (!cpu_kernels_get()->closest_surface(&r->scene->s->k, ray_, &h, &sf)) return -1;
    *depth = h.t * vdot(ray_.d, cam.forward);
    return 0;
}

/* The next pass's samples where passes are cut by count: as many as the film holds (doubling:
 * few passes), at least PASS_FIRST_PIXEL_SAMPLES pixel samples and at most PASS_PIXEL_SAMPLES. A
 * function of the image size and the samples done only, so a resumed render cuts as any run from
 * there. */
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

/* Brings the backend's film to the host copy (images, checkpoints). */
static int sync_film(caustic_renderer *r, char *err, size_t errlen) {
    if (!r->film_stale) return 0;
    if (r->ops->read_film(r->backend, &r->film, err, errlen)) return -1;
    r->film_stale = 0;
    return 0;
}

const float *caustic_image(caustic_renderer *r, int *width, int *height) {
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    char err[512];
    if (sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
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
    if (sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
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
        lib_log("caustic: out of memory for the %s AOV", aov_names[a]);
        return NULL;
    }
    char err[512];
    if (sync_film(r, err, sizeof err)) lib_log("caustic: %s", err);
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
        layers[nl].name = aov_names[a];
        layers[nl].channels = aov_channels[a];
        if (!(layers[nl].data = caustic_aov_image(r, (caustic_aov)a, NULL))) {
            snprintf(err, errlen, "%s: out of memory for the %s AOV", path, aov_names[a]);
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
            snprintf(err, errlen, "out of memory for the %s AOV", aov_names[a]);
            rc = -1;
            break;
        }
        char name[4096];
        int len = snprintf(name, sizeof name, "%.*s.%s%s", (int)stem, path, aov_names[a], dot);
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

/* ---- checkpoints (api/checkpoint.c): written to a temp file and renamed ---------------------- */
static void ckpt_settings_of(const caustic_renderer *r, ckpt_settings *st) {
    memset(st, 0, sizeof *st);
    st->pass = r->pass;
    st->pass.sample_begin = st->pass.sample_end = 0;
    /* the stratified sampler's pattern and --adaptive-depth's weights depend on the spp target;
     * the rest does not, so a render may resume with a higher target */
    if (!(r->pass.sampler == (int32_t)CAUSTIC_SAMPLER_STRATIFIED || r->opt.adaptive_depth)) st->pass.spp_total = 0;
    st->integrator = (int32_t)r->opt.integrator;
    st->merge_radius = r->opt.merge_radius;
    st->merge_alpha = r->opt.merge_alpha;
    st->merge_everywhere = r->opt.merge_everywhere;
    st->aov_planes = r->film.aov != NULL;
}

static int write_checkpoint(FILE *f, void *user, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    const caustic_renderer *r = user;
    ckpt_settings st;
    ckpt_settings_of(r, &st);
    ckpt_state state = {r->spp_done, r->spp_target, r->seconds, r->rays, r->bad, r->samples};
    return ckpt_write(f, &st, &state, &r->film); /* the flush that follows names an error */
}

int caustic_checkpoint_save(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    if (sync_film(r, err, errlen)) return -1;
    return file_write_atomic(path, "cannot write checkpoint", write_checkpoint, r, err, errlen);
}

int caustic_check_writable(const char *path, const char *what, char *err, size_t errlen) {
    return file_check_writable(path, what, err, errlen);
}

int caustic_checkpoint_load(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open checkpoint: %s", path, strerror(errno));
        return -1;
    }
    ckpt_settings mine;
    ckpt_settings_of(r, &mine);
    ckpt_state st;
    int rc = ckpt_read(f, path, &mine, r->spp_target, &r->film, &st, err, errlen);
    fclose(f);
    if (rc) return -1;
    if (r->ops->write_film(r->backend, &r->film, err, errlen)) return -1;
    r->film_stale = 0;
    r->spp_done = st.spp_done;
    r->seconds = st.seconds;
    r->rays = st.rays;
    r->shadow_rays = 0;
    r->bad = st.bad;
    r->samples = st.samples;
    return 0;
}

void caustic_renderer_free(caustic_renderer *r) {
    if (!r) return;
    free_film(r);
    free(r);
}
