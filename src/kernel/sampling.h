/* Warps from the unit square to directions and shapes, each with its pdf. */
#ifndef CAUSTIC_KERNEL_SAMPLING_H
#define CAUSTIC_KERNEL_SAMPLING_H

#include "vec.h"

/* Concentric square-to-disk map (Shirley-Chiu): low distortion, keeps stratification. */
KFN vec2 sample_disk_concentric(vec2 u) {
    float ox = 2.0f * u.x - 1.0f, oy = 2.0f * u.y - 1.0f;
    if (ox == 0.0f && oy == 0.0f) return v2(0.0f, 0.0f);
    float r, theta;
    if (fabsf(ox) > fabsf(oy)) {
        r = ox;
        theta = (K_PI * 0.25f) * (oy / ox);
    } else {
        r = oy;
        theta = K_PI * 0.5f - (K_PI * 0.25f) * (ox / oy);
    }
    return v2(r * cosf(theta), r * sinf(theta));
}

/* Cosine-weighted hemisphere around +z; pdf = cos(theta)/pi. */
KFN vec3 sample_cosine_hemisphere(vec2 u) {
    vec2 d = sample_disk_concentric(u);
    float z = ksafe_sqrt(1.0f - d.x * d.x - d.y * d.y);
    return v3(d.x, d.y, z);
}
KFN float pdf_cosine_hemisphere(float cos_theta) { return cos_theta > 0.0f ? cos_theta * K_INV_PI : 0.0f; }

/* Uniform direction on the unit sphere; pdf = 1/(4 pi). */
KFN vec3 sample_uniform_sphere(vec2 u) {
    float z = 1.0f - 2.0f * u.x;
    float r = ksafe_sqrt(1.0f - z * z);
    float phi = 2.0f * K_PI * u.y;
    return v3(r * cosf(phi), r * sinf(phi), z);
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
