/* The pbrt-v4 reader's parts, one job a file:
 *   pbrt.c            the load, directive dispatch, graphics state and transforms;
 *   pbrt_params.c     parameter lists ("type name" [values]), and colours, spectra and floats read from them;
 *   pbrt_materials.c  the material table, named materials, textures, a shape's caustic material;
 *   pbrt_media.c      MakeNamedMedium: homogeneous and grid media;
 *   pbrt_shapes.c     the Shape directive, and pbrt's shapes made triangles;
 *   pbrt_lights.c     LightSource and AreaLightSource, the environment map;
 *   pbrt_camera.c     Camera, Film, Sampler, Integrator, and the camera's world (the mirror);
 *   pbrt_lex.c        files (Include/Import, gzip) split into tokens that know their file and line;
 *   pbrt_spectrum.c   spectra turned into RGB. */
#ifndef CAUSTIC_IMPORT_PBRT_INTERNAL_H
#define CAUSTIC_IMPORT_PBRT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "import/params.h"
#include "import/import.h"
#include "scene/material.h"

#include <stdlib.h>
#include <string.h>

/* The reader (pbrt.c): the format table's load function for pbrt-v4 files (import.h). */
struct scene_source;
struct scene_load_opts;
int pbrt_load(scene **out, const struct scene_source *src, const struct scene_load_opts *opts, char *err,
              size_t errlen);

/* ---- tokens (pbrt_lex.c) ------------------------------------------------------------------------ */
typedef enum { PTK_EOF, PTK_WORD, PTK_STRING, PTK_NUMBER, PTK_LBRACK, PTK_RBRACK } pbrt_tok_type;
typedef struct pbrt_token {
    pbrt_tok_type type;
    const char *text; /* WORD, STRING (no quotes): points into the file's text, len bytes */
    size_t len;
    double num;       /* NUMBER */
    const char *file; /* the file it came from (lives as long as the lexer) */
    int line;
} pbrt_token;

#define PBRT_MAX_DEPTH 32
typedef struct pbrt_src {
    char *name; /* as messages name it */
    char *dir;  /* relative names in it resolve against this */
    char *text;
    size_t size, pos;
    int line;
    int owned; /* text is ours to free */
} pbrt_src;

typedef struct pbrt_lexer {
    prm_ctx *ctx;
    pbrt_src stack[PBRT_MAX_DEPTH];
    int depth;
    /* every file name ever opened and the text of every file that has ended (tokens point at them) */
    char **names;
    size_t nnames;
    pbrt_token peeked;
    int has_peek;
    size_t bytes_read; /* all files together, against PBRT_MAX_BYTES */
} pbrt_lexer;

#define PBRT_MAX_BYTES (1024LL << 20)

/* A file's bytes, gunzipped when they are gzip (.gz or its magic): malloc'd, NUL-terminated, or
 * NULL with why. */
char *pbrt_read_file(const char *path, size_t max, size_t *n, char *why, size_t whylen);
/* The lexer over the top file (text is not copied and must outlive it; name and dir are). */
int pbrt_lex_init(pbrt_lexer *lx, prm_ctx *ctx, const char *name, const char *dir, const char *text, size_t size);
void pbrt_lex_free(pbrt_lexer *lx);
/* Include: tokens now come from `path` (relative to the including file's folder) until it ends.
 * where: the Include's token. Returns 0 or -1 (message set). */
int pbrt_lex_push(pbrt_lexer *lx, const char *path, const pbrt_token *where);
/* The next token (PTK_EOF at the end of the top file); -1 with a message on bad input. */
int pbrt_lex_next(pbrt_lexer *lx, pbrt_token *t);
int pbrt_lex_peek(pbrt_lexer *lx, pbrt_token *t);
/* path resolved against the folder of the file the token came from (malloc'd). */
char *pbrt_resolve(const pbrt_lexer *lx, const pbrt_token *where, const char *path);
/* "LINE" of a token, for prm_* (and ctx->src set to its file). */
void pbrt_where(pbrt_lexer *lx, const pbrt_token *t, char out[PRM_WHERE]);

