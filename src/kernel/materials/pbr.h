/* PBR: glTF 2.0 metallic-roughness.
 * f = GGX specular (single scattering, Schlick F0 = mix(0.04, colour, metallic))
 *   + its multiple-scattering compensation (Kulla & Conty 2017): F_ms (1 - E(cos_o)) (1 - E(cos_i))
 *     / (pi (1 - E_avg)), E the directional albedo of a white GGX reflector (ggx_albedo.h), so a
 *     white metal reflects everything at every roughness
 *   + (1 - metallic) colour/pi (1 - Fd(cos_o)) (1 - Fd(cos_i)), Fd = Schlick with F0 = 0.04: the
 *     diffuse part weighted by what the dielectric interface lets through on the way in and out.
 * Every term is reciprocal; the sum never exceeds 1 (tests/test_bsdf_conformance.c). Glossy for
 * VCM where the specular lobe dominates.
 * Optional layers (m->pbr_layers; without it every value below is the constant above):
 *   KHR_materials_specular: the dielectric part's Fresnel has F0 = m->spec_f0 (colour) and F90 =
 *     m->spec_f90, in the specular lobe, its compensation and the diffuse part's weights (with
 *     the scalar max(F0) for the latter);
 *   KHR_materials_sheen: Charlie sheen (Estevez & Kulla 2017: D = (2 + 1/a) sin^(1/a)(theta_h) /
 *     2 pi, their fitted Lambda in V = 1 / ((1 + L(o) + L(i)) 4 cos_o cos_i)) of colour m->sheen
 *     over the lobe, layered by albedo scaling as KHR_materials_sheen states it:
 *     f = f_sheen + f_base min(1 - s E(cos_o), 1 - s E(cos_i)), s = max(sheen), E the white sheen
 *     lobe's directional albedo from one table for all materials (sheen_albedo.h): reciprocal and, as
 *     E <= 1 (the lobe is scaled down where its albedo would pass 1), never above 1. Sampled with
 *     probability min(s E(cos_o), 1/2) from the cosine lobe. */
#ifndef CAUSTIC_KERNEL_MATERIALS_PBR_H
#define CAUSTIC_KERNEL_MATERIALS_PBR_H

#include "../sheen.h"
#include "../sheen_albedo.h"
#include "lobe.h"

#define PBR_DIELECTRIC_F0 0.04f
#define PBR_MIN_ALPHA     2e-3f /* smoother surfaces are clamped here: the lobe is never delta */

KFN float pbr_alpha(const material *m) { return kmax(m->alpha, PBR_MIN_ALPHA); }
/* The dielectric part's Fresnel: F0 (colour) and F90. */
KFN vec3 pbr_f0d(const material *m) { return m->pbr_layers ? m->spec_f0 : v3s(PBR_DIELECTRIC_F0); }
KFN float pbr_f90d(const material *m) { return m->pbr_layers ? m->spec_f90 : 1.0f; }
/* Its scalar Schlick (F0 = max of the colour) that weights the diffuse part. */
KFN float pbr_fd_of(float f0, float f90, float c) {
    float x = kclamp(1.0f - c, 0.0f, 1.0f);
    return f0 + (f90 - f0) * (x * x) * (x * x) * x;
}
KFN float pbr_fd(const material *m, float c) {
    return m->pbr_layers ? pbr_fd_of(vmaxc(m->spec_f0), m->spec_f90, c) : pbr_fd_of(PBR_DIELECTRIC_F0, 1.0f, c);
}

/* ---- sheen ---- */
/* The white sheen lobe's directional albedo E(mu) at m's sheen alpha: bilinear in the shared table
 * (sheen_albedo.h, one for all materials: a per-material table was an array indexed at run time,
 * which put the GPU megakernel's copy of the shaded material in local memory) */
