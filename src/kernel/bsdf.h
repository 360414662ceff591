/* BSDFs, dispatched on the material kind. Directions are in the local shading frame (z = the
 * shading normal turned towards wo for two-sided materials), both pointing away from the
 * surface. eval returns f * |cos(wi)|; sample returns that divided by the pdf as `weight`. */
#ifndef CAUSTIC_KERNEL_BSDF_H
#define CAUSTIC_KERNEL_BSDF_H

#include "sampling.h"
#include "types.h"

/* Below this GGX alpha a conductor is treated as a perfect mirror. */
#define GGX_MIN_ALPHA 1e-3f

typedef struct bsdf_sample {
    vec3 wi;       /* local */
    vec3 weight;   /* f * |cos| / pdf */
    float pdf;     /* solid angle; for delta lobes the discrete probability */
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
    if (cos_i < 0.0f) { eta = 1.0f / eta; cos_i = -cos_i; }
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
KFN float ggx_g2(vec3 wo, vec3 wi, float alpha) { return 1.0f / (1.0f + ggx_lambda(wo, alpha) + ggx_lambda(wi, alpha)); }

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

KFN int material_is_delta(const material *m) {
    return m->kind == MAT_MIRROR || m->kind == MAT_DIELECTRIC ||
           (m->kind == MAT_CONDUCTOR && m->alpha < GGX_MIN_ALPHA);
}
/* The table's columns (types.h, MATERIAL_KINDS) as functions of a material. */
#define MATERIAL_CASE_TWO_SIDED(kind, name, glossy, interior) case kind: return !(interior);
#define MATERIAL_CASE_GLOSSY(kind, name, glossy, interior) case kind: return (glossy);
/* Materials whose two sides behave alike (shading frame flips to face wo): no interior. */
KFN int material_two_sided(const material *m) {
    switch ((material_kind)m->kind) { MATERIAL_KINDS(MATERIAL_CASE_TWO_SIDED) case MAT_KIND_COUNT: break; }
    return 1;
}
/* VCM (vcm.h): a non-Lambertian scatterer, so merging next to it is a strategy. */
KFN int material_is_glossy(const material *m) {
    switch ((material_kind)m->kind) { MATERIAL_KINDS(MATERIAL_CASE_GLOSSY) case MAT_KIND_COUNT: break; }
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

KFN vec3 bsdf_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    if (material_is_delta(m) || wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    switch ((material_kind)m->kind) {
    case MAT_DIFFUSE:
        return vscale(albedo, K_INV_PI * wi.z);
    case MAT_PHONG: {
        float c = phong_cos_lobe(wo, wi);
        float spec = c > 0.0f ? (m->exponent + 2.0f) * K_INV_2PI * powf(c, m->exponent) : 0.0f;
        return vscale(vadd(vscale(albedo, K_INV_PI), vscale(m->specular, spec)), wi.z);
    }
    case MAT_CONDUCTOR: {
        vec3 wm = vnorm(vadd(wo, wi));
        float d = ggx_d(wm, m->alpha), g = ggx_g2(wo, wi, m->alpha);
        vec3 f = fresnel_schlick(albedo, vdot(wo, wm));
        return vscale(f, d * g / (4.0f * wo.z));   /* f*cos = D G F / (4 cos_o) */
    }
    case MAT_MIRROR: case MAT_DIELECTRIC: case MAT_BLACK: case MAT_KIND_COUNT: break;   /* no non-delta lobe */
    }
    return v3s(0.0f);
}

KFN float bsdf_pdf(const material *m, vec3 wo, vec3 wi) {
    if (material_is_delta(m) || wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    switch ((material_kind)m->kind) {
    case MAT_DIFFUSE: return pdf_cosine_hemisphere(wi.z);
    case MAT_PHONG: {
        /* the lobe probability depends on the albedo; pdfs use the untextured colour */
        float ps = phong_specular_prob(m, m->albedo);
        return (1.0f - ps) * pdf_cosine_hemisphere(wi.z) + ps * phong_lobe_pdf(phong_cos_lobe(wo, wi), m->exponent);
    }
    case MAT_CONDUCTOR: {
        vec3 wm = vnorm(vadd(wo, wi));
        return ggx_reflect_pdf(wo, wm, m->alpha);
    }
    case MAT_MIRROR: case MAT_DIELECTRIC: case MAT_BLACK: case MAT_KIND_COUNT: break;   /* no non-delta lobe */
    }
    return 0.0f;
}

/* Which quantity a path carries: radiance (camera paths) or importance (light paths). They differ
 * only where the BSDF is not symmetric: refraction scales radiance by 1/eta^2, importance not. */
typedef enum transport_mode { TRANSPORT_RADIANCE = 0, TRANSPORT_IMPORTANCE = 1 } transport_mode;

/* u2 picks the direction; u1 picks between lobes where there are several. Returns 0 when no
 * direction was produced (absorbed). For dielectrics wo.z < 0 means wo is inside. */
KFN int bsdf_sample_dir_mode(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    bs->delta = 0;
    switch ((material_kind)m->kind) {
    case MAT_PHONG: {
        if (wo.z <= 0.0f) return 0;
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
        if (wo.z <= 0.0f) return 0;
        bs->wi = sample_cosine_hemisphere(u2);
        bs->pdf = pdf_cosine_hemisphere(bs->wi.z);
        if (bs->pdf <= 0.0f) return 0;
        bs->weight = albedo;
        return 1;
    }
    case MAT_MIRROR:
        if (wo.z <= 0.0f) return 0;
        bs->wi = reflect_local(wo); bs->pdf = 1.0f; bs->delta = 1; bs->weight = albedo;
        return 1;
    case MAT_CONDUCTOR: {
        if (wo.z <= 0.0f) return 0;
        if (m->alpha < GGX_MIN_ALPHA) {
            bs->wi = reflect_local(wo); bs->pdf = 1.0f; bs->delta = 1;
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
    case MAT_DIELECTRIC: {
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
    case MAT_BLACK: case MAT_KIND_COUNT: break;   /* absorbs */
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
    case MAT_PHONG: return kclamp(vmaxc(vadd(albedo, m->specular)), 0.0f, 1.0f);
    case MAT_DIFFUSE: case MAT_MIRROR: case MAT_CONDUCTOR: case MAT_KIND_COUNT: break;
    }
    return kclamp(vmaxc(albedo), 0.0f, 1.0f);
}

#endif
