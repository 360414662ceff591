/* Diffuse transmission: Lambertian on both sides of the surface, pbrt-v4's `diffusetransmission`
 * and glTF's KHR_materials_diffuse_transmission (leaves, paper, lamp shades): f = R / pi towards
 * wo's side and T / pi towards the other, R the colour (albedo, textured) and T the transmittance
 * (m->specular). R + T <= 1 (the readers scale both down otherwise). Sampling picks the side in
 * proportion to max(R) and max(T), then a cosine-weighted direction. The surface has no inside:
 * the shading frame faces wo, and it is reciprocal. */
#ifndef CAUSTIC_KERNEL_MATERIALS_DIFFUSE_TRANSMISSION_H
#define CAUSTIC_KERNEL_MATERIALS_DIFFUSE_TRANSMISSION_H

#include "lobe.h"

KFN uint32_t diffuse_transmission_flags(const material *m) {
    (void)m;
    return BSDF_TRANSMITS;
}
/* The probability of sampling the reflection side (max(R) against max(T)). */
KFN float diffuse_transmission_pr(const material *m, vec3 albedo) {
    float pr = kmax(vmaxc(albedo), 0.0f), pt = kmax(vmaxc(m->specular), 0.0f);
    return pr + pt > 0.0f ? pr / (pr + pt) : 0.5f;
}
KFN vec3 diffuse_transmission_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)mode;
    if (wo.z == 0.0f || wi.z == 0.0f) return v3s(0.0f);
    return vscale(wo.z * wi.z > 0.0f ? albedo : m->specular, K_INV_PI * fabsf(wi.z));
}
/* The pdf needs the reflectance, which is the textured albedo: the caller's material_at does not
 * carry it, so the split is by the untextured colours (m->albedo), which sample uses too. */
KFN float diffuse_transmission_pdf(const material *m, vec3 wo, vec3 wi) {
    if (wo.z == 0.0f || wi.z == 0.0f) return 0.0f;
    float pr = diffuse_transmission_pr(m, m->albedo);
    return (wo.z * wi.z > 0.0f ? pr : 1.0f - pr) * pdf_cosine_hemisphere(fabsf(wi.z));
}
KFN int diffuse_transmission_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode,
                                    bsdf_sample *bs) {
    (void)mode;
    if (wo.z == 0.0f) return 0;
    float pr = diffuse_transmission_pr(m, m->albedo);
    vec3 w = sample_cosine_hemisphere(u2);
    int reflect = u1 < pr;
    if (!reflect) w.z = -w.z;
    if (wo.z < 0.0f) w.z = -w.z;
    float p = (reflect ? pr : 1.0f - pr) * pdf_cosine_hemisphere(fabsf(w.z));
    if (!(p > 0.0f)) return 0;
    bs->wi = w;
    bs->pdf = p;
    bs->weight = vscale(reflect ? albedo : m->specular, pdf_cosine_hemisphere(fabsf(w.z)) / p);
    return 1;
}
KFN float diffuse_transmission_albedo(const material *m, vec3 albedo) {
    return kclamp(vmaxc(vadd(albedo, m->specular)), 0.0f, 1.0f);
}
KFN void diffuse_transmission_from_params(material *m, const material_params *p) { m->specular = p->transmittance; }

#endif
