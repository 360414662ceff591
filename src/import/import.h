/* The import layer: every reader of scene files and models, chosen from one table of formats
 * (formats.c). A reader fills a host scene (scene/scene.h) through its builders; bad input is one
 * line naming the file and the place (JSON path, or FILE:LINE), never half a scene. The parameter
 * diagnostics every reader shares are in import/params.h; how to add a format is
 * docs/extending.md ("A scene format"). */
#ifndef CAUSTIC_IMPORT_H
#define CAUSTIC_IMPORT_H

#include <stddef.h>
#include "scene/scene.h"

/* How scene files are read: warn receives warnings (one line each, deduplicated per key); strict
 * turns every warning into an error. */
typedef struct scene_load_opts {
    int strict;
    scene_warn_fn warn;
    void *warn_user;
    char **json_out; /* if set: receives the scene as caustic JSON (malloc'd; the input itself
                          for JSON files, the converted scene for the course's text format and
                          for quick-look models) */
    int camera_only; /* JSON: read the "Camera" object alone (a camera file: the viewer's) */
    /* "PATH=VALUE" overrides (caustic render -D) applied to the JSON before it is read: PATH as
     * the loader's messages name keys (Camera.RES, Materials.light.EMITTANCE, Objects[2].TRANS),
     * VALUE JSON or else a string. A key the loader does not know is an error, not a warning. With
     * json_out, the scene handed out is the overridden one. */
    const char *const *defines;
    int ndefines;
    /* set to 1 (where not NULL) by a reader that takes the -D list as its own parameters rather
     * than JSON paths (Mitsuba XML's $name): then no JSON needs to come back for them */
    int *defines_taken;
} scene_load_opts;

/* ---- the table of formats (formats.c) ---------------------------------------------------------- */
/* A file as the readers see it: its path and directory, and its bytes (NUL-terminated; they may
 * hold NULs, size says how many). */
typedef struct scene_source {
    const char *path;
    const char *dir; /* relative names in the file resolve against this (NULL: the current dir) */
    const char *text;
    size_t size;
} scene_source;

/* How sure a format is that a file is its own (the highest wins; ties go to the earlier row). */
enum {
    FORMAT_NO = 0,
    FORMAT_EXT_WEAK = 10,       /* an extension other formats share (.txt, .xml, .json) */
    FORMAT_CONTENT = 20,        /* the first word reads like it */
    FORMAT_CONTENT_STRONG = 30, /* the first bytes say so ('{', "<scene", a block word) */
    FORMAT_SURE = 40            /* a magic number, or an extension only it has */
};

typedef struct scene_format {
    const char *name;       /* for messages: "this is a NAME scene" ("pbrt", "Mitsuba XML") */
    const char *extensions; /* "|"-separated, lower case, with the dot: ".pbrt|.pbrt.gz" */
    /* FORMAT_* for this file (head: its first bytes, n of them) */
    int (*detect)(const char *path, const char *head, size_t n);
    /* the whole scene; NULL: recognised and refused with `refusal` */
    int (*load)(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);
    /* a model placed into a scene (a JSON mesh object's FILE); NULL: not a mesh format */
    int (*load_mesh)(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);
    const char *refusal; /* why `load` is NULL ("not yet: issue 39") */
} scene_format;

/* The table, NULL-terminated by a row with name NULL. */
const scene_format *scene_formats(void);
/* The format of a file from its path and first bytes; never NULL (unknown text reads as JSON, so
 * that the message is JSON's syntax error with a line). */
const scene_format *scene_format_detect(const char *path, const char *head, size_t n);
/* The format whose extension `path` has, or NULL. */
const scene_format *scene_format_by_extension(const char *path);

/* Any scene file: chosen from the table, loaded by its row (JSON, the CIS 565 text format, a model
 * for a quick look, glTF), or refused with a message naming the format. */
int scene_load_file(scene **out, const char *path, const scene_load_opts *opts, char *err, size_t errlen);
/* Writes scene JSON text to path atomically (a temporary file renamed over it). */
int scene_dump_json(const char *path, const char *json, char *err, size_t errlen);
/* A scene that a reader built directly (pbrt-v4, Mitsuba XML, glTF with its own lights) as caustic
 * JSON (malloc'd in *out), its image textures written as PFM files next to json_path
 * (scene_json_out.c). -1 with one message for what caustic's JSON has no key for. */
