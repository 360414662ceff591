/* Unidirectional path tracing with next-event estimation, MIS (power heuristic) between light
 * and BSDF sampling, and Russian roulette. Written as stages so the CPU runs them in a loop per
 * sample and the GPU can run each as its own kernel over queues. */
#ifndef CAUSTIC_KERNEL_INTEGRATOR_PT_H
#define CAUSTIC_KERNEL_INTEGRATOR_PT_H

#include "adaptive_depth.h"
#include "bsdf.h"
#include "bvh_traverse.h"
#include "camera.h"
#include "lights.h"
#include "medium.h"
#include "pass.h"
#include "path_state.h"
#include "spectral.h"

/* c: the pixel's sampler seeds (sampler_cache), or NULL. */
KFN void path_generate(path_state *ps, const kpass *p, int px, int py, uint32_t index, sampler_cache *c) {
    ps->smp = sampler_start(p->sampler, (uint32_t)px, (uint32_t)py, index, p->seed, p->spp_total);
    vec2 u_pixel, u_lens;
    sampler_camera(&ps->smp, c, &u_pixel, &u_lens);
    ps->r = camera_ray(&p->cam, px, py, u_pixel, u_lens);
    ps->throughput = v3s(1.0f);
    ps->eta_scale = 1.0f;
    ps->radiance = v3s(0.0f);
    ps->prev_p = ps->r.o;
    if (KHAS(KF_LIGHT_TREE)) ps->prev_n = v3s(0.0f); /* read by the light tree's pick only */
    ps->prev_pdf = 0.0f;
    ps->prev_delta = 1;
    ps->depth = 0;
    ps->shadow = make_ray(ps->r.o, ps->r.d, 0.0f);
    ps->shadow_contrib = v3s(0.0f);
    ps->shadow_pending = 0;
    ps->alive = 1;
    ps->rays = 0;
    ps->shadow_rays = 0;
    path_medium_start(ps, p);
#if KERNEL_SPECTRAL
    ps->lambda = 0.0f;
#endif
}

/* The stage after `stage`, the one place that says it (the CPU's loop, the GPU megakernel's step
 * and the wavefront's queues all ask here). event: what STAGE_INTERSECT's segment step found (a
 * segment_event); the other stages leave their answer in the path state (shadow_pending, alive). */
KFN int path_next(const path_state *ps, int stage, int event) {
#if KERNEL_MEDIA
    if (stage == STAGE_INTERSECT)
        return event == SEGMENT_SURFACE     ? STAGE_SHADE
               : event == SEGMENT_SCATTER   ? STAGE_MEDIUM
               : event == SEGMENT_INTERFACE ? STAGE_INTERSECT
                                            : STAGE_DONE;
    if (stage == STAGE_MEDIUM && ps->shadow_pending) return STAGE_SHADOW;
#else
    if (stage == STAGE_INTERSECT) return event == SEGMENT_SURFACE ? STAGE_SHADE : STAGE_DONE;
#endif
    if (stage == STAGE_SHADE && ps->shadow_pending) return STAGE_SHADOW;
    return ps->alive ? STAGE_INTERSECT : STAGE_DONE;
}

/* The shading normal of the path's previous vertex, for the light tree's pick in light_pdf: a
 * kernel without the tree (KF_LIGHT_TREE) neither keeps nor reads it. */
KFN vec3 path_prev_n(const path_state *ps) { return KHAS(KF_LIGHT_TREE) ? ps->prev_n : v3s(0.0f); }

/* --adaptive-depth: p says the first depth limit (adaptive_depth.h). `layout`, here and below:
 * s->node_layout, or that value as a constant (trace_ray). The intersect stage's result: the
 * segment step's event (path_segment, kernel/medium.h). */
