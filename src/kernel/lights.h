/* Light sampling for next-event estimation, and the matching pdfs for MIS. An emitter emits on
 * the side its geometric normal faces, or on both sides when its material is two_sided (then a
 * light sub-path leaves either side with probability 1/2). */
#ifndef CAUSTIC_KERNEL_LIGHTS_H
#define CAUSTIC_KERNEL_LIGHTS_H

#include "sampling.h"
#include "environment.h"
#include "texture.h"
#include "light_tree.h"

typedef struct light_sample {
    vec3 wi;    /* from the shading point towards the light, unit */
    float dist; /* distance to the light point (K_INF for the environment and the sun) */
    vec3 p_end; /* area lights: the light point pushed off its surface towards the shading point,
                   where a shadow ray ends (shadow_ray_to) */
    vec3 le;    /* radiance arriving along -wi; for delta lights the irradiance term, so that
                     le * f * cos / pdf is the estimate either way */
    float pdf;  /* solid-angle pdf including the light selection probability (delta: the
                     selection probability alone) */
    int delta;  /* point or directional light: BSDF sampling can never hit it */
    /* for bidirectional MIS: */
    float pick;      /* selection probability (NEE's: with a light tree it depends on the shading point) */
    float pick_emit; /* the probability that light_emit picks the same light (by power) */
    float pdf_emit;  /* pdf (w.r.t. area x solid angle) that the light emits this particle, pick excluded */
    float cos_light; /* cosine at the light (1 for point, directional and environment) */
    int finite;      /* area and point lights; not the environment or the sun */
} light_sample;

/* Cosine between an emitter's normal n and the direction d light leaves it along, as far as the
 * material emits that way: |cos| for two-sided emitters, else cos clamped at 0. */
KFN float emit_cos(const material *m, vec3 n, vec3 d) {
    float c = vdot(n, d);
    return m->two_sided ? fabsf(c) : kmax(c, 0.0f);
}
/* The fraction of emitted directions a light sub-path draws on one side (cosine-weighted). */
KFN float emit_side_pmf(const material *m) { return m->two_sided ? 0.5f : 1.0f; }

KFN vec3 emitted_radiance(const kscene *s, const surface *sf, vec3 wo) {
    const material *m = &s->materials[sf->material];
    if (vis_black(m->emission) || emit_cos(m, sf->ng, wo) <= 0.0f) return v3s(0.0f);
    return material_emission(s, m, sf->uv, sf->p);
}

/* Spot light cone: intensity scale for a particle leaving along d, by the light's format's curve
 * (SPOT_FALLOFFS, kernel/types.h). */
KFN float spot_falloff(const light *l, vec3 d) {
    float c = vdot(d, l->axis);
    if (c <= l->cos_outer) return 0.0f;
    if (c >= l->cos_inner) return 1.0f;
    if (l->falloff == SPOT_FALLOFF_LINEAR_ANGLE) {
        float outer = acosf(kclamp(l->cos_outer, -1.0f, 1.0f)), inner = acosf(kclamp(l->cos_inner, -1.0f, 1.0f));
        return kclamp((outer - acosf(kclamp(c, -1.0f, 1.0f))) / kmax(1e-6f, outer - inner), 0.0f, 1.0f);
    }
    float a = kclamp((c - l->cos_outer) / kmax(1e-6f, l->cos_inner - l->cos_outer), 0.0f, 1.0f);
    return l->falloff == SPOT_FALLOFF_SMOOTHSTEP ? a * a * (3.0f - 2.0f * a) : a * a;
}
/* Particles of a spot light leave uniformly within its outer cone. */
KFN float spot_cone_pdf(const light *l) { return 1.0f / (2.0f * K_PI * kmax(1e-6f, 1.0f - l->cos_outer)); }

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

/* Area pdf (w.r.t. world surface area) of uniformly sampling light l's primitive at point p: the
 * light table's 1 / area, except on a sphere, where it depends on p. */
KFN float light_area_pdf(const kscene *s, const light *l, vec3 p) {
    if (!KHAS(KF_PRIM(PRIM_SPHERE)) || prim_id_kind(l->prim) != PRIM_SPHERE) return l->area_pdf;
    const sphere *sp = &s->spheres[prim_id_index(l->prim)];
    vec3 po = xform_point(&sp->to_object, p);
    po = vscale(vnorm(po), 0.5f);
    return 1.0f / (K_PI * sphere_area_jacobian(sp, po)); /* object sphere area = pi */
}

/* Uniform point on area light l's primitive: position, outward geometric normal and texture
 * coordinates (as surface_at computes them). */
