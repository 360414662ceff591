/* Host constructors of materials (material.h): common fields here, a kind's own parameters in
 * its <stem>_from_params (kernel/materials/<stem>.h), dispatched from the material list. */
#include "scene/material.h"

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

int material_metal_lookup(const char *name, vec3 *eta, vec3 *k, vec3 *f0_ref) {
    for (size_t i = 0; i < sizeof metal_ior_table / sizeof metal_ior_table[0]; ++i) {
        const metal_ior_row *r = &metal_ior_table[i];
        if (strcmp(r->name, name) != 0) continue;
        if (eta) *eta = v3(r->eta[0], r->eta[1], r->eta[2]);
        if (k) *k = v3(r->k[0], r->k[1], r->k[2]);
        if (f0_ref) *f0_ref = v3(r->f0_ref[0], r->f0_ref[1], r->f0_ref[2]);
        return 0;
    }
    return -1;
}
const char *material_metal_name(int i) {
    return i >= 0 && (size_t)i < sizeof metal_ior_table / sizeof metal_ior_table[0] ? metal_ior_table[i].name : NULL;
}

material material_default(material_kind kind) {
    material_params p = material_params_default(kind);
    return material_from_params(kind, &p);
}