KFN int stage_intersect_done(path_state *ps, const kscene *s, const kpass *p, int got) {
    int event = path_segment(ps, s, p, got);
    if (event == SEGMENT_MISS && !vis_black(s->env_radiance)) {
        float w = adaptive_depth_weight(ps->depth, p->depth_start, ps->smp.spp);
        if (!ps->prev_delta && s->env_pmf > 0.0f) w *= mis_power(ps->prev_pdf, env_pdf(s, ps->r.d));
        ps->radiance = vadd(ps->radiance, vscale(vmul(ps->throughput, env_eval(s, ps->r.d)), w));
    }
    return event;
}
KFN int stage_intersect(path_state *ps, const kscene *s, const kpass *p, uint32_t layout) {
    ps->rays++;
    return stage_intersect_done(ps, s, p, trace_closest_layout(s, ps->r, &ps->h, layout));
}

/* The pending NEE contribution, weighted by its shadow ray's transmittance tr (trace_transmittance).
 * Without media tr is 0 or 1 on every channel: the contribution is added as it is where the ray
 * is unoccluded (no multiply, the same bits and instructions as a yes/no answer). */
KFN void stage_shadow_done(path_state *ps, vec3 tr) {
    if (!vis_black(tr))
        ps->radiance = vadd(ps->radiance, KERNEL_MEDIA ? vmul(ps->shadow_contrib, tr) : ps->shadow_contrib);
    ps->shadow_pending = 0;
}
/* The medium the shadow ray starts in: the one on the light's side of its vertex (a medium kernel
 * keeps it with the pending shadow ray: stage_shade_with, stage_medium). */
KFN int32_t path_shadow_medium(const path_state *ps) {
#if KERNEL_MEDIA
    return ps->shadow_medium;
#else
    (void)ps;
    return MEDIUM_NONE;
#endif
}
KFN void stage_shadow(path_state *ps, const kscene *s, uint32_t layout) {
    ps->rays++;
    ps->shadow_rays++;
    uint32_t seed = hash_combine(ps->smp.pixel_seed ^ ps->smp.index, sampler_medium_dim((uint32_t)ps->depth, 0u));
    stage_shadow_done(ps, trace_transmittance(s, ps->shadow, path_shadow_medium(ps), seed, layout));
}

/* Shading with the bounce's random numbers u (sampler_bounce: drawn before the depth test, or
 * ahead of time by path_advance on the CPU). */
