/* Host-side scene: built incrementally by loaders (JSON, OBJ, built-ins), then prepared into the
 * flat kernel layout (kscene) with a BVH and a light distribution. */
#ifndef CAUSTIC_SCENE_H
#define CAUSTIC_SCENE_H

#include <stddef.h>
#include "kernel/types.h"
#include "accel/bvh.h"

typedef struct camera_desc {
    vec3 eye, lookat, up;
    float fovy_deg;        /* full vertical field of view */
    float aperture_radius; /* 0 = pinhole */
    float focus_distance;  /* 0 = distance from eye to lookat */
    int width, height;
    int medium; /* the medium around the camera: a medium reference (index + 1), 0 the vacuum */
} camera_desc;

/* Instancing (scene_instances.c). A mesh is a range of triangles [t0, t0 + nt) over vertices
 * [v0, v0 + nv) in its own object space that only its placements put in the world (a two-level BVH:
 * kernel/types.h, kinstance); the rest of the scene (every primitive in no mesh) is the "world"
 * geometry, placed once as it is. */
typedef struct scene_mesh {
    size_t t0, nt, v0, nv;
} scene_mesh;
typedef struct scene_placement {
    uint32_t mesh;
    xform to_world;
    int material; /* -1: the mesh's materials */
    int reverse;  /* the mesh's winding reversed (pbrt: a transform that changes handedness) */
} scene_placement;
#define SCENE_MESH_WORLD 0xffffffffu /* instance_mesh of the world geometry's instance */

/* Receives one warning line ("FILE: JSON.PATH: problem"); loaders never print. */
typedef void (*scene_warn_fn)(void *user, const char *message);

typedef struct scene {
    /* loader warnings go here while the scene is being built (NULL: dropped) */
    scene_warn_fn warn;
    void *warn_user;
    /* geometry */
    triangle *triangles;
    size_t ntriangles, cap_triangles;
    vec3 *positions, *normals;
    vec2 *uvs;
    size_t nvertices, cap_vertices;
    float *tangents; /* 4 per vertex (xyz, handedness w; w = 0: none), or NULL */
    int has_normals, has_uvs, has_tangents;
    sphere *spheres;
    size_t nspheres, cap_spheres;
    quad *quads;
    size_t nquads, cap_quads;
    /* appearance */
    material *materials;
    char **material_names;
    size_t nmaterials, cap_materials;
    texture *textures;
    size_t ntextures, cap_textures;
    float *texels;
    size_t ntexels, cap_texels;
    uint8_t *texels8;
    size_t ntexels8, cap_texels8; /* 8-bit image textures (texture.texel8) */
    float *texel8_lut;            /* TEXEL8_LUT_SIZE decoded codes, with the first texels8 */
    light *punctual;
    size_t npunctual, cap_punctual; /* point and directional lights */
    medium *media;                  /* participating media (kernel/medium.h) */
    char **medium_names;
    size_t nmedia, cap_media;
    float *voxels; /* grid media's grids (medium.density_grid, albedo_grid, majorant_grid) */
    size_t nvoxels, cap_voxels;
    uint32_t *nanovdb; /* NanoVDB grids (MEDIUM_NANOVDB's density_grid: word offsets, 8-word aligned) */
    size_t nnanovdb, cap_nanovdb;
    vec3 env_radiance;                  /* constant sky colour, or the scale of env_tex */
    int env_tex;                        /* lat-long environment map texture, or -1 */
    float *env_cdf_rows, *env_cdf_cols; /* its sampling distribution (scene_prepare) */
    /* instancing (scene_add_instance): meshes and their placements, as loaded */
    scene_mesh *meshes;
    size_t nmeshes, cap_meshes;
    scene_placement *placements;
    size_t nplacements, cap_placements;
    size_t flattened; /* placements whose triangles scene_prepare copied (emissive meshes, CAUSTIC_INSTANCES=flatten) */
    /* prepared: the kernel's instances (kscene.instances; none without meshes), the world's first
     * where it has geometry, and each one's mesh (SCENE_MESH_WORLD for the world's) */
    kinstance *instances;
    uint32_t *instance_mesh;
    size_t ninstances;
    /* view and render defaults from the file */
    camera_desc camera;
    int spp;             /* ITERATIONS */
    int max_depth;       /* DEPTH */
    char *output_name;   /* FILE, may be NULL */
    int integrator_hint; /* the file's integrator, CAUSTIC_INTEGRATOR_* + 1 (pbrt's Integrator); 0: none said */
    /* prepared (scene_prepare) */
    struct bvh bvh; /* the tree of k (the CPU kernels' width); "struct": the member shares
                                the type's name, which C++ (gltf.cpp) allows only so */
    int bvh_built, bvh_lanes;
#define SCENE_BVH_CACHE 4
    struct bvh bvh_cache[SCENE_BVH_CACHE]; /* other layouts asked for (scene_bvh): the GPU's */
    int bvh_cache_lanes[SCENE_BVH_CACHE], nbvh_cache;
    light *lights;
    float *light_cdf;
    int32_t *prim_light;
    size_t nlights;
    light_tree_node *light_nodes; /* the light tree, or NULL (scene_build_light_tree) */
    uint64_t *light_trail;
    uint32_t nlight_nodes, ndirectional;
    float light_tree_share;
    vec3 bounds_lo, bounds_hi;
    kscene k;
    int prepared;
} scene;

