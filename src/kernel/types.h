/* The scene as the kernel sees it: flat arrays with indices, no pointers between elements, so
 * the same layout uploads to the GPU unchanged. Built by src/scene, read by every backend. */
#ifndef CAUSTIC_KERNEL_TYPES_H
#define CAUSTIC_KERNEL_TYPES_H

#include "vec.h"

/* ---- primitives ------------------------------------------------------------------------
 * One row per primitive kind: X(KIND, name). The enum follows the rows' order; the name is the
 * kind's in messages (prim_kind_name). Adding a kind: a row here, its array in KSCENE_ARRAYS, its
 * cases in intersect.h, lights.h, bvh_traverse.h and hit_material_kind (integrator_pt.h); those
 * switches name every kind and PRIM_KIND_COUNT (no `default:`), so -Werror=switch names each
 * switch a new kind must join.
 * A primitive id packs its kind in the top 2 bits and its index in that kind's array. */
#define PRIM_KINDS(X)                                                                                                  \
    X(PRIM_TRIANGLE, "triangle")                                                                                       \
    X(PRIM_SPHERE, "sphere")                                                                                           \
    X(PRIM_QUAD, "quad")
#define PRIM_ENUM_ROW(kind, name) kind,
typedef enum prim_kind { PRIM_KINDS(PRIM_ENUM_ROW) PRIM_KIND_COUNT } prim_kind;
#define PRIM_KIND_SHIFT 30u
#define PRIM_INDEX_MASK 0x3fffffffu
#define PRIM_NONE       0xffffffffu
KSTATIC_ASSERT(PRIM_KIND_COUNT <= (1 << (32 - PRIM_KIND_SHIFT)), "a primitive id has 2 bits for the kind");
KFN uint32_t prim_id(int kind, uint32_t index) { return ((uint32_t)kind << PRIM_KIND_SHIFT) | index; }
KFN prim_kind prim_id_kind(uint32_t id) { return (prim_kind)(id >> PRIM_KIND_SHIFT); }
KFN uint32_t prim_id_index(uint32_t id) { return id & PRIM_INDEX_MASK; }

/* Triangle: indices into the shared vertex arrays. Normals/UVs are optional per vertex. */
typedef struct triangle {
    uint32_t v[3];
    int32_t material;
} triangle;

/* Sphere of radius 0.5 at the origin under an affine transform (an ellipsoid in general), as
 * the CIS 5650 scene format defines it. `area` is the world-space surface area. */
typedef struct sphere {
    xform to_world, to_object;
    float area;
    int32_t material;
} sphere;

/* Parallelogram p = o + s*u + t*v, s,t in [0,1]; emits/faces along normalize(u x v). su and sv
 * give a point's (s, t) = (dot(p - o, su), dot(p - o, sv)): v x N / |N|^2 and N x u / |N|^2 with
 * N = u x v, set by scene_add_quad so that the ray test needs no cross product and one division. */
typedef struct quad {
    vec3 o, u, v, n;
    vec3 su, sv;
    int32_t material;
} quad;

/* ---- textures --------------------------------------------------------------------------- */
/* TEX_NOISE, TEX_MARBLE, TEX_WOOD: the Perlin-noise family of the course's procedural materials
 * (kernel/texture.h), blending a and b; in world space or in uv like the checker. */
typedef enum texture_kind {
    TEX_CONSTANT = 0,
    TEX_CHECKER = 1,
    TEX_IMAGE = 2,
    TEX_NOISE = 3,
    TEX_MARBLE = 4,
    TEX_WOOD = 5
} texture_kind;
typedef struct texture {
    int32_t kind;
    vec3 a, b;        /* constant colour / checker and procedural colours */
    float scale;      /* checker cells, procedural features per unit (uv or world, see uv_space) */
    int32_t uv_space; /* checker, procedural: 1 = in uv, 0 = in world position */
    int32_t octaves;  /* procedural: octaves of noise summed (1 to 16) */
    int32_t width, height;
    uint32_t offset;        /* first texel: in kscene.texels (linear RGB, 3 floats each), or for 8-bit
                           textures (texel8) in kscene.texels8 (3 bytes each) */
    int32_t wrap_u, wrap_v; /* image: TEX_WRAP_* (0, the default, repeats) */
    int32_t texel8;         /* image: TEXEL8_NONE (float texels), or the encoding of the source's 8-bit
                           codes, kept as they are and decoded on lookup through kscene.texel8_lut */
} texture;
enum texture_wrap { TEX_WRAP_REPEAT = 0, TEX_WRAP_CLAMP = 1, TEX_WRAP_MIRROR = 2 };
/* 8-bit texels: sRGB colour (PNG, JPEG, glTF base colour and emission) or linear data (glTF
 * metallic-roughness, normal and alpha maps: code / 255). texel8_lut holds 256 decoded values per
 * encoding, in this order. */
enum texel8_encoding { TEXEL8_NONE = 0, TEXEL8_SRGB = 1, TEXEL8_LINEAR = 2 };
#define TEXEL8_LUT_SIZE 512u

