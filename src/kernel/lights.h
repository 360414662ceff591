/* Light sampling for next-event estimation, and the matching pdfs for MIS. Emitters are
 * one-sided: they emit on the side their geometric normal faces. */
#ifndef CAUSTIC_KERNEL_LIGHTS_H
#define CAUSTIC_KERNEL_LIGHTS_H

#include "sampling.h"
#include "environment.h"
#include "texture.h"

typedef struct light_sample {
    vec3 wi;      /* from the shading point towards the light, unit */
    float dist;   /* distance to the light point (K_INF for the environment) */
    vec3 le;      /* emitted radiance arriving along -wi */
    float pdf;    /* solid-angle pdf including the light selection probability */
} light_sample;

KFN vec3 emitted_radiance(const kscene *s, const surface *sf, vec3 wo) {
    const material *m = &s->materials[sf->material];
    if (vis_black(m->emission) || vdot(sf->ng, wo) <= 0.0f) return v3s(0.0f);
    return m->emission;
}

/* Surface-area Jacobian of a transformed sphere at object-space point po (|po| = 0.5):
 * dA_world / dA_object = |det M| * |M^-T n_o|. */
KFN float sphere_area_jacobian(const sphere *sp, vec3 po) {
    const xform *w = &sp->to_world;
    float det = w->m[0][0] * (w->m[1][1] * w->m[2][2] - w->m[1][2] * w->m[2][1]) -
                w->m[0][1] * (w->m[1][0] * w->m[2][2] - w->m[1][2] * w->m[2][0]) +
                w->m[0][2] * (w->m[1][0] * w->m[2][1] - w->m[1][1] * w->m[2][0]);
    vec3 n_o = vscale(po, 2.0f);
    return fabsf(det) * vlen(xform_normal_by_inverse(&sp->to_object, n_o));
}

/* Area pdf (w.r.t. world surface area) of uniformly sampling primitive `id` at point p. */
KFN float prim_area_pdf(const kscene *s, uint32_t id, vec3 p) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i];
        vec3 e1 = vsub(s->positions[t->v[1]], s->positions[t->v[0]]);
        vec3 e2 = vsub(s->positions[t->v[2]], s->positions[t->v[0]]);
        return 2.0f / vlen(vcross(e1, e2));
    }
    case PRIM_SPHERE: {
        const sphere *sp = &s->spheres[i];
        vec3 po = xform_point(&sp->to_object, p);
        po = vscale(vnorm(po), 0.5f);
        return 1.0f / (K_PI * sphere_area_jacobian(sp, po));   /* object sphere area = pi */
    }
    default:
        return 1.0f / vlen(vcross(s->quads[i].u, s->quads[i].v));
    }
}

/* Uniform point on primitive `id`: position and outward geometric normal. */
KFN void prim_sample_point(const kscene *s, uint32_t id, vec2 u, vec3 *p, vec3 *n) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i];
        vec3 p0 = s->positions[t->v[0]], p1 = s->positions[t->v[1]], p2 = s->positions[t->v[2]];
        vec2 b = sample_triangle_barycentric(u);
        *p = vadd(vadd(vscale(p0, 1.0f - b.x - b.y), vscale(p1, b.x)), vscale(p2, b.y));
        vec3 ng = vnorm(vcross(vsub(p1, p0), vsub(p2, p0)));
        if (s->normals) { /* authored normals decide the front, as in surface_at */
            vec3 ns = vadd(vadd(vscale(s->normals[t->v[0]], 1.0f - b.x - b.y), vscale(s->normals[t->v[1]], b.x)),
                           vscale(s->normals[t->v[2]], b.y));
            if (vdot(ns, ng) < 0.0f) ng = vneg(ng);
        }
        *n = ng;
        return;
    }
    case PRIM_SPHERE: {
        const sphere *sp = &s->spheres[i];
        vec3 po = vscale(sample_uniform_sphere(u), 0.5f);
        *p = xform_point(&sp->to_world, po);
        *n = vnorm(xform_normal_by_inverse(&sp->to_object, po));
        return;
    }
    default: {
        const quad *q = &s->quads[i];
        *p = vadd(q->o, vadd(vscale(q->u, u.x), vscale(q->v, u.y)));
        *n = q->n;
        return;
    }
    }
}

/* Index of the first cdf entry greater than u (cdf has n+1 entries, cdf[0]=0, cdf[n]=1). */
KFN uint32_t cdf_find(const float *cdf, uint32_t n, float u) {
    uint32_t lo = 0, hi = n;
    while (lo + 1 < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (cdf[mid] <= u) lo = mid; else hi = mid;
    }
    return lo;
}

/* Solid-angle pdf that NEE would have produced for reaching emitter point (p, n) of primitive
 * `id` from `ref`. Used to weight emitters hit by BSDF sampling. */
KFN float light_pdf(const kscene *s, uint32_t id, vec3 ref, vec3 p, vec3 n) {
    int32_t li = s->prim_light[prim_flat_index(s, id)];
    if (li < 0) return 0.0f;
    vec3 d = vsub(p, ref);
    float d2 = vlen2(d);
    float cos_l = fabsf(vdot(n, d)) / sqrtf(d2);
    if (cos_l <= 0.0f) return 0.0f;
    return (1.0f - s->env_pmf) * s->lights[li].pmf * prim_area_pdf(s, id, p) * d2 / cos_l;
}
/* NEE's solid-angle pdf for the environment in direction d, selection included. */
KFN float env_pdf(const kscene *s, vec3 d) { return s->env_pmf * env_dir_pdf(s, d); }

/* Pick a light (environment or emitter, by power) and a point on it. Returns 0 on failure. */
KFN int sample_light(const kscene *s, vec3 ref, float u_select, vec2 u, light_sample *ls) {
    if (u_select < s->env_pmf) {
        ls->wi = env_sample_dir(s, u);
        ls->dist = K_INF;
        ls->le = env_eval(s, ls->wi);
        ls->pdf = env_pdf(s, ls->wi);
        return ls->pdf > 0.0f;
    }
    if (s->nlights == 0) return 0;
    float ur = (u_select - s->env_pmf) / (1.0f - s->env_pmf);
    uint32_t li = cdf_find(s->light_cdf, s->nlights, kmin(ur, 0.99999994f));
    uint32_t id = s->lights[li].prim;
    vec3 p, n;
    prim_sample_point(s, id, u, &p, &n);
    vec3 d = vsub(p, ref);
    float d2 = vlen2(d);
    if (!(d2 > 0.0f)) return 0;
    float dist = sqrtf(d2);
    ls->wi = vscale(d, 1.0f / dist);
    float cos_l = -vdot(n, ls->wi);
    if (cos_l <= 0.0f) return 0; /* back of a one-sided emitter */
    ls->dist = dist;
    const material *m = &s->materials[prim_id_kind(id) == PRIM_TRIANGLE ? s->triangles[prim_id_index(id)].material
                                      : prim_id_kind(id) == PRIM_SPHERE ? s->spheres[prim_id_index(id)].material
                                                                        : s->quads[prim_id_index(id)].material];
    ls->le = m->emission;
    ls->pdf = (1.0f - s->env_pmf) * s->lights[li].pmf * prim_area_pdf(s, id, p) * d2 / cos_l;
    return ls->pdf > 0.0f && kfinite(ls->pdf);
}

#endif