/* ---- spectra (pbrt_spectrum.c) ------------------------------------------------------------------ */
/* Linear sRGB of a spectral power distribution given as (lambda nm, value) pairs, n pairs. */
vec3 pbrt_spd_to_rgb(const double *lambda, const double *value, size_t n);
/* A reflectance-like spectrum (pairs) as RGB: its mean over each of three bands. */
vec3 pbrt_reflectance_to_rgb(const double *lambda, const double *value, size_t n);
/* Blackbody emission at temperature T kelvin, as RGB with luminance Y = 1. */
vec3 pbrt_blackbody_rgb(double T);
/* Luminance Y of linear sRGB. */
double pbrt_luminance(vec3 c);
/* pbrt-v4's named spectra: 0 and *rgb set for a known name (illuminants: luminance 1; metal eta/k
 * and glass IORs: their values at 650/550/450 nm), -1 otherwise. *is_ior for glass-* names. */
int pbrt_named_spectrum(const char *name, vec3 *rgb);
/* The Abbe number V_d of a pbrt glass-* spectrum where caustic knows it (-1: not), for a
 * dispersive dielectric (a Cauchy glass through the d-line IOR, kernel/spectral.h). */
int pbrt_glass_abbe(const char *name, double *abbe);
/* Normal-incidence reflectance of a named metal ("Cu" of metal-Cu-eta), -1 when unknown. */
int pbrt_metal_f0(const char *metal, vec3 *f0);

/* ---- shapes (pbrt_shapes.c) --------------------------------------------------------------------- */
typedef struct pbrt_mesh {
    vec3 *p, *n; /* n may be NULL */
    vec2 *uv;    /* may be NULL */
    uint32_t *idx;
    size_t nv, nt;
} pbrt_mesh;
void pbrt_mesh_free(pbrt_mesh *m);
/* Quadric surfaces of revolution around z, tessellated (nphi segments round a full circle):
 * sphere (radius, zmin, zmax, phimax degrees), cylinder, disk (height, radius, inner radius).
 * Geometric normals (counter-clockwise winding) face outwards / along +z. 0 or -1 (memory). */
int pbrt_tess_sphere(pbrt_mesh *m, double r, double zmin, double zmax, double phimax, int nphi);
int pbrt_tess_cylinder(pbrt_mesh *m, double r, double zmin, double zmax, double phimax, int nphi);
int pbrt_tess_disk(pbrt_mesh *m, double h, double r, double ri, double phimax, int nphi);
/* Loop subdivision (levels times), smooth normals of the limit-ish surface. 0 or -1 (memory). */
int pbrt_loop_subdivide(pbrt_mesh *m, int levels);

/* ---- the reader's state ------------------------------------------------------------------------- */
#define PI_D          3.14159265358979323846
#define MAX_TRIANGLES (1u << 30)
#define MAX_LEVELS    8

/* ---- 4x4 matrices (double: pbrt scenes chain many transforms) ------------------------------------ */
typedef struct m4 {
    double m[4][4];
} m4;

