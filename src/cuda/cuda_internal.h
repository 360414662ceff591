// Shared by the CUDA backend's translation units (render_cuda.cu, wavefront.cu, lbvh.cu): the
// renderer object and the checked-call macro. CUDA only; never included by C code.
#ifndef CAUSTIC_CUDA_INTERNAL_H
#define CAUSTIC_CUDA_INTERNAL_H

#include <stdio.h>

#include "cuda/render_cuda.h"
#include "kernel/kernel.h"

// The megakernels' launch shape and settings (render_cuda.cu launches them, megakernel.cuh
// defines them).
#define BLOCK_X 32
#define BLOCK_Y 4
// A warp's pixels: a tile of WARP_TILE_X x WARP_TILE_Y (32 lanes), the block's warps side by side
// (both megakernels). A tile's camera rays, and their first hits' shadow rays, lie closer together
// than a row's of 32, so a warp's lanes visit more of the same nodes, as the trace-only kernel's
// 8x4 tiles of image rays do: textured Sponza 1.011-1.022x at 512^2..1080p against rows, the
// Cornell box and the dragon 1.03-1.04x at 512^2, the Cornell box 0.995x at 1080p
// (docs/performance-log.md, 2026-11-28, branch `gpu10`).
#ifndef WARP_TILE_X
#define WARP_TILE_X 8
#endif
#define WARP_TILE_Y (32 / WARP_TILE_X)
// Minimum resident blocks per SM asked of the compiler (caps registers; measured on the H100,
// docs/performance-log.md): 8 blocks leave 64 registers a thread; at 10 (48) Sponza's kernel read
// twice as many local-memory sectors (spills). Every megakernel variant is faster at 8 (Sponza
// 1.12x with the texture change, the Cornell box 1.41x, rtow 1.33x: branch `gpu6`); Sponza's kernel was
// slower at 6 and 7 blocks, and every variant at 12 (branch `gpu5`).
#ifndef MEGA_MIN_BLOCKS
#define MEGA_MIN_BLOCKS 8
#endif
// Small images: a pass's samples of a pixel are split into slices taken by different threads
// until at least this many (pixel, slice) items exist (pass_slices), so that an image smaller than
// a few waves of resident threads still fills the GPU (issue 21: at 512x384 one thread per pixel
// was 1.16 waves of the H100's 169k resident threads, 0.42x the samples/s of 1080p). The split
// depends on the size of what a pass covers (the image, or a tile of it:
// cuda_renderer_tile_begin) and the pass only, never on the device, so a seed gives the same image
// everywhere. A tile is split as an image of its size (a 1080p band of 1/8 split as the whole
// image left 3 items per resident thread, and the last, each half a pass long, idled the GPU:
// several GPUs, GPU ranks); its slices sum in another order in double than the whole image's,
// which the float film almost never shows (and never where both splits give one slice per
// sample: images under 2^21 / spp pixels).
// At least 2^21 (fewer than 2^22 items, 168 MB of slice sums at most): 512^2 takes 8 slices,
// 1024^2 and 1080p 2. With 8x4 warp tiles on the H100 (docs/performance-log.md, branch `gpu10`) that beat
// 2^22 rounded down (16, 4 and 2 slices) on textured Sponza by 0.5-0.9 % and on the Cornell box by
// 3.5-4.5 %, and lost 0.7-1.6 % on the diffuse dragon; 2^21 rounded down left 1080p at one slice
// (Sponza 1 % slower); 2^23 (32 and 8 slices) was 2 % slower everywhere (docs/performance-log.md,
// "merged main on the H100 (gpu9 + cpu8 together)").
#ifndef MEGA_FILL_ITEMS
#define MEGA_FILL_ITEMS (1u << 21)
#endif
// Sliced passes: 1 = slices shrink from the first to the last (slice c starts at sample
// S (1 - (1 - c/K)^2) of the pass's S samples in K slices), so that the units taken last, while
// other warps already idle, are short; 0 = K equal slices (for comparison).
#ifndef MEGA_SLICE_GUIDED
#define MEGA_SLICE_GUIDED 1
#endif
// The megakernels' scene parameter: they hand its address to the traversal, a real function
// (KFN_TRACE), so a plain by-value parameter is copied by every thread to local memory first
// (280 bytes) and the traversal reads the scene's fields from that copy; __grid_constant__ lets
// the address point at the parameter itself. 0 = the plain parameter (for comparison).
#ifndef MEGA_GRID_CONSTANT
#define MEGA_GRID_CONSTANT 1
#endif
#if MEGA_GRID_CONSTANT
#define MEGA_SCENE __grid_constant__ const kscene
#else
#define MEGA_SCENE kscene
#endif