KFN_CPU_CALL void stage_shade_with(path_state *ps, const kscene *s, const kpass *p, const bounce_samples *u) {
    surface sf = surface_at(s, ps->r, &ps->h);
    material mat = material_at(s, &s->materials[sf.material], sf.uv, sf.p);
    const material *m = &mat;
    vec3 wo_world = vneg(ps->r.d);
#if KERNEL_MEDIA
    const vec3 ng_out = sf.ng; /* facing the outside: which medium a crossing ray enters */
#endif

    /* Emission reached by the previous bounce, MIS-weighted against NEE. */
    vec3 le = emitted_radiance(s, &sf, wo_world);
    if (!vis_black(le)) {
        float w = ps->prev_delta
                      ? 1.0f
                      : mis_power(ps->prev_pdf, light_pdf(s, ps->h.prim, ps->prev_p, path_prev_n(ps), sf.p, sf.ng));
        w *= adaptive_depth_weight(ps->depth, p->depth_start, ps->smp.spp);
        ps->radiance = vadd(ps->radiance, vscale(vmul(ps->throughput, le), w));
    }
    if (ps->depth >= adaptive_depth_limit(ps->smp.index, p->depth_start, p->max_depth)) {
        ps->alive = 0;
        return;
    }
#if KERNEL_SPECTRAL
    /* a dispersive surface: the path's wavelength (picked at the first), the IOR at it */
    if (KHAS(KF_DISPERSION) && material_dispersive(&mat))
        dispersion_resolve(&mat, &ps->lambda, &ps->throughput, spectral_u(&ps->smp));
#endif

    /* Two-sided materials shade the side the ray arrived on. */
    const uint32_t lobes = material_flags(m);
    if (!(lobes & BSDF_INTERIOR) && vdot(wo_world, sf.ng) < 0.0f) {
        sf.ng = vneg(sf.ng);
        sf.ns = vneg(sf.ns);
    }
    frame fr = frame_from_normal(sf.ns);
    vec3 wo = frame_to_local(fr, wo_world);
    vec3 albedo = material_albedo(s, m, sf.uv, sf.p);

    float u_light_pick = u->light_pick, u_lobe = u->lobe, u_rr = u->rr;
    vec2 u_light = u->light, u_bsdf = u->bsdf;

    /* Next-event estimation. */
    if (!(lobes & BSDF_ALL_DELTA) && (s->nlights > 0 || s->env_pmf > 0.0f)) {
        light_sample ls;
        int ok = sample_light(s, sf.p, sf.ns, u_light_pick, u_light, &ls);
        vec3 wi = ok ? frame_to_local(fr, ls.wi) : v3s(0.0f);
        if (ok && bsdf_sides_agree_lobes(lobes, wo, wi, wo_world, ls.wi, sf.ng)) {
            vec3 f = bsdf_eval(m, albedo, wo, wi);
            if (!vis_black(f)) {
                float w = ls.delta ? 1.0f : mis_power(ls.pdf, bsdf_pdf(m, wo, wi));
                w *= adaptive_depth_weight(ps->depth + 1, p->depth_start, ps->smp.spp);
                ps->shadow_contrib = vscale(vmul(vmul(ps->throughput, f), ls.le), w / ls.pdf);
                ps->shadow = shadow_ray_to(&ls, sf.p, sf.ng);
                ps->shadow_pending = 1;
#if KERNEL_MEDIA
                ps->shadow_medium = vdot(ls.wi, sf.ng) * vdot(wo_world, sf.ng) < 0.0f
                                        ? medium_after_crossing(m, ng_out, ls.wi, ps->medium)
                                        : ps->medium;
#endif
            }
        }
    }

    /* Continue the path by sampling the BSDF. */
    bsdf_sample bs;
    int cont = 0; /* the path goes on */
    if (bsdf_sample_dir(m, albedo, wo, u_lobe, u_bsdf, &bs)) {
        vec3 wi_world = frame_to_world(fr, bs.wi);
        /* The sampled side must agree with the geometric surface (no light leaks). */
        int reflect = bs.wi.z * wo.z > 0.0f;
        int geo_reflect = vdot(wi_world, sf.ng) * vdot(wo_world, sf.ng) > 0.0f;
        if (reflect == geo_reflect) {
            ps->throughput = vmul(ps->throughput, bs.weight);
            ps->prev_pdf = bs.pdf;
            ps->prev_delta = bs.delta;
            ps->prev_p = sf.p;
            if (KHAS(KF_LIGHT_TREE)) ps->prev_n = sf.ns;
            ps->r = make_ray(offset_origin(sf.p, sf.ng, wi_world), wi_world, K_INF);
            ps->depth++;
#if KERNEL_MEDIA
            if (!reflect) ps->medium = medium_after_crossing(m, ng_out, wi_world, ps->medium);
#endif
            /* glass scaled the radiance by 1/eta^2 (eta = n_t / n_i); roulette weighs it back */
            if (!reflect && (m->kind == MAT_DIELECTRIC || m->kind == MAT_ROUGH_GLASS)) {
                float eta = wo.z > 0.0f ? m->ior : 1.0f / m->ior;
                ps->eta_scale *= eta * eta;
            }
            cont = 1;
            if (ps->depth >= p->rr_depth) {
                float q = kmax(0.05f, 1.0f - vmaxc(ps->throughput) * ps->eta_scale);
                if (u_rr < q)
                    cont = 0;
                else
                    ps->throughput = vscale(ps->throughput, 1.0f / (1.0f - q));
            }
            if (vis_black(ps->throughput)) cont = 0;
        }
    }
    ps->alive = cont;
}

/* A bounce's numbers are drawn by every shade that continues the path (depth below its limit),
 * in a fixed order so that samplers stay aligned across paths. */
