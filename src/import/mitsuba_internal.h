/* The Mitsuba XML reader's parts (mitsuba_xml.c: the document as a tree; mitsuba.c: the scene).
 *
 * Why libexpat: it is small (one C library, no dependencies), streaming, reports the line of every
 * element (XML_GetCurrentLineNumber, which every message of the reader names), and Debian keeps it
 * (libexpat1-dev, security-maintained, already on every system that has Python). libxml2 would do
 * as well but brings a DOM, XPath and network code that a scene reader does not need. */
#ifndef CAUSTIC_IMPORT_MITSUBA_INTERNAL_H
#define CAUSTIC_IMPORT_MITSUBA_INTERNAL_H

#include <stddef.h>
#include "import/params.h"

typedef struct mx_node {
    char *tag;   /* element name (after the 0.x upgrade: "lookat", snake_case names) */
    char **attr; /* name, value, name, value ... ($name substituted) */
    int nattr;
    struct mx_node **kids;
    int nkids, cap;
    struct mx_node *parent;
    const char *file; /* the file it was read from (owned by the document) */
    long line;
    int used; /* a property some plugin looked up */
} mx_node;

typedef struct mx_doc {
    mx_node *root;
    char **files; /* every file read (include), for messages */
    int nfiles;
    /* name=value parameters: -D first (they win over <default>), then <default> in file order */
    char **pname, **pvalue;
    int nparams, ndefines; /* the first ndefines came from -D */
    unsigned char *pused;  /* per parameter: some $name used it */
    char **search;         /* <path value=...> folders, then the scene's own */
    int nsearch;
    int nincludes;
    int version_major, version_minor;
} mx_doc;

/* Reads PATH (text, size: its bytes) into doc: includes spliced in, defaults and $name substituted,
 * 0.x names upgraded. defines are "name=value" (caustic render -D); with line_format set in c,
 * errors are "FILE:LINE: problem". Returns 0 or -1 (prm_fail). */
int mx_read(mx_doc *doc, prm_ctx *c, const char *path, const char *text, size_t size, const char *const *defines,
            int ndefines);
void mx_free(mx_doc *doc);
/* The -D names no $name of the document used (NULL when all were): one warning each. */
const char *mx_unused_define(const mx_doc *doc, int *cursor);
const char *mx_attr(const mx_node *n, const char *name);
/* The line of a node as the where-string of params.h messages, with c's file set to the node's
 * (an included file is named as itself: "inc.xml:6: ..."). */
void mx_where(prm_ctx *c, char out[PRM_WHERE], const mx_node *n);
/* A file named by the scene: absolute, or relative to the folders of <path> and the scene's.
 * Returns a malloc'd path (the first that exists; else the scene-relative one). */
char *mx_resolve(const mx_doc *doc, const mx_node *at, const char *name);
/* Whether libexpat is compiled in (0: the reader refuses with a message naming libexpat1-dev). */
int mx_available(void);

/* ---- the scene reader (mitsuba.c and the files by job: mitsuba_props.c, mitsuba_bsdf.c,
 * mitsuba_shapes.c, mitsuba_media.c, mitsuba_emitters.c, mitsuba_sensor.c) ---- */
#include "import/import.h"
#include "scene/material.h"

#define MI_PI             3.14159265358979323846
#define MI_MAX_NEST       64 /* nested bsdfs / shapegroups */
#define MI_SEGMENTS       64 /* disk and cylinder tessellation */
#define MI_MAX_SERIALIZED (1LL << 31)

typedef struct mi_bsdf {
    const mx_node *node;
    int kind, skip; /* skip: a `null` BSDF (the shape is left out) */
    material_params p;
    int mat; /* scene material, -1 until a shape without emission uses it */
} mi_bsdf;

typedef struct mi_tex {
    const mx_node *node;
    int index;
    vec3 mean;
} mi_tex;

struct id_entry;
typedef struct reader {
    prm_ctx P;
    mx_doc D;
    scene *s;
    mi_bsdf *bsdfs;
    size_t nbsdfs, capb;
    mi_tex *texs;
    size_t ntexs, capt;
    int default_mat, nemit, tex_depth;
    struct id_entry *ids;
    size_t nids;
    size_t nshapes, ninstances;
    /* shapegroups made meshes (true instancing): the group and its scene mesh */
    struct mi_group {
        const mx_node *g;
        int mesh; /* -1: empty (no triangles) */
    } * groups;
    size_t ngroups, capgroups;
    /* media: each <medium> node read once (its caustic reference, 0 rendered without it) */
    const mx_node **med_nodes;
    int *med_refs;
    size_t nmed;
    int interface_mat;  /* the Interface material of null-BSDF medium boundaries (-1 until used) */
    int shape_boundary; /* the shape being added bounds media: a null BSDF makes it an Interface */
} reader;

#define FAIL(R, n, ...)                                                                                                \
    do {                                                                                                               \
        char w_[PRM_WHERE];                                                                                            \
        mx_where(&(R)->P, w_, (n));                                                                                    \
        return prm_fail(&(R)->P, w_, __VA_ARGS__);                                                                     \
    } while (0)

/* A warning about node n, deduplicated per `key` (the count is the coverage summary). */
int mi_warn_at(reader *R, const mx_node *n, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* mitsuba.c */
int mi_deref(reader *R, const mx_node *ref, const mx_node **out);
void mi_mark_all(const mx_node *n);
/* mitsuba_props.c */
int mi_colour_of(reader *R, const mx_node *p, vec3 *out);
int mi_get_bool(reader *R, const mx_node *n, const char *name, int def, int *out);
int mi_get_float(reader *R, const mx_node *n, const char *name, double def, double *out);
int mi_get_int(reader *R, const mx_node *n, const char *name, long def, long *out);
int mi_get_point(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *out);
const char *mi_get_string(const mx_node *n, const char *name, const char *def);
int mi_get_transform(reader *R, const mx_node *n, const char *name, xform *out);
int mi_num_attr(reader *R, const mx_node *n, const char *attr, double *out);
int mi_parse_numbers(const char *s, double *out, int max);
mx_node *mi_prop(const mx_node *n, const char *name);
double mi_xf_det(const xform *x);
/* mitsuba_bsdf.c */
mi_bsdf *mi_bsdf_get(reader *R, const mx_node *b);
int mi_get_colour_tex(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *rgb, int *tex);
int mi_texture_of(reader *R, const mx_node *t, int *index, vec3 *mean);
/* mitsuba_shapes.c */
int mi_add_shape(reader *R, const mx_node *sh, xform parent, int depth);
/* mitsuba_media.c */
int mi_medium_of(reader *R, const mx_node *n, int *ref);
int mi_shape_media(reader *R, const mx_node *sh, int *in, int *out);
/* mitsuba_emitters.c */
int mi_add_emitter(reader *R, const mx_node *e);
int mi_emitter_radiance(reader *R, const mx_node *e, vec3 *rgb, int *tex);
/* mitsuba_sensor.c */
int mi_read_integrator(reader *R, const mx_node *in);
int mi_read_sensor(reader *R, const mx_node *sn);

#endif
