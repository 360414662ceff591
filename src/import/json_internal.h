/* The JSON scene reader's parts, shared by its files (not a public interface):
 *   json_values.c   typed values over cJSON (the JSON side of params.h) and key canonicalisation
 *   json_dialect.c  the dialect tables: course spellings -> caustic keys, material TYPE -> kind
 *   json_material.c textures and materials
 *   json_scene.c    the walker: root, camera, environment, lights, objects; the entry points
 * Every problem is one line through params.h: "SOURCE: JSON.PATH: problem". */
#ifndef CAUSTIC_IMPORT_JSON_INTERNAL_H
#define CAUSTIC_IMPORT_JSON_INTERNAL_H

#include <cjson/cJSON.h>
#include "caustic.h"
#include "import/import.h"
#include "import/params.h"
#include "scene/scene.h"

/* Limits that turn absurd input into clear errors instead of overflow or huge allocations. */
#define MAX_RES_SIDE     16384
#define MAX_RES_PIXELS   (1L << 26)
#define MAX_COORD        1e7 /* |TRANS|, |EYE|, quad corners: beyond this float precision is gone */
#define MAX_SCALE        1e7
#define MAX_ANGLE        1e6
#define MAX_MATRIX       1e7 /* |MATRIX| entries */
#define MAX_RADIANCE     1e7
#define MAX_SPP          CAUSTIC_MAX_SPP
#define MAX_DEPTH        1024
#define MAX_SCENE_FILE   (256L << 20)
#define SENSOR_HEIGHT_MM 36.0   /* FOCAL_LENGTH -> field of view convention (docs) */
#define MM_PER_UNIT      1000.0 /* FSTOP/FOCAL_LENGTH: one scene unit is one metre */

/* A mesh file already loaded by this scene: later objects with the same FILE and MATERIAL are
 * instances of it (its vertices are transformed again, the file is not re-read). */
typedef struct loaded_mesh {
    char *path;
    int material;
    size_t v0, nv, t0, nt;
    xform placed;
} loaded_mesh;

typedef struct loader {
    prm_ctx P; /* source name, error line, --strict, pending warnings */
    scene *s;
    loaded_mesh *meshes;
    size_t nmeshes;
    const char *base_dir;    /* relative FILE keys resolve against this; NULL = current dir */
    int camera_only;         /* scene_load_opts.camera_only */
    const cJSON *mesh_table; /* top-level "Meshes": name -> file */
    int default_material;    /* grey diffuse for objects without a usable MATERIAL, -1 until needed */
    char **tex_path;         /* image files loaded so far (canonical paths) and their textures: */
    int *tex_index;          /* a file named by several materials is decoded once */
    size_t ntex, cap_tex;
    char *tex_pending; /* the path being loaded: into tex_path once it loaded */
} loader;

/* ---- dialect keys (json_dialect.c) --------------------------------------------------------------
 * Course projects spell the same key many ways (FOCALDISTANCE, FOCAL_DISTANCE, "Focal Distance").
 * Each section has a table of caustic's keys with the other spellings that mean the same; keys are
 * matched after normalising (prm_normalise), renamed in place to caustic's spelling, and everything
 * else that parses the section sees only those. Unknown keys are dropped with one warning each (an
 * error with --strict), so is a recognised key caustic cannot honour. */
enum { WANT_ANY = 0, WANT_STRING = 1, WANT_NONSTRING = 2 };
typedef struct keyalias {
    const char *name;    /* caustic's spelling */
    const char *aliases; /* other spellings, normalised, '|'-separated (NULL: none) */
    const char *ignored; /* non-NULL: recognised but not supported; the warning says this */
    int exact;           /* only the exact spelling `name` (FOCAL_LENGTH is not FOCALLENGTH) */
    int want;            /* the value's JSON type decides between two meanings (DIFFUSE) */
} keyalias;

extern const keyalias json_root_keys[], json_material_keys[], json_camera_keys[], json_environment_keys[],
    json_object_keys[];

/* Material TYPE spellings. A row per kind of MATERIAL_KINDS, keyed by the kind's name (the TYPE
 * caustic writes), saying which of the material keys the kind reads; plus the dialect's rows that
 * are no kind: no TYPE (inferred from the keys) and known types caustic lacks (a diffuse stand-in
 * with a warning saying why). */
enum {
    JM_EMITS = 1,          /* RGB is radiance (any size), EMITTANCE defaults to 1, no TEXTURE */
    JM_IOR = 2,            /* reads IOR (checked > 0; a per-channel IOR warns) */
    JM_ALPHA = 4,          /* reads ROUGHNESS as GGX alpha = roughness^2 */
    JM_METALLIC = 8,       /* reads METALLIC */
    JM_PHONG_LOBE = 16,    /* requires SPECRGB and EXPONENT; RGB + SPECRGB at most 1 */
    JM_METAL_DEFAULT = 32, /* METALLIC defaults to 1 (a conductor) */
    JM_METAL_NAME = 64,    /* METAL (METALLIC) may be a string: a named conductor's complex IOR */
    JM_ETA_K = 128,        /* K is the extinction of a complex IOR with IOR (a number or RGB) as eta */
    JM_COAT = 256,         /* the coat keys: BASE, COAT_ROUGHNESS, COAT_RGB, COAT_ABSORPTION, COAT_THICKNESS */
    JM_TRANSMIT = 512,     /* reads TRANSMIT_RGB (without it RGB is split: half reflects, half transmits);
                              RGB + TRANSMIT_RGB at most 1 */
    JM_NO_COLOUR = 1024,   /* needs no RGB (Interface: no surface) */
    JM_PBR_LAYERS = 2048   /* SHEEN_RGB, SHEEN_ROUGHNESS, SPECULAR_WEIGHT, SPECULAR_TINT (materials/pbr.h) */
};
typedef struct json_material_row {
    const char *kind_name; /* a MATERIAL_KINDS name */
    const char *spellings; /* TYPE spellings (normalised, '|'-separated) */
    int reads;             /* JM_* */
} json_material_row;
/* JM_KIND_PROCEDURAL: the course's procedural materials (Marble, Wood, Noise): Diffuse with a
 * procedural texture of their two colours */
