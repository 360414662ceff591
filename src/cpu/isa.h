/* Runtime ISA dispatch of the CPU kernels. The translation units that run the shared kernel on
 * the CPU (src/cpu/kernel_cpu.c, src/cpu/render_vcm.c) are compiled once per ISA level, with
 * their entry points suffixed by CPU_ISA_FN; each build exports one cpu_kernels table. The
 * dispatcher (src/cpu/isa.c) picks the best level the CPU supports, once per process, or the
 * one named by the environment variable CAUSTIC_ISA (sse | avx2 | avx512), and everything else
 * calls the kernel through the table. The scene's BVH is built at the selected table's bvh_width.
 *
 *   sse      x86-64-v2 (SSE4.2), 4-wide nodes (the whole library's baseline on x86-64)
 *   avx2     x86-64-v2 + AVX2 + FMA, 8-wide nodes
 *   avx512   avx2 + AVX-512 F/VL/BW/DQ + GFNI, 8-wide nodes (mask-register node tests and
 *            compressed pushes, GFNI bit reversal in the sampler; compat.h KERNEL_SIMD_AVX512)
 *   portable one build with the compiler's default flags (non-x86 targets, or compilers without
 *            the flags / __builtin_cpu_supports): the SIMD level the target has at compile time */
#ifndef CAUSTIC_CPU_ISA_H
#define CAUSTIC_CPU_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/render_cpu.h"
#include "cpu/render_vcm.h"
#include "kernel/types.h"

/* Inside a kernel TU: the name of an exported entry point of this ISA's build. CMake defines
 * one of CAUSTIC_ISA_BUILD_SSE / _AVX2 / _AVX512 for the per-ISA object libraries (nothing: portable). */
#if defined(CAUSTIC_ISA_BUILD_AVX512)
#define CPU_ISA_FN(name) name##_avx512
#elif defined(CAUSTIC_ISA_BUILD_AVX2)
#define CPU_ISA_FN(name) name##_avx2
#elif defined(CAUSTIC_ISA_BUILD_SSE)
#define CPU_ISA_FN(name) name##_sse
#else
#define CPU_ISA_FN(name) name##_portable
#endif

/* render_vcm.c's entry points in the kernel TU being compiled (their tables hold them) */
vcm_renderer *CPU_ISA_FN(vcm_renderer_create)(const kscene *s, const camera *cam, int algorithm, int max_path_length,
                                              float radius, float alpha, int merge_everywhere, uint32_t seed);
int CPU_ISA_FN(vcm_renderer_run)(vcm_renderer *v, cpu_pool *pool, const camera *cam, uint32_t first, uint32_t count,
                                 const atomic_int *cancel, const kfilm *film, uint64_t *rays);
void CPU_ISA_FN(vcm_renderer_free)(vcm_renderer *v);
/* render_vcm_media.c's: the same driver for scenes with participating media (create and run of
 * render_vcm.c pass such scenes and their renderers on to these) */
vcm_renderer *CPU_ISA_FN(vcm_renderer_create_media)(const kscene *s, const camera *cam, int algorithm,
                                                    int max_path_length, float radius, float alpha,
                                                    int merge_everywhere, uint32_t seed);
int CPU_ISA_FN(vcm_renderer_run_media)(vcm_renderer *v, cpu_pool *pool, const camera *cam, uint32_t first,
                                       uint32_t count, const atomic_int *cancel, const kfilm *film, uint64_t *rays);

/* kernel_cpu_media.c's path tracer: render_rect for scenes with participating media or instances */
void CPU_ISA_FN(render_rect_media)(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st);
/* ... and its ray queries (cpu_kernels.trace_rays, closest_surface) for scenes with instances */
size_t CPU_ISA_FN(trace_rays_instanced)(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax,
                                        size_t begin, size_t end, double *tsum, hit *out);
int CPU_ISA_FN(closest_surface_instanced)(const kscene *k, ray r, hit *h, surface *sf);

typedef struct cpu_kernels {
    const char *name; /* "sse", "avx2", "portable" */
    const char *desc; /* e.g. "AVX2+FMA, 8-wide BVH" */
    int bvh_width;    /* node width its traversal reads (BVH4_WIDTH / BVH8_WIDTH) */
    /* path tracing of pixels [x0,x1) x [y0,y1) of a pass (src/cpu/render_cpu.c's pool) */
    void (*render_rect)(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st);
    /* the same for scenes with participating media (the kernel with KERNEL_MEDIA 1) */
    void (*render_rect_media)(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st);
    /* the bidirectional integrators' driver (render_vcm.h) */
    vcm_renderer *(*vcm_create)(const kscene *s, const camera *cam, int algorithm, int max_path_length, float radius,
                                float alpha, int merge_everywhere, uint32_t seed);
    /* iterations [first, first + count), fewer once *cancel is set (NULL: never) */
    int (*vcm_run)(vcm_renderer *v, cpu_pool *pool, const camera *cam, uint32_t first, uint32_t count,
                   const atomic_int *cancel, const kfilm *film, uint64_t *rays);
    void (*vcm_free)(vcm_renderer *v);
    /* rays [begin, end) of arrays o, d (3 floats each) and tmax: closest hits (any_hit: occlusion
     * only); returns the hit count, adds hit distances to *tsum, stores each ray's hit in
     * out[i - begin] when out is not NULL (bench --rays, tests) */
    size_t (*trace_rays)(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax, size_t begin,
                         size_t end, double *tsum, hit *out);
    /* closest hit along r and its surface; 0 on a miss */
    int (*closest_surface)(const kscene *k, ray r, hit *h, surface *sf);
} cpu_kernels;

/* The kernels this process uses: chosen on the first call (CAUSTIC_ISA, else the best level
 * the CPU supports). If CAUSTIC_ISA names an unknown level or one this CPU (or build) lacks, it
 * prints why and exits with status 1; cpu_isa_check lets a program report that itself first. */
const cpu_kernels *cpu_kernels_get(void);
/* 0 when CAUSTIC_ISA is unset or usable; else -1 and a message in err. */
int cpu_isa_check(char *err, size_t errlen);
/* The table of a level by name if this build has it and this CPU runs it, else NULL (tests). */
const cpu_kernels *cpu_kernels_find(const char *name);
/* Levels compiled into this build, best last, and how many. */
const cpu_kernels *const *cpu_kernels_all(int *n);

#endif
