/* BSDFs, dispatched on the material kind. Directions are in the local shading frame (z = the
 * shading normal turned towards wo for two-sided materials), both pointing away from the
 * surface. eval returns f * |cos(wi)|; sample returns that divided by the pdf as `weight`. */
#ifndef CAUSTIC_KERNEL_BSDF_H
#define CAUSTIC_KERNEL_BSDF_H

#include "ggx_albedo.h"
#include "sampling.h"
#include "features.h"

/* Below this GGX alpha a conductor is treated as a perfect mirror. */
#define GGX_MIN_ALPHA 1e-3f

typedef struct bsdf_sample {
    vec3 wi;     /* local */
    vec3 weight; /* f * |cos| / pdf */
    float pdf;   /* solid angle; for delta lobes the discrete probability */
    int delta;
} bsdf_sample;

/* ---- Fresnel ---- */
KFN vec3 fresnel_schlick(vec3 f0, float cos_theta) {
    float m = kclamp(1.0f - cos_theta, 0.0f, 1.0f);
    float m5 = (m * m) * (m * m) * m;
    return vadd(f0, vscale(vsub(v3s(1.0f), f0), m5));
}
/* Unpolarised dielectric Fresnel reflectance; eta = n_transmitted / n_incident. */
KFN float fresnel_dielectric(float cos_i, float eta) {
    cos_i = kclamp(cos_i, -1.0f, 1.0f);
    if (cos_i < 0.0f) {
        eta = 1.0f / eta;
        cos_i = -cos_i;
    }
    float sin2_t = (1.0f - cos_i * cos_i) / (eta * eta);
    if (sin2_t >= 1.0f) return 1.0f; /* total internal reflection */
    float cos_t = ksafe_sqrt(1.0f - sin2_t);
    float rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t);
    float rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t);
    return 0.5f * (rs * rs + rp * rp);
}

/* ---- GGX (Trowbridge-Reitz), isotropic ---- */
KFN float ggx_d(vec3 m, float alpha) {
    if (m.z <= 0.0f) return 0.0f;
    float a2 = alpha * alpha;
    float c2 = m.z * m.z;
    float den = c2 * (a2 - 1.0f) + 1.0f;
    return a2 / (K_PI * den * den);
}
KFN float ggx_lambda(vec3 w, float alpha) {
    float c2 = w.z * w.z;
    if (c2 <= 0.0f) return 0.0f;
    float t2 = (1.0f - c2) / c2;
    return 0.5f * (-1.0f + sqrtf(1.0f + alpha * alpha * t2));
}
KFN float ggx_g1(vec3 w, float alpha) { return 1.0f / (1.0f + ggx_lambda(w, alpha)); }
KFN float ggx_g2(vec3 wo, vec3 wi, float alpha) {
    return 1.0f / (1.0f + ggx_lambda(wo, alpha) + ggx_lambda(wi, alpha));
}

/* Visible-normal sampling (Heitz 2018): stretch, sample the projected hemisphere, unstretch. */
KFN vec3 ggx_sample_vndf(vec3 wo, float alpha, vec2 u) {
    vec3 vh = vnorm(v3(alpha * wo.x, alpha * wo.y, wo.z));
    float l2 = vh.x * vh.x + vh.y * vh.y;
    vec3 t1 = l2 > 0.0f ? vscale(v3(-vh.y, vh.x, 0.0f), 1.0f / sqrtf(l2)) : v3(1.0f, 0.0f, 0.0f);
    vec3 t2 = vcross(vh, t1);
    float r = sqrtf(u.x);
    float phi = 2.0f * K_PI * u.y;
    float p1 = r * cosf(phi), p2 = r * sinf(phi);
    float s = 0.5f * (1.0f + vh.z);
    p2 = (1.0f - s) * ksafe_sqrt(1.0f - p1 * p1) + s * p2;
    vec3 nh = vadd(vadd(vscale(t1, p1), vscale(t2, p2)), vscale(vh, ksafe_sqrt(1.0f - p1 * p1 - p2 * p2)));
    return vnorm(v3(alpha * nh.x, alpha * nh.y, kmax(1e-6f, nh.z)));
}
/* pdf of wi = reflect(wo, m) under VNDF sampling. */
KFN float ggx_reflect_pdf(vec3 wo, vec3 wm, float alpha) {
    if (wo.z <= 0.0f) return 0.0f;
    return ggx_g1(wo, alpha) * ggx_d(wm, alpha) / (4.0f * wo.z);
}

