/* Conductor: rough GGX metal; a mirror below GGX_MIN_ALPHA. Its Fresnel term is the exact
 * conductor Fresnel of a complex index eta + i k where complex_ior is set (named metals and
 * explicit ETA/K: src/scene/material.c), otherwise Schlick with F0 = the colour. */
#ifndef CAUSTIC_KERNEL_MATERIALS_CONDUCTOR_H
#define CAUSTIC_KERNEL_MATERIALS_CONDUCTOR_H

#include "lobe.h"

KFN vec3 conductor_fresnel(const material *m, vec3 albedo, float cos_i) {
    return KHAS(KF_COMPLEX_IOR) && m->complex_ior ? fresnel_conductor(cos_i, m->eta, m->k)
                                                  : fresnel_schlick(albedo, cos_i);
}
KFN uint32_t conductor_flags(const material *m) {
    return BSDF_NON_LAMBERTIAN | (m->alpha < GGX_MIN_ALPHA ? (uint32_t)BSDF_DELTA : 0u);
}
KFN vec3 conductor_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)mode;
    if (m->alpha < GGX_MIN_ALPHA) return v3s(0.0f);
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    vec3 wm = vnorm(vadd(wo, wi));
    float d = ggx_d(wm, m->alpha), g = ggx_g2(wo, wi, m->alpha);
    vec3 f = conductor_fresnel(m, albedo, vdot(wo, wm));
    return vscale(f, d * g / (4.0f * wo.z)); /* f*cos = D G F / (4 cos_o) */
}
KFN float conductor_pdf(const material *m, vec3 wo, vec3 wi) {
    if (m->alpha < GGX_MIN_ALPHA) return 0.0f;
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    vec3 wm = vnorm(vadd(wo, wi));
    return ggx_reflect_pdf(wo, wm, m->alpha);
}
KFN int conductor_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)u1, (void)mode;
    if (wo.z <= 0.0f) return 0;
    if (m->alpha < GGX_MIN_ALPHA) {
        bs->wi = reflect_local(wo);
        bs->pdf = 1.0f;
        bs->delta = 1;
        bs->weight = conductor_fresnel(m, albedo, wo.z);
        return 1;
    }
    vec3 wm = ggx_sample_vndf(wo, m->alpha, u2);
    bs->wi = reflect_about(wo, wm);
    if (bs->wi.z <= 0.0f) return 0;
    bs->pdf = ggx_reflect_pdf(wo, wm, m->alpha);
    if (bs->pdf <= 0.0f) return 0;
    /* weight = F * G2 / G1(wo), the VNDF estimator */
    bs->weight =
        vscale(conductor_fresnel(m, albedo, vdot(wo, wm)), ggx_g2(wo, bs->wi, m->alpha) / ggx_g1(wo, m->alpha));
    return 1;
}
KFN float conductor_albedo(const material *m, vec3 albedo) {
    return kclamp(vmaxc(KHAS(KF_COMPLEX_IOR) && m->complex_ior ? fresnel_conductor(1.0f, m->eta, m->k) : albedo), 0.0f,
                  1.0f);
}
KFN void conductor_from_params(material *m, const material_params *p) {
    m->alpha = (float)(p->roughness * p->roughness);
    m->complex_ior = p->complex_ior != 0;
    m->eta = p->eta;
    m->k = p->k;
}

#endif
