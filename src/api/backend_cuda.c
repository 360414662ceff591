/* The CUDA backends: path tracing (megakernel or wavefront) and the bidirectional integrators
 * (src/cuda/render_cuda.h). The film lives on the GPU (float sums); it is read back as host sums
 * and tonemapped on the GPU. In builds without nvcc the stub reports no device. */
#include "api/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/render_cuda.h"

typedef struct cuda_backend {
    cuda_renderer *gpu;
    cuda_vcm *vcm; /* bidirectional only */
    uint64_t pixels;
    const atomic_int *cancel; /* caustic_cancel's flag (backend_desc) */
} cuda_backend;

/* No device (or not the one asked for): the reason, as --device cuda reports it. */
static int need_device(const backend_desc *d, char *err, size_t errlen) {
    int n = cuda_device_count();
    if (n > 0) {
        /* this backend's device and every other the list names (backend_multi renders those) */
        int bad = d->gpu >= 0 && d->gpu < n ? -1 : d->gpu;
        for (int i = 0; i < d->opt->ngpus && bad < 0; ++i)
            if (d->opt->gpus[i] < 0 || d->opt->gpus[i] >= n) bad = d->opt->gpus[i];
        if (bad < 0) return 1;
        snprintf(err, errlen, "--device cuda:%d: there %s %d CUDA device%s (0..%d)", bad, n == 1 ? "is" : "are", n,
                 n == 1 ? "" : "s", n - 1);
        return -1;
    }
    char why[256];
    cuda_describe_devices(why, sizeof why);
    why[strcspn(why, "\n")] = 0;
    snprintf(err, errlen, "--device cuda: %s", why);
    return -1;
}

static void cuda_free_backend(void *p) {
    cuda_backend *b = p;
    if (!b) return;
    cuda_vcm_free(b->vcm);
    cuda_renderer_free(b->gpu);
    free(b);
}

static cuda_backend *cuda_create(const backend_desc *d, int bidir, char *err, size_t errlen) {
    cuda_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->pixels = (uint64_t)d->width * (uint64_t)d->height;
    b->cancel = d->cancel;
    cuda_config cfg;
    memset(&cfg, 0, sizeof cfg);
    /* the bidirectional integrators have their own kernels: no wavefront pool for them */
    cfg.mode = d->opt->gpu_mode == CAUSTIC_GPU_WAVEFRONT && !bidir ? CUDA_MODE_WAVEFRONT : CUDA_MODE_MEGA;
    cfg.bvh = d->opt->gpu_bvh == CAUSTIC_GPU_BVH_LBVH    ? CUDA_BVH_LBVH
              : d->opt->gpu_bvh == CAUSTIC_GPU_BVH_CWBVH ? CUDA_BVH_CW8
                                                         : CUDA_BVH_SAH;
    cfg.device = d->gpu;
    cfg.aov = d->aov;
    const bvh *tree = NULL;
    if (cfg.bvh != CUDA_BVH_LBVH) {
        /* the scene's tree for the GPU (4-wide, or 8-wide to be compressed), built once for every
         * renderer over the scene */
        tree = scene_bvh(d->scene, cfg.bvh == CUDA_BVH_CW8 ? BVH8_WIDTH : BVH4_WIDTH, CUDA_SAH_LANES, err, errlen);
        if (!tree) {
            free(b);
            return NULL;
        }
    }
    b->gpu = cuda_renderer_create(&d->scene->k, tree, d->width, d->height, &cfg, err, errlen);
    if (!b->gpu) {
        free(b);
        return NULL;
    }
    return b;
}

static int cuda_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    return cuda_renderer_read(((cuda_backend *)p)->gpu, dst->sum, dst->count, dst->lum2, dst->aov, err, errlen);
}

static int cuda_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    return cuda_renderer_write(((cuda_backend *)p)->gpu, src->sum, src->count, src->lum2, src->aov, err, errlen);
}

static int cuda_tonemap8(void *p, int op, float scale, unsigned char *rgb8, char *err, size_t errlen) {
    return cuda_renderer_tonemap8(((cuda_backend *)p)->gpu, op, scale, rgb8, err, errlen);
}

static int cuda_clear(void *p, char *err, size_t errlen) {
    return cuda_renderer_clear(((cuda_backend *)p)->gpu, err, errlen);
}

static int cuda_threads(const void *p) {
    (void)p;
    return 0;
}

/* ---- path tracing ---------------------------------------------------------------------------- */
static int pt_supports(const backend_desc *d, char *err, size_t errlen) {
    if (d->opt->integrator != CAUSTIC_INTEGRATOR_PT) return 0;
    return need_device(d, err, errlen);
}

static void *pt_create(const backend_desc *d, char *err, size_t errlen) { return cuda_create(d, 0, err, errlen); }

