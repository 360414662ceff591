/* Coated: a dielectric coat (IOR `ior`, GGX alpha `coat_alpha`, absorption `coat_tint`) over a
 * base that is diffuse, a conductor (Schlick colour or complex IOR, roughness `alpha`) or the PBR
 * lobe (`metallic`, `alpha`), layered by albedo scaling (as OpenPBR and Cycles' Principled v2):
 *
 *   f(wo, wi) = f_coat(wo, wi) + K T(mu_o) T(mu_i) f_base(wo, wi),
 *   T(mu) = (1 - E(mu)) tint^(1 / (2 cos_t(mu))),
 *
 * f_coat the single-scattering GGX (or, below GGX_MIN_ALPHA, mirror) reflection of the coat with
 * the dielectric Fresnel, E(mu) its directional albedo (the Fresnel for a smooth coat; for a rough
 * one, one table for all materials, coat_albedo.h, trilinear in mu, the coat's roughness and its
 * IOR), cos_t the refracted cosine
 * inside the coat (the tint is the coat's transmittance at normal incidence there and back, so a
 * path through it at any angle is attenuated by Beer-Lambert along its refracted length), and K
 * the diffuse base's compensation 1 / (1 - E_avg) (1 for the other bases). A coat weight w in
 * [0, 1] (glTF's clearcoatFactor) scales f_coat and E alike. The form is
 * symmetric in wo and wi, hence reciprocal. The base is evaluated at the outside directions (no
 * refraction of its lobe).
 *
 * Energy: with a white base, the albedo is E_true(mu_o) + (1 - E(mu_o)) K (1 - E_avg) a_base
 * where a_base <= 1 is the base's average weighted by T. For the diffuse base K (1 - E_avg) = 1,
 * so the albedo is E_true(mu_o) + 1 - E(mu_o): exactly 1 for a smooth coat (E is the Fresnel
 * itself; the interreflection between coat and base that albedo scaling ignores is what K
 * restores, as Mitsuba's plastic with nonlinear = false does), and off by the table's error for a
 * rough one (below 0.005 except near grazing at roughness below 0.2, up to 0.02 there:
 * tests/test_bsdf_conformance.c measures it; the furnace rows stay within 1 +- 0.001). For the
 * conductor and PBR bases K = 1: the light that the coat reflects back down onto the base is
 * lost, at most E(mu)(1 - E(mu)) + E_avg of the incident energy (about 4 + 9 % at normal
 * incidence for IOR 1.5; the loss the conformance test's furnace rows print).
 *
 * Sampling picks the coat with probability P(mu_o) = E / (E + (1 - E)^2 rho) (rho from the
 * untextured colour, so pdf needs no texture; clamped to [0.05, 0.95]) and the base otherwise;
 * pdf is the mixture over the non-delta parts. A smooth coat is a delta lobe of probability P; a
 * smooth coat over a smooth conductor is one delta lobe with both terms. */
#ifndef CAUSTIC_KERNEL_MATERIALS_COATED_H
#define CAUSTIC_KERNEL_MATERIALS_COATED_H

#include "../coat_albedo.h"
#include "conductor.h"
#include "diffuse.h"
#include "lobe.h"
#include "pbr.h"

KFN int coated_coat_delta(const material *m) { return m->coat_alpha < GGX_MIN_ALPHA; }
KFN int coated_base_delta(const material *m) { return m->coat_base == COAT_BASE_CONDUCTOR && m->alpha < GGX_MIN_ALPHA; }
/* ---- the coat's directional albedo E(mu) (coat_albedo.h) ---- */
static const float coat_albedo_host[COAT_ALBEDO_N * COAT_ALBEDO_N * COAT_ALBEDO_N] = {COAT_ALBEDO_DATA};
#if defined(__CUDACC__)
static __device__ const float coat_albedo_dev[COAT_ALBEDO_N * COAT_ALBEDO_N * COAT_ALBEDO_N] = {COAT_ALBEDO_DATA};
#endif
KFN float coat_albedo_at(int i) {
#if defined(__CUDA_ARCH__)
    return coat_albedo_dev[i];
#else
    return coat_albedo_host[i];
#endif
}
/* x in [0, 1] on the table's axis: the lower node and the weight of the upper one */
KFN int coat_albedo_coord(float x, float *t) {
    float f = kclamp(x, 0.0f, 1.0f) * (float)(COAT_ALBEDO_N - 1);
    int i = (int)f;
    if (i > COAT_ALBEDO_N - 2) i = COAT_ALBEDO_N - 2;
    *t = f - (float)i;
    return i;
}
/* E(mu) of m's coat at weight 1: the Fresnel of a smooth coat; for a rough one trilinear in the
 * table's mu, r = sqrt(coat_alpha) and s = (ior - 1) / (ior + 1) (an IOR above 3 reads 3's) */