// The traversal-only kernel (trace_kernel.cuh, launched by cuda_trace_rays): its block size and
// minimum resident blocks per SM (caps registers), and its variants by the primitive kinds a
// scene has, X(NAME, features): a scene of triangles only takes the kernel without the kind
// decode and the sphere and quad tests (docs/performance-log.md, 2026-11-27, branch `gpu7`).
#define TRACE_BLOCK 128
#ifndef TRACE_MIN_BLOCKS
#define TRACE_MIN_BLOCKS 8
#endif
#define TRACE_VARIANTS(X)                                                                                              \
    X(TV_TRIANGLES, KF_PRIM(PRIM_TRIANGLE))                                                                            \
    X(TV_ALL, KF_ALL)
typedef void (*trace_kernel_fn)(kscene, const float *, const float *, const float *, unsigned, unsigned, int,
                                unsigned *, unsigned long long *, float *);
#define TRACE_KERNEL_DECL(NAME, features) trace_kernel_fn trace_kernel_##NAME(void);
TRACE_VARIANTS(TRACE_KERNEL_DECL)
#undef TRACE_KERNEL_DECL

// Wavefront pipeline: a fixed pool of in-flight paths (SoA over PATH_STATE_FIELDS) and the
// queues of path indices between the stages.
#define CUDA_COUNTERS     4              // a pass's statistics (cuda_lane.counters): cuda_pass_stats
#define WF_MATERIAL_KINDS MAT_KIND_COUNT // one shade queue per material kind (types.h, MATERIAL_KINDS)
enum { WF_Q_ISECT = 0, WF_Q_SHADOW = 1, WF_Q_DONE = 2, WF_Q_SHADE = 3, WF_NQ = WF_Q_SHADE + WF_MATERIAL_KINDS };

struct wavefront {
    uint32_t pool;          // paths in flight at most
    path_soa soa;           // device arrays, one per field of path_state
    uint32_t *pixel;        // per path: pixel index it belongs to
    uint32_t *queue[WF_NQ]; // device: path indices per queue, `pool` entries each
    uint32_t *counts;       // device: WF_NQ queue lengths + job counter + free-slot counter
    uint32_t *host_counts;  // pinned mirror of counts
    uint32_t *active;       // pixels taking samples in the current chunk (adaptive sampling)
    void *fields[32];
    int nfields;
};

// The path-tracing megakernels of one BVH node layout and one feature variant (megakernel.cuh:
// pt_megakernel and pt_megakernel_sliced, compiled once per layout in each variant's translation
// unit, megakernel_<variant>.cu), indexed [adaptive depth][AOVs]; create() picks the set for the
// scene's layout and features once.
typedef void (*mega_kernel_fn)(kscene, kpass, kfilm, int, int, unsigned long long *);
typedef void (*mega_sliced_fn)(kscene, kpass, kfilm, int, int, uint32_t, film_pixel *, film_aov *, unsigned *,
                               unsigned long long *);
struct mega_kernels {
    mega_kernel_fn pixel[2][2];
    mega_sliced_fn sliced[2][2];
};
// One function per row of KERNEL_VARIANTS (kernel/features.h): mega_kernels_KV_BASIC(layout), ...
#define MEGA_KERNELS_DECL(NAME, name, features) mega_kernels mega_kernels_##NAME(uint32_t layout);
KERNEL_VARIANTS(MEGA_KERNELS_DECL)
#undef MEGA_KERNELS_DECL

// What a pass in flight needs besides the scene and its film: a stream, the sliced megakernel's
// slice sums and work counter (megakernel_pass) and the pass's statistics. The renderer's own
// passes run in `lane` (on r->stream); tile passes in a lane per slot (struct cuda_tile), so
// that two tiles can be on the device at once.
struct cuda_lane {
    cudaStream_t stream;
    film_pixel *slices;                // small images: per slice of a pass and pixel, the slice's sums
    film_aov *slices_aov;              // the same for the AOVs (films with AOV planes)
    size_t slice_items;                // film_pixel entries the buffers hold
    unsigned *next;                    // the sliced megakernel's work counter
    unsigned long long *counters;      // CUDA_COUNTERS: rays, bad samples, samples, shadow rays
    unsigned long long *host_counters; // pinned
};

// A tile pass (cuda_renderer_tile_begin/_end): its lane (an own non-blocking stream), the tile's
// film on the device and its pinned staging copy on the host, both laid out as sums (3n floats),
// squared luminance (n floats), counts (n uint32_t); and, while a pass is in flight, the
// caller's tile it writes back into.
#define CUDA_TILE_SLOTS 2
struct cuda_tile {
    struct cuda_lane lane;
    void *dev, *host;
    size_t pixels; // what dev and host hold at most
    double *sum, *lum2;
    uint32_t *count;
    size_t n; // the tile in flight (0: none)
};

