/* The math several materials share: Fresnel terms, the isotropic GGX (Trowbridge-Reitz)
 * microfacet distribution with its visible-normal sampling, reflection and refraction about a
 * normal, and the directional albedo of a white GGX reflector (ggx_albedo.h) for the
 * multiple-scattering compensation. Directions are local (z = the shading normal). */
#ifndef CAUSTIC_KERNEL_MICROFACET_H
#define CAUSTIC_KERNEL_MICROFACET_H

#include "ggx_albedo.h"
#include "sampling.h"

/* Below this GGX alpha a conductor or rough glass is treated as perfectly smooth (delta). */
#define GGX_MIN_ALPHA 1e-3f

/* ---- Fresnel ---- */
KFN vec3 fresnel_schlick(vec3 f0, float cos_theta) {
    float m = kclamp(1.0f - cos_theta, 0.0f, 1.0f);
    float m5 = (m * m) * (m * m) * m;
    return vadd(f0, vscale(vsub(v3s(1.0f), f0), m5));
}
/* Schlick with a reflectance f90 (<= 1) at grazing incidence (KHR_materials_specular). */
KFN vec3 fresnel_schlick_f90(vec3 f0, float f90, float cos_theta) {
    float m = kclamp(1.0f - cos_theta, 0.0f, 1.0f);
    float m5 = (m * m) * (m * m) * m;
    return vadd(f0, vscale(vsub(v3s(f90), f0), m5));
}
/* Unpolarised dielectric Fresnel reflectance; eta = n_transmitted / n_incident. */
KFN float fresnel_dielectric(float cos_i, float eta) {
    cos_i = kclamp(cos_i, -1.0f, 1.0f);
    if (cos_i < 0.0f) {
        eta = 1.0f / eta;
        cos_i = -cos_i;
    }
    float sin2_t = (1.0f - cos_i * cos_i) / (eta * eta);
    if (sin2_t >= 1.0f) return 1.0f; /* total internal reflection */
    float cos_t = ksafe_sqrt(1.0f - sin2_t);
    float rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t);
    float rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t);
    return 0.5f * (rs * rs + rp * rp);
}

/* Unpolarised Fresnel reflectance of a conductor with complex index eta + i k (relative to the
 * outside), exact for each channel (the closed form of Lazanyi and Szirmay-Kalos 2005, as in
 * pbrt-v4's FrComplex and Mitsuba 3's fresnel_conductor). */
KFN float fresnel_conductor1(float cos_i, float eta, float k) {
    float c2 = kclamp(cos_i * cos_i, 0.0f, 1.0f), s2 = 1.0f - c2;
    float e2 = eta * eta, k2 = k * k;
    float t0 = e2 - k2 - s2;
    float a2b2 = sqrtf(kmax(t0 * t0 + 4.0f * e2 * k2, 0.0f));
    float a = ksafe_sqrt(0.5f * (a2b2 + t0));
    float ci = sqrtf(c2);
    float t1 = a2b2 + c2, t2 = 2.0f * a * ci;
    float rs = (t1 - t2) / kmax(t1 + t2, 1e-20f);
    float t3 = c2 * a2b2 + s2 * s2, t4 = t2 * s2;
    float rp = rs * (t3 - t4) / kmax(t3 + t4, 1e-20f);
    return kclamp(0.5f * (rs + rp), 0.0f, 1.0f);
}
KFN vec3 fresnel_conductor(float cos_i, vec3 eta, vec3 k) {
    return v3(fresnel_conductor1(cos_i, eta.x, k.x), fresnel_conductor1(cos_i, eta.y, k.y),
              fresnel_conductor1(cos_i, eta.z, k.z));
}

