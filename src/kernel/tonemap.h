/* Display transforms: scene-linear RGB (Rec.709 primaries) -> display-linear RGB in [0, 1], one
 * pixel at a time, in the kernel C subset so that the host (PNG output, previews) and later the
 * GPU (the viewer's frames) run the same code. The sRGB encoding and the 8-bit rounding follow
 * (image_quantize8); linear outputs (EXR, PFM) never pass through here.
 *
 *   clamp  the identity, cut at 1: what caustic always did (bright areas clip to white)
 *   aces   Stephen Hill's fit of the ACES reference rendering + sRGB output transforms (a matrix
 *          into the RRT's working space, a rational curve, a matrix back), with the input scaled
 *          by 1/0.6 as three.js does, so that middle grey lands near the other two
 *   agx    Troy Sobotka's AgX as Blender uses it by default: the colour is inset towards the
 *          achromatic axis, encoded as log2 over [-10, +6.5] EV around middle grey 0.18, put
 *          through Jed Smith's tunable sigmoid (pivot at middle grey, slope 2.4, toe and shoulder
 *          powers 1.5, passing through (0,0) and (1,1)) whose output is display-encoded with
 *          power 2.4, decoded and outset back. Middle grey stays 0.18; greys stay grey.
 *
 * Exposure is a factor 2^EV applied to the scene-linear value before the curve. */
#ifndef CAUSTIC_KERNEL_TONEMAP_H
#define CAUSTIC_KERNEL_TONEMAP_H

#include "kernel/compat.h"

#define TONEMAP_CLAMP 0
#define TONEMAP_ACES  1
#define TONEMAP_AGX   2
#define TONEMAP_COUNT 3

/* out = M v, M given row by row. (The matrices are literals at the call sites, not constant
 * arrays: a __constant__ array in a header would be defined once per CUDA translation unit.) */
KFN void tonemap_mat3(float m00, float m01, float m02, float m10, float m11, float m12, float m20, float m21, float m22,
                      const float *v, float *out) {
    float r = m00 * v[0] + m01 * v[1] + m02 * v[2];
    float g = m10 * v[0] + m11 * v[1] + m12 * v[2];
    float b = m20 * v[0] + m21 * v[1] + m22 * v[2];
    out[0] = r;
    out[1] = g;
    out[2] = b;
}

/* ---- ACES (Hill's fit) -------------------------------------------------------------------- */
#define TONEMAP_ACES_PRESCALE (1.0f / 0.6f)

/* the rational fit of RRT + ODT, per channel */
KFN float tonemap_aces_curve(float v) {
    float a = v * (v + 0.0245786f) - 0.000090537f;
    float b = v * (0.983729f * v + 0.4329510f) + 0.238081f;
    return a / b;
}

KFN void tonemap_aces(const float *in, float *out) {
    float s[3], v[3];
    s[0] = in[0] * TONEMAP_ACES_PRESCALE;
    s[1] = in[1] * TONEMAP_ACES_PRESCALE;
    s[2] = in[2] * TONEMAP_ACES_PRESCALE;
    /* sRGB -> the RRT's working space with its saturation step folded in */
    tonemap_mat3(0.59719f, 0.35458f, 0.04823f, 0.07600f, 0.90834f, 0.01566f, 0.02840f, 0.13383f, 0.83777f, s, v);
    v[0] = tonemap_aces_curve(v[0]);
    v[1] = tonemap_aces_curve(v[1]);
    v[2] = tonemap_aces_curve(v[2]);
    /* ... and back to sRGB (the ODT's saturation, XYZ, D60 -> D65) */
    tonemap_mat3(1.60475f, -0.53108f, -0.07367f, -0.10208f, 1.10813f, -0.00605f, -0.00327f, -0.07276f, 1.07602f, v,
                 out);
    out[0] = kclamp(out[0], 0.0f, 1.0f);
    out[1] = kclamp(out[1], 0.0f, 1.0f);
    out[2] = kclamp(out[2], 0.0f, 1.0f);
}

/* ---- AgX ----------------------------------------------------------------------------------- */
#define TONEMAP_AGX_EV_MIN         (-10.0f) /* stops below middle grey mapped to 0 */
#define TONEMAP_AGX_EV_MAX         6.5f     /* stops above middle grey mapped to 1 */
#define TONEMAP_AGX_GREY           0.18f
#define TONEMAP_AGX_SLOPE          2.4f /* the sigmoid's slope at the pivot */
#define TONEMAP_AGX_TOE_POWER      1.5f
#define TONEMAP_AGX_SHOULDER_POWER 1.5f
#define TONEMAP_AGX_DISPLAY_POWER  2.4f /* the curve's output is display-encoded with this power */