/* ---- materials -------------------------------------------------------------------------- */
/* One row per material kind: X(KIND, stem, name, PUBLIC). The enum (values in row order), the
 * BSDF dispatch (bsdf.h calls <stem>_eval, _pdf, _sample, _albedo, _flags of
 * kernel/materials/<stem>.h), the feature bits (features.h), the GPU wavefront's shade queues (one
 * per kind, MAT_KIND_COUNT), the host constructor (src/scene/material.c), the BSDF conformance
 * test (tests/test_bsdf_conformance.c) and the check of the public enum (src/api/scene_build.c)
 * all follow this list; docs/extending.md, "A material", is the recipe for a new kind.
 *   stem    the kind's header materials/<stem>.h and the prefix of its functions
 *   name    its TYPE in caustic's scene format (the JSON reader also takes dialect spellings)
 *   PUBLIC  its caustic_material_kind in include/caustic.h: CAUSTIC_MATERIAL_<PUBLIC> */
#define MATERIAL_KINDS(X)                                                                                              \
    X(MAT_DIFFUSE, diffuse, "Diffuse", DIFFUSE)                /* Lambertian */                                        \
    X(MAT_MIRROR, mirror, "Mirror", MIRROR)                    /* perfect specular reflection */                       \
    X(MAT_CONDUCTOR, conductor, "Conductor", CONDUCTOR)        /* rough GGX conductor, Schlick F0 = colour */          \
    X(MAT_DIELECTRIC, dielectric, "Dielectric", GLASS)         /* smooth glass: Fresnel reflection/refraction */       \
    X(MAT_EMITTER, emitter, "Emitter", EMITTER)                /* no reflection (pure emitters) */                     \
    X(MAT_PHONG, phong, "Phong", PHONG)                        /* Lambertian plus a normalised Phong lobe */           \
    X(MAT_PBR, pbr, "PBR", PBR)                                /* glTF 2.0 metallic-roughness */                       \
    X(MAT_ROUGH_GLASS, rough_glass, "RoughGlass", ROUGH_GLASS) /* rough dielectric: GGX reflection and transmission */ \
    X(MAT_COATED, coated, "Coated", COATED)                    /* dielectric coat over a diffuse/conductor/PBR base */ \
    X(MAT_THIN_DIELECTRIC, thin_dielectric, "ThinDielectric", THIN_DIELECTRIC) /* a glass sheet: R' and straight T */  \
    X(MAT_DIFFUSE_TRANSMISSION, diffuse_transmission, "DiffuseTransmission",                                           \
      DIFFUSE_TRANSMISSION)                             /* Lambertian reflection and transmission */                   \
    X(MAT_INTERFACE, interface, "Interface", INTERFACE) /* no surface: only a boundary between two media */
#define MATERIAL_ENUM_ROW(kind, stem, name, PUBLIC) kind,
enum coat_base { COAT_BASE_DIFFUSE = 0, COAT_BASE_CONDUCTOR = 1, COAT_BASE_PBR = 2 };
typedef enum material_kind { MATERIAL_KINDS(MATERIAL_ENUM_ROW) MAT_KIND_COUNT } material_kind;
/* MAP_BUMP: normal_tex is a height map (its channels' mean, times normal_scale, in scene units per
 * uv unit of height), not a normal map; a material has one or the other. */