KFN float coated_e1(const material *m, float mu) {
    if (coated_coat_delta(m)) return fresnel_dielectric(mu, m->ior);
    float ti, tj, tk;
    int i = coat_albedo_coord(mu, &ti), j = coat_albedo_coord(sqrtf(m->coat_alpha), &tj);
    int k = coat_albedo_coord((m->ior - 1.0f) / ((m->ior + 1.0f) * COAT_ALBEDO_S_MAX), &tk);
    float e = 0.0f;
    for (int dk = 0; dk < 2; ++dk)
        for (int dj = 0; dj < 2; ++dj) {
            int row = ((k + dk) * COAT_ALBEDO_N + j + dj) * COAT_ALBEDO_N + i;
            float w = (dk ? tk : 1.0f - tk) * (dj ? tj : 1.0f - tj);
            e += w * (coat_albedo_at(row) * (1.0f - ti) + coat_albedo_at(row + 1) * ti);
        }
    return e;
}
/* E(mu): the coat's directional albedo times its weight */
KFN float coated_e(const material *m, float mu) { return m->coat_weight * coated_e1(m, mu); }
/* T(mu): what the coat lets through on one crossing, absorption included */
KFN vec3 coated_trans(const material *m, float mu) {
    float e = 1.0f - coated_e(m, mu);
    vec3 t = m->coat_tint;
    if (t.x >= 1.0f && t.y >= 1.0f && t.z >= 1.0f) return v3s(e);
    float eta = kmax(m->ior, 1.0f);
    float cos_t = ksafe_sqrt(1.0f - (1.0f - mu * mu) / (eta * eta));
    float x = 0.5f / kmax(cos_t, 1e-3f);
    return v3(e * powf(t.x, x), e * powf(t.y, x), e * powf(t.z, x));
}
/* the coat's single-scattering lobe, f * cos (not for a delta coat) */
KFN float coated_coat_eval(const material *m, vec3 wo, vec3 wi) {
    vec3 wm = vnorm(vadd(wo, wi));
    float d = ggx_d(wm, m->coat_alpha), g = ggx_g2(wo, wi, m->coat_alpha);
    return m->coat_weight * fresnel_dielectric(vdot(wo, wm), m->ior) * d * g / (4.0f * wo.z);
}
/* the base's lobe (f * cos), pdf and sampling; conductor and PBR read alpha, metallic, eta, k. Each
 * switch names every base (-Werror=switch flags a new one); the diffuse base after it. */
KFN vec3 coated_base_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    switch ((enum coat_base)m->coat_base) {
    case COAT_BASE_DIFFUSE: break;
    case COAT_BASE_CONDUCTOR: return conductor_eval(m, albedo, wo, wi, mode);
    case COAT_BASE_PBR: return pbr_eval(m, albedo, wo, wi, mode);
    }
    return diffuse_eval(m, albedo, wo, wi, mode);
}
KFN float coated_base_pdf(const material *m, vec3 wo, vec3 wi) {
    switch ((enum coat_base)m->coat_base) {
    case COAT_BASE_DIFFUSE: break;
    case COAT_BASE_CONDUCTOR: return conductor_pdf(m, wo, wi);
    case COAT_BASE_PBR: return pbr_pdf(m, wo, wi);
    }
    return diffuse_pdf(m, wo, wi);
}
KFN int coated_base_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    switch ((enum coat_base)m->coat_base) {
    case COAT_BASE_DIFFUSE: break;
    case COAT_BASE_CONDUCTOR: return conductor_sample(m, albedo, wo, u1, u2, mode, bs);
    case COAT_BASE_PBR: return pbr_sample(m, albedo, wo, u1, u2, mode, bs);
    }
    return diffuse_sample(m, albedo, wo, u1, u2, mode, bs);
}
/* probability of sampling the coat rather than the base */
KFN float coated_coat_prob(const material *m, float mu) {
    float e = coated_e(m, mu);
    float rho = m->coat_base == COAT_BASE_DIFFUSE ? kmax(vmaxc(m->albedo), 0.05f) : 1.0f;
    float b = (1.0f - e) * (1.0f - e) * rho * vmaxc(m->coat_tint) * m->coat_kd;
    return kclamp(e / kmax(e + b, 1e-6f), 0.05f, 0.95f);
}