/* The tunable sigmoid's half on one side of the pivot: g(t) = t / (1 + t^p)^(1/p) scaled so that
 * it has slope `slope` at the pivot and covers dy over dx (from the pivot to (0,0) or (1,1)):
 *   dy = slope dx / (1 + (slope dx / scale)^p)^(1/p)  =>  scale = slope dx / ((slope dx / dy)^p - 1)^(1/p).
 * Needs slope dx > dy (the curve is steeper at the pivot than the chord), true for AgX's values. */
KFN float tonemap_agx_half(float t, float dx, float dy, float slope, float p) {
    float scale = slope * dx / powf(powf(slope * dx / dy, p) - 1.0f, 1.0f / p);
    float u = slope * t / scale;
    return scale * u / powf(1.0f + powf(u, p), 1.0f / p);
}

/* log-encoded x in [0, 1] -> display-encoded y in [0, 1], through (0,0), the pivot and (1,1) */
KFN float tonemap_agx_curve(float x) {
    const float xp = -TONEMAP_AGX_EV_MIN / (TONEMAP_AGX_EV_MAX - TONEMAP_AGX_EV_MIN);
    const float yp = powf(TONEMAP_AGX_GREY, 1.0f / TONEMAP_AGX_DISPLAY_POWER);
    x = kclamp(x, 0.0f, 1.0f);
    if (x < xp) return yp - tonemap_agx_half(xp - x, xp, yp, TONEMAP_AGX_SLOPE, TONEMAP_AGX_TOE_POWER);
    return yp + tonemap_agx_half(x - xp, 1.0f - xp, 1.0f - yp, TONEMAP_AGX_SLOPE, TONEMAP_AGX_SHOULDER_POWER);
}

/* scene-linear value -> AgX's log encoding in [0, 1] */
KFN float tonemap_agx_log(float v) {
    float ev = log2f(kmax(v, 1e-10f) / TONEMAP_AGX_GREY);
    return kclamp((ev - TONEMAP_AGX_EV_MIN) / (TONEMAP_AGX_EV_MAX - TONEMAP_AGX_EV_MIN), 0.0f, 1.0f);
}

KFN void tonemap_agx(const float *in, float *out) {
    float v[3];
    /* SB2383's inset for Rec.709 input (rows sum to 1 within 1.4e-4) */
    tonemap_mat3(0.842479062253094f, 0.0784335999999992f, 0.0792237451477643f, 0.0423282422610123f, 0.878468636469772f,
                 0.0791661274605434f, 0.0423756549057051f, 0.0784336f, 0.879142973793104f, in, v);
    for (int c = 0; c < 3; ++c) v[c] = powf(tonemap_agx_curve(tonemap_agx_log(v[c])), TONEMAP_AGX_DISPLAY_POWER);
    /* the outset: the inset's inverse */
    tonemap_mat3(1.1968790051f, -0.0980208811f, -0.0990297441f, -0.0528968518f, 1.1519031299f, -0.0989611768f,
                 -0.0529716355f, -0.0980434501f, 1.1510736726f, v, out);
    out[0] = kclamp(out[0], 0.0f, 1.0f);
    out[1] = kclamp(out[1], 0.0f, 1.0f);
    out[2] = kclamp(out[2], 0.0f, 1.0f);
}

/* One pixel: scene-linear in[3] times `scale` (2^EV) -> display-linear out[3] in [0, 1].
 * NaN and negative components count as 0. in and out may be the same array. */
KFN void tonemap_pixel(int op, float scale, const float *in, float *out) {
    float s[3];
    for (int c = 0; c < 3; ++c) {
        float v = in[c] * scale;
        s[c] = v > 0.0f ? kmin(v, 1e18f) : 0.0f; /* NaN -> 0; +inf -> finite for ACES's v^2 */
    }
    if (op == TONEMAP_ACES)
        tonemap_aces(s, out);
    else if (op == TONEMAP_AGX)
        tonemap_agx(s, out);
    else {
        out[0] = kmin(s[0], 1.0f);
        out[1] = kmin(s[1], 1.0f);
        out[2] = kmin(s[2], 1.0f);
    }
}

#endif
