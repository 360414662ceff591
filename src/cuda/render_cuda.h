/* CUDA backend: the shared kernel's path tracer as a megakernel (one thread per pixel, 32x4
 * blocks) or as a wavefront pipeline (a fixed pool of paths, one kernel per stage, queues
 * between them: wavefront.cu); the BVH is the host's SAH build or an LBVH built on the GPU
 * (lbvh.cu). Scene arrays are uploaded once, accumulation stays on the GPU in float. Built when
 * nvcc exists (render_cuda.cu); otherwise render_cuda_stub.c reports no devices. */
#ifndef CAUSTIC_CUDA_RENDER_H
#define CAUSTIC_CUDA_RENDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kscene;
struct kpass;
struct camera;
struct bvh;
struct bvh4_node;
typedef struct cuda_renderer cuda_renderer;

enum { CUDA_MODE_MEGA = 0, CUDA_MODE_WAVEFRONT = 1 };
enum { CUDA_BVH_SAH = 0, CUDA_BVH_LBVH = 1, CUDA_BVH_CW8 = 2 };
typedef struct cuda_config {
    int mode;   /* CUDA_MODE_* */
    int bvh;    /* CUDA_BVH_*: SAH = the host's 4-wide build uploaded; LBVH = built on the GPU;
                        CW8 = the host's 8-wide build, compressed (cw8_node) */
    int device; /* the CUDA device (index); every call on the renderer makes it the calling
                        thread's current device, so one host thread per device can drive its own
                        renderer, and several renderers may share a device */
    int aov;    /* the film has AOV planes (kernel/aov.h) */
} cuda_config;

/* --gpu-bvh sah: the host's binned SAH build with the leaf cost counted per primitive (a GPU
 * thread tests a leaf block's lanes one after another; the CPU's tree counts blocks of 4, as it
 * tests four lanes at once), 4-wide (scene_bvh(s, BVH4_WIDTH, CUDA_SAH_LANES)). 4 = the CPU's
 * leaf cost (the scene's own tree where that is 4-wide). */
#ifndef CUDA_SAH_LANES
#define CUDA_SAH_LANES 1
#endif

/* An LBVH built on the GPU, copied to the host (tests, statistics). Free with cuda_bvh_out_free. */
typedef struct cuda_bvh_out {
    struct bvh4_node *nodes;
    size_t nnodes;
    uint32_t *prim_ids;
    size_t nprims; /* leaf order of the binary tree's leaves */
    struct bvh_leaf4 *leaves;
    size_t nleaf4;           /* the 4-wide nodes' leaf blocks */
    int max_depth;           /* of the 4-wide tree */
    double gpu_seconds;      /* Morton codes, sort, hierarchy, bounds (CUDA events) */
    double collapse_seconds; /* binary tree -> 4-wide nodes (host, shared with the SAH builder) */
    double total_seconds;    /* bounds upload to 4-wide nodes ready on the GPU (wall clock) */
} cuda_bvh_out;
void cuda_bvh_out_free(cuda_bvh_out *o);

/* Number of usable CUDA devices (0 without a driver/device or in a CPU-only build). */
int cuda_device_count(void);
/* One line per device into buf ("0: NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB, sm_90"). */
void cuda_describe_devices(char *buf, size_t n);

/* Uploads the kernel scene k (its arrays, KSCENE_ARRAYS) and, with CUDA_BVH_SAH, the 4-wide tree
 * `tree` (CUDA_BVH_CW8: the 8-wide tree, compressed on the way; with CUDA_BVH_LBVH the GPU builds
 * its own; tree may be NULL), and allocates a film of
 * width x height. cfg NULL: megakernel over `tree`. */
cuda_renderer *cuda_renderer_create(const struct kscene *k, const struct bvh *tree, int width, int height,
                                    const cuda_config *cfg, char *err, size_t errlen);
/* The name of the megakernel variant the renderer runs (the smallest of kernel/features.h's
 * KERNEL_VARIANTS that covers its scene: "diffuse", "textured", "opaque", "all", "full", "media"), or NULL in
 * wavefront mode. */
const char *cuda_renderer_kernel_variant(const cuda_renderer *r);
/* The LBVH build time of a renderer created with CUDA_BVH_LBVH (0 otherwise). */
double cuda_renderer_bvh_seconds(const cuda_renderer *r);
/* Builds an LBVH for the scene on the GPU and returns it on the host (for tests). */
int cuda_lbvh_build(const struct kscene *k, cuda_bvh_out *out, char *err, size_t errlen);
/* Tonemaps the current estimate on the GPU (mean times `scale`, tone map `op` of kernel/tonemap.h,
 * sRGB, 8 bits: image_quantize8's rule) and copies it through pinned memory on the renderer's
 * non-blocking stream into rgb8 (width*height*3 bytes). */
