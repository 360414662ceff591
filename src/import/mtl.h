/* Private to src/import: the Wavefront MTL reader (mtl.c) and the OBJ loader's in-memory entry
 * point (obj.c), used by tests and the fuzz target. */
#ifndef CAUSTIC_IMPORT_MTL_H
#define CAUSTIC_IMPORT_MTL_H

#include <stddef.h>
#include "scene/scene.h"
#include "scene/material.h"
#include "import/import.h"

/* The height of an MTL bump map's full range (a texel value of 1) in scene units, before -bm: the
 * format leaves it open; 0.01 (a centimetre where units are metres, as in the test Sponza) gives
 * stone and brick their relief. */
#define MTL_BUMP_UNIT 0.01

/* Default angle threshold for generated smooth normals (degrees). */
#define OBJ_SMOOTH_ANGLE_DEG 60.0f

/* One `newmtl` block as written in the file (before mapping to a caustic material). */
typedef struct mtl_entry {
    char *name;
    vec3 kd, ks, ke;
    float ni, d, pr, pm, ns;
    int illum;
    unsigned has;     /* MTL_HAS_* bits: which statements were given */
    char *map_kd;     /* texture path as written (options stripped), or NULL */
    char *map_bump;   /* bump / map_bump: a height map (options stripped), or NULL */
    float bump_scale; /* its -bm multiplier (1) */
    char *map_norm;   /* norm / map_Kn: a tangent-space normal map, or NULL */
    char *map_d;      /* map_d: an opacity map (cut-out where below 1/2), or NULL */
    int map_pr;       /* map_Pr was given (not supported: ignored with a warning) */
    int line;         /* line of the newmtl statement */
} mtl_entry;

enum {
    MTL_HAS_KD = 1,
    MTL_HAS_KS = 2,
    MTL_HAS_KE = 4,
    MTL_HAS_NI = 8,
    MTL_HAS_D = 16,
    MTL_HAS_PR = 32,
    MTL_HAS_PM = 64,
    MTL_HAS_ILLUM = 128,
    MTL_HAS_NS = 256,
    MTL_HAS_TR = 512
};

typedef struct mtl_lib {
    mtl_entry *entries;
    size_t n, cap;
    size_t unknown;       /* statements we do not understand (one warning line lists them) */
    char unknown_kw[160]; /* the first few distinct unknown keywords, space-separated */
} mtl_lib;

/* Parses MTL text (need not be NUL-terminated; `name` is used in "name:line: problem" errors)
 * and appends its materials to lib. Returns 0, or -1 with a one-line message. */
int mtl_parse(mtl_lib *lib, const char *text, size_t size, const char *name, char *err, size_t errlen);
void mtl_lib_free(mtl_lib *lib);
/* The last entry called `name`, or NULL. */
const mtl_entry *mtl_find(const mtl_lib *lib, const char *name);

/* The caustic material kind and its parameters for an MTL entry (no texture: albedo_tex = -1;
 * the OBJ reader loads map_Kd), for material_from_params. See docs/scene-format.md for the
 * mapping. */
material_kind mtl_to_params(const mtl_entry *e, material_params *out);

/* Options of the OBJ loader, for tests and the fuzzer. Zero-initialised = the defaults. */
typedef struct obj_options {
    float smooth_angle_deg; /* <= 0: OBJ_SMOOTH_ANGLE_DEG */
    int quiet;              /* no warning lines (scene_warn) */
    const char *mtl_text;   /* if set, every mtllib reads this text instead of a file */
    size_t mtl_size;
    /* counters filled in by the loader (for tests) */
    size_t warn_degenerate, warn_unknown, warn_missing_material, warn_missing_texture;
} obj_options;

/* Loads OBJ text held in memory. `name` is used in messages; relative mtllib paths resolve
 * against base_dir (NULL = the current directory). material >= 0 overrides every face's material;
 * material < 0 uses the MTL materials (faces without one get a default grey diffuse). */
int scene_load_obj_memory(scene *s, const char *data, size_t size, const char *name, const char *base_dir,
                          xform to_world, int material, obj_options *opt, char *err, size_t errlen);

/* scene_load_obj with options (NULL = defaults). */
int scene_load_obj_ex(scene *s, const char *path, xform to_world, int material, obj_options *opt, char *err,
                      size_t errlen);

#endif