enum material_map { MAP_METALLIC_ROUGHNESS = 1, MAP_NORMAL = 2, MAP_EMISSION = 4, MAP_OPACITY = 8, MAP_BUMP = 16 };
typedef struct material {
    int32_t kind;
    int32_t albedo_tex; /* index into textures, or -1 to use `albedo` */
    vec3 albedo;
    vec3 emission; /* emitted radiance; nonzero makes every surface using it a light */
    float alpha;   /* GGX roughness parameter (roughness^2) */
    float ior;
    float dispersion; /* MAT_DIELECTRIC, MAT_ROUGH_GLASS: Cauchy's B in um^2 (kernel/spectral.h), `ior` the
                           d-line value; 0: one IOR for all wavelengths */
    /* Phong's lobe and DiffuseTransmission's transmittance; Coated (no such lobe) keeps its coat's
     * tint and GGX alpha in their place */
    union {
        vec3 specular;  /* Phong lobe reflectance; DiffuseTransmission: the transmittance */
        vec3 coat_tint; /* MAT_COATED: transmittance of the coat at normal incidence, there and back (in [0, 1]) */
    };
    union {
        float exponent;   /* Phong exponent */
        float coat_alpha; /* MAT_COATED: GGX alpha of the coat */
    };
    int32_t two_sided; /* emission leaves both sides of the surface (the CIS 5650 convention);
                           0: only the side the geometric normal faces */
    /* metallic-roughness and texture maps. A map is used only where its bit is set in `maps`,
     * so a zero-initialised material has none (texture index 0 is a valid texture). */
    float metallic;       /* MAT_PBR */
    int32_t maps;         /* MAP_* bits */
    int32_t mr_tex;       /* MAP_METALLIC_ROUGHNESS: G scales roughness, B metallic (glTF layout) */
    int32_t normal_tex;   /* MAP_NORMAL: tangent-space normal map (linear RGB in [0,1]); MAP_BUMP: height map */
    float normal_scale;   /* MAP_NORMAL: scales the map's xy; MAP_BUMP: scales the height */
    int32_t emission_tex; /* MAP_EMISSION: multiplies `emission` */
    int32_t alpha_tex;    /* MAP_OPACITY: opacity in R (= G = B), times `opacity` */
    float opacity;        /* glTF baseColorFactor's alpha (read only with alpha_cutoff > 0) */
    float alpha_cutoff;   /* > 0: where opacity < alpha_cutoff there is no surface (rays pass) */
    /* MAT_CONDUCTOR (and MAT_COATED's conductor base): a complex index eta + i k per channel,
     * used where complex_ior is set (the exact conductor Fresnel); otherwise Schlick with F0 =
     * the colour. */
    int32_t complex_ior;
    vec3 eta, k;
    /* MAT_COATED (materials/coated.h): the coat's IOR is `ior`, the base's roughness `alpha`, its
     * tint and alpha share Phong's fields (above); its directional albedo is one table for all
     * materials (coat_albedo.h), not a field */
    int32_t coat_base; /* COAT_BASE_* */
    float coat_kd;     /* the diffuse base's compensation 1 / (1 - E_avg) */
    float coat_weight; /* the coat's presence in [0, 1] (glTF clearcoatFactor): scales f_coat and E */
    /* MAT_PBR's optional layers (materials/pbr.h), read only where pbr_layers is set (a plain
     * metallic-roughness material runs the code it always did): KHR_materials_specular's
     * dielectric Fresnel and KHR_materials_sheen's Charlie sheen over the lobe */
    int32_t pbr_layers;
    vec3 spec_f0;      /* the dielectric part's F0: min(0.04 specularColor, 1) specular */
    float spec_f90;    /* its F90: specular (KHR_materials_specular's specularFactor) */
    vec3 sheen;        /* sheen colour (0: none) */
    float sheen_alpha; /* Charlie's alpha = sheenRoughness^2 (at least PBR_SHEEN_MIN_ALPHA); the white
                                 lobe's directional albedo is one table for all materials (sheen_albedo.h) */
    /* The media on the two sides of the surface (pbrt-v4's MediumInterface), as medium references:
     * index + 1 into kscene.media, 0 the vacuum (so a zero-initialised material binds none). Inside
     * is the side the geometric normal points away from. Equal (both 0 unless the scene binds
     * media): the surface is no medium boundary and a ray crossing it keeps its medium
     * (kernel/medium.h, medium_after_crossing). */
    int32_t medium_inside, medium_outside;
} material;
/* Every GPU material load and VCM vertex reads it: 184 bytes (96 before conductors' complex IOR,
 * the coat and the media bindings: 144; the PBR kind's sheen and specular layers: 184). No field
 * may be an array that kernel code indexes at run time: the megakernel copies the shaded material
 * (material_at), and such an index puts the whole copy in local memory (the coat's and then the
 * sheen's per-material albedo tables did: the "all" megakernel's local depot 224 -> 488 bytes,
 * docs/performance-log.md, "the shaded material in local memory"); tables shared by all materials
 * go in their own header (coat_albedo.h, sheen_albedo.h). Grow it only for every kind's sake; a kind's own parameters share storage with
 * another kind's where they can (the unions above). */
#define MATERIAL_BYTES 184
KSTATIC_ASSERT(sizeof(material) == MATERIAL_BYTES, "kernel/types.h: material is MATERIAL_BYTES bytes");

/* ---- participating media ------------------------------------------------------------------
 * One row per medium kind: X(KIND, stem, name). The stem names its header
 * kernel/media/<stem>.h and the prefix of its functions (kernel/medium.h dispatches over the list);
 * the name is its TYPE in the scene format. */
#define MEDIUM_KINDS(X)                                                                                                \
    X(MEDIUM_HOMOGENEOUS, homogeneous, "Homogeneous") /* constant coefficients */                                      \
    X(MEDIUM_GRID, grid, "Grid")          /* a density grid (and optional RGB albedo grid) times the coefficients */   \
    X(MEDIUM_NANOVDB, nanovdb, "NanoVDB") /* a NanoVDB float density grid times the coefficients */
#define MEDIUM_ENUM_ROW(kind, stem, name) kind,
typedef enum medium_kind { MEDIUM_KINDS(MEDIUM_ENUM_ROW) MEDIUM_KIND_COUNT } medium_kind;
/* Majorant cells of the grid kinds (kernel/media/grid.h): one per this many voxels along an axis,
 * at most GRID_MAJORANT_MAX_RES. */