static inline m4 m4_id(void) {
    m4 r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 4; ++i) r.m[i][i] = 1.0;
    return r;
}
static inline m4 m4_mul(const m4 *a, const m4 *b) {
    m4 r;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += a->m[i][k] * b->m[k][j];
            r.m[i][j] = s;
        }
    return r;
}
static inline int m4_inv(const m4 *a, m4 *out) {
    double w[4][8];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) w[i][j] = j < 4 ? a->m[i][j] : (j - 4 == i);
    for (int c = 0; c < 4; ++c) {
        int piv = c;
        for (int r = c + 1; r < 4; ++r)
            if (fabs(w[r][c]) > fabs(w[piv][c])) piv = r;
        if (!(fabs(w[piv][c]) > 1e-300)) return -1;
        for (int j = 0; j < 8; ++j) {
            double t = w[c][j];
            w[c][j] = w[piv][j];
            w[piv][j] = t;
        }
        double d = w[c][c];
        for (int j = 0; j < 8; ++j) w[c][j] /= d;
        for (int r = 0; r < 4; ++r)
            if (r != c) {
                double f = w[r][c];
                for (int j = 0; j < 8; ++j) w[r][j] -= f * w[c][j];
            }
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) out->m[i][j] = w[i][j + 4];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            if (!isfinite(out->m[i][j])) return -1;
    return 0;
}
static inline double m4_det3(const m4 *a) {
    const double(*m)[4] = a->m;
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
static inline void m4_point(const m4 *a, const double p[3], double out[3]) {
    double r[4];
    for (int i = 0; i < 4; ++i) r[i] = a->m[i][0] * p[0] + a->m[i][1] * p[1] + a->m[i][2] * p[2] + a->m[i][3];
    double w = r[3] != 0 ? r[3] : 1.0;
    for (int i = 0; i < 3; ++i) out[i] = r[i] / w;
}
static inline void m4_vector(const m4 *a, const double v[3], double out[3]) {
    for (int i = 0; i < 3; ++i) out[i] = a->m[i][0] * v[0] + a->m[i][1] * v[1] + a->m[i][2] * v[2];
}
static inline vec3 dv(const double d[3]) { return v3((float)d[0], (float)d[1], (float)d[2]); }
static inline m4 m4_translate(double x, double y, double z) {
    m4 r = m4_id();
    r.m[0][3] = x, r.m[1][3] = y, r.m[2][3] = z;
    return r;
}
static inline m4 m4_scale(double x, double y, double z) {
    m4 r = m4_id();
    r.m[0][0] = x, r.m[1][1] = y, r.m[2][2] = z;
    return r;
}
static inline m4 m4_rotate(double deg, double x, double y, double z) {
    double l = sqrt(x * x + y * y + z * z);
    m4 r = m4_id();
    if (!(l > 0)) return r;
    x /= l, y /= l, z /= l;
    double s = sin(deg * PI_D / 180.0), c = cos(deg * PI_D / 180.0);
    r.m[0][0] = x * x + (1 - x * x) * c;
    r.m[0][1] = x * y * (1 - c) - z * s;
    r.m[0][2] = x * z * (1 - c) + y * s;
    r.m[1][0] = x * y * (1 - c) + z * s;
    r.m[1][1] = y * y + (1 - y * y) * c;
    r.m[1][2] = y * z * (1 - c) - x * s;
    r.m[2][0] = x * z * (1 - c) - y * s;
    r.m[2][1] = y * z * (1 - c) + x * s;
    r.m[2][2] = z * z + (1 - z * z) * c;
    return r;
}
static inline void d_cross(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static inline double d_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline int d_norm(double a[3]) {
    double l = sqrt(d_dot(a, a));
    if (!(l > 0) || !isfinite(l)) return -1;
    for (int i = 0; i < 3; ++i) a[i] /= l;
    return 0;
}
static inline xform m4_xform(const m4 *a) {
    xform x;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) x.m[i][j] = (float)a->m[i][j];
    return x;
}

/* ---- the reader's state ---------------------------------------------------------------------------- */
typedef struct pmat { /* a pbrt material, resolved when it was defined */
    char *name;       /* named materials; NULL for anonymous ones */
    material_kind kind;
    material_params p;
    int interface; /* no surface (pbrt's "interface"): rays pass */
    int sss;       /* subsurface: the medium inside its dielectric (a medium reference; 0 none) */
} pmat;

typedef enum { PT_CONST, PT_IMAGE, PT_CHECKER, PT_OTHER } ptex_kind;
typedef struct ptex {
    char *name;
    int is_float;
    ptex_kind kind;
    vec3 value;   /* PT_CONST: the value; PT_IMAGE: its scale; PT_OTHER: the stand-in */
    int tex;      /* caustic texture (PT_IMAGE, PT_CHECKER) */
    float factor; /* PT_IMAGE of a float texture: what multiplies its texels (a bump map's scale) */
} ptex;

typedef struct derived { /* a caustic material: a pbrt material with a shape's emission, alpha and media */
    int pm;
    vec3 L;
    int two_sided, alpha_tex, index, med_in, med_out;
} derived;

typedef struct gstate {
    m4 ctm;
    int rev;
    int material; /* index into pmats */
    int area;     /* an AreaLightSource is active */
    vec3 area_L;
    int area_two_sided;
    double area_power;
    char *area_where;
    int med_in, med_out; /* MediumInterface: the media inside and outside shapes (references, 0 the vacuum) */
} gstate;

typedef struct named_m4 {
    char *name;
    m4 m;
} named_m4;

typedef struct pobject { /* ObjectBegin: triangles in world space (before the mirror) */
    char *name;
    vec3 *p, *n;
    vec2 *uv;
    uint32_t *idx;
    int *mat;
    size_t nv, nt, capv, capt;
    int mesh; /* the scene's mesh of it + 1 (scene_add_instanced_mesh, at the first instance); 0: none yet */
} pobject;

typedef struct R {
    prm_ctx ctx;
    pbrt_lexer lx;
    scene *s;
    const scene_load_opts *opts;
    gstate g;
    gstate *stack;
    size_t nstack, capstack;
    int world; /* after WorldBegin */
    m4 mirror; /* world -> caustic (identity or the mirror through the camera's plane) */
    int mirrored;
    /* camera */
    m4 cam_from_world;
    int have_camera;
    char *cam_type;
    double fov, lensradius, focaldistance, screen_half; /* screen_half: orthographic screen window */
    int width, height;
    double imaging_ratio;
    /* tables */
    pmat *pmats;
    size_t npmats, cappmats;
    ptex *ptexs;
    size_t nptexs, capptexs;
    derived *ders;
    size_t nders, capders;
    named_m4 *coords;
    size_t ncoords, capcoords;
    char **media;   /* MakeNamedMedium's names */
    int *media_ref; /* each one's caustic medium reference (0: rendered without it) */
    size_t nmedia;
    int cam_medium; /* the camera's medium: the MediumInterface's outside at Camera */
    pobject *objects;
    size_t nobjects, capobjects;
    pobject *cur_object;
    /* environment */
    int env_images;
    vec3 env_const;
    size_t nlights;
} R;

static inline int grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *g = realloc(*p, nc * size);
    if (!g) return -1;
    *p = g;
    *cap = nc;
    return 0;
}
#define GROW(arr, n, cap) grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr))

