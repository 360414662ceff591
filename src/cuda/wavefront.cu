// Wavefront path tracing: a fixed pool of in-flight paths whose state is the shared kernel's
// path_state as structure of arrays (path_soa, from the PATH_STATE_FIELDS X-macro), and one
// kernel per stage of integrator_pt.h. Queues of path indices connect the stages:
//   accumulate (finished paths -> pixels) -> generate (free slots take the next camera sample)
//   -> intersect (hits go to one shade queue per material kind, misses are finished)
//   -> shade (NEE shadow rays to the shadow queue; continuing paths back to intersect)
//   -> shadow (then back to intersect, or finished).
// Queues are filled with warp-aggregated atomics, so compaction is implicit. Memory depends on
// the pool size only, never on spp. Every stage's logic is the shared kernel's stage function.
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_internal.h"

#define WF_BLOCK 128
#ifndef WF_MIN_BLOCKS
#define WF_MIN_BLOCKS 1 // a cap of 8 (64 registers) measured 5 % slower (docs/performance-log.md)
#endif
#define WF_EMPTY 0xffffffffu
enum { C_JOB = WF_NQ, C_NCOUNTS = WF_NQ + 1 };

struct wf_args {
    path_soa soa;
    uint32_t *pixel;
    uint32_t *queues; // WF_NQ queues of `pool` entries each
    uint32_t *counts;
    uint32_t pool;
};

__device__ __forceinline__ uint32_t *wf_queue(const wf_args &a, int q) { return a.queues + (size_t)q * a.pool; }

// Appends v to queue q; lanes pushing to the same queue share one atomic.
__device__ __forceinline__ void wf_push(const wf_args &a, int q, uint32_t v) {
    unsigned active = __activemask();
    unsigned same = __match_any_sync(active, q);
    int lane = threadIdx.x & 31, leader = __ffs(same) - 1;
    uint32_t base = 0;
    if (lane == leader) base = atomicAdd(&a.counts[q], (uint32_t)__popc(same));
    base = __shfl_sync(same, base, leader);
    wf_queue(a, q)[base + __popc(same & ((1u << lane) - 1u))] = v;
}

// Finished paths: add the radiance to their pixel (atomics: the order of samples is not fixed,
// so float sums may differ in the last bits from the megakernel's), and the sample's AOVs where
// the film has them (traced here, along the path's camera ray: aov_pass_sample), count rays and
// samples.
__global__ void __launch_bounds__(WF_BLOCK, WF_MIN_BLOCKS)
    wf_accumulate(wf_args a, kscene k, kpass pass, kfilm film, unsigned long long *counters) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t rays = 0, shadow = 0, bad = 0, taken = 0;
    if (i < a.counts[WF_Q_DONE]) {
        uint32_t p = wf_queue(a, WF_Q_DONE)[i];
        uint32_t pix = a.pixel[p];
        if (pix != WF_EMPTY) {
            vec3 l = a.soa.radiance[p];
            rays = a.soa.rays[p];
            shadow = a.soa.shadow_rays[p];
            taken = 1;
            atomicAdd(&film.count[pix], 1u);
            if (film.aov) {
                film_aov s;
                film_aov_zero(&s);
                aov_sample as = aov_pass_sample(&k, &pass, (int)(pix % (uint32_t)film.width),
                                                (int)(pix / (uint32_t)film.width), a.soa.smp[p].index, k.node_layout);
                film_aov_add(&s, &as);
                for (int c = 0; c < AOV_FLOATS; ++c) atomicAdd(&film.aov[(size_t)AOV_FLOATS * pix + c], (float)s.v[c]);
            }
            if (!film_sample(&l, pass.clamp))
                bad = 1;
            else {
                atomicAdd(&film.sum[3 * pix], l.x);
                atomicAdd(&film.sum[3 * pix + 1], l.y);
                atomicAdd(&film.sum[3 * pix + 2], l.z);
                float yl = (float)luminance_d(l.x, l.y, l.z);
                atomicAdd(&film.lum2[pix], yl * yl);
            }
            a.pixel[p] = WF_EMPTY;
        }
    }
    rays = __reduce_add_sync(0xffffffffu, rays);
    shadow = __reduce_add_sync(0xffffffffu, shadow);
    bad = __reduce_add_sync(0xffffffffu, bad);
    taken = __reduce_add_sync(0xffffffffu, taken);
    if ((threadIdx.x & 31) == 0 && taken) {
        atomicAdd(&counters[0], (unsigned long long)rays);
        if (bad) atomicAdd(&counters[1], (unsigned long long)bad);
        atomicAdd(&counters[2], (unsigned long long)taken);
        atomicAdd(&counters[3], (unsigned long long)shadow);
    }
}