KFN void light_sample_point_uv(const kscene *s, const light *l, vec2 u, vec3 *p, vec3 *n, vec2 *uv) {
    uint32_t i = prim_id_index(l->prim);
    switch (prim_id_kind(l->prim)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i]; /* read only for uvs and normals */
        vec3 p0 = l->q0, p1 = l->q1, p2 = l->q2;
        vec2 b = sample_triangle_barycentric(u);
        if (s->uvs) {
            vec2 u0 = s->uvs[t->v[0]], u1 = s->uvs[t->v[1]], u2 = s->uvs[t->v[2]];
            float b0 = 1.0f - b.x - b.y;
            *uv = v2(b0 * u0.x + b.x * u1.x + b.y * u2.x, b0 * u0.y + b.x * u1.y + b.y * u2.y);
        } else {
            *uv = b;
        }
        *p = vadd(vadd(vscale(p0, 1.0f - b.x - b.y), vscale(p1, b.x)), vscale(p2, b.y));
        vec3 ng = l->ng;
        if (s->normals) { /* authored normals decide the front, as in surface_at */
            vec3 ns = vadd(vadd(vscale(s->normals[t->v[0]], 1.0f - b.x - b.y), vscale(s->normals[t->v[1]], b.x)),
                           vscale(s->normals[t->v[2]], b.y));
            if (vdot(ns, ng) < 0.0f) ng = vneg(ng);
        }
        *n = ng;
        return;
    }
    case PRIM_SPHERE:
        if (KHAS(KF_PRIM(PRIM_SPHERE))) {
            const sphere *sp = &s->spheres[i];
            vec3 po = vscale(sample_uniform_sphere(u), 0.5f);
            *p = xform_point(&sp->to_world, po);
            *n = vnorm(xform_normal_by_inverse(&sp->to_object, po));
            *uv = sphere_uv(s, sp->material, po);
            return;
        }
        /* fall through - a kernel without spheres never gets here (kernel/features.h) */
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ {
        const quad *q = &s->quads[i];
        *p = vadd(q->o, vadd(vscale(q->u, u.x), vscale(q->v, u.y)));
        *n = l->ng;
        *uv = u;
        return;
    }
    }
}
KFN void light_sample_point(const kscene *s, const light *l, vec2 u, vec3 *p, vec3 *n) {
    vec2 uv;
    light_sample_point_uv(s, l, u, p, n, &uv);
}

/* The index i < n with cdf[i] <= u < cdf[i + 1] (cdf has n+1 non-decreasing entries, cdf[0]=0,
 * cdf[n]=1). A bisection whose step count depends on n only, the comparison deciding a select,
 * not a branch: light selection's branches on u mispredicted half the time. */
KFN uint32_t cdf_find(const float *cdf, uint32_t n, float u) {
    uint32_t lo = 0;
    for (uint32_t len = n; len > 1;) {
        uint32_t half = len >> 1;
        lo = cdf[lo + half] <= u ? lo + half : lo;
        len -= half;
    }
    return lo;
}

/* Selection probability of light li by power (light emission always; NEE without a tree), and of
 * the environment. */
KFN float light_pick(const kscene *s, uint32_t li) { return (1.0f - s->env_pmf) * s->lights[li].pmf; }

/* NEE's selection probability of light li from shading point ref with shading normal ref_n (zero
 * where there is none): by power without a light tree or for a directional light, else the
 * tree's (light_tree.h). The probability sample_light picks li with, to the last rounding. */
KFN float light_pick_at(const kscene *s, uint32_t li, vec3 ref, vec3 ref_n) {
    if (!KHAS(KF_LIGHT_TREE) || s->nlight_nodes == 0 || s->lights[li].kind == LIGHT_DIRECTIONAL)
        return light_pick(s, li);
    return (1.0f - s->env_pmf) * s->light_tree_share * light_tree_pmf(s, li, ref, ref_n);
}

/* NEE's pick among the lights for ur uniform in [0, 1): light *li with probability *pick (what
 * light_pick_at says). With a tree, the power cdf first decides between the directional lights
 * and the tree (ur rescaled within the interval it fell in, uniform again, walks the tree). */
