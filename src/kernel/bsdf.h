/* BSDFs, dispatched on the material kind: one switch per operation, generated from the material
 * list (MATERIAL_KINDS, types.h), each case calling the kind's header (materials/<stem>.h, whose
 * conventions materials/lobe.h states). eval returns f * |cos(wi)|; sample returns that divided
 * by the pdf as `weight`. A kind this kernel does not handle (KHAS, features.h) folds away. */
#ifndef CAUSTIC_KERNEL_BSDF_H
#define CAUSTIC_KERNEL_BSDF_H

#include "materials/lobe.h"
/* one include per row of MATERIAL_KINDS */
#include "materials/coated.h"
#include "materials/conductor.h"
#include "materials/dielectric.h"
#include "materials/diffuse.h"
#include "materials/emitter.h"
#include "materials/mirror.h"
#include "materials/pbr.h"
#include "materials/phong.h"
#include "materials/interface.h"
#include "materials/rough_glass.h"
#include "materials/thin_dielectric.h"
#include "materials/diffuse_transmission.h"

/* Every switch below names every kind (the rows) and MAT_KIND_COUNT, with no `default:`, so a
 * compiler with -Wswitch flags a kind left out. */
/* clang-format off */
#define BSDF_CASE_FLAGS(K, stem, name, P)  case K: if (!KHAS(KF_MAT(K))) break; return stem##_flags(m);
#define BSDF_CASE_EVAL(K, stem, name, P)   case K: if (!KHAS(KF_MAT(K))) break; return stem##_eval(m, albedo, wo, wi, mode);
#define BSDF_CASE_PDF(K, stem, name, P)    case K: if (!KHAS(KF_MAT(K))) break; return stem##_pdf(m, wo, wi);
#define BSDF_CASE_SAMPLE(K, stem, name, P) case K: if (!KHAS(KF_MAT(K))) break; return stem##_sample(m, albedo, wo, u1, u2, mode, bs);
#define BSDF_CASE_ALBEDO(K, stem, name, P) case K: if (!KHAS(KF_MAT(K))) break; return stem##_albedo(m, albedo);
/* clang-format on */

/* The lobe flags of m (BSDF_*, materials/lobe.h). */
KFN uint32_t material_flags(const material *m) {
    switch ((material_kind)m->kind) {
        MATERIAL_KINDS(BSDF_CASE_FLAGS)
    case MAT_KIND_COUNT: break;
    }
    return 0u;
}
/* May light travel between local directions wo and wi (world wo_w, wi_w) at a surface with
 * geometric normal ng through a non-delta lobe? Reflection or transmission in the shading frame
 * must be the same as seen from the geometry (no light leaks through shading normals), and
 * transmission needs a transmitting material: `transmits`, an expression evaluated only then. */
#define BSDF_SIDES_AGREE(wo, wi, wo_w, wi_w, ng, transmits)                                                            \
    int reflect = (wi).z * (wo).z > 0.0f;                                                                              \
    int geo_reflect = vdot(wi_w, ng) * vdot(wo_w, ng) > 0.0f;                                                          \
    return reflect == geo_reflect && (reflect || (transmits))
KFN int bsdf_sides_agree(const material *m, vec3 wo, vec3 wi, vec3 wo_w, vec3 wi_w, vec3 ng) {
    BSDF_SIDES_AGREE(wo, wi, wo_w, wi_w, ng, (material_flags(m) & BSDF_TRANSMITS) != 0u);
}
/* The same for a material whose lobe flags (material_flags) are at hand. */
KFN int bsdf_sides_agree_lobes(uint32_t lobes, vec3 wo, vec3 wi, vec3 wo_w, vec3 wi_w, vec3 ng) {
    BSDF_SIDES_AGREE(wo, wi, wo_w, wi_w, ng, (lobes & BSDF_TRANSMITS) != 0u);
}
#undef BSDF_SIDES_AGREE

KFN vec3 bsdf_eval_mode(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    switch ((material_kind)m->kind) {
        MATERIAL_KINDS(BSDF_CASE_EVAL)
    case MAT_KIND_COUNT: break;
    }
    return v3s(0.0f);
}
KFN vec3 bsdf_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    return bsdf_eval_mode(m, albedo, wo, wi, TRANSPORT_RADIANCE);
}

KFN float bsdf_pdf(const material *m, vec3 wo, vec3 wi) {
    switch ((material_kind)m->kind) {
        MATERIAL_KINDS(BSDF_CASE_PDF)
    case MAT_KIND_COUNT: break;
    }
    return 0.0f;
}

/* u2 picks the direction; u1 picks between lobes where there are several. Returns 0 when no
 * direction was produced (absorbed). For dielectrics wo.z < 0 means wo is inside. */
KFN int bsdf_sample_dir_mode(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    bs->delta = 0;
    switch ((material_kind)m->kind) {
        MATERIAL_KINDS(BSDF_CASE_SAMPLE)
    case MAT_KIND_COUNT: break;
    }
    return 0;
}
KFN int bsdf_sample_dir(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, bsdf_sample *bs) {
    return bsdf_sample_dir_mode(m, albedo, wo, u1, u2, TRANSPORT_RADIANCE, bs);
}

/* Russian-roulette continuation probability of bidirectional sub-paths: the kind's albedo
 * estimate, so a path's weight never grows through roulette. */
KFN float bsdf_continuation(const material *m, vec3 albedo) {
    switch ((material_kind)m->kind) {
        MATERIAL_KINDS(BSDF_CASE_ALBEDO)
    case MAT_KIND_COUNT: break;
    }
    return kclamp(vmaxc(albedo), 0.0f, 1.0f);
}

#undef BSDF_CASE_FLAGS
#undef BSDF_CASE_EVAL
#undef BSDF_CASE_PDF
#undef BSDF_CASE_SAMPLE
#undef BSDF_CASE_ALBEDO
#endif