static inline char *sdup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static inline int oom(R *r, const char *where) { return prm_fail(&r->ctx, where, "out of memory"); }

/* a warning about something caustic does not have: one line per feature, counted */
#define UNSUPPORTED(r, key, where, ...) prm_warn(&(r)->ctx, key, where, __VA_ARGS__)

/* ---- parameter lists ------------------------------------------------------------------------------- */
typedef struct plist {
    prm_list l;
    char (*types)[16]; /* pbrt's type of each parameter, as l.v */
    char owner[96];
    char where[PRM_WHERE];
} plist;

static inline m4 final_m4(const R *r) { return m4_mul(&r->mirror, &r->g.ctm); }

/* ---- what the directive files share (the reader's state R above) ----------------------------------- */
/* pbrt_params.c */
void pbrt_plist_free(plist *pl);
const char *pbrt_ptype(const plist *pl, const char *name);
prm_value *pbrt_pfind(plist *pl, const char *name);
const double *pbrt_pnums(R *r, plist *pl, const char *name, size_t *n);
int pbrt_tok_is_word(const pbrt_token *t, const char *w);
int pbrt_parse_params(R *r, plist *pl, const char *owner, const pbrt_token *at);
/* The quoted type after a directive (Camera, Shape, LightSource, Material, Film, ...) and the
 * parameter list after it, named `noun "type"` in messages; w is set to the directive's place. */
int pbrt_typed_params(R *r, const pbrt_token *at, const char *directive, const char *noun, char type[64], plist *pl,
                      char w[PRM_WHERE]);
int pbrt_finish_params(R *r, plist *pl);
ptex *pbrt_find_tex(R *r, const char *name, int is_float);
int pbrt_get_color(R *r, plist *pl, const char *name, vec3 def, int illum, vec3 *out, int *tex);
int pbrt_get_float(R *r, plist *pl, const char *name, double def, double lo, double hi, double *out);
/* pbrt_materials.c */
int pbrt_find_named_material(R *r, const char *name);
int pbrt_make_material(R *r, const char *type, plist *pl, const char *name, const char *where);
int pbrt_shape_material(R *r, int alpha_tex, const char *where);
int pbrt_d_texture(R *r, const pbrt_token *at);
/* pbrt_media.c */
int pbrt_make_medium(R *r, plist *pl, const pbrt_token *at, const char *name, int *ref);
void pbrt_media_mirror(R *r);
/* pbrt_shapes.c */
int pbrt_d_shape(R *r, const pbrt_token *at);
/* pbrt_lights.c */
int pbrt_d_light(R *r, const pbrt_token *at, int area);
/* pbrt_camera.c */
int pbrt_d_camera(R *r, const pbrt_token *at);
int pbrt_d_settings(R *r, const pbrt_token *at, const char *what);
int pbrt_setup_world(R *r, const char *where);

#endif