static const float sheen_albedo_host[SHEEN_ALBEDO_NA * SHEEN_ALBEDO_NMU] = {SHEEN_ALBEDO_DATA};
#if defined(__CUDACC__)
static __device__ const float sheen_albedo_dev[SHEEN_ALBEDO_NA * SHEEN_ALBEDO_NMU] = {SHEEN_ALBEDO_DATA};
#endif
KFN float sheen_albedo_at(int i) {
#if defined(__CUDA_ARCH__)
    return sheen_albedo_dev[i];
#else
    return sheen_albedo_host[i];
#endif
}
KFN float sheen_e_at(float alpha, float mu) {
    float fa =
        kclamp((alpha - SHEEN_ALBEDO_ALPHA0) / (1.0f - SHEEN_ALBEDO_ALPHA0), 0.0f, 1.0f) * (float)(SHEEN_ALBEDO_NA - 1);
    float fm = kclamp(mu, 0.0f, 1.0f) * (float)(SHEEN_ALBEDO_NMU - 1);
    int j = (int)fa, i = (int)fm;
    if (j > SHEEN_ALBEDO_NA - 2) j = SHEEN_ALBEDO_NA - 2;
    if (i > SHEEN_ALBEDO_NMU - 2) i = SHEEN_ALBEDO_NMU - 2;
    float ta = fa - (float)j, tm = fm - (float)i;
    int r0 = j * SHEEN_ALBEDO_NMU + i, r1 = r0 + SHEEN_ALBEDO_NMU;
    float e0 = sheen_albedo_at(r0) + (sheen_albedo_at(r0 + 1) - sheen_albedo_at(r0)) * tm;
    float e1 = sheen_albedo_at(r1) + (sheen_albedo_at(r1 + 1) - sheen_albedo_at(r1)) * tm;
    return e0 + (e1 - e0) * ta;
}
KFN float sheen_e(const material *m, float mu) { return sheen_e_at(m->sheen_alpha, mu); }
KFN int pbr_has_sheen(const material *m) { return m->pbr_layers && !vis_black(m->sheen); }
/* The probability of sampling the sheen's cosine lobe (0 without sheen). */
KFN float pbr_sheen_prob(const material *m, float cos_o) {
    return pbr_has_sheen(m) ? kmin(vmaxc(m->sheen) * sheen_e(m, cos_o), 0.5f) : 0.0f;
}
/* The multiple-scattering lobe without its colour: (1 - E(cos_o)) (1 - E(cos_i)) / (pi (1 - E_avg)). */
KFN float pbr_ms_shape(float alpha, float cos_o, float cos_i) {
    float eavg = ggx_albedo_avg(alpha);
    if (!(eavg < 0.9999f)) return 0.0f;
    return (1.0f - ggx_albedo(cos_o, alpha)) * (1.0f - ggx_albedo(cos_i, alpha)) / (K_PI * (1.0f - eavg));
}
/* Its colour: the light that leaves after any number of bounces between microfacets, with the
 * Schlick Fresnel's hemispherical average F_avg = F0 + (1 - F0) / 21 at every bounce. */