#define GRID_MAJORANT_VOXELS  8u
#define GRID_MAJORANT_MAX_RES 64u
/* A grid medium's absent optional grid (medium.albedo_grid). */
#define MEDIUM_NO_GRID        0xffffffffu
typedef struct medium {
    int32_t kind;
    vec3 sigma_a, sigma_s; /* absorption and scattering coefficients per unit length, RGB (a grid:
                              per unit density, sigma(p) = density(p) * sigma) */
    vec3 emission;         /* radiance Le: the medium emits sigma_a * Le per unit length (pbrt-v4) */
    float g;               /* Henyey-Greenstein asymmetry in (-1, 1); 0 isotropic */
    float majorant;        /* an upper bound of sigma_t = sigma_a + sigma_s over channels and space */
    /* MEDIUM_GRID only (kernel/media/grid.h), zero otherwise. Grids are offsets into
     * kscene.voxels, x fastest then y then z; a voxel's value sits at its cell's centre of the
     * unit cube [0,1]^3 of grid space (Mitsuba 3's gridvolume), interpolated trilinearly with
     * clamping at the faces; outside the cube the density is 0. */
    uint32_t density_grid;  /* res[0] * res[1] * res[2] floats */
    uint32_t albedo_grid;   /* 3 floats a voxel (RGB single-scattering albedo, same res), or
                               MEDIUM_NO_GRID: sigma_s / (sigma_a + sigma_s) everywhere */
    uint32_t majorant_grid; /* mres[0] * mres[1] * mres[2] floats: each cell of a coarse partition of
                               the unit cube holds the largest density any point in it can read */
    uint32_t res[3], mres[3];
    float to_grid[12]; /* world -> grid space (3x4, row-major: u = M p + column 3) */
    /* MEDIUM_NANOVDB (kernel/media/nanovdb.h) shares the fields above: density_grid is the
     * offset (in 32-bit words) of its NanoVDB grid in kscene.nanovdb, res the size of the grid's
     * active index bounding box and index_min its lowest corner (the unit cube of grid space is
     * that box's voxel cells, voxel i's value at index coordinate i); albedo_grid is
     * MEDIUM_NO_GRID, the majorant grid in kscene.voxels as the dense kind's. */
    int32_t index_min[3];
} medium;

/* ---- lights ----------------------------------------------------------------------------- */
/* Area lights are emissive primitives; point and directional lights have no geometry. Lights
 * are chosen with probability proportional to power (the cdf lives in kscene.light_cdf); the
 * environment is chosen separately with kscene.env_pmf. */
/* One row per light kind: X(KIND, name); the name is the light's TYPE in the scene format
 * (docs/extending.md, "A light": sample_light and light_emit in lights.h need a
 * branch for a new kind). */
#define LIGHT_KINDS(X)                                                                                                 \
    X(LIGHT_AREA, "area")                                                                                              \
    X(LIGHT_POINT, "point")                                                                                            \
    X(LIGHT_DIRECTIONAL, "directional")                                                                                \
    X(LIGHT_SPOT, "spot")
#define LIGHT_ENUM_ROW(kind, name) kind,
typedef enum light_kind { LIGHT_KINDS(LIGHT_ENUM_ROW) LIGHT_KIND_COUNT } light_kind;
/* How a spot light falls from its inner cone to its outer one: each format defines its own curve
 * (kernel/lights.h, spot_falloff), and a file's spot keeps its format's (scene JSON: FALLOFF). */
#define SPOT_FALLOFFS(X)                                                                                               \
    X(SPOT_FALLOFF_GLTF, "gltf")                 /* glTF KHR_lights_punctual: t^2, t linear in cos theta */            \
    X(SPOT_FALLOFF_SMOOTHSTEP, "smoothstep")     /* pbrt-v4: smoothstep of t, t linear in cos theta */                 \
    X(SPOT_FALLOFF_LINEAR_ANGLE, "linear-angle") /* Mitsuba 3: linear in the angle */
typedef enum spot_falloff_kind { SPOT_FALLOFFS(LIGHT_ENUM_ROW) SPOT_FALLOFF_COUNT } spot_falloff_kind;
typedef struct light {
    int32_t kind;
    uint32_t prim;              /* area: the emitting primitive */
    vec3 p;                     /* point, spot: position; directional: unit direction the light travels */
    vec3 intensity;             /* point, spot: radiant intensity on the axis (W/sr); directional: irradiance (W/m^2) */
    float pmf;                  /* selection probability among the non-environment lights */
    vec3 axis;                  /* spot: unit direction of the cone's axis */
    float cos_inner, cos_outer; /* spot: full intensity inside cos_inner, none outside cos_outer */
    int32_t falloff;            /* spot: the curve between them (spot_falloff_kind) */
    /* area lights, computed once by the light table's builder instead of per sample: */
    vec3 ng;          /* triangle, quad: unit geometric normal (triangle_normal, quad.n) */
    float area_pdf;   /* triangle, quad: 1 / area (a sphere's area pdf depends on the point: 0) */
    int32_t material; /* the primitive's material (one load where NEE chased prim -> record -> material) */
    vec3 q0, q1, q2;  /* triangle: its corners, as the positions the triangle indexes */
} light;

/* ---- light tree ------------------------------------------------------------------------- */
/* A node of the light tree (src/accel/light_tree.c builds it, kernel/light_tree.h walks it; after
 * pbrt-v4's BVHLightSampler and Cycles' light tree): a binary BVH over the finite lights (area
 * primitives, point and spot lights) whose nodes bound their lights' positions (the sphere of
 * centre c and radius r around the box of the lights: all the importance reads of the box), total
 * power (phi) and emission directions: every light below emits only along directions within
 * theta_o + theta_e of axis w, where cos_o = cos theta_o bounds the spread of the normals and
 * cos_e = cos theta_e the spread of emission about each normal (sin_o = sin theta_o, stored: one
 * square root less per visit). `child` holds two flags in its top bits and an index below them:
 * inner node, its first child is the next node and the index its second; leaf (LIGHT_NODE_LEAF),
 * the index is the light's. 48 bytes, depth first; the root is node 0. */