// Free slots (the done queue) take the next jobs: job j is sample p.sample_begin + j / nact of
// active pixel j % nact, so neighbouring threads start neighbouring pixels (coherent camera rays).
__global__ void __launch_bounds__(WF_BLOCK, WF_MIN_BLOCKS)
    wf_generate(wf_args a, kpass p, const uint32_t *active, uint32_t nact, uint64_t njobs, int width) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.counts[WF_Q_DONE] || a.counts[C_JOB] >= njobs) return;
    uint32_t slot = wf_queue(a, WF_Q_DONE)[i];
    unsigned m = __activemask();
    int lane = threadIdx.x & 31, leader = __ffs(m) - 1;
    uint32_t base = 0;
    if (lane == leader) base = atomicAdd(&a.counts[C_JOB], (uint32_t)__popc(m));
    base = __shfl_sync(m, base, leader);
    uint64_t job = (uint64_t)base + (uint64_t)__popc(m & ((1u << lane) - 1u));
    if (job >= njobs) return; // the slot stays empty
    uint32_t pix = active ? active[job % nact] : (uint32_t)(job % nact);
    uint32_t index = p.sample_begin + (uint32_t)(job / nact);
    path_state ps;
    path_generate(&ps, &p, (int)(pix % (uint32_t)width), (int)(pix / (uint32_t)width), index, NULL);
    path_soa_store(&a.soa, slot, &ps);
    a.pixel[slot] = pix;
    wf_push(a, WF_Q_ISECT, slot);
}

// One stage of path p: load its state, run the shared stage function, store it, and queue the
// path for the stage path_next names (shading: the queue of the hit's material kind).
__device__ __forceinline__ void wf_step(const wf_args &a, const kscene &k, const kpass &pass, uint32_t p, int stage) {
    path_state ps;
    path_soa_load(&a.soa, p, &ps);
    int event = 0;
    if (stage == STAGE_INTERSECT)
        event = stage_intersect(&ps, &k, &pass, k.node_layout);
    else if (stage == STAGE_SHADE)
        stage_shade(&ps, &k, &pass);
    else
        stage_shadow(&ps, &k, k.node_layout);
    int next = path_next(&ps, stage, event);
    path_soa_store(&a.soa, p, &ps);
    int q = next == STAGE_INTERSECT ? WF_Q_ISECT
            : next == STAGE_SHADE   ? WF_Q_SHADE + hit_material_kind(&k, ps.h.prim)
            : next == STAGE_SHADOW  ? WF_Q_SHADOW
                                    : WF_Q_DONE;
    wf_push(a, q, p);
}

__global__ void __launch_bounds__(WF_BLOCK, WF_MIN_BLOCKS) wf_intersect(wf_args a, kscene k, kpass p) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.counts[WF_Q_ISECT]) return;
    wf_step(a, k, p, wf_queue(a, WF_Q_ISECT)[i], STAGE_INTERSECT);
}

// One launch over all shade queues, one after another: a warp shades one material kind.
__global__ void __launch_bounds__(WF_BLOCK, WF_MIN_BLOCKS) wf_shade(wf_args a, kscene k, kpass p) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    int q = WF_Q_SHADE;
    for (; q < WF_NQ; ++q) {
        uint32_t n = a.counts[q];
        if (i < n) break;
        i -= n;
    }
    if (q == WF_NQ) return;
    wf_step(a, k, p, wf_queue(a, q)[i], STAGE_SHADE);
}

