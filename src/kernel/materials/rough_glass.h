/* Rough glass: a rough dielectric (Walter et al. 2007), GGX reflection and transmission with
 * m->ior (n_inside / n_outside), the colour as tint, visible-normal sampling; smooth glass
 * (dielectric.h) below GGX_MIN_ALPHA. wo may lie on either side (z < 0: inside). */
#ifndef CAUSTIC_KERNEL_MATERIALS_ROUGH_GLASS_H
#define CAUSTIC_KERNEL_MATERIALS_ROUGH_GLASS_H

#include "dielectric.h"

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

KFN uint32_t rough_glass_flags(const material *m) {
    return BSDF_TRANSMITS | BSDF_NON_LAMBERTIAN | BSDF_INTERIOR |
           (m->alpha < GGX_MIN_ALPHA ? (uint32_t)BSDF_DELTA : 0u);
}
KFN vec3 rough_glass_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    if (m->alpha < GGX_MIN_ALPHA) return v3s(0.0f);
    vec3 wm;
    float etap;
    if (!rough_glass_half(m, wo, wi, &wm, &etap)) return v3s(0.0f);
    float f = fresnel_dielectric(vdot(wo, wm), m->ior);
    float d = ggx_d(wm, m->alpha), g = ggx_g2(wo, wi, m->alpha);
    if (etap == 1.0f && wo.z * wi.z > 0.0f) return vscale(albedo, f * d * g / (4.0f * fabsf(wo.z))); /* f * |cos_i| */
    float den = vdot(wi, wm) + vdot(wo, wm) / etap;
    float ft = (1.0f - f) * d * g * fabsf(vdot(wi, wm) * vdot(wo, wm) / (fabsf(wo.z) * den * den));
    if (mode == TRANSPORT_RADIANCE) ft /= etap * etap; /* radiance is compressed into the denser medium */
    return vscale(albedo, ft);
}
KFN float rough_glass_pdf(const material *m, vec3 wo, vec3 wi) {
    if (m->alpha < GGX_MIN_ALPHA) return 0.0f;
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
KFN int rough_glass_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    if (m->alpha < GGX_MIN_ALPHA) return dielectric_sample(m, albedo, wo, u1, u2, mode, bs);
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
    bs->weight = vscale(rough_glass_eval(m, albedo, wo, bs->wi, mode), 1.0f / bs->pdf);
    return vis_finite(bs->weight);
}
KFN float rough_glass_albedo(const material *m, vec3 albedo) {
    return m->alpha < GGX_MIN_ALPHA ? 1.0f : kclamp(vmaxc(albedo), 0.0f, 1.0f);
}
KFN void rough_glass_from_params(material *m, const material_params *p) {
    m->ior = (float)p->ior;
    m->dispersion = (float)p->dispersion;
    m->alpha = (float)(p->roughness * p->roughness);
}

#endif