KFN vec3 reflect_local(vec3 w) { return v3(-w.x, -w.y, w.z); }
KFN vec3 reflect_about(vec3 w, vec3 n) { return vsub(vscale(n, 2.0f * vdot(w, n)), w); }

/* Is m of kind K, a kind this kernel handles (KHAS, features.h)? A constant 0 where it does not,
 * so that the code for K folds away. */
#define KMAT_IS(m, K) (KHAS(KF_MAT(K)) && (m)->kind == (K))

KFN int material_is_delta(const material *m) {
    return KMAT_IS(m, MAT_MIRROR) || KMAT_IS(m, MAT_DIELECTRIC) ||
           ((KMAT_IS(m, MAT_CONDUCTOR) || KMAT_IS(m, MAT_ROUGH_GLASS)) && m->alpha < GGX_MIN_ALPHA);
}
/* The table's columns (types.h, MATERIAL_KINDS) as functions of a material. */
/* clang-format 14 joins a `case` macro with the next #define: keep these as written. */
/* clang-format off */
#define MATERIAL_CASE_TWO_SIDED(kind, name, glossy, interior) case kind: return !(interior);
#define MATERIAL_CASE_GLOSSY(kind, name, glossy, interior) case kind: return (glossy);
/* clang-format on */
/* Materials whose two sides behave alike (shading frame flips to face wo): no interior. */
KFN int material_two_sided(const material *m) {
    switch ((material_kind)m->kind) { MATERIAL_KINDS(MATERIAL_CASE_TWO_SIDED) case MAT_KIND_COUNT : break; }
    return 1;
}
/* Materials with a non-delta transmission lobe (wi on the other side of the surface than wo). */
KFN int material_transmits(const material *m) { return KMAT_IS(m, MAT_ROUGH_GLASS) && m->alpha >= GGX_MIN_ALPHA; }

/* May light travel between local directions wo and wi (world wo_w, wi_w) at a surface with
 * geometric normal ng? Reflection or transmission in the shading frame must be the same as
 * seen from the geometry (no light leaks through shading normals), and transmission needs a
 * transmitting material. */
KFN int bsdf_sides_agree(const material *m, vec3 wo, vec3 wi, vec3 wo_w, vec3 wi_w, vec3 ng) {
    int reflect = wi.z * wo.z > 0.0f;
    int geo_reflect = vdot(wi_w, ng) * vdot(wo_w, ng) > 0.0f;
    return reflect == geo_reflect && (reflect || material_transmits(m));
}

/* Does VCM treat a vertex on this material as glossy (merging next to it is a strategy, see
 * kernel/vcm.h and docs/internals.md) or as Lambertian (connections cover it)? The material
 * table's glossy column (types.h), every kind stated there. */
KFN int material_is_glossy(const material *m) {
    switch ((material_kind)m->kind) { MATERIAL_KINDS(MATERIAL_CASE_GLOSSY) case MAT_KIND_COUNT : break; }
    return 0;
}

/* ---- Phong: Lambertian albedo plus a normalised Phong lobe around the mirror direction ----
 * f = albedo/pi + specular (n+2)/(2pi) cos^n(alpha); the lobe is chosen by luminance. */
KFN float phong_specular_prob(const material *m, vec3 albedo) {
    float ld = vluminance(albedo), ls = vluminance(m->specular);
    return ld + ls > 0.0f ? ls / (ld + ls) : 0.0f;
}
KFN float phong_cos_lobe(vec3 wo, vec3 wi) { return kmax(0.0f, vdot(reflect_local(wo), wi)); }
KFN float phong_lobe_pdf(float c, float n) { return (n + 1.0f) * K_INV_2PI * powf(c, n); }

