/* libcaustic public API: scenes, options, progressive rendering in passes, images, checkpoints. */
#include "caustic.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "cpu/render_cpu.h"
#include "cpu/isa.h"
#include "cpu/render_vcm.h"
#include "cuda/render_cuda.h"
#include "image/image.h"
#include "kernel/adaptive_depth.h"
#include "scene/scene.h"
#include "util/timer.h"

#define CAUSTIC_VERSION "0.1.0"
/* A pass should take about this long: short enough for responsive progress and time limits. */
#define PASS_TARGET_SECONDS 0.25

struct caustic_scene { scene *s; };

struct caustic_renderer {
    caustic_scene *scene;
    caustic_options opt;
    int width, height, spp_target, max_depth;
    int depth_start;         /* --adaptive-depth: the first samples' depth limit (0 = off) */
    double *accum;           /* running sums per pixel, in sample order */
    uint32_t *count;         /* samples per pixel */
    double *lum2;            /* per pixel: sum of squared sample luminance (adaptive sampling) */
    float *image;            /* current mean, refreshed by caustic_image */
    int spp_done;
    double seconds;          /* rendering time across calls */
    uint64_t rays, bad;
    uint64_t samples;        /* pixel samples taken (fewer than spp x pixels with adaptive sampling) */
    cpu_pool *pool;          /* CPU backend, or */
    cuda_renderer *gpu;      /* the CUDA backend (accum then lives on the GPU) */
    vcm_renderer *vcm;       /* the bidirectional integrators on the CPU, or */
    cuda_vcm *gvcm;          /* ... on the GPU (with gpu: its scene and accumulation) */
    int accum_stale;         /* the host copy of a GPU accumulation is out of date */
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
    if (stat(path, &st) == 0) {
        char *json = NULL;
        scene_load_opts so = {o ? o->strict : 0, o ? o->warning : NULL, o ? o->warning_user : NULL,
                              o && o->dump_scene ? &json : NULL};
        rc = scene_load_file(&s, path, &so, err, errlen);
        if (rc == 0 && json && scene_dump_json(o->dump_scene, json, err, errlen)) rc = -1;
        free(json);
    } else {
        const char *const *names = scene_builtin_names();
        int builtin = 0;
        for (int i = 0; names[i]; ++i) builtin |= strcmp(names[i], path) == 0;
        if (builtin) {
            rc = scene_load_builtin(&s, path, err, errlen);
        } else {
            snprintf(err, errlen, "%s: no such file or built-in scene (built-ins: cornell, cornell-glass, rtow, smallvcm0-3)", path);
            return -1;
        }
    }
    if (rc) { scene_destroy(s); return -1; }
    return caustic_scene_wrap(out, s, err, errlen);
}

int caustic_scene_wrap(caustic_scene **out, scene *s, char *err, size_t errlen) {
    *out = NULL;
    caustic_scene *cs = malloc(sizeof(*cs));
    if (!cs) { scene_destroy(s); snprintf(err, errlen, "out of memory"); return -1; }
    cs->s = s;
    /* Prepare with the file's settings so stats (BVH, lights) are available right away. */
    if (scene_prepare(s, s->camera.width, s->camera.height, s->max_depth, err, errlen)) {
        caustic_scene_free(cs);
        return -1;
    }
    *out = cs;
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
    st->bounds_lo[0] = s->bounds_lo.x; st->bounds_lo[1] = s->bounds_lo.y; st->bounds_lo[2] = s->bounds_lo.z;
    st->bounds_hi[0] = s->bounds_hi.x; st->bounds_hi[1] = s->bounds_hi.y; st->bounds_hi[2] = s->bounds_hi.z;
    st->bvh_nodes = s->bvh.nwnodes;
    st->bvh_leaves = s->bvh.nleaves;
    st->bvh_width = s->bvh.width;
    st->bvh_max_depth = s->bvh.max_depth;
    st->bvh_max_leaf = s->bvh.max_leaf;
    st->bvh_sah_cost = s->bvh.sah_cost;
    st->bvh_build_seconds = s->bvh.build_seconds;
    st->memory_bytes = s->ntriangles * sizeof(triangle) + s->nvertices * (sizeof(vec3) * 2 + sizeof(vec2)) +
                       s->nspheres * sizeof(sphere) + s->nquads * sizeof(quad) +
                       s->nmaterials * sizeof(material) + s->ntextures * sizeof(texture) +
                       s->ntexels * sizeof(float) + s->bvh.nwnodes * bvh_wnode_size(s->bvh.width) +
                       s->bvh.nleaf4 * sizeof(bvh_leaf4) + s->nlights * (sizeof(light) + sizeof(float)) +
                       st->primitives * sizeof(int32_t);
    st->width = s->camera.width;
    st->height = s->camera.height;
    st->spp = s->spp;
    st->max_depth = s->max_depth;
    return 0;
}

