// GPU driver of the bidirectional integrators (LT, BDPT, PPM, BPM, VCM): the same passes as the
// CPU driver (src/cpu/render_vcm.c) with the shared per-path code of src/kernel/vcm.h run one
// thread per path. Per iteration: (1) light kernel, one light sub-path per pixel, vertices into
// fixed per-path slots, camera splats added with atomics; (2) the merging vertices compacted
// (atomic counter) and hashed into the grid: count per bucket (atomics), exclusive scan (CUB),
// scatter; (3) camera kernel, one camera sub-path per pixel, merge queries into per-pixel slots;
// (4) merge kernel, one thread per pixel evaluating its own queries; then the iteration is added
// to the renderer's accumulation. Device memory depends on the pixel count and the path length,
// never on the iteration count. Sums in a bucket and the splats are in arbitrary order (atomics),
// so images agree with the CPU's statistically, not bit for bit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the light and camera kernels trace from several places (closest hits, NEE, connections):
// one traversal function instead of an inlined copy at each (as the megakernel does)
#define KERNEL_TRACE_NOINLINE 1
#include "cuda/cuda_internal.h"
#include "util/log.h"
#include "kernel/bidir_limits.h"

#include <cub/device/device_scan.cuh>

#include "cuda/vcm_path_kernels.cuh"

enum { VCM_PASS_LIGHT, VCM_PASS_GRID, VCM_PASS_CAMERA, VCM_PASS_MERGE, VCM_PASS_ACCUM, VCM_NPASS };
static const char *const vcm_pass_names[VCM_NPASS] = {"light", "grid", "camera", "merge", "accumulate"};

struct cuda_vcm {
    cuda_renderer *r;
    camera cam;
    int algorithm, max_path_length, merge_everywhere;
    int media; // the scene has media: the path kernels of render_vcm_media.cu
    float radius, alpha;
    uint32_t seed, npaths;
    int maxv;                 // light vertex (and splat) slots per light sub-path
    int maxq;                 // merge query slots per camera sub-path (0 without merging)
    vcm_vertex *verts;        // npaths * maxv
    int32_t *nverts;          // per light sub-path
    vcm_splat *splats;        // npaths * maxv, each thread's until it has added them
    float *splat_img;         // 3 * npaths: light tracing's splats (atomics)
    float *cam_img;           // 3 * npaths: camera sub-paths and merges (one thread per pixel)
    vcm_merge_query *queries; // npaths * maxq
    uint32_t *nqueries;       // per pixel
    // merging vertices (position + photon), their buckets, and the grid's copies in bucket order
    vec3 *ppos;
    vcm_photon *photons;
    uint32_t *photon_bucket;
    vec3 *cell_pos;
    vcm_photon *cell_photons;
    size_t cap_photons;
    uint32_t *cell_count, *cell_start, *cursor; // ncells + 1 each
    size_t cap_cells;
    void *scan_tmp;
    size_t scan_tmp_bytes;
    unsigned long long *counters;      // rays, merging vertices
    unsigned long long *host_counters; // pinned
    // CAUSTIC_VCM_PROFILE=1: CUDA events around each pass, the per-iteration means printed at
    // the end (the host waits for every iteration then, so only for measuring)
    int profile;
    cudaEvent_t ev[VCM_NPASS + 1];
    double pass_ms[VCM_NPASS];
    uint32_t profiled;
};

