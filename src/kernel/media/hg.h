/* The Henyey-Greenstein phase function (isotropic at g = 0), in terms of the propagation
 * directions: d_in the direction the light travelled before the scattering, d_out after it (both
 * unit), cos_t = dot(d_in, d_out); g > 0 scatters forward. It integrates to 1 over the sphere and
 * is sampled exactly, so a phase sample's weight is 1. Kernel code (CPU and GPU). */
#ifndef CAUSTIC_KERNEL_MEDIA_HG_H
#define CAUSTIC_KERNEL_MEDIA_HG_H

#include "../vec.h"

/* Below this |g| the isotropic formulas are used (the inversion divides by g). */
#define HG_ISOTROPIC_EPS 1e-3f

KFN float hg_eval_cos(float g, float cos_t) {
    float denom = 1.0f + g * g - 2.0f * g * cos_t;
    return (1.0f - g * g) / (4.0f * K_PI * denom * sqrtf(kmax(denom, 1e-12f)));
}
/* The phase function's value, which is also its sampling pdf (per steradian). */
KFN float hg_eval(float g, vec3 d_in, vec3 d_out) { return hg_eval_cos(g, vdot(d_in, d_out)); }
KFN float hg_pdf(float g, vec3 d_in, vec3 d_out) { return hg_eval(g, d_in, d_out); }

/* The cosine to d_in of a sample (inversion of the HG cdf), u in [0, 1). */
KFN float hg_sample_cos(float g, float u) {
    if (fabsf(g) < HG_ISOTROPIC_EPS) return 1.0f - 2.0f * u;
    float s = (1.0f - g * g) / (1.0f - g + 2.0f * g * u);
    return kclamp((1.0f + g * g - s * s) / (2.0f * g), -1.0f, 1.0f);
}
/* A direction after scattering d_in, distributed as hg_eval(g, d_in, .). */
KFN vec3 hg_sample(float g, vec3 d_in, vec2 u) {
    float c = hg_sample_cos(g, u.x);
    float s = ksafe_sqrt(1.0f - c * c);
    float phi = 2.0f * K_PI * u.y;
    frame f = frame_from_normal(d_in);
    return frame_to_world(f, v3(s * cosf(phi), s * sinf(phi), c));
}

#endif
