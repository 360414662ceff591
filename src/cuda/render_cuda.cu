// CUDA backend: the shared kernel (src/kernel) compiled unchanged for the GPU. Every CUDA call
// is checked; failures come back as one-line messages, never aborts.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The path-tracing megakernels are compiled once per feature variant in their own translation
// units (megakernel.cuh); the trace-only kernel below calls the always-inlined trace_ray_inline.
#include "cuda/cuda_internal.h"
#include "kernel/tonemap.h"
extern "C" {
#include "accel/bvh.h"
}
#include "util/timer.h"

// Trace kernel grid: 1 = persistent (the blocks that fit at once, rays fetched by warps from a
// counter), 0 = one block per 128 rays (for comparison).
#ifndef TRACE_PERSISTENT
#define TRACE_PERSISTENT 1
#endif

extern "C" int cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" void cuda_describe_devices(char *buf, size_t n) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(buf, n, "no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return;
    }
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < count && used < n; ++i) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        used += (size_t)snprintf(buf + used, n - used, "%d: %s, %d SMs, %.1f GiB, sm_%d%d\n", i, p.name,
                                 p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.major, p.minor);
    }
}

// Copies `bytes` of host data (the array `what`) to a new device buffer owned by r.
static int upload(cuda_renderer *r, const void *host, size_t bytes, const void **dev, const char *what, char *err,
                  size_t errlen) {
    *dev = NULL;
    if (!host || bytes == 0) return 0;
    void *d = NULL;
    CUDA_TRY(cudaMalloc(&d, bytes));
    if (cuda_own_buffer(r, d, what, err, errlen)) return -1;
    CUDA_TRY(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    *dev = d;
    return 0;
}

// The leaf blocks' lanes as the GPU's leaf test reads them (kscene.leaf_pos: primitive ids and
// triangles, bvh_leaf_lanes) from the host's copy of the blocks (`leaves`: the SAH tree's; NULL:
// the LBVH's blocks, read back) and the scene's positions (NULL: none).
static int upload_leaf_pos(cuda_renderer *r, const bvh_leaf4 *leaves, const vec3 *positions, char *err, size_t errlen) {
    size_t n = r->k.nleaf4;
    bvh_leaf4 *back = NULL;
    if (!leaves) {
        back = (bvh_leaf4 *)malloc(n * sizeof(bvh_leaf4));
        if (!back) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        cudaError_t e = cudaMemcpy(back, r->k.leaves, n * sizeof(bvh_leaf4), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            free(back);
            snprintf(err, errlen, "CUDA: reading the leaf blocks back: %s", cudaGetErrorString(e));
            return -1;
        }
        leaves = back;
    }
    float *rows = bvh_leaf_lanes(leaves, n, positions);
    free(back);
    if (!rows) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = upload(r, rows, n * BVH_LEAF_LANES_FLOATS * sizeof(float), (const void **)&r->k.leaf_pos, "leaf_pos", err,
                    errlen);
    free(rows);
    return rc;
}

// Frees a lane's buffers (not its stream).
static void lane_free(cuda_lane *l) {
    cudaFree(l->slices);
    cudaFree(l->slices_aov);
    cudaFree(l->next);
    cudaFree(l->counters);
    cudaFreeHost(l->host_counters);
}

extern "C" void cuda_renderer_free(cuda_renderer *r) {
    if (!r) return;
    cudaSetDevice(r->cfg.device);
    for (int i = 0; i < CUDA_TILE_SLOTS; ++i) {
        cuda_tile *t = &r->tile[i];
        if (t->lane.stream) cudaStreamSynchronize(t->lane.stream);
        lane_free(&t->lane);
        cudaFree(t->dev);
        cudaFreeHost(t->host);
        if (t->lane.stream) cudaStreamDestroy(t->lane.stream);
    }
    for (int i = 0; i < r->nbuffers; ++i) cudaFree(r->buffers[i]);
    wavefront_free(r);
    cudaFreeHost(r->pinned);
    cudaFree(r->rgb8);
    cudaFree(r->accum);
    cudaFree(r->count);
    cudaFree(r->lum2);
    cudaFree(r->aov);
    lane_free(&r->lane);
    if (r->stream) cudaStreamDestroy(r->stream);
    free(r);
}

// A lane's statistics buffers (the slice buffers grow in megakernel_pass).
static int lane_create(cuda_lane *l, cudaStream_t stream, char *err, size_t errlen) {
    l->stream = stream;
    CUDA_TRY(cudaMalloc(&l->counters, CUDA_COUNTERS * sizeof(unsigned long long)));
    CUDA_TRY(cudaMallocHost((void **)&l->host_counters, CUDA_COUNTERS * sizeof(unsigned long long)));
    return 0;
}

static int create(cuda_renderer *r, const kscene *h, const bvh *tree, char *err, size_t errlen) {
    kscene *k = &r->k;
    *k = *h; // the counts; every pointer is replaced by a device copy below
    k->nodes = NULL;
    k->leaves = NULL;
    k->leaf_pos = NULL;
    k->nnodes = k->nleaf4 = 0;
    // the LBVH and compressed builds, and the wavefront (compiled without KF_INSTANCES), take one
    // level only (kernel/types.h, kinstance)
    if (h->ninstances && (r->cfg.bvh != CUDA_BVH_SAH || r->cfg.mode == CUDA_MODE_WAVEFRONT)) {
        snprintf(err, errlen,
                 "%s does not render instances yet (the default megakernel with --gpu-bvh sah does; "
                 "CAUSTIC_INSTANCES=flatten copies them)",
                 r->cfg.mode == CUDA_MODE_WAVEFRONT ? "--gpu-mode wavefront"
                 : r->cfg.bvh == CUDA_BVH_LBVH      ? "--gpu-bvh lbvh"
                                                    : "--gpu-bvh cwbvh");
        return -1;
    }
    if (r->cfg.device < 0 || r->cfg.device >= cuda_device_count()) {
        snprintf(err, errlen, "CUDA: no device %d (%d found)", r->cfg.device, cuda_device_count());
        return -1;
    }
    CUDA_USE_DEVICE(r);
    // CAUSTIC_CUDA_SYNC_COPY=1 undoes one piece of the viewer's recipe to measure it
    // (docs/performance-log.md, "The viewer"): the work goes on the legacy default stream and 8-bit frames
    // come back with cudaMemcpy straight into the caller's pageable memory
    const char *sync = getenv("CAUSTIC_CUDA_SYNC_COPY");
    r->sync_copy = sync && *sync && strcmp(sync, "0");
    if (!r->sync_copy) CUDA_TRY(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    if (r->cfg.bvh == CUDA_BVH_LBVH) {
        if (lbvh_build_device(r, h, NULL, err, errlen)) return -1;
    } else if (tree) {
        // SAH: the 4-wide float nodes as they are; CW8: the 8-wide tree's nodes compressed
        int cw = r->cfg.bvh == CUDA_BVH_CW8, want = cw ? BVH8_WIDTH : BVH4_WIDTH;
        if (tree->width != want) {
            snprintf(err, errlen, "CUDA: --gpu-bvh %s traverses %d-wide BVHs, not %d-wide", cw ? "cwbvh" : "sah", want,
                     tree->width);
            return -1;
        }
        cw8_node *packed = NULL;
        if (cw) {
            packed = (cw8_node *)malloc(tree->nwnodes * sizeof(cw8_node) + 1);
            if (!packed) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            if (bvh_compress8(tree->wnodes, tree->nwnodes, packed, err, errlen)) {
                free(packed);
                return -1;
            }
            k->node_layout = KNODES_CW8;
        }
        int up =
            cw ? upload(r, packed, tree->nwnodes * sizeof(cw8_node), (const void **)&k->nodes, "nodes", err, errlen)
               : upload(r, tree->wnodes, tree->nwnodes * sizeof(bvh4_node), (const void **)&k->nodes, "nodes", err,
                        errlen);
        free(packed);
        if (up ||
            upload(r, tree->leaves, tree->nleaf4 * sizeof(bvh_leaf4), (const void **)&k->leaves, "leaves", err, errlen))
            return -1;
        k->nnodes = (uint32_t)tree->nwnodes;
        k->nleaf4 = (uint32_t)tree->nleaf4;
    } else if (kscene_nprims(h) > 0) {
        snprintf(err, errlen, "CUDA: no BVH for the scene");
        return -1;
    }
    // (every leaf test reads its lanes' primitive ids there; a scene of spheres and quads has no
    // positions, and its lanes' vertices stay 0)
    if (k->nleaf4 && upload_leaf_pos(r, r->cfg.bvh == CUDA_BVH_LBVH ? NULL : tree->leaves,
                                     h->nvertices ? h->positions : NULL, err, errlen))
        return -1;
    // the smallest megakernel variant that covers the scene's features (kernel/features.h)
    r->features = kscene_features(h);
    r->variant = kernel_variant_for(r->features);
    // the wavefront pipeline is compiled once, without the media columns (KERNEL_MEDIA 0)
    if (r->cfg.mode == CUDA_MODE_WAVEFRONT && (r->features & KF_MEDIA)) {
        snprintf(err, errlen,
                 "--gpu-mode wavefront does not render participating media yet (the default megakernel does)");
        return -1;
    }
    if (r->cfg.mode == CUDA_MODE_WAVEFRONT && (r->features & KF_DISPERSION)) {
        snprintf(err, errlen, "--gpu-mode wavefront does not render dispersion yet (the default megakernel does)");
        return -1;
    }
    switch (r->variant) {
        /* clang-format off */
#define MEGA_KERNELS_CASE(NAME, name, features) case NAME: r->mega = mega_kernels_##NAME(k->node_layout); break;
        /* clang-format on */
        KERNEL_VARIANTS(MEGA_KERNELS_CASE)
#undef MEGA_KERNELS_CASE
    }
    // the scene's arrays (counts from the copy of h in *k)
#define UP(type, name, count)                                                                                          \
    if (upload(r, h->name, (size_t)(count) * sizeof(type), (const void **)&k->name, #name, err, errlen)) return -1;
    KSCENE_ARRAYS(UP)
#undef UP
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    CUDA_TRY(cudaMalloc(&r->accum, n * sizeof(float)));
    CUDA_TRY(cudaMemset(r->accum, 0, n * sizeof(float)));
    CUDA_TRY(cudaMalloc(&r->count, n / 3u * sizeof(uint32_t)));
    CUDA_TRY(cudaMemset(r->count, 0, n / 3u * sizeof(uint32_t)));
    CUDA_TRY(cudaMalloc(&r->lum2, n / 3u * sizeof(float)));
    CUDA_TRY(cudaMemset(r->lum2, 0, n / 3u * sizeof(float)));
    if (r->cfg.aov) {
        CUDA_TRY(cudaMalloc(&r->aov, n / 3u * AOV_FLOATS * sizeof(float)));
        CUDA_TRY(cudaMemset(r->aov, 0, n / 3u * AOV_FLOATS * sizeof(float)));
    }
    if (lane_create(&r->lane, r->stream, err, errlen)) return -1;
    // readbacks (float sums, 8-bit images) go through one pinned buffer on the non-blocking stream
    r->pinned_bytes = (r->cfg.aov ? n / 3u * AOV_FLOATS : n) * sizeof(float);
    CUDA_TRY(cudaMallocHost(&r->pinned, r->pinned_bytes));
    if (r->cfg.mode == CUDA_MODE_WAVEFRONT && wavefront_create(r, err, errlen)) return -1;
    // the uploads and memsets above ran on the legacy stream, which the renderer's non-blocking
    // stream does not wait for
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

extern "C" cuda_renderer *cuda_renderer_create(const kscene *k, const bvh *tree, int width, int height,
                                               const cuda_config *cfg, char *err, size_t errlen) {
    if (cuda_device_count() == 0) {
        snprintf(err, errlen, "no CUDA device available");
        return NULL;
    }
    cuda_renderer *r = (cuda_renderer *)calloc(1, sizeof(cuda_renderer));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->width = width;
    r->height = height;
    if (cfg) r->cfg = *cfg;
    if (create(r, k, tree, err, errlen)) {
        cuda_renderer_free(r);
        return NULL;
    }
    return r;
}

__global__ void film_merge_slices(kfilm film, uint32_t slices, const film_pixel *part, const film_aov *part_aov) {
    const size_t npix = (size_t)film.width * (size_t)film.height;
    size_t pix = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (pix >= npix) return;
    film_pixel f = film_pixel_load(&film, pix);
    for (uint32_t s = 0; s < slices; ++s) film_pixel_merge(&f, &part[(size_t)s * npix + pix]);
    film_pixel_store(&film, pix, &f);
    if (film.aov) {
        film_aov a;
        film_aov_load(&film, pix, &a);
        for (uint32_t s = 0; s < slices; ++s) film_aov_merge(&a, &part_aov[(size_t)s * npix + pix]);
        film_aov_store(&film, pix, &a);
    }
}

// Slices per pixel for a pass over npix pixels: 1 (one thread per pixel) unless they are too few
// to fill the GPU and the pass has several samples and no adaptive sampling; then the fewest that
// give at least MEGA_FILL_ITEMS (pixel, slice) items, so fewer than twice as many.
static uint32_t pass_slices(size_t npix, const kpass *p) {
    uint32_t spp = p->sample_end - p->sample_begin;
    if (p->adaptive_threshold > 0.0f || npix == 0 || npix >= MEGA_FILL_ITEMS) return 1;
    size_t s = (MEGA_FILL_ITEMS + npix - 1) / npix;
    return s < spp ? (uint32_t)s : spp;
}

// A pass over `film` (the renderer's, or a tile's), whose pixel (0, 0) is the image's (x0, y0), in
// lane l (its stream, slice buffers and counters).
static int megakernel_pass(cuda_renderer *r, cuda_lane *l, const kpass *p, kfilm film, int x0, int y0, char *err,
                           size_t errlen) {
    size_t npix = (size_t)film.width * (size_t)film.height;
    uint32_t slices = pass_slices(npix, p);
    const bool aov = film.aov != NULL; // a tile's film (backend_multi) has no AOV planes
    if (slices <= 1) {
        dim3 block(BLOCK_X, BLOCK_Y), grid((film.width + BLOCK_X - 1) / BLOCK_X, (film.height + BLOCK_Y - 1) / BLOCK_Y);
        mega_kernel_fn kernel = r->mega.pixel[p->depth_start > 0][aov];
        kernel<<<grid, block, 0, l->stream>>>(r->k, *p, film, x0, y0, l->counters);
        CUDA_TRY(cudaGetLastError());
        return 0;
    }
    if (l->slice_items < (size_t)slices * npix) { // grows to the largest split asked for (< 2 MEGA_FILL_ITEMS)
        CUDA_TRY(cudaStreamSynchronize(l->stream));
        cudaFree(l->slices);
        cudaFree(l->slices_aov);
        l->slices = NULL;
        l->slices_aov = NULL;
        l->slice_items = 0;
        CUDA_TRY(cudaMalloc(&l->slices, (size_t)slices * npix * sizeof(film_pixel)));
        if (aov) CUDA_TRY(cudaMalloc(&l->slices_aov, (size_t)slices * npix * sizeof(film_aov)));
        l->slice_items = (size_t)slices * npix;
    }
    if (!l->next) CUDA_TRY(cudaMalloc(&l->next, sizeof(unsigned)));
    mega_sliced_fn kernel = r->mega.sliced[p->depth_start > 0][aov];
    if (r->mega_blocks == 0) { // resident blocks of the sliced kernel on the whole device
        int sms = 0, per_sm = 0;
        CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, r->cfg.device));
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK_X * BLOCK_Y, 0));
        r->mega_blocks = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
    }
    CUDA_TRY(cudaMemsetAsync(l->next, 0, sizeof(unsigned), l->stream));
    kernel<<<r->mega_blocks, BLOCK_X * BLOCK_Y, 0, l->stream>>>(r->k, *p, film, x0, y0, slices, l->slices,
                                                                l->slices_aov, l->next, l->counters);
    CUDA_TRY(cudaGetLastError());
    film_merge_slices<<<(unsigned)((npix + 255) / 256), 256, 0, l->stream>>>(film, slices, l->slices, l->slices_aov);
    CUDA_TRY(cudaGetLastError());
    return 0;
}

// The lane's statistics (counters) to the host; waits for its pass.
static int read_counters(cuda_lane *l, cuda_pass_stats *st, char *err, size_t errlen) {
    unsigned long long *c = l->host_counters;
    CUDA_TRY(
        cudaMemcpyAsync(c, l->counters, CUDA_COUNTERS * sizeof(unsigned long long), cudaMemcpyDeviceToHost, l->stream));
    CUDA_TRY(cudaStreamSynchronize(l->stream));
    st->rays = c[0];
    st->bad = c[1];
    st->samples = c[2];
    st->shadow_rays = c[3];
    return 0;
}

extern "C" int cuda_renderer_pass(cuda_renderer *r, const kpass *p, cuda_pass_stats *st, char *err, size_t errlen) {
    CUDA_USE_DEVICE(r);
    CUDA_TRY(cudaMemsetAsync(r->lane.counters, 0, CUDA_COUNTERS * sizeof(unsigned long long), r->stream));
    if (r->cfg.mode == CUDA_MODE_WAVEFRONT) {
        if (wavefront_pass(r, p, err, errlen)) return -1;
    } else if (megakernel_pass(r, &r->lane, p, cuda_film(r), 0, 0, err, errlen)) {
        return -1;
    }
    return read_counters(&r->lane, st, err, errlen);
}

// Tile passes. A slot's tile goes up and comes back through its pinned staging copy in one
// transfer each way, converted between the host's double sums and the device's float ones (exact
// both ways for sums that came from the device); everything between tile_begin and tile_end is
// queued on the slot's own stream, so the caller can stage and launch a tile in one slot while
// the other renders or transfers.
extern "C" int cuda_renderer_tile_begin(cuda_renderer *r, int slot, const kpass *p, double *sum, uint32_t *count,
                                        double *lum2, int tw, int th, int x0, int y0, char *err, size_t errlen) {
    if (tw <= 0 || th <= 0 || x0 < 0 || y0 < 0 || x0 + tw > r->width || y0 + th > r->height) {
        snprintf(err, errlen, "CUDA: a %dx%d tile at (%d, %d) outside the %dx%d image", tw, th, x0, y0, r->width,
                 r->height);
        return -1;
    }
    if (slot < 0 || slot >= CUDA_TILE_SLOTS || r->tile[slot].n) {
        snprintf(err, errlen, "CUDA: tile slot %d is not free", slot);
        return -1;
    }
    CUDA_USE_DEVICE(r);
    cuda_tile *t = &r->tile[slot];
    if (!t->lane.stream) {
        cudaStream_t st;
        CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        if (lane_create(&t->lane, st, err, errlen)) return -1;
    }
    const size_t n = (size_t)tw * (size_t)th, bytes = n * (4 * sizeof(float) + sizeof(uint32_t));
    if (n > t->pixels) {
        cudaFree(t->dev);
        cudaFreeHost(t->host);
        t->dev = t->host = NULL;
        t->pixels = 0;
        CUDA_TRY(cudaMalloc(&t->dev, bytes));
        CUDA_TRY(cudaMallocHost(&t->host, bytes));
        t->pixels = n;
    }
    float *h = (float *)t->host; // the slot's previous tile has ended: its staging copy is free
    for (size_t i = 0; i < 3 * n; ++i) h[i] = (float)sum[i];
    for (size_t i = 0; i < n; ++i) h[3 * n + i] = (float)lum2[i];
    memcpy(h + 4 * n, count, n * sizeof(uint32_t));
    cudaStream_t st = t->lane.stream;
    CUDA_TRY(cudaMemcpyAsync(t->dev, t->host, bytes, cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaMemsetAsync(t->lane.counters, 0, CUDA_COUNTERS * sizeof(unsigned long long), st));
    kfilm f;
    f.sum = (float *)t->dev;
    f.lum2 = f.sum + 3 * n;
    f.count = (uint32_t *)(f.sum + 4 * n);
    f.aov = NULL; // backend_multi and the distributed layer refuse AOVs
    f.width = tw;
    f.height = th;
    if (megakernel_pass(r, &t->lane, p, f, x0, y0, err, errlen)) return -1;
    CUDA_TRY(cudaMemcpyAsync(t->lane.host_counters, t->lane.counters, CUDA_COUNTERS * sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, st));
    CUDA_TRY(cudaMemcpyAsync(t->host, t->dev, bytes, cudaMemcpyDeviceToHost, st));
    t->sum = sum;
    t->lum2 = lum2;
    t->count = count;
    t->n = n;
    return 0;
}

extern "C" int cuda_renderer_tile_end(cuda_renderer *r, int slot, cuda_pass_stats *st, char *err, size_t errlen) {
    if (slot < 0 || slot >= CUDA_TILE_SLOTS || !r->tile[slot].n) {
        snprintf(err, errlen, "CUDA: no tile pass in slot %d", slot);
        return -1;
    }
    CUDA_USE_DEVICE(r);
    cuda_tile *t = &r->tile[slot];
    const size_t n = t->n;
    t->n = 0; // the slot is free again, whatever happens below
    CUDA_TRY(cudaStreamSynchronize(t->lane.stream));
    const float *h = (const float *)t->host;
    for (size_t i = 0; i < 3 * n; ++i) t->sum[i] = h[i];
    for (size_t i = 0; i < n; ++i) t->lum2[i] = h[3 * n + i];
    memcpy(t->count, h + 4 * n, n * sizeof(uint32_t));
    const unsigned long long *c = t->lane.host_counters;
    st->rays = c[0];
    st->bad = c[1];
    st->samples = c[2];
    st->shadow_rays = c[3];
    return 0;
}

// Device -> pinned staging buffer on the renderer's non-blocking stream, then to `host`.
static int read_pinned(cuda_renderer *r, void *host, const void *dev, size_t bytes, char *err, size_t errlen) {
    if (r->sync_copy) {
        CUDA_TRY(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
        return 0;
    }
    CUDA_TRY(cudaMemcpyAsync(r->pinned, dev, bytes, cudaMemcpyDeviceToHost, r->stream));
    CUDA_TRY(cudaStreamSynchronize(r->stream));
    memcpy(host, r->pinned, bytes);
    return 0;
}

extern "C" int cuda_renderer_read(cuda_renderer *r, double *accum, uint32_t *count, double *lum2, double *aov,
                                  char *err, size_t errlen) {
    CUDA_USE_DEVICE(r);
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    const float *tmp = (const float *)r->pinned;
    CUDA_TRY(cudaMemcpyAsync(r->pinned, r->accum, n * sizeof(float), cudaMemcpyDeviceToHost, r->stream));
    CUDA_TRY(cudaStreamSynchronize(r->stream));
    for (size_t i = 0; i < n; ++i) accum[i] = tmp[i];
    CUDA_TRY(cudaMemcpyAsync(r->pinned, r->lum2, n / 3u * sizeof(float), cudaMemcpyDeviceToHost, r->stream));
    CUDA_TRY(cudaStreamSynchronize(r->stream));
    for (size_t i = 0; i < n / 3u; ++i) lum2[i] = tmp[i];
    if (aov && r->aov) {
        size_t m = n / 3u * AOV_FLOATS;
        CUDA_TRY(cudaMemcpyAsync(r->pinned, r->aov, m * sizeof(float), cudaMemcpyDeviceToHost, r->stream));
        CUDA_TRY(cudaStreamSynchronize(r->stream));
        for (size_t i = 0; i < m; ++i) aov[i] = tmp[i];
    }
    return read_pinned(r, count, r->count, n / 3u * sizeof(uint32_t), err, errlen);
}

// Mean, then image_quantize8's rule: NaN -> 0, clamp to [0,1], sRGB OETF (double), round half up.
__device__ unsigned char quantize8(float linear) {
    if (!(linear > 0.0f)) return 0;
    if (linear >= 1.0f) return 255;
    double x = linear;
    double v = (x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1.0 / 2.4) - 0.055) * 255.0 + 0.5;
    return v >= 255.0 ? (unsigned char)255 : (unsigned char)v;
}

// One pixel per thread: the mean, exposure and tone map (kernel/tonemap.h, as the host's
// tonemap_to_rgb8), then quantize8.
__global__ void tonemap8_kernel(const float *accum, const uint32_t *count, unsigned char *out, size_t npix, int op,
                                float scale) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npix) return;
    uint32_t c = count[i];
    float m[3], d[3];
    for (int k = 0; k < 3; ++k) m[k] = c ? accum[3 * i + k] / (float)c : 0.0f;
    tonemap_pixel(op, scale, m, d);
    for (int k = 0; k < 3; ++k) out[3 * i + k] = quantize8(d[k]);
}