static void stats_of(const cuda_pass_stats *c, backend_stats *st) {
    st->rays = c->rays;
    st->shadow_rays = c->shadow_rays;
    st->bad_samples = c->bad;
    st->samples = c->samples;
}

static int pt_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    cuda_pass_stats c;
    if (cuda_renderer_pass(((cuda_backend *)p)->gpu, pass, &c, err, errlen)) return -1;
    stats_of(&c, st);
    return 0;
}

static int pt_tile_begin(void *p, int slot, const kpass *pass, const kfilm *tile, int x0, int y0, char *err,
                         size_t errlen) {
    return cuda_renderer_tile_begin(((cuda_backend *)p)->gpu, slot, pass, tile->sum, tile->count, tile->lum2,
                                    tile->width, tile->height, x0, y0, err, errlen);
}

static int pt_tile_end(void *p, int slot, backend_stats *st, char *err, size_t errlen) {
    cuda_pass_stats c;
    if (cuda_renderer_tile_end(((cuda_backend *)p)->gpu, slot, &c, err, errlen)) return -1;
    stats_of(&c, st);
    return 0;
}

static int pt_pass_tile(void *p, const kpass *pass, const kfilm *tile, int x0, int y0, backend_stats *st, char *err,
                        size_t errlen) {
    if (pt_tile_begin(p, 0, pass, tile, x0, y0, err, errlen)) return -1;
    return pt_tile_end(p, 0, st, err, errlen);
}

static const char *pt_kernel(const void *p) { return cuda_renderer_kernel_variant(((const cuda_backend *)p)->gpu); }

/* The film holds float sums between passes: where a pass ends changes the image (cuts_by_count). */
static int float_film(const void *p) {
    (void)p;
    return 1;
}

const backend_ops backend_cuda_pt = {
    .name = "cuda-pt",
    .device = "cuda",
    .supports = pt_supports,
    .create = pt_create,
    .pass = pt_pass,
    .read_film = cuda_read_film,
    .write_film = cuda_write_film,
    .tonemap8 = cuda_tonemap8,
    .threads = cuda_threads,
    .free = cuda_free_backend,
    .pass_tile = pt_pass_tile,
    .tile_begin = pt_tile_begin,
    .tile_end = pt_tile_end,
    .clear = cuda_clear,
    .cuts_by_count = float_film,
    .kernel = pt_kernel,
};

/* ---- bidirectional --------------------------------------------------------------------------- */
static int bidir_supports(const backend_desc *d, char *err, size_t errlen) {
    if (d->opt->integrator == CAUSTIC_INTEGRATOR_PT) return 0;
    if (backend_bidir_limits(d, 1, err, errlen)) return -1; /* media: render_vcm_media.cu */
    /* the GPU's bidirectional kernels (render_vcm.cu) have no two-level traversal: the CPU's do */
    if (d->scene->ninstances) {
        if (d->opt->device == CAUSTIC_DEVICE_AUTO) return 0;
        snprintf(err, errlen,
                 "the GPU's bidirectional integrators do not traverse instances yet: --device cpu renders the scene "
                 "(or CAUSTIC_INSTANCES=flatten copies them)");
        return -1;
    }
    return need_device(d, err, errlen);
}

static void *bidir_create(const backend_desc *d, char *err, size_t errlen) {
    cuda_backend *b = cuda_create(d, 1, err, errlen);
    if (!b) return NULL;
    const caustic_options *o = d->opt;
    /* path length counts segments: depth d bounces allow paths of d + 1 segments */
    b->vcm = cuda_vcm_create(b->gpu, &d->cam, (int)o->integrator - 1, d->max_depth + 1,
                             o->merge_radius * d->scene->k.scene_radius, o->merge_alpha, o->merge_everywhere, o->seed,
                             err, errlen);
    if (!b->vcm) {
        cuda_free_backend(b);
        return NULL;
    }
    return b;
}

static int bidir_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    cuda_backend *b = p;
    memset(st, 0, sizeof *st);
    /* one launch sequence per iteration, so that caustic_cancel stops between two of them */
    for (uint32_t it = pass->sample_begin; it < pass->sample_end; ++it) {
        if (it > pass->sample_begin && b->cancel && atomic_load(b->cancel)) break;
        if (cuda_vcm_run(b->vcm, &pass->cam, it, 1, &st->rays, err, errlen)) return -1;
        st->samples += b->pixels;
    }
    return 0;
}

const backend_ops backend_cuda_bidir = {
    .name = "cuda-bidir",
    .device = "cuda",
    .supports = bidir_supports,
    .create = bidir_create,
    .pass = bidir_pass,
    .read_film = cuda_read_film,
    .write_film = cuda_write_film,
    .tonemap8 = cuda_tonemap8,
    .threads = cuda_threads,
    .free = cuda_free_backend,
    .clear = cuda_clear,
};