/* ---- metallic-roughness (glTF 2.0) ----
 * f = GGX specular (single scattering, Schlick F0 = mix(0.04, colour, metallic))
 *   + its multiple-scattering compensation (Kulla & Conty 2017): F_ms (1 - E(cos_o)) (1 - E(cos_i))
 *     / (pi (1 - E_avg)), E the directional albedo of a white GGX reflector (ggx_albedo.h), so a
 *     white metal reflects everything at every roughness
 *   + (1 - metallic) colour/pi (1 - Fd(cos_o)) (1 - Fd(cos_i)), Fd = Schlick with F0 = 0.04: the
 *     diffuse part weighted by what the dielectric interface lets through on the way in and out.
 * Every term is reciprocal; the sum never exceeds 1 (white-furnace test, tests/test_bsdf.c). */
#define PBR_DIELECTRIC_F0 0.04f
#define PBR_MIN_ALPHA     2e-3f /* smoother surfaces are clamped here: the lobe is never delta */
static const float ggx_albedo_e_host[GGX_ALBEDO_N * GGX_ALBEDO_N] = {GGX_ALBEDO_E_DATA};
static const float ggx_albedo_avg_host[GGX_ALBEDO_N] = {GGX_ALBEDO_AVG_DATA};
#if defined(__CUDACC__)
static __device__ const float ggx_albedo_e_dev[GGX_ALBEDO_N * GGX_ALBEDO_N] = {GGX_ALBEDO_E_DATA};
static __device__ const float ggx_albedo_avg_dev[GGX_ALBEDO_N] = {GGX_ALBEDO_AVG_DATA};
#endif
KFN float ggx_albedo_e_at(int i) {
#if defined(__CUDA_ARCH__)
    return ggx_albedo_e_dev[i];
#else
    return ggx_albedo_e_host[i];
#endif
}
KFN float ggx_albedo_avg_at(int i) {
#if defined(__CUDA_ARCH__)
    return ggx_albedo_avg_dev[i];
#else
    return ggx_albedo_avg_host[i];
#endif
}
/* Linear interpolation on the table's grid (nodes at k / (N - 1), ends included). */
KFN void ggx_albedo_coord(float x, int *k0, int *k1, float *t) {
    float f = kclamp(x * (float)(GGX_ALBEDO_N - 1), 0.0f, (float)(GGX_ALBEDO_N - 1));
    *k0 = (int)f;
    *k1 = *k0 + 1 < GGX_ALBEDO_N ? *k0 + 1 : *k0;
    *t = f - (float)*k0;
}
/* E(mu, r) and E_avg(r) for roughness r = sqrt(alpha). */
KFN float ggx_albedo(float mu, float alpha) {
    int i0, i1, j0, j1;
    float ti, tj;
    ggx_albedo_coord(kclamp(mu, 0.0f, 1.0f), &i0, &i1, &ti);
    ggx_albedo_coord(sqrtf(kclamp(alpha, 0.0f, 1.0f)), &j0, &j1, &tj);
    float a = ggx_albedo_e_at(j0 * GGX_ALBEDO_N + i0) * (1.0f - ti) + ggx_albedo_e_at(j0 * GGX_ALBEDO_N + i1) * ti;
    float b = ggx_albedo_e_at(j1 * GGX_ALBEDO_N + i0) * (1.0f - ti) + ggx_albedo_e_at(j1 * GGX_ALBEDO_N + i1) * ti;
    return kclamp(a * (1.0f - tj) + b * tj, 0.0f, 1.0f);
}
KFN float ggx_albedo_avg(float alpha) {
    int j0, j1;
    float tj;
    ggx_albedo_coord(sqrtf(kclamp(alpha, 0.0f, 1.0f)), &j0, &j1, &tj);
    return kclamp(ggx_albedo_avg_at(j0) * (1.0f - tj) + ggx_albedo_avg_at(j1) * tj, 0.0f, 1.0f);
}