__global__ void __launch_bounds__(WF_BLOCK, WF_MIN_BLOCKS) wf_shadow(wf_args a, kscene k, kpass p) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.counts[WF_Q_SHADOW]) return;
    wf_step(a, k, p, wf_queue(a, WF_Q_SHADOW)[i], STAGE_SHADOW);
}

// Pass start: every slot is free.
__global__ void wf_reset(wf_args a) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < a.pool) {
        a.pixel[i] = WF_EMPTY;
        wf_queue(a, WF_Q_DONE)[i] = i;
    }
    if (i == 0) {
        for (int q = 0; q < C_NCOUNTS; ++q) a.counts[q] = 0;
        a.counts[WF_Q_DONE] = a.pool;
    }
}

// Adaptive sampling: the pixels that take samples from `begin` on (not stopped before).
__global__ void wf_mark(uint32_t *active, uint32_t *nactive, kfilm film, uint32_t npix, uint32_t begin, float adaptive,
                        uint32_t adaptive_min) {
    uint32_t pix = blockIdx.x * blockDim.x + threadIdx.x;
    int take = 0;
    if (pix < npix && film.count[pix] == begin) {
        const float *c = film.sum + 3 * (size_t)pix;
        take = !adaptive_done(begin, adaptive_min, adaptive, luminance_d(c[0], c[1], c[2]), film.lum2[pix]);
    }
    unsigned m = __ballot_sync(0xffffffffu, take);
    int lane = threadIdx.x & 31;
    uint32_t base = 0;
    if (lane == 0 && m) base = atomicAdd(nactive, (uint32_t)__popc(m));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (take) active[base + __popc(m & ((1u << lane) - 1u))] = pix;
}

int wavefront_create(cuda_renderer *r, char *err, size_t errlen) {
    struct wavefront *w = &r->wf;
    uint32_t npix = (uint32_t)r->width * (uint32_t)r->height;
    w->pool = npix < (1u << 20) ? (npix < 4096u ? 4096u : npix) : (1u << 20);
    w->pool = (w->pool + 31u) & ~31u;
#define WF_ALLOC(type, name)                                                                                           \
    CUDA_TRY(cudaMalloc((void **)&w->soa.name, (size_t)w->pool * sizeof(type)));                                       \
    w->fields[w->nfields++] = (void *)w->soa.name;
    PATH_STATE_FIELDS(WF_ALLOC)
#undef WF_ALLOC
    CUDA_TRY(cudaMalloc((void **)&w->pixel, (size_t)w->pool * sizeof(uint32_t)));
    CUDA_TRY(cudaMalloc((void **)&w->queue[0], (size_t)WF_NQ * w->pool * sizeof(uint32_t)));
    for (int q = 1; q < WF_NQ; ++q) w->queue[q] = w->queue[0] + (size_t)q * w->pool;
    CUDA_TRY(cudaMalloc((void **)&w->counts, (C_NCOUNTS + 1) * sizeof(uint32_t)));
    CUDA_TRY(cudaMallocHost((void **)&w->host_counts, (C_NCOUNTS + 1) * sizeof(uint32_t)));
    CUDA_TRY(cudaMalloc((void **)&w->active, (size_t)npix * sizeof(uint32_t)));
    return 0;
}

void wavefront_free(cuda_renderer *r) {
    struct wavefront *w = &r->wf;
    for (int i = 0; i < w->nfields; ++i) cudaFree(w->fields[i]);
    cudaFree(w->pixel);
    cudaFree(w->queue[0]);
    cudaFree(w->counts);
    cudaFreeHost(w->host_counts);
    cudaFree(w->active);
    memset(w, 0, sizeof *w);
}