scene *scene_create(void);
void scene_destroy(scene *s);

/* The names of the kind tables' rows (kernel/types.h: MATERIAL_KINDS, PRIM_KINDS, LIGHT_KINDS):
 * the material's and the light's TYPE in the scene format. NULL for a kind out of range. */
const char *material_kind_name(int kind);
const char *prim_kind_name(int kind);
const char *light_kind_name(int kind);
const char *spot_falloff_name(int falloff); /* SPOT_FALLOFFS' names (scene JSON's FALLOFF), NULL out of range */

/* One image memory budget per scene: every texture it holds (8-bit texels a byte, float texels
 * four) within the cap (image_memory_fits); name is the file that was added last. */
int scene_textures_memory_check(const scene *s, const char *name, char *err, size_t errlen);
/* Materials are looked up by name; adding a name twice is an error (returns -1). */
int scene_add_material(scene *s, const char *name, material m);
int scene_find_material(const scene *s, const char *name);
/* Participating media, by name as materials (kernel/types.h, medium); -1 on a name added twice,
 * out of memory, or coefficients that are negative or not finite, or |g| >= 1, or a grid medium
 * (scene_add_grid_medium adds those). */
int scene_add_medium(scene *s, const char *name, medium m);
/* Room for n more voxel floats at the end of s->voxels (the offset s->nvoxels, which the caller
 * fills and then advances with scene_commit_voxels), or NULL: out of memory, or the voxels would
 * pass the 2^32 offsets of medium's grids. */
float *scene_reserve_voxels(scene *s, size_t n);
void scene_commit_voxels(scene *s, size_t n);
/* A grid medium's majorant resolution (m->mres: one cell per GRID_MAJORANT_VOXELS voxels, at most
 * GRID_MAJORANT_MAX_RES) from m->res, set; returns the cell count. */
size_t scene_majorant_res(medium *m);
/* A grid medium (MEDIUM_GRID): m's coefficients, g, emission, res, to_grid and density_grid (and
 * albedo_grid or MEDIUM_NO_GRID) set, the grids in s->voxels; builds its majorant grid and sets
 * m.majorant. -1 where scene_add_medium refuses, on a grid outside s->voxels, a voxel that is
 * negative or not finite, or out of memory. */
int scene_add_grid_medium(scene *s, const char *name, medium m);
/* Room for nwords more words of NanoVDB grid at the end of s->nanovdb, from the returned offset
 * *off (a multiple of 8 words: NanoVDB's 32-byte alignment); scene_commit_nanovdb(s, off + nwords)
 * keeps them. NULL: out of memory or past 2^32 words. */
uint32_t *scene_reserve_nanovdb(scene *s, size_t nwords, size_t *off);
void scene_commit_nanovdb(scene *s, size_t end);
/* A NanoVDB grid medium (MEDIUM_NANOVDB): m's coefficients, g, emission, to_grid, res, index_min,
 * density_grid (its grid in s->nanovdb, checked by the reader: src/import/nvdb.c) and its majorant
 * grid (majorant_grid, mres: in s->voxels) set; sets m.majorant. -1 as scene_add_grid_medium. */
int scene_add_nanovdb_medium(scene *s, const char *name, medium m);
int scene_find_medium(const scene *s, const char *name);
/* Binds media to the primitives added since the counts first_triangle, first_sphere, first_quad
 * (an object just built): their materials become copies whose medium_inside / medium_outside are
 * the references inside / outside (index + 1, 0 the vacuum; kernel/medium.h states the rule),
 * one copy per (material, inside, outside), named "MATERIAL|INSIDE|OUTSIDE"; inside < 0 keeps each
 * material's own inside (a Subsurface material's medium under an object's EXTERIOR). -1: out of
 * memory. */
