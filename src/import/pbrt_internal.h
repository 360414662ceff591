/* The pbrt-v4 reader's parts (pbrt.c reads directives and builds the scene; pbrt_lex.c splits
 * files, with Include/Import and gzip, into tokens that know their file and line; pbrt_spectrum.c
 * turns spectra into RGB; pbrt_shapes.c makes triangles of pbrt's shapes). */
#ifndef CAUSTIC_IMPORT_PBRT_INTERNAL_H
#define CAUSTIC_IMPORT_PBRT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "import/params.h"

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

#endif