// Samples [p.sample_begin, p.sample_end) of the nact pixels listed in active (NULL: all, in order).
static int run_chunk(cuda_renderer *r, const wf_args &a, const uint32_t *active, uint32_t nact, const kpass &p,
                     char *err, size_t errlen) {
    struct wavefront *w = &r->wf;
    const kfilm film = cuda_film(r);
    uint64_t njobs = (uint64_t)nact * (p.sample_end - p.sample_begin);
    if (njobs == 0) return 0;
    unsigned grid = (w->pool + WF_BLOCK - 1) / WF_BLOCK, shade_grid = grid;
    cudaStream_t st = r->stream;
    wf_reset<<<grid, WF_BLOCK, 0, st>>>(a);
    CUDA_TRY(cudaGetLastError());
    for (;;) {
        wf_accumulate<<<grid, WF_BLOCK, 0, st>>>(a, r->k, p, film, r->lane.counters);
        wf_generate<<<grid, WF_BLOCK, 0, st>>>(a, p, active, nact, njobs, r->width);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemsetAsync(a.counts + WF_Q_SHADOW, 0, (WF_NQ - WF_Q_SHADOW) * sizeof(uint32_t), st));
        wf_intersect<<<grid, WF_BLOCK, 0, st>>>(a, r->k, p);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemsetAsync(a.counts + WF_Q_ISECT, 0, sizeof(uint32_t), st));
        wf_shade<<<shade_grid, WF_BLOCK, 0, st>>>(a, r->k, p);
        CUDA_TRY(cudaGetLastError());
        wf_shadow<<<grid, WF_BLOCK, 0, st>>>(a, r->k, p);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemcpyAsync(w->host_counts, a.counts, C_NCOUNTS * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaStreamSynchronize(st));
        if (w->host_counts[WF_Q_ISECT] == 0 && (uint64_t)w->host_counts[C_JOB] >= njobs) break;
    }
    // the last finished paths
    wf_accumulate<<<grid, WF_BLOCK, 0, st>>>(a, r->k, p, film, r->lane.counters);
    CUDA_TRY(cudaGetLastError());
    return 0;
}

int wavefront_pass(cuda_renderer *r, const kpass *p, char *err, size_t errlen) {
    const uint32_t begin = p->sample_begin, end = p->sample_end;
    kpass chunk = *p;
    struct wavefront *w = &r->wf;
    wf_args a;
    a.soa = w->soa;
    a.pixel = w->pixel;
    a.queues = w->queue[0];
    a.counts = w->counts;
    a.pool = w->pool;
    uint32_t npix = (uint32_t)r->width * (uint32_t)r->height;
    if (p->adaptive_threshold <= 0.0f) {
        // every pixel takes every sample of the pass, pixels in order; chunks of at most 2^30
        // jobs keep the 32-bit job counter far from overflow
        uint32_t per = (uint32_t)((1u << 30) / npix);
        if (per < 1u) per = 1u;
        for (uint32_t b = begin; b < end; b += per) {
            uint32_t e = end - b > per ? b + per : end;
            chunk.sample_begin = b;
            chunk.sample_end = e;
            if (run_chunk(r, a, NULL, npix, chunk, err, errlen)) return -1;
        }
        return 0;
    }
    // adaptive sampling decides only at multiples of ADAPTIVE_STEP: chunks end there, and each
    // chunk starts by listing the pixels that go on
    uint32_t b = begin;
    while (b < end) {
        uint32_t e = (b / ADAPTIVE_STEP + 1u) * ADAPTIVE_STEP;
        if (e > end) e = end;
        uint32_t *nact_dev = w->counts + C_NCOUNTS;
        CUDA_TRY(cudaMemsetAsync(nact_dev, 0, sizeof(uint32_t), r->stream));
        wf_mark<<<(npix + 255) / 256, 256, 0, r->stream>>>(w->active, nact_dev, cuda_film(r), npix, b,
                                                           p->adaptive_threshold, p->adaptive_min);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(
            cudaMemcpyAsync(w->host_counts + C_NCOUNTS, nact_dev, sizeof(uint32_t), cudaMemcpyDeviceToHost, r->stream));
        CUDA_TRY(cudaStreamSynchronize(r->stream));
        uint32_t nact = w->host_counts[C_NCOUNTS];
        if (nact == 0) break;
        chunk.sample_begin = b;
        chunk.sample_end = e;
        if (run_chunk(r, a, w->active, nact, chunk, err, errlen)) return -1;
        b = e;
    }
    return 0;
}
