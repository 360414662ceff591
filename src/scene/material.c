/* Host constructors of materials (material.h): common fields here, a kind's own parameters in
 * its <stem>_from_params (kernel/materials/<stem>.h), dispatched from the material list. */
#include "scene/material.h"

#include <math.h>
#include <string.h>

#include "scene/metal_ior_table.h"
#include "kernel/spectral.h"

double material_cauchy_b(double ior_d, double abbe) {
    return abbe > 0.0 ? cauchy_b_from_abbe((float)ior_d, (float)abbe) : 0.0;
}

material_params material_params_default(material_kind kind) {
    material_params p;
    memset(&p, 0, sizeof p);
    p.rgb = v3s(0.8f);
    p.emission = kind == MAT_EMITTER ? v3s(1.0f) : v3s(0.0f);
    p.roughness = 0.5;
    p.ior = 1.5;
    p.metallic = kind == MAT_CONDUCTOR ? 1.0 : 0.0;
    p.specular = v3s(0.0f);
    p.transmittance = v3s(0.25f); /* pbrt-v4's default (and reflectance 0.25) */
    p.exponent = 1.0;
    p.two_sided = 0;
    p.albedo_tex = p.mr_tex = p.normal_tex = p.emission_tex = p.alpha_tex = -1;
    p.normal_scale = 1.0;
    p.bump_tex = -1;
    p.bump_scale = 1.0;
    p.opacity = 1.0;
    p.alpha_cutoff = 0.0;
    p.complex_ior = 0;
    p.eta = v3s(1.0f);
    p.k = v3s(0.0f);
    p.coat_base = COAT_BASE_DIFFUSE;
    p.coat_roughness = 0.0;
    p.coat_tint = v3s(1.0f);
    p.coat_weight = 1.0;
    p.spec_weight = 1.0;
    p.spec_tint = v3s(1.0f);
    p.sheen = v3s(0.0f);
    p.sheen_roughness = 0.0;
    return p;
}

material material_from_params(material_kind kind, const material_params *p) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = (int32_t)kind;
    m.albedo = p->rgb;
    m.emission = p->emission;
    m.ior = 1.5f;
    m.two_sided = p->two_sided != 0;
    m.albedo_tex = p->albedo_tex >= 0 ? p->albedo_tex : -1;
    if (p->mr_tex >= 0) m.mr_tex = p->mr_tex, m.maps |= MAP_METALLIC_ROUGHNESS;
    if (p->normal_tex >= 0) m.normal_tex = p->normal_tex, m.maps |= MAP_NORMAL;
    if (p->emission_tex >= 0) m.emission_tex = p->emission_tex, m.maps |= MAP_EMISSION;
    if (p->alpha_tex >= 0) m.alpha_tex = p->alpha_tex, m.maps |= MAP_OPACITY;
    m.normal_scale = (float)p->normal_scale;
    if (p->normal_tex < 0 && p->bump_tex >= 0) /* one or the other: a normal map wins */
        m.normal_tex = p->bump_tex, m.maps |= MAP_BUMP, m.normal_scale = (float)p->bump_scale;
    m.opacity = (float)p->opacity;
    m.alpha_cutoff = (float)p->alpha_cutoff;
#define MATERIAL_FROM_PARAMS_CASE(K, stem, name, P)                                                                    \
    case K: stem##_from_params(&m, p); return m;
    switch (kind) {
        MATERIAL_KINDS(MATERIAL_FROM_PARAMS_CASE)
    case MAT_KIND_COUNT: break;
    }
#undef MATERIAL_FROM_PARAMS_CASE
    m.kind = MAT_DIFFUSE;
    return m;
}

static const metal_ior_row *metal_row(const char *name) {
    for (size_t i = 0; i < sizeof metal_ior_table / sizeof metal_ior_table[0]; ++i)
        if (!strcmp(metal_ior_table[i].name, name)) return &metal_ior_table[i];
    return NULL;
}
int material_metal_lookup(const char *name, vec3 *eta, vec3 *k, vec3 *f0_ref) {
    const metal_ior_row *r = metal_row(name);
    if (!r) return -1;
    if (eta) *eta = v3(r->eta[0], r->eta[1], r->eta[2]);
    if (k) *k = v3(r->k[0], r->k[1], r->k[2]);
    if (f0_ref) *f0_ref = v3(r->f0_ref[0], r->f0_ref[1], r->f0_ref[2]);
    return 0;
}
int material_metal_lookup_spectral(const char *name, vec3 *eta, vec3 *k, vec3 *f0_ref) {
    const metal_ior_row *r = metal_row(name);
    if (!r) return -1;
    if (eta) *eta = v3(r->eta_spec[0], r->eta_spec[1], r->eta_spec[2]);
    if (k) *k = v3(r->k_spec[0], r->k_spec[1], r->k_spec[2]);
    if (f0_ref) *f0_ref = v3(r->f0_ref[0], r->f0_ref[1], r->f0_ref[2]);
    return 0;
}
const char *material_metal_name(int i) {
    return i >= 0 && (size_t)i < sizeof metal_ior_table / sizeof metal_ior_table[0] ? metal_ior_table[i].name : NULL;
}