KFN float pbr_alpha(const material *m) { return kmax(m->alpha, PBR_MIN_ALPHA); }
KFN float pbr_fd(float c) {
    float x = kclamp(1.0f - c, 0.0f, 1.0f);
    return PBR_DIELECTRIC_F0 + (1.0f - PBR_DIELECTRIC_F0) * (x * x) * (x * x) * x;
}
/* The multiple-scattering lobe without its colour: (1 - E(cos_o)) (1 - E(cos_i)) / (pi (1 - E_avg)). */
KFN float pbr_ms_shape(float alpha, float cos_o, float cos_i) {
    float eavg = ggx_albedo_avg(alpha);
    if (!(eavg < 0.9999f)) return 0.0f;
    return (1.0f - ggx_albedo(cos_o, alpha)) * (1.0f - ggx_albedo(cos_i, alpha)) / (K_PI * (1.0f - eavg));
}
/* Its colour: the light that leaves after any number of bounces between microfacets, with the
 * Schlick Fresnel's hemispherical average F_avg = F0 + (1 - F0) / 21 at every bounce. */
KFN vec3 pbr_ms_colour(vec3 f0, float alpha) {
    float eavg = ggx_albedo_avg(alpha);
    vec3 favg = vadd(f0, vscale(vsub(v3s(1.0f), f0), 1.0f / 21.0f));
    vec3 r;
    r.x = favg.x * favg.x * eavg / (1.0f - favg.x * (1.0f - eavg));
    r.y = favg.y * favg.y * eavg / (1.0f - favg.y * (1.0f - eavg));
    r.z = favg.z * favg.z * eavg / (1.0f - favg.z * (1.0f - eavg));
    return r;
}
/* Probability of sampling the specular lobe (VNDF) rather than the cosine lobe that covers the
 * diffuse and multiple-scattering terms: the specular's share of the energy estimated from the
 * material and wo only (not from the colour, so pdf() needs no texture lookups), at least 1/4 so
 * that glossy highlights are sampled on dark dielectrics. */
KFN float pbr_spec_prob(const material *m, float cos_o) {
    float metallic = kclamp(m->metallic, 0.0f, 1.0f);
    float e = ggx_albedo(cos_o, pbr_alpha(m));
    float f = pbr_fd(cos_o);
    float ws = e * (f + (1.0f - f) * metallic);
    float wc = (1.0f - metallic) * (1.0f - f) + (1.0f - e);
    return kclamp(kmax(ws / kmax(ws + wc, 1e-6f), 0.25f), 0.0f, 1.0f);
}
KFN vec3 pbr_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    float metallic = kclamp(m->metallic, 0.0f, 1.0f), alpha = pbr_alpha(m);
    vec3 f0 = vlerp(v3s(PBR_DIELECTRIC_F0), albedo, metallic);
    vec3 wm = vnorm(vadd(wo, wi));
    float d = ggx_d(wm, alpha), g = ggx_g2(wo, wi, alpha);
    vec3 spec = vscale(fresnel_schlick(f0, vdot(wo, wm)), d * g / (4.0f * wo.z));
    /* the glTF model is a linear mix of a dielectric and a metal: so is the compensation */
    vec3 fms = vlerp(pbr_ms_colour(v3s(PBR_DIELECTRIC_F0), alpha), pbr_ms_colour(albedo, alpha), metallic);
    vec3 ms = vscale(fms, pbr_ms_shape(alpha, wo.z, wi.z) * wi.z);
    float kd = (1.0f - metallic) * (1.0f - pbr_fd(wo.z)) * (1.0f - pbr_fd(wi.z)) * K_INV_PI * wi.z;
    return vadd(vadd(spec, ms), vscale(albedo, kd));
}
KFN float pbr_pdf(const material *m, vec3 wo, vec3 wi) {
    float ps = pbr_spec_prob(m, wo.z);
    vec3 wm = vnorm(vadd(wo, wi));
    return ps * ggx_reflect_pdf(wo, wm, pbr_alpha(m)) + (1.0f - ps) * pdf_cosine_hemisphere(wi.z);
}