KFN int light_pick_sample(const kscene *s, vec3 ref, vec3 ref_n, float ur, uint32_t *li, float *pick) {
    if (!KHAS(KF_LIGHT_TREE) || s->nlight_nodes == 0) { /* a kernel without the tree: its scenes have none */
        *li = cdf_find(s->light_cdf, s->nlights, ur);
        *pick = light_pick(s, *li);
        return 1;
    }
    if (s->ndirectional > 0) {
        uint32_t j = cdf_find(s->light_cdf, s->nlights, ur);
        if (s->lights[j].kind == LIGHT_DIRECTIONAL) {
            *li = j;
            *pick = light_pick(s, j);
            return 1;
        }
        float pm = s->lights[j].pmf;
        ur = pm > 0.0f ? kmin((ur - s->light_cdf[j]) / pm, 0.99999994f) : 0.0f;
    }
    float t;
    if (!light_tree_sample(s, ref, ref_n, ur, li, &t)) return 0;
    *pick = (1.0f - s->env_pmf) * s->light_tree_share * t;
    return *pick > 0.0f;
}

/* Solid-angle pdf that NEE would have produced for reaching emitter point (p, n) of primitive
 * `id` from `ref` (shading normal ref_n, or zero). Used to weight emitters hit by BSDF sampling. */
KFN float light_pdf(const kscene *s, uint32_t id, vec3 ref, vec3 ref_n, vec3 p, vec3 n) {
    int32_t li = s->prim_light[prim_flat_index(s, id)];
    if (li < 0) return 0.0f;
    vec3 d = vsub(p, ref);
    float d2 = vlen2(d);
    float cos_l = fabsf(vdot(n, d)) / sqrtf(d2);
    if (cos_l <= 0.0f) return 0.0f;
    const light *l = &s->lights[li];
    return light_pick_at(s, (uint32_t)li, ref, ref_n) * light_area_pdf(s, l, p) * d2 / cos_l;
}
/* NEE's solid-angle pdf for the environment in direction d, selection included. */
KFN float env_pdf(const kscene *s, vec3 d) { return s->env_pmf * env_dir_pdf(s, d); }

/* Pick a light (environment, or one of the others: by power, or through the light tree) and a
 * point on it, as seen from ref (shading normal ref_n, or zero). Returns 0 on failure. */
KFN int sample_light(const kscene *s, vec3 ref, vec3 ref_n, float u_select, vec2 u, light_sample *ls) {
    ls->delta = 0;
    ls->cos_light = 1.0f;
    ls->p_end = v3s(0.0f);
    if (u_select < s->env_pmf) {
        ls->wi = env_sample_dir(s, u);
        ls->dist = K_INF;
        ls->le = env_eval(s, ls->wi);
        ls->pick = s->env_pmf;
        ls->pick_emit = s->env_pmf;
        float pdf_dir = env_dir_pdf(s, ls->wi);
        ls->pdf = s->env_pmf * pdf_dir;
        ls->pdf_emit = pdf_dir / (K_PI * s->scene_radius * s->scene_radius);
        ls->finite = 0;
        return ls->pdf > 0.0f;
    }
    if (s->nlights == 0) return 0;
    float ur = (u_select - s->env_pmf) / (1.0f - s->env_pmf);
    uint32_t li;
    if (!light_pick_sample(s, ref, ref_n, kmin(ur, 0.99999994f), &li, &ls->pick)) return 0;
    ls->pick_emit = light_pick(s, li);
    const light *l = &s->lights[li];
    if (KHAS(KF_LIGHT(LIGHT_POINT)) && l->kind == LIGHT_POINT) {
        vec3 d = vsub(l->p, ref);
        float d2 = vlen2(d);
        if (!(d2 > 0.0f)) return 0;
        ls->dist = sqrtf(d2);
        ls->wi = vscale(d, 1.0f / ls->dist);
        ls->le = vscale(l->intensity, 1.0f / d2);
        ls->pdf = ls->pick;
        ls->pdf_emit = pdf_uniform_sphere();
        ls->delta = 1;
        ls->finite = 1;
        return ls->pdf > 0.0f;
    }
    if (KHAS(KF_LIGHT(LIGHT_SPOT)) && l->kind == LIGHT_SPOT) {
        vec3 d = vsub(l->p, ref);
        float d2 = vlen2(d);
        if (!(d2 > 0.0f)) return 0;
        ls->dist = sqrtf(d2);
        ls->wi = vscale(d, 1.0f / ls->dist);
        float fall = spot_falloff(l, vneg(ls->wi));
        if (!(fall > 0.0f)) return 0;
        ls->le = vscale(l->intensity, fall / d2);
        ls->pdf = ls->pick;
        ls->pdf_emit = spot_cone_pdf(l);
        ls->delta = 1;
        ls->finite = 1;
        return ls->pdf > 0.0f;
    }
    if (KHAS(KF_LIGHT(LIGHT_DIRECTIONAL)) && l->kind == LIGHT_DIRECTIONAL) {
        ls->wi = vneg(l->p);
        ls->dist = K_INF;
        ls->le = l->intensity;
        ls->pdf = ls->pick;
        ls->pdf_emit = 1.0f / (K_PI * s->scene_radius * s->scene_radius);
        ls->delta = 1;
        ls->finite = 0;
        return ls->pdf > 0.0f;
    }
    if (!KHAS(KF_LIGHT(LIGHT_AREA))) return 0;
    vec3 p, n;
    vec2 uv;
    light_sample_point_uv(s, l, u, &p, &n, &uv);
    vec3 d = vsub(p, ref);
    float d2 = vlen2(d);
    if (!(d2 > 0.0f)) return 0;
    float dist = sqrtf(d2);
    ls->wi = vscale(d, 1.0f / dist);
    const material *m = &s->materials[l->material];
    float cos_l = emit_cos(m, n, vneg(ls->wi));
    if (cos_l <= 0.0f) return 0; /* back of a one-sided emitter */
    ls->dist = dist;
    ls->p_end = offset_origin(p, n, vneg(ls->wi));
    ls->le = material_emission(s, m, uv, p);
    float pdf_area = light_area_pdf(s, l, p);
    ls->pdf = ls->pick * pdf_area * d2 / cos_l;
    ls->pdf_emit = pdf_area * cos_l * K_INV_PI * emit_side_pmf(m);
    ls->cos_light = cos_l;
    ls->finite = 1;
    return ls->pdf > 0.0f && kfinite(ls->pdf);
}