material material_default(material_kind kind) {
    material_params p = material_params_default(kind);
    return material_from_params(kind, &p);
}

float material_subsurface_alpha(float A) {
    A = fminf(fmaxf(A, 0.0f), 1.0f);
    return 1.0f - expf(A * (-5.09406f + A * (2.61188f - A * 4.31805f)));
}

void material_subsurface_medium(vec3 albedo, vec3 radius, float g, vec3 *sigma_a, vec3 *sigma_s) {
    float a[3] = {albedo.x, albedo.y, albedo.z}, d[3] = {radius.x, radius.y, radius.z}, sa[3], ss[3];
    for (int c = 0; c < 3; ++c) {
        float A = fminf(fmaxf(a[c], 0.0f), 1.0f);
        float s = 1.9f - A + 3.5f * (A - 0.8f) * (A - 0.8f);
        float st = 1.0f / fmaxf(d[c] * s, 1e-16f);
        float alpha = material_subsurface_alpha(A);
        ss[c] = alpha * st / (1.0f - g);
        sa[c] = st - alpha * st;
    }
    *sigma_a = v3(sa[0], sa[1], sa[2]);
    *sigma_s = v3(ss[0], ss[1], ss[2]);
}

/* Jensen et al. 2001, figure 5 (1/mm): name, sigma_s' (R, G, B), sigma_a (R, G, B). */
static const struct {
    const char *name;
    float sps[3], sa[3];
} measured_media[] = {
    {"Apple", {2.29f, 2.39f, 1.97f}, {0.0030f, 0.0034f, 0.046f}},
    {"Chicken1", {0.15f, 0.21f, 0.38f}, {0.015f, 0.077f, 0.19f}},
    {"Chicken2", {0.19f, 0.25f, 0.32f}, {0.018f, 0.088f, 0.20f}},
    {"Cream", {7.38f, 5.47f, 3.15f}, {0.0002f, 0.0028f, 0.0163f}},
    {"Ketchup", {0.18f, 0.07f, 0.03f}, {0.061f, 0.97f, 1.45f}},
    {"Marble", {2.19f, 2.62f, 3.00f}, {0.0021f, 0.0041f, 0.0071f}},
    {"Potato", {0.68f, 0.70f, 0.55f}, {0.0024f, 0.0090f, 0.12f}},
    {"Skimmilk", {0.70f, 1.22f, 1.90f}, {0.0014f, 0.0025f, 0.0142f}},
    {"Skin1", {0.74f, 0.88f, 1.01f}, {0.032f, 0.17f, 0.48f}},
    {"Skin2", {1.09f, 1.59f, 1.79f}, {0.013f, 0.070f, 0.145f}},
    {"Spectralon", {11.6f, 20.4f, 14.9f}, {0.0f, 0.0f, 0.0f}},
    {"Wholemilk", {2.55f, 3.21f, 3.77f}, {0.0011f, 0.0024f, 0.014f}},
};

static int same_name(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a,
             y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

int material_measured_medium(const char *name, vec3 *sigma_a, vec3 *sigma_s) {
    for (size_t i = 0; i < sizeof measured_media / sizeof measured_media[0]; ++i)
        if (same_name(measured_media[i].name, name)) {
            if (sigma_a) *sigma_a = v3(measured_media[i].sa[0], measured_media[i].sa[1], measured_media[i].sa[2]);
            if (sigma_s) *sigma_s = v3(measured_media[i].sps[0], measured_media[i].sps[1], measured_media[i].sps[2]);
            return 0;
        }
    return -1;
}
const char *material_measured_medium_name(int i) {
    return i >= 0 && (size_t)i < sizeof measured_media / sizeof measured_media[0] ? measured_media[i].name : NULL;
}
