/* Diffuse: Lambertian reflection, f = albedo / pi. */
#ifndef CAUSTIC_KERNEL_MATERIALS_DIFFUSE_H
#define CAUSTIC_KERNEL_MATERIALS_DIFFUSE_H

#include "lobe.h"

KFN uint32_t diffuse_flags(const material *m) {
    (void)m;
    return 0u;
}
KFN vec3 diffuse_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)mode;
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    return vscale(albedo, K_INV_PI * wi.z);
}
KFN float diffuse_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m;
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    return pdf_cosine_hemisphere(wi.z);
}
KFN int diffuse_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)m, (void)u1, (void)mode;
    if (wo.z <= 0.0f) return 0;
    bs->wi = sample_cosine_hemisphere(u2);
    bs->pdf = pdf_cosine_hemisphere(bs->wi.z);
    if (bs->pdf <= 0.0f) return 0;
    bs->weight = albedo;
    return 1;
}
KFN float diffuse_albedo(const material *m, vec3 albedo) {
    (void)m;
    return kclamp(vmaxc(albedo), 0.0f, 1.0f);
}
KFN void diffuse_from_params(material *m, const material_params *p) { (void)m, (void)p; }

#endif
