// Shared by the CUDA backend's translation units (render_cuda.cu, wavefront.cu, lbvh.cu): the
// renderer object and the checked-call macro. CUDA only; never included by C code.
#ifndef CAUSTIC_CUDA_INTERNAL_H
#define CAUSTIC_CUDA_INTERNAL_H

#include <stdio.h>

#include "cuda/render_cuda.h"
#include "kernel/kernel.h"

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

// The path-tracing megakernels of one BVH node layout (render_cuda.cu: pt_megakernel and
// pt_megakernel_sliced, compiled once per layout), indexed [adaptive depth][AOVs]; create()
// picks the layout's set once.
typedef void (*mega_kernel_fn)(kscene, kpass, kfilm, int, int, unsigned long long *);
typedef void (*mega_sliced_fn)(kscene, kpass, kfilm, int, int, uint32_t, film_pixel *, film_aov *, unsigned *,
                               unsigned long long *);
struct mega_kernels {
    mega_kernel_fn pixel[2][2];
    mega_sliced_fn sliced[2][2];
};

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

struct cuda_renderer {
    kscene k;          // device pointers, passed to kernels by value
    void *buffers[24]; // KSCENE_ARRAYS and the BVH
    int nbuffers;
    float *accum;          // the film (cuda_film): width*height*3 sums, on the device
    uint32_t *count;       // samples per pixel
    float *lum2;           // per pixel: sum of squared sample luminance (adaptive sampling)
    float *aov;            // per pixel AOV_FLOATS sums (cfg.aov), else NULL
    struct cuda_lane lane; // the renderer's own passes (lane.stream = stream)
    void *pinned;          // pinned staging buffer for readbacks
    size_t pinned_bytes;
    unsigned char *rgb8;                    // device: tonemapped 8-bit image
    mega_kernels mega;                      // the megakernels of the scene's node layout
    unsigned mega_blocks;                   // resident blocks of the sliced megakernel (0 = not asked yet)
    struct cuda_tile tile[CUDA_TILE_SLOTS]; // tile passes (grown as needed)
    int width, height;
    cuda_config cfg;
    cudaStream_t stream; // non-blocking; NULL (the legacy default stream) with sync_copy
    int sync_copy;       // CAUSTIC_CUDA_SYNC_COPY: see create() in render_cuda.cu
    struct wavefront wf;
    double bvh_build_seconds; // LBVH: GPU build time (kernels), collapse included
};

#define CUDA_TRY(call)                                                                                                 \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            snprintf(err, errlen, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));                               \
            return -1;                                                                                                 \
        }                                                                                                              \
    } while (0)

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
