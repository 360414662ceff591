/* Texture lookups: constant, checker (in uv or world space), image (bilinear, linear RGB). */
#ifndef CAUSTIC_KERNEL_TEXTURE_H
#define CAUSTIC_KERNEL_TEXTURE_H

#include "types.h"

KFN vec3 texel_fetch(const kscene *s, const texture *t, int x, int y) {
    x = ((x % t->width) + t->width) % t->width;     /* wrap */
    y = ((y % t->height) + t->height) % t->height;
    const float *p = s->texels + t->offset + 3u * ((uint32_t)y * (uint32_t)t->width + (uint32_t)x);
    return v3(p[0], p[1], p[2]);
}

KFN vec3 texture_eval(const kscene *s, int32_t index, vec2 uv, vec3 p) {
    const texture *t = &s->textures[index];
    switch (t->kind) {
    case TEX_CHECKER: {
        float sum = t->uv_space ? floorf(uv.x * t->scale) + floorf(uv.y * t->scale)
                                : floorf(p.x * t->scale) + floorf(p.y * t->scale) + floorf(p.z * t->scale);
        return fmodf(fabsf(sum), 2.0f) < 0.5f ? t->a : t->b;
    }
    case TEX_IMAGE: {
        /* v = 0 is the bottom row of the image (OBJ convention); texel centres at +0.5 */
        float fx = uv.x * (float)t->width - 0.5f, fy = (1.0f - uv.y) * (float)t->height - 0.5f;
        if (!kfinite(fx) || !kfinite(fy)) return t->a;
        float x0 = floorf(fx), y0 = floorf(fy);
        float ax = fx - x0, ay = fy - y0;
        int ix = (int)fmodf(x0, (float)t->width), iy = (int)fmodf(y0, (float)t->height);
        vec3 c00 = texel_fetch(s, t, ix, iy), c10 = texel_fetch(s, t, ix + 1, iy);
        vec3 c01 = texel_fetch(s, t, ix, iy + 1), c11 = texel_fetch(s, t, ix + 1, iy + 1);
        return vlerp(vlerp(c00, c10, ax), vlerp(c01, c11, ax), ay);
    }
    default:
        return t->a;
    }
}

KFN vec3 material_albedo(const kscene *s, const material *m, vec2 uv, vec3 p) {
    return m->albedo_tex >= 0 ? vmul(m->albedo, texture_eval(s, m->albedo_tex, uv, p)) : m->albedo;
}

#endif