/* ---- rough dielectric (Walter et al. 2007), visible-normal sampling ----
 * wo may lie on either side (z < 0: inside); m->ior is n_inside / n_outside. */
/* Refracts w about the unit normal n (either side) for relative index eta = n_inside/n_outside of
 * the side n faces; returns 0 on total internal reflection. *etap: n_t / n_i of this crossing. */
KFN int refract_about(vec3 w, vec3 n, float eta, float *etap, vec3 *wt) {
    float ci = vdot(n, w);
    if (ci < 0.0f) {
        eta = 1.0f / eta;
        ci = -ci;
        n = vneg(n);
    }
    float s2t = kmax(0.0f, 1.0f - ci * ci) / (eta * eta);
    if (s2t >= 1.0f) return 0;
    float ct = ksafe_sqrt(1.0f - s2t);
    *wt = vadd(vscale(vneg(w), 1.0f / eta), vscale(n, ci / eta - ct));
    *etap = eta;
    return 1;
}
/* The generalized half vector of (wo, wi), facing +z, with etap = n_t/n_i for transmission (1
 * for reflection). Returns 0 for degenerate or back-facing configurations. */
KFN int rough_glass_half(const material *m, vec3 wo, vec3 wi, vec3 *wm, float *etap) {
    float co = wo.z, ci = wi.z;
    if (co == 0.0f || ci == 0.0f) return 0;
    int reflect = co * ci > 0.0f;
    *etap = reflect ? 1.0f : (co > 0.0f ? m->ior : 1.0f / m->ior);
    vec3 h = vadd(vscale(wi, *etap), wo);
    float l2 = vlen2(h);
    if (!(l2 > 0.0f)) return 0;
    h = vscale(h, 1.0f / sqrtf(l2));
    if (h.z < 0.0f) h = vneg(h);
    if (vdot(h, wi) * ci < 0.0f || vdot(h, wo) * co < 0.0f) return 0; /* microfacet seen from behind */
    *wm = h;
    return 1;
}
/* pdf of the visible normal wm seen from wo (either side), D_wo(wm). */
KFN float ggx_visible_pdf(vec3 wo, vec3 wm, float alpha) {
    float co = fabsf(wo.z);
    if (co == 0.0f) return 0.0f;
    return ggx_g1(wo, alpha) / co * ggx_d(wm, alpha) * fabsf(vdot(wo, wm));
}
KFN vec3 rough_glass_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int radiance) {
    vec3 wm;
    float etap;
    if (!rough_glass_half(m, wo, wi, &wm, &etap)) return v3s(0.0f);
    float f = fresnel_dielectric(vdot(wo, wm), m->ior);
    float d = ggx_d(wm, m->alpha), g = ggx_g2(wo, wi, m->alpha);
    if (etap == 1.0f && wo.z * wi.z > 0.0f) return vscale(albedo, f * d * g / (4.0f * fabsf(wo.z))); /* f * |cos_i| */
    float den = vdot(wi, wm) + vdot(wo, wm) / etap;
    float ft = (1.0f - f) * d * g * fabsf(vdot(wi, wm) * vdot(wo, wm) / (fabsf(wo.z) * den * den));
    if (radiance) ft /= etap * etap; /* radiance is compressed into the denser medium */
    return vscale(albedo, ft);
}
KFN float rough_glass_pdf(const material *m, vec3 wo, vec3 wi) {
    vec3 wm;
    float etap;
    if (!rough_glass_half(m, wo, wi, &wm, &etap)) return 0.0f;
    float f = fresnel_dielectric(vdot(wo, wm), m->ior);
    vec3 wo_up = wo.z < 0.0f ? vneg(wo) : wo;
    float dv = ggx_visible_pdf(wo_up, wm, m->alpha);
    if (wo.z * wi.z > 0.0f) return f * dv / (4.0f * fabsf(vdot(wo, wm)));
    float den = vdot(wi, wm) + vdot(wo, wm) / etap;
    return (1.0f - f) * dv * fabsf(vdot(wi, wm)) / (den * den);
}