int scene_to_json(const scene *s, const char *json_path, char **out, char *err, size_t errlen);
/* Meshes by file extension, through the table's load_mesh: the one place a mesh file reaches its
 * reader. */
int scene_load_mesh_file(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);
/* A quick-look scene for a model file: caustic JSON with a camera framing bounds lo..hi (or the
 * model file's own camera, cam, where it is not NULL), a grey environment, a key light and a
 * ground plane (malloc'd). */
char *scene_quicklook_json(const char *model_path, int is_ply, vec3 lo, vec3 hi, const camera_desc *cam);

/* ---- field of view ------------------------------------------------------------------------------
 * caustic has one convention: the FULL vertical field of view in degrees (camera_desc.fovy_deg,
 * caustic_camera.fov_y, glTF's yfov, the kernel's tan_half_fovy = tan(full / 2)). Scene JSON's
 * FOVY key (and the course's text format) is the CIS 565 course's HALF angle: its code takes
 * tan(FOVY) as the half height of the image plane. Readers and writers of FOVY convert here and
 * nowhere else. */
static inline double json_fovy_to_full(double fovy_half) { return 2.0 * fovy_half; }
static inline double json_fovy_from_full(double fov_full) { return 0.5 * fov_full; }

/* ---- JSON (json_scene.c and its parts) ---------------------------------------------------------- */
/* The JSON loader with options (NULL = strict, no warning sink: every dialect mapping that
 * would warn is an error, as the functions below do). */
int scene_load_json_text_opts(scene **out, const char *text, const char *source_name, const char *base_dir,
                              const scene_load_opts *opts, char *err, size_t errlen);
int scene_load_json_file(scene **out, const char *path, char *err, size_t errlen);
int scene_load_json_text(scene **out, const char *text, const char *source_name, const char *base_dir, char *err,
                         size_t errlen);

/* ---- the CIS 565 text format (scene_text.c) ----------------------------------------------------- */
/* MATERIAL/CAMERA/OBJECT blocks converted to caustic JSON (malloc'd); relative file names become
 * relative to base_dir. Returns NULL with a "FILE:LINE: problem" message on malformed input. */
char *scene_text_to_json(const char *text, size_t size, const char *source_name, const char *base_dir, char *err,
                         size_t errlen);

/* ---- PLY (ply.c) -------------------------------------------------------------------------------- */
/* ascii / binary_little_endian / binary_big_endian 1.0; fan-triangulated. */
int scene_load_ply(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);
/* Same, from a buffer; `name` stands in for the path in messages (fuzzing). */
int scene_load_ply_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                          char *err, size_t errlen);

/* ---- NanoVDB and OpenVDB grids (nvdb.c, openvdb.cpp) ---------------------------------------------- */
/* A NanoVDB grid medium `name` (MEDIUM_NANOVDB) with md's coefficients (per unit density), g and
 * emission, over the float grid grid_name (NULL: "density") of the .nvdb file at path, or of the
 * OpenVDB .vdb file there converted to NanoVDB on load; placed by box ([x0,y0,z0,x1,y1,z1]: the
 * world box of the grid's active index box) or, with box NULL, by the grid's own index-to-world
 * map. -1 with one message naming the file, nothing kept. */
int nvdb_grid_medium(scene *s, const char *name, medium md, const char *path, const char *grid_name, const double *box,
                     char *err, size_t errlen);
/* The same over one grid's bytes in memory (a NanoVDB GridData buffer; file names messages). */
int nvdb_grid_medium_memory(scene *s, const char *name, medium md, const unsigned char *grid_bytes, size_t size,
                            const char *file, const double *box, char *err, size_t errlen);
/* Where the float grid grid_name (NULL: "density") of an .nvdb file's bytes lies: *off, *size. */
int nvdb_find_grid(const unsigned char *data, size_t n, const char *file, const char *grid_name, size_t *off,
                   size_t *size, char *err, size_t errlen);
