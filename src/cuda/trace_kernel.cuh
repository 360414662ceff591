// The traversal-only kernel (cuda_trace_rays: caustic-bench-rays, test_cuda), included once by
// each of its feature variants' translation units (trace_<variant>.cu), which define
// KERNEL_FEATURES and TRACE_KERNEL_FN first: a scene of triangles only runs a kernel whose leaf
// test has no primitive-kind decode and no sphere or quad code (kernel/features.h,
// TRACE_VARIANTS in cuda_internal.h). Everything here has internal linkage but the one function
// that hands out the kernel.
#ifndef CAUSTIC_CUDA_TRACE_KERNEL_CUH
#define CAUSTIC_CUDA_TRACE_KERNEL_CUH

#if !defined(KERNEL_FEATURES) || !defined(TRACE_KERNEL_FN) || !defined(TRACE_PACKET_KERNEL_FN)
#error "a trace-kernel translation unit defines KERNEL_FEATURES and TRACE_KERNEL_FN before this header"
#endif

// The trace-only kernel is bound by instructions issued, not by latency (Nsight Compute,
// docs/PERFORMANCE.md stop 28): the stack's top in a register (BVH_STACK_TOP, which the
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
// done (docs/PERFORMANCE.md, stop 28).
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

// Warp-wide (packet) traversal of the 4-wide tree for coherent rays (image rays in 8x4 tiles):
// the warp walks one path through the tree together. Every lane tests its own ray against the
// node's children (bvh4_hit_keys, the per-ray visit's slab tests: one node load for the warp), a
// child is entered if some lane hits it, nearest by the warp's minimum entry distance first, and
// the warp keeps one stack in shared memory (the entries' distances are the warp's minimum, so a
// popped entry is skipped only if no lane can find a nearer hit in it). A lane that misses a node
// the warp visits tests it anyway and finds nothing in it that its own traversal would have
// missed: its boxes are a superset of its own traversal's and the triangle tests are exact, so it
// ends with the same closest hit. Leaves are the per-ray loop's test (leaf_intersect). A lane
// without a ray, or an any-hit ray that found one, sets its tmax to -1, which no box or triangle
// passes.
__global__ void __launch_bounds__(TRACE_BLOCK, TRACE_MIN_BLOCKS)
    trace_packet_kernel(kscene k, const float *o, const float *d, const float *tmax, unsigned n, unsigned width,
                        int any_hit, unsigned *next, unsigned long long *hits, float *tsum) {
    __shared__ uint64_t stacks[TRACE_BLOCK / 32][(BVH4_WIDTH - 1) * BVH_MAX_DEPTH + 2]; // 3 pushes a level
    uint64_t *st = stacks[threadIdx.x / 32];
    unsigned lane = threadIdx.x & 31u, nhits = 0;
    float tsum_lane = 0.0f;
    for (;;) {
        unsigned i;
        if (!trace_fetch(next, n, width, lane, &i)) break;
        ray r = make_ray(v3(0.0f, 0.0f, 0.0f), v3(1.0f, 0.0f, 0.0f), -1.0f);
        if (i < n)
            r = make_ray(v3(o[3 * i], o[3 * i + 1], o[3 * i + 2]), v3(d[3 * i], d[3 * i + 1], d[3 * i + 2]), tmax[i]);
        hit h;
        h.t = r.tmax;
        h.prim = PRIM_NONE;
        h.b1 = h.b2 = 0.0f;
        if (!vis_finite(r.o) || !vis_finite(r.d)) h.t = -1.0f; // as trace_ray_inline: no hit
        bvh_ray br = make_bvh_ray(r);
        int sp = 0, got = 0;
        uint32_t ref = 0, cnt = 0; // the root
        if (k.nnodes == 0) h.t = -1.0f;
        if (__any_sync(0xffffffffu, h.t >= 0.0f)) {
            for (;;) {
                if (cnt == 0) {
                    uint32_t key[BVH4_WIDTH];
                    bvh4_hit_keys((const bvh4_node *)k.nodes + ref, &br, h.t, key);
                    uint32_t k0 = __reduce_min_sync(0xffffffffu, key[0]), k1 = __reduce_min_sync(0xffffffffu, key[1]);
                    uint32_t k2 = __reduce_min_sync(0xffffffffu, key[2]), k3 = __reduce_min_sync(0xffffffffu, key[3]);
                    BVH_KEY_SORT2(k0, k1);
                    BVH_KEY_SORT2(k2, k3);
                    BVH_KEY_SORT2(k0, k2);
                    BVH_KEY_SORT2(k1, k3);
                    BVH_KEY_SORT2(k1, k2);
                    if (k0 != BVH_KEY_NONE) {
                        const bvh4_node *nd = (const bvh4_node *)k.nodes + ref;
                        ku4 child = kload_u4(nd->child), count = kload_u4(nd->count), word;
                        for (int c = 0; c < BVH4_WIDTH; ++c) word.v[c] = child.v[c] << BVH_COUNT_BITS | count.v[c];
                        // the same value from every lane: the warp's one stack
                        if (k3 != BVH_KEY_NONE) st[sp++] = (uint64_t)(k3 & ~3u) << 32 | ku4_lane(word, k3 & 3u);
                        if (k2 != BVH_KEY_NONE) st[sp++] = (uint64_t)(k2 & ~3u) << 32 | ku4_lane(word, k2 & 3u);
                        if (k1 != BVH_KEY_NONE) st[sp++] = (uint64_t)(k1 & ~3u) << 32 | ku4_lane(word, k1 & 3u);
                        bvh_descend_word(ku4_lane(word, k0 & 3u), &ref, &cnt);
                        continue;
                    }
                } else if (leaf_intersect(&k, ref, cnt, &br, &h, any_hit, 0) && any_hit) {
                    got = 1;
                    h.t = -1.0f;
                }
                // pop the next entry that some lane may still find a nearer hit in
                uint64_t e = 0;
                int found = 0;
                while (sp > 0) {
                    e = st[--sp];
                    if (__any_sync(0xffffffffu, kbits_float((uint32_t)(e >> 32)) < h.t)) {
                        found = 1;
                        break;
                    }
                }
                if (!found) break;
                bvh_descend_word((uint32_t)e, &ref, &cnt);
            }
        }
        if (any_hit)
            nhits += (unsigned)got;
        else if (h.prim != PRIM_NONE) {
            nhits++;
            tsum_lane += h.t;
        }
    }
    trace_sum(lane, nhits, tsum_lane, hits, tsum);
}

} // namespace

trace_kernel_fn TRACE_KERNEL_FN(void) { return trace_kernel; }
trace_kernel_fn TRACE_PACKET_KERNEL_FN(void) { return trace_packet_kernel; }

#endif