extern "C" int cuda_renderer_tonemap8(cuda_renderer *r, int op, float scale, unsigned char *rgb8, char *err,
                                      size_t errlen) {
    CUDA_USE_DEVICE(r);
    size_t npix = (size_t)r->width * (size_t)r->height;
    if (!r->rgb8) CUDA_TRY(cudaMalloc(&r->rgb8, 3 * npix));
    tonemap8_kernel<<<(unsigned)((npix + 255) / 256), 256, 0, r->stream>>>(r->accum, r->count, r->rgb8, npix, op,
                                                                           scale);
    CUDA_TRY(cudaGetLastError());
    return read_pinned(r, rgb8, r->rgb8, 3 * npix, err, errlen);
}

extern "C" int cuda_renderer_clear(cuda_renderer *r, char *err, size_t errlen) {
    CUDA_USE_DEVICE(r);
    size_t npix = (size_t)r->width * (size_t)r->height;
    CUDA_TRY(cudaMemsetAsync(r->accum, 0, 3 * npix * sizeof(float), r->stream));
    CUDA_TRY(cudaMemsetAsync(r->count, 0, npix * sizeof(uint32_t), r->stream));
    CUDA_TRY(cudaMemsetAsync(r->lum2, 0, npix * sizeof(float), r->stream));
    if (r->aov) CUDA_TRY(cudaMemsetAsync(r->aov, 0, AOV_FLOATS * npix * sizeof(float), r->stream));
    return 0;
}