#define LIGHT_NODE_LEAF      0x80000000u
#define LIGHT_NODE_TWO_SIDED 0x40000000u /* some light below emits on both sides: cosines taken absolute */
#define LIGHT_NODE_INDEX     0x3fffffffu
#define LIGHT_TREE_MAX_DEPTH 64 /* bits of a light's trail (kscene.light_trail) */
typedef struct light_tree_node {
    vec3 c;
    float r;
    vec3 w;
    float phi;
    float cos_o, sin_o, cos_e;
    uint32_t child;
} light_tree_node;

/* ---- camera ----------------------------------------------------------------------------- */
typedef struct camera {
    vec3 pos, right, up, forward; /* orthonormal, right-handed view frame */
    float tan_half_fovy, aspect;
    float lens_radius, focus_distance;
    int32_t width, height;
    int32_t medium; /* the medium around the camera (global fog): a medium reference (material's
                       medium_inside), 0 the vacuum */
} camera;

/* ---- BVH -------------------------------------------------------------------------------- */
/* Binary node of the SAH build (host side; 32 bytes). Inner: `index` = first child (the second
 * is index+1), count = 0. Leaf: `index` = first entry in bvh.prim_ids, count > 0. */
typedef struct bvh_node {
    vec3 lo;
    uint32_t index;
    vec3 hi;
    uint32_t count;
} bvh_node;

/* Wide nodes that traversal uses: the child boxes in structure-of-arrays form so one slab test
 * covers all children (SIMD on the CPU, plain loops on the GPU). 4-wide (128 bytes) on the GPU
 * and on CPUs without AVX2, 8-wide (256 bytes) with AVX2; both start with the same six rows of
 * W floats (lo x/y/z, hi x/y/z), so the builder writes either (src/accel/bvh.c: bvh_collapse).
 * count[i] == 0: child[i] is an inner node; count[i] > 0: a leaf of count[i] consecutive
 * bvh_leaf4 blocks starting at kscene.leaves[child[i]]; an empty slot has child = count = 0
 * (the root is never a child) and a box at +infinity that no ray enters. */
/* Block counts take BVH_COUNT_BITS bits next to a reference in a traversal stack entry
 * (bvh_traverse.h) and in bvh8_node.ref, so references stay below BVH_MAX_REF + 1 and leaves at
 * most BVH_MAX_LEAF_BLOCKS blocks (src/accel/bvh.c, src/cuda/lbvh.cu check both). */
#define BVH_COUNT_BITS      3u
#define BVH_MAX_LEAF_BLOCKS ((1u << BVH_COUNT_BITS) - 1u)
#define BVH_MAX_REF         ((1u << (32u - BVH_COUNT_BITS)) - 1u)
#define BVH4_WIDTH          4
typedef struct bvh4_node {
    float lo_x[BVH4_WIDTH], lo_y[BVH4_WIDTH], lo_z[BVH4_WIDTH];
    float hi_x[BVH4_WIDTH], hi_y[BVH4_WIDTH], hi_z[BVH4_WIDTH];
    uint32_t child[BVH4_WIDTH];
    uint32_t count[BVH4_WIDTH];
} bvh4_node;
/* The 8-wide node packs child and count into one word, child << BVH_COUNT_BITS | count (the low
 * word of a stack entry as it is pushed), and is padded to 256 bytes: four whole cache lines
 * from the 64-byte aligned array, as Embree's, and a node's address is the reference shifted
 * (224 bytes took a multiply; padded, the traversal ran 0-3 % faster: docs/performance-log.md,
 * 2026-11-27, branch `cpu8`). */
#define BVH8_WIDTH 8
typedef struct bvh8_node {
    float lo_x[BVH8_WIDTH], lo_y[BVH8_WIDTH], lo_z[BVH8_WIDTH];
    float hi_x[BVH8_WIDTH], hi_y[BVH8_WIDTH], hi_z[BVH8_WIDTH];
    uint32_t ref[BVH8_WIDTH];
    uint32_t pad[BVH8_WIDTH]; /* 0 */
} bvh8_node;

/* Compressed 8-wide node (80 bytes; after Ylitie, Karras & Laine 2017, "Efficient incoherent
 * ray traversal on GPUs through compressed wide BVHs"): the same children as a bvh8_node, their
 * boxes quantised to 8 bits per plane on a per-axis grid with origin p[a] and spacing
 * 2^(e[a] - 127): plane q of axis a is at p[a] + spacing * q, and the builder makes every such box
 * contain its child's float box in exact arithmetic (src/accel/bvh_compress.c). A node's
 * inner children are consecutive nodes from child_base and its leaves' blocks consecutive from
 * leaf_base (bvh_collapse lays them out so), so a slot needs one byte, meta[i] = count << 5 |
 * offset: count 0 an inner node at child_base + offset, else a leaf of count blocks at
 * leaf_base + offset. used: bit i set for an occupied slot. Five 16-byte rows: p/e/used,
 * bases/meta, then the quantised planes row by row (qlo x, y, z, qhi x, y, z; 8 slots each). */
