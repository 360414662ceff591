/* PBR: glTF 2.0 metallic-roughness.
 * f = GGX specular (single scattering, Schlick F0 = mix(0.04, colour, metallic))
 *   + its multiple-scattering compensation (Kulla & Conty 2017): F_ms (1 - E(cos_o)) (1 - E(cos_i))
 *     / (pi (1 - E_avg)), E the directional albedo of a white GGX reflector (ggx_albedo.h), so a
 *     white metal reflects everything at every roughness
 *   + (1 - metallic) colour/pi (1 - Fd(cos_o)) (1 - Fd(cos_i)), Fd = Schlick with F0 = 0.04: the
 *     diffuse part weighted by what the dielectric interface lets through on the way in and out.
 * Every term is reciprocal; the sum never exceeds 1 (tests/test_bsdf_conformance.c). Glossy for
 * VCM where the specular lobe dominates. */
#ifndef CAUSTIC_KERNEL_MATERIALS_PBR_H
#define CAUSTIC_KERNEL_MATERIALS_PBR_H

#include "lobe.h"

#define PBR_DIELECTRIC_F0 0.04f
#define PBR_MIN_ALPHA     2e-3f /* smoother surfaces are clamped here: the lobe is never delta */

KFN float pbr_alpha(const material *m) { return kmax(m->alpha, PBR_MIN_ALPHA); }
KFN float pbr_fd(float c) {
    float x = kclamp(1.0f - c, 0.0f, 1.0f);
    return PBR_DIELECTRIC_F0 + (1.0f - PBR_DIELECTRIC_F0) * (x * x) * (x * x) * x;
}
/* The multiple-scattering lobe without its colour: (1 - E(cos_o)) (1 - E(cos_i)) / (pi (1 - E_avg)). */
KFN float pbr_ms_shape(float alpha, float cos_o, float cos_i) {
    float eavg = ggx_albedo_avg(alpha);
    if (!(eavg < 0.9999f)) return 0.0f;
    return (1.0f - ggx_albedo(cos_o, alpha)) * (1.0f - ggx_albedo(cos_i, alpha)) / (K_PI * (1.0f - eavg));
}
/* Its colour: the light that leaves after any number of bounces between microfacets, with the
 * Schlick Fresnel's hemispherical average F_avg = F0 + (1 - F0) / 21 at every bounce. */
KFN vec3 pbr_ms_colour(vec3 f0, float alpha) {
    float eavg = ggx_albedo_avg(alpha);
    vec3 favg = vadd(f0, vscale(vsub(v3s(1.0f), f0), 1.0f / 21.0f));
    vec3 r;
    r.x = favg.x * favg.x * eavg / (1.0f - favg.x * (1.0f - eavg));
    r.y = favg.y * favg.y * eavg / (1.0f - favg.y * (1.0f - eavg));
    r.z = favg.z * favg.z * eavg / (1.0f - favg.z * (1.0f - eavg));
    return r;
}
/* Probability of sampling the specular lobe (VNDF) rather than the cosine lobe that covers the
 * diffuse and multiple-scattering terms: the specular's share of the energy estimated from the
 * material and wo only (not from the colour, so pdf() needs no texture lookups), at least 1/4 so
 * that glossy highlights are sampled on dark dielectrics. */
KFN float pbr_spec_prob(const material *m, float cos_o) {
    float metallic = kclamp(m->metallic, 0.0f, 1.0f);
    float e = ggx_albedo(cos_o, pbr_alpha(m));
    float f = pbr_fd(cos_o);
    float ws = e * (f + (1.0f - f) * metallic);
    float wc = (1.0f - metallic) * (1.0f - f) + (1.0f - e);
    return kclamp(kmax(ws / kmax(ws + wc, 1e-6f), 0.25f), 0.0f, 1.0f);
}
/* The lobes without the hemisphere test (the sampler has made it). */
KFN vec3 pbr_eval_f(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    float metallic = kclamp(m->metallic, 0.0f, 1.0f), alpha = pbr_alpha(m);
    vec3 f0 = vlerp(v3s(PBR_DIELECTRIC_F0), albedo, metallic);
    vec3 wm = vnorm(vadd(wo, wi));
    float d = ggx_d(wm, alpha), g = ggx_g2(wo, wi, alpha);
    vec3 spec = vscale(fresnel_schlick(f0, vdot(wo, wm)), d * g / (4.0f * wo.z));
    /* the glTF model is a linear mix of a dielectric and a metal: so is the compensation */
    vec3 fms = vlerp(pbr_ms_colour(v3s(PBR_DIELECTRIC_F0), alpha), pbr_ms_colour(albedo, alpha), metallic);
    vec3 ms = vscale(fms, pbr_ms_shape(alpha, wo.z, wi.z) * wi.z);
    float kd = (1.0f - metallic) * (1.0f - pbr_fd(wo.z)) * (1.0f - pbr_fd(wi.z)) * K_INV_PI * wi.z;
    return vadd(vadd(spec, ms), vscale(albedo, kd));
}
KFN float pbr_pdf_f(const material *m, vec3 wo, vec3 wi) {
    float ps = pbr_spec_prob(m, wo.z);
    vec3 wm = vnorm(vadd(wo, wi));
    return ps * ggx_reflect_pdf(wo, wm, pbr_alpha(m)) + (1.0f - ps) * pdf_cosine_hemisphere(wi.z);
}

KFN uint32_t pbr_flags(const material *m) {
    return (m->metallic > 0.5f || m->alpha < 0.25f) ? (uint32_t)BSDF_NON_LAMBERTIAN : 0u;
}
KFN vec3 pbr_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    (void)mode;
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    return pbr_eval_f(m, albedo, wo, wi);
}
KFN float pbr_pdf(const material *m, vec3 wo, vec3 wi) {
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    return pbr_pdf_f(m, wo, wi);
}
KFN int pbr_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    (void)mode;
    if (wo.z <= 0.0f) return 0;
    if (u1 < pbr_spec_prob(m, wo.z)) {
        vec3 wm = ggx_sample_vndf(wo, pbr_alpha(m), u2);
        bs->wi = reflect_about(wo, wm);
    } else {
        bs->wi = sample_cosine_hemisphere(u2);
    }
    if (bs->wi.z <= 0.0f) return 0;
    bs->pdf = pbr_pdf_f(m, wo, bs->wi);
    if (!(bs->pdf > 0.0f)) return 0;
    bs->weight = vscale(pbr_eval_f(m, albedo, wo, bs->wi), 1.0f / bs->pdf);
    return 1;
}
/* a black or dark metal still reflects at grazing angles (Schlick): never 0 */
KFN float pbr_albedo(const material *m, vec3 albedo) {
    (void)m;
    return kclamp(kmax(vmaxc(albedo), 0.5f), 0.0f, 1.0f);
}
KFN void pbr_from_params(material *m, const material_params *p) {
    m->metallic = (float)p->metallic;
    m->alpha = (float)(p->roughness * p->roughness);
}

#endif
