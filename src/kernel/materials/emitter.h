/* Emitter: reflects nothing (a pure light source; its emission is the material's `emission`,
 * which any kind may have). "Emitting" in scene JSON is read as this kind. */
#ifndef CAUSTIC_KERNEL_MATERIALS_EMITTER_H
#define CAUSTIC_KERNEL_MATERIALS_EMITTER_H

#include "lobe.h"

KFN uint32_t emitter_flags(const material *m) {
    (void)m;
    return 0u;
}
KFN vec3 emitter_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)m, (void)albedo, (void)wo, (void)wi, (void)mode;
    return v3s(0.0f);
}
KFN float emitter_pdf(const material *m, vec3 wo, vec3 wi) {
    (void)m, (void)wo, (void)wi;
    return 0.0f;
}
KFN int emitter_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)m, (void)albedo, (void)wo, (void)u1, (void)u2, (void)mode, (void)bs;
    return 0; /* absorbs */
}
KFN float emitter_albedo(const material *m, vec3 albedo) {
    (void)m, (void)albedo;
    return 0.0f;
}
KFN void emitter_from_params(material *m, const material_params *p) { (void)m, (void)p; }

#endif