int scene_bind_media(scene *s, size_t first_triangle, size_t first_sphere, size_t first_quad, int inside, int outside);
/* texels: width*height*3 linear floats copied in, or NULL for procedural textures. */
int scene_add_texture(scene *s, texture t, const float *texels);
/* An image texture from width*height*3 linear floats; its mean colour is what the kernel returns
 * for non-finite uvs. Returns the index, -1 when out of memory, -2 past the 2^32-texel limit. */
int scene_add_image_texture(scene *s, int width, int height, const float *rgb);
/* The same from a loaded image, whose pixels are taken (img is left empty): the first float image
 * becomes the texel store itself, so that loading it does not hold the image twice; later ones are
 * copied in and freed. */
struct image;
int scene_take_image_texture(scene *s, struct image *img);
/* 8-bit image textures, kept at that precision (3 bytes a texel instead of 12) and decoded on
 * lookup: scene_reserve_texels8 gives room for width*height*3 codes at the end of the 8-bit store
 * (NULL when out of memory or past the 2^32-texel limit) for a reader to decode straight into
 * (its signature is image_load_srgb8's reserve callback); scene_add_image_texture8 then makes
 * them a texture, of encoding TEXEL8_SRGB (decoded as image_srgb8_table, exactly what image_load
 * would have given) or TEXEL8_LINEAR (code / 255). Returns the index or -1 when out of memory. A
 * reservation not added is dropped by the next one. */
unsigned char *scene_reserve_texels8(void *s, int width, int height);
int scene_add_image_texture8(scene *s, int width, int height, int encoding);
/* Whether image texture tex as an environment map, with the sampling tables scene_prepare builds
 * for it (4 bytes a texel more), fits the image memory cap (image_memory_fits): 0, or -1 with
 * "NAME: ..." in err. scene_prepare checks it; loaders check it where they can name the file. */
int scene_env_memory_check(const scene *s, int tex, const char *name, char *err, size_t errlen);
/* Texel i (row-major) of an image texture, linear RGB, whatever its precision. */
vec3 scene_texel(const scene *s, const texture *t, size_t i);

/* Affine transforms, CIS 5650 convention: M = T * Rx * Ry * Rz * S, angles in degrees. */
xform xform_identity(void);
xform xform_trs(vec3 translate, vec3 rotate_deg, vec3 scale);
xform xform_mul(const xform *a, const xform *b);
int xform_invert(const xform *m, xform *inv); /* 0 on success, -1 if singular */

/* Each returns 0, or -1 on allocation failure / singular transform. */
int scene_add_sphere(scene *s, xform to_world, int material); /* diameter 1 before transform */
int scene_add_cube(scene *s, xform to_world, int material);   /* [-0.5,0.5]^3, 12 triangles */
/* Tangents (4 floats per vertex: xyz and handedness w = +-1) for the n vertices from v0, which a
 * scene_add_mesh with the same `to_world` added. Returns 0, or -1. */
int scene_set_tangents(scene *s, size_t v0, const float *tangents, size_t n, xform to_world);
/* Instancing: places again the triangles [t0, t0+nt) with vertices [v0, v0+nv), which were
 * added with transform `placed`, under transform `to_world` (the mesh file is not re-read): the
 * first time the range becomes a mesh (scene_add_instanced_mesh) placed where it was and here. */
int scene_instance_mesh(scene *s, size_t v0, size_t nv, size_t t0, size_t nt, xform placed, xform to_world);
/* Copies the triangles [t0, t0+nt) with vertices [v0, v0+nv) under transform m (material >= 0:
 * theirs replaced; reverse: winding reversed): the flatten fallback. Returns 0, or -1. */
int scene_copy_triangles(scene *s, size_t v0, size_t nv, size_t t0, size_t nt, xform m, int material, int reverse);
int scene_add_quad(scene *s, vec3 o, vec3 u, vec3 v, int material);
/* Instancing (see scene_mesh): the triangles [t0, t0 + nt), which index only the vertices
 * [v0, v0 + nv), become a mesh that only scene_add_instance places (the scene holds them once).
 * Returns the mesh index, or -1 (out of memory, a range that overlaps another mesh's). */
int scene_add_instanced_mesh(scene *s, size_t t0, size_t nt, size_t v0, size_t nv);
/* Places mesh `mesh` under to_world (its object space to the world); material >= 0 replaces the
 * mesh's materials; reverse: the winding is reversed (the geometric normal flips). scene_prepare
 * copies the triangles instead (the flatten fallback) for a mesh with an emissive material (lights
 * are primitives of the world) or where CAUSTIC_INSTANCES=flatten. Returns 0, or -1 (a singular
 * transform, a bad mesh or material, out of memory). */