extern "C" double cuda_renderer_bvh_seconds(const cuda_renderer *r) { return r->bvh_build_seconds; }

extern "C" const char *cuda_renderer_kernel_variant(const cuda_renderer *r) {
    return r->cfg.mode == CUDA_MODE_WAVEFRONT ? NULL : kernel_variant_name(r->variant);
}

extern "C" int cuda_renderer_write(cuda_renderer *r, const double *accum, const uint32_t *count, const double *lum2,
                                   const double *aov, char *err, size_t errlen) {
    CUDA_USE_DEVICE(r);
    size_t n = (size_t)r->width * (size_t)r->height * 3u;
    CUDA_TRY(cudaStreamSynchronize(r->stream));
    float *tmp = (float *)calloc(r->aov ? n / 3u * AOV_FLOATS : n, sizeof(float));
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; ++i) tmp[i] = (float)accum[i];
    cudaError_t e = cudaMemcpy(r->accum, tmp, n * sizeof(float), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        for (size_t i = 0; i < n / 3u; ++i) tmp[i] = (float)lum2[i];
        e = cudaMemcpy(r->lum2, tmp, n / 3u * sizeof(float), cudaMemcpyHostToDevice);
    }
    if (e == cudaSuccess) e = cudaMemcpy(r->count, count, n / 3u * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess && aov && r->aov) {
        for (size_t i = 0; i < n / 3u * AOV_FLOATS; ++i) tmp[i] = (float)aov[i];
        e = cudaMemcpy(r->aov, tmp, n / 3u * AOV_FLOATS * sizeof(float), cudaMemcpyHostToDevice);
    }
    free(tmp);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA: restoring the image: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

