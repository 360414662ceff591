/* The Charlie sheen lobe (Estevez and Kulla 2017, "Production Friendly Microfacet Sheen BRDF"):
 * D = (2 + 1/a) sin^(1/a)(theta_h) / 2 pi with their fitted Lambda in V = 1 / ((1 + L(o) + L(i))
 * 4 cos_o cos_i). Kernel code; materials/pbr.h layers it over the PBR lobe, and
 * tools/sheen_albedo_table.c tabulates its directional albedo (sheen_albedo.h). */
#ifndef CAUSTIC_KERNEL_SHEEN_H
#define CAUSTIC_KERNEL_SHEEN_H

#include "vec.h"

#define PBR_SHEEN_MIN_ALPHA 0.09f /* sheen roughness 0.3: smoother, Charlie's albedo passes 1 at grazing angles */

/* Estevez & Kulla's fit of Charlie's Lambda. */
KFN float sheen_l(float x, float alpha) {
    float t = (1.0f - alpha) * (1.0f - alpha);
    float a = 21.5473f + (25.3245f - 21.5473f) * t, b = 3.82987f + (3.32435f - 3.82987f) * t;
    float c = 0.19823f + (0.16801f - 0.19823f) * t, d = -1.97760f + (-1.27393f + 1.97760f) * t;
    float e = -4.32054f + (-4.85967f + 4.32054f) * t;
    return a / (1.0f + b * powf(x, c)) + d * x + e;
}
KFN float sheen_lambda(float cos_t, float alpha) {
    float c = fabsf(cos_t);
    return c < 0.5f ? expf(sheen_l(c, alpha)) : expf(2.0f * sheen_l(0.5f, alpha) - sheen_l(1.0f - c, alpha));
}
/* The white sheen lobe's f * cos_i (both directions above the surface). */
KFN float sheen_f_cos(float alpha, vec3 wo, vec3 wi) {
    vec3 h = vnorm(vadd(wo, wi));
    float sin2 = kmax(0.0f, 1.0f - h.z * h.z), inv = 1.0f / alpha;
    float d = (2.0f + inv) * powf(sin2, 0.5f * inv) * (0.5f * K_INV_PI);
    return d / ((1.0f + sheen_lambda(wo.z, alpha) + sheen_lambda(wi.z, alpha)) * 4.0f * wo.z);
}

#endif