int scene_add_instance(scene *s, int mesh, xform to_world, int material, int reverse);
/* scene_prepare's part: the flatten fallback, then the kernel's instances (s->instances). */
int scene_prepare_instances(scene *s, char *err, size_t errlen);
/* The two-level BVH of a scene with instances (build_bvh's, for any width / lane count). */
int scene_build_instanced_bvh(const scene *s, bvh *b, int width, int sah_lanes, char *err, size_t errlen);
/* World bounds of a prepared scene with instances (the instances' boxes). */
void scene_instances_bounds(const scene *s, vec3 *lo, vec3 *hi);
/* Lights without geometry: a point light of radiant intensity `intensity` (W/sr), and a
 * directional light travelling along `direction` with irradiance `irradiance` on a plane facing
 * it. Return 0, or -1 (bad values, out of memory). */
int scene_add_point_light(scene *s, vec3 position, vec3 intensity);
int scene_add_directional_light(scene *s, vec3 direction, vec3 irradiance);
/* A spot light at `position` shining along `axis`: intensity (W/sr) on the axis, full within
 * inner_deg of it, falling to 0 at outer_deg (0 < outer <= 90) along the curve `falloff`
 * (spot_falloff_kind: its format's). */
int scene_add_spot_light(scene *s, vec3 position, vec3 axis, vec3 intensity, float inner_deg, float outer_deg,
                         int falloff);
/* Triangle mesh: positions (and optional normals/uvs) per vertex, 3 indices per triangle,
 * per-triangle materials (or NULL to use `material` for all). Transformed into world space. */
int scene_add_mesh(scene *s, const vec3 *pos, const vec3 *nrm, const vec2 *uv, size_t nverts, const uint32_t *indices,
                   const int *tri_materials, size_t ntris, xform to_world, int material);

/* Once, after loading: builds the light tables, fills s->k (the arrays, no render settings) and
 * builds its BVH with nodes of bvh_width (the width of the CPU kernel that traverses s->k; the
 * caller knows it, src/cpu/isa.h). Checks the file's camera. Returns 0, or -1 with a message. */
int scene_prepare(scene *s, int bvh_width, char *err, size_t errlen);
/* How NEE picks lights (src/scene/scene_light_tree.c): by power, through a light tree, or a tree
 * where there are many lights; CAUSTIC_LIGHT_SAMPLER names it. */
enum { SCENE_LIGHTS_AUTO = 0, SCENE_LIGHTS_POWER = 1, SCENE_LIGHTS_TREE = 2 };
int scene_light_sampler_from_env(int *mode, char *err, size_t errlen);
/* Builds the light tree over s's light table (power[i]: light i's power) where mode asks for one
 * (SCENE_LIGHTS_*), else leaves none. */
int scene_build_light_tree(scene *s, const double *power, int mode, char *err, size_t errlen);
/* The BVH of a prepared scene with nodes of `width` and the SAH's leaf cost counted in blocks of
 * sah_lanes primitives (bvh_build_lanes): s->bvh when that is it, else built once and cached with
 * the scene (the GPU's 4-wide tree). NULL with a message when out of memory. */
const bvh *scene_bvh(scene *s, int width, int sah_lanes, char *err, size_t errlen);
/* The camera of the scene file for an image of width x height. Returns 0, or -1 with a message
 * (EYE == LOOKAT, UP parallel to the view). */
int scene_camera(const scene *s, int width, int height, camera *c, char *err, size_t errlen);
/* The same for any camera description (a renderer's own camera, src/api). */
int camera_from_desc(const camera_desc *cd, int width, int height, camera *c, char *err, size_t errlen);
/* Bounds and primitive ids of every primitive of a prepared scene in flat order (triangles,
 * spheres, quads; kscene_prim_bounds): the input of the BVH builders (arrays of ntriangles +
 * nspheres + nquads entries). */
void scene_prim_bounds(const scene *s, vec3 *lo, vec3 *hi, uint32_t *ids);

/* One warning line to s->warn (printf-style; the line is made printable). */
void scene_warn(const scene *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Built-in scenes (scene_builtin.c); readers of scene files are in src/import (import/import.h). */
int scene_load_builtin(scene **out, const char *name, char *err, size_t errlen);
/* The JSON text of a built-in scene made from JSON (cornell, cornell-glass), else NULL (made in
 * code: rtow, smallvcm0-3). */
const char *scene_builtin_json(const char *name);
const char *const *scene_builtin_names(void); /* NULL-terminated */
/* SmallVCM's Cornell box scene `id` (0..3) into an empty scene (scene_smallvcm.c). */
int scene_build_smallvcm(scene *s, int id, char *err, size_t errlen);

#endif
