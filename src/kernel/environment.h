/* The environment: a constant colour, or a lat-long radiance map importance-sampled with a 2D
 * piecewise-constant distribution (a marginal cdf over rows, a conditional cdf per row) built
 * from texel luminance times sin(theta). Lat-long convention: +y is up; u = 0.5 +
 * atan2(d.x, -d.z) / 2pi (u = 0.5 looks down -z), v = theta / pi with v = 0 at the zenith; image
 * row 0 is the zenith row. Lookups are per texel (nearest), so the sampling density is exactly
 * proportional to what is integrated. */
#ifndef CAUSTIC_KERNEL_ENVIRONMENT_H
#define CAUSTIC_KERNEL_ENVIRONMENT_H

#include "sampling.h"
#include "texture.h"

KFN vec2 env_dir_to_uv(vec3 d) {
    float u = 0.5f + atan2f(d.x, -d.z) * K_INV_2PI;
    float v = acosf(kclamp(d.y, -1.0f, 1.0f)) * K_INV_PI;
    return v2(u - floorf(u), v);
}
KFN vec3 env_uv_to_dir(vec2 uv) {
    float phi = (uv.x - 0.5f) * 2.0f * K_PI, theta = uv.y * K_PI;
    float st = sinf(theta);
    return v3(st * sinf(phi), cosf(theta), -st * cosf(phi));
}
KFN void env_texel(const texture *t, vec2 uv, int *x, int *y) {
    *x = kmini((int)(uv.x * (float)t->width), t->width - 1);
    *y = kmini((int)(uv.y * (float)t->height), t->height - 1);
    *x = kmaxi(*x, 0);
    *y = kmaxi(*y, 0);
}

/* Radiance arriving from direction d (pointing away from the scene). */
KFN vec3 env_eval(const kscene *s, vec3 d) {
    if (!KHAS(KF_ENV_MAP) || s->env_tex < 0) return s->env_radiance;
    const texture *t = &s->textures[s->env_tex];
    int x, y;
    env_texel(t, env_dir_to_uv(d), &x, &y);
    return vmul(s->env_radiance, texel_fetch(s, t, x, y));
}

/* Solid-angle pdf of env_sample_dir for direction d (not including env_pmf). */
KFN float env_dir_pdf(const kscene *s, vec3 d) {
    if (!KHAS(KF_ENV_MAP) || s->env_tex < 0) return pdf_uniform_sphere();
    const texture *t = &s->textures[s->env_tex];
    vec2 uv = env_dir_to_uv(d);
    int x, y;
    env_texel(t, uv, &x, &y);
    const float *cols = s->env_cdf_cols + (uint32_t)y * (uint32_t)(t->width + 1);
    float mass = (s->env_cdf_rows[y + 1] - s->env_cdf_rows[y]) * (cols[x + 1] - cols[x]);
    /* sin(theta) from the direction itself: near the poles sin(acos(y)) rounds to 0 */
    float st = sqrtf(d.x * d.x + d.z * d.z);
    if (st <= 0.0f) return 0.0f;
    return mass * (float)t->width * (float)t->height / (2.0f * K_PI * K_PI * st);
}

KFN float cdf_sample_continuous(const float *cdf, uint32_t n, float u, uint32_t *index) {
    uint32_t lo = 0, hi = n;
    while (lo + 1 < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (cdf[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    *index = lo;
    float w = cdf[lo + 1] - cdf[lo];
    float f = w > 0.0f ? (u - cdf[lo]) / w : 0.5f;
    /* strictly inside the cell: an exact 0 would put a sample on the pole, where the pdf is 0 */
    return ((float)lo + kclamp(f, 5.9604645e-8f, 0.99999994f)) / (float)n;
}

/* Direction sampled proportionally to the map (uniform sphere for a constant colour). */
KFN vec3 env_sample_dir(const kscene *s, vec2 u) {
    if (!KHAS(KF_ENV_MAP) || s->env_tex < 0) return sample_uniform_sphere(u);
    const texture *t = &s->textures[s->env_tex];
    uint32_t row, col;
    float v = cdf_sample_continuous(s->env_cdf_rows, (uint32_t)t->height, u.y, &row);
    float uu = cdf_sample_continuous(s->env_cdf_cols + row * (uint32_t)(t->width + 1), (uint32_t)t->width, u.x, &col);
    return env_uv_to_dir(v2(uu, v));
}

#endif
