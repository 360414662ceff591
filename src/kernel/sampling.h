/* Warps from the unit square to directions and shapes, each with its pdf. */
#ifndef CAUSTIC_KERNEL_SAMPLING_H
#define CAUSTIC_KERNEL_SAMPLING_H

#include "vec.h"

/* sin and cos of a in [-pi/4, pi/4]: their Taylor series to degree 9 and 10 (truncation error
 * below 2e-9, under float rounding). No libm call (sincosf was 3 % of the Cornell box's render,
 * docs/performance-log.md, "whole-path profile"), and the same operations on every target. */
KFN void ksincos_pi4(float a, float *s, float *c) {
    float a2 = a * a;
    *s = a + a * a2 * (-1.0f / 6.0f + a2 * (1.0f / 120.0f + a2 * (-1.0f / 5040.0f + a2 * (1.0f / 362880.0f))));
    *c = 1.0f + a2 * (-0.5f +
                      a2 * (1.0f / 24.0f + a2 * (-1.0f / 720.0f + a2 * (1.0f / 40320.0f + a2 * (-1.0f / 3628800.0f)))));
}

/* Concentric square-to-disk map (Shirley-Chiu): low distortion, keeps stratification. The angle
 * is pi/4 * oy/ox where |ox| > |oy|, else pi/2 - pi/4 * ox/oy, whose cos and sin are the sin and
 * cos of pi/4 * ox/oy: one quarter-range sincos, and selects instead of a branch that goes either
 * way at random. */
KFN vec2 concentric_map(vec2 u, float *radius) {
    float ox = 2.0f * u.x - 1.0f, oy = 2.0f * u.y - 1.0f;
    int wide = fabsf(ox) > fabsf(oy);
    float r = wide ? ox : oy, q = (wide ? oy : ox) / r;
    *radius = r;
    if (ox == 0.0f && oy == 0.0f) return v2(0.0f, 0.0f);
    float s, c;
    ksincos_pi4((K_PI * 0.25f) * q, &s, &c);
    return wide ? v2(r * c, r * s) : v2(r * s, r * c);
}
KFN vec2 sample_disk_concentric(vec2 u) {
    float r;
    return concentric_map(u, &r);
}

/* Cosine-weighted hemisphere around +z; pdf = cos(theta)/pi. The height from the disk radius,
 * not from the point: its square root then runs beside the angle's division and polynomial
 * instead of after them (the next ray waits on it). */
KFN vec3 sample_cosine_hemisphere(vec2 u) {
    float r;
    vec2 d = concentric_map(u, &r);
    return v3(d.x, d.y, ksafe_sqrt(1.0f - r * r));
}
KFN float pdf_cosine_hemisphere(float cos_theta) { return cos_theta > 0.0f ? cos_theta * K_INV_PI : 0.0f; }

/* Uniform direction on the unit sphere; pdf = 1/(4 pi). */
KFN vec3 sample_uniform_sphere(vec2 u) {
    float z = 1.0f - 2.0f * u.x;
    float r = ksafe_sqrt(1.0f - z * z);
    /* phi = 2 pi u.y as k quarter turns (k = 4 u.y rounded) and a in [-pi/4, pi/4], by
     * ksincos_pi4 and selects: no libm call (sincosf was 2.3 % of the diffuse dragon's render,
     * whose environment NEE samples this) */
    float t = 4.0f * u.y;
    int k = (int)(t + 0.5f);
    float s, c;
    ksincos_pi4((t - (float)k) * (K_PI * 0.5f), &s, &c);
    float cp = (k & 1) ? s : c, sp = (k & 1) ? c : s;
    return v3(r * (((k + 1) & 2) ? -cp : cp), r * ((k & 2) ? -sp : sp), z);
}
KFN float pdf_uniform_sphere(void) { return K_INV_4PI; }

/* Uniform point on a triangle as barycentrics (b1, b2); b0 = 1 - b1 - b2. */
KFN vec2 sample_triangle_barycentric(vec2 u) {
    float su = sqrtf(u.x);
    return v2(1.0f - su, u.y * su);
}

/* Power heuristic with beta = 2 (Veach). */
KFN float mis_power(float pdf_a, float pdf_b) {
    float a = pdf_a * pdf_a, b = pdf_b * pdf_b;
    return a > 0.0f ? a / (a + b) : 0.0f;
}

#endif
