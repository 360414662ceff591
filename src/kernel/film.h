/* The film: per pixel running sums of the samples (RGB), of their squared luminance (adaptive
 * sampling), the sample count and, when AOVs are asked for, the sums of the samples' AOVs (aov.h). This header is the one place where samples reach it: the CPU
 * path tracer, the GPU megakernel and wavefront, and both bidirectional drivers call it. Sums are
 * double on the CPU and float on the GPU (memory, atomics); within a pass a pixel's sums are
 * kept in double either way, in sample order. */
#ifndef CAUSTIC_KERNEL_FILM_H
#define CAUSTIC_KERNEL_FILM_H

#include "adaptive.h"
#include "aov.h"
#include "integrator_pt.h"
#include "pass.h"

#if defined(__CUDACC__)
typedef float film_real;
#else
typedef double film_real;
#endif

/* A film of width x height pixels (host or device pointers), passed by value like kscene. */
typedef struct kfilm {
    film_real *sum;  /* width*height*3 running sums */
    uint32_t *count; /* samples per pixel (non-finite samples count, adaptive sampling stops it) */
    film_real *lum2; /* per pixel: sum of squared sample luminance */
    film_real *aov;  /* NULL (no AOVs), or per pixel AOV_FLOATS sums of AOV samples, one per counted sample */
    int32_t width, height;
} kfilm;

/* One pixel's sums while a pass adds to them. */
typedef struct film_pixel {
    double r, g, b, lum2;
    uint32_t n;
} film_pixel;

KFN film_pixel film_pixel_load(const kfilm *f, size_t pix) {
    film_pixel p;
    p.r = f->sum[3 * pix];
    p.g = f->sum[3 * pix + 1];
    p.b = f->sum[3 * pix + 2];
    p.lum2 = f->lum2[pix];
    p.n = f->count[pix];
    return p;
}

KFN void film_pixel_store(const kfilm *f, size_t pix, const film_pixel *p) {
    f->sum[3 * pix] = (film_real)p->r;
    f->sum[3 * pix + 1] = (film_real)p->g;
    f->sum[3 * pix + 2] = (film_real)p->b;
    f->lum2[pix] = (film_real)p->lum2;
    f->count[pix] = p->n;
}

/* One pixel's AOV sums while a pass adds to them (aov.h's order). */
typedef struct film_aov {
    double v[AOV_FLOATS];
} film_aov;

KFN void film_aov_zero(film_aov *a) {
    for (int k = 0; k < AOV_FLOATS; ++k) a->v[k] = 0.0;
}

KFN void film_aov_load(const kfilm *f, size_t pix, film_aov *a) {
    for (int k = 0; k < AOV_FLOATS; ++k) a->v[k] = f->aov[AOV_FLOATS * pix + k];
}

KFN void film_aov_store(const kfilm *f, size_t pix, const film_aov *a) {
    for (int k = 0; k < AOV_FLOATS; ++k) f->aov[AOV_FLOATS * pix + k] = (film_real)a->v[k];
}

KFN void film_aov_add(film_aov *a, const aov_sample *s) {
    a->v[AOV_ALBEDO] += s->albedo.x;
    a->v[AOV_ALBEDO + 1] += s->albedo.y;
    a->v[AOV_ALBEDO + 2] += s->albedo.z;
    a->v[AOV_NORMAL] += s->normal.x;
    a->v[AOV_NORMAL + 1] += s->normal.y;
    a->v[AOV_NORMAL + 2] += s->normal.z;
    a->v[AOV_DEPTH] += s->depth;
    a->v[AOV_HITS] += s->hit;
}

KFN void film_aov_merge(film_aov *dst, const film_aov *src) {
    for (int k = 0; k < AOV_FLOATS; ++k) dst->v[k] += src->v[k];
}

/* A sample as the film takes it: 0 for a non-finite one (dropped, and counted by the caller),
 * else 1 with *l scaled down to the firefly clamp (clamp_sample; clamp <= 0: off). */
KFN int film_sample(vec3 *l, float clamp) {
    if (!vis_finite(*l)) return 0;
    *l = clamp_sample(*l, clamp);
    return 1;
}