// ---- traversal-only benchmark -----------------------------------------------------------------
// The kernel (trace_kernel.cuh) is compiled once per row of TRACE_VARIANTS; the first that
// covers the scene's primitive kinds runs.
static trace_kernel_fn trace_kernel_for(const kscene *k) {
    uint32_t f = kscene_prim_features(k);
#define TRACE_KERNEL_PICK(NAME, features)                                                                              \
    if ((f & ~(uint32_t)(features)) == 0u) return trace_kernel_##NAME();
    TRACE_VARIANTS(TRACE_KERNEL_PICK)
#undef TRACE_KERNEL_PICK
    return trace_kernel_TV_ALL();
}

extern "C" int cuda_trace_rays(cuda_renderer *r, const float *o, const float *d, const float *tmax, size_t n,
                               unsigned width, int any_hit, int runs, double *seconds, uint64_t *hits, double *tsum,
                               char *err, size_t errlen) {
    float *dev_o = NULL, *dev_d = NULL, *dev_t = NULL, *dev_sum = NULL;
    unsigned long long *dev_hits = NULL;
    unsigned *dev_next = NULL;
    int dev = 0, sms = 0, per_sm = 0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = -1;
    double times[64];
    trace_kernel_fn trace_kernel = trace_kernel_for(&r->k);
    if (runs > 64) runs = 64;
    CUDA_USE_DEVICE(r);
#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            snprintf(err, errlen, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));                               \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)
    TRY(cudaMalloc(&dev_o, n * 3 * sizeof(float)));
    TRY(cudaMalloc(&dev_d, n * 3 * sizeof(float)));
    TRY(cudaMalloc(&dev_t, n * sizeof(float)));
    TRY(cudaMalloc(&dev_sum, 1024 * sizeof(float)));
    TRY(cudaMalloc(&dev_hits, sizeof(unsigned long long)));
    TRY(cudaMalloc(&dev_next, sizeof(unsigned)));
    TRY(cudaGetDevice(&dev));
    TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)trace_kernel, TRACE_BLOCK, 0));
    if (per_sm < 1) per_sm = 1;
    if (!TRACE_PERSISTENT) {
        sms = (int)((n + TRACE_BLOCK - 1) / TRACE_BLOCK);
        per_sm = 1;
    }
    TRY(cudaMemcpy(dev_o, o, n * 3 * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dev_d, d, n * 3 * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dev_t, tmax, n * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaEventCreate(&e0));
    TRY(cudaEventCreate(&e1));
    for (int run = 0; run < runs; ++run) {
        TRY(cudaMemset(dev_sum, 0, 1024 * sizeof(float)));
        TRY(cudaMemset(dev_hits, 0, sizeof(unsigned long long)));
        TRY(cudaMemset(dev_next, 0, sizeof(unsigned)));
        TRY(cudaEventRecord(e0));
        trace_kernel<<<(unsigned)(sms * per_sm), TRACE_BLOCK>>>(r->k, dev_o, dev_d, dev_t, (unsigned)n, width, any_hit,
                                                                dev_next, dev_hits, dev_sum);
        TRY(cudaGetLastError());
        TRY(cudaEventRecord(e1));
        TRY(cudaEventSynchronize(e1));
        float ms = 0.0f;
        TRY(cudaEventElapsedTime(&ms, e0, e1));
        times[run] = ms * 1e-3;
    }
    {
        unsigned long long h = 0;
        float sums[1024];
        TRY(cudaMemcpy(&h, dev_hits, sizeof h, cudaMemcpyDeviceToHost));
        TRY(cudaMemcpy(sums, dev_sum, sizeof sums, cudaMemcpyDeviceToHost));
        double total = 0.0;
        for (int i = 0; i < 1024; ++i) total += sums[i];
        for (int i = 1; i < runs; ++i) // median
            for (int j = i; j > 0 && times[j - 1] > times[j]; --j) {
                double x = times[j];
                times[j] = times[j - 1];
                times[j - 1] = x;
            }
        *seconds = times[runs / 2];
        *hits = h;
        *tsum = total;
        rc = 0;
    }
#undef TRY
done:
    cudaFree(dev_o);
    cudaFree(dev_d);
    cudaFree(dev_t);
    cudaFree(dev_sum);
    cudaFree(dev_hits);
    cudaFree(dev_next);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return rc;
}
