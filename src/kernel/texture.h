/* Texture lookups: constant, checker (in uv or world space), image (bilinear, linear RGB). */
#ifndef CAUSTIC_KERNEL_TEXTURE_H
#define CAUSTIC_KERNEL_TEXTURE_H

#include "features.h"

/* Texel index i of an axis of n texels under a wrap mode (glTF sampler wrapS/wrapT). */
KFN int texel_wrap(int i, int n, int mode) {
    if (mode == TEX_WRAP_CLAMP) return i < 0 ? 0 : (i >= n ? n - 1 : i);
    if (mode == TEX_WRAP_MIRROR) {
        int p = ((i % (2 * n)) + 2 * n) % (2 * n);
        return p < n ? p : 2 * n - 1 - p;
    }
    int r = i % n; /* one integer division: a variable divisor costs ~20 instructions on the GPU */
    return r < 0 ? r + n : r;
}
/* The texel at (x, y), both already wrapped into the image. */
KFN vec3 texel_at(const kscene *s, const texture *t, int x, int y) {
    uint32_t i = t->offset + 3u * ((uint32_t)y * (uint32_t)t->width + (uint32_t)x);
    if (t->texel8) { /* one texture path for both precisions: 8-bit codes decoded here */
        const uint8_t *q = s->texels8 + i;
        const float *lut = s->texel8_lut + 256u * (uint32_t)(t->texel8 - TEXEL8_SRGB);
        return v3(lut[q[0]], lut[q[1]], lut[q[2]]);
    }
    const float *p = s->texels + i;
    return v3(p[0], p[1], p[2]);
}
KFN vec3 texel_fetch(const kscene *s, const texture *t, int x, int y) {
    return texel_at(s, t, texel_wrap(x, t->width, t->wrap_u), texel_wrap(y, t->height, t->wrap_v));
}

KFN vec3 texture_eval(const kscene *s, int32_t index, vec2 uv, vec3 p) {
    const texture *t = &s->textures[index];
    switch ((texture_kind)t->kind) {
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
        /* each column and row wrapped once (not once per texel: 4 wraps, not 8) */
        int xa = texel_wrap(ix, t->width, t->wrap_u), xb = texel_wrap(ix + 1, t->width, t->wrap_u);
        int ya = texel_wrap(iy, t->height, t->wrap_v), yb = texel_wrap(iy + 1, t->height, t->wrap_v);
        vec3 c00 = texel_at(s, t, xa, ya), c10 = texel_at(s, t, xb, ya);
        vec3 c01 = texel_at(s, t, xa, yb), c11 = texel_at(s, t, xb, yb);
        return vlerp(vlerp(c00, c10, ax), vlerp(c01, c11, ax), ay);
    }
    case TEX_CONSTANT: break;
    }
    return t->a;
}

KFN vec3 material_albedo(const kscene *s, const material *m, vec2 uv, vec3 p) {
    return KHAS(KF_TEXTURES) && m->albedo_tex >= 0 ? vmul(m->albedo, texture_eval(s, m->albedo_tex, uv, p)) : m->albedo;
}

/* The material with its scalar maps applied at a point: roughness and metallic from the
 * metallic-roughness map (glTF: roughness in G, metallic in B). The colour stays a separate
 * argument of the BSDF functions (material_albedo). */
KFN material material_at(const kscene *s, const material *m, vec2 uv, vec3 p) {
    material r = *m;
    if (KHAS(KF_TEXTURES) && (m->maps & MAP_METALLIC_ROUGHNESS)) {
        vec3 t = texture_eval(s, m->mr_tex, uv, p);
        r.alpha = m->alpha * t.y * t.y; /* alpha = roughness^2 */
        r.metallic = m->metallic * t.z;
    }
    return r;
}

/* The parameters of a material that maps drive (material_at sets them at a point): a stored path
 * vertex (VCM's light vertices and merge queries, vcm.h) keeps these and the material's index
 * instead of the whole material. A new mapped parameter is a field here, read in
 * material_textured_of and written back in material_apply_textured; test_vcm's vertex-record
 * test compares every byte of the material rebuilt from the record with material_at's. */
typedef struct material_textured {
    float alpha;
    float metallic;
} material_textured;
/* The mapped parameters of `at`, a result of material_at. */
KFN material_textured material_textured_of(const material *at) {
    material_textured t;
    t.alpha = at->alpha;
    t.metallic = at->metallic;
    return t;
}
/* m with the mapped parameters t in place of its own: material_at's result again. */
KFN material material_apply_textured(const material *m, material_textured t) {
    material r = *m;
    r.alpha = t.alpha;
    r.metallic = t.metallic;
    return r;
}

/* A sphere's (u, v) at object-space point po where its material reads a texture or map, else
 * (0, 0): the two inverse trigonometric calls are work only a texture needs. */
KFN vec2 sphere_uv(const kscene *s, int32_t material_index, vec3 po) {
    if (!KHAS(KF_TEXTURES) || !(material_features(&s->materials[material_index]) & KF_TEXTURES)) return v2(0.0f, 0.0f);
    vec3 dir = vnorm(po);
    return v2(0.5f + atan2f(dir.z, dir.x) * K_INV_2PI, acosf(kclamp(dir.y, -1.0f, 1.0f)) * K_INV_PI);
}

/* Emitted radiance of a material at a point (before the one-sided test). */
KFN vec3 material_emission(const kscene *s, const material *m, vec2 uv, vec3 p) {
    return KHAS(KF_TEXTURES) && (m->maps & MAP_EMISSION) ? vmul(m->emission, texture_eval(s, m->emission_tex, uv, p))
                                                         : m->emission;
}

/* Is the surface cut out (not there) at this point? Alpha masks of glTF materials. */
KFN int material_cut_out(const kscene *s, const material *m, vec2 uv, vec3 p) {
    if (!KHAS(KF_CUTOUTS) || !(m->alpha_cutoff > 0.0f)) return 0;
    float a = m->opacity;
    if (KHAS(KF_TEXTURES) && (m->maps & MAP_OPACITY)) a *= texture_eval(s, m->alpha_tex, uv, p).x;
    return a < m->alpha_cutoff;
}

#endif