void caustic_options_init(caustic_options *o) {
    memset(o, 0, sizeof(*o));
    o->max_depth = -1;
    o->seed = 1;
    o->schedule = CAUSTIC_SCHEDULE_TILES;
    o->sampler = CAUSTIC_SAMPLER_SOBOL;
}

/* Option names, indexed by the enum values of include/caustic.h. */
static const char *const schedule_names[] = {"tiles", "rows", "rows-static", "pixels"};
static const char *const device_names[] = {"auto", "cpu", "cuda"};
static const char *const gpu_mode_names[] = {"mega", "wavefront"};
static const char *const gpu_bvh_names[] = {"sah", "lbvh"};
static const char *const integrator_names[] = {"pt", "lt", "bdpt", "ppm", "bpm", "vcm"};
static const char *const sampler_names[] = {"random", "stratified", "sobol"};
#define NAMES(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

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
    return (int)i >= 0 && (int)i < (int)(sizeof integrator_names / sizeof integrator_names[0]) ? integrator_names[i] : "?";
}

int caustic_parse_sampler(const char *n, caustic_sampler *out) {
    int i = parse_name(n, NAMES(sampler_names));
    if (i < 0) return -1;
    *out = (caustic_sampler)i;
    return 0;
}

caustic_renderer *caustic_renderer_create(caustic_scene *cs, const caustic_options *opt, char *err, size_t errlen) {
    scene *s = cs->s;
    caustic_renderer *r = calloc(1, sizeof(*r));
    if (!r) { snprintf(err, errlen, "out of memory"); return NULL; }
    r->scene = cs;
    r->opt = *opt;
    r->width = opt->width > 0 ? opt->width : s->camera.width;
    r->height = opt->height > 0 ? opt->height : s->camera.height;
    r->spp_target = opt->spp > 0 ? opt->spp : s->spp;
    r->max_depth = opt->max_depth >= 0 ? opt->max_depth : s->max_depth;
    if (r->width <= 0 || r->height <= 0 || r->width > 16384 || r->height > 16384 ||
        (int64_t)r->width * r->height > (1 << 26)) {
        snprintf(err, errlen, "resolution %dx%d is out of range (1..16384 per side, at most 2^26 pixels)", r->width, r->height);
        free(r);
        return NULL;
    }
    if (scene_prepare(s, r->width, r->height, r->max_depth, err, errlen)) { free(r); return NULL; }
    int bidir = opt->integrator != CAUSTIC_INTEGRATOR_PT;
    if (bidir) {
        const char *name = caustic_integrator_name(opt->integrator);
        const char *why = opt->adaptive > 0.0f ? "does not support adaptive sampling"
                        : opt->adaptive_depth ? "does not support --adaptive-depth"
                        : opt->clamp > 0.0f ? "does not support the firefly clamp"
                        : s->k.cam.lens_radius > 0.0f ? "supports pinhole cameras only (the scene has an APERTURE)"
                        : NULL;
        if (why) {
            snprintf(err, errlen, "--integrator %s %s", name, why);
            free(r);
            return NULL;
        }
        if ((int)opt->integrator < 0 || (int)opt->integrator > CAUSTIC_INTEGRATOR_VCM) {
            snprintf(err, errlen, "unknown integrator %d", (int)opt->integrator);
            free(r);
            return NULL;
        }
        if (r->opt.merge_radius <= 0.0f) r->opt.merge_radius = 0.003f;
        if (r->opt.merge_alpha <= 0.0f) r->opt.merge_alpha = 0.75f;
        r->opt.merge_everywhere = r->opt.merge_everywhere != 0;
    }
    if (opt->adaptive_depth && opt->adaptive > 0.0f) {
        /* the depth weights assume that every pixel takes the spp target's samples */
        snprintf(err, errlen, "--adaptive-depth and --adaptive cannot be combined");
        free(r);
        return NULL;
    }
    r->depth_start = opt->adaptive_depth ? ADAPTIVE_DEPTH_START : 0;
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    r->accum = calloc(n, sizeof(double));
    r->image = calloc(n, sizeof(float));
    r->count = calloc(n / 3u, sizeof(uint32_t));
    r->lum2 = calloc(n / 3u, sizeof(double));
    if (r->opt.adaptive > 0.0f && r->opt.adaptive_min_spp <= 0) r->opt.adaptive_min_spp = 16;
    if (!r->count || !r->lum2) {
        snprintf(err, errlen, "out of memory for a %dx%d image", r->width, r->height);
        caustic_renderer_free(r);
        return NULL;
    }
    if (opt->device != CAUSTIC_DEVICE_CPU && cuda_device_count() > 0) {
        cuda_config cfg;
        memset(&cfg, 0, sizeof cfg);
        /* the bidirectional integrators have their own kernels: no wavefront pool for them */
        cfg.mode = opt->gpu_mode == CAUSTIC_GPU_WAVEFRONT && !bidir ? CUDA_MODE_WAVEFRONT : CUDA_MODE_MEGA;
        cfg.bvh = opt->gpu_bvh == CAUSTIC_GPU_BVH_LBVH ? CUDA_BVH_LBVH : CUDA_BVH_SAH;
        r->gpu = cuda_renderer_create(s, r->width, r->height, &cfg, err, errlen);
        if (r->gpu && bidir) {
            /* path length counts segments: depth d bounces allow paths of d + 1 segments */
            r->gvcm = cuda_vcm_create(r->gpu, (int)opt->integrator - 1, r->max_depth + 1,
                                      r->opt.merge_radius * s->k.scene_radius, r->opt.merge_alpha,
                                      r->opt.merge_everywhere, r->opt.seed, err, errlen);
            if (!r->gvcm) { cuda_renderer_free(r->gpu); r->gpu = NULL; }
        }
        if (!r->gpu && opt->device == CAUSTIC_DEVICE_CUDA) { caustic_renderer_free(r); return NULL; }
        if (!r->gpu) fprintf(stderr, "caustic: %s; rendering on the CPU\n", err);
    } else if (opt->device == CAUSTIC_DEVICE_CUDA) {
        char why[256];
        cuda_describe_devices(why, sizeof why);
        why[strcspn(why, "\n")] = 0;
        snprintf(err, errlen, "--device cuda: %s", why);
        caustic_renderer_free(r);
        return NULL;
    }
    if (!r->gpu) r->pool = cpu_pool_create(opt->threads);
    if (bidir && !r->gvcm) {
        /* path length counts segments: depth d bounces allow paths of d + 1 segments */
        r->vcm = cpu_kernels_get()->vcm_create(&s->k, (int)opt->integrator - 1, r->max_depth + 1,
                                     r->opt.merge_radius * s->k.scene_radius, r->opt.merge_alpha,
                                     r->opt.merge_everywhere, r->opt.seed);
        if (!r->vcm) {
            snprintf(err, errlen, "out of memory for a %dx%d image", r->width, r->height);
            caustic_renderer_free(r);
            return NULL;
        }
    }
    if (!r->accum || !r->image || (!r->pool && !r->gpu)) {
        snprintf(err, errlen, "out of memory for a %dx%d image", r->width, r->height);
        caustic_renderer_free(r);
        return NULL;
    }
    return r;
}

