/* Phong: Lambertian albedo plus a normalised Phong lobe around the mirror direction,
 * f = albedo/pi + specular (n+2)/(2pi) cos^n(alpha); the lobe is chosen by luminance. */
#ifndef CAUSTIC_KERNEL_MATERIALS_PHONG_H
#define CAUSTIC_KERNEL_MATERIALS_PHONG_H

#include "lobe.h"

KFN float phong_specular_prob(const material *m, vec3 albedo) {
    float ld = vluminance(albedo), ls = vluminance(m->specular);
    return ld + ls > 0.0f ? ls / (ld + ls) : 0.0f;
}
KFN float phong_cos_lobe(vec3 wo, vec3 wi) { return kmax(0.0f, vdot(reflect_local(wo), wi)); }
KFN float phong_lobe_pdf(float c, float n) { return (n + 1.0f) * K_INV_2PI * powf(c, n); }

KFN uint32_t phong_flags(const material *m) {
    (void)m;
    return BSDF_NON_LAMBERTIAN;
}
KFN vec3 phong_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)mode;
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    float c = phong_cos_lobe(wo, wi);
    float spec = c > 0.0f ? (m->exponent + 2.0f) * K_INV_2PI * powf(c, m->exponent) : 0.0f;
    return vscale(vadd(vscale(albedo, K_INV_PI), vscale(m->specular, spec)), wi.z);
}
KFN float phong_pdf(const material *m, vec3 wo, vec3 wi) {
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    /* the lobe probability depends on the albedo; pdfs use the untextured colour */
    float ps = phong_specular_prob(m, m->albedo);
    return (1.0f - ps) * pdf_cosine_hemisphere(wi.z) + ps * phong_lobe_pdf(phong_cos_lobe(wo, wi), m->exponent);
}
KFN int phong_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
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
    bs->pdf = phong_pdf(m, wo, bs->wi);
    if (!(bs->pdf > 0.0f)) return 0;
    bs->weight = vscale(phong_eval(m, albedo, wo, bs->wi, mode), 1.0f / bs->pdf);
    return 1;
}
KFN float phong_albedo(const material *m, vec3 albedo) { return kclamp(vmaxc(vadd(albedo, m->specular)), 0.0f, 1.0f); }
KFN void phong_from_params(material *m, const material_params *p) {
    m->specular = p->specular;
    m->exponent = (float)p->exponent;
}

#endif