/* Squared luminance of a sample as the sums of adaptive sampling add it. */
KFN double film_lum2(vec3 l) {
    double y = luminance_d(l.x, l.y, l.z);
    return y * y;
}

/* Path tracing: takes the pass's samples of pixel (x, y) in index order into *px until adaptive
 * sampling stops it (its decision depends on the pixel's own sums only), and each sample's AOVs
 * into *aov unless it is NULL; adds the rays traced to *rays, the shadow rays among them to
 * *shadow_rays. `layout`: s->node_layout, or that value as a constant (trace_ray). */
KFN void film_trace_pixel(const kscene *s, const kpass *p, int x, int y, film_pixel *px, film_aov *aov, uint32_t *rays,
                          uint32_t *shadow_rays, uint32_t *bad, uint32_t layout) {
    path_state ps;
#if KERNEL_TARGET_CPU
    /* The CPU generates each sample's camera ray one sample ahead (the sampler's chain of integer
     * operations, then divisions and square roots), so that the out-of-order core computes it
     * while it traces the sample before, as path_advance draws bounces ahead. The same ray: a
     * sample's start depends on (pixel, index) only. */
    path_state next;
    /* the Sobol batches' seeds, hashes of (pixel, dimension), kept across the pixel's samples */
    sampler_cache cache_store, *cache = &cache_store;
    sampler_cache_init(cache);
    if (p->sample_begin < p->sample_end) path_generate(&next, p, x, y, p->sample_begin, cache);
#else
    sampler_cache *cache = NULL;
#endif
    int stage = STAGE_DONE;
    uint32_t i = p->sample_begin;
    for (;;) {
        if (stage == STAGE_DONE) { /* the next sample (the path loop regenerates: path_advance) */
            if (i >= p->sample_end || adaptive_done(px->n, p->adaptive_min, p->adaptive_threshold,
                                                    luminance_d(px->r, px->g, px->b), px->lum2))
                break;
            if (aov) {
                aov_sample a = aov_pass_sample(s, p, x, y, i, layout);
                film_aov_add(aov, &a);
            }
#if KERNEL_TARGET_CPU
            ps = next;
            if (i + 1 < p->sample_end) path_generate(&next, p, x, y, i + 1, cache);
            i++;
#else
            path_generate(&ps, p, x, y, i++, cache);
#endif
            stage = STAGE_INTERSECT;
        }
        stage = path_advance(&ps, s, p, stage, layout, cache);
        if (stage == STAGE_DONE) {
            vec3 l = ps.radiance;
            *rays += ps.rays;
            *shadow_rays += ps.shadow_rays;
            px->n++;
            if (film_sample(&l, p->clamp)) {
                px->r += l.x;
                px->g += l.y;
                px->b += l.z;
                px->lum2 += film_lum2(l);
            } else {
                (*bad)++;
            }
        }
    }
}

/* Adds the sums of a slice of a pixel's samples (taken by film_trace_pixel into a zeroed
 * film_pixel, without adaptive sampling) to the pixel's sums. The GPU splits a pass's samples of
 * a small image into slices taken by different threads and merges them in slice order, so the
 * result does not depend on which thread finished first. */
KFN void film_pixel_merge(film_pixel *dst, const film_pixel *slice) {
    dst->r += slice->r;
    dst->g += slice->g;
    dst->b += slice->b;
    dst->lum2 += slice->lum2;
    dst->n += slice->n;
}

/* The bidirectional integrators: one iteration's estimate c of pixel pix (one sample), and its
 * AOVs a where the film has AOV planes (a may be NULL otherwise). */
KFN void film_add_iteration(const kfilm *f, size_t pix, vec3 c, const aov_sample *a) {
    f->sum[3 * pix] += c.x;
    f->sum[3 * pix + 1] += c.y;
    f->sum[3 * pix + 2] += c.z;
    f->lum2[pix] += (film_real)film_lum2(c);
    f->count[pix] += 1u;
    if (f->aov && a) {
        film_aov s;
        film_aov_load(f, pix, &s);
        film_aov_add(&s, a);
        film_aov_store(f, pix, &s);
    }
}

#endif