int caustic_render(caustic_renderer *r, caustic_progress_fn progress, void *user) {
    const double t_start = timer_now();
    const double prior = r->seconds;
    double per_sample = 0.0;   /* seconds per image-wide sample, measured */
    while (r->spp_done < r->spp_target) {
        double elapsed = prior + (timer_now() - t_start);
        if (r->opt.time_limit > 0.0 && elapsed >= r->opt.time_limit) break;
        int pass = 1;
        if (per_sample > 0.0) {
            pass = (int)(PASS_TARGET_SECONDS / per_sample);
            if (r->opt.time_limit > 0.0) {
                int left = (int)((r->opt.time_limit - elapsed) / per_sample);
                if (left < pass) pass = left;
            }
            if (pass < 1) pass = 1;
        }
        if (pass > r->spp_target - r->spp_done) pass = r->spp_target - r->spp_done;
        cpu_pass p;
        p.scene = &r->scene->s->k;
        p.width = r->width;
        p.height = r->height;
        p.sampler = (int)r->opt.sampler;
        p.seed = r->opt.seed;
        p.spp_total = (uint32_t)r->spp_target;
        p.max_depth = r->max_depth;
        p.depth_start = r->depth_start;
        p.clamp = r->opt.clamp;
        p.count = r->count;
        p.lum2 = r->lum2;
        p.adaptive_threshold = r->opt.adaptive;
        p.adaptive_min = (uint32_t)(r->opt.adaptive_min_spp > 0 ? r->opt.adaptive_min_spp : 0);
        p.sample_begin = (uint32_t)r->spp_done;
        p.sample_end = (uint32_t)(r->spp_done + pass);
        p.schedule = (int)r->opt.schedule;
        p.accum = r->accum;
        cpu_pass_stats ps;
        double t0 = timer_now();
        if (r->gvcm) {
            char err[512];
            memset(&ps, 0, sizeof ps);
            if (cuda_vcm_run(r->gvcm, p.sample_begin, (uint32_t)pass, &ps.rays, err, sizeof err)) {
                fprintf(stderr, "caustic: %s\n", err);
                return -1;
            }
            ps.samples = (uint64_t)pass * (uint64_t)r->width * (uint64_t)r->height;
            r->accum_stale = 1;
        } else if (r->gpu) {
            char err[512];
            if (cuda_renderer_pass(r->gpu, p.sampler, p.seed, p.spp_total, p.max_depth, p.depth_start, p.clamp,
                                   p.adaptive_threshold, p.adaptive_min, p.sample_begin, p.sample_end,
                                   &ps.rays, &ps.bad_samples, &ps.samples, err, sizeof err)) {
                fprintf(stderr, "caustic: %s\n", err);
                return -1;
            }
            r->accum_stale = 1;
        } else if (r->vcm) {
            memset(&ps, 0, sizeof ps);
            if (cpu_kernels_get()->vcm_run(r->vcm, r->pool, p.sample_begin, (uint32_t)pass, r->accum, r->count, &ps.rays)) {
                fprintf(stderr, "caustic: out of memory for light vertices\n");
                return -1;
            }
            ps.samples = (uint64_t)pass * (uint64_t)r->width * (uint64_t)r->height;
        } else {
            cpu_pool_run(r->pool, &p, &ps);
        }
        double dt = timer_now() - t0;
        per_sample = dt / pass;
        r->spp_done += pass;
        r->rays += ps.rays;
        r->bad += ps.bad_samples;
        r->samples += ps.samples;
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

/* Brings the GPU's accumulation to the host copy (images, checkpoints). */
static int sync_accum(caustic_renderer *r, char *err, size_t errlen) {
    if (!r->gpu || !r->accum_stale) return 0;
    if (cuda_renderer_read(r->gpu, r->accum, r->count, r->lum2, err, errlen)) return -1;
    r->accum_stale = 0;
    return 0;
}

const float *caustic_image(caustic_renderer *r, int *width, int *height) {
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    char err[512];
    if (sync_accum(r, err, sizeof err)) fprintf(stderr, "caustic: %s\n", err);
    for (size_t i = 0; i < n; ++i) {
        uint32_t c = r->count[i / 3u];
        r->image[i] = c ? (float)(r->accum[i] / c) : 0.0f;
    }
    if (width) *width = r->width;
    if (height) *height = r->height;
    return r->image;
}

const uint32_t *caustic_sample_counts(caustic_renderer *r, int *width, int *height) {
    char err[512];
    if (sync_accum(r, err, sizeof err)) fprintf(stderr, "caustic: %s\n", err);
    if (width) *width = r->width;
    if (height) *height = r->height;
    return r->count;
}

void caustic_render_stats_get(const caustic_renderer *r, caustic_render_stats *st) {
    st->seconds = r->seconds;
    st->spp = r->spp_done;
    st->samples = r->samples;
    st->rays = r->rays;
    st->bad_samples = r->bad;
    st->threads = r->pool ? cpu_pool_threads(r->pool) : 0;
    st->device = r->gpu ? "cuda" : "cpu";
    st->width = r->width;
    st->height = r->height;
}

int caustic_save_image(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    if (image_format_from_path(path) == IMAGE_FMT_UNKNOWN) {
        snprintf(err, errlen, "%s: unknown image format (use .png, .exr or .pfm)", path);
        return -1;
    }
    if (r->gpu && image_format_from_path(path) == IMAGE_FMT_PNG) {
        /* PNG from the GPU: tonemapped to 8 bits there, only the bytes come back */
        size_t n = (size_t)r->width * (size_t)r->height * 3u;
        unsigned char *rgb8 = malloc(n);
        if (!rgb8) { snprintf(err, errlen, "out of memory"); return -1; }
        int rc = cuda_renderer_tonemap8(r->gpu, rgb8, err, errlen);
        if (rc == 0) rc = image_save_png8(rgb8, r->width, r->height, path, err, errlen);
        free(rgb8);
        return rc;
    }
    image img;
    img.width = r->width;
    img.height = r->height;
    img.rgb = (float *)caustic_image(r, NULL, NULL);
    return image_save(&img, path, 0, err, errlen);
}

/* ---- checkpoints: header + raw double sums; written to a temp file and renamed -------------- */
#define CKPT_MAGIC "CAUSTIC-CKPT-6\n"
typedef struct ckpt_header {
    char magic[16];
    int32_t width, height, spp_done, spp_target, max_depth, sampler;
    uint32_t seed;
    float clamp, adaptive;
    int32_t adaptive_min;
    int32_t integrator;
    int32_t depth_start;
    float merge_radius, merge_alpha;
    int32_t merge_everywhere;
    double seconds;
    uint64_t rays, bad, samples;
} ckpt_header;

int caustic_checkpoint_save(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    if (sync_accum(r, err, errlen)) return -1;
    FILE *f = fopen(tmp, "wb");
    if (!f) { snprintf(err, errlen, "%s: cannot write checkpoint: %s", path, strerror(errno)); return -1; }
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC) - 1);
    h.width = r->width; h.height = r->height; h.spp_done = r->spp_done; h.spp_target = r->spp_target;
    h.max_depth = r->max_depth; h.sampler = (int32_t)r->opt.sampler; h.seed = r->opt.seed; h.clamp = r->opt.clamp;
    h.adaptive = r->opt.adaptive; h.adaptive_min = r->opt.adaptive_min_spp; h.samples = r->samples;
    h.integrator = (int32_t)r->opt.integrator; h.merge_radius = r->opt.merge_radius; h.merge_alpha = r->opt.merge_alpha;
    h.merge_everywhere = r->opt.merge_everywhere;
    h.depth_start = r->depth_start;
    h.seconds = r->seconds; h.rays = r->rays; h.bad = r->bad;
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(r->accum, sizeof(double), n, f) == n &&
             fwrite(r->count, sizeof(uint32_t), n / 3u, f) == n / 3u && fwrite(r->lum2, sizeof(double), n / 3u, f) == n / 3u;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write checkpoint: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int caustic_checkpoint_load(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open checkpoint: %s", path, strerror(errno)); return -1; }
    ckpt_header h;
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    int got = fread(&h, sizeof h, 1, f) == 1;
    if (!got || memcmp(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC) - 1) != 0) {
        fclose(f);
        /* the version is the magic's last field: an older caustic's checkpoint says so */
        if (got && memcmp(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC) - 3) == 0)
            snprintf(err, errlen, "%s: checkpoint written by another version of caustic (format %.1s, this one reads %.1s)",
                     path, h.magic + sizeof(CKPT_MAGIC) - 3, CKPT_MAGIC + sizeof(CKPT_MAGIC) - 3);
        else
            snprintf(err, errlen, "%s: not a caustic checkpoint", path);
        return -1;
    }
    /* the stratified sampler's pattern depends on the spp target, the others do not */
    int strata_differ = r->opt.sampler == CAUSTIC_SAMPLER_STRATIFIED && h.spp_target != r->spp_target;
    /* so do --adaptive-depth's weights (kernel/adaptive_depth.h) */
    int weights_differ = r->depth_start > 0 && h.spp_target != r->spp_target;
    if (h.width != r->width || h.height != r->height || h.max_depth != r->max_depth ||
        h.sampler != (int32_t)r->opt.sampler || h.seed != r->opt.seed || h.clamp != r->opt.clamp || h.adaptive != r->opt.adaptive ||
        h.adaptive_min != r->opt.adaptive_min_spp || h.spp_done < 0 || h.integrator != (int32_t)r->opt.integrator ||
        h.merge_radius != r->opt.merge_radius || h.merge_alpha != r->opt.merge_alpha ||
        h.merge_everywhere != r->opt.merge_everywhere ||
        h.depth_start != r->depth_start || strata_differ || weights_differ) {
        fclose(f);
        snprintf(err, errlen, "%s: checkpoint was made with other settings (%dx%d, depth %d, seed %u); "
                 "resume with the same scene and options", path, h.width, h.height, h.max_depth, h.seed);
        return -1;
    }
    if (fread(r->accum, sizeof(double), n, f) != n || fread(r->count, sizeof(uint32_t), n / 3u, f) != n / 3u ||
        fread(r->lum2, sizeof(double), n / 3u, f) != n / 3u) {
        fclose(f);
        memset(r->accum, 0, n * sizeof(double));
        memset(r->count, 0, n / 3u * sizeof(uint32_t));
        memset(r->lum2, 0, n / 3u * sizeof(double));
        snprintf(err, errlen, "%s: checkpoint is truncated", path);
        return -1;
    }
    fclose(f);
    if (r->gpu && cuda_renderer_write(r->gpu, r->accum, r->count, r->lum2, err, errlen)) return -1;
    r->spp_done = h.spp_done;
    r->seconds = h.seconds;
    r->rays = h.rays;
    r->bad = h.bad;
    r->samples = h.samples;
    return 0;
}

void caustic_renderer_free(caustic_renderer *r) {
    if (!r) return;
    cpu_pool_destroy(r->pool);
    cuda_vcm_free(r->gvcm);
    cuda_renderer_free(r->gpu);
    if (r->vcm) cpu_kernels_get()->vcm_free(r->vcm);
    free(r->accum);
    free(r->count);
    free(r->lum2);
    free(r->image);
    free(r);
}
