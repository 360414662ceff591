/* The seam for participating media: what every integrator calls between tracing a ray and
 * shading what it found, and where a shadow ray asks how much light gets through. No medium
 * exists yet: with KERNEL_MEDIA 0 (kernel/path_state.h) every function here is the surface-only
 * answer, and inlined it leaves no instruction (a segment is empty, a shadow ray's transmittance
 * is 0 or 1). The media issue fills the KERNEL_MEDIA branches; the recipe, step by step, is
 * docs/extending.md, "A medium".
 *
 * The pieces of the seam:
 *   - the path state's media columns (PATH_STATE_MEDIUM_FIELDS, kernel/path_state.h), compiled
 *     only into kernels with KERNEL_MEDIA;
 *   - path_segment: the segment step, run on every traced path segment before anything is
 *     shaded (integrator_pt.h's stage_intersect_done); its segment_event is what path_next reads;
 *   - trace_transmittance: a shadow ray's RGB transmittance, used by NEE in path tracing and by
 *     every connection of the bidirectional integrators (vcm.h);
 *   - the media block of the sampler (sampler_medium_1d, sampler_medium_stream, kernel/sampler.h),
 *     which draws without moving the surface dimensions;
 *   - the bidirectional integrators' refusals (kernel/bidir_limits.h), where KF_MEDIA is refused
 *     until they handle media. */
#ifndef CAUSTIC_KERNEL_MEDIUM_H
#define CAUSTIC_KERNEL_MEDIUM_H

#include "adaptive_depth.h"
#include "bvh_traverse.h"
#include "features.h"
#include "lights.h"
#include "intersect.h"
#include "media/grid.h"
#include "media/hg.h"
#include "media/homogeneous.h"
#include "pass.h"
#include "path_state.h"
#include "sampler.h"

/* A kernel's media code and its medium column come and go together. */
/* The draws of the media block (sampler_medium_1d / _2d) of one media event: a segment uses the
 * first two, a scattering vertex the others (the path's event counter ps->mdim numbers them, so
 * that segments between interfaces at one depth draw apart). */
enum medium_dims {
    MEDIUM_DIM_CHANNEL = 0,
    MEDIUM_DIM_DISTANCE = 1,
    MEDIUM_DIM_LIGHT_PICK = 2,
    MEDIUM_DIM_LIGHT = 3, /* and 4 */
    MEDIUM_DIM_PHASE = 5, /* and 6 */
    MEDIUM_DIM_RR = 7
};
KSTATIC_ASSERT(MEDIUM_DIM_RR < SAMPLE_DIMS_MEDIUM, "kernel/sampler.h: SAMPLE_DIMS_MEDIUM holds the media draws");
/* The pcg32 stream selector of shadow rays' ratio tracking (any constant: the seed varies). */
#define MEDIUM_SHADOW_STREAM 0x6d656469u
/* A shadow ray passes at most this many interfaces. */
#define MEDIUM_MAX_CROSSINGS 64

KSTATIC_ASSERT(KHAS(KF_MEDIA) == (KERNEL_MEDIA != 0),
               "a kernel with KF_MEDIA in KERNEL_FEATURES defines KERNEL_MEDIA 1 first (kernel/path_state.h), and "
               "only such a kernel");

/* ---- the medium kinds (MEDIUM_KINDS, kernel/types.h): one header each, dispatched here --------
 * A kind defines <stem>_transmittance(s, m, r, t, rng) (RGB, over [0, t) of ray r: ratio tracking
 * where it needs null collisions) and <stem>_sample_segment(s, m, r, tmax, beta, u_channel,
 * u_dist, rng) (a medium_segment); rng is the stream of the draws beyond the media block's (a
 * kind with closed forms ignores it). */
KFN vec3 medium_transmittance(const kscene *s, const medium *m, ray r, float t, pcg32 *rng) {
    switch ((medium_kind)m->kind) {
#define MEDIUM_TRANSMITTANCE_ROW(kind, stem, name)                                                                     \
    case kind: return stem##_transmittance(s, m, r, t, rng);
        MEDIUM_KINDS(MEDIUM_TRANSMITTANCE_ROW)
#undef MEDIUM_TRANSMITTANCE_ROW
    case MEDIUM_KIND_COUNT: break;
    }
    return v3s(1.0f);
}
KFN medium_segment medium_sample_segment(const kscene *s, const medium *m, ray r, float tmax, vec3 beta,
                                         float u_channel, float u_dist, pcg32 *rng) {
    switch ((medium_kind)m->kind) {
#define MEDIUM_SEGMENT_ROW(kind, stem, name)                                                                           \
    case kind: return stem##_sample_segment(s, m, r, tmax, beta, u_channel, u_dist, rng);
        MEDIUM_KINDS(MEDIUM_SEGMENT_ROW)
#undef MEDIUM_SEGMENT_ROW
    case MEDIUM_KIND_COUNT: break;
    }
    return homogeneous_sample_segment(s, m, r, tmax, beta, u_channel, u_dist, rng);
}

