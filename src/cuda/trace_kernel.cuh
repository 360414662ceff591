// The traversal-only kernel (cuda_trace_rays: caustic-bench-rays, test_cuda), included once by
// each of its feature variants' translation units (trace_<variant>.cu), which define
// KERNEL_FEATURES and TRACE_KERNEL_FN first: a scene of triangles only runs a kernel whose leaf
// test has no primitive-kind decode and no sphere or quad code (kernel/features.h,
// TRACE_VARIANTS in cuda_internal.h). Everything here has internal linkage but the one function
// that hands out the kernel.
#ifndef CAUSTIC_CUDA_TRACE_KERNEL_CUH
#define CAUSTIC_CUDA_TRACE_KERNEL_CUH

#if !defined(KERNEL_FEATURES) || !defined(TRACE_KERNEL_FN)
#error "a trace-kernel translation unit defines KERNEL_FEATURES and TRACE_KERNEL_FN before this header"
#endif

// The trace-only kernel is bound by instructions issued, not by latency (Nsight Compute,
// docs/performance-log.md, 2026-11-27, branch `gpu7`): the stack's top in a register (BVH_STACK_TOP, which the
// megakernels keep) costs it more instructions than its early loads save.
#ifndef BVH_STACK_TOP
#define BVH_STACK_TOP 0
#endif
#include "cuda/cuda_internal.h"

namespace {

// The next 32 rays of the warp (one atomic per warp): this lane's index in *i (>= n: none);
// returns 0 when no rays are left. Rays that form a row-major image (width, a multiple of 8) come
// as 8x4 tiles of whole bands of 4 rows (a partial last band stays in order).
__device__ __forceinline__ int trace_fetch(unsigned *next, unsigned n, unsigned width, unsigned lane, unsigned *i) {
    unsigned base = 0;
    if (lane == 0) base = atomicAdd(next, 32u);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (base >= n) return 0;
    *i = base + lane;
    if (width != 0u && width % 8u == 0u && base / (4u * width) < n / (4u * width)) {
        unsigned band = base / (4u * width), col = (base % (4u * width)) / 32u;
        *i = (band * 4u + lane / 8u) * width + col * 8u + lane % 8u;
    }
    return 1;
}

// Each lane's hit count and distance sum, added up per warp.
__device__ __forceinline__ void trace_sum(unsigned lane, unsigned nhits, float t, unsigned long long *hits,
                                          float *tsum) {
    for (int off = 16; off > 0; off >>= 1) {
        t += __shfl_down_sync(0xffffffffu, t, off);
        nhits += __shfl_down_sync(0xffffffffu, nhits, off);
    }
    if (lane == 0) {
        atomicAdd(hits, (unsigned long long)nhits);
        atomicAdd(&tsum[(blockIdx.x * (TRACE_BLOCK / 32) + threadIdx.x / 32) & 1023], t); // spread
    }
}

// Persistent threads (Aila & Laine 2009): as many blocks as fit on the GPU at once; each warp
// takes the next 32 rays from a global counter until none are left, so that no warp waits for
// a new block to be scheduled behind a slow one. Rays that form a row-major image (the caller
// gives its width, a multiple of 8) are taken as 8x4 tiles of whole bands of 4 rows, so that a
// warp's rays visit the same nodes (a partial last band stays in order). Replacing a warp's
// finished rays one by one (the loop run a step at a time, 8-24 idle lanes taking new rays
// together) kept more lanes busy on the dragon's diffuse rays but not on Sponza's, and the step
// loop's state cost more than it gained elsewhere, so a warp takes new rays only when all 32 are
// done (docs/performance-log.md, 2026-11-27, branch `gpu7`).
__global__ void __launch_bounds__(TRACE_BLOCK, TRACE_MIN_BLOCKS)
    trace_kernel(kscene k, const float *o, const float *d, const float *tmax, unsigned n, unsigned width, int any_hit,
                 unsigned *next, unsigned long long *hits, float *tsum) {
    unsigned lane = threadIdx.x & 31u, nhits = 0;
    float t = 0.0f;
    for (;;) {
        unsigned i;
        if (!trace_fetch(next, n, width, lane, &i)) break;
        if (i < n) {
            ray r =
                make_ray(v3(o[3 * i], o[3 * i + 1], o[3 * i + 2]), v3(d[3 * i], d[3 * i + 1], d[3 * i + 2]), tmax[i]);
            hit h;
            // the loop specialised per node layout and ray kind (uniform branches)
            int got = k.node_layout == KNODES_CW8 ? (any_hit ? trace_ray_inline(&k, r, &h, 1, 0, KNODES_CW8)
                                                             : trace_ray_inline(&k, r, &h, 0, 0, KNODES_CW8))
                                                  : (any_hit ? trace_ray_inline(&k, r, &h, 1, 0, KNODES_WIDE)
                                                             : trace_ray_inline(&k, r, &h, 0, 0, KNODES_WIDE));
            if (any_hit)
                nhits += (unsigned)got;
            else if (got) {
                nhits++;
                t += h.t;
            }
        }
    }
    trace_sum(lane, nhits, t, hits, tsum);
}

} // namespace

trace_kernel_fn TRACE_KERNEL_FN(void) { return trace_kernel; }

#endif
