/* Scene features, and kernels compiled for a subset of them. A scene's feature mask says which
 * material kinds, light kinds, primitive kinds, textures, environment map and alpha cut-outs it
 * uses (kscene_features). The kernel tests a feature with KHAS(KF_...) before the code that
 * handles it; KERNEL_FEATURES, a compile-time constant (KF_ALL unless a translation unit defines
 * it first), then removes the code of every feature left out. The CPU and every GPU kernel but
 * the megakernels are compiled with all features; the CUDA megakernels once per row of
 * KERNEL_VARIANTS, and a renderer picks the first variant that covers its scene
 * (kernel_variant_for): a scene of diffuse surfaces under area lights runs a megakernel without
 * the glossy, glass and texture code (fewer instructions to fetch, fewer registers:
 * docs/performance-log.md, "megakernels by scene features"). A guard only removes code the scene
 * cannot reach, so a variant renders its scenes exactly as the full kernel does. */
#ifndef CAUSTIC_KERNEL_FEATURES_H
#define CAUSTIC_KERNEL_FEATURES_H

#include "types.h"

/* The mask's bit fields, in this order, each as wide as its kind list (types.h): one bit per
 * material kind, per light kind, per primitive kind, then four flags. The shifts follow from the
 * lists' counts, so a new kind moves the fields after it. */
enum kf_shift {
    KF_MAT_SHIFT = 0,
    KF_LIGHT_SHIFT = KF_MAT_SHIFT + MAT_KIND_COUNT,
    KF_PRIM_SHIFT = KF_LIGHT_SHIFT + LIGHT_KIND_COUNT,
    KF_FLAGS_SHIFT = KF_PRIM_SHIFT + PRIM_KIND_COUNT,
    KF_BITS = KF_FLAGS_SHIFT + 7
};
KSTATIC_ASSERT(KF_BITS + 1 <= 32, "kernel feature masks are 32 bits: one per material, light and primitive kind and 7 "
                                  "flags. To list more kinds, widen the masks to uint64_t in src/kernel/features.h");
#define KF_MAT(kind)   (1u << (KF_MAT_SHIFT + (uint32_t)(kind)))   /* material kinds */
#define KF_LIGHT(kind) (1u << (KF_LIGHT_SHIFT + (uint32_t)(kind))) /* light kinds */
#define KF_PRIM(kind)  (1u << (KF_PRIM_SHIFT + (uint32_t)(kind)))  /* primitive kinds */
#define KF_TEXTURES    (1u << (KF_FLAGS_SHIFT + 0))                /* a material reads a texture or map */
#define KF_ENV_MAP     (1u << (KF_FLAGS_SHIFT + 1))                /* the environment is an image */
#define KF_CUTOUTS     (1u << (KF_FLAGS_SHIFT + 2))                /* alpha-masked materials (has_cutouts) */
/* a conductor with a complex IOR (named metals, ETA/K: the exact conductor Fresnel): outside the
 * smaller variants, so that the opaque megakernel keeps Schlick's code only */
#define KF_COMPLEX_IOR (1u << (KF_FLAGS_SHIFT + 3))
/* NEE through a light tree (the scene has one: kscene.nlight_nodes, >= 64 finite lights under
 * --light-sampler auto): a kernel without it keeps the power cdf's pick alone (lights.h) and no
 * shading normal of the previous vertex (path_state.prev_n) */
#define KF_LIGHT_TREE  (1u << (KF_FLAGS_SHIFT + 4))
/* a procedural texture (TEX_NOISE, TEX_MARBLE, TEX_WOOD: texture.h): the Perlin noise, inlined at
 * every texture lookup, doubled the textured megakernel's code */
#define KF_PROCEDURAL  (1u << (KF_FLAGS_SHIFT + 5))
/* a bump map (MAP_BUMP, with KF_TEXTURES): the textured variant has it (Sponza's MTL bump maps),
 * the "all" variant not */
