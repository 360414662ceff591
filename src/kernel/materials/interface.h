/* Interface: no surface at all, only the boundary between the media on its two sides (the
 * material's medium_inside / medium_outside; pbrt-v4's "interface" material, Mitsuba's null
 * BSDF). A ray passes it unchanged: kernels with media step over it without a bounce
 * (path_segment, trace_transmittance in kernel/medium.h); elsewhere it is a delta transmission
 * of weight 1 with wi = -wo. */
#ifndef CAUSTIC_KERNEL_MATERIALS_INTERFACE_H
#define CAUSTIC_KERNEL_MATERIALS_INTERFACE_H

#include "lobe.h"

KFN uint32_t interface_flags(const material *m) {
    (void)m;
    return BSDF_DELTA | BSDF_TRANSMITS | BSDF_INTERIOR;
}
KFN vec3 interface_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)albedo, (void)wo, (void)wi, (void)mode;
    return v3s(0.0f);
}
KFN float interface_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m, (void)wo, (void)wi;
    return 0.0f;
}
KFN int interface_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)m, (void)albedo, (void)u1, (void)u2, (void)mode;
    bs->wi = vneg(wo);
    bs->pdf = 1.0f;
    bs->delta = 1;
    bs->weight = v3s(1.0f);
    return 1;
}
KFN float interface_albedo(const material *m, vec3 albedo) {
    (void)m, (void)albedo;
    return 1.0f;
}
KFN void interface_from_params(material *m, const material_params *p) { (void)m, (void)p; }

#endif