// cudaMalloc with a message that says what did not fit.
static int dev_alloc(void **p, size_t bytes, const char *what, char *err, size_t errlen) {
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *p = NULL;
        snprintf(err, errlen, "CUDA: out of device memory for the %s (%.1f MiB): %s", what, bytes / 1048576.0,
                 cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

extern "C" void cuda_vcm_free(cuda_vcm *v) {
    if (!v) return;
    if (v->r) cudaSetDevice(v->r->cfg.device);
    if (v->r && v->r->stream) cudaStreamSynchronize(v->r->stream);
    if (v->profile && v->profiled) {
        char line[512];
        int n = snprintf(line, sizeof line, "caustic: vcm GPU passes, ms per iteration (%u iterations):", v->profiled);
        for (int k = 0; k < VCM_NPASS && n > 0 && n < (int)sizeof line; ++k)
            n += snprintf(line + n, sizeof line - n, " %s %.3f", vcm_pass_names[k], v->pass_ms[k] / v->profiled);
        lib_log("%s", line);
    }
    for (int k = 0; k <= VCM_NPASS; ++k)
        if (v->ev[k]) cudaEventDestroy(v->ev[k]);
    cudaFree(v->verts);
    cudaFree(v->nverts);
    cudaFree(v->splats);
    cudaFree(v->splat_img);
    cudaFree(v->cam_img);
    cudaFree(v->queries);
    cudaFree(v->nqueries);
    cudaFree(v->ppos);
    cudaFree(v->photons);
    cudaFree(v->photon_bucket);
    cudaFree(v->cell_pos);
    cudaFree(v->cell_photons);
    cudaFree(v->cell_count);
    cudaFree(v->cell_start);
    cudaFree(v->cursor);
    cudaFree(v->scan_tmp);
    cudaFree(v->counters);
    cudaFreeHost(v->host_counters);
    free(v);
}

extern "C" cuda_vcm *cuda_vcm_create(cuda_renderer *r, const camera *cam, int algorithm, int max_path_length,
                                     float radius, float alpha, int merge_everywhere, uint32_t seed, char *err,
                                     size_t errlen) {
    if (cudaSetDevice(r->cfg.device) != cudaSuccess) {
        snprintf(err, errlen, "CUDA: cannot use device %d", r->cfg.device);
        return NULL;
    }
    // the kernel's own list of what it cannot render (kernel/bidir_limits.h)
    bidir_request q = bidir_request_of(cam, r->features);
    q.media_ok = 1; // render_vcm_media.cu (emissive media: the API's check, which has the host scene)
    if (const char *why = bidir_refusal(&q)) {
        snprintf(err, errlen, "CUDA: the bidirectional integrators: %s", why);
        return NULL;
    }
    // compiled without KF_INSTANCES (the CPU's bidirectional kernels have the two-level traversal)
    if (r->features & KF_INSTANCES) {
        snprintf(err, errlen, "CUDA: the bidirectional integrators do not traverse instances yet (--device cpu does)");
        return NULL;
    }
    cuda_vcm *v = (cuda_vcm *)calloc(1, sizeof(cuda_vcm));
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    v->r = r;
    v->media = (r->features & KF_MEDIA) != 0u;
    v->cam = *cam;
    v->algorithm = algorithm;
    v->max_path_length = max_path_length;
    v->merge_everywhere = merge_everywhere;
    v->radius = radius;
    v->alpha = alpha;
    v->seed = seed;
    v->npaths = (uint32_t)r->width * (uint32_t)r->height;
    v->maxv = max_path_length + 1;
    // a camera sub-path records at most one query per vertex before its last (PPM: one)
    vcm_params p = vcm_make_params(algorithm, max_path_length, radius, (float)v->npaths, merge_everywhere, &v->cam);
    v->maxq = !p.use_vm ? 0 : p.ppm ? 1 : max_path_length;
    size_t n = v->npaths, slots = n * (size_t)v->maxv;
    if (dev_alloc((void **)&v->verts, slots * sizeof(vcm_vertex), "light vertices", err, errlen) ||
        dev_alloc((void **)&v->nverts, n * sizeof(int32_t), "light vertex counts", err, errlen) ||
        dev_alloc((void **)&v->splats, slots * sizeof(vcm_splat), "light tracing splats", err, errlen) ||
        dev_alloc((void **)&v->splat_img, 3 * n * sizeof(float), "iteration image", err, errlen) ||
        dev_alloc((void **)&v->cam_img, 3 * n * sizeof(float), "iteration image", err, errlen) ||
        dev_alloc((void **)&v->nqueries, n * sizeof(uint32_t), "merge query counts", err, errlen) ||
        (v->maxq && dev_alloc((void **)&v->queries, n * (size_t)v->maxq * sizeof(vcm_merge_query), "merge queries", err,
                              errlen)) ||
        dev_alloc((void **)&v->counters, 2 * sizeof(unsigned long long), "counters", err, errlen)) {
        cuda_vcm_free(v);
        return NULL;
    }
    cudaError_t e = cudaMallocHost((void **)&v->host_counters, 2 * sizeof(unsigned long long));
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA: cudaMallocHost failed: %s", cudaGetErrorString(e));
        cuda_vcm_free(v);
        return NULL;
    }
    const char *prof = getenv("CAUSTIC_VCM_PROFILE");
    if (prof && *prof && strcmp(prof, "0")) {
        v->profile = 1;
        for (int k = 0; k <= VCM_NPASS; ++k)
            if (cudaEventCreate(&v->ev[k]) != cudaSuccess) {
                cudaGetLastError();
                v->ev[k] = NULL;
                v->profile = 0;
            }
    }
    return v;
}

// ---- kernels ----------------------------------------------------------------------------------
// The light vertices that merge, appended (position, photon) where they fit; the counter says
// how many there are, so the host can grow the arrays and run this again.
__global__ void vcm_collect_kernel(vcm_params p, uint32_t npaths, int maxv, const vcm_vertex *verts,
                                   const int32_t *nverts, vec3 *ppos, vcm_photon *photons, unsigned long long cap,
                                   unsigned long long *counters) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npaths) return;
    for (int j = 0; j < nverts[i]; ++j) {
        const vcm_vertex *x = &verts[(size_t)i * maxv + j];
        if (!vcm_vertex_merges(&p, x)) continue;
        unsigned long long q = atomicAdd(&counters[1], 1ull);
        if (q < cap) {
            ppos[q] = x->p;
            photons[q] = vcm_photon_of(x);
        }
    }
}