int cuda_renderer_tonemap8(cuda_renderer *r, int op, float scale, unsigned char *rgb8, char *err, size_t errlen);
/* Empties the film on the GPU (ordered on the renderer's stream before the next pass). */
int cuda_renderer_clear(cuda_renderer *r, char *err, size_t errlen);
/* A pass's statistics: rays traced (path segments and shadow rays), the shadow rays among them,
 * NaN/Inf samples dropped, samples taken. */
typedef struct cuda_pass_stats {
    uint64_t rays, shadow_rays, bad, samples;
} cuda_pass_stats;
/* Adds samples [p->sample_begin, p->sample_end) of every pixel to the film on the GPU. */
int cuda_renderer_pass(cuda_renderer *r, const struct kpass *p, cuda_pass_stats *st, char *err, size_t errlen);
/* Path tracing into a tile's film on the host: samples [p->sample_begin, p->sample_end) of the
 * image pixels [x0, x0 + tw) x [y0, y0 + th), each continuing from the sums and count the tile
 * holds (sum: tw*th*3, count, lum2: tw*th; row-major, continued in place). The renderer's own
 * film is untouched. Per pixel the arithmetic of cuda_renderer_pass (float sums between passes,
 * the pass's samples summed in double), with the sample split of an image of the tile's size
 * (render_cuda.cu, MEGA_FILL_ITEMS): tiles of a pass give the whole-image pass's image bit for
 * bit where both splits are one slice per sample, else within double rounding of its sums.
 * Always the megakernel; no AOV planes (backend_multi refuses AOVs).
 * In two halves, so that a caller overlaps tiles (a GPU rank: the next tile's conversion and
 * upload while one renders, its readback while the next renders): tile_begin converts and queues
 * the tile's upload, pass and readback in slot `slot` (0 or 1, each its own stream) and returns;
 * tile_end waits for that slot and writes the result into the tile, which the caller must leave
 * alone in between. A slot takes one tile at a time; the two may be in flight at once. */
int cuda_renderer_tile_begin(cuda_renderer *r, int slot, const struct kpass *p, double *sum, uint32_t *count,
                             double *lum2, int tw, int th, int x0, int y0, char *err, size_t errlen);
int cuda_renderer_tile_end(cuda_renderer *r, int slot, cuda_pass_stats *st, char *err, size_t errlen);
/* Copies the accumulation (width*height*3 sums), the per-pixel sample counts, squared
 * luminance sums and, where the film has them and aov is not NULL, the AOV sums
 * (width*height*AOV_FLOATS) to / from the host. */
int cuda_renderer_read(cuda_renderer *r, double *accum, uint32_t *count, double *lum2, double *aov, char *err,
                       size_t errlen);
int cuda_renderer_write(cuda_renderer *r, const double *accum, const uint32_t *count, const double *lum2,
                        const double *aov, char *err, size_t errlen);
void cuda_renderer_free(cuda_renderer *r);

/* The bidirectional integrators on the GPU (render_vcm.cu): the shared kernel's vcm.h run one
 * thread per sub-path, over r's scene through camera cam, adding each iteration to r's film (1
 * sample per pixel per iteration). algorithm: vcm_algorithm; the other arguments as vcm_renderer_create's
 * (src/cpu/render_vcm.h). Device memory depends on the pixel count and max_path_length only. */
typedef struct cuda_vcm cuda_vcm;
cuda_vcm *cuda_vcm_create(cuda_renderer *r, const struct camera *cam, int algorithm, int max_path_length, float radius,
                          float alpha, int merge_everywhere, uint32_t seed, char *err, size_t errlen);
/* Runs iterations [first, first + count) through camera cam (the pass's, at the renderer's
 * resolution); adds the rays traced to *rays. */
int cuda_vcm_run(cuda_vcm *v, const struct camera *cam, uint32_t first, uint32_t count, uint64_t *rays, char *err,
                 size_t errlen);
void cuda_vcm_free(cuda_vcm *v);

/* Traversal only: traces n rays (origins, directions, tmax as float arrays on the host) against
 * the renderer's scene, `runs` times; returns the median seconds of one trace of all rays (the
 * rays are uploaded once, before timing), the hit count and the sum of hit distances. width > 0:
 * the rays are an image of that width in row-major order (a warp then takes an 8x4 tile). */
int cuda_trace_rays(cuda_renderer *r, const float *o, const float *d, const float *tmax, size_t n, unsigned width,
                    int any_hit, int runs, double *seconds, uint64_t *hits, double *tsum, char *err, size_t errlen);

/* BSDF queries (kernel/bsdf_probe.h) answered on the current device, n of them: 0, or -1 with a
 * message. For the BSDF conformance test's CPU == GPU check; the stub build answers -1. */
struct bsdf_probe_in;
struct bsdf_probe_out;
int cuda_bsdf_probe(const struct bsdf_probe_in *in, struct bsdf_probe_out *out, int n, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