/* A medium reference (material.medium_inside, camera.medium: index + 1, 0 the vacuum) as an
 * index (MEDIUM_NONE: the vacuum). */
KFN int32_t medium_of_ref(int32_t ref) { return ref - 1; }

/* The medium a ray travelling along `dir` is in after crossing a surface of material m (ng_out:
 * its geometric normal, facing the outside), coming from medium `current`. The rule is pbrt-v4's
 * MediumInterface: a surface whose two sides bind different media sets the medium of the side the
 * ray enters; one whose sides are equal (no media bound) is no boundary, and the ray keeps its
 * medium. So a glass of water is three surfaces: the glass's outside (EXTERIOR air, INTERIOR
 * none: glass is the vacuum here), the water's surface against the glass (EXTERIOR none,
 * INTERIOR water) and the water's free surface against the air (EXTERIOR air, INTERIOR water). */
KFN int32_t medium_after_crossing(const material *m, vec3 ng_out, vec3 dir, int32_t current) {
    if (m->medium_inside == m->medium_outside) return current;
    return medium_of_ref(vdot(dir, ng_out) < 0.0f ? m->medium_inside : m->medium_outside);
}

/* The medium a camera ray starts in (the camera's: a render setting, so kpass's). */
KFN void path_medium_start(path_state *ps, const kpass *p) {
#if KERNEL_MEDIA
    ps->medium = medium_of_ref(p->cam.medium);
    ps->shadow_medium = MEDIUM_NONE;
    ps->mdim = 0u;
#else
    (void)ps;
    (void)p;
#endif
}

/* The segment step: the ray ps->r has been traced (got: it hit ps->h at ps->h.t, else it escaped).
 * The medium it travels in (ps->medium) may absorb, emit and scatter along [0, h.t) (to infinity
 * on a miss): it attenuates ps->throughput, adds its emission to ps->radiance, and where it samples
 * a real scattering it moves the path's vertex there and answers an event of its own. Random
 * numbers: sampler_medium_1d / _2d / _stream of bounce ps->depth (never the surface draws). With no
 * medium: what the trace found. */
KFN int path_segment(path_state *ps, const kscene *s, const kpass *p, int got) {
#if KERNEL_MEDIA
    if (ps->medium != MEDIUM_NONE) {
        uint32_t d = ps->mdim++;
        pcg32 rng = sampler_medium_stream(&ps->smp, d);
        medium_segment seg = medium_sample_segment(s, &s->media[ps->medium], ps->r, got ? ps->h.t : K_INF,
                                                   ps->throughput, sampler_medium_1d(&ps->smp, d, MEDIUM_DIM_CHANNEL),
                                                   sampler_medium_1d(&ps->smp, d, MEDIUM_DIM_DISTANCE), &rng);
        if (!vis_black(seg.emitted)) {
            float w = adaptive_depth_weight(ps->depth, p->depth_start, ps->smp.spp);
            ps->radiance = vadd(ps->radiance, vscale(vmul(ps->throughput, seg.emitted), w));
        }
        ps->throughput = vmul(ps->throughput, seg.weight);
        if (vis_black(ps->throughput)) return SEGMENT_ABSORBED;
        if (seg.scattered) {
            ps->h.t = seg.t;
            return SEGMENT_SCATTER;
        }
    }
    if (got && hit_material_kind(s, ps->h.prim) == MAT_INTERFACE) {
        /* no surface: change medium and go on along the same ray, no bounce */
        surface sf = surface_at(s, ps->r, &ps->h);
        ps->medium = medium_after_crossing(&s->materials[sf.material], sf.ng, ps->r.d, ps->medium);
        ps->r = make_ray(offset_origin(sf.p, sf.ng, ps->r.d), ps->r.d, K_INF);
        return SEGMENT_INTERFACE;
    }
#else
    (void)ps;
    (void)s;
    (void)p;
#endif
    return got ? SEGMENT_SURFACE : SEGMENT_MISS;
}

/* The scattering vertex the segment step found (SEGMENT_SCATTER at ps->h.t along ps->r, inside
 * medium ps->medium): NEE towards a light sampled as at a surface, weighted by the phase function
 * and MIS'd (power heuristic) against phase sampling, which continues the path. Its numbers are
 * the media block's of the vertex (never the surface dimensions). */