__global__ void vcm_bucket_kernel(vcm_grid g, uint32_t n, const vec3 *ppos, uint32_t *bucket, uint32_t *cell_count) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t h = vcm_grid_cell_of(&g, ppos[i]);
    bucket[i] = h;
    atomicAdd(&cell_count[h], 1u);
}

__global__ void vcm_scatter_kernel(uint32_t n, const uint32_t *bucket, const vec3 *ppos, const vcm_photon *photons,
                                   uint32_t *cursor, vec3 *cell_pos, vcm_photon *cell_photons) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t q = atomicAdd(&cursor[bucket[i]], 1u);
    cell_pos[q] = ppos[i];
    cell_photons[q] = photons[i];
}

// One iteration into the film; its AOVs through a camera ray of their own (aov_camera_sample).
__global__ void vcm_accumulate_kernel(kscene k, camera cam, uint32_t it, uint32_t seed, uint32_t npaths,
                                      const float *splat_img, const float *cam_img, kfilm film) {
    uint32_t pix = blockIdx.x * blockDim.x + threadIdx.x;
    if (pix >= npaths) return;
    const float *s = splat_img + 3u * pix, *c = cam_img + 3u * pix;
    aov_sample a;
    if (film.aov)
        a = aov_camera_sample(&k, &cam, (int)(pix % (uint32_t)cam.width), (int)(pix / (uint32_t)cam.width), it, seed);
    film_add_iteration(&film, pix, v3(s[0] + c[0], s[1] + c[1], s[2] + c[2]), film.aov ? &a : NULL);
}

// ---- host -------------------------------------------------------------------------------------
static unsigned blocks_for(size_t n) { return (unsigned)((n + VCM_BLOCK - 1) / VCM_BLOCK); }

// Room for n merging vertices (grown by a quarter beyond, so that a slowly rising count does not
// reallocate every iteration).
static int reserve_photons(cuda_vcm *v, size_t n, char *err, size_t errlen) {
    if (n <= v->cap_photons) return 0;
    size_t cap = n + n / 4;
    cudaStreamSynchronize(v->r->stream);
    cudaFree(v->ppos);
    cudaFree(v->photons);
    cudaFree(v->photon_bucket);
    cudaFree(v->cell_pos);
    cudaFree(v->cell_photons);
    v->ppos = v->cell_pos = NULL;
    v->photons = v->cell_photons = NULL;
    v->photon_bucket = NULL;
    v->cap_photons = 0;
    if (dev_alloc((void **)&v->ppos, cap * sizeof(vec3), "merging vertices", err, errlen) ||
        dev_alloc((void **)&v->photons, cap * sizeof(vcm_photon), "merging vertices", err, errlen) ||
        dev_alloc((void **)&v->photon_bucket, cap * sizeof(uint32_t), "merging vertices", err, errlen) ||
        dev_alloc((void **)&v->cell_pos, cap * sizeof(vec3), "merge grid", err, errlen) ||
        dev_alloc((void **)&v->cell_photons, cap * sizeof(vcm_photon), "merge grid", err, errlen))
        return -1;
    v->cap_photons = cap;
    return 0;
}