/* Which quantity a path carries: radiance (camera paths) or importance (light paths). They differ
 * only where the BSDF is not symmetric: refraction scales radiance by 1/eta^2, importance not. */
typedef enum transport_mode { TRANSPORT_RADIANCE = 0, TRANSPORT_IMPORTANCE = 1 } transport_mode;

KFN vec3 bsdf_eval_mode(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    if (material_is_delta(m)) return v3s(0.0f);
    if (KMAT_IS(m, MAT_ROUGH_GLASS)) return rough_glass_eval(m, albedo, wo, wi, mode == TRANSPORT_RADIANCE);
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    switch ((material_kind)m->kind) {
    case MAT_DIFFUSE:
        if (!KHAS(KF_MAT(MAT_DIFFUSE))) break;
        return vscale(albedo, K_INV_PI * wi.z);
    case MAT_PHONG: {
        if (!KHAS(KF_MAT(MAT_PHONG))) break;
        float c = phong_cos_lobe(wo, wi);
        float spec = c > 0.0f ? (m->exponent + 2.0f) * K_INV_2PI * powf(c, m->exponent) : 0.0f;
        return vscale(vadd(vscale(albedo, K_INV_PI), vscale(m->specular, spec)), wi.z);
    }
    case MAT_CONDUCTOR: {
        if (!KHAS(KF_MAT(MAT_CONDUCTOR))) break;
        vec3 wm = vnorm(vadd(wo, wi));
        float d = ggx_d(wm, m->alpha), g = ggx_g2(wo, wi, m->alpha);
        vec3 f = fresnel_schlick(albedo, vdot(wo, wm));
        return vscale(f, d * g / (4.0f * wo.z)); /* f*cos = D G F / (4 cos_o) */
    }
    case MAT_PBR:
        if (!KHAS(KF_MAT(MAT_PBR))) break;
        return pbr_eval(m, albedo, wo, wi);
    /* no non-delta lobe; rough glass returned above */
    case MAT_MIRROR:
    case MAT_DIELECTRIC:
    case MAT_BLACK:
    case MAT_ROUGH_GLASS:
    case MAT_KIND_COUNT: break;
    }
    return v3s(0.0f);
}
KFN vec3 bsdf_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    return bsdf_eval_mode(m, albedo, wo, wi, TRANSPORT_RADIANCE);
}

KFN float bsdf_pdf(const material *m, vec3 wo, vec3 wi) {
    if (material_is_delta(m)) return 0.0f;
    if (KMAT_IS(m, MAT_ROUGH_GLASS)) return rough_glass_pdf(m, wo, wi);
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    switch ((material_kind)m->kind) {
    case MAT_DIFFUSE:
        if (!KHAS(KF_MAT(MAT_DIFFUSE))) break;
        return pdf_cosine_hemisphere(wi.z);
    case MAT_PHONG: {
        if (!KHAS(KF_MAT(MAT_PHONG))) break;
        /* the lobe probability depends on the albedo; pdfs use the untextured colour */
        float ps = phong_specular_prob(m, m->albedo);
        return (1.0f - ps) * pdf_cosine_hemisphere(wi.z) + ps * phong_lobe_pdf(phong_cos_lobe(wo, wi), m->exponent);
    }
    case MAT_CONDUCTOR: {
        if (!KHAS(KF_MAT(MAT_CONDUCTOR))) break;
        vec3 wm = vnorm(vadd(wo, wi));
        return ggx_reflect_pdf(wo, wm, m->alpha);
    }
    case MAT_PBR:
        if (!KHAS(KF_MAT(MAT_PBR))) break;
        return pbr_pdf(m, wo, wi);
    /* no non-delta lobe; rough glass returned above */
    case MAT_MIRROR:
    case MAT_DIELECTRIC:
    case MAT_BLACK:
    case MAT_ROUGH_GLASS:
    case MAT_KIND_COUNT: break;
    }
    return 0.0f;
}