#define KF_BUMP        (1u << (KF_FLAGS_SHIFT + 6))
#define KF_ALL         ((uint32_t)(((uint64_t)1u << KF_BITS) - 1u))
/* Participating media (the scene has a medium: kscene.nmedia): the bit after the mask's fields,
 * outside KF_ALL, so that only a kernel that handles them has it; such a kernel defines
 * KERNEL_MEDIA 1 with it (kernel/medium.h, the path state's medium columns): the CPU's media
 * kernel (src/cpu/kernel_cpu_media.c) and the "media" megakernel variant. docs/extending.md,
 * "A medium". */
#define KF_MEDIA       (1u << KF_BITS)

#ifndef KERNEL_FEATURES
#define KERNEL_FEATURES KF_ALL
#endif
/* Whether this translation unit's kernel handles feature f (a constant: the branch it guards
 * folds away where it does not). */
#define KHAS(f) ((KERNEL_FEATURES & (f)) != 0u)

/* The megakernel variants, smallest first: X(NAME, name, features).
 *   diffuse   Lambertian surfaces and emitters, area lights and a constant environment,
 *             triangles and quads, no textures (the diffuse dragon)
 *   textured  that with textures and maps, bump maps included (Sponza)
 *   opaque    diffuse with mirrors, conductors and spheres (the Cornell box of scenes/cornell.json)
 *   all       glass, PBR, Phong, environment maps, cut-outs, point lights, and any mix the rows
 *             above do not cover, but none of KF_FULL_ONLY (rtow, cornell-glass)
 *   full      everything but media: also the layered and thin kinds (Coated, ThinDielectric,
 *             DiffuseTransmission, Interface), complex-IOR conductors, the light tree, procedural
 *             textures and bump maps (KF_FULL_ONLY), which more than doubled the "all" kernel's code
 *             and tripled its spills (docs/performance-log.md, "megakernels by scene features, again")
 *   media     everything and participating media (KERNEL_MEDIA 1: the path state's medium columns) */
#define KF_DIFFUSE                                                                                                     \
    (KF_MAT(MAT_DIFFUSE) | KF_MAT(MAT_EMITTER) | KF_LIGHT(LIGHT_AREA) | KF_PRIM(PRIM_TRIANGLE) | KF_PRIM(PRIM_QUAD))
#define KF_TEXTURED (KF_DIFFUSE | KF_TEXTURES | KF_BUMP)
#define KF_OPAQUE   (KF_DIFFUSE | KF_MAT(MAT_MIRROR) | KF_MAT(MAT_CONDUCTOR) | KF_PRIM(PRIM_SPHERE))
#define KF_FULL_ONLY                                                                                                   \
    (KF_MAT(MAT_COATED) | KF_MAT(MAT_THIN_DIELECTRIC) | KF_MAT(MAT_DIFFUSE_TRANSMISSION) | KF_MAT(MAT_INTERFACE) |     \
     KF_COMPLEX_IOR | KF_LIGHT_TREE | KF_PROCEDURAL | KF_BUMP)
#define KF_SURFACES (KF_ALL & ~KF_FULL_ONLY)
#define KERNEL_VARIANTS(X)                                                                                             \
    X(KV_DIFFUSE, "diffuse", KF_DIFFUSE)                                                                               \
    X(KV_TEXTURED, "textured", KF_TEXTURED)                                                                            \
    X(KV_OPAQUE, "opaque", KF_OPAQUE)                                                                                  \
    X(KV_ALL, "all", KF_SURFACES)                                                                                      \
    X(KV_FULL, "full", KF_ALL)                                                                                         \
    X(KV_MEDIA, "media", KF_ALL | KF_MEDIA)
#define KERNEL_VARIANT_ENUM_ROW(NAME, name, features) NAME,
typedef enum kernel_variant { KERNEL_VARIANTS(KERNEL_VARIANT_ENUM_ROW) KV_COUNT } kernel_variant;

