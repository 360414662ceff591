/* Thin dielectric: a sheet of glass too thin to offset the light (a window pane, a soap film),
 * pbrt-v4's and Mitsuba's `thindielectric`. The light bounces inside the sheet any number of
 * times; summing them, reflection is R' = R + T^2 R / (1 - R^2) with R the Fresnel reflectance of
 * one interface (m->ior) and T = 1 - R, transmission is 1 - R' straight through (wi = -wo, no
 * bending, no 1/eta^2: the same medium on both sides). Two delta lobes, the colour tinting both.
 * The sheet has no inside, so the shading frame faces wo. */
#ifndef CAUSTIC_KERNEL_MATERIALS_THIN_DIELECTRIC_H
#define CAUSTIC_KERNEL_MATERIALS_THIN_DIELECTRIC_H

#include "lobe.h"

KFN uint32_t thin_dielectric_flags(const material *m) {
    (void)m;
    return BSDF_DELTA | BSDF_TRANSMITS | BSDF_NON_LAMBERTIAN;
}
KFN vec3 thin_dielectric_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)albedo, (void)wo, (void)wi, (void)mode;
    return v3s(0.0f);
}
KFN float thin_dielectric_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m, (void)wo, (void)wi;
    return 0.0f;
}
/* The sheet's reflectance R' at cosine cos_o (the interreflections summed). */
KFN float thin_dielectric_reflectance(const material *m, float cos_o) {
    float r = fresnel_dielectric(fabsf(cos_o), m->ior);
    if (r < 1.0f) r += (1.0f - r) * (1.0f - r) * r / (1.0f - r * r);
    return kclamp(r, 0.0f, 1.0f);
}
KFN int thin_dielectric_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)u2, (void)mode;
    if (wo.z == 0.0f) return 0;
    float r = thin_dielectric_reflectance(m, wo.z);
    bs->delta = 1;
    bs->weight = albedo;
    if (u1 < r) {
        bs->wi = reflect_local(wo);
        bs->pdf = r;
        return 1;
    }
    bs->wi = vneg(wo);
    bs->pdf = 1.0f - r;
    return bs->pdf > 0.0f;
}
KFN float thin_dielectric_albedo(const material *m, vec3 albedo) {
    (void)m, (void)albedo;
    return 1.0f;
}
KFN void thin_dielectric_from_params(material *m, const material_params *p) { m->ior = (float)p->ior; }

#endif