static int reserve_cells(cuda_vcm *v, size_t ncells, char *err, size_t errlen) {
    if (ncells + 1 > v->cap_cells) {
        cudaStreamSynchronize(v->r->stream);
        cudaFree(v->cell_count);
        cudaFree(v->cell_start);
        cudaFree(v->cursor);
        cudaFree(v->scan_tmp);
        v->cell_count = v->cell_start = v->cursor = NULL;
        v->scan_tmp = NULL;
        v->cap_cells = 0;
        size_t bytes = (ncells + 1) * sizeof(uint32_t), tmp = 0;
        CUDA_TRY(
            cub::DeviceScan::ExclusiveSum(NULL, tmp, (const uint32_t *)NULL, (uint32_t *)NULL, (int64_t)(ncells + 1)));
        if (dev_alloc((void **)&v->cell_count, bytes, "merge grid", err, errlen) ||
            dev_alloc((void **)&v->cell_start, bytes, "merge grid", err, errlen) ||
            dev_alloc((void **)&v->cursor, bytes, "merge grid", err, errlen) ||
            dev_alloc(&v->scan_tmp, tmp, "merge grid", err, errlen))
            return -1;
        v->scan_tmp_bytes = tmp;
        v->cap_cells = ncells + 1;
    }
    return 0;
}

// Hash grid over the merging vertices: collect them, count per bucket, scan, scatter. g->ncells
// stays 0 when there are none.
static int build_grid(cuda_vcm *v, const vcm_params *p, float radius, vcm_grid *g, char *err, size_t errlen) {
    cudaStream_t st = v->r->stream;
    memset(g, 0, sizeof *g);
    unsigned long long n = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
        CUDA_TRY(cudaMemsetAsync(&v->counters[1], 0, sizeof(unsigned long long), st));
        vcm_collect_kernel<<<blocks_for(v->npaths), VCM_BLOCK, 0, st>>>(
            *p, v->npaths, v->maxv, v->verts, v->nverts, v->ppos, v->photons, v->cap_photons, v->counters);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemcpyAsync(&v->host_counters[1], &v->counters[1], sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaStreamSynchronize(st));
        n = v->host_counters[1];
        if (n <= v->cap_photons) break;
        if (n > UINT32_MAX / 2) {
            snprintf(err, errlen, "too many merging vertices (%llu)", n);
            return -1;
        }
        if (reserve_photons(v, (size_t)n, err, errlen)) return -1;
    }
    if (n == 0) return 0;
    *g = vcm_grid_make(&v->r->k, radius, n);
    if (reserve_cells(v, g->ncells, err, errlen)) return -1;
    size_t bytes = ((size_t)g->ncells + 1) * sizeof(uint32_t);
    CUDA_TRY(cudaMemsetAsync(v->cell_count, 0, bytes, st));
    vcm_bucket_kernel<<<blocks_for(n), VCM_BLOCK, 0, st>>>(*g, (uint32_t)n, v->ppos, v->photon_bucket, v->cell_count);
    CUDA_TRY(cudaGetLastError());
    size_t tmp = v->scan_tmp_bytes;
    CUDA_TRY(cub::DeviceScan::ExclusiveSum(v->scan_tmp, tmp, v->cell_count, v->cell_start, (int64_t)g->ncells + 1, st));
    CUDA_TRY(
        cudaMemcpyAsync(v->cursor, v->cell_start, (size_t)g->ncells * sizeof(uint32_t), cudaMemcpyDeviceToDevice, st));
    vcm_scatter_kernel<<<blocks_for(n), VCM_BLOCK, 0, st>>>((uint32_t)n, v->photon_bucket, v->ppos, v->photons,
                                                            v->cursor, v->cell_pos, v->cell_photons);
    CUDA_TRY(cudaGetLastError());
    g->cell_start = v->cell_start;
    g->positions = v->cell_pos;
    g->photons = v->cell_photons;
    return 0;
}