/* OpenVDB's float grid grid_name of the .vdb at path as one NanoVDB grid's bytes (*data: malloc'd,
 * *n bytes). Without OpenVDB (CAUSTIC_OPENVDB off or libopenvdb-dev missing) it says so. */
int openvdb_to_nanovdb(const char *path, const char *grid_name, unsigned char **data, size_t *n, char *err,
                       size_t errlen);

/* ---- Mitsuba's .vol grids (vol.c) ---------------------------------------------------------------- */
typedef struct vol_header {
    uint32_t res[3], channels;
    float bbox[6];   /* xmin ymin zmin xmax ymax zmax, as the file has it */
    size_t nvalues;  /* res[0] * res[1] * res[2] * channels */
    uint32_t offset; /* where the values went in s->voxels */
} vol_header;
/* Reads a .vol grid (header 'VOL' 3, encoding 1: float32) into s's voxels (scene_reserve_voxels),
 * values finite and >= 0; -1 with one message "path: ..." and s->nvoxels unchanged. */
int vol_load(scene *s, const char *path, vol_header *h, char *err, size_t errlen);
/* The same from a buffer; `name` stands in for the path in messages (fuzzing, tests). */
int vol_load_memory(scene *s, const void *data, size_t size, const char *name, vol_header *h, char *err, size_t errlen);
/* A grid medium `name` with md's coefficients (per unit density), g and emission, over the .vol
 * density grid at density_path (and the RGB albedo grid at albedo_path, or NULL), placed as
 * Mitsuba 3's gridvolume: to_world (NULL: identity) maps the unit cube to the world, after the
 * file's bounding box is mapped to the unit cube where use_grid_bbox. -1 with one message. */
int vol_grid_medium(scene *s, const char *name, medium md, const char *density_path, const char *albedo_path,
                    const xform *to_world, int use_grid_bbox, char *err, size_t errlen);
/* Writes one (tests and tools). */
int vol_write(const char *path, const uint32_t res[3], uint32_t channels, const float bbox[6], const float *v,
              char *err, size_t errlen);

/* ---- glTF 2.0 (gltf.cpp through tinygltf; gltf_stub.c where caustic was built without it) ------
 * scene_load_gltf adds the triangle meshes of a .gltf/.glb file's default scene under `to_world`:
 * with material >= 0 every triangle uses it, with -1 the file's own materials are imported (as
 * MAT_PBR / MAT_ROUGH_GLASS named "PATH#INDEX", reused when the file is placed again). flags:
 * GLTF_CAMERA sets s->camera from the first perspective camera, GLTF_LIGHTS adds its
 * KHR_lights_punctual lights. Missing textures give a warning on stderr. Returns 0, or -1 with a
 * one-line message starting with the path; on failure nothing is left in the scene. */
enum { GLTF_CAMERA = 1, GLTF_LIGHTS = 2 };
int scene_gltf_supported(void); /* 0 in builds without tinygltf */
int scene_load_gltf(scene *s, const char *path, xform to_world, int material, int flags, char *err, size_t errlen);
/* The same from memory (fuzzing): external files are not read; `name` stands in for the path. */
int scene_load_gltf_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                           int flags, char *err, size_t errlen);
/* A whole scene from a glTF file: its meshes, materials, first camera (or one framing the model
 * from +z when it has none) and lights (or, without KHR_lights_punctual lights, a white
 * environment of radiance 1); 800 pixels wide. */
int scene_load_gltf_scene(scene **out, const char *path, char *err, size_t errlen);
/* ... and whether the file has punctual lights (*lit) and a camera (*has_camera) (either may be
 * NULL): without lights, scene_load_file gives the model the quick look's rig instead. */
int scene_load_gltf_scene_ex(scene **out, const char *path, int *lit, int *has_camera, char *err, size_t errlen);

/* ---- Mitsuba XML (mitsuba.c, mitsuba_xml.c; through libexpat) ------------------------------------
 * A Mitsuba 3 scene (0.5/0.6 files upgraded) through the builders; opts->defines are its $name
 * parameters (-D name=value). The table's load function for .xml files. */
int mitsuba_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);

/* ---- OBJ (obj.c, mtl.c; options in import/mtl.h) ------------------------------------------------ */
/* Loads triangles (fan-triangulated) into the scene. */
int scene_load_obj(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);

#endif