#define CW8_WIDTH            8
#define CW8_META_COUNT_SHIFT 5u
#define CW8_MAX_OFFSET       31u
typedef struct cw8_node {
    float p[3];
    uint8_t e[3], used;
    uint32_t child_base, leaf_base;
    uint8_t meta[CW8_WIDTH];
    uint8_t qlo[3][CW8_WIDTH], qhi[3][CW8_WIDTH];
} cw8_node;
/* Which node layout kscene.nodes holds: the traversal width's float nodes (bvh_wnode) or cw8_node. */
enum { KNODES_WIDE = 0, KNODES_CW8 = 1 };
/* Grid spacing of exponent bits e (the kernel and the builder share it). */
KFN float cw8_spacing(uint32_t e) { return kbits_float(e << 23); }

/* The width this translation unit's traversal reads (a compile-time constant per target and
 * CPU ISA build, src/cpu/isa.h): the host builds the tree at the width of the kernel that
 * traverses it (bvh_build: the dispatched CPU kernel's; the CUDA backend builds width 4). Only
 * the traversal (bvh_traverse.h) names bvh_wnode: kscene.nodes is an untyped pointer, so that
 * TUs compiled for different widths agree on kscene's layout. */
#if KERNEL_SIMD_AVX2
#define BVH_WIDTH BVH8_WIDTH
typedef bvh8_node bvh_wnode;
#else
#define BVH_WIDTH BVH4_WIDTH
typedef bvh4_node bvh_wnode;
#endif

/* Leaf block (64 bytes): up to four primitives of a leaf, in leaf order, so that a leaf is read
 * without going through the triangle array. Lane j holds primitive id prim[j] (PRIM_NONE for an
 * unused lane; unused lanes come last); for a triangle lane v0/v1/v2[j] are its vertex indices
 * (a copy of triangles[].v), 0 in the other lanes. The CPU tests the triangle lanes of a block
 * together (SSE, src/kernel/bvh_traverse.h); the GPU loops over the lanes. */
#define BVH_LEAF_WIDTH 4
typedef struct bvh_leaf4 {
    uint32_t v0[BVH_LEAF_WIDTH], v1[BVH_LEAF_WIDTH], v2[BVH_LEAF_WIDTH];
    uint32_t prim[BVH_LEAF_WIDTH];
} bvh_leaf4;
/* A copy of a block's vertex positions (kscene.leaf_pos): nine rows of BVH_LEAF_WIDTH floats,
 * x, y, z of vertex 0, then of 1 and 2, lane j of each row the block's lane j (vertex 0 of the
 * scene in unused and non-triangle lanes; 0 in a scene without vertices), then a tenth row, the
 * block's primitive ids (prim, as float bits) at BVH_LEAF_POS_IDS. The leaf tests of every target
 * read it instead of gathering positions through the vertex indices (a dependent load per vertex
 * on incoherent rays: docs/performance-log.md, 2026-11-27, branch `cpu` for the CPU's SIMD test, `gpu` for the
 * GPU's lanes); the CPU's SIMD tests take the ids from it too: 160 bytes a block, three cache
 * lines wherever it starts (32-byte multiples), where the rows' three and the block's ids made
 * four (docs/performance-log.md, 2026-11-27, branch `cpu8`). */
#define BVH_LEAF_POS_IDS      (9 * BVH_LEAF_WIDTH)
#define BVH_LEAF_POS_FLOATS   (10 * BVH_LEAF_WIDTH)
/* The GPU's copy (kscene.leaf_pos on a CUDA device: bvh_leaf_lanes) is laid out per lane instead:
 * three rows of four floats, vertex 0's x, y, z and the lane's primitive id (its bits; PRIM_NONE
 * in an unused lane), then vertex 1 and vertex 2 (x, y, z, 0), so that a GPU thread reads a lane
 * with three 128-bit loads (bvh_traverse.h, leaf_lane_load). */
#define BVH_LEAF_LANE_FLOATS  12
#define BVH_LEAF_LANES_FLOATS (BVH_LEAF_LANE_FLOATS * BVH_LEAF_WIDTH)

/* ---- instances (two-level BVH) ----------------------------------------------------------
 * A scene with instances (kscene.ninstances > 0) holds each unique mesh once, in its own object
 * space, with a bottom-level BVH (BLAS) of its own in kscene.nodes / leaves (the builder's tree of
 * the mesh's primitives, its references moved past the others'), and places it by instances: the
 * top-level BVH (TLAS, the tree whose root is node 0) has one leaf lane per instance (a leaf
 * block's prim[] holds prim_instance_lane(instance), its v0 the instance's BLAS root node, so that
 * the instances do not depend on the layout a backend builds). The
 * primitives that no instance shares (the scene's "world" geometry) are one more mesh, placed by an
 * identity instance (KINST_IDENTITY: its hits are not transformed). Traversal (bvh_traverse.h,
 * trace_instances) carries the ray into object space with an unnormalised direction, so a hit's t
 * is the world's; surface_at moves the surface back. Only kernels with KF_INSTANCES
 * (kernel/features.h) read them. 112 bytes. */
