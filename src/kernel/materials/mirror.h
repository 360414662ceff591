/* Mirror: perfect specular reflection, the colour as reflectance. */
#ifndef CAUSTIC_KERNEL_MATERIALS_MIRROR_H
#define CAUSTIC_KERNEL_MATERIALS_MIRROR_H

#include "lobe.h"

KFN uint32_t mirror_flags(const material *m) {
    (void)m;
    return BSDF_DELTA | BSDF_NON_LAMBERTIAN;
}
KFN vec3 mirror_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)albedo, (void)wo, (void)wi, (void)mode;
    return v3s(0.0f);
}
KFN float mirror_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m, (void)wo, (void)wi;
    return 0.0f;
}
KFN int mirror_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)m, (void)u1, (void)u2, (void)mode;
    if (wo.z <= 0.0f) return 0;
    bs->wi = reflect_local(wo);
    bs->pdf = 1.0f;
    bs->delta = 1;
    bs->weight = albedo;
    return 1;
}
KFN float mirror_albedo(const material *m, vec3 albedo) {
    (void)m;
    return kclamp(vmaxc(albedo), 0.0f, 1.0f);
}
KFN void mirror_from_params(material *m, const material_params *p) { (void)m, (void)p; }

#endif