/* ---- GGX (Trowbridge-Reitz), isotropic ---- */
KFN float ggx_d(vec3 m, float alpha) {
    if (m.z <= 0.0f) return 0.0f;
    float a2 = alpha * alpha;
    float c2 = m.z * m.z;
    float den = c2 * (a2 - 1.0f) + 1.0f;
    return a2 / (K_PI * den * den);
}
KFN float ggx_lambda(vec3 w, float alpha) {
    float c2 = w.z * w.z;
    if (c2 <= 0.0f) return 0.0f;
    float t2 = (1.0f - c2) / c2;
    return 0.5f * (-1.0f + sqrtf(1.0f + alpha * alpha * t2));
}
KFN float ggx_g1(vec3 w, float alpha) { return 1.0f / (1.0f + ggx_lambda(w, alpha)); }
KFN float ggx_g2(vec3 wo, vec3 wi, float alpha) {
    return 1.0f / (1.0f + ggx_lambda(wo, alpha) + ggx_lambda(wi, alpha));
}

/* Visible-normal sampling (Heitz 2018): stretch, sample the projected hemisphere, unstretch. */
KFN vec3 ggx_sample_vndf(vec3 wo, float alpha, vec2 u) {
    vec3 vh = vnorm(v3(alpha * wo.x, alpha * wo.y, wo.z));
    float l2 = vh.x * vh.x + vh.y * vh.y;
    vec3 t1 = l2 > 0.0f ? vscale(v3(-vh.y, vh.x, 0.0f), 1.0f / sqrtf(l2)) : v3(1.0f, 0.0f, 0.0f);
    vec3 t2 = vcross(vh, t1);
    float r = sqrtf(u.x);
    float phi = 2.0f * K_PI * u.y;
    float p1 = r * cosf(phi), p2 = r * sinf(phi);
    float s = 0.5f * (1.0f + vh.z);
    p2 = (1.0f - s) * ksafe_sqrt(1.0f - p1 * p1) + s * p2;
    vec3 nh = vadd(vadd(vscale(t1, p1), vscale(t2, p2)), vscale(vh, ksafe_sqrt(1.0f - p1 * p1 - p2 * p2)));
    return vnorm(v3(alpha * nh.x, alpha * nh.y, kmax(1e-6f, nh.z)));
}
/* pdf of wi = reflect(wo, m) under VNDF sampling. */
KFN float ggx_reflect_pdf(vec3 wo, vec3 wm, float alpha) {
    if (wo.z <= 0.0f) return 0.0f;
    return ggx_g1(wo, alpha) * ggx_d(wm, alpha) / (4.0f * wo.z);
}
/* pdf of the visible normal wm seen from wo (either side), D_wo(wm). */
KFN float ggx_visible_pdf(vec3 wo, vec3 wm, float alpha) {
    float co = fabsf(wo.z);
    if (co == 0.0f) return 0.0f;
    return ggx_g1(wo, alpha) / co * ggx_d(wm, alpha) * fabsf(vdot(wo, wm));
}

/* ---- reflection and refraction ---- */
KFN vec3 reflect_local(vec3 w) { return v3(-w.x, -w.y, w.z); }
KFN vec3 reflect_about(vec3 w, vec3 n) { return vsub(vscale(n, 2.0f * vdot(w, n)), w); }
/* Refracts w about the unit normal n (either side) for relative index eta = n_inside/n_outside of
 * the side n faces; returns 0 on total internal reflection. *etap: n_t / n_i of this crossing. */
KFN int refract_about(vec3 w, vec3 n, float eta, float *etap, vec3 *wt) {
    float ci = vdot(n, w);
    if (ci < 0.0f) {
        eta = 1.0f / eta;
        ci = -ci;
        n = vneg(n);
    }
    float s2t = kmax(0.0f, 1.0f - ci * ci) / (eta * eta);
    if (s2t >= 1.0f) return 0;
    float ct = ksafe_sqrt(1.0f - s2t);
    *wt = vadd(vscale(vneg(w), 1.0f / eta), vscale(n, ci / eta - ct));
    *etap = eta;
    return 1;
}

/* ---- directional albedo of a dielectric GGX reflector (coat_albedo.h) ---- */
/* E(mu) = int f cos dwi of the single-scattering GGX reflection (alpha) of a dielectric of IOR eta,
 * Fresnel included: by visible-normal sampling on a fixed n x n grid (the Fresnel times G2 / G1,
 * no randomness), mu clamped to 1e-3; below GGX_MIN_ALPHA the Fresnel itself. Host only: the
 * generator of coat_albedo.h (tools/coat_albedo_table.c) and the check of that table
 * (tests/test_bsdf_conformance.c). */
