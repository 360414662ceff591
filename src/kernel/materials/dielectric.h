/* Dielectric: smooth glass, Fresnel reflection and refraction with m->ior (n_inside / n_outside),
 * the colour as tint. wo.z < 0 means wo is inside. A dispersive one (m->dispersion, Cauchy's B)
 * reaches these functions with m->ior already taken at the path's wavelength (kernel/spectral.h,
 * dispersion_resolve); so does rough glass. */
#ifndef CAUSTIC_KERNEL_MATERIALS_DIELECTRIC_H
#define CAUSTIC_KERNEL_MATERIALS_DIELECTRIC_H

#include "lobe.h"

KFN uint32_t dielectric_flags(const material *m) {
    (void)m;
    return BSDF_DELTA | BSDF_TRANSMITS | BSDF_NON_LAMBERTIAN | BSDF_INTERIOR;
}
KFN vec3 dielectric_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)albedo, (void)wo, (void)wi, (void)mode;
    return v3s(0.0f);
}
KFN float dielectric_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m, (void)wo, (void)wi;
    return 0.0f;
}
/* The smooth interface's two delta lobes, u1 choosing by Fresnel (rough glass below
 * GGX_MIN_ALPHA samples this too). */
KFN int dielectric_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)u2;
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
KFN float dielectric_albedo(const material *m, vec3 albedo) {
    (void)m, (void)albedo;
    return 1.0f;
}
KFN void dielectric_from_params(material *m, const material_params *p) {
    m->ior = (float)p->ior;
    m->dispersion = (float)p->dispersion;
}

#endif