static int run_iteration(cuda_vcm *v, uint32_t iteration, char *err, size_t errlen) {
    cuda_renderer *r = v->r;
    cudaStream_t st = r->stream;
    float radius = vcm_iteration_radius(v->radius, v->alpha, iteration);
    vcm_params p =
        vcm_make_params(v->algorithm, v->max_path_length, radius, (float)v->npaths, v->merge_everywhere, &v->cam);
    uint64_t seed = vcm_iteration_seed(v->seed, iteration);
    size_t n = v->npaths;
    if (v->profile) CUDA_TRY(cudaEventRecord(v->ev[VCM_PASS_LIGHT], st));
    CUDA_TRY(cudaMemsetAsync(v->splat_img, 0, 3 * n * sizeof(float), st));
    // the path kernels of the scene's build (vcm_path_kernels.cuh: with media or without)
    (v->media ? vcm_launch_light_media : vcm_launch_light)(blocks_for(n), st, r->k, p, seed, v->npaths, v->maxv,
                                                           v->verts, v->nverts, v->splats, v->splat_img, v->counters);
    CUDA_TRY(cudaGetLastError());
    if (v->profile) CUDA_TRY(cudaEventRecord(v->ev[VCM_PASS_GRID], st));
    vcm_grid g;
    memset(&g, 0, sizeof g);
    if (p.use_vm && build_grid(v, &p, radius, &g, err, errlen)) return -1;
    int merging = p.use_vm && g.ncells > 0;
    if (v->profile) CUDA_TRY(cudaEventRecord(v->ev[VCM_PASS_CAMERA], st));
    (v->media ? vcm_launch_camera_media : vcm_launch_camera)(blocks_for(n), st, r->k, p, g, seed, r->width, v->npaths,
                                                             v->maxv, v->verts, v->nverts, merging ? v->maxq : 0,
                                                             v->queries, v->nqueries, v->cam_img, v->counters);
    CUDA_TRY(cudaGetLastError());
    if (v->profile) CUDA_TRY(cudaEventRecord(v->ev[VCM_PASS_MERGE], st));
    if (merging) {
        (v->media ? vcm_launch_merge_media : vcm_launch_merge)(blocks_for(n), st, r->k, p, g, v->npaths, v->maxq,
                                                               v->queries, v->nqueries, v->cam_img);
        CUDA_TRY(cudaGetLastError());
    }
    if (v->profile) CUDA_TRY(cudaEventRecord(v->ev[VCM_PASS_ACCUM], st));
    vcm_accumulate_kernel<<<blocks_for(n), VCM_BLOCK, 0, st>>>(r->k, v->cam, iteration, v->seed, v->npaths,
                                                               v->splat_img, v->cam_img, cuda_film(r));
    CUDA_TRY(cudaGetLastError());
    if (v->profile) {
        CUDA_TRY(cudaEventRecord(v->ev[VCM_NPASS], st));
        CUDA_TRY(cudaEventSynchronize(v->ev[VCM_NPASS]));
        for (int k = 0; k < VCM_NPASS; ++k) {
            float ms = 0.0f;
            CUDA_TRY(cudaEventElapsedTime(&ms, v->ev[k], v->ev[k + 1]));
            v->pass_ms[k] += ms;
        }
        v->profiled++;
    }
    return 0;
}

extern "C" int cuda_vcm_run(cuda_vcm *v, const camera *cam, uint32_t first, uint32_t count, uint64_t *rays, char *err,
                            size_t errlen) {
    if (cam->width != v->r->width || cam->height != v->r->height) {
        snprintf(err, errlen, "a %dx%d pass on a %dx%d film", cam->width, cam->height, v->r->width, v->r->height);
        return -1;
    }
    v->cam = *cam;
    CUDA_USE_DEVICE(v->r);
    cudaStream_t st = v->r->stream;
    CUDA_TRY(cudaMemsetAsync(v->counters, 0, sizeof(unsigned long long), st));
    for (uint32_t it = first; it < first + count; ++it)
        if (run_iteration(v, it, err, errlen)) return -1;
    CUDA_TRY(cudaMemcpyAsync(v->host_counters, v->counters, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st));
    CUDA_TRY(cudaStreamSynchronize(st));
    *rays += v->host_counters[0];
    return 0;
}