/* u2 picks the direction; u1 picks between lobes where there are several. Returns 0 when no
 * direction was produced (absorbed). For dielectrics wo.z < 0 means wo is inside. */
KFN int bsdf_sample_dir_mode(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    bs->delta = 0;
    switch ((material_kind)m->kind) {
    case MAT_PHONG: {
        if (!KHAS(KF_MAT(MAT_PHONG)) || wo.z <= 0.0f) return 0;
        float ps = phong_specular_prob(m, m->albedo);
        if (u1 < ps) {
            /* power-cosine lobe around the mirror direction */
            float ct = powf(u2.x, 1.0f / (m->exponent + 1.0f));
            float st = ksafe_sqrt(1.0f - ct * ct), phi = 2.0f * K_PI * u2.y;
            bs->wi = frame_to_world(frame_from_normal(reflect_local(wo)), v3(st * cosf(phi), st * sinf(phi), ct));
        } else {
            bs->wi = sample_cosine_hemisphere(u2);
        }
        if (bs->wi.z <= 0.0f) return 0;
        bs->pdf = bsdf_pdf(m, wo, bs->wi);
        if (!(bs->pdf > 0.0f)) return 0;
        bs->weight = vscale(bsdf_eval(m, albedo, wo, bs->wi), 1.0f / bs->pdf);
        return 1;
    }
    case MAT_DIFFUSE: {
        if (!KHAS(KF_MAT(MAT_DIFFUSE)) || wo.z <= 0.0f) return 0;
        bs->wi = sample_cosine_hemisphere(u2);
        bs->pdf = pdf_cosine_hemisphere(bs->wi.z);
        if (bs->pdf <= 0.0f) return 0;
        bs->weight = albedo;
        return 1;
    }
    case MAT_MIRROR:
        if (!KHAS(KF_MAT(MAT_MIRROR)) || wo.z <= 0.0f) return 0;
        bs->wi = reflect_local(wo);
        bs->pdf = 1.0f;
        bs->delta = 1;
        bs->weight = albedo;
        return 1;
    case MAT_CONDUCTOR: {
        if (!KHAS(KF_MAT(MAT_CONDUCTOR)) || wo.z <= 0.0f) return 0;
        if (m->alpha < GGX_MIN_ALPHA) {
            bs->wi = reflect_local(wo);
            bs->pdf = 1.0f;
            bs->delta = 1;
            bs->weight = fresnel_schlick(albedo, wo.z);
            return 1;
        }
        vec3 wm = ggx_sample_vndf(wo, m->alpha, u2);
        bs->wi = reflect_about(wo, wm);
        if (bs->wi.z <= 0.0f) return 0;
        bs->pdf = ggx_reflect_pdf(wo, wm, m->alpha);
        if (bs->pdf <= 0.0f) return 0;
        /* weight = F * G2 / G1(wo), the VNDF estimator */
        bs->weight = vscale(fresnel_schlick(albedo, vdot(wo, wm)), ggx_g2(wo, bs->wi, m->alpha) / ggx_g1(wo, m->alpha));
        return 1;
    }
    case MAT_PBR: {
        if (!KHAS(KF_MAT(MAT_PBR)) || wo.z <= 0.0f) return 0;
        if (u1 < pbr_spec_prob(m, wo.z)) {
            vec3 wm = ggx_sample_vndf(wo, pbr_alpha(m), u2);
            bs->wi = reflect_about(wo, wm);
        } else {
            bs->wi = sample_cosine_hemisphere(u2);
        }
        if (bs->wi.z <= 0.0f) return 0;
        bs->pdf = pbr_pdf(m, wo, bs->wi);
        if (!(bs->pdf > 0.0f)) return 0;
        bs->weight = vscale(pbr_eval(m, albedo, wo, bs->wi), 1.0f / bs->pdf);
        return 1;
    }
    case MAT_ROUGH_GLASS: {
        if (!KHAS(KF_MAT(MAT_ROUGH_GLASS))) return 0;
        if (!material_is_delta(m)) {
            /* a visible normal (seen from the side of wo), then reflect or refract by its Fresnel */
            int inside = wo.z < 0.0f;
            vec3 wo_up = inside ? vneg(wo) : wo;
            if (wo_up.z <= 0.0f) return 0;
            vec3 wm = ggx_sample_vndf(wo_up, m->alpha, u2);
            float f = fresnel_dielectric(vdot(wo, wm), m->ior);
            if (u1 < f) {
                bs->wi = reflect_about(wo, wm);
                if (bs->wi.z * wo.z <= 0.0f) return 0;
            } else {
                float etap;
                if (!refract_about(wo, wm, m->ior, &etap, &bs->wi) || bs->wi.z * wo.z >= 0.0f) return 0;
            }
            bs->pdf = rough_glass_pdf(m, wo, bs->wi);
            if (!(bs->pdf > 0.0f)) return 0;
            bs->weight = vscale(rough_glass_eval(m, albedo, wo, bs->wi, mode == TRANSPORT_RADIANCE), 1.0f / bs->pdf);
            return vis_finite(bs->weight);
        }
    }
    /* fall through - a rough glass smoother than GGX_MIN_ALPHA is smooth glass */
    case MAT_DIELECTRIC: {
        if (!KHAS(KF_MAT(MAT_DIELECTRIC) | KF_MAT(MAT_ROUGH_GLASS))) return 0;
        float cos_o = wo.z;
        float eta = cos_o > 0.0f ? m->ior : 1.0f / m->ior; /* n_t / n_i */
        float f = fresnel_dielectric(fabsf(cos_o), eta);
        bs->delta = 1;
        if (u1 < f) {
            bs->wi = reflect_local(wo);
            bs->pdf = f;
            bs->weight = albedo;
            return 1;
        }
        float sin2_t = (1.0f - cos_o * cos_o) / (eta * eta);
        float cos_t = ksafe_sqrt(1.0f - sin2_t);
        float sgn = cos_o > 0.0f ? -1.0f : 1.0f;
        bs->wi = v3(-wo.x / eta, -wo.y / eta, sgn * cos_t);
        bs->pdf = 1.0f - f;
        /* radiance is compressed into the denser medium: scale by 1/eta^2 */
        bs->weight = mode == TRANSPORT_RADIANCE ? vscale(albedo, 1.0f / (eta * eta)) : albedo;
        return 1;
    }
    case MAT_BLACK:
    case MAT_KIND_COUNT: break; /* absorbs */
    }
    return 0;
}