enum {
    JM_KIND_INFER = -2,
    JM_KIND_FALLBACK = -3,
    JM_KIND_UNKNOWN = -1,
    JM_KIND_PROCEDURAL = -4,
    JM_KIND_MEDIUM = -5,
    JM_KIND_SUBSURFACE = -6
};
/* The kind (MATERIAL_KINDS index) a normalised TYPE spelling names, JM_KIND_INFER,
 * JM_KIND_FALLBACK (*why says what caustic lacks) or JM_KIND_UNKNOWN. */
int json_material_kind(const char *tnorm, const json_material_row **row, const char **why);
/* The kind and row of a MATERIAL_KINDS name ("Diffuse"), or JM_KIND_UNKNOWN. */
int json_material_named(const char *kind_name, const json_material_row **row);
/* caustic's own TYPE names and the course's, for "did you mean" (NULL-terminated). */
extern const char *const json_material_type_names[];
/* 0 when every MATERIAL_KINDS kind has exactly one row and every row names a kind; otherwise -1
 * with the kind or row that is wrong in err (the tests run it). */
int json_material_table_check(char *err, size_t errlen);

enum { OT_CUBE, OT_SPHERE, OT_MESH, OT_QUAD, OT_PLANE };
extern const char *const json_object_types[];
extern const char *const json_object_type_aliases[];

int json_canonicalize(loader *L, cJSON *obj, const char *jpath, const char *dsec, const keyalias *tab);
/* Caustic's own extension sections (textures, Lights) have no dialects: their keys as they are. */
int json_check_keys(loader *L, cJSON *obj, const char *jpath, const char *dsec, const char *const *allowed);

/* ---- typed values (json_values.c) -------------------------------------------------------------- */
const cJSON *json_get(const cJSON *obj, const char *key);
const char *json_type(const cJSON *v);
int json_range(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, double *out);
int json_int(loader *L, const cJSON *v, const char *p, long lo, long hi, long *out);
int json_array(loader *L, const cJSON *v, const char *p, int n, double lo, int lo_open, double hi, double *out);
int json_vec3(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, vec3 *out);
int json_opt_vec3(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open, double hi,
                  vec3 *out);
int json_opt_number(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open, double hi,
                    double *out);
/* Optional number with a soft range (params.h): outside [lo, hi] it is clamped with one warning,
 * an error with --strict (a roughness sweep that includes -0.5). */
int json_opt_soft(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, double hi, double *out);
int json_string(loader *L, const cJSON *v, const char *p, const char **out);
int json_missing(loader *L, const char *jpath, const char *key);
int json_enum(loader *L, const cJSON *v, const char *p, const char *what, const char *const *names);
int json_colour(loader *L, const cJSON *v, const char *p, double hi, vec3 *out);
int json_flag(loader *L, const cJSON *v, const char *p, int *out);
/* MATRIX: 16 numbers, a row-major 4x4 affine matrix (last row 0 0 0 1), composed after *m
 * (*m = MATRIX * *m). */
int json_matrix(loader *L, const cJSON *v, const char *jpath, xform *m);
char *json_resolve_path(const loader *L, const char *file);

/* ---- textures and materials (json_material.c) -------------------------------------------------- */
int json_texture(loader *L, cJSON *t, const char *jpath, int *out_index);
int json_env_map(loader *L, const cJSON *node, const char *jp);
int json_materials(loader *L, cJSON *ms);
int json_default_material(loader *L);

/* ---- participating media (json_media.c) --------------------------------------------------------- */
/* The top-level "Media" section: name -> medium. */
int json_media(loader *L, cJSON *ms);
/* obj's medium key `key` (a name in Media; absent, null or "": the vacuum) as a medium reference
 * (index + 1, 0 the vacuum). */
int json_medium_ref(loader *L, const cJSON *obj, const char *jpath, const char *key, int *ref);
/* A course's volume material (TYPE Fog, Smoke, Volume, Medium; JM_KIND_MEDIUM): a medium named
 * `name` from its SIGMA_A, SIGMA_S, G (EMITTANCE times RGB: its emission), and an Interface material
 * of that name with the medium inside, so that every object using it is filled with it. */
int json_volume_material(loader *L, const char *name, const cJSON *m, const char *jpath);
/* A subsurface material (TYPE Subsurface, SSS, Skin, Wax; JM_KIND_SUBSURFACE): a dielectric
 * boundary (IOR, ROUGHNESS: RoughGlass when rough) with a homogeneous medium inside, named `name`
 * as the material, from RGB (the subsurface albedo) and RADIUS (the mean free path, per channel;
 * src/scene/material.h states the inversion), or from SIGMA_A / SIGMA_S; G its phase. 1 when the
 * material gives neither (the caller renders it as Diffuse with a warning), 0 done, -1 an error. */
int json_subsurface_material(loader *L, const char *name, const cJSON *m, const char *jpath);

/* The "Camera" section (json_camera.c). */
int json_parse_camera(loader *L, cJSON *cam);
/* Sets PATH of root to VALUE, one -D PATH=VALUE (scene_load_opts.defines; json_defines.c). Every
 * step but the last must exist (a did-you-mean where it does not); the last is replaced or added. */
int json_apply_define(loader *L, cJSON *root, const char *def);

#endif