/* The shadow ray from shading point p (geometric normal ng) to a sampled light. To an area light it
 * runs between two points pushed off their surfaces, so it can end at the light point itself: a
 * ray along wi ended 0.1 % short let a two-sided cube lamp's far side shine through its near side,
 * and ended any shorter it hit the lamp itself, the origin being pushed off along ng, not wi. A
 * point or spot light is never hit, so its ray keeps the 0.1 % cut. */
KFN ray shadow_ray_to(const light_sample *ls, vec3 p, vec3 ng) {
    vec3 o = offset_origin(p, ng, ls->wi);
    if (ls->dist == K_INF) return make_ray(o, ls->wi, K_INF);
    if (ls->delta) return make_ray(o, ls->wi, ls->dist * (1.0f - 1e-3f) - vlen(vsub(o, p)));
    vec3 d = vsub(ls->p_end, o);
    float len = vlen(d);
    return make_ray(o, vscale(d, 1.0f / len), len);
}

/* ---- emission: starting light sub-paths ---------------------------------------------------- */
typedef struct light_emission {
    vec3 p, d;        /* start and direction of the particle */
    vec3 weight;      /* emitted power over the pdf: the light sub-path's starting throughput */
    float pdf_emit;   /* pdf of (p, d), selection included */
    float pdf_direct; /* pdf that NEE picks p (area measure; solid angle for infinite lights), selection included */
    float cos_light;
    int delta, finite;
    int32_t light; /* the light's index; -1: the environment */
} light_emission;

/* Infinite lights emit from a disk of the scene's bounding radius facing direction d. */
KFN vec3 scene_disk_point(const kscene *s, vec3 d, vec2 u) {
    frame f = frame_from_normal(d);
    vec2 q = sample_disk_concentric(u);
    float r = s->scene_radius;
    return vadd(s->scene_center, vscale(vadd(vneg(d), vadd(vscale(f.t, q.x), vscale(f.b, q.y))), r));
}

