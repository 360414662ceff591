/* The CPU kernel entry points of one ISA level (src/cpu/isa.h): compiled once per level with
 * that level's flags; exports its cpu_kernels table as CPU_ISA_FN(cpu_kernels). Everything the
 * shared kernel inlines here (traversal, integrator) is compiled for this level only. */
#include "cpu/isa.h"

#include "kernel/kernel.h"

/* Render pixels [x0,x1) x [y0,y1) of the image into the pass's film (whose top-left pixel is
 * (p->x0, p->y0)). Every pixel sums its samples in index order, so the result does not depend on
 * which thread runs it or how passes were cut. A pixel continues from its own count: one that
 * already holds samples of the pass (a distributed work unit finished before a checkpoint) is not
 * given them twice. */
static void render_rect(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st) {
    kpass pass = p->pass;
    const kfilm film = p->film;
    for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
            size_t pix = (size_t)(y - p->y0) * (size_t)film.width + (size_t)(x - p->x0);
            film_pixel f = film_pixel_load(&film, pix);
            if (f.n < p->pass.sample_begin) continue; /* adaptive sampling stopped this pixel earlier */
            uint32_t n0 = f.n, r = 0, sr = 0, b = 0;
            pass.sample_begin = f.n;
            film_aov a;
            if (film.aov) film_aov_load(&film, pix, &a);
            film_trace_pixel(p->scene, &pass, x, y, &f, film.aov ? &a : NULL, &r, &sr, &b, p->scene->node_layout);
            film_pixel_store(&film, pix, &f);
            if (film.aov) film_aov_store(&film, pix, &a);
            st->samples += f.n - n0;
            st->bad_samples += b;
            st->rays += r;
            st->shadow_rays += sr;
        }
    }
}

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
    CPU_ISA_FN(vcm_renderer_create),
    CPU_ISA_FN(vcm_renderer_run),
    CPU_ISA_FN(vcm_renderer_free),
    trace_rays,
    closest_surface,
};
