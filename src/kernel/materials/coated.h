/* Coated: a dielectric coat (IOR `ior`, GGX alpha `coat_alpha`, absorption `coat_tint`) over a
 * base that is diffuse, a conductor (Schlick colour or complex IOR, roughness `alpha`) or the PBR
 * lobe (`metallic`, `alpha`), layered by albedo scaling (as OpenPBR and Cycles' Principled v2):
 *
 *   f(wo, wi) = f_coat(wo, wi) + K T(mu_o) T(mu_i) f_base(wo, wi),
 *   T(mu) = (1 - E(mu)) tint^(1 / (2 cos_t(mu))),
 *
 * f_coat the single-scattering GGX (or, below GGX_MIN_ALPHA, mirror) reflection of the coat with
 * the dielectric Fresnel, E(mu) its directional albedo (tabulated per material by
 * coated_from_params: coat_e, 16 nodes in mu, linearly interpolated), cos_t the refracted cosine
 * inside the coat (the tint is the coat's transmittance at normal incidence there and back, so a
 * path through it at any angle is attenuated by Beer-Lambert along its refracted length), and K
 * the diffuse base's compensation 1 / (1 - E_avg) (1 for the other bases). A coat weight w in
 * [0, 1] (glTF's clearcoatFactor) scales f_coat and E alike (coat_e holds w E). The form is
 * symmetric in wo and wi, hence reciprocal. The base is evaluated at the outside directions (no
 * refraction of its lobe).
 *
 * Energy: with a white base, the albedo is E_true(mu_o) + (1 - E(mu_o)) K (1 - E_avg) a_base
 * where a_base <= 1 is the base's average weighted by T. For the diffuse base K (1 - E_avg) = 1,
 * so the albedo is E_true(mu_o) + 1 - E(mu_o): exactly 1 where the table is exact (the
 * interreflection between coat and base that albedo scaling ignores is what K restores, as
 * Mitsuba's plastic with nonlinear = false does); the interpolated table of a convex E lies above
 * it, so the furnace never exceeds 1. For the conductor and PBR bases K = 1: the light that the
 * coat reflects back down onto the base is lost, at most E(mu)(1 - E(mu)) + E_avg of the incident
 * energy (about 4 + 9 % at normal incidence for IOR 1.5; the loss the conformance test's furnace
 * rows print).
 *
 * Sampling picks the coat with probability P(mu_o) = E / (E + (1 - E)^2 rho) (rho from the
 * untextured colour, so pdf needs no texture; clamped to [0.05, 0.95]) and the base otherwise;
 * pdf is the mixture over the non-delta parts. A smooth coat is a delta lobe of probability P; a
 * smooth coat over a smooth conductor is one delta lobe with both terms. */
#ifndef CAUSTIC_KERNEL_MATERIALS_COATED_H
#define CAUSTIC_KERNEL_MATERIALS_COATED_H

#include "conductor.h"
#include "diffuse.h"
#include "lobe.h"
#include "pbr.h"

KFN int coated_coat_delta(const material *m) { return m->coat_alpha < GGX_MIN_ALPHA; }
KFN int coated_base_delta(const material *m) { return m->coat_base == COAT_BASE_CONDUCTOR && m->alpha < GGX_MIN_ALPHA; }
/* E(mu): the coat's directional albedo, linear in the table */
KFN float coated_e(const material *m, float mu) {
    float f = kclamp(mu, 0.0f, 1.0f) * (float)(COAT_E_N - 1);
    int i0 = (int)f;
    if (i0 > COAT_E_N - 2) i0 = COAT_E_N - 2;
    float t = f - (float)i0;
    return m->coat_e[i0] * (1.0f - t) + m->coat_e[i0 + 1] * t;
}
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
/* the base's lobe (f * cos), pdf and sampling; conductor and PBR read alpha, metallic, eta, k */
KFN vec3 coated_base_eval(const material *m, vec3 albedo, vec3 wo, vec3 wi, int mode) {
    switch (m->coat_base) {
    case COAT_BASE_CONDUCTOR: return conductor_eval(m, albedo, wo, wi, mode);
    case COAT_BASE_PBR: return pbr_eval(m, albedo, wo, wi, mode);
    default: return diffuse_eval(m, albedo, wo, wi, mode);
    }
}
KFN float coated_base_pdf(const material *m, vec3 wo, vec3 wi) {
    switch (m->coat_base) {
    case COAT_BASE_CONDUCTOR: return conductor_pdf(m, wo, wi);
    case COAT_BASE_PBR: return pbr_pdf(m, wo, wi);
    default: return diffuse_pdf(m, wo, wi);
    }
}
KFN int coated_base_sample(const material *m, vec3 albedo, vec3 wo, float u1, vec2 u2, int mode, bsdf_sample *bs) {
    switch (m->coat_base) {
    case COAT_BASE_CONDUCTOR: return conductor_sample(m, albedo, wo, u1, u2, mode, bs);
    case COAT_BASE_PBR: return pbr_sample(m, albedo, wo, u1, u2, mode, bs);
    default: return diffuse_sample(m, albedo, wo, u1, u2, mode, bs);
    }
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
/* The coat's albedo table: E(mu) = int f_coat cos dwi at mu = i / (COAT_E_N - 1) (1e-3 for i = 0
 * of a rough coat), by VNDF sampling on a fixed 64 x 64 grid (the Fresnel times G2 / G1); for a
 * smooth coat the Fresnel itself. Then E_avg = 2 int E mu dmu of the linear interpolant, exactly
 * (Simpson per segment). Host only (material_from_params). */
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
    for (int i = 0; i < COAT_E_N; ++i) {
        float mu = (float)i / (float)(COAT_E_N - 1);
        if (m->coat_alpha < GGX_MIN_ALPHA) {
            m->coat_e[i] = fresnel_dielectric(mu, m->ior);
            continue;
        }
        mu = kmax(mu, 1e-3f);
        vec3 wo = v3(ksafe_sqrt(1.0f - mu * mu), 0.0f, mu);
        const int n = 64;
        double sum = 0.0;
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                vec2 u = v2(((float)a + 0.5f) / (float)n, ((float)b + 0.5f) / (float)n);
                vec3 wm = ggx_sample_vndf(wo, m->coat_alpha, u);
                vec3 wi = reflect_about(wo, wm);
                if (wi.z <= 0.0f) continue;
                sum += (double)(fresnel_dielectric(vdot(wo, wm), m->ior) * ggx_g2(wo, wi, m->coat_alpha) /
                                ggx_g1(wo, m->coat_alpha));
            }
        m->coat_e[i] = (float)(sum / (double)(n * n));
    }
    double eavg = 0.0, h = 1.0 / (double)(COAT_E_N - 1);
    for (int i = 0; i + 1 < COAT_E_N; ++i) {
        double a = (double)i * h, b = a + h, c = 0.5 * (a + b);
        double ea = m->coat_e[i], eb = m->coat_e[i + 1], ec = 0.5 * (ea + eb);
        eavg += h / 6.0 * (2.0 * a * ea + 8.0 * c * ec + 2.0 * b * eb);
    }
    m->coat_weight = kclamp((float)p->coat_weight, 0.0f, 1.0f);
    for (int i = 0; i < COAT_E_N; ++i) m->coat_e[i] *= m->coat_weight;
    eavg *= (double)m->coat_weight;
    m->coat_kd = m->coat_base == COAT_BASE_DIFFUSE && eavg < 0.999 ? (float)(1.0 / (1.0 - eavg)) : 1.0f;
}

#endif