KFN void stage_medium(path_state *ps, const kscene *s, const kpass *p) {
#if KERNEL_MEDIA
    const medium *m = &s->media[ps->medium];
    vec3 x = vmadd(ps->r.o, ps->r.d, ps->h.t);
    uint32_t d = ps->mdim++;
    if (ps->depth >= adaptive_depth_limit(ps->smp.index, p->depth_start, p->max_depth)) {
        ps->alive = 0;
        return;
    }
    if (s->nlights > 0 || s->env_pmf > 0.0f) {
        light_sample ls;
        /* a medium vertex has no normal: the light tree's pick without an orientation term (v3s(0)),
         * as light_pdf recomputes it from prev_n below */
        if (sample_light(s, x, v3s(0.0f), sampler_medium_1d(&ps->smp, d, MEDIUM_DIM_LIGHT_PICK),
                         sampler_medium_2d(&ps->smp, d, MEDIUM_DIM_LIGHT), &ls)) {
            float ph = hg_eval(m->g, ps->r.d, ls.wi);
            if (ph > 0.0f && ls.pdf > 0.0f) {
                float w = ls.delta ? 1.0f : mis_power(ls.pdf, ph);
                w *= adaptive_depth_weight(ps->depth + 1, p->depth_start, ps->smp.spp);
                ps->shadow_contrib = vscale(vmul(ps->throughput, ls.le), ph * w / ls.pdf);
                ps->shadow = shadow_ray_to(&ls, x, ls.wi);
                ps->shadow_medium = ps->medium;
                ps->shadow_pending = 1;
            }
        }
    }
    vec3 wi = hg_sample(m->g, ps->r.d, sampler_medium_2d(&ps->smp, d, MEDIUM_DIM_PHASE));
    ps->prev_pdf = hg_pdf(m->g, ps->r.d, wi);
    ps->prev_delta = 0;
    ps->prev_p = x;
    ps->prev_n = v3s(0.0f);
    ps->r = make_ray(x, wi, K_INF);
    ps->depth++;
    int cont = 1; /* the phase sample's weight is 1: the throughput is unchanged */
    if (ps->depth >= p->rr_depth) {
        float q = kmax(0.05f, 1.0f - vmaxc(ps->throughput) * ps->eta_scale);
        if (sampler_medium_1d(&ps->smp, d, MEDIUM_DIM_RR) < q)
            cont = 0;
        else
            ps->throughput = vscale(ps->throughput, 1.0f / (1.0f - q));
    }
    ps->alive = cont;
#else
    (void)ps;
    (void)s;
    (void)p;
#endif
}

/* The transmittance of a shadow ray that one traversal found occluded or not: the whole answer
 * for surfaces (0 or 1 on every channel). */
KFN vec3 surface_transmittance(int occluded) { return v3s(occluded ? 0.0f : 1.0f); }

/* The RGB transmittance along shadow ray r (r.t_max: the light's distance), which starts in
 * medium `medium` (MEDIUM_NONE: the vacuum). For surfaces 0 (occluded) or 1. With media the walk
 * passes the interfaces (materials that are only a medium boundary), changing medium at each, and
 * estimates each medium's part by ratio tracking with a stream seeded by `seed` (a pure function
 * of the path's sample: sampler_medium_stream's, or the bidirectional integrators' generator's
 * state, unused and so free where the kernel has no media). Where a connection's radiance is
 * weighted by it: add vmul(contrib, tr) where tr is not black, which for surfaces is the old
 * "add contrib if unoccluded" to the bit. */
KFN vec3 trace_transmittance(const kscene *s, ray r, int32_t medium, uint32_t seed, uint32_t layout) {
#if KERNEL_MEDIA
    vec3 tr = v3s(1.0f);
    pcg32 rng = pcg32_seed(hash_u64(seed), MEDIUM_SHADOW_STREAM); /* ratio tracking's (grid media) */
    for (int crossings = 0; crossings < MEDIUM_MAX_CROSSINGS; ++crossings) {
        hit h;
        int got = trace_closest_layout(s, r, &h, layout);
        if (medium != MEDIUM_NONE) {
            tr = vmul(tr, medium_transmittance(s, &s->media[medium], r, got ? h.t : r.tmax, &rng));
            if (vis_black(tr)) return tr;
        }
        if (!got) return tr;
        surface sf = surface_at(s, r, &h);
        const material *m = &s->materials[sf.material];
        if (m->kind != MAT_INTERFACE) return v3s(0.0f); /* an opaque (or refracting) surface */
        medium = medium_after_crossing(m, sf.ng, r.d, medium);
        vec3 o = offset_origin(sf.p, sf.ng, r.d);
        float left = r.tmax - vdot(vsub(o, r.o), r.d);
        if (!(left > 0.0f)) return tr;
        r = make_ray(o, r.d, left);
    }
    return v3s(0.0f); /* more interfaces than MEDIUM_MAX_CROSSINGS: counted as blocked */
#else
    (void)medium;
    (void)seed;
    return surface_transmittance(trace_occluded_layout(s, r, layout));
#endif
}

#endif
