// The path kernels of the bidirectional integrators (light and camera sub-paths, merge queries),
// included by two translation units: render_vcm.cu (KERNEL_MEDIA 0: surfaces only) and
// render_vcm_media.cu (KERNEL_MEDIA 1: medium vertices, kernel/vcm.h's "Media"), so that scenes
// without media keep their kernels' code. Each includer names its kernels and their launchers
// through VCM_KNAME (the media build adds _media); render_vcm.cu picks the launchers by the
// scene's features. The passes between them (grid, accumulation) read no medium and exist once.
#ifndef CAUSTIC_CUDA_VCM_PATH_KERNELS_CUH
#define CAUSTIC_CUDA_VCM_PATH_KERNELS_CUH

#include "kernel/vcm.h"

#define VCM_BLOCK 128
// Minimum resident blocks per SM asked of the compiler for the path kernels (caps registers).
// H100, 512x512, smallvcm0/2, ms per VCM iteration: 1 (141-149 registers) 5.2/5.6, 4 (128)
// 4.7/5.1, 6 (80) 5.0/5.5, 8 (64) 4.8/5.3; BDPT alike (docs/performance-log.md).
#ifndef VCM_MIN_BLOCKS
#define VCM_MIN_BLOCKS 4
#endif
#if KERNEL_MEDIA
#define VCM_KNAME(name) name##_media
#else
#define VCM_KNAME(name) name
#endif

__global__ void __launch_bounds__(VCM_BLOCK, VCM_MIN_BLOCKS)
    VCM_KNAME(vcm_light_kernel)(kscene k, vcm_params p, uint64_t seed, uint32_t npaths, int maxv, vcm_vertex *verts,
                                int32_t *nverts, vcm_splat *splats, float *splat_img, unsigned long long *counters) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npaths) return;
    pcg32 rng = vcm_light_rng(seed, i);
    int nv, ns;
    uint32_t rays = 0;
    vcm_splat *sp = splats + (size_t)i * maxv;
    vcm_trace_light_path(&k, &p, &rng, verts + (size_t)i * maxv, &nv, sp, &ns, &rays);
    nverts[i] = nv;
    for (int j = 0; j < ns; ++j) {
        float *o = splat_img + 3u * sp[j].pixel;
        atomicAdd(o, sp[j].value.x);
        atomicAdd(o + 1, sp[j].value.y);
        atomicAdd(o + 2, sp[j].value.z);
    }
    atomicAdd(&counters[0], (unsigned long long)rays);
}

__global__ void __launch_bounds__(VCM_BLOCK, VCM_MIN_BLOCKS)
    VCM_KNAME(vcm_camera_kernel)(kscene k, vcm_params p, vcm_grid g, uint64_t seed, int width, uint32_t npaths,
                                 int maxv, const vcm_vertex *verts, const int32_t *nverts, int maxq,
                                 vcm_merge_query *queries, uint32_t *nqueries, float *cam_img,
                                 unsigned long long *counters) {
    uint32_t pix = blockIdx.x * blockDim.x + threadIdx.x;
    if (pix >= npaths) return;
    int x = (int)(pix % (uint32_t)width), y = (int)(pix / (uint32_t)width);
    pcg32 rng = vcm_camera_rng(seed, pix);
    uint32_t nq = 0, rays = 0;
    vec3 c = vcm_trace_camera_path(&k, &p, &rng, x, y, verts + (size_t)pix * maxv, nverts[pix], &g,
                                   queries + (size_t)pix * maxq, &nq, (uint32_t)maxq, &rays);
    if (!vis_finite(c)) c = v3s(0.0f);
    cam_img[3u * pix] = c.x;
    cam_img[3u * pix + 1] = c.y;
    cam_img[3u * pix + 2] = c.z;
    nqueries[pix] = nq;
    atomicAdd(&counters[0], (unsigned long long)rays);
}

// One thread per pixel evaluates its own camera sub-path's merge queries (no atomics: the pixel
// is the thread's own).
__global__ void __launch_bounds__(VCM_BLOCK, VCM_MIN_BLOCKS)
    VCM_KNAME(vcm_merge_kernel)(kscene k, vcm_params p, vcm_grid g, uint32_t npaths, int maxq,
                                const vcm_merge_query *queries, const uint32_t *nqueries, float *cam_img) {
    uint32_t pix = blockIdx.x * blockDim.x + threadIdx.x;
    if (pix >= npaths) return;
    uint32_t nq = nqueries[pix];
    if (nq == 0) return;
    vec3 acc = v3s(0.0f);
    for (uint32_t j = 0; j < nq; ++j)
        acc = vadd(acc, vcm_merge_query_eval(&k, &g, &p, &queries[(size_t)pix * maxq + j]));
    cam_img[3u * pix] += acc.x;
    cam_img[3u * pix + 1] += acc.y;
    cam_img[3u * pix + 2] += acc.z;
}

// ---- launchers (host): the kernels of this build on stream st --------------------------------
void VCM_KNAME(vcm_launch_light)(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, uint64_t seed,
                                 uint32_t npaths, int maxv, vcm_vertex *verts, int32_t *nverts, vcm_splat *splats,
                                 float *splat_img, unsigned long long *counters) {
    VCM_KNAME(vcm_light_kernel)<<<blocks, VCM_BLOCK, 0, st>>>(k, p, seed, npaths, maxv, verts, nverts, splats,
                                                              splat_img, counters);
}
void VCM_KNAME(vcm_launch_camera)(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, vcm_grid g, uint64_t seed,
                                  int width, uint32_t npaths, int maxv, const vcm_vertex *verts, const int32_t *nverts,
                                  int maxq, vcm_merge_query *queries, uint32_t *nqueries, float *cam_img,
                                  unsigned long long *counters) {
    VCM_KNAME(vcm_camera_kernel)<<<blocks, VCM_BLOCK, 0, st>>>(k, p, g, seed, width, npaths, maxv, verts, nverts, maxq,
                                                               queries, nqueries, cam_img, counters);
}
void VCM_KNAME(vcm_launch_merge)(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, vcm_grid g, uint32_t npaths,
                                 int maxq, const vcm_merge_query *queries, const uint32_t *nqueries, float *cam_img) {
    VCM_KNAME(vcm_merge_kernel)<<<blocks, VCM_BLOCK, 0, st>>>(k, p, g, npaths, maxq, queries, nqueries, cam_img);
}

#if !KERNEL_MEDIA
// render_vcm_media.cu's launchers (the same signatures)
void vcm_launch_light_media(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, uint64_t seed, uint32_t npaths,
                            int maxv, vcm_vertex *verts, int32_t *nverts, vcm_splat *splats, float *splat_img,
                            unsigned long long *counters);
void vcm_launch_camera_media(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, vcm_grid g, uint64_t seed,
                             int width, uint32_t npaths, int maxv, const vcm_vertex *verts, const int32_t *nverts,
                             int maxq, vcm_merge_query *queries, uint32_t *nqueries, float *cam_img,
                             unsigned long long *counters);
void vcm_launch_merge_media(unsigned blocks, cudaStream_t st, kscene k, vcm_params p, vcm_grid g, uint32_t npaths,
                            int maxq, const vcm_merge_query *queries, const uint32_t *nqueries, float *cam_img);
#endif

#endif