KFN int shade_draws(const path_state *ps, const kpass *p) {
    return ps->depth < adaptive_depth_limit(ps->smp.index, p->depth_start, p->max_depth);
}

KFN void stage_shade(path_state *ps, const kscene *s, const kpass *p) {
    bounce_samples u = bounce_samples_none();
    if (shade_draws(ps, p)) u = sampler_bounce(&ps->smp, NULL);
    stage_shade_with(ps, s, p, &u);
}

/* Firefly clamp: scales a sample down so its luminance is at most max_lum (hue and saturation
 * kept). Biased, off (max_lum <= 0) by default. */
KFN vec3 clamp_sample(vec3 l, float max_lum) {
    float y = vluminance(l);
    return (max_lum > 0.0f && y > max_lum) ? vscale(l, max_lum / y) : l;
}

/* Advances a path that path_generate started (stage STAGE_INTERSECT) or that stopped at `stage`.
 * On the GPU by one traced ray, either kind through one traversal call, and the shading after a
 * closest hit: the lanes of a warp trace together whatever stage their paths are at, and a lane
 * whose path ends starts its pixel's next sample at once (film_trace_pixel), where a loop per
 * path left lanes idle until the warp's longest path ended and the closest-hit and shadow-ray
 * calls took turns. On the CPU (called once per path, at STAGE_INTERSECT) to the path's end,
 * each bounce's numbers drawn one bounce ahead: they depend on the dimension only, so the
 * out-of-order core computes them (a chain of dependent integer operations) while it traces and
 * shades. The same numbers in the same order either way. */
KFN int path_advance(path_state *ps, const kscene *s, const kpass *p, int stage, uint32_t layout, sampler_cache *c) {
#if KERNEL_TARGET_CPU
    bounce_samples next = bounce_samples_none();
    if (shade_draws(ps, p)) next = sampler_bounce(&ps->smp, c);
    while (stage != STAGE_DONE) {
        int event = 0;
        switch ((path_stage)stage) { /* every stage named (-Werror=switch) */
        case STAGE_INTERSECT: event = stage_intersect(ps, s, p, layout); break;
        case STAGE_MEDIUM:
#if KERNEL_MEDIA
            stage_medium(ps, s, p);
#endif
            break;
        case STAGE_SHADE: {
            bounce_samples u = next;
            ps->depth++; /* the next shade's depth, if this one continues the path */
            if (shade_draws(ps, p)) next = sampler_bounce(&ps->smp, c);
            ps->depth--;
            stage_shade_with(ps, s, p, &u);
            break;
        }
        case STAGE_SHADOW: stage_shadow(ps, s, layout); break;
        case STAGE_DONE: break; /* the loop's condition */
        }
        stage = path_next(ps, stage, event);
    }
    return STAGE_DONE;
#else
    (void)c;
#if KERNEL_MEDIA
    /* a shadow ray through media passes interfaces and is attenuated: not one any-hit traversal */
    if (stage == STAGE_SHADOW) {
        stage_shadow(ps, s, layout);
        return path_next(ps, STAGE_SHADOW, 0);
    }
#endif
    int any = stage == STAGE_SHADOW;
    ps->rays++;
    ps->shadow_rays += (uint32_t)any;
    int got = trace_layout(s, any ? ps->shadow : ps->r, &ps->h, any, layout);
    if (any) {
        stage_shadow_done(ps, surface_transmittance(got));
        return path_next(ps, STAGE_SHADOW, 0);
    }
    stage = path_next(ps, STAGE_INTERSECT, stage_intersect_done(ps, s, p, got));
#if KERNEL_MEDIA
    if (stage == STAGE_MEDIUM) {
        stage_medium(ps, s, p);
        return path_next(ps, STAGE_MEDIUM, 0);
    }
#endif
    if (stage != STAGE_SHADE) return stage;
    stage_shade(ps, s, p);
    return path_next(ps, STAGE_SHADE, 0);
#endif
}

#endif