KFN uint32_t coated_flags(const material *m) {
    int cd = coated_coat_delta(m), bd = coated_base_delta(m);
    uint32_t f = (m->coat_base == COAT_BASE_DIFFUSE && m->coat_alpha >= 0.25f) ? 0u : (uint32_t)BSDF_NON_LAMBERTIAN;
    if (cd || bd) f |= BSDF_HAS_DELTA;
    if (cd && bd) f |= BSDF_ALL_DELTA;
    return f;
}
KFN vec3 coated_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    if (wo.z <= 0.0f || wi.z <= 0.0f) return v3s(0.0f);
    vec3 r = v3s(0.0f);
    if (!coated_coat_delta(m)) r = v3s(coated_coat_eval(m, wo, wi));
    if (!coated_base_delta(m)) {
        vec3 t = vscale(vmul(coated_trans(m, wo.z), coated_trans(m, wi.z)), m->coat_kd);
        r = vadd(r, vmul(t, coated_base_eval(m, albedo, wo, wi, mode)));
    }
    return r;
}
KFN float coated_pdf(const material *m, vec3 wo, vec3 wi) {
    if (wo.z <= 0.0f || wi.z <= 0.0f) return 0.0f;
    float pc = coated_coat_prob(m, wo.z), pdf = 0.0f;
    if (!coated_coat_delta(m)) pdf += pc * ggx_reflect_pdf(wo, vnorm(vadd(wo, wi)), m->coat_alpha);
    if (!coated_base_delta(m)) pdf += (1.0f - pc) * coated_base_pdf(m, wo, wi);
    return pdf;
}
KFN int coated_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    if (wo.z <= 0.0f) return 0;
    int cd = coated_coat_delta(m), bd = coated_base_delta(m);
    float fc = m->coat_weight * fresnel_dielectric(wo.z, m->ior);
    if (cd && bd) { /* both mirrors: one delta lobe */
        vec3 t = coated_trans(m, wo.z);
        vec3 base = conductor_fresnel(m, albedo, wo.z);
        bs->wi = reflect_local(wo);
        bs->pdf = 1.0f;
        bs->delta = 1;
        bs->weight = vadd(v3s(fc), vscale(vmul(vmul(t, t), base), m->coat_kd));
        return 1;
    }
    float pc = coated_coat_prob(m, wo.z);
    if (u1 < pc) {
        if (cd) {
            bs->wi = reflect_local(wo);
            bs->pdf = pc;
            bs->delta = 1;
            bs->weight = v3s(fc / pc);
            return 1;
        }
        bs->wi = reflect_about(wo, ggx_sample_vndf(wo, m->coat_alpha, u2));
    } else {
        float ub = kmin((u1 - pc) / (1.0f - pc), 0.99999994f);
        bsdf_sample b;
        b.delta = 0;
        if (!coated_base_sample(m, albedo, wo, ub, u2, mode, &b)) return 0;
        if (bd) {
            vec3 t = coated_trans(m, wo.z);
            bs->wi = b.wi;
            bs->pdf = 1.0f - pc;
            bs->delta = 1;
            bs->weight = vscale(vmul(vmul(t, t), b.weight), m->coat_kd / (1.0f - pc));
            return 1;
        }
        bs->wi = b.wi;
    }
    if (bs->wi.z <= 0.0f) return 0;
    bs->delta = 0;
    bs->pdf = coated_pdf(m, wo, bs->wi);
    if (!(bs->pdf > 0.0f)) return 0;
    bs->weight = vscale(coated_eval(m, albedo, wo, bs->wi, mode), 1.0f / bs->pdf);
    return 1;
}
/* the coat keeps reflecting at grazing angles: never 0 */
KFN float coated_albedo(const material *m, vec3 albedo) {
    vec3 c = m->coat_base == COAT_BASE_CONDUCTOR && m->complex_ior ? fresnel_conductor(1.0f, m->eta, m->k) : albedo;
    return kclamp(kmax(vmaxc(c), 0.5f), 0.0f, 1.0f);
}
/* The diffuse base's compensation K = 1 / (1 - E_avg), E_avg = 2 int E mu dmu of coated_e:
 * composite Simpson with 8 panels per node interval of the table, exact where E is linear between
 * the nodes (a rough coat). Host only (material_from_params). */
KFN void coated_from_params(material *m, const material_params *p) {
    m->alpha = (float)(p->roughness * p->roughness);
    m->coat_alpha = (float)(p->coat_roughness * p->coat_roughness);
    m->ior = (float)kmax((float)p->ior, 1.0f);
    m->metallic = (float)p->metallic;
    m->coat_base =
        p->coat_base == COAT_BASE_CONDUCTOR || p->coat_base == COAT_BASE_PBR ? p->coat_base : COAT_BASE_DIFFUSE;
    m->coat_tint =
        v3(kclamp(p->coat_tint.x, 0.0f, 1.0f), kclamp(p->coat_tint.y, 0.0f, 1.0f), kclamp(p->coat_tint.z, 0.0f, 1.0f));
    m->complex_ior = p->complex_ior != 0;
    m->eta = p->eta;
    m->k = p->k;
    m->coat_weight = kclamp((float)p->coat_weight, 0.0f, 1.0f);
    const int panels = 8 * (COAT_ALBEDO_N - 1);
    double eavg = 0.0, h = 1.0 / (double)panels;
    for (int i = 0; i <= panels; ++i) {
        double mu = (double)i * h, w = i == 0 || i == panels ? 1.0 : (i % 2 ? 4.0 : 2.0);
        eavg += w * mu * (double)coated_e(m, (float)mu);
    }
    eavg *= 2.0 * h / 3.0;
    m->coat_kd = m->coat_base == COAT_BASE_DIFFUSE && eavg < 0.999 ? (float)(1.0 / (1.0 - eavg)) : 1.0f;
}

#endif