KFN int light_emit(const kscene *s, float u_select, vec2 u_pos, vec2 u_dir, light_emission *e) {
    float disk_pdf = 1.0f / (K_PI * s->scene_radius * s->scene_radius);
    e->cos_light = 1.0f;
    e->delta = 0;
    e->light = -1;
    if (u_select < s->env_pmf) {
        vec3 to_sky = env_sample_dir(s, u_dir);
        float pdf_dir = env_dir_pdf(s, to_sky);
        if (!(pdf_dir > 0.0f)) return 0;
        e->d = vneg(to_sky);
        e->p = scene_disk_point(s, e->d, u_pos);
        e->pdf_emit = s->env_pmf * pdf_dir * disk_pdf;
        e->pdf_direct = s->env_pmf * pdf_dir;
        e->weight = vscale(env_eval(s, to_sky), 1.0f / e->pdf_emit);
        e->finite = 0;
        return 1;
    }
    if (s->nlights == 0) return 0;
    float ur = (u_select - s->env_pmf) / (1.0f - s->env_pmf);
    uint32_t li = cdf_find(s->light_cdf, s->nlights, kmin(ur, 0.99999994f));
    const light *l = &s->lights[li];
    float pick = light_pick(s, li);
    if (!(pick > 0.0f)) return 0;
    e->light = (int32_t)li;
    if (l->kind == LIGHT_POINT) {
        e->p = l->p;
        e->d = sample_uniform_sphere(u_dir);
        e->pdf_emit = pick * pdf_uniform_sphere();
        e->pdf_direct = pick;
        e->weight = vscale(l->intensity, 1.0f / e->pdf_emit);
        e->delta = 1;
        e->finite = 1;
        return 1;
    }
    if (l->kind == LIGHT_SPOT) {
        /* uniform in the outer cone */
        float cz = 1.0f - u_dir.x * (1.0f - l->cos_outer), sz = ksafe_sqrt(1.0f - cz * cz), phi = 2.0f * K_PI * u_dir.y;
        e->p = l->p;
        e->d = frame_to_world(frame_from_normal(l->axis), v3(sz * cosf(phi), sz * sinf(phi), cz));
        e->pdf_emit = pick * spot_cone_pdf(l);
        e->pdf_direct = pick;
        e->weight = vscale(l->intensity, spot_falloff(l, e->d) / e->pdf_emit);
        e->delta = 1;
        e->finite = 1;
        return !vis_black(e->weight);
    }
    if (l->kind == LIGHT_DIRECTIONAL) {
        e->d = l->p;
        e->p = scene_disk_point(s, e->d, u_pos);
        e->pdf_emit = pick * disk_pdf;
        e->pdf_direct = pick;
        e->weight = vscale(l->intensity, 1.0f / e->pdf_emit);
        e->delta = 1;
        e->finite = 0;
        return 1;
    }
    vec3 n;
    vec2 uv;
    light_sample_point_uv(s, l, u_pos, &e->p, &n, &uv);
    const material *m = &s->materials[l->material];
    if (m->two_sided) { /* pick a side with the first number, reused for the direction */
        if (u_dir.x < 0.5f)
            u_dir.x *= 2.0f;
        else {
            u_dir.x = 2.0f * u_dir.x - 1.0f;
            n = vneg(n);
        }
    }
    vec3 dl = sample_cosine_hemisphere(u_dir);
    if (!(dl.z > 0.0f)) return 0;
    e->d = frame_to_world(frame_from_normal(n), dl);
    float pdf_area = light_area_pdf(s, l, e->p);
    e->pdf_emit = pick * pdf_area * dl.z * K_INV_PI * emit_side_pmf(m);
    e->pdf_direct = pick * pdf_area;
    e->cos_light = dl.z;
    /* Le cos / (pdf_area pick side cos/pi) */
    e->weight = vscale(material_emission(s, m, uv, e->p), dl.z / e->pdf_emit);
    e->finite = 1;
    return e->pdf_emit > 0.0f && kfinite(e->pdf_emit);
}

/* pdfs of an emitter point (p, n) of primitive id reached by a ray along dir from vertex ref
 * (shading normal ref_n): that NEE at ref picks the point (area measure) and that the light emits
 * a particle back along -dir; selection included (NEE's from ref, emission's by power). */
KFN int emitter_pdfs(const kscene *s, uint32_t id, vec3 p, vec3 n, vec3 dir, vec3 ref, vec3 ref_n, float *pdf_direct,
                     float *pdf_emit) {
    int32_t li = s->prim_light[prim_flat_index(s, id)];
    if (li < 0) return 0;
    float pick = light_pick(s, (uint32_t)li);
    const light *l = &s->lights[li];
    float pdf_area = light_area_pdf(s, l, p);
    const material *m = &s->materials[l->material];
    *pdf_direct = light_pick_at(s, (uint32_t)li, ref, ref_n) * pdf_area;
    *pdf_emit = pick * pdf_area * emit_cos(m, n, vneg(dir)) * K_INV_PI * emit_side_pmf(m);
    return 1;
}
/* The same for a ray escaping to the environment along dir (NEE pdf in solid angle). */
KFN void env_pdfs(const kscene *s, vec3 dir, float *pdf_direct, float *pdf_emit) {
    float pdf_dir = s->env_pmf * env_dir_pdf(s, dir);
    *pdf_direct = pdf_dir;
    *pdf_emit = pdf_dir / (K_PI * s->scene_radius * s->scene_radius);
}

#endif