KFN vec3 pbr_ms_colour(vec3 f0, float f90, float alpha) {
    float eavg = ggx_albedo_avg(alpha);
    vec3 favg = vadd(f0, vscale(vsub(v3s(f90), f0), 1.0f / 21.0f));
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
    float f = pbr_fd(m, cos_o);
    float ws = e * (f + (1.0f - f) * metallic);
    float wc = (1.0f - metallic) * (1.0f - f) + (1.0f - e);
    return kclamp(kmax(ws / kmax(ws + wc, 1e-6f), 0.25f), 0.0f, 1.0f);
}
/* The lobes without the hemisphere test (the sampler has made it). */
KFN vec3 pbr_eval_f(const material *m, vec3 albedo, vec3 wo, vec3 wi) {
    float metallic = kclamp(m->metallic, 0.0f, 1.0f), alpha = pbr_alpha(m);
    vec3 f0d = pbr_f0d(m), f0 = vlerp(f0d, albedo, metallic);
    vec3 wm = vnorm(vadd(wo, wi));
    float d = ggx_d(wm, alpha), g = ggx_g2(wo, wi, alpha);
    /* Schlick with F90 = mix(the dielectric's, 1, metallic): linear in F0 and F90 like the mix */
    vec3 fr = m->pbr_layers ? fresnel_schlick_f90(f0, m->spec_f90 + (1.0f - m->spec_f90) * metallic, vdot(wo, wm))
                            : fresnel_schlick(f0, vdot(wo, wm));
    vec3 spec = vscale(fr, d * g / (4.0f * wo.z));
    /* the glTF model is a linear mix of a dielectric and a metal: so is the compensation */
    vec3 fms = vlerp(pbr_ms_colour(f0d, pbr_f90d(m), alpha), pbr_ms_colour(albedo, 1.0f, alpha), metallic);
    vec3 ms = vscale(fms, pbr_ms_shape(alpha, wo.z, wi.z) * wi.z);
    float kd = (1.0f - metallic) * (1.0f - pbr_fd(m, wo.z)) * (1.0f - pbr_fd(m, wi.z)) * K_INV_PI * wi.z;
    vec3 f = vadd(vadd(spec, ms), vscale(albedo, kd));
    if (pbr_has_sheen(m)) {
        float s = vmaxc(m->sheen);
        float scale = kmin(1.0f - s * sheen_e(m, wo.z), 1.0f - s * sheen_e(m, wi.z));
        f = vadd(vscale(f, scale), vscale(m->sheen, sheen_f_cos(m->sheen_alpha, wo, wi)));
    }
    return f;
}
KFN float pbr_pdf_f(const material *m, vec3 wo, vec3 wi) {
    float ps = pbr_spec_prob(m, wo.z);
    vec3 wm = vnorm(vadd(wo, wi));
    float pdf = ps * ggx_reflect_pdf(wo, wm, pbr_alpha(m)) + (1.0f - ps) * pdf_cosine_hemisphere(wi.z);
    float psh = pbr_sheen_prob(m, wo.z);
    if (psh > 0.0f) pdf = psh * pdf_cosine_hemisphere(wi.z) + (1.0f - psh) * pdf;
    return pdf;
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
    float psh = pbr_sheen_prob(m, wo.z);
    if (psh > 0.0f) /* the sheen's share of u1 first, the rest rescaled for the lobes below */
        u1 = u1 < psh ? -1.0f : kmin((u1 - psh) / (1.0f - psh), 0.99999994f);
    if (u1 < 0.0f) {
        bs->wi = sample_cosine_hemisphere(u2);
    } else if (u1 < pbr_spec_prob(m, wo.z)) {
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
    int sheen = !vis_black(p->sheen);
    if (p->spec_weight == 1.0 && p->spec_tint.x == 1.0f && p->spec_tint.y == 1.0f && p->spec_tint.z == 1.0f && !sheen)
        return; /* the plain glTF lobe */
    m->pbr_layers = 1;
    float w = (float)kclamp((float)p->spec_weight, 0.0f, 1.0f);
    m->spec_f0 =
        vscale(v3(kmin(PBR_DIELECTRIC_F0 * p->spec_tint.x, 1.0f), kmin(PBR_DIELECTRIC_F0 * p->spec_tint.y, 1.0f),
                  kmin(PBR_DIELECTRIC_F0 * p->spec_tint.z, 1.0f)),
               w);
    m->spec_f90 = w;
    if (!sheen) return;
    m->sheen = p->sheen;
    m->sheen_alpha = kmax((float)(p->sheen_roughness * p->sheen_roughness), PBR_SHEEN_MIN_ALPHA);
    /* where the white lobe's albedo passes 1 the colour is scaled down so that the sheen's albedo
     * s E stays at most 1 (E is linear in mu between the table's nodes: its largest value is a node's) */
    float emax = 0.0f;
    for (int i = 0; i < SHEEN_ALBEDO_NMU; ++i)
        emax = kmax(emax, sheen_e_at(m->sheen_alpha, (float)i / (float)(SHEEN_ALBEDO_NMU - 1)));
    if (emax > 1.0f) m->sheen = vscale(m->sheen, 1.0f / emax);
}

#endif
