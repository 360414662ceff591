/* The CPU kernel entry points of one ISA level (src/cpu/isa.h): compiled once per level with
 * that level's flags; exports its cpu_kernels table as CPU_ISA_FN(cpu_kernels). Everything the
 * shared kernel inlines here (traversal, integrator) is compiled for this level only. */
#include "cpu/isa.h"

#include "kernel/kernel.h"

#include "cpu/render_rect.h"

static size_t trace_rays(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax, size_t begin,
                         size_t end, double *tsum, hit *out) {
    size_t hits = 0;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) {
        ray r = make_ray(v3(o[3 * i], o[3 * i + 1], o[3 * i + 2]), v3(d[3 * i], d[3 * i + 1], d[3 * i + 2]), tmax[i]);
        hit h;
        if (any_hit) {
            int occ = trace_ray(k, r, &h, 1, k->node_layout);
            hits += (size_t)occ;
            if (out) {
                out[i - begin] = h;
                out[i - begin].prim = occ ? h.prim : PRIM_NONE;
            }
        } else {
            if (trace_closest(k, r, &h)) {
                hits++;
                sum += h.t;
            }
            if (out) out[i - begin] = h;
        }
    }
    *tsum += sum;
    return hits;
}

static int closest_surface(const kscene *k, ray r, hit *h, surface *sf) {
    if (!trace_closest(k, r, h)) return 0;
    *sf = surface_at(k, r, h);
    return 1;
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
    trace_rays,
    closest_surface,
};
