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

/* The four texels around uv of image texture t and the weights between them (bilinear
 * filtering); 0 where uv is not finite. */
typedef struct texel_quad {
    vec3 c00, c10, c01, c11; /* c10: one texel right (+u), c01: one texel down (-v) */
    float ax, ay;
} texel_quad;
KFN int texel_quad_at(const kscene *s, const texture *t, vec2 uv, texel_quad *q) {
    /* v = 0 is the bottom row of the image (OBJ convention); texel centres at +0.5 */
    float fx = uv.x * (float)t->width - 0.5f, fy = (1.0f - uv.y) * (float)t->height - 0.5f;
    if (!kfinite(fx) || !kfinite(fy)) return 0;
    float x0 = floorf(fx), y0 = floorf(fy);
    q->ax = fx - x0;
    q->ay = fy - y0;
    int ix = (int)fmodf(x0, (float)t->width), iy = (int)fmodf(y0, (float)t->height);
    /* each column and row wrapped once (not once per texel: 4 wraps, not 8) */
    int xa = texel_wrap(ix, t->width, t->wrap_u), xb = texel_wrap(ix + 1, t->width, t->wrap_u);
    int ya = texel_wrap(iy, t->height, t->wrap_v), yb = texel_wrap(iy + 1, t->height, t->wrap_v);
    q->c00 = texel_at(s, t, xa, ya);
    q->c10 = texel_at(s, t, xb, ya);
    q->c01 = texel_at(s, t, xa, yb);
    q->c11 = texel_at(s, t, xb, yb);
    return 1;
}

/* ---- the Perlin-noise family (Perlin 2002, "Improving Noise"): gradients picked by a hash of the
 * lattice point instead of a permutation table (no table to upload; the same on CPU and GPU) */
KFN uint32_t noise_hash(int32_t x, int32_t y, int32_t z) {
    uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)y * 0xd8163841u ^ (uint32_t)z * 0xcb1ab31fu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    return h ^ (h >> 16);
}
/* Perlin's twelve edge gradients (and four repeats), dotted with (x, y, z). */
KFN float noise_grad(uint32_t h, float x, float y, float z) {
    uint32_t k = h & 15u;
    float u = k < 8u ? x : y, v = k < 4u ? y : (k == 12u || k == 14u ? x : z);
    return ((k & 1u) ? -u : u) + ((k & 2u) ? -v : v);
}
KFN float noise_fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
KFN float noise_lerp(float a, float b, float t) { return a + (b - a) * t; }
/* Gradient noise in about [-1, 1], 0 at lattice points. */
KFN float perlin_noise(vec3 p) {
    float fx = floorf(p.x), fy = floorf(p.y), fz = floorf(p.z);
    int32_t x = (int32_t)fx, y = (int32_t)fy, z = (int32_t)fz;
    float dx = p.x - fx, dy = p.y - fy, dz = p.z - fz;
    float u = noise_fade(dx), v = noise_fade(dy), w = noise_fade(dz);
    float c[2][2];
    for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 2; ++k)
            c[j][k] =
                noise_lerp(noise_grad(noise_hash(x, y + j, z + k), dx, dy - (float)j, dz - (float)k),
                           noise_grad(noise_hash(x + 1, y + j, z + k), dx - 1.0f, dy - (float)j, dz - (float)k), u);
    return noise_lerp(noise_lerp(c[0][0], c[1][0], v), noise_lerp(c[0][1], c[1][1], v), w);
}
/* Sums of octaves, each twice the frequency and half the amplitude of the last: fbm of the
 * noise (about [-1, 1]) and turbulence of its absolute value (about [0, 1]). */
KFN float noise_octaves(vec3 p, int32_t octaves, int absolute) {
    float sum = 0.0f, amp = 1.0f, norm = 0.0f;
    int32_t n = octaves < 1 ? 1 : (octaves > 16 ? 16 : octaves);
    for (int32_t i = 0; i < n; ++i) {
        float v = perlin_noise(p);
        sum += amp * (absolute ? fabsf(v) : v);
        norm += amp;
        amp *= 0.5f;
        p = vscale(p, 2.0f);
    }
    return sum / norm;
}
/* The blend between a and b of a procedural texture at q (the point, scaled): noise (fbm), marble
 * (a sine of x disturbed by turbulence: veins) and wood (rings about the y axis, disturbed). One
 * function on the GPU (KFN_COLD): inlined, the noise took half of the textured megakernel's code. */
KFN_COLD float procedural_blend(int32_t kind, vec3 q, int32_t octaves) {
    if (kind == TEX_NOISE) return kclamp(0.5f + 0.5f * noise_octaves(q, octaves, 0), 0.0f, 1.0f);
    if (kind == TEX_MARBLE) return 0.5f + 0.5f * sinf(q.x + 8.0f * noise_octaves(q, octaves, 1));
    float r = sqrtf(q.x * q.x + q.z * q.z) + 0.6f * noise_octaves(q, octaves, 0);
    return r - floorf(r); /* wood */
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
        texel_quad q;
        if (!texel_quad_at(s, t, uv, &q)) return t->a;
        return vlerp(vlerp(q.c00, q.c10, q.ax), vlerp(q.c01, q.c11, q.ax), q.ay);
    }
    case TEX_NOISE:
    case TEX_MARBLE:
    case TEX_WOOD: {
        if (!KHAS(KF_PROCEDURAL)) break; /* a kernel without them never gets here (features.h) */
        vec3 q = t->uv_space ? v3(uv.x * t->scale, uv.y * t->scale, 0.0f) : vscale(p, t->scale);
        if (!(fabsf(q.x) < 1e7f && fabsf(q.y) < 1e7f && fabsf(q.z) < 1e7f)) return t->a; /* NaN too */
        return vlerp(t->a, t->b, procedural_blend(t->kind, q, t->octaves));
    }
    case TEX_CONSTANT: break;
    }
    return t->a;
}

/* The gradient in uv (d/du, d/dv) of a height texture: the mean of its channels. Image textures:
 * the exact gradient of their bilinear filtering (as Mitsuba's bitmap eval_1_grad); constant and
 * checker textures are flat almost everywhere (0). */
KFN vec2 texture_height_grad(const kscene *s, int32_t index, vec2 uv) {
    const texture *t = &s->textures[index];
    texel_quad q;
    if (t->kind != TEX_IMAGE || !texel_quad_at(s, t, uv, &q)) return v2(0.0f, 0.0f);
    vec3 dx = vlerp(vsub(q.c10, q.c00), vsub(q.c11, q.c01), q.ay);        /* per texel along +x */
    vec3 dy = vsub(vlerp(q.c01, q.c11, q.ax), vlerp(q.c00, q.c10, q.ax)); /* per texel along +y (-v) */
    const float third = 1.0f / 3.0f;
    return v2((dx.x + dx.y + dx.z) * third * (float)t->width, -(dy.x + dy.y + dy.z) * third * (float)t->height);
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
