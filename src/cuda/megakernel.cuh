// The path-tracing megakernels, included once by each feature variant's translation unit
// (megakernel_<variant>.cu), which defines KERNEL_FEATURES (the variant's row of KERNEL_VARIANTS,
// kernel/features.h) and MEGA_KERNELS_FN (the function that hands out its kernels) first: the
// shared kernel below is compiled with that variant's features only. Everything here has internal
// linkage, so the variants' kernels of one name stay apart.
#ifndef CAUSTIC_CUDA_MEGAKERNEL_CUH
#define CAUSTIC_CUDA_MEGAKERNEL_CUH

#if !defined(KERNEL_FEATURES) || !defined(MEGA_KERNELS_FN)
#error "a megakernel translation unit defines KERNEL_FEATURES and MEGA_KERNELS_FN before this header"
#endif

// The megakernel calls the traversal (trace_ray) as one real function (compat.h): two inlined
// copies (closest hits, shadow rays) made it larger and spilled its path state inside the
// traversal loop (H100, Sponza: 307 -> 437 Mrays/s).
#define KERNEL_TRACE_NOINLINE 1
#include "cuda/cuda_internal.h"

namespace {

// Megakernel: one thread per pixel; the pass's samples are summed in sample order in registers
// (film_trace_pixel) and added to the float film. --adaptive-depth is a template argument:
// without it the pass's depth_start is the constant 0 and the depth weights fold away (as a
// run-time value they cost the megakernel 4.5 % on Sponza, docs/performance-log.md). So are AOVs:
// without them the AOV sums take no registers. And so is the BVH node layout (KNODES_*, the
// scene's k.node_layout): each megakernel traverses one layout only (trace_ray), so the default
// 4-wide layout carries no code or registers of the compressed one; mega_kernels_for picks the
// set once per renderer.
template <bool ADAPTIVE_DEPTH, bool AOV, uint32_t LAYOUT>
__global__ void __launch_bounds__(BLOCK_X *BLOCK_Y, MEGA_MIN_BLOCKS)
    pt_megakernel(MEGA_SCENE k, kpass pass, kfilm film, int x0, int y0, unsigned long long *counters) {
    // the block's BLOCK_X x BLOCK_Y pixels, each warp a WARP_TILE_X x WARP_TILE_Y tile of them
    const unsigned t = threadIdx.y * BLOCK_X + threadIdx.x, lane = t & 31u, w = t >> 5, across = BLOCK_X / WARP_TILE_X;
    int x = blockIdx.x * BLOCK_X + (int)(w % across * WARP_TILE_X + lane % WARP_TILE_X),
        y = blockIdx.y * BLOCK_Y + (int)(w / across * WARP_TILE_Y + lane / WARP_TILE_X);
    uint32_t rays = 0, shadow = 0, bad = 0, taken = 0;
    if (x < film.width && y < film.height) {
        size_t pix = (size_t)y * film.width + x;
        film_pixel f = film_pixel_load(&film, pix);
        if (f.n >= pass.sample_begin) { // else adaptive sampling stopped this pixel in an earlier pass
            kpass p = pass;
            if (!ADAPTIVE_DEPTH) p.depth_start = 0;
            uint32_t n0 = f.n;
            film_aov a;
            if (AOV) film_aov_load(&film, pix, &a);
            film_trace_pixel(&k, &p, x0 + x, y0 + y, &f, AOV ? &a : NULL, &rays, &shadow, &bad, LAYOUT);
            film_pixel_store(&film, pix, &f);
            if (AOV) film_aov_store(&film, pix, &a);
            taken = f.n - n0;
        }
    }
    // statistics: one atomic per warp (every lane takes part, in or out of the image)
    for (int o = 16; o > 0; o >>= 1) {
        rays += __shfl_down_sync(0xffffffffu, rays, o);
        shadow += __shfl_down_sync(0xffffffffu, shadow, o);
        bad += __shfl_down_sync(0xffffffffu, bad, o);
        taken += __shfl_down_sync(0xffffffffu, taken, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&counters[0], (unsigned long long)rays);
        if (bad) atomicAdd(&counters[1], (unsigned long long)bad);
        atomicAdd(&counters[2], (unsigned long long)taken);
        atomicAdd(&counters[3], (unsigned long long)shadow);
    }
}

// Small images (MEGA_FILL_ITEMS): persistent threads, as many blocks as fit at once; each warp
// takes the next unit of one WARP_TILE_X x WARP_TILE_Y tile of pixels x one slice of the pass's
// samples from a counter, sums the slice in sample order into its own film_pixel (slice-major
// buffer), and film_merge_slices adds the slices in order. No adaptive sampling here (its stop decision needs
// the pixel's running sums, sample by sample): such passes keep one thread per pixel.

// First sample (relative to the pass) of slice c of `slices`; slice_start(.., slices) = spp.
__device__ static uint32_t slice_start(uint32_t spp, uint32_t slices, uint32_t c) {
    if (c >= slices) return spp;
#if MEGA_SLICE_GUIDED
    double r = (double)(slices - c) / (double)slices;
    return spp - (uint32_t)((double)spp * r * r);
#else
    return (uint32_t)((uint64_t)c * spp / slices);
#endif
}

template <bool ADAPTIVE_DEPTH, bool AOV, uint32_t LAYOUT>
__global__ void __launch_bounds__(BLOCK_X *BLOCK_Y, MEGA_MIN_BLOCKS)
    pt_megakernel_sliced(MEGA_SCENE k, kpass pass, kfilm film, int x0, int y0, uint32_t slices, film_pixel *part,
                         film_aov *part_aov, unsigned *next, unsigned long long *counters) {
    const unsigned lane = threadIdx.x & 31u;
    const size_t npix = (size_t)film.width * (size_t)film.height;
    const unsigned tiles_x = ((unsigned)film.width + WARP_TILE_X - 1u) / WARP_TILE_X,
                   groups = tiles_x * (((unsigned)film.height + WARP_TILE_Y - 1u) / WARP_TILE_Y),
                   units = groups * slices;
    const uint32_t spp = pass.sample_end - pass.sample_begin;
    uint32_t rays = 0, shadow = 0, bad = 0, taken = 0;
    for (;;) {
        unsigned u = 0;
        if (lane == 0) u = atomicAdd(next, 1u);
        u = __shfl_sync(0xffffffffu, u, 0);
        if (u >= units) break;
        unsigned slice = u / groups, tile = u % groups;
        unsigned px = tile % tiles_x * WARP_TILE_X + lane % WARP_TILE_X,
                 py = tile / tiles_x * WARP_TILE_Y + lane / WARP_TILE_X;
        if (px < (unsigned)film.width && py < (unsigned)film.height) {
            size_t pix = (size_t)py * film.width + px;
            film_pixel f = {0.0, 0.0, 0.0, 0.0, 0u};
            film_aov a;
            if (AOV) film_aov_zero(&a);
            if (film.count[pix] >= pass.sample_begin) { // else stopped by adaptive sampling earlier
                kpass p = pass;
                if (!ADAPTIVE_DEPTH) p.depth_start = 0;
                p.sample_begin = pass.sample_begin + slice_start(spp, slices, slice);
                p.sample_end = pass.sample_begin + slice_start(spp, slices, slice + 1u);
                film_trace_pixel(&k, &p, x0 + (int)px, y0 + (int)py, &f, AOV ? &a : NULL, &rays, &shadow, &bad, LAYOUT);
                taken += f.n;
            }
            part[(size_t)slice * npix + pix] = f;
            if (AOV) part_aov[(size_t)slice * npix + pix] = a;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        rays += __shfl_down_sync(0xffffffffu, rays, o);
        shadow += __shfl_down_sync(0xffffffffu, shadow, o);
        bad += __shfl_down_sync(0xffffffffu, bad, o);
        taken += __shfl_down_sync(0xffffffffu, taken, o);
    }
    if (lane == 0) {
        atomicAdd(&counters[0], (unsigned long long)rays);
        if (bad) atomicAdd(&counters[1], (unsigned long long)bad);
        atomicAdd(&counters[2], (unsigned long long)taken);
        atomicAdd(&counters[3], (unsigned long long)shadow);
    }
}

// The megakernels of one node layout, [adaptive depth][AOVs] (struct mega_kernels, cuda_internal.h).
template <uint32_t LAYOUT> static mega_kernels mega_kernels_for(void) {
    mega_kernels m;
    m.pixel[0][0] = pt_megakernel<false, false, LAYOUT>;
    m.pixel[0][1] = pt_megakernel<false, true, LAYOUT>;
    m.pixel[1][0] = pt_megakernel<true, false, LAYOUT>;
    m.pixel[1][1] = pt_megakernel<true, true, LAYOUT>;
    m.sliced[0][0] = pt_megakernel_sliced<false, false, LAYOUT>;
    m.sliced[0][1] = pt_megakernel_sliced<false, true, LAYOUT>;
    m.sliced[1][0] = pt_megakernel_sliced<true, false, LAYOUT>;
    m.sliced[1][1] = pt_megakernel_sliced<true, true, LAYOUT>;
    return m;
}

} // namespace

mega_kernels MEGA_KERNELS_FN(uint32_t layout) {
    return layout == KNODES_CW8 ? mega_kernels_for<KNODES_CW8>() : mega_kernels_for<KNODES_WIDE>();
}

#endif