KFN int bsdf_sample_dir(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, bsdf_sample *bs) {
    return bsdf_sample_dir_mode(m, albedo, wo, u1, u2, TRANSPORT_RADIANCE, bs);
}

/* Russian-roulette continuation probability of bidirectional sub-paths: the largest reflectance
 * channel, so a path's weight never grows through roulette. */
KFN float bsdf_continuation(const material *m, vec3 albedo) {
    switch ((material_kind)m->kind) {
    case MAT_BLACK: return 0.0f;
    case MAT_DIELECTRIC: return 1.0f;
    case MAT_ROUGH_GLASS: return material_is_delta(m) ? 1.0f : kclamp(vmaxc(albedo), 0.0f, 1.0f);
    /* a black or dark metal still reflects at grazing angles (Schlick): never 0 */
    case MAT_PBR: return kclamp(kmax(vmaxc(albedo), 0.5f), 0.0f, 1.0f);
    case MAT_PHONG: return kclamp(vmaxc(vadd(albedo, m->specular)), 0.0f, 1.0f);
    case MAT_DIFFUSE:
    case MAT_MIRROR:
    case MAT_CONDUCTOR:
    case MAT_KIND_COUNT: break;
    }
    return kclamp(vmaxc(albedo), 0.0f, 1.0f);
}

#endif