KFN uint32_t kernel_variant_features(int v) {
#define KERNEL_VARIANT_FEATURES_ROW(NAME, name, features) features,
    const uint32_t f[KV_COUNT] = {KERNEL_VARIANTS(KERNEL_VARIANT_FEATURES_ROW)};
#undef KERNEL_VARIANT_FEATURES_ROW
    return f[v];
}

/* The features of material m (as a primitive uses it). */
KFN uint32_t material_features(const material *m) {
    uint32_t f = KF_MAT((uint32_t)m->kind);
    if (m->albedo_tex >= 0 || (m->maps & (MAP_METALLIC_ROUGHNESS | MAP_NORMAL | MAP_EMISSION | MAP_OPACITY | MAP_BUMP)))
        f |= KF_TEXTURES;
    if (m->alpha_cutoff > 0.0f) f |= KF_CUTOUTS;
    if (m->complex_ior) f |= KF_COMPLEX_IOR;
    if (m->maps & MAP_BUMP) f |= KF_BUMP;
    return f;
}

/* Is t one of the procedural textures (KF_PROCEDURAL)? */
KFN int texture_is_procedural(const texture *t) {
    return t->kind == TEX_NOISE || t->kind == TEX_MARBLE || t->kind == TEX_WOOD;
}

/* The primitive kinds scene s has (from its counts only, so a device kscene's copy on the host
 * answers too: the trace-only kernel's variants, TRACE_VARIANTS). */
KFN uint32_t kscene_prim_features(const kscene *s) {
    return (s->ntriangles ? KF_PRIM(PRIM_TRIANGLE) : 0u) | (s->nspheres ? KF_PRIM(PRIM_SPHERE) : 0u) |
           (s->nquads ? KF_PRIM(PRIM_QUAD) : 0u);
}

/* The features scene s uses: the kinds and maps of the materials its primitives reference (an
 * unused material costs nothing), its light kinds, primitive kinds, environment map and cut-outs.
 * Host arrays (the scene as loaded), or device ones read from the device. */
KFN uint32_t kscene_features(const kscene *s) {
    uint32_t f = kscene_prim_features(s), used = 0;
    /* materials by index, once each (a scene has few; the primitives many) */
    int32_t last = -1;
    for (uint32_t i = 0; i < s->ntriangles; ++i)
        if (s->triangles[i].material != last) {
            last = s->triangles[i].material;
            if (last >= 0) used |= material_features(&s->materials[last]);
        }
    for (uint32_t i = 0; i < s->nspheres; ++i) used |= material_features(&s->materials[s->spheres[i].material]);
    for (uint32_t i = 0; i < s->nquads; ++i) used |= material_features(&s->materials[s->quads[i].material]);
    f |= used;
    for (uint32_t i = 0; i < s->nlights; ++i) f |= KF_LIGHT((uint32_t)s->lights[i].kind);
    if (s->nlight_nodes) f |= KF_LIGHT_TREE;
    /* any procedural texture, used or not (a scene has few textures) */
    for (uint32_t i = 0; i < s->ntextures; ++i)
        if (texture_is_procedural(&s->textures[i])) f |= KF_PROCEDURAL;
    if (s->env_tex >= 0) f |= KF_ENV_MAP;
    if (s->has_cutouts) f |= KF_CUTOUTS;
    if (s->nmedia) f |= KF_MEDIA;
    return f;
}

/* The first variant whose features cover `features` (KV_MEDIA covers every scene). */
KFN int kernel_variant_for(uint32_t features) {
    for (int v = 0; v < KV_COUNT; ++v)
        if ((features & ~kernel_variant_features(v)) == 0u) return v;
    return KV_MEDIA;
}

KFN const char *kernel_variant_name(int v) {
#define KERNEL_VARIANT_NAME_ROW(NAME, name, features) name,
    const char *n[KV_COUNT] = {KERNEL_VARIANTS(KERNEL_VARIANT_NAME_ROW)};
#undef KERNEL_VARIANT_NAME_ROW
    return v >= 0 && v < KV_COUNT ? n[v] : "?";
}

#endif