KFN float ggx_dielectric_albedo_estimate(float mu, float alpha, float eta, int n) {
    if (alpha < GGX_MIN_ALPHA) return fresnel_dielectric(mu, eta);
    mu = kmax(mu, 1e-3f);
    vec3 wo = v3(ksafe_sqrt(1.0f - mu * mu), 0.0f, mu);
    double sum = 0.0;
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
            vec2 u = v2(((float)a + 0.5f) / (float)n, ((float)b + 0.5f) / (float)n);
            vec3 wm = ggx_sample_vndf(wo, alpha, u);
            vec3 wi = reflect_about(wo, wm);
            if (wi.z <= 0.0f) continue;
            sum += (double)(fresnel_dielectric(vdot(wo, wm), eta) * ggx_g2(wo, wi, alpha) / ggx_g1(wo, alpha));
        }
    return (float)(sum / (double)(n * n));
}

/* ---- directional albedo of a white single-scattering GGX reflector (ggx_albedo.h) ---- */
static const float ggx_albedo_e_host[GGX_ALBEDO_N * GGX_ALBEDO_N] = {GGX_ALBEDO_E_DATA};
static const float ggx_albedo_avg_host[GGX_ALBEDO_N] = {GGX_ALBEDO_AVG_DATA};
#if defined(__CUDACC__)
static __device__ const float ggx_albedo_e_dev[GGX_ALBEDO_N * GGX_ALBEDO_N] = {GGX_ALBEDO_E_DATA};
static __device__ const float ggx_albedo_avg_dev[GGX_ALBEDO_N] = {GGX_ALBEDO_AVG_DATA};
#endif
KFN float ggx_albedo_e_at(int i) {
#if defined(__CUDA_ARCH__)
    return ggx_albedo_e_dev[i];
#else
    return ggx_albedo_e_host[i];
#endif
}
KFN float ggx_albedo_avg_at(int i) {
#if defined(__CUDA_ARCH__)
    return ggx_albedo_avg_dev[i];
#else
    return ggx_albedo_avg_host[i];
#endif
}
/* Linear interpolation on the table's grid (nodes at k / (N - 1), ends included). */
KFN void ggx_albedo_coord(float x, int *k0, int *k1, float *t) {
    float f = kclamp(x * (float)(GGX_ALBEDO_N - 1), 0.0f, (float)(GGX_ALBEDO_N - 1));
    *k0 = (int)f;
    *k1 = *k0 + 1 < GGX_ALBEDO_N ? *k0 + 1 : *k0;
    *t = f - (float)*k0;
}
/* E(mu, r) and E_avg(r) for roughness r = sqrt(alpha). */
KFN float ggx_albedo(float mu, float alpha) {
    int i0, i1, j0, j1;
    float ti, tj;
    ggx_albedo_coord(kclamp(mu, 0.0f, 1.0f), &i0, &i1, &ti);
    ggx_albedo_coord(sqrtf(kclamp(alpha, 0.0f, 1.0f)), &j0, &j1, &tj);
    float a = ggx_albedo_e_at(j0 * GGX_ALBEDO_N + i0) * (1.0f - ti) + ggx_albedo_e_at(j0 * GGX_ALBEDO_N + i1) * ti;
    float b = ggx_albedo_e_at(j1 * GGX_ALBEDO_N + i0) * (1.0f - ti) + ggx_albedo_e_at(j1 * GGX_ALBEDO_N + i1) * ti;
    return kclamp(a * (1.0f - tj) + b * tj, 0.0f, 1.0f);
}
KFN float ggx_albedo_avg(float alpha) {
    int j0, j1;
    float tj;
    ggx_albedo_coord(sqrtf(kclamp(alpha, 0.0f, 1.0f)), &j0, &j1, &tj);
    return kclamp(ggx_albedo_avg_at(j0) * (1.0f - tj) + ggx_albedo_avg_at(j1) * tj, 0.0f, 1.0f);
}

#endif
