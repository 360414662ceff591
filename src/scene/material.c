/* Host constructors of materials (material.h): common fields here, a kind's own parameters in
 * its <stem>_from_params (kernel/materials/<stem>.h), dispatched from the material list. */
#include "scene/material.h"

#include <string.h>

material_params material_params_default(material_kind kind) {
    material_params p;
    memset(&p, 0, sizeof p);
    p.rgb = v3s(0.8f);
    p.emission = kind == MAT_EMITTER ? v3s(1.0f) : v3s(0.0f);
    p.roughness = 0.5;
    p.ior = 1.5;
    p.metallic = kind == MAT_CONDUCTOR ? 1.0 : 0.0;
    p.specular = v3s(0.0f);
    p.exponent = 1.0;
    p.two_sided = 0;
    return p;
}

material material_from_params(material_kind kind, const material_params *p) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = (int32_t)kind;
    m.albedo_tex = -1;
    m.albedo = p->rgb;
    m.emission = p->emission;
    m.ior = 1.5f;
    m.two_sided = p->two_sided != 0;
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

material material_default(material_kind kind) {
    material_params p = material_params_default(kind);
    return material_from_params(kind, &p);
}