// The device buffers a renderer owns for its scene, counted from the lists that declare them: one
// per scene array (KSCENE_ARRAYS, kernel/types.h) and one per BVH array below (the kscene members
// each backend fills with its own tree: render_cuda.cu's create and lbvh.cu). A new scene array
// needs nothing here; a new BVH array is a row of CUDA_BVH_ARRAYS. cuda_own_buffer checks the
// bound at run time.
#define CUDA_BVH_ARRAYS(X)                        X(nodes) X(leaves) X(leaf_pos)
#define CUDA_COUNT_SCENE_ARRAY(type, name, count) +1
#define CUDA_COUNT_BVH_ARRAY(name)                +1
enum {
    CUDA_SCENE_BUFFERS = 0 KSCENE_ARRAYS(CUDA_COUNT_SCENE_ARRAY) CUDA_BVH_ARRAYS(CUDA_COUNT_BVH_ARRAY),
};
#undef CUDA_COUNT_SCENE_ARRAY
#undef CUDA_COUNT_BVH_ARRAY

struct cuda_renderer {
    kscene k;                          // device pointers, passed to kernels by value
    void *buffers[CUDA_SCENE_BUFFERS]; // KSCENE_ARRAYS and CUDA_BVH_ARRAYS (cuda_own_buffer)
    int nbuffers;
    uint32_t features;     // the scene's features (kscene_features of the host scene)
    float *accum;          // the film (cuda_film): width*height*3 sums, on the device
    uint32_t *count;       // samples per pixel
    float *lum2;           // per pixel: sum of squared sample luminance (adaptive sampling)
    float *aov;            // per pixel AOV_FLOATS sums (cfg.aov), else NULL
    struct cuda_lane lane; // the renderer's own passes (lane.stream = stream)
    void *pinned;          // pinned staging buffer for readbacks
    size_t pinned_bytes;
    unsigned char *rgb8;                    // device: tonemapped 8-bit image
    mega_kernels mega;                      // the megakernels of the scene's node layout and features
    int variant;                            // their KERNEL_VARIANTS row (kernel_variant_for the scene's features)
    unsigned mega_blocks;                   // resident blocks of the sliced megakernel (0 = not asked yet)
    struct cuda_tile tile[CUDA_TILE_SLOTS]; // tile passes (grown as needed)
    int width, height;
    cuda_config cfg;
    cudaStream_t stream; // non-blocking; NULL (the legacy default stream) with sync_copy
    int sync_copy;       // CAUSTIC_CUDA_SYNC_COPY: see create() in render_cuda.cu
    struct wavefront wf;
    double bvh_build_seconds; // LBVH: GPU build time (kernels), collapse included
};

// Every scene array and BVH array has its slot (a compile-time check that the count above is the
// size of r->buffers).
static_assert(sizeof(((cuda_renderer *)0)->buffers) / sizeof(void *) == CUDA_SCENE_BUFFERS,
              "cuda_renderer.buffers holds CUDA_SCENE_BUFFERS pointers (src/cuda/cuda_internal.h)");

#define CUDA_TRY(call)                                                                                                 \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            snprintf(err, errlen, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));                               \
            return -1;                                                                                                 \
        }                                                                                                              \
    } while (0)

// Hands device buffer d (of `what`) to r, which frees it with the renderer. Refuses, freeing d,
// past CUDA_SCENE_BUFFERS: a buffer of a list neither KSCENE_ARRAYS nor CUDA_BVH_ARRAYS declares.
static inline int cuda_own_buffer(cuda_renderer *r, void *d, const char *what, char *err, size_t errlen) {
    if (r->nbuffers >= CUDA_SCENE_BUFFERS) {
        cudaFree(d);
        snprintf(err, errlen,
                 "CUDA: the %s buffer is one more than the %d that KSCENE_ARRAYS (kernel/types.h) and "
                 "CUDA_BVH_ARRAYS (src/cuda/cuda_internal.h) declare: declare it there",
                 what, (int)CUDA_SCENE_BUFFERS);
        return -1;
    }
    r->buffers[r->nbuffers++] = d;
    return 0;
}

// Makes the renderer's device the calling thread's current one (every entry point does).
#define CUDA_USE_DEVICE(r) CUDA_TRY(cudaSetDevice((r)->cfg.device))

int wavefront_create(cuda_renderer *r, char *err, size_t errlen);
void wavefront_free(cuda_renderer *r);
int wavefront_pass(cuda_renderer *r, const kpass *p, char *err, size_t errlen);

// The renderer's film (float sums on the device) as the kernels take it.
static inline kfilm cuda_film(const cuda_renderer *r) {
    kfilm f;
    f.sum = r->accum;
    f.count = r->count;
    f.lum2 = r->lum2;
    f.aov = r->aov;
    f.width = r->width;
    f.height = r->height;
    return f;
}

// Builds the LBVH on the GPU from the primitive bounds of the host kernel scene k and replaces
// r->k.nodes/leaves (device buffers owned by r). out_host (optional) receives host copies for tests.
int lbvh_build_device(cuda_renderer *r, const kscene *k, cuda_bvh_out *out_host, char *err, size_t errlen);

#endif