#define KINST_IDENTITY     1u /* to_world is the identity: hits need no transform */
/* A TLAS leaf lane: the instance index under the kind bits no primitive kind takes (3; PRIM_NONE
 * has them too, with the largest index), and the instance's BLAS root node in the block's v0. */
#define PRIM_INSTANCE_KIND 3u
KSTATIC_ASSERT(PRIM_KIND_COUNT <= (int)PRIM_INSTANCE_KIND, "TLAS lanes take the primitive id kind no kind has");
KFN uint32_t prim_instance_lane(uint32_t instance) { return PRIM_INSTANCE_KIND << PRIM_KIND_SHIFT | instance; }
KFN int prim_is_instance_lane(uint32_t id) { return id != PRIM_NONE && (id >> PRIM_KIND_SHIFT) == PRIM_INSTANCE_KIND; }
typedef struct kinstance {
    xform to_world, to_object; /* the mesh's object space to world, and its inverse */
    uint32_t mesh;             /* the host's mesh index (the BLAS's root is in the TLAS leaf, bvh_leaf4.v0) */
    int32_t material;          /* -1: the mesh's own materials; else every primitive of the instance takes it */
    float ng_sign;             /* the geometric normal's sign in world space: sign(det) of to_world, negated
                                  where the instance reverses the mesh's winding (pbrt's handedness rule) */
    uint32_t flags;            /* KINST_* */
} kinstance;

/* ---- everything a kernel needs ------------------------------------------------------------ */
/* The scene's arrays, declared once: X(element type, name, element count). The count is an
 * expression over `k`, a pointer to the kscene, which must be in scope where the list is
 * expanded: kscene's members (below), scene_prepare's fill (src/scene/scene.c), the GPU upload
 * (src/cuda/render_cuda.cu) and the memory count (src/api). An optional array (normals, uvs, the
 * environment map's cdfs) is NULL when absent. The BVH (nodes, leaves) is not in the list: its
 * layout depends on the width of the kernel that traverses it, and each backend brings its own. */
#define KSCENE_ARRAYS(X)                                                                                               \
    X(triangle, triangles, k->ntriangles)                                                                              \
    X(vec3, positions, k->nvertices)                                                                                   \
    X(vec3, normals, k->nvertices)        /* per vertex, or NULL */                                                    \
    X(vec2, uvs, k->nvertices)            /* per vertex, or NULL */                                                    \
    X(float, tangents, 4u * k->nvertices) /* per vertex xyz + handedness w (+-1; 0 = none:    \
                                             derived from uvs), or NULL */                        \
    X(sphere, spheres, k->nspheres)                                                                                    \
    X(quad, quads, k->nquads)                                                                                          \
    X(material, materials, k->nmaterials)                                                                              \
    X(texture, textures, k->ntextures)                                                                                 \
    X(float, texels, k->ntexels)                                                                                       \
    X(uint8_t, texels8, k->ntexels8)                         /* 8-bit texels (texture.texel8) */                       \
    X(float, texel8_lut, k->ntexels8 ? TEXEL8_LUT_SIZE : 0u) /* code -> linear, per encoding */                        \
    X(light, lights, k->nlights)                                                                                       \
    X(medium, media, k->nmedia)                                 /* participating media (kernel/medium.h) */            \
    X(kinstance, instances, k->ninstances)                      /* placed meshes (two-level BVH), or none */           \
    X(float, voxels, k->nvoxels)                                /* grid media's density, albedo and majorant grids */  \
    X(uint32_t, nanovdb, k->nnanovdb)                           /* NanoVDB grids (MEDIUM_NANOVDB), 32-bit words */     \
    X(float, light_cdf, k->nlights + 1u)                        /* light_cdf[nlights] == 1 */                          \
    X(int32_t, prim_light, kscene_nprims(k))                    /* per primitive id order: triangles, spheres,    \
                                                quads -> light index or -1 */    \
    X(light_tree_node, light_nodes, k->nlight_nodes)            /* the light tree, or none (power pick) */             \
    X(uint64_t, light_trail, k->nlight_nodes ? k->nlights : 0u) /* per light: the path from the \
                                            root to its leaf, bit d = 1 where depth d takes the second child */                      \
    X(float, env_cdf_rows, k->nenv_cdf_rows)                    /* env map: env_h + 1 entries, marginal cdf over  \
                                                rows (top first) */    \
    X(float, env_cdf_cols, k->nenv_cdf_cols)                    /* env map: env_h * (env_w + 1), conditional cdf  \
                                                within each row */

