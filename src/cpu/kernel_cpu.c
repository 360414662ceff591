/* The CPU kernel entry points of one ISA level (src/cpu/isa.h): compiled once per level with
 * that level's flags; exports its cpu_kernels table as CPU_ISA_FN(cpu_kernels). Everything the
 * shared kernel inlines here (traversal, integrator) is compiled for this level only. */
#include "cpu/isa.h"

#include "kernel/kernel.h"

#include "cpu/render_rect.h"

#include "cpu/trace_rays.h"

/* The table's entries: a scene with instances goes to the kernel that has them (kernel_cpu_media.c) */
static size_t trace_rays_entry(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax,
                               size_t begin, size_t end, double *tsum, hit *out) {
    if (k->ninstances) return CPU_ISA_FN(trace_rays_instanced)(k, any_hit, o, d, tmax, begin, end, tsum, out);
    return trace_rays(k, any_hit, o, d, tmax, begin, end, tsum, out);
}
static int closest_surface_entry(const kscene *k, ray r, hit *h, surface *sf) {
    if (k->ninstances) return CPU_ISA_FN(closest_surface_instanced)(k, r, h, sf);
    return closest_surface(k, r, h, sf);
}

#if KERNEL_SIMD_AVX512
#define ISA_DESC "AVX-512+GFNI, 8-wide BVH"
#elif KERNEL_SIMD_AVX2
#define ISA_DESC "AVX2+FMA, 8-wide BVH"
#elif defined(CAUSTIC_ISA_BUILD_SSE)
#define ISA_DESC "SSE4.2, 4-wide BVH"
#elif KERNEL_SIMD_SSE
#define ISA_DESC "SSE2, 4-wide BVH"
#else
#define ISA_DESC "scalar, 4-wide BVH"
#endif
#if defined(CAUSTIC_ISA_BUILD_AVX512)
#define ISA_NAME "avx512"
#elif defined(CAUSTIC_ISA_BUILD_AVX2)
#define ISA_NAME "avx2"
#elif defined(CAUSTIC_ISA_BUILD_SSE)
#define ISA_NAME "sse"
#else
#define ISA_NAME "portable"
#endif

extern const cpu_kernels CPU_ISA_FN(cpu_kernels);
const cpu_kernels CPU_ISA_FN(cpu_kernels) = {
    ISA_NAME,
    ISA_DESC,
    BVH_WIDTH,
    render_rect,
    CPU_ISA_FN(render_rect_media),
    CPU_ISA_FN(vcm_renderer_create),
    CPU_ISA_FN(vcm_renderer_run),
    CPU_ISA_FN(vcm_renderer_free),
    trace_rays_entry,
    closest_surface_entry,
};
