/* What every material header (materials/<stem>.h) shares: the sample record, the transport mode,
 * the lobe-flags word and the parameters a material is built from. A material kind is one header
 * that defines, for its stem (the second column of MATERIAL_KINDS in kernel/types.h):
 *   uint32_t <stem>_flags(const material *m)            BSDF_* lobe flags below
 *   vec3     <stem>_eval(m, albedo, wo, wi, mode)        f * |cos(wi)| of the non-delta lobes
 *   float    <stem>_pdf(m, wo, wi)                       solid-angle pdf of <stem>_sample's wi
 *   int      <stem>_sample(m, albedo, wo, u1, u2, mode, bs)   0: absorbed
 *   float    <stem>_albedo(m, albedo)                    roulette continuation probability: an
 *                                                        estimate of the reflectance in [0, 1]
 *   void     <stem>_from_params(material *m, const material_params *p)   host constructor's part
 * Directions are in the local shading frame (z = the shading normal, turned towards wo for
 * materials without BSDF_INTERIOR), both pointing away from the surface. bsdf.h dispatches to
 * them; docs/extending.md, "A material", is the recipe. */
#ifndef CAUSTIC_KERNEL_MATERIALS_LOBE_H
#define CAUSTIC_KERNEL_MATERIALS_LOBE_H

#include "../features.h"
#include "../microfacet.h"
#include "../sampling.h"

typedef struct bsdf_sample {
    vec3 wi;     /* local */
    vec3 weight; /* f * |cos| / pdf */
    float pdf;   /* solid angle; for delta lobes the discrete probability */
    int delta;
} bsdf_sample;

/* Which quantity a path carries: radiance (camera paths) or importance (light paths). They differ
 * only where the BSDF is not symmetric: refraction scales radiance by 1/eta^2, importance not. */
typedef enum transport_mode { TRANSPORT_RADIANCE = 0, TRANSPORT_IMPORTANCE = 1 } transport_mode;

/* The lobe-flags word of a material (material_flags in bsdf.h). A flag may depend on the
 * material's parameters (a conductor smoother than GGX_MIN_ALPHA is a mirror). */
enum bsdf_lobe_flags {
    BSDF_ALL_DELTA = 1u << 0,      /* every lobe is a delta: eval and pdf are 0, only sample scatters */
    BSDF_HAS_DELTA = 1u << 1,      /* some lobe is a delta (implied by BSDF_ALL_DELTA) */
    BSDF_TRANSMITS = 1u << 2,      /* some lobe sends light to the other side of the surface */
    BSDF_NON_LAMBERTIAN = 1u << 3, /* specular or glossy: VCM merges next to it (vcm.h) */
    BSDF_INTERIOR = 1u << 4        /* separates an inside from an outside (a dielectric): the shading
                                      frame is not flipped to face wo; without it both sides behave alike */
};
#define BSDF_DELTA (BSDF_ALL_DELTA | BSDF_HAS_DELTA)

/* The already-parsed values a material is built from (material_from_params, src/scene/material.c):
 * every reader fills the ones its format states over material_params_default(kind), and the
 * kind's <stem>_from_params takes the ones it uses. Colours are linear RGB. Scalars are doubles so
 * that a reader's double arithmetic (alpha = roughness^2) rounds to float once, as it always did. */
typedef struct material_params {
    vec3 rgb;           /* reflectance, F0 or tint */
    vec3 emission;      /* emitted radiance (any kind; nonzero makes the surfaces using it lights) */
    double roughness;   /* perceptual roughness in [0, 1] (GGX alpha = roughness^2, rounded once) */
    double ior;         /* index of refraction, inside / outside */
    double dispersion;  /* Dielectric, RoughGlass: Cauchy's B in um^2 (kernel/spectral.h; 0: none), `ior` at the
                           d line (587.6 nm) */
    double metallic;    /* [0, 1] */
    vec3 specular;      /* Phong lobe reflectance */
    vec3 transmittance; /* DiffuseTransmission: the colour through the surface (rgb reflects) */
    double exponent;    /* Phong exponent */
    int32_t two_sided;
    /* Maps, for any kind: indices into the scene's textures that the reader loaded, -1 for none.
     * A map >= 0 sets its MAP_* bit. */
    int32_t albedo_tex;   /* rgb times this texture */
    int32_t mr_tex;       /* MAP_METALLIC_ROUGHNESS: glTF's roughness in G, metallic in B */
    int32_t normal_tex;   /* MAP_NORMAL: tangent-space normal map, xy times normal_scale */
    int32_t emission_tex; /* MAP_EMISSION: emission times this texture */
    int32_t alpha_tex;    /* MAP_OPACITY: opacity times this texture's R */
    double normal_scale;  /* 1 */
    int32_t bump_tex;     /* MAP_BUMP (when there is no normal map): a height map, its channels' mean */
    double bump_scale;    /* 1: the height in scene units per unit of the map */
    double opacity;       /* 1 */
    double alpha_cutoff;  /* > 0: alpha cut-out where opacity < alpha_cutoff; 0: none */
    /* conductors: a complex index of refraction (eta + i k, RGB) where complex_ior is set */
    int32_t complex_ior;
    vec3 eta, k;
    /* coated (materials/coated.h): `ior` is the coat's, `roughness` the base's */
    int32_t coat_base;     /* COAT_BASE_* */
    double coat_roughness; /* perceptual, alpha = r^2 */
    vec3 coat_tint;        /* coat transmittance at normal incidence, there and back; 1: clear */
    double coat_weight;    /* the coat's presence in [0, 1] (glTF clearcoatFactor); 1 */
    /* PBR's layers (materials/pbr.h): KHR_materials_specular and KHR_materials_sheen */
    double spec_weight;     /* specularFactor in [0, 1]: scales the dielectric Fresnel (F0 and F90); 1 */
    vec3 spec_tint;         /* specularColorFactor (>= 0): the dielectric F0 is min(0.04 tint, 1); 1 */
    vec3 sheen;             /* sheenColorFactor in [0, 1]; 0: no sheen */
    double sheen_roughness; /* sheenRoughnessFactor in [0, 1] (Charlie's alpha = its square) */
} material_params;

/* Is m of kind K, a kind this kernel handles (KHAS, features.h)? A constant 0 where it does not,
 * so that the code for K folds away. */
#define KMAT_IS(m, K) (KHAS(KF_MAT(K)) && (m)->kind == (K))

#endif