#define KSCENE_ARRAY_MEMBER(type, name, count) const type *name;
typedef struct kscene {
    const void *nodes;       /* root at 0; bvh4_node or bvh8_node: the width of the kernel that
                                traverses it (BVH_WIDTH there), or cw8_node (node_layout) */
    const bvh_leaf4 *leaves; /* leaf blocks the nodes' leaf slots point to */
    const float *leaf_pos;   /* BVH_LEAF_POS_FLOATS per leaf block (bvh_leaf_positions; on a CUDA
                                device BVH_LEAF_LANES_FLOATS: bvh_leaf_lanes) */
    uint32_t nnodes, nleaf4;
    uint32_t node_layout; /* KNODES_WIDE or KNODES_CW8 (the CUDA backend's --gpu-bvh cwbvh) */
    KSCENE_ARRAYS(KSCENE_ARRAY_MEMBER)
    uint32_t ntriangles, nspheres, nquads, nlights, nvertices, nmaterials, ntextures, nmedia;
    uint32_t ninstances; /* 0: one BVH over every primitive (no instances) */
    uint64_t ntexels, ntexels8, nenv_cdf_rows, nenv_cdf_cols, nvoxels, nnanovdb;
    vec3 env_radiance;      /* constant environment, or the scale of the environment map; black = none */
    int32_t env_tex;        /* lat-long environment map (texture index), or -1 */
    float env_pmf;          /* probability NEE picks the environment instead of an area light */
    uint32_t nlight_nodes;  /* light tree nodes; 0: NEE picks lights by power (light_cdf) */
    uint32_t ndirectional;  /* directional lights: outside the tree, picked by power */
    float light_tree_share; /* with a tree: the probability (after the environment's) that NEE
                               picks a light of the tree, the power pmfs of the others' complement */
    int32_t has_cutouts;    /* some material has alpha_cutoff > 0: traversal skips cut-out hits */
    int32_t has_dispersion; /* some material is dispersive (material_dispersive): the spectral kernel */
    float scene_radius;     /* bounding-sphere radius, for environment sampling */
    vec3 scene_center;
} kscene;
#undef KSCENE_ARRAY_MEMBER

KFN uint32_t kscene_nprims(const kscene *k) { return k->ntriangles + k->nspheres + k->nquads; }

KFN uint32_t prim_flat_index(const kscene *s, uint32_t id) {
    uint32_t k = (uint32_t)prim_id_kind(id), i = prim_id_index(id);
    return k == PRIM_TRIANGLE ? i : (k == PRIM_SPHERE ? s->ntriangles + i : s->ntriangles + s->nspheres + i);
}

/* The id of the primitive at flat index f (triangles, spheres, quads). */
KFN uint32_t kscene_prim_id(const kscene *s, uint32_t f) {
    if (f < s->ntriangles) return prim_id(PRIM_TRIANGLE, f);
    f -= s->ntriangles;
    if (f < s->nspheres) return prim_id(PRIM_SPHERE, f);
    return prim_id(PRIM_QUAD, f - s->nspheres);
}

/* Bounding box of one primitive (the BVH builders' input). */
KFN void kscene_prim_bounds_of(const kscene *s, uint32_t id, vec3 *lo, vec3 *hi) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i];
        vec3 a = s->positions[t->v[0]], b = s->positions[t->v[1]], c = s->positions[t->v[2]];
        *lo = vmin(a, vmin(b, c));
        *hi = vmax(a, vmax(b, c));
        return;
    }
    case PRIM_SPHERE: {
        /* exact box of a transformed sphere: per axis, |row| of the linear part times radius */
        const xform *m = &s->spheres[i].to_world;
        vec3 c = v3(m->m[0][3], m->m[1][3], m->m[2][3]);
        vec3 e;
        e.x = 0.5f * sqrtf(m->m[0][0] * m->m[0][0] + m->m[0][1] * m->m[0][1] + m->m[0][2] * m->m[0][2]);
        e.y = 0.5f * sqrtf(m->m[1][0] * m->m[1][0] + m->m[1][1] * m->m[1][1] + m->m[1][2] * m->m[1][2]);
        e.z = 0.5f * sqrtf(m->m[2][0] * m->m[2][0] + m->m[2][1] * m->m[2][1] + m->m[2][2] * m->m[2][2]);
        *lo = vsub(c, e);
        *hi = vadd(c, e);
        return;
    }
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ {
        const quad *q = &s->quads[i];
        vec3 a = q->o, b = vadd(q->o, q->u), c = vadd(q->o, q->v), d = vadd(b, q->v);
        *lo = vmin(vmin(a, b), vmin(c, d));
        *hi = vmax(vmax(a, b), vmax(c, d));
        return;
    }
    }
}

/* Bounds and ids of every primitive in flat order (kscene_nprims entries each). */
KFN void kscene_prim_bounds(const kscene *s, vec3 *lo, vec3 *hi, uint32_t *ids) {
    uint32_t n = kscene_nprims(s);
    for (uint32_t f = 0; f < n; ++f) {
        ids[f] = kscene_prim_id(s, f);
        kscene_prim_bounds_of(s, ids[f], &lo[f], &hi[f]);
    }
}

/* ---- a surface hit -------------------------------------------------------------------------- */
typedef struct hit {
    float t;
    uint32_t prim;
    float b1, b2;  /* triangle barycentrics / quad (s,t) / unused for spheres */
    uint32_t inst; /* the instance hit (kscene.instances): set only by a kernel with KF_INSTANCES in a
                      scene with instances (bvh_traverse.h, trace_instances); read only there */
} hit;

typedef struct surface {
    vec3 p, ng, ns; /* position, geometric normal, shading normal (both facing the outside) */
    vec2 uv;
    int32_t material;
} surface;

#endif
