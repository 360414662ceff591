/* The pbrt-v4 scene reader: the scene description of pbrt-v4's file format (its documentation's
 * "pbrt-v4 File Format" page, and parser.cpp / scene.cpp for what a directive means), read into
 * caustic's scene through the builders (docs/extending.md, "A scene format").
 *
 * What a directive means here:
 *   - transforms: the current transformation matrix (CTM) as pbrt defines it (post-multiplied;
 *     Transform/ConcatTransform read transposed), AttributeBegin/End saving it with the rest of the
 *     graphics state, CoordinateSystem/CoordSysTransform with "camera" (camera to world) and
 *     "world"; ReverseOrientation and transforms that swap handedness decide which side of a
 *     surface emits, as pbrt decides it (a mesh with normals: the side they face).
 *   - handedness: pbrt's camera space is left-handed (the image's right is camera +x); caustic's
 *     camera is right-handed (right = forward x up). Where the two disagree the whole world is
 *     mirrored through the plane of the camera's forward and up axes, which leaves the picture
 *     exactly pbrt's; --dump-scene and `caustic info` then show mirrored coordinates.
 *   - shapes: trianglemesh, plymesh (.ply/.ply.gz through ply.c), bilinearmesh (two triangles a
 *     patch), loopsubdiv (subdivided here), sphere (caustic's analytic sphere when whole, else
 *     tessellated), disk and cylinder (tessellated, 64 segments a turn; pbrt_shapes.c);
 *     ObjectBegin/ObjectInstance: the object's triangles become one mesh, placed by each instance
 *     (true instancing, scene_add_instance; an emissive object is copied, see scene_instances.c).
 *   - materials: one table (pbrt_materials below): a row per pbrt material, its caustic kind, and
 *     where caustic has no such model the stand-in a warning names.
 *   - lights: area "diffuse" as emission of the shape's material (L, scale, twosided, power),
 *     point, spot, distant, infinite (constant, or an equal-area octahedral image resampled to
 *     caustic's lat-long map); every light normalised as pbrt normalises it (a spectrum's
 *     luminance is 1 before `scale`), spectra through pbrt_spectrum.c.
 * Anything caustic cannot show is one warning per feature with a count, and the summary of what
 * was approximated ends the load ("coverage"). Bad input is one message "FILE:LINE: problem". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/pbrt_internal.h"
#include "image/image.h"
#include "kernel/bidir_limits.h"
#include "scene/material.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_D          3.14159265358979323846
#define MAX_TRIANGLES (1u << 30)
#define MAX_LEVELS    8

/* ---- 4x4 matrices (double: pbrt scenes chain many transforms) ------------------------------------ */
typedef struct m4 {
    double m[4][4];
} m4;

static m4 m4_id(void) {
    m4 r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 4; ++i) r.m[i][i] = 1.0;
    return r;
}
static m4 m4_mul(const m4 *a, const m4 *b) {
    m4 r;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += a->m[i][k] * b->m[k][j];
            r.m[i][j] = s;
        }
    return r;
}
static int m4_inv(const m4 *a, m4 *out) {
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
static double m4_det3(const m4 *a) {
    const double(*m)[4] = a->m;
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
static void m4_point(const m4 *a, const double p[3], double out[3]) {
    double r[4];
    for (int i = 0; i < 4; ++i) r[i] = a->m[i][0] * p[0] + a->m[i][1] * p[1] + a->m[i][2] * p[2] + a->m[i][3];
    double w = r[3] != 0 ? r[3] : 1.0;
    for (int i = 0; i < 3; ++i) out[i] = r[i] / w;
}
static void m4_vector(const m4 *a, const double v[3], double out[3]) {
    for (int i = 0; i < 3; ++i) out[i] = a->m[i][0] * v[0] + a->m[i][1] * v[1] + a->m[i][2] * v[2];
}
static vec3 dv(const double d[3]) { return v3((float)d[0], (float)d[1], (float)d[2]); }
static m4 m4_translate(double x, double y, double z) {
    m4 r = m4_id();
    r.m[0][3] = x, r.m[1][3] = y, r.m[2][3] = z;
    return r;
}
static m4 m4_scale(double x, double y, double z) {
    m4 r = m4_id();
    r.m[0][0] = x, r.m[1][1] = y, r.m[2][2] = z;
    return r;
}
static m4 m4_rotate(double deg, double x, double y, double z) {
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
static void d_cross(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static double d_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static int d_norm(double a[3]) {
    double l = sqrt(d_dot(a, a));
    if (!(l > 0) || !isfinite(l)) return -1;
    for (int i = 0; i < 3; ++i) a[i] /= l;
    return 0;
}
static xform m4_xform(const m4 *a) {
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

static int grow(void **p, size_t *cap, size_t need, size_t size) {
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

static char *sdup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int oom(R *r, const char *where) { return prm_fail(&r->ctx, where, "out of memory"); }

/* a warning about something caustic does not have: one line per feature, counted */
#define UNSUPPORTED(r, key, where, ...) prm_warn(&(r)->ctx, key, where, __VA_ARGS__)

/* ---- parameter lists ------------------------------------------------------------------------------- */
typedef struct plist {
    prm_list l;
    char (*types)[16]; /* pbrt's type of each parameter, as l.v */
    char owner[96];
    char where[PRM_WHERE];
} plist;

static void plist_free(plist *pl) {
    prm_list_free(&pl->l);
    free(pl->types);
    pl->types = NULL;
}

static const char *ptype(const plist *pl, const char *name) {
    for (size_t i = 0; i < pl->l.n; ++i)
        if (!strcmp(pl->l.v[i].name, name)) return pl->types[i];
    return NULL;
}

static prm_value *pfind(plist *pl, const char *name) {
    for (size_t i = 0; i < pl->l.n; ++i)
        if (!strcmp(pl->l.v[i].name, name)) return &pl->l.v[i];
    return NULL;
}

/* numbers of a parameter (marked used); NULL when absent */
static const double *pnums(R *r, plist *pl, const char *name, size_t *n) {
    prm_value *v = pfind(pl, name);
    if (!v) return NULL;
    v->used = 1;
    if (v->type != PRM_NUMBER) {
        prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: expected numbers", name, pl->owner);
        *n = (size_t)-1;
        return NULL;
    }
    *n = v->n;
    return v->nums;
}

static int is_type(const char *t) {
    static const char *const types[] = {"integer",  "float",     "point2", "vector2", "point3",  "vector3",
                                        "normal",   "normal3",   "point",  "vector",  "color",   "rgb",
                                        "spectrum", "blackbody", "bool",   "string",  "texture", NULL};
    for (int i = 0; types[i]; ++i)
        if (!strcmp(t, types[i])) return 1;
    return 0;
}

static int tok_is_word(const pbrt_token *t, const char *w) {
    return t->type == PTK_WORD && t->len == strlen(w) && !memcmp(t->text, w, t->len);
}

/* "type name" [values] ... after a directive */
static int parse_params(R *r, plist *pl, const char *owner, const pbrt_token *at) {
    memset(pl, 0, sizeof *pl);
    snprintf(pl->owner, sizeof pl->owner, "%s", owner);
    pbrt_where(&r->lx, at, pl->where);
    prm_list_init(&pl->l, &r->ctx, pl->owner);
    size_t capt = 0;
    double *nums = NULL;
    size_t nn = 0, capn = 0;
    char *strs = NULL;
    size_t ns = 0, caps = 0, nstr = 0;
    int rc = 0;
    for (;;) {
        pbrt_token t;
        if (pbrt_lex_peek(&r->lx, &t)) goto fail;
        if (t.type != PTK_STRING) break;
        char decl[160];
        if (t.len >= sizeof decl) break;
        memcpy(decl, t.text, t.len);
        decl[t.len] = '\0';
        char type[32], name[128], extra[8];
        int k = sscanf(decl, " %31s %127s %7s", type, name, extra);
        if (k != 2) break; /* not "type name": the next directive's argument, or an error there */
        pbrt_lex_next(&r->lx, &t);
        char w[PRM_WHERE];
        pbrt_where(&r->lx, &t, w);
        if (!strcmp(type, "point")) strcpy(type, "point3");
        if (!strcmp(type, "vector")) strcpy(type, "vector3");
        if (!strcmp(type, "normal3")) strcpy(type, "normal");
        if (!strcmp(type, "color")) strcpy(type, "rgb");
        if (!is_type(type)) {
            prm_fail(&r->ctx, w, "unknown parameter type \"%s\" in \"%s\" of %s", type, decl, owner);
            goto fail;
        }
        nn = ns = nstr = 0;
        int nbool = 0, bval = 0;
        pbrt_token v;
        if (pbrt_lex_next(&r->lx, &v)) goto fail;
        int bracket = v.type == PTK_LBRACK;
        for (;;) {
            if (bracket && pbrt_lex_next(&r->lx, &v)) goto fail;
            if (bracket && v.type == PTK_RBRACK) break;
            if (v.type == PTK_NUMBER) {
                if (grow((void **)&nums, &capn, nn + 1, sizeof *nums)) goto nomem;
                nums[nn++] = v.num;
            } else if (v.type == PTK_STRING) {
                if (grow((void **)&strs, &caps, ns + v.len + 2, 1)) goto nomem;
                if (nstr) strs[ns++] = '\x1f';
                memcpy(strs + ns, v.text, v.len);
                ns += v.len;
                strs[ns] = '\0';
                nstr++;
            } else if (tok_is_word(&v, "true") || tok_is_word(&v, "false")) {
                nbool++;
                bval = tok_is_word(&v, "true");
            } else {
                pbrt_where(&r->lx, &v, w);
                if (v.type == PTK_EOF)
                    prm_fail(&r->ctx, w, "parameter \"%s\" of %s: the file ends inside its values ('[' without ']')",
                             name, owner);
                else
                    prm_fail(&r->ctx, w, "parameter \"%s\" of %s: \"%.*s\" is not a value", name, owner,
                             (int)(v.len > 40 ? 40 : v.len), v.text);
                goto fail;
            }
            if (!bracket) break;
        }
        pbrt_where(&r->lx, &t, w);
        int mixed = (nn > 0) + (nstr > 0) + (nbool > 0);
        if (mixed > 1) {
            prm_fail(&r->ctx, w, "parameter \"%s\" of %s mixes numbers, strings and booleans", name, owner);
            goto fail;
        }
        prm_value *dup = pfind(pl, name);
        if (dup) { /* pbrt-v4 keeps the first value */
            char key[200];
            snprintf(key, sizeof key, "twice %.100s %.64s", owner, name);
            if (UNSUPPORTED(r, key, w,
                            "parameter \"%s\" of %s given twice (first at %s); the first is used, as pbrt-v4 "
                            "does",
                            name, owner, dup->where))
                goto fail;
            continue;
        }
        if (grow((void **)&pl->types, &capt, pl->l.n + 1, sizeof *pl->types)) goto nomem;
        snprintf(pl->types[pl->l.n], sizeof pl->types[0], "%s", type);
        if (!strcmp(type, "bool")) {
            if (nstr == 1 && (!strcmp(strs, "true") || !strcmp(strs, "false"))) nbool = 1, bval = !strcmp(strs, "true");
            if (nbool != 1) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected one of true or false", name, owner);
                goto fail;
            }
            rc = prm_add_bool(&pl->l, name, bval, w);
        } else if (!strcmp(type, "string") || !strcmp(type, "texture")) {
            if (nstr == 0) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected a quoted string", name, owner);
                goto fail;
            }
            rc = prm_add_string(&pl->l, name, strs, w);
        } else if (!strcmp(type, "spectrum") && nstr) {
            rc = prm_add_string(&pl->l, name, strs, w);
        } else {
            if (nstr || nbool) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected numbers (type %s)", name, owner, type);
                goto fail;
            }
            rc = prm_add_numbers(&pl->l, name, nums, nn, w);
        }
        if (rc) goto fail;
    }
    free(nums);
    free(strs);
    return 0;
nomem:
    oom(r, pl->where);
fail:
    free(nums);
    free(strs);
    plist_free(pl);
    return -1;
}

/* the unused-parameter report, folded into one warning per owner and name */
static int finish_params(R *r, plist *pl) {
    for (size_t i = 0; i < pl->l.n; ++i) {
        prm_value *v = &pl->l.v[i];
        if (v->used) continue;
        v->used = 1;
        char key[200];
        snprintf(key, sizeof key, "unused %.100s %.64s", pl->owner, v->name);
        if (UNSUPPORTED(r, key, v->where, "parameter \"%s\" of %s is not used by caustic", v->name, pl->owner))
            return -1;
    }
    return 0;
}

/* ---- spectra and textures as parameters ------------------------------------------------------------- */
/* .spd file: "lambda value" pairs */
static int read_spd(R *r, const char *where, const char *path, double **lam, double **val, size_t *n) {
    char why[200];
    size_t len = 0;
    char *text = pbrt_read_file(path, 16u << 20, &len, why, sizeof why);
    if (!text) return prm_fail(&r->ctx, where, "spectrum file \"%s\": %s", path, why);
    size_t cap = 0, k = 0;
    double *all = NULL;
    char *p = text;
    while (*p) {
        if (*p == '#') {
            while (*p && *p != '\n') ++p;
            continue;
        }
        if (isspace((unsigned char)*p) || *p == ',') {
            ++p;
            continue;
        }
        char *end;
        double x = strtod(p, &end);
        if (end == p) {
            free(all);
            free(text);
            return prm_fail(&r->ctx, where, "spectrum file \"%s\": \"%.10s\" is not a number", path, p);
        }
        if (grow((void **)&all, &cap, k + 1, sizeof *all)) {
            free(all);
            free(text);
            return oom(r, where);
        }
        all[k++] = x;
        p = end;
    }
    free(text);
    if (k < 2 || k % 2) {
        free(all);
        return prm_fail(&r->ctx, where, "spectrum file \"%s\": expected (wavelength, value) pairs", path);
    }
    *n = k / 2;
    *lam = malloc(*n * sizeof **lam);
    *val = malloc(*n * sizeof **val);
    if (!*lam || !*val) {
        free(*lam), free(*val), free(all);
        return oom(r, where);
    }
    for (size_t i = 0; i < *n; ++i) (*lam)[i] = all[2 * i], (*val)[i] = all[2 * i + 1];
    free(all);
    return 0;
}

/* pairs -> RGB; illum: normalised to luminance 1 (pbrt divides lights by their luminance) */
static vec3 pairs_rgb(const double *lam, const double *val, size_t n, int illum) {
    if (!illum) return pbrt_reflectance_to_rgb(lam, val, n);
    vec3 c = pbrt_spd_to_rgb(lam, val, n);
    double y = pbrt_luminance(c);
    return y > 0 ? vscale(c, (float)(1.0 / y)) : v3s(0.0f);
}

static ptex *find_tex(R *r, const char *name, int is_float) {
    for (size_t i = r->nptexs; i-- > 0;)
        if (r->ptexs[i].is_float == is_float && !strcmp(r->ptexs[i].name, name)) return &r->ptexs[i];
    for (size_t i = r->nptexs; i-- > 0;)
        if (!strcmp(r->ptexs[i].name, name)) return &r->ptexs[i];
    return NULL;
}

/* A colour-valued parameter (rgb, spectrum, blackbody, float or texture). illum: an emission
 * spectrum (normalised as pbrt normalises lights; rgb stays as given). tex (may be NULL): a
 * caustic texture where the value is an image or checker texture. Absent: def. */
static int get_color(R *r, plist *pl, const char *name, vec3 def, int illum, vec3 *out, int *tex) {
    *out = def;
    if (tex) *tex = -1;
    const char *t = ptype(pl, name);
    if (!t) return 0;
    prm_value *v = pfind(pl, name);
    if (!strcmp(t, "rgb")) return prm_vec3(&pl->l, name, def, 0.0, 1e30, "", out);
    if (!strcmp(t, "float")) {
        double x;
        if (prm_float(&pl->l, name, 0.0, -1e30, 1e30, "", &x)) return -1;
        *out = v3s((float)x);
        return 0;
    }
    if (!strcmp(t, "blackbody") && v->type == PRM_NUMBER && v->n == 2) { /* pbrt-v3: temperature, scale */
        v->used = 1;
        *out = vscale(pbrt_blackbody_rgb(v->nums[0]), (float)v->nums[1]);
        return 0;
    }
    if (!strcmp(t, "blackbody")) {
        double T;
        if (prm_float(&pl->l, name, 6500, 1.0, 1e6, "K", &T)) return -1;
        *out = pbrt_blackbody_rgb(T);
        return 0;
    }
    if (!strcmp(t, "spectrum")) {
        v->used = 1;
        if (v->type == PRM_STRING) {
            if (!pbrt_named_spectrum(v->str, out)) return 0;
            if (!strncmp(v->str, "metal-", 6) || !strncmp(v->str, "glass-", 6) || !strchr(v->str, '.')) {
                vec3 f0;
                char metal[32] = "";
                sscanf(v->str, "metal-%31[^-]", metal);
                if (metal[0] && !pbrt_metal_f0(metal, &f0)) { /* a metal's eta or k where a colour goes */
                    *out = f0;
                    return 0;
                }
                return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: unknown named spectrum \"%s\"", name,
                                pl->owner, v->str);
            }
            pbrt_token at = {0};
            at.file = r->ctx.src;
            at.line = atoi(v->where);
            char *path = pbrt_resolve(&r->lx, &at, v->str);
            if (!path) return oom(r, v->where);
            double *lam = NULL, *val = NULL;
            size_t n = 0;
            int rc = read_spd(r, v->where, path, &lam, &val, &n);
            free(path);
            if (rc) return -1;
            *out = pairs_rgb(lam, val, n, illum);
            free(lam), free(val);
            return 0;
        }
        if (v->n < 2 || v->n % 2)
            return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: a spectrum is (wavelength, value) pairs", name,
                            pl->owner);
        double *lam = malloc(v->n / 2 * sizeof *lam), *val = malloc(v->n / 2 * sizeof *val);
        if (!lam || !val) {
            free(lam), free(val);
            return oom(r, v->where);
        }
        for (size_t i = 0; i < v->n / 2; ++i) lam[i] = v->nums[2 * i], val[i] = v->nums[2 * i + 1];
        *out = pairs_rgb(lam, val, v->n / 2, illum);
        free(lam), free(val);
        return 0;
    }
    if (!strcmp(t, "texture")) {
        const char *tn;
        if (prm_string(&pl->l, name, "", &tn)) return -1;
        ptex *x = find_tex(r, tn, 0);
        if (!x)
            return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: no texture named \"%s\"", name, pl->owner, tn);
        *out = x->value;
        if (x->kind == PT_CONST) return 0;
        if (tex && (x->kind == PT_IMAGE || x->kind == PT_CHECKER)) {
            *tex = x->tex;
            return 0;
        }
        char key[120];
        snprintf(key, sizeof key, "texture-standin %s", name);
        return UNSUPPORTED(r, key, v->where,
                           "texture \"%s\" as \"%s\" of %s: caustic cannot texture this parameter; its mean colour "
                           "stands in",
                           tn, name, pl->owner);
    }
    return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: a %s cannot be a colour", name, pl->owner, t);
}

/* A float-valued parameter (float, or a float texture: its constant or mean stands in). */
static int get_float(R *r, plist *pl, const char *name, double def, double lo, double hi, double *out) {
    const char *t = ptype(pl, name);
    *out = def;
    if (!t) return 0;
    if (!strcmp(t, "texture")) {
        vec3 c;
        if (get_color(r, pl, name, v3s((float)def), 0, &c, NULL)) return -1;
        *out = c.x;
        return 0;
    }
    if (!strcmp(t, "spectrum") || !strcmp(t, "rgb")) {
        vec3 c;
        if (get_color(r, pl, name, v3s((float)def), 0, &c, NULL)) return -1;
        *out = (c.x + c.y + c.z) / 3.0;
        return 0;
    }
    return prm_float(&pl->l, name, def, lo, hi, "", out);
}

/* ---- materials: the one table ------------------------------------------------------------------------ */
/* pbrt's roughness to caustic's perceptual roughness (caustic's GGX alpha is roughness^2; pbrt's
 * alpha is sqrt(roughness) when remaproughness is true, the roughness itself otherwise) */
static int get_roughness(R *r, plist *pl, double def, double *rough) {
    double u, v, rr;
    if (get_float(r, pl, "roughness", def, 0, 1e3, &rr)) return -1;
    if (get_float(r, pl, "uroughness", rr, 0, 1e3, &u)) return -1;
    if (get_float(r, pl, "vroughness", rr, 0, 1e3, &v)) return -1;
    int remap = 1;
    if (prm_bool(&pl->l, "remaproughness", 1, &remap)) return -1;
    if (fabs(u - v) > 1e-6 * (u + v) &&
        UNSUPPORTED(r, "anisotropic roughness", pl->where,
                    "anisotropic roughness (uroughness %g, vroughness %g) of %s: caustic's microfacets are isotropic; "
                    "their mean stands in",
                    u, v, pl->owner))
        return -1;
    double alpha = 0.5 * (u + v);
    if (remap) alpha = sqrt(alpha);
    double rough_c = sqrt(alpha);
    *rough = rough_c > 1 ? 1 : rough_c;
    return 0;
}

/* cauchy_b: where not NULL (a dielectric), a named glass-* spectrum caustic knows the Abbe number
 * of is a dispersive glass: Cauchy's B there (0 otherwise). */
static int get_eta_dispersive(R *r, plist *pl, double *eta, double *cauchy_b) {
    vec3 c;
    if (get_color(r, pl, "eta", v3s(1.5f), 0, &c, NULL)) return -1;
    const char *t = ptype(pl, "eta");
    prm_value *v = pfind(pl, "eta");
    double abbe = 0.0;
    if (cauchy_b && t && !strcmp(t, "spectrum") && v->type == PRM_STRING && pbrt_glass_abbe(v->str, &abbe) == 0) {
        *eta = c.y;
        *cauchy_b = material_cauchy_b(*eta, abbe);
        return 0;
    }
    if (t && !strcmp(t, "spectrum") &&
        UNSUPPORTED(r, "dispersion", v->where,
                    "spectral IOR of %s: caustic renders in RGB (no dispersion); its mean %.4g stands in", pl->owner,
                    (c.x + c.y + c.z) / 3.0))
        return -1;
    *eta = (c.x + c.y + c.z) / 3.0;
    if (!(*eta > 0)) *eta = 1.5;
    return 0;
}
static int get_eta(R *r, plist *pl, double *eta) { return get_eta_dispersive(r, pl, eta, NULL); }

/* A conductor (prefix "" or "conductor."): "reflectance" where given (Schlick with that F0), else
 * a complex index eta + i k: pbrt's named metal spectra through caustic's table of measured metals
 * (material_metal_lookup), rgb or float eta and k as given; F0 from them is the colour. */
static int get_conductor(R *r, plist *pl, const char *prefix, material_params *p) {
    char ne[40], nk[40];
    snprintf(ne, sizeof ne, "%seta", prefix);
    snprintf(nk, sizeof nk, "%sk", prefix);
    if (ptype(pl, "reflectance")) {
        int tex;
        p->complex_ior = 0;
        return get_color(r, pl, "reflectance", v3s(1.0f), 0, &p->rgb, &tex);
    }
    prm_value *ev = pfind(pl, ne), *kv = pfind(pl, nk);
    char metal[32] = "Cu"; /* pbrt's default: metal-Cu-eta / metal-Cu-k */
    if (ev && ev->type == PRM_STRING) {
        if (sscanf(ev->str, "metal-%31[^-]", metal) != 1) metal[0] = '\0';
    } else if (ev) {
        metal[0] = '\0';
    }
    if (metal[0] && (!kv || kv->type == PRM_STRING)) {
        vec3 eta, k, f0;
        if (!material_metal_lookup(metal, &eta, &k, &f0)) {
            p->complex_ior = 1, p->eta = eta, p->k = k, p->rgb = f0;
        } else if (!pbrt_metal_f0(metal, &f0)) {
            p->complex_ior = 0, p->rgb = f0;
        } else
            metal[0] = '\0';
        if (metal[0]) {
            if (ev) ev->used = 1;
            if (kv) kv->used = 1;
            return 0;
        }
    }
    vec3 eta, k;
    if (get_color(r, pl, ne, v3s(0.2f), 0, &eta, NULL) || get_color(r, pl, nk, v3s(3.9f), 0, &k, NULL)) return -1;
    float e[3] = {eta.x, eta.y, eta.z}, kk[3] = {k.x, k.y, k.z}, f[3];
    for (int i = 0; i < 3; ++i)
        f[i] = ((e[i] - 1) * (e[i] - 1) + kk[i] * kk[i]) / ((e[i] + 1) * (e[i] + 1) + kk[i] * kk[i]);
    p->rgb = v3(f[0], f[1], f[2]);
    p->complex_ior = 1, p->eta = eta, p->k = k;
    return 0;
}

/* a prefixed roughness ("conductor.", "interface."): caustic's perceptual roughness */
static int get_prefixed_roughness(R *r, plist *pl, const char *prefix, double def, int remap, double *rough) {
    char n[3][48];
    snprintf(n[0], sizeof n[0], "%sroughness", prefix);
    snprintf(n[1], sizeof n[1], "%suroughness", prefix);
    snprintf(n[2], sizeof n[2], "%svroughness", prefix);
    double rr, u, v;
    if (get_float(r, pl, n[0], def, 0, 1e3, &rr) || get_float(r, pl, n[1], rr, 0, 1e3, &u) ||
        get_float(r, pl, n[2], rr, 0, 1e3, &v))
        return -1;
    double alpha = 0.5 * (u + v);
    if (remap) alpha = sqrt(alpha);
    *rough = sqrt(alpha) > 1 ? 1 : sqrt(alpha);
    return 0;
}

/* the layer between coat and base: pbrt's "thickness" of a medium of "albedo" (0: absorbing,
 * sigma_t 1): its transmittance at normal incidence there and back */
static int get_coat_tint(R *r, plist *pl, material_params *p) {
    double th;
    vec3 alb;
    if (get_float(r, pl, "thickness", 0.01, 0, 1e6, &th)) return -1;
    if (get_color(r, pl, "albedo", v3s(0.0f), 0, &alb, NULL)) return -1;
    prm_value *g = pfind(pl, "g"), *md = pfind(pl, "maxdepth"), *ns = pfind(pl, "nsamples");
    if (g) g->used = 1;
    if (md) md->used = 1;
    if (ns) ns->used = 1;
    /* scattering albedo a returns part of what the layer would absorb: (1 - a) of sigma_t absorbs */
    vec3 t;
    t.x = (float)exp(-2 * th * (1 - alb.x));
    t.y = (float)exp(-2 * th * (1 - alb.y));
    t.z = (float)exp(-2 * th * (1 - alb.z));
    p->coat_tint = t;
    return 0;
}

typedef int (*mat_fn)(R *r, plist *pl, pmat *m);
static int mat_diffuse(R *r, plist *pl, pmat *m) {
    return get_color(r, pl, "reflectance", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
}
static int mat_conductor(R *r, plist *pl, pmat *m) {
    if (get_conductor(r, pl, "", &m->p)) return -1;
    return get_roughness(r, pl, 0.0, &m->p.roughness);
}
static int mat_dielectric(R *r, plist *pl, pmat *m) {
    if (get_eta_dispersive(r, pl, &m->p.ior, &m->p.dispersion) || get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.rgb = v3s(1.0f);
    if (m->p.roughness > 0.0) m->kind = MAT_ROUGH_GLASS;
    return 0;
}
/* pbrt's coated materials onto caustic's Coated kind (a dielectric coat over a diffuse or conductor
 * base): the coat's IOR and roughness, the base's colour (and roughness), the layer's tint */
static int mat_coateddiffuse(R *r, plist *pl, pmat *m) {
    if (get_color(r, pl, "reflectance", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.coat_roughness)) return -1;
    if (get_eta(r, pl, &m->p.ior) || get_coat_tint(r, pl, &m->p)) return -1;
    m->p.coat_base = COAT_BASE_DIFFUSE;
    return 0;
}
static int mat_coatedconductor(R *r, plist *pl, pmat *m) {
    int remap = 1;
    if (prm_bool(&pl->l, "remaproughness", 1, &remap)) return -1;
    if (get_conductor(r, pl, "conductor.", &m->p)) return -1;
    if (get_prefixed_roughness(r, pl, "conductor.", 0.0, remap, &m->p.roughness)) return -1;
    if (get_prefixed_roughness(r, pl, "interface.", 0.0, remap, &m->p.coat_roughness)) return -1;
    vec3 c;
    if (get_color(r, pl, "interface.eta", v3s(1.5f), 0, &c, NULL)) return -1;
    m->p.ior = (c.x + c.y + c.z) / 3.0;
    if (get_coat_tint(r, pl, &m->p)) return -1;
    m->p.coat_base = COAT_BASE_CONDUCTOR;
    return 0;
}
static int mat_difftrans(R *r, plist *pl, pmat *m) {
    double sc;
    if (get_color(r, pl, "reflectance", v3s(0.25f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (get_color(r, pl, "transmittance", v3s(0.25f), 0, &m->p.transmittance, NULL)) return -1;
    if (prm_float(&pl->l, "scale", 1.0, 0, 1e30, "", &sc)) return -1;
    m->p.rgb = vscale(m->p.rgb, (float)sc);
    m->p.transmittance = vscale(m->p.transmittance, (float)sc);
    return 0;
}
static int mat_thindielectric(R *r, plist *pl, pmat *m) {
    if (get_eta(r, pl, &m->p.ior)) return -1;
    m->p.rgb = v3s(1.0f);
    return 0;
}
/* pbrt's subsurface: caustic's model of it, a (rough) dielectric of "eta" (1.33) around a
 * homogeneous medium: "name" (a measured medium, material_measured_medium), "sigma_a"/"sigma_s",
 * or "reflectance" with "mfp" through the albedo inversion (src/scene/material.h); times "scale";
 * "g". pbrt-v4 itself renders it with a tabulated diffusion BSSRDF; the random walk differs from
 * that, and the one warning says so. */
static int mat_subsurface(R *r, plist *pl, pmat *m) {
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    double g, scale, eta = 1.33;
    if (get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) || get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale)) return -1;
    md.g = (float)g;
    const char *preset;
    if (prm_string(&pl->l, "name", "", &preset)) return -1;
    if (preset[0]) {
        if (material_measured_medium(preset, &md.sigma_a, &md.sigma_s)) {
            prm_value *v = pfind(pl, "name");
            return prm_fail(&r->ctx, v ? v->where : pl->where,
                            "%s: unknown measured medium \"%s\" (Skin1, Ketchup, ...)", pl->owner, preset);
        }
    } else if (ptype(pl, "sigma_a") || ptype(pl, "sigma_s")) {
        if (get_color(r, pl, "sigma_a", v3(0.0011f, 0.0024f, 0.014f), 0, &md.sigma_a, NULL) ||
            get_color(r, pl, "sigma_s", v3(2.55f, 3.21f, 3.77f), 0, &md.sigma_s, NULL))
            return -1;
    } else if (ptype(pl, "reflectance")) {
        vec3 refl, mfp;
        if (get_color(r, pl, "reflectance", v3s(1.0f), 0, &refl, NULL) ||
            get_color(r, pl, "mfp", v3s(1.0f), 0, &mfp, NULL))
            return -1;
        if (!(vmaxc(mfp) > 0.0f) || mfp.x <= 0.0f || mfp.y <= 0.0f || mfp.z <= 0.0f) {
            prm_value *v = pfind(pl, "mfp");
            return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: \"mfp\" must be > 0", pl->owner);
        }
        material_subsurface_medium(refl, mfp, md.g, &md.sigma_a, &md.sigma_s);
    } else { /* pbrt-v4's default: whole milk's coefficients (1/mm) */
        md.sigma_a = v3(0.0011f, 0.0024f, 0.014f);
        md.sigma_s = v3(2.55f, 3.21f, 3.77f);
    }
    md.sigma_a = vscale(md.sigma_a, (float)scale);
    md.sigma_s = vscale(md.sigma_s, (float)scale);
    if (ptype(pl, "eta") && get_eta(r, pl, &eta)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.ior = eta;
    m->p.rgb = v3s(1.0f);
    m->kind = m->p.roughness > 0.0 ? MAT_ROUGH_GLASS : MAT_DIELECTRIC;
    char name[64];
    snprintf(name, sizeof name, "(pbrt subsurface %zu)", r->npmats);
    int idx = scene_add_medium(r->s, name, md);
    if (idx < 0) return prm_fail(&r->ctx, pl->where, "%s: cannot add its medium", pl->owner);
    m->sss = idx + 1;
    return UNSUPPORTED(r, "material subsurface", pl->where,
                       "%s: a random walk through its medium inside a dielectric boundary (caustic's subsurface "
                       "model; pbrt-v4 renders a tabulated diffusion BSSRDF, which differs a little)",
                       pl->owner);
}
static int mat_grey(R *r, plist *pl, pmat *m) {
    (void)r, (void)pl;
    m->p.rgb = v3s(0.5f);
    return 0;
}
static int mat_hair(R *r, plist *pl, pmat *m) {
    vec3 c = v3(0.3f, 0.2f, 0.1f);
    if (ptype(pl, "reflectance") && get_color(r, pl, "reflectance", c, 0, &c, NULL)) return -1;
    m->p.rgb = c;
    return 0;
}
static int mat_interface(R *r, plist *pl, pmat *m) {
    (void)r, (void)pl;
    m->interface = 1;
    return 0;
}
static int mat_mix(R *r, plist *pl, pmat *m);

/* pbrt-v3's materials (files written for pbrt-v3 and read here): Kd/Ks/Kr, "index" */
static int mat_v3_matte(R *r, plist *pl, pmat *m) {
    prm_value *sg = pfind(pl, "sigma");
    if (sg) sg->used = 1; /* Oren-Nayar roughness: Lambertian here */
    return get_color(r, pl, "Kd", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
}
static int mat_v3_plastic(R *r, plist *pl, pmat *m) {
    vec3 ks;
    if (get_color(r, pl, "Kd", v3s(0.25f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (get_color(r, pl, "Ks", v3s(0.25f), 0, &ks, NULL)) return -1;
    if (get_roughness(r, pl, 0.1, &m->p.roughness)) return -1;
    m->p.metallic = 0.0;
    if (m->p.roughness < 0.02) m->p.roughness = 0.02;
    return 0;
}
static int mat_v3_metal(R *r, plist *pl, pmat *m) {
    if (get_conductor(r, pl, "", &m->p)) return -1;
    return get_roughness(r, pl, 0.01, &m->p.roughness);
}
static int mat_v3_mirror(R *r, plist *pl, pmat *m) {
    m->p.roughness = 0.0;
    return get_color(r, pl, "Kr", v3s(0.9f), 0, &m->p.rgb, NULL);
}
static int mat_v3_glass(R *r, plist *pl, pmat *m) {
    vec3 kr, kt;
    double eta;
    if (get_color(r, pl, "Kr", v3s(1.0f), 0, &kr, NULL) || get_color(r, pl, "Kt", v3s(1.0f), 0, &kt, NULL)) return -1;
    if (get_float(r, pl, "index", 1.5, 1e-3, 1e3, &eta)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.ior = eta;
    m->p.rgb = kt;
    if (m->p.roughness > 0.0) m->kind = MAT_ROUGH_GLASS;
    return 0;
}
static int mat_v3_kd(R *r, plist *pl, pmat *m) {
    if (ptype(pl, "Kd")) return get_color(r, pl, "Kd", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
    if (ptype(pl, "color")) return get_color(r, pl, "color", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
    m->p.rgb = v3s(0.5f);
    return 0;
}

/* pbrt material -> caustic kind. standin: NULL where caustic renders the model (or all of it
 * that a pbrt file usually sets); otherwise what stands in, named in the one warning. */
static const struct pbrt_material_row {
    const char *name;
    material_kind kind;
    mat_fn read;
    const char *standin;
} pbrt_materials[] = {
    {"diffuse", MAT_DIFFUSE, mat_diffuse, NULL},
    {"conductor", MAT_CONDUCTOR, mat_conductor, NULL},
    {"dielectric", MAT_DIELECTRIC, mat_dielectric, NULL},
    {"thindielectric", MAT_THIN_DIELECTRIC, mat_thindielectric, NULL},
    {"coateddiffuse", MAT_COATED, mat_coateddiffuse, NULL},
    {"coatedconductor", MAT_COATED, mat_coatedconductor, NULL},
    {"diffusetransmission", MAT_DIFFUSE_TRANSMISSION, mat_difftrans, NULL},
    {"mix", MAT_DIFFUSE, mat_mix, "the material of larger weight"},
    {"interface", MAT_DIFFUSE, mat_interface, NULL},
    {"subsurface", MAT_DIELECTRIC, mat_subsurface, NULL},
    {"measured", MAT_DIFFUSE, mat_grey, "grey diffuse 0.5 (caustic has no measured BRDFs)"},
    {"hair", MAT_DIFFUSE, mat_hair, "brown diffuse (caustic has no hair model)"},
    /* pbrt-v3's names, for files written for it */
    {"matte", MAT_DIFFUSE, mat_v3_matte, NULL},
    {"plastic", MAT_PBR, mat_v3_plastic, "caustic's PBR (pbrt-v3 plastic: Kd under a GGX lobe; Ks not used)"},
    {"metal", MAT_CONDUCTOR, mat_v3_metal, NULL},
    {"mirror", MAT_CONDUCTOR, mat_v3_mirror, NULL},
    {"glass", MAT_DIELECTRIC, mat_v3_glass, NULL},
    {"uber", MAT_PBR, mat_v3_kd, "caustic's PBR of its Kd (pbrt-v3 uber)"},
    {"substrate", MAT_PBR, mat_v3_kd, "caustic's PBR of its Kd (pbrt-v3 substrate)"},
    {"translucent", MAT_DIFFUSE, mat_v3_kd, "diffuse of its Kd (pbrt-v3 translucent)"},
    {"disney", MAT_PBR, mat_v3_kd, "caustic's PBR of its color (pbrt-v3 disney)"},
    {"kdsubsurface", MAT_DIFFUSE, mat_v3_kd, "diffuse of its Kd (no subsurface scattering)"},
    {"fourier", MAT_DIFFUSE, mat_grey, "grey diffuse 0.5 (pbrt-v3 fourier BSDF tables are not read)"},
    {NULL, MAT_DIFFUSE, NULL, NULL}};

static int find_named_material(R *r, const char *name) {
    for (size_t i = r->npmats; i-- > 0;)
        if (r->pmats[i].name && !strcmp(r->pmats[i].name, name)) return (int)i;
    return -1;
}

static int mat_mix(R *r, plist *pl, pmat *m) {
    const char *names;
    if (prm_string(&pl->l, "materials", "", &names)) return -1;
    prm_value *v = pfind(pl, "materials");
    const char *sep = strchr(names, '\x1f');
    if (!v || !sep || strchr(sep + 1, '\x1f'))
        return prm_fail(&r->ctx, v ? v->where : pl->where, "%s needs \"string materials\" with two names", pl->owner);
    double amount;
    if (get_float(r, pl, "amount", 0.5, 0, 1, &amount)) return -1;
    char a[256], b[256];
    snprintf(a, sizeof a, "%.*s", (int)(sep - names), names);
    snprintf(b, sizeof b, "%s", sep + 1);
    const char *pick = amount > 0.5 ? b : a;
    int i = find_named_material(r, pick);
    if (i < 0) return prm_fail(&r->ctx, v->where, "%s: no material named \"%s\"", pl->owner, pick);
    char *keep = m->name;
    *m = r->pmats[i];
    m->name = keep;
    return 0;
}

static int make_material(R *r, const char *type, plist *pl, const char *name, const char *where) {
    const struct pbrt_material_row *row = NULL;
    for (int i = 0; pbrt_materials[i].name; ++i)
        if (!strcmp(pbrt_materials[i].name, type)) row = &pbrt_materials[i];
    pmat m;
    memset(&m, 0, sizeof m);
    if (!row) {
        static const char *names[] = {"diffuse",
                                      "conductor",
                                      "dielectric",
                                      "thindielectric",
                                      "coateddiffuse",
                                      "coatedconductor",
                                      "diffusetransmission",
                                      "mix",
                                      "interface",
                                      "subsurface",
                                      "measured",
                                      "hair",
                                      "none",
                                      NULL};
        if (!strcmp(type, "") || !strcmp(type, "none")) {
            m.interface = 1;
        } else {
            const char *sug = prm_suggest(type, names);
            char key[80];
            snprintf(key, sizeof key, "material %.60s", type);
            if (UNSUPPORTED(r, key, where, "unknown material \"%s\"%s%s%s: grey diffuse stands in", type,
                            sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : ""))
                return -1;
            m.kind = MAT_DIFFUSE;
            m.p = material_params_default(MAT_DIFFUSE);
            m.p.rgb = v3s(0.5f);
        }
    } else {
        m.kind = row->kind;
        m.p = material_params_default(row->kind);
        if (row->read(r, pl, &m)) return -1;
        if (row->standin) {
            char key[80];
            snprintf(key, sizeof key, "material %s", type);
            if (UNSUPPORTED(r, key, where, "material \"%s\": caustic has no such model; %s stands in", type,
                            row->standin))
                return -1;
        }
    }
    /* parameters every material may have */
    prm_value *disp = pfind(pl, "displacement");
    if (!disp) disp = pfind(pl, "bumpmap"); /* pbrt-v3's name */
    ptex *bt = disp && disp->type == PRM_STRING ? find_tex(r, disp->str, 1) : NULL;
    if (bt && bt->kind == PT_IMAGE && bt->tex >= 0) { /* a height map: caustic's bump map */
        disp->used = 1;
        m.p.bump_tex = bt->tex;
        m.p.bump_scale = bt->factor;
        disp = NULL;
    }
    if (disp) {
        disp->used = 1;
        if (UNSUPPORTED(r, "bump mapping", disp->where,
                        "\"displacement\" of %s: not an image texture (caustic bumps by image height maps); the "
                        "surface is smooth",
                        pl->owner))
            return -1;
    }
    prm_value *nm = pfind(pl, "normalmap");
    if (nm) {
        nm->used = 1;
        if (UNSUPPORTED(r, "normal map", nm->where,
                        "\"normalmap\" of %s: not read (caustic's normal maps are "
                        "glTF's); the surface is smooth",
                        pl->owner))
            return -1;
    }
    if (finish_params(r, pl)) return -1;
    if (GROW(r->pmats, r->npmats, r->cappmats)) return oom(r, where);
    if (name) {
        m.name = sdup(name, strlen(name));
        if (!m.name) return oom(r, where);
    } else
        m.name = NULL;
    r->pmats[r->npmats++] = m;
    return (int)r->npmats - 1;
}

/* MakeNamedMedium's medium: "homogeneous" (sigma_a, sigma_s, scale, g, Le, Lescale, preset) as a
 * caustic medium, *ref its reference; the grid media ("uniformgrid", "rgbgrid", "nanovdb", "cloud")
 * are not read yet: one warning, and shapes bound to them render without the medium (*ref 0). */
static int make_medium(R *r, plist *pl, const char *name, int *ref) {
    const char *type;
    *ref = 0;
    if (prm_string(&pl->l, "type", "", &type)) return -1;
    if (strcmp(type, "homogeneous") != 0) {
        for (size_t i = 0; i < pl->l.n; ++i) pl->l.v[i].used = 1;
        char key[80];
        snprintf(key, sizeof key, "medium %.60s", type);
        if (!type[0]) return prm_fail(&r->ctx, pl->where, "%s: no \"string type\"", pl->owner);
        return UNSUPPORTED(r, key, pl->where,
                           "%s of type \"%s\": caustic reads only homogeneous media from pbrt files yet; rendered "
                           "without the medium",
                           pl->owner, type);
    }
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    const char *preset;
    if (prm_string(&pl->l, "preset", "", &preset)) return -1;
    if (preset[0]) {
        if (material_measured_medium(preset, &md.sigma_a, &md.sigma_s)) {
            prm_value *v = pfind(pl, "preset");
            return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: unknown preset \"%s\" (Skin1, Ketchup, ...)",
                            pl->owner, preset);
        }
        /* pbrt-v4 reads sigma_a / sigma_s only without a preset */
        prm_value *v;
        if ((v = pfind(pl, "sigma_a")) != NULL) v->used = 1;
        if ((v = pfind(pl, "sigma_s")) != NULL) v->used = 1;
    } else if (get_color(r, pl, "sigma_a", v3s(1.0f), 0, &md.sigma_a, NULL) ||
               get_color(r, pl, "sigma_s", v3s(1.0f), 0, &md.sigma_s, NULL)) {
        return -1;
    }
    double scale, g, lescale;
    vec3 le;
    if (get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale) || get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) ||
        get_color(r, pl, "Le", v3s(0.0f), 1, &le, NULL) || get_float(r, pl, "Lescale", 1.0, 0.0, 1e30, &lescale))
        return -1;
    md.sigma_a = vscale(md.sigma_a, (float)scale);
    md.sigma_s = vscale(md.sigma_s, (float)scale);
    md.g = (float)g;
    md.emission = vscale(le, (float)lescale);
    int idx = scene_add_medium(r->s, name, md);
    if (idx < 0)
        return prm_fail(&r->ctx, pl->where, "%s: not a medium (negative or non-finite coefficients?)", pl->owner);
    *ref = idx + 1;
    return 0;
}

/* the caustic material of a shape: its pbrt material with the area light and alpha in force */
/* The media a shape of the current material binds (kernel/medium.h's rule, which is pbrt-v4's: a
 * MediumInterface whose sides differ is a boundary, one whose sides are equal is none); a
 * subsurface material binds its own medium inside, the MediumInterface's outside around it. */
static void shape_media(const R *r, const pmat *pm, int *in, int *out) {
    int transition = r->g.med_in != r->g.med_out;
    *in = pm->sss ? pm->sss : transition ? r->g.med_in : 0;
    *out = pm->sss || transition ? r->g.med_out : 0;
}

static int shape_material(R *r, int alpha_tex, const char *where) {
    const pmat *pm = &r->pmats[r->g.material];
    vec3 L = r->g.area ? r->g.area_L : v3s(0.0f);
    int two = r->g.area ? r->g.area_two_sided : 0;
    int med_in, med_out;
    shape_media(r, pm, &med_in, &med_out);
    for (size_t i = 0; i < r->nders; ++i) {
        derived *d = &r->ders[i];
        if (d->pm == r->g.material && d->two_sided == two && d->alpha_tex == alpha_tex && d->L.x == L.x &&
            d->L.y == L.y && d->L.z == L.z && d->med_in == med_in && d->med_out == med_out)
            return d->index;
    }
    material_params p = pm->p;
    p.emission = L;
    p.two_sided = two;
    if (pm->interface && med_in == med_out) { /* a boundary of nothing: no surface at all */
        p.opacity = 0.0;
        p.alpha_cutoff = 0.5;
        if (r->g.area && UNSUPPORTED(r, "emissive interface", where,
                                     "an area light on a shape of material \"interface\" (no surface): it emits "
                                     "nothing in caustic"))
            return -1;
    } else if (alpha_tex >= 0) {
        p.alpha_tex = alpha_tex;
        p.alpha_cutoff = 0.5;
    }
    /* an interface that bounds media: caustic's Interface kind (no surface) */
    material m = material_from_params(pm->interface && med_in != med_out ? MAT_INTERFACE : pm->kind, &p);
    if (pm->interface) m.emission = v3s(0.0f); /* a boundary of media is caustic's Interface, not cut out */
    m.medium_inside = med_in;
    m.medium_outside = med_out;
    char name[300];
    snprintf(name, sizeof name, "%.200s#%zu", pm->name ? pm->name : "pbrt", r->nders);
    int idx = scene_add_material(r->s, name, m);
    if (idx < 0) return prm_fail(&r->ctx, where, "cannot add material \"%s\"", name);
    if (GROW(r->ders, r->nders, r->capders)) return oom(r, where);
    r->ders[r->nders++] = (derived){r->g.material, L, two, alpha_tex, idx, med_in, med_out};
    return idx;
}

/* ---- textures ------------------------------------------------------------------------------------- */
static int load_image_texture(R *r, const char *path, const char *where, int *tex, vec3 *mean) {
    image img;
    char err[512];
    memset(&img, 0, sizeof img);
    if (image_load(&img, path, err, sizeof err)) return prm_fail(&r->ctx, where, "imagemap: %s", err);
    double sum[3] = {0, 0, 0};
    size_t n = (size_t)img.width * (size_t)img.height;
    for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) sum[c] += img.rgb[3 * i + (size_t)c];
    if (n) *mean = v3((float)(sum[0] / n), (float)(sum[1] / n), (float)(sum[2] / n));
    *tex = scene_take_image_texture(r->s, &img);
    image_free(&img);
    if (*tex < 0) return prm_fail(&r->ctx, where, "imagemap \"%s\": out of texture memory", path);
    /* one image memory budget per scene (CAUSTIC_IMAGE_MEMORY), as every reader keeps */
    if (scene_textures_memory_check(r->s, path, err, sizeof err)) return prm_fail(&r->ctx, where, "%s", err);
    return 0;
}

static int d_texture(R *r, const pbrt_token *at) {
    char w[PRM_WHERE];
    pbrt_token name, type, cls;
    if (pbrt_lex_next(&r->lx, &name) || pbrt_lex_next(&r->lx, &type) || pbrt_lex_next(&r->lx, &cls)) return -1;
    pbrt_where(&r->lx, at, w);
    if (name.type != PTK_STRING || type.type != PTK_STRING || cls.type != PTK_STRING)
        return prm_fail(&r->ctx, w, "Texture: expected \"name\" \"float|spectrum\" \"class\"");
    char *nm = sdup(name.text, name.len);
    char ty[32], cl[64];
    snprintf(ty, sizeof ty, "%.*s", (int)(type.len > 30 ? 30 : type.len), type.text);
    snprintf(cl, sizeof cl, "%.*s", (int)(cls.len > 60 ? 60 : cls.len), cls.text);
    if (!nm) return oom(r, w);
    if (strcmp(ty, "float") && strcmp(ty, "spectrum") && strcmp(ty, "color") && strcmp(ty, "rgb")) {
        free(nm);
        return prm_fail(&r->ctx, w, "Texture \"%.64s\": type \"%s\" is neither \"float\" nor \"spectrum\"", name.text,
                        ty);
    }
    char owner[160];
    snprintf(owner, sizeof owner, "texture \"%.64s\" (%s)", nm, cl);
    plist pl;
    if (parse_params(r, &pl, owner, at)) {
        free(nm);
        return -1;
    }
    pbrt_where(&r->lx, at, w);
    ptex t;
    memset(&t, 0, sizeof t);
    t.name = nm;
    t.is_float = !strcmp(ty, "float");
    t.kind = PT_OTHER;
    t.value = v3s(t.is_float ? 1.0f : 0.5f);
    t.tex = -1;
    int rc = 0;
    if (!strcmp(cl, "constant")) {
        t.kind = PT_CONST;
        rc = get_color(r, &pl, "value", v3s(1.0f), 0, &t.value, NULL);
    } else if (!strcmp(cl, "imagemap")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_fail(&r->ctx, w, "%s needs \"string filename\"", owner);
        if (!rc) {
            char *path = pbrt_resolve(&r->lx, at, fn);
            vec3 mean = v3s(0.5f);
            rc = path ? load_image_texture(r, path, w, &t.tex, &mean) : oom(r, w);
            free(path);
            double sc = 1.0;
            int inv = 0;
            if (!rc) rc = prm_float(&pl.l, "scale", 1.0, -1e30, 1e30, "", &sc);
            if (!rc) rc = prm_bool(&pl.l, "invert", 0, &inv);
            if (!rc && inv) rc = UNSUPPORTED(r, "imagemap invert", w, "%s: \"invert\" is not applied", owner);
            const char *enc;
            if (!rc) rc = prm_string(&pl.l, "encoding", "", &enc);
            const char *filt;
            if (!rc) rc = prm_string(&pl.l, "filter", "", &filt);
            const char *wrap;
            if (!rc) rc = prm_string(&pl.l, "wrap", "repeat", &wrap);
            if (!rc && t.tex >= 0 && (!strcmp(wrap, "clamp") || !strcmp(wrap, "black")))
                r->s->textures[t.tex].wrap_u = r->s->textures[t.tex].wrap_v = TEX_WRAP_CLAMP;
            t.kind = PT_IMAGE;
            t.value = v3s((float)sc);
            if (t.is_float) { /* a float texture's stand-in value is its mean */
                t.value = vscale(mean, (float)sc);
                t.factor = (float)sc;
            }
        }
    } else if (!strcmp(cl, "scale")) {
        /* tex * scale: an image times a constant stays an image */
        vec3 a, b;
        int ta = -1, tb = -1;
        int v3 = !ptype(&pl, "tex") && ptype(&pl, "tex1"); /* pbrt-v3: tex1 x tex2 */
        rc = get_color(r, &pl, v3 ? "tex1" : "tex", v3s(1.0f), 0, &a, &ta);
        if (!rc) rc = get_color(r, &pl, v3 ? "tex2" : "scale", v3s(1.0f), 0, &b, &tb);
        if (!rc) {
            const char *an = "", *bn = "";
            (void)prm_string(&pl.l, v3 ? "tex1" : "tex", "", &an);
            (void)prm_string(&pl.l, v3 ? "tex2" : "scale", "", &bn);
            if (ta >= 0 && tb < 0) {
                t.kind = PT_IMAGE;
                t.tex = ta;
                t.value = vmul(a, b);
                ptex *in = find_tex(r, an, 1);
                t.factor = (in ? in->factor : 1.0f) * b.x;
            } else if (tb >= 0 && ta < 0) {
                t.kind = PT_IMAGE;
                t.tex = tb;
                t.value = vmul(a, b);
                ptex *in = find_tex(r, bn, 1);
                t.factor = (in ? in->factor : 1.0f) * a.x;
            } else if (ta < 0 && tb < 0) {
                t.kind = PT_CONST;
                t.value = vmul(a, b);
            } else {
                t.value = vmul(a, b);
                rc = UNSUPPORTED(r, "texture scale of two", w, "%s: a product of two textures; the first stands in",
                                 owner);
                t.kind = PT_IMAGE;
                t.tex = ta;
            }
            if (t.kind == PT_IMAGE && t.tex >= 0 && r->s->textures[t.tex].kind == TEX_CHECKER) t.kind = PT_CHECKER;
        }
    } else if (!strcmp(cl, "checkerboard")) {
        vec3 a, b;
        double us, vs;
        long dim;
        rc = get_color(r, &pl, "tex1", v3s(1.0f), 0, &a, NULL);
        if (!rc) rc = get_color(r, &pl, "tex2", v3s(0.0f), 0, &b, NULL);
        if (!rc) rc = prm_float(&pl.l, "uscale", 1.0, -1e9, 1e9, "", &us);
        if (!rc) rc = prm_float(&pl.l, "vscale", us, -1e9, 1e9, "", &vs);
        if (!rc) rc = prm_int(&pl.l, "dimension", 2, 2, 3, &dim);
        if (!rc && fabs(us - vs) > 1e-9 * fabs(us))
            rc = UNSUPPORTED(r, "checkerboard scales", w,
                             "%s: uscale %g and vscale %g differ; caustic's checker has one "
                             "scale (uscale used)",
                             owner, us, vs);
        if (!rc) {
            texture tx;
            memset(&tx, 0, sizeof tx);
            tx.kind = TEX_CHECKER;
            tx.a = a;
            tx.b = b;
            tx.scale = (float)us;
            tx.uv_space = dim == 2;
            t.tex = scene_add_texture(r->s, tx, NULL);
            if (t.tex < 0) rc = oom(r, w);
            t.kind = PT_CHECKER;
            t.value = vscale(vadd(a, b), 0.5f);
        }
    } else if (!strcmp(cl, "mix") || !strcmp(cl, "directionmix")) {
        vec3 a, b;
        double amt;
        rc = get_color(r, &pl, "tex1", v3s(0.0f), 0, &a, NULL);
        if (!rc) rc = get_color(r, &pl, "tex2", v3s(1.0f), 0, &b, NULL);
        if (!rc) rc = get_float(r, &pl, "amount", 0.5, 0, 1, &amt);
        if (!rc) {
            prm_value *dir = pfind(&pl, "dir");
            if (dir) dir->used = 1;
            t.value = vadd(vscale(a, (float)(1 - amt)), vscale(b, (float)amt));
            t.kind = PT_CONST;
            int varying = ptype(&pl, "amount") && !strcmp(ptype(&pl, "amount"), "texture");
            if (varying || !strcmp(cl, "directionmix"))
                rc = UNSUPPORTED(r, "texture mix", w, "%s: a varying mix; its mean colour stands in", owner);
        }
    } else {
        char key[96];
        snprintf(key, sizeof key, "texture %.60s", cl);
        rc = UNSUPPORTED(r, key, w, "texture class \"%s\" (%s): caustic does not have it; %s stands in", cl, owner,
                         t.is_float ? "1" : "grey 0.5");
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
    }
    if (!rc) rc = finish_params(r, &pl);
    plist_free(&pl);
    if (!rc && GROW(r->ptexs, r->nptexs, r->capptexs)) rc = oom(r, w);
    if (rc) {
        free(nm);
        return -1;
    }
    r->ptexs[r->nptexs++] = t;
    return 0;
}

/* ---- shapes ----------------------------------------------------------------------------------------- */
static m4 final_m4(const R *r) { return m4_mul(&r->mirror, &r->g.ctm); }

/* orient m's triangles as pbrt orients the surface (before the transform `to`), then add it */
static int emit_mesh(R *r, pbrt_mesh *m, const m4 *to, int material, const char *where) {
    if (r->s->ntriangles + m->nt > MAX_TRIANGLES)
        return prm_fail(&r->ctx, where, "more than %u triangles", MAX_TRIANGLES);
    int swap = m4_det3(to) < 0;
    for (size_t t = 0; t < m->nt; ++t) {
        uint32_t *ix = m->idx + 3 * t;
        int flip;
        if (m->n) {
            vec3 g = vcross(vsub(m->p[ix[1]], m->p[ix[0]]), vsub(m->p[ix[2]], m->p[ix[0]]));
            vec3 ns = vadd(vadd(m->n[ix[0]], m->n[ix[1]]), m->n[ix[2]]);
            flip = vdot(g, ns) < 0;
        } else
            flip = r->g.rev;
        if (flip ^ swap) {
            uint32_t x = ix[1];
            ix[1] = ix[2];
            ix[2] = x;
        }
    }
    if (r->cur_object) {
        pobject *o = r->cur_object;
        m4 inv;
        if (m4_inv(to, &inv)) return prm_fail(&r->ctx, where, "the transformation is singular");
        if (grow((void **)&o->p, &o->capv, o->nv + m->nv, sizeof *o->p) ||
            grow((void **)&o->mat, &o->capt, o->nt + m->nt, sizeof *o->mat))
            return oom(r, where);
        size_t cv = o->capv, ct = o->capt;
        (void)ct;
        o->n = realloc(o->n, cv * sizeof *o->n);
        o->uv = realloc(o->uv, cv * sizeof *o->uv);
        o->idx = realloc(o->idx, 3 * o->capt * sizeof *o->idx);
        if (!o->n || !o->uv || !o->idx) return oom(r, where);
        for (size_t i = 0; i < m->nv; ++i) {
            double p[3] = {m->p[i].x, m->p[i].y, m->p[i].z}, q[3];
            m4_point(to, p, q);
            o->p[o->nv + i] = dv(q);
            o->uv[o->nv + i] = m->uv ? m->uv[i] : v2(0, 0);
            if (m->n) { /* normals by the inverse transpose */
                double nn[3] = {m->n[i].x, m->n[i].y, m->n[i].z}, w[3];
                for (int a = 0; a < 3; ++a) w[a] = inv.m[0][a] * nn[0] + inv.m[1][a] * nn[1] + inv.m[2][a] * nn[2];
                o->n[o->nv + i] = vnorm(dv(w));
            } else
                o->n[o->nv + i] = v3s(0.0f);
        }
        for (size_t t = 0; t < m->nt; ++t) {
            for (int k = 0; k < 3; ++k)
                o->idx[3 * (o->nt + t) + (size_t)k] = (uint32_t)o->nv + m->idx[3 * t + (size_t)k];
            o->mat[o->nt + t] = material;
        }
        o->nv += m->nv;
        o->nt += m->nt;
        return 0;
    }
    xform x = m4_xform(to);
    if (scene_add_mesh(r->s, m->p, m->n, m->uv, m->nv, m->idx, NULL, m->nt, x, material))
        return prm_fail(&r->ctx, where, "cannot add the mesh (out of memory, or a singular transformation)");
    return 0;
}

/* world-space area of m under `to` (for an area light's "power") */
static double mesh_area(const pbrt_mesh *m, const m4 *to) {
    double a = 0;
    for (size_t t = 0; t < m->nt; ++t) {
        double p[3][3];
        for (int k = 0; k < 3; ++k) {
            vec3 v = m->p[m->idx[3 * t + (size_t)k]];
            double q[3] = {v.x, v.y, v.z};
            m4_point(to, q, p[k]);
        }
        double e1[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        double e2[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        double c[3];
        d_cross(e1, e2, c);
        a += 0.5 * sqrt(d_dot(c, c));
    }
    return a;
}

static int get_indices(R *r, plist *pl, const char *name, size_t nverts, size_t per, uint32_t **out, size_t *n,
                       int required) {
    size_t k = 0;
    const double *ix = pnums(r, pl, name, &k);
    *out = NULL;
    *n = 0;
    if (k == (size_t)-1) return -1;
    if (!ix) {
        if (!required) return 0;
        return prm_fail(&r->ctx, pl->where, "%s needs \"integer %s\"", pl->owner, name);
    }
    prm_value *v = pfind(pl, name);
    if (k % per)
        return prm_fail(&r->ctx, v->where, "%s: \"%s\" has %zu values, not a multiple of %zu", pl->owner, name, k, per);
    *out = malloc((k ? k : 1) * sizeof **out);
    if (!*out) return oom(r, v->where);
    for (size_t i = 0; i < k; ++i) {
        if (!(ix[i] >= 0 && ix[i] < (double)nverts && ix[i] == floor(ix[i]))) {
            free(*out);
            *out = NULL;
            return prm_fail(&r->ctx, v->where, "%s: index %g of \"%s\" is out of range (%zu vertices)", pl->owner,
                            ix[i], name, nverts);
        }
        (*out)[i] = (uint32_t)ix[i];
    }
    *n = k;
    return 0;
}

static int get_points(R *r, plist *pl, const char *name, size_t dim, size_t want, void **out, size_t *n) {
    size_t k = 0;
    const double *a = pnums(r, pl, name, &k);
    *out = NULL;
    *n = 0;
    if (k == (size_t)-1) return -1;
    if (!a) return 0;
    prm_value *v = pfind(pl, name);
    if (k % dim || (want && k / dim != want))
        return prm_fail(&r->ctx, v->where, "%s: \"%s\" has %zu values; expected %s%zu", pl->owner, name, k,
                        want ? "" : "a multiple of ", want ? want * dim : dim);
    float *o = malloc((k ? k : 1) * sizeof *o);
    if (!o) return oom(r, v->where);
    for (size_t i = 0; i < k; ++i) {
        o[i] = (float)a[i];
        if (!isfinite(o[i])) {
            free(o);
            return prm_fail(&r->ctx, v->where, "%s: \"%s\" holds a value that is not finite", pl->owner, name);
        }
    }
    *out = o;
    *n = k / dim;
    return 0;
}

static int shape_alpha(R *r, plist *pl, int *alpha_tex, int *skip) {
    *alpha_tex = -1;
    *skip = 0;
    const char *t = ptype(pl, "alpha");
    if (!t) return 0;
    if (!strcmp(t, "texture")) {
        const char *tn;
        if (prm_string(&pl->l, "alpha", "", &tn)) return -1;
        ptex *x = find_tex(r, tn, 1);
        prm_value *v = pfind(pl, "alpha");
        if (!x) return prm_fail(&r->ctx, v->where, "alpha of %s: no texture named \"%s\"", pl->owner, tn);
        if (x->kind == PT_IMAGE || x->kind == PT_CHECKER) {
            *alpha_tex = x->tex;
            return 0;
        }
        if (x->value.x <= 0) *skip = 1;
        return 0;
    }
    double a;
    if (prm_float(&pl->l, "alpha", 1.0, 0, 1, "", &a)) return -1;
    if (a <= 0)
        *skip = 1;
    else if (a < 1 &&
             UNSUPPORTED(r, "constant alpha", pl->where,
                         "constant alpha %g of %s: caustic's cut-outs are 0 or 1; the shape is opaque", a, pl->owner))
        return -1;
    return 0;
}

static int read_ply_mesh(R *r, const char *path, const char *where, pbrt_mesh *m) {
    char why[256], err[512];
    size_t n = 0;
    char *data = pbrt_read_file(path, (size_t)1 << 31, &n, why, sizeof why);
    if (!data) return prm_fail(&r->ctx, where, "plymesh \"%s\": %s", path, why);
    scene *tmp = scene_create();
    if (!tmp) {
        free(data);
        return oom(r, where);
    }
    int rc = scene_load_ply_memory(tmp, data, n, path, xform_identity(), 0, err, sizeof err);
    free(data);
    if (rc) {
        scene_destroy(tmp);
        return prm_fail(&r->ctx, where, "plymesh: %s", err);
    }
    memset(m, 0, sizeof *m);
    m->nv = tmp->nvertices;
    m->nt = tmp->ntriangles;
    m->p = malloc((m->nv ? m->nv : 1) * sizeof *m->p);
    m->idx = malloc((m->nt ? m->nt : 1) * 3 * sizeof *m->idx);
    if (tmp->has_normals) m->n = malloc((m->nv ? m->nv : 1) * sizeof *m->n);
    if (tmp->has_uvs) m->uv = malloc((m->nv ? m->nv : 1) * sizeof *m->uv);
    if (!m->p || !m->idx || (tmp->has_normals && !m->n) || (tmp->has_uvs && !m->uv)) {
        pbrt_mesh_free(m);
        scene_destroy(tmp);
        return oom(r, where);
    }
    memcpy(m->p, tmp->positions, m->nv * sizeof *m->p);
    if (m->n) memcpy(m->n, tmp->normals, m->nv * sizeof *m->n);
    if (m->uv) memcpy(m->uv, tmp->uvs, m->nv * sizeof *m->uv);
    for (size_t t = 0; t < m->nt; ++t)
        for (int k = 0; k < 3; ++k) m->idx[3 * t + (size_t)k] = tmp->triangles[t].v[k];
    scene_destroy(tmp);
    return 0;
}

static int d_shape(R *r, const pbrt_token *at) {
    char w[PRM_WHERE];
    pbrt_token ty;
    if (pbrt_lex_next(&r->lx, &ty)) return -1;
    pbrt_where(&r->lx, at, w);
    if (ty.type != PTK_STRING) return prm_fail(&r->ctx, w, "Shape: expected the shape's type as a quoted string");
    char type[64];
    snprintf(type, sizeof type, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
    char owner[96];
    snprintf(owner, sizeof owner, "shape \"%s\"", type);
    plist pl;
    if (parse_params(r, &pl, owner, at)) return -1;
    pbrt_where(&r->lx, at, w);
    if (!r->world) {
        plist_free(&pl);
        return prm_fail(&r->ctx, w, "Shape before WorldBegin");
    }
    pbrt_mesh m;
    memset(&m, 0, sizeof m);
    int rc = 0, alpha_tex = -1, skip = 0, analytic_sphere = 0;
    double sphere_r = 1;
    rc = shape_alpha(r, &pl, &alpha_tex, &skip);
    if (rc) goto done;
    if (!strcmp(type, "trianglemesh") || !strcmp(type, "bilinearmesh") || !strcmp(type, "loopsubdiv")) {
        size_t np = 0, nn = 0, nuv = 0, ni = 0;
        void *P = NULL, *N = NULL, *UV = NULL;
        uint32_t *ix = NULL;
        rc = get_points(r, &pl, "P", 3, 0, &P, &np);
        if (!rc && !P) rc = prm_fail(&r->ctx, w, "%s needs \"point3 P\"", owner);
        if (!rc && strcmp(type, "loopsubdiv")) rc = get_points(r, &pl, "N", 3, np, &N, &nn);
        if (!rc && strcmp(type, "loopsubdiv")) rc = get_points(r, &pl, "uv", 2, np, &UV, &nuv);
        size_t per = !strcmp(type, "bilinearmesh") ? 4 : 3;
        int implicit = !strcmp(type, "trianglemesh") ? np == 3 : !strcmp(type, "bilinearmesh") ? np == 4 : 0;
        if (!rc) rc = get_indices(r, &pl, "indices", np, per, &ix, &ni, !implicit);
        if (!rc && !ix) {
            ix = malloc(per * sizeof *ix);
            if (!ix) rc = oom(r, w);
            for (size_t i = 0; !rc && i < per; ++i) ix[i] = (uint32_t)i;
            ni = per;
        }
        if (!rc) {
            m.p = P, m.n = N, m.uv = UV, m.nv = np;
            P = N = UV = NULL;
            if (per == 4) { /* a bilinear patch p00 p10 p01 p11: two triangles that keep its normal's side */
                m.nt = ni / 4 * 2;
                m.idx = malloc((m.nt ? m.nt : 1) * 3 * sizeof *m.idx);
                if (!m.idx) rc = oom(r, w);
                for (size_t q = 0; !rc && q < ni / 4; ++q) {
                    uint32_t a = ix[4 * q], b = ix[4 * q + 1], c = ix[4 * q + 2], d = ix[4 * q + 3];
                    uint32_t tri[6] = {a, b, d, a, d, c};
                    memcpy(m.idx + 6 * q, tri, sizeof tri);
                }
                free(ix);
                if (!rc && ni &&
                    UNSUPPORTED(r, "bilinear patches", w,
                                "bilinearmesh: each patch is two triangles (exact for planar patches)"))
                    rc = -1;
            } else {
                m.idx = ix;
                m.nt = ni / 3;
            }
            ix = NULL;
        }
        free(P), free(N), free(UV), free(ix);
        if (!rc && !strcmp(type, "loopsubdiv")) {
            long levels;
            rc = prm_int(&pl.l, "levels", 3, 0, MAX_LEVELS, &levels);
            if (!rc && (double)m.nt * pow(4.0, (double)levels) > MAX_TRIANGLES)
                rc = prm_fail(&r->ctx, w, "loopsubdiv: %zu triangles at %ld levels is more than %u", m.nt, levels,
                              MAX_TRIANGLES);
            if (!rc && pbrt_loop_subdivide(&m, (int)levels)) rc = oom(r, w);
        }
        prm_value *ex;
        const char *ignore[] = {"S", "faceIndices", "emissionfilename", NULL};
        for (int i = 0; ignore[i]; ++i)
            if ((ex = pfind(&pl, ignore[i]))) ex->used = 1;
    } else if (!strcmp(type, "plymesh")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_fail(&r->ctx, w, "plymesh needs \"string filename\"");
        if (!rc) {
            char *path = pbrt_resolve(&r->lx, at, fn);
            rc = path ? read_ply_mesh(r, path, w, &m) : oom(r, w);
            free(path);
        }
        prm_value *d = pfind(&pl, "displacement");
        if (!rc && d) {
            d->used = 1;
            prm_value *e = pfind(&pl, "edgelength");
            if (e) e->used = 1;
            rc = UNSUPPORTED(r, "displacement", d->where,
                             "plymesh displacement: not applied (the mesh is as in its file)");
        }
    } else if (!strcmp(type, "sphere") || !strcmp(type, "cylinder") || !strcmp(type, "disk")) {
        double rad, zmin, zmax, phimax, h = 0, ri = 0;
        rc = prm_float(&pl.l, "radius", 1.0, 0, 1e30, "", &rad);
        if (!rc) rc = prm_float(&pl.l, "phimax", 360.0, 0, 360, "degrees", &phimax);
        if (!strcmp(type, "sphere")) {
            if (!rc) rc = prm_float(&pl.l, "zmin", -rad, -1e30, 1e30, "", &zmin);
            if (!rc) rc = prm_float(&pl.l, "zmax", rad, -1e30, 1e30, "", &zmax);
            int whole = phimax >= 360.0 && zmin <= -rad && zmax >= rad;
            int emits = r->g.area;
            int bumped = r->pmats[r->g.material].p.bump_tex >= 0; /* bump maps need triangles */
            if (!rc && whole && !r->cur_object && !(emits && r->g.rev) && !bumped) {
                analytic_sphere = 1;
                sphere_r = rad;
            } else if (!rc && pbrt_tess_sphere(&m, rad, zmin, zmax, phimax, 64))
                rc = oom(r, w);
        } else if (!strcmp(type, "cylinder")) {
            if (!rc) rc = prm_float(&pl.l, "zmin", -1.0, -1e30, 1e30, "", &zmin);
            if (!rc) rc = prm_float(&pl.l, "zmax", 1.0, -1e30, 1e30, "", &zmax);
            if (!rc && pbrt_tess_cylinder(&m, rad, zmin, zmax, phimax, 64)) rc = oom(r, w);
        } else {
            if (!rc) rc = prm_float(&pl.l, "height", 0.0, -1e30, 1e30, "", &h);
            if (!rc) rc = prm_float(&pl.l, "innerradius", 0.0, 0, rad, "", &ri);
            if (!rc && pbrt_tess_disk(&m, h, rad, ri, phimax, 64)) rc = oom(r, w);
        }
        if (!rc && !analytic_sphere) {
            char key[96];
            snprintf(key, sizeof key, "tessellated %s", type);
            rc = UNSUPPORTED(r, key, w, "%s: tessellated (64 segments a turn; caustic has no analytic %s%s)", type,
                             type, !strcmp(type, "sphere") ? " of this kind" : "");
        }
    } else {
        char key[80];
        snprintf(key, sizeof key, "shape %.60s", type);
        rc = UNSUPPORTED(r, key, w, "shape \"%s\": caustic does not have it; not rendered", type);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        skip = 1;
    }
    if (!rc) rc = finish_params(r, &pl);
    if (!rc && r->pmats[r->g.material].interface) { /* no surface: only a boundary of media */
        if (r->g.med_in == r->g.med_out) skip = 1;  /* a boundary of none: nothing there */
        if (r->g.area)
            rc = UNSUPPORTED(r, "emissive interface", w,
                             "an area light on a shape of material \"interface\" (no surface): it emits nothing");
    }
    if (rc || skip) goto done;
    {
        if (m.n && r->g.rev)
            for (size_t i = 0; i < m.nv; ++i) m.n[i] = vscale(m.n[i], -1.0f);
        /* "power" (W) -> radiance: pbrt divides by pi * area (twice for two-sided) */
        vec3 saved = r->g.area_L;
        if (r->g.area && r->g.area_power > 0) {
            double a = analytic_sphere ? 4 * PI_D * sphere_r * sphere_r * pow(fabs(m4_det3(&r->g.ctm)), 2.0 / 3.0)
                                       : mesh_area(&m, &r->g.ctm);
            double k = PI_D * a * (r->g.area_two_sided ? 2 : 1);
            if (k > 0) r->g.area_L = vscale(r->g.area_L, (float)(r->g.area_power / k));
            if (!analytic_sphere && m.nt > 1)
                rc = UNSUPPORTED(r, "area power mesh", r->g.area_where,
                                 "\"power\" of an area light on a mesh: spread over the whole mesh (pbrt gives each "
                                 "triangle that power)");
        }
        int mat = rc ? -1 : shape_material(r, alpha_tex, w);
        r->g.area_L = saved;
        if (mat < 0) {
            rc = -1;
            goto done;
        }
        m4 to = r->cur_object ? r->g.ctm : final_m4(r);
        if (analytic_sphere) {
            m4 sc = m4_scale(2 * sphere_r, 2 * sphere_r, 2 * sphere_r);
            m4 f = m4_mul(&to, &sc);
            if (scene_add_sphere(r->s, m4_xform(&f), mat)) rc = prm_fail(&r->ctx, w, "cannot add the sphere");
        } else {
            rc = emit_mesh(r, &m, &to, mat, w);
        }
    }
done:
    pbrt_mesh_free(&m);
    plist_free(&pl);
    return rc;
}

/* ---- lights ---------------------------------------------------------------------------------------- */
static void latlong_to_dir_pbrt(const R *r, const m4 *light_inv, double u, double v, double out[3]) {
    /* caustic's lat-long (kernel/environment.h): u = 0.5 + atan2(x, -z) / 2pi, v = theta / pi from +y */
    double phi = (u - 0.5) * 2 * PI_D, th = v * PI_D;
    double d[3] = {sin(th) * sin(phi), cos(th), -sin(th) * cos(phi)}, w[3];
    m4_vector(&r->mirror, d, w); /* the mirror is its own inverse */
    m4_vector(light_inv, w, out);
    d_norm(out);
}

/* pbrt-v4's equal-area octahedral mapping (Clarberg): unit direction -> [0,1]^2 */
static void equal_area_square(const double d[3], double *u, double *v) {
    double x = fabs(d[0]), y = fabs(d[1]), z = fabs(d[2]);
    double rr = sqrt(fmax(0.0, 1 - z));
    double a = fmax(x, y), b = fmin(x, y);
    b = a == 0 ? 0 : b / a;
    double phi = atan(b) * 2 / PI_D;
    if (x < y) phi = 1 - phi;
    double vv = phi * rr, uu = rr - vv;
    if (d[2] < 0) {
        double t = uu;
        uu = vv;
        vv = t;
        uu = 1 - uu;
        vv = 1 - vv;
    }
    uu = copysign(uu, d[0]);
    vv = copysign(vv, d[1]);
    *u = 0.5 * (uu + 1);
    *v = 0.5 * (vv + 1);
}

static vec3 bilerp(const image *img, double u, double v) {
    double x = u * img->width - 0.5, y = v * img->height - 0.5;
    int x0 = (int)floor(x), y0 = (int)floor(y);
    double fx = x - x0, fy = y - y0;
    vec3 acc = v3s(0.0f);
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i) {
            int xi = x0 + i, yi = y0 + j;
            xi = xi < 0 ? 0 : xi >= img->width ? img->width - 1 : xi;
            yi = yi < 0 ? 0 : yi >= img->height ? img->height - 1 : yi;
            double wgt = (i ? fx : 1 - fx) * (j ? fy : 1 - fy);
            const float *px = img->rgb + 3 * ((size_t)yi * (size_t)img->width + (size_t)xi);
            acc = vadd(acc, vscale(v3(px[0], px[1], px[2]), (float)wgt));
        }
    return acc;
}

/* pbrt-v3's lat-long maps: phi = atan2(y, x) across, theta = acos(z) down, in light space */
static void latlong_square(const double d[3], double *u, double *v) {
    double phi = atan2(d[1], d[0]);
    if (phi < 0) phi += 2 * PI_D;
    *u = phi / (2 * PI_D);
    *v = acos(d[2] < -1 ? -1 : d[2] > 1 ? 1 : d[2]) / PI_D;
}

static int env_image(R *r, const char *path, double scale, const char *where) {
    image img;
    char err[512];
    memset(&img, 0, sizeof img);
    if (image_load(&img, path, err, sizeof err)) return prm_fail(&r->ctx, where, "infinite light: %s", err);
    int equal_area = img.width == img.height;
    if (!equal_area &&
        UNSUPPORTED(r, "latlong env", where,
                    "infinite light \"%s\": %dx%d is not square, so not pbrt-v4's equal-area map: read as pbrt-v3's "
                    "lat-long map",
                    path, img.width, img.height)) {
        image_free(&img);
        return -1;
    }
    int W = (equal_area ? 2 : 1) * img.width > 2048 ? 2048 : (equal_area ? 2 : 1) * img.width, H = W / 2;
    if (W < 8) W = 8, H = 4;
    float *ll = malloc((size_t)W * (size_t)H * 3 * sizeof *ll);
    if (!ll) {
        image_free(&img);
        return oom(r, where);
    }
    m4 inv;
    if (m4_inv(&r->g.ctm, &inv)) inv = m4_id();
    /* 2x2 samples a texel of the lat-long map */
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            vec3 acc = v3s(0.0f);
            for (int s = 0; s < 4; ++s) {
                double u = (x + 0.25 + 0.5 * (s & 1)) / W, v = (y + 0.25 + 0.5 * (s >> 1)) / H;
                double d[3], eu, ev;
                latlong_to_dir_pbrt(r, &inv, u, v, d);
                if (equal_area)
                    equal_area_square(d, &eu, &ev);
                else
                    latlong_square(d, &eu, &ev);
                acc = vadd(acc, bilerp(&img, eu, ev));
            }
            float *o = ll + 3 * ((size_t)y * (size_t)W + (size_t)x);
            o[0] = 0.25f * acc.x, o[1] = 0.25f * acc.y, o[2] = 0.25f * acc.z;
        }
    image_free(&img);
    int tex = scene_add_image_texture(r->s, W, H, ll);
    free(ll);
    if (tex < 0) return prm_fail(&r->ctx, where, "infinite light \"%s\": out of texture memory", path);
    if (scene_textures_memory_check(r->s, path, err, sizeof err) ||
        scene_env_memory_check(r->s, tex, path, err, sizeof err))
        return prm_fail(&r->ctx, where, "%s", err);
    r->s->env_tex = tex;
    r->s->env_radiance = v3s((float)scale);
    return 0;
}

static int d_light(R *r, const pbrt_token *at, int area) {
    char w[PRM_WHERE];
    pbrt_token ty;
    if (pbrt_lex_next(&r->lx, &ty)) return -1;
    pbrt_where(&r->lx, at, w);
    if (ty.type != PTK_STRING)
        return prm_fail(&r->ctx, w, "%s: expected the light's type as a quoted string",
                        area ? "AreaLightSource" : "LightSource");
    char type[64];
    snprintf(type, sizeof type, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
    char owner[96];
    snprintf(owner, sizeof owner, "%s \"%s\"", area ? "area light" : "light", type);
    plist pl;
    if (parse_params(r, &pl, owner, at)) return -1;
    pbrt_where(&r->lx, at, w);
    int rc = 0;
    double scale = 1, power = 0;
    prm_value *sv = pfind(&pl, "scale");
    if (sv && sv->type == PRM_NUMBER && sv->n == 3) { /* pbrt-v3: a spectrum */
        sv->used = 1;
        scale = (sv->nums[0] + sv->nums[1] + sv->nums[2]) / 3.0;
        if ((sv->nums[0] != sv->nums[1] || sv->nums[1] != sv->nums[2]) &&
            UNSUPPORTED(r, "coloured scale", sv->where, "a coloured \"scale\" of %s: its mean %g is used", owner,
                        scale))
            rc = -1;
    } else
        rc = prm_float(&pl.l, "scale", 1.0, -1e30, 1e30, "", &scale);
    if (!rc) rc = prm_float(&pl.l, "power", 0.0, 0, 1e30, "", &power);
    if (!rc && !r->world) rc = prm_fail(&r->ctx, w, "%s before WorldBegin", owner);
    m4 F = final_m4(r);
    if (rc) goto done;
    if (area) {
        if (strcmp(type, "diffuse") && strcmp(type, "area")) { /* "area": pbrt-v3's name */
            rc = prm_fail(&r->ctx, w, "AreaLightSource \"%s\": pbrt-v4 has only \"diffuse\"", type);
            goto done;
        }
        vec3 L;
        int two = 0;
        rc = get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
        if (!rc) rc = prm_bool(&pl.l, "twosided", 0, &two);
        prm_value *fn = pfind(&pl, "filename");
        if (!rc && fn) {
            fn->used = 1;
            rc = UNSUPPORTED(r, "area light image", fn->where,
                             "area light \"filename\": image emission is not read; L stands in");
        }
        r->g.area = 1;
        r->g.area_L = vscale(L, (float)scale);
        r->g.area_two_sided = two;
        r->g.area_power = power;
        free(r->g.area_where);
        r->g.area_where = sdup(w, strlen(w));
    } else if (!strcmp(type, "point") || !strcmp(type, "spot")) {
        vec3 I;
        double from[3] = {0, 0, 0}, to[3] = {0, 0, 1};
        size_t n = 0;
        const double *f = pnums(r, &pl, "from", &n);
        if (n == (size_t)-1) rc = -1;
        if (f && n == 3) memcpy(from, f, sizeof from);
        const double *t = rc ? NULL : pnums(r, &pl, "to", &n);
        if (n == (size_t)-1) rc = -1;
        if (t && n == 3) memcpy(to, t, sizeof to);
        if (rc) goto done;
        rc = get_color(r, &pl, "I", v3s(1.0f), 1, &I, NULL);
        double pw[3], pt[3], axis[3];
        m4_point(&F, from, pw);
        m4_point(&F, to, pt);
        for (int i = 0; i < 3; ++i) axis[i] = pt[i] - pw[i];
        if (!strcmp(type, "point")) {
            if (power > 0) scale *= power / (4 * PI_D);
            if (!rc && scene_add_point_light(r->s, dv(pw), vscale(I, (float)scale)))
                rc = prm_fail(&r->ctx, w, "cannot add the point light (bad values?)");
        } else {
            double cone, delta;
            if (!rc) rc = prm_float(&pl.l, "coneangle", 30.0, 0.01, 90, "degrees", &cone);
            if (!rc) rc = prm_float(&pl.l, "conedelta", 5.0, 0, 90, "degrees", &delta);
            double inner = cone - delta < 0 ? 0 : cone - delta;
            if (power > 0) {
                double cs = cos(inner * PI_D / 180), ce = cos(cone * PI_D / 180);
                scale *= power / (2 * PI_D * ((1 - cs) + (cs - ce) / 2));
            }
            if (!rc && d_norm(axis)) rc = prm_fail(&r->ctx, w, "spot light: \"from\" and \"to\" are the same point");
            if (!rc && scene_add_spot_light(r->s, dv(pw), dv(axis), vscale(I, (float)scale), (float)inner, (float)cone))
                rc = prm_fail(&r->ctx, w, "cannot add the spot light (bad values?)");
        }
        r->nlights++;
    } else if (!strcmp(type, "distant")) {
        vec3 L;
        double from[3] = {0, 0, 0}, to[3] = {0, 0, 1};
        size_t n = 0;
        const double *f = pnums(r, &pl, "from", &n);
        if (n == (size_t)-1) rc = -1;
        if (f && n == 3) memcpy(from, f, sizeof from);
        const double *t = rc ? NULL : pnums(r, &pl, "to", &n);
        if (n == (size_t)-1) rc = -1;
        if (t && n == 3) memcpy(to, t, sizeof to);
        if (rc) goto done;
        rc = get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
        double dir[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]}, dw[3];
        m4_vector(&F, dir, dw);
        if (!rc && power > 0)
            rc = UNSUPPORTED(r, "distant power", w, "distant light \"power\": needs the scene's bounds; scale used");
        if (!rc && d_norm(dw)) rc = prm_fail(&r->ctx, w, "distant light: \"from\" and \"to\" are the same point");
        if (!rc && scene_add_directional_light(r->s, dv(dw), vscale(L, (float)scale)))
            rc = prm_fail(&r->ctx, w, "cannot add the distant light (bad values?)");
        r->nlights++;
    } else if (!strcmp(type, "infinite")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_string(&pl.l, "mapname", "", &fn); /* pbrt-v3 */
        prm_value *portal = pfind(&pl, "portal");
        if (!rc && portal) {
            portal->used = 1;
            rc = UNSUPPORTED(r, "portal", portal->where, "infinite light \"portal\": ignored (sampling only)");
        }
        if (!rc && power > 0)
            rc = UNSUPPORTED(r, "infinite power", w, "infinite light \"power\": not applied; scale used");
        if (!rc && fn[0]) {
            vec3 tint = v3s(1.0f); /* pbrt-v3 multiplies its map by L */
            if (pfind(&pl, "L")) rc = get_color(r, &pl, "L", v3s(1.0f), 0, &tint, NULL);
            if (!rc && (r->env_images || r->s->env_tex >= 0))
                rc = UNSUPPORTED(r, "second env image", w,
                                 "a second infinite light with an image: caustic has one "
                                 "environment map; this one is dropped");
            else if (!rc) {
                char *path = pbrt_resolve(&r->lx, at, fn);
                rc = path ? env_image(r, path, scale, w) : oom(r, w);
                free(path);
                if (!rc) r->s->env_radiance = vmul(r->s->env_radiance, tint);
                r->env_images++;
            }
        } else if (!rc) {
            vec3 L;
            rc = get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
            r->env_const = vadd(r->env_const, vscale(L, (float)scale));
        }
        r->nlights++;
    } else if (!strcmp(type, "goniometric") || !strcmp(type, "projection")) {
        vec3 I;
        double from[3] = {0, 0, 0}, pw[3];
        rc = get_color(r, &pl, "I", v3s(1.0f), 1, &I, NULL);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        m4_point(&F, from, pw);
        char key[96];
        snprintf(key, sizeof key, "light %s", type);
        if (!rc) rc = UNSUPPORTED(r, key, w, "light \"%s\": its image is not read; a point light of I stands in", type);
        if (!rc && scene_add_point_light(r->s, dv(pw), vscale(I, (float)scale)))
            rc = prm_fail(&r->ctx, w, "cannot add the point light");
        r->nlights++;
    } else {
        rc = prm_fail(&r->ctx, w,
                      "unknown light \"%s\" (pbrt-v4 has point, spot, goniometric, projection, distant, "
                      "infinite)",
                      type);
    }
    if (!rc) rc = finish_params(r, &pl);
done:
    plist_free(&pl);
    return rc;
}

/* ---- camera and render settings ---------------------------------------------------------------------- */
static int d_camera(R *r, const pbrt_token *at) {
    char w[PRM_WHERE];
    pbrt_token ty;
    if (pbrt_lex_next(&r->lx, &ty)) return -1;
    pbrt_where(&r->lx, at, w);
    if (ty.type != PTK_STRING) return prm_fail(&r->ctx, w, "Camera: expected the camera's type as a quoted string");
    char type[64];
    snprintf(type, sizeof type, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
    char owner[96];
    snprintf(owner, sizeof owner, "camera \"%s\"", type);
    plist pl;
    if (parse_params(r, &pl, owner, at)) return -1;
    pbrt_where(&r->lx, at, w);
    int rc = 0;
    if (r->world) rc = prm_fail(&r->ctx, w, "Camera after WorldBegin");
    r->cam_from_world = r->g.ctm;
    r->cam_medium = r->g.med_out; /* pbrt-v4's CameraMedium: the outside of the MediumInterface in force */
    r->have_camera = 1;
    free(r->cam_type);
    r->cam_type = sdup(type, strlen(type));
    /* "camera": camera to world, for CoordSysTransform */
    m4 c2w;
    if (!rc && m4_inv(&r->g.ctm, &c2w)) rc = prm_fail(&r->ctx, w, "Camera: the camera transformation is singular");
    if (!rc) {
        if (GROW(r->coords, r->ncoords, r->capcoords)) return oom(r, w);
        r->coords[r->ncoords++] = (named_m4){sdup("camera", 6), c2w};
    }
    if (!rc) rc = prm_float(&pl.l, "fov", 90.0, 0.01, 179.9, "degrees", &r->fov);
    if (!rc) rc = prm_float(&pl.l, "lensradius", 0.0, 0, 1e30, "", &r->lensradius);
    if (!rc) rc = prm_float(&pl.l, "focaldistance", 1e6, 1e-6, 1e30, "", &r->focaldistance);
    size_t n = 0;
    const double *sw = pnums(r, &pl, "screenwindow", &n);
    if (!rc && sw) {
        if (n == 4) r->screen_half = 0.5 * fmin(sw[1] - sw[0], sw[3] - sw[2]);
        if (strcmp(type, "orthographic"))
            rc = UNSUPPORTED(r, "screenwindow", w, "camera \"screenwindow\": not applied (the full frame is rendered)");
    }
    double so = 0, sc = 1;
    if (!rc) rc = prm_float(&pl.l, "shutteropen", 0.0, -1e30, 1e30, "", &so);
    if (!rc) rc = prm_float(&pl.l, "shutterclose", 1.0, -1e30, 1e30, "", &sc);
    if (!rc) r->imaging_ratio *= (sc - so);
    prm_value *fa = pfind(&pl, "frameaspectratio");
    if (fa) fa->used = 1;
    if (!rc && strcmp(type, "perspective") && strcmp(type, "orthographic")) {
        char key[64];
        snprintf(key, sizeof key, "camera %s", type);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        rc = UNSUPPORTED(r, key, w,
                         "camera \"%s\": caustic has a perspective camera; a perspective camera of fov 90 "
                         "stands in",
                         type);
    }
    if (!rc && !strcmp(type, "orthographic"))
        rc = UNSUPPORTED(
            r, "orthographic", w,
            "orthographic camera: caustic's camera is perspective; a far-away camera of a very narrow field "
            "of view stands in");
    if (!rc) rc = finish_params(r, &pl);
    plist_free(&pl);
    return rc;
}

static int d_settings(R *r, const pbrt_token *at, const char *what) {
    char w[PRM_WHERE];
    pbrt_token ty;
    if (pbrt_lex_next(&r->lx, &ty)) return -1;
    pbrt_where(&r->lx, at, w);
    if (ty.type != PTK_STRING) return prm_fail(&r->ctx, w, "%s: expected its type as a quoted string", what);
    char type[64];
    snprintf(type, sizeof type, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
    char owner[96];
    snprintf(owner, sizeof owner, "%s \"%s\"", what, type);
    plist pl;
    if (parse_params(r, &pl, owner, at)) return -1;
    pbrt_where(&r->lx, at, w);
    int rc = 0;
    if (!strcmp(what, "Film")) {
        long xr, yr;
        rc = prm_int(&pl.l, "xresolution", 1280, 1, 16384, &xr);
        if (!rc) rc = prm_int(&pl.l, "yresolution", 720, 1, 16384, &yr);
        r->width = (int)xr;
        r->height = (int)yr;
        const char *fn;
        if (!rc) rc = prm_string(&pl.l, "filename", "", &fn);
        double iso = 100, et = 1;
        if (!rc) rc = prm_float(&pl.l, "iso", 100.0, 1e-6, 1e9, "", &iso);
        if (!rc) rc = prm_float(&pl.l, "exposuretime", 1.0, 1e-9, 1e9, "", &et);
        if (!rc) r->imaging_ratio *= iso / 100.0 * et;
        const char *sensor;
        if (!rc) rc = prm_string(&pl.l, "sensor", "cie1931", &sensor);
        if (!rc && strcmp(sensor, "cie1931"))
            rc = UNSUPPORTED(r, "sensor", w, "film sensor \"%s\": caustic renders sRGB as the cie1931 sensor does",
                             sensor);
        prm_value *cw = pfind(&pl, "cropwindow");
        if (!rc && cw) {
            cw->used = 1;
            rc = UNSUPPORTED(r, "cropwindow", cw->where, "film \"cropwindow\": the whole image is rendered");
        }
        const char *ignore[] = {"diagonal", "savefp16", "maxcomponentvalue", "whitebalance", "pixelbounds", NULL};
        for (int i = 0; ignore[i]; ++i) {
            prm_value *v = pfind(&pl, ignore[i]);
            if (v) v->used = 1;
        }
        if (!rc && strcmp(type, "rgb") && strcmp(type, "gbuffer") && strcmp(type, "spectral") &&
            strcmp(type, "image")) /* "image": pbrt-v3's RGB film */
            rc = UNSUPPORTED(r, "film type", w, "film \"%s\": an RGB film stands in", type);
    } else if (!strcmp(what, "Sampler")) {
        long spp;
        rc = prm_int(&pl.l, "pixelsamples", 16, 1, 1 << 24, &spp);
        r->s->spp = (int)spp;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* seeds and dimensions: caustic's own sampler */
    } else if (!strcmp(what, "Integrator")) {
        long md;
        rc = prm_int(&pl.l, "maxdepth", 5, 0, 100000, &md);
        if (md > 1024) md = 1024;
        r->s->max_depth = (int)md;
        static const char *const known[] = {"path", "volpath",   "simplepath", "bdpt",          "mlt",
                                            "sppm", "lightpath", "randomwalk", "simplevolpath", "ambientocclusion",
                                            "aov",  NULL};
        int k = -1;
        for (int i = 0; known[i]; ++i)
            if (!strcmp(known[i], type)) k = i;
        if (k < 0 && !strcmp(type, "directlighting")) { /* pbrt-v3 */
            r->s->max_depth = 1;
            rc = UNSUPPORTED(r, "integrator", w,
                             "integrator \"directlighting\" (pbrt-v3): path tracing of depth 1 "
                             "(direct light only) stands in");
        } else if (k < 0)
            rc = UNSUPPORTED(r, "integrator", w, "unknown integrator \"%s\": path tracing stands in", type);
        /* pbrt's bidirectional and photon integrators choose caustic's (a default --integrator overrides) */
        static const int as_caustic[] = {
            0, 0, 0, CAUSTIC_INTEGRATOR_BDPT + 1, 0, CAUSTIC_INTEGRATOR_PPM + 1, CAUSTIC_INTEGRATOR_LT + 1, 0, 0};
        if (!rc && k >= 0 && k < 9) r->s->integrator_hint = as_caustic[k];
        if (!rc && k >= 9)
            rc = UNSUPPORTED(r, "integrator", w,
                             "integrator \"%s\": caustic renders light transport; path tracing "
                             "stands in",
                             type);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* regularize, lightsampler... */
    } else {
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* Accelerator, PixelFilter: caustic's own */
    }
    if (!rc) rc = finish_params(r, &pl);
    plist_free(&pl);
    return rc;
}

/* caustic's camera from pbrt's, and the mirror that makes pbrt's left-handed view caustic's */
static int setup_world(R *r, const char *where) {
    m4 c2w;
    if (m4_inv(&r->cam_from_world, &c2w)) return prm_fail(&r->ctx, where, "the camera transformation is singular");
    double o[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    double eye[3], right[3], up[3], fwd[3], cr[3];
    m4_point(&c2w, o, eye);
    m4_vector(&c2w, ex, right);
    m4_vector(&c2w, ey, up);
    m4_vector(&c2w, ez, fwd);
    if (d_norm(fwd) || d_norm(up) || d_norm(right))
        return prm_fail(&r->ctx, where, "the camera transformation is degenerate");
    d_cross(fwd, up, cr);
    if (d_norm(cr)) return prm_fail(&r->ctx, where, "the camera's up and viewing directions are parallel");
    r->mirror = m4_id();
    r->mirrored = d_dot(cr, right) < 0;
    if (r->mirrored) { /* reflect through the plane through eye with normal cr */
        m4 refl = m4_id();
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) refl.m[i][j] -= 2 * cr[i] * cr[j];
        double t = 2 * d_dot(cr, eye);
        for (int i = 0; i < 3; ++i) refl.m[i][3] = t * cr[i];
        r->mirror = refl;
    }
    camera_desc *cd = &r->s->camera;
    cd->medium = r->cam_medium;
    int W = r->width, H = r->height;
    cd->width = W;
    cd->height = H;
    double fov = r->fov;
    /* pbrt's fov spans the shorter image axis; caustic's is vertical */
    if (W < H) fov = 2 * atan(tan(fov * PI_D / 360) * (double)H / W) * 180 / PI_D;
    double e[3];
    memcpy(e, eye, sizeof e);
    if (r->cam_type && !strcmp(r->cam_type, "orthographic")) {
        /* far away with a narrow view: the same screen window (half-height screen_half on the
         * shorter axis) at distance D */
        double half = r->screen_half > 0 ? r->screen_half : 1.0;
        double D = 1e4 * half;
        double vh = W < H ? half * H / W : half;
        for (int i = 0; i < 3; ++i) e[i] = eye[i] - D * fwd[i];
        fov = 2 * atan(vh / D) * 180 / PI_D;
    }
    cd->fovy_deg = (float)(fov > 179 ? 179 : fov);
    double mf[3] = {e[0] + fwd[0], e[1] + fwd[1], e[2] + fwd[2]}, me[3], ml[3], mu[3];
    m4_point(&r->mirror, e, me);
    m4_point(&r->mirror, mf, ml);
    m4_vector(&r->mirror, up, mu);
    cd->eye = dv(me);
    cd->lookat = dv(ml);
    cd->up = dv(mu);
    cd->aperture_radius = (float)r->lensradius;
    cd->focus_distance = r->lensradius > 0 ? (float)r->focaldistance : 0.0f;
    if (r->lensradius > 0) { /* the lookat at the focal distance, which is also what FOCUS_DISTANCE says */
        double fp[3] = {e[0] + r->focaldistance * fwd[0], e[1] + r->focaldistance * fwd[1],
                        e[2] + r->focaldistance * fwd[2]};
        m4_point(&r->mirror, fp, ml);
        cd->lookat = dv(ml);
    }
    return 0;
}

/* ---- directives ------------------------------------------------------------------------------------ */
static int read_numbers(R *r, double *out, int n, const char *what, const pbrt_token *at) {
    pbrt_token t;
    char w[PRM_WHERE];
    int bracket = 0;
    if (pbrt_lex_peek(&r->lx, &t)) return -1;
    if (t.type == PTK_LBRACK) {
        pbrt_lex_next(&r->lx, &t);
        bracket = 1;
    }
    for (int i = 0; i < n; ++i) {
        if (pbrt_lex_next(&r->lx, &t)) return -1;
        if (t.type != PTK_NUMBER) {
            pbrt_where(&r->lx, t.type == PTK_EOF ? at : &t, w);
            return prm_fail(&r->ctx, w, "%s expects %d numbers; value %d is %s", what, n, i + 1,
                            t.type == PTK_EOF ? "missing (the file ends)" : "not a number");
        }
        if (!isfinite(t.num)) {
            pbrt_where(&r->lx, &t, w);
            return prm_fail(&r->ctx, w, "%s: a value is not finite", what);
        }
        out[i] = t.num;
    }
    if (bracket) {
        if (pbrt_lex_next(&r->lx, &t)) return -1;
        if (t.type != PTK_RBRACK) {
            pbrt_where(&r->lx, &t, w);
            return prm_fail(&r->ctx, w, "%s expects %d numbers in [ ]; ']' is missing", what, n);
        }
    }
    return 0;
}

static int read_string(R *r, const pbrt_token *at, const char *what, char **out) {
    pbrt_token t;
    char w[PRM_WHERE];
    if (pbrt_lex_next(&r->lx, &t)) return -1;
    if (t.type != PTK_STRING) {
        pbrt_where(&r->lx, at, w);
        return prm_fail(&r->ctx, w, "%s expects a quoted name", what);
    }
    *out = sdup(t.text, t.len);
    if (!*out) {
        pbrt_where(&r->lx, at, w);
        return oom(r, w);
    }
    return 0;
}

static void concat(R *r, const m4 *m) { r->g.ctm = m4_mul(&r->g.ctm, m); }

static int push_state(R *r, const char *w) {
    if (GROW(r->stack, r->nstack, r->capstack)) return oom(r, w);
    r->stack[r->nstack] = r->g;
    if (r->g.area_where) r->stack[r->nstack].area_where = sdup(r->g.area_where, strlen(r->g.area_where));
    r->nstack++;
    return 0;
}
static int pop_state(R *r, const char *w, const char *what) {
    if (!r->nstack) return prm_fail(&r->ctx, w, "%s without a matching begin", what);
    free(r->g.area_where);
    r->g = r->stack[--r->nstack];
    return 0;
}

static int instance(R *r, const char *name, const char *w) {
    pobject *o = NULL;
    for (size_t i = 0; i < r->nobjects; ++i)
        if (!strcmp(r->objects[i].name, name)) o = &r->objects[i];
    if (!o) return prm_fail(&r->ctx, w, "ObjectInstance: no object named \"%s\"", name);
    if (r->cur_object) return prm_fail(&r->ctx, w, "ObjectInstance inside ObjectBegin");
    if (!o->nt) return 0;
    m4 F = final_m4(r);
    if (!o->mesh) { /* the object's triangles once, in its space (true instancing: scene_add_instance) */
        if (r->s->ntriangles + o->nt > MAX_TRIANGLES)
            return prm_fail(&r->ctx, w, "more than %u triangles", MAX_TRIANGLES);
        size_t v0 = r->s->nvertices, t0 = r->s->ntriangles;
        if (scene_add_mesh(r->s, o->p, o->n, o->uv, o->nv, o->idx, o->mat, o->nt, xform_identity(), 0))
            return oom(r, w);
        int mesh = scene_add_instanced_mesh(r->s, t0, o->nt, v0, o->nv);
        if (mesh < 0) return oom(r, w);
        o->mesh = mesh + 1;
    }
    /* pbrt keeps a surface's side under a transform that changes handedness: the winding reversed */
    if (scene_add_instance(r->s, o->mesh - 1, m4_xform(&F), -1, m4_det3(&F) < 0))
        return prm_fail(&r->ctx, w, "ObjectInstance \"%s\": out of memory or a singular transformation", name);
    return 0;
}

static int directive(R *r, const pbrt_token *t) {
    char w[PRM_WHERE];
    pbrt_where(&r->lx, t, w);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(t->len > 60 ? 60 : t->len), t->text);
    double v[16];
    if (!strcmp(name, "Identity")) {
        r->g.ctm = m4_id();
    } else if (!strcmp(name, "Translate")) {
        if (read_numbers(r, v, 3, name, t)) return -1;
        m4 m = m4_translate(v[0], v[1], v[2]);
        concat(r, &m);
    } else if (!strcmp(name, "Scale")) {
        if (read_numbers(r, v, 3, name, t)) return -1;
        m4 m = m4_scale(v[0], v[1], v[2]);
        concat(r, &m);
    } else if (!strcmp(name, "Rotate")) {
        if (read_numbers(r, v, 4, name, t)) return -1;
        m4 m = m4_rotate(v[0], v[1], v[2], v[3]);
        concat(r, &m);
    } else if (!strcmp(name, "LookAt")) {
        if (read_numbers(r, v, 9, name, t)) return -1;
        double pos[3] = {v[0], v[1], v[2]}, dir[3] = {v[3] - v[0], v[4] - v[1], v[5] - v[2]},
               up[3] = {v[6], v[7], v[8]};
        double right[3], nup[3];
        if (d_norm(dir)) return prm_fail(&r->ctx, w, "LookAt: the eye and the point looked at are the same");
        if (d_norm(up)) return prm_fail(&r->ctx, w, "LookAt: the up vector is zero");
        d_cross(up, dir, right);
        if (d_norm(right)) return prm_fail(&r->ctx, w, "LookAt: the up vector and the viewing direction are parallel");
        d_cross(dir, right, nup);
        m4 wfc = m4_id(), cfw;
        for (int i = 0; i < 3; ++i) {
            wfc.m[i][0] = right[i];
            wfc.m[i][1] = nup[i];
            wfc.m[i][2] = dir[i];
            wfc.m[i][3] = pos[i];
        }
        if (m4_inv(&wfc, &cfw)) return prm_fail(&r->ctx, w, "LookAt: degenerate");
        concat(r, &cfw);
    } else if (!strcmp(name, "Transform") || !strcmp(name, "ConcatTransform")) {
        if (read_numbers(r, v, 16, name, t)) return -1;
        m4 m;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) m.m[i][j] = v[j * 4 + i]; /* pbrt writes the transpose */
        if (name[0] == 'T')
            r->g.ctm = m;
        else
            concat(r, &m);
    } else if (!strcmp(name, "CoordinateSystem") || !strcmp(name, "CoordSysTransform")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = 0;
        if (name[5] == 'i') { /* CoordinateSystem */
            if (GROW(r->coords, r->ncoords, r->capcoords))
                rc = oom(r, w);
            else
                r->coords[r->ncoords++] = (named_m4){n, r->g.ctm}, n = NULL;
        } else {
            size_t i = r->ncoords;
            while (i-- > 0)
                if (!strcmp(r->coords[i].name, n)) break;
            if (i == (size_t)-1 && !strcmp(n, "world"))
                r->g.ctm = m4_id();
            else if (i == (size_t)-1)
                rc = UNSUPPORTED(r, "coordsys", w, "CoordSysTransform \"%s\": no such coordinate system; ignored", n);
            else
                r->g.ctm = r->coords[i].m;
        }
        free(n);
        return rc;
    } else if (!strcmp(name, "ReverseOrientation")) {
        r->g.rev = !r->g.rev;
    } else if (!strcmp(name, "AttributeBegin") || !strcmp(name, "TransformBegin")) {
        return push_state(r, w);
    } else if (!strcmp(name, "AttributeEnd") || !strcmp(name, "TransformEnd")) {
        if (name[0] == 'T') { /* pbrt-v3's TransformEnd restores only the transformation */
            m4 keep = r->g.ctm;
            (void)keep;
            if (!r->nstack) return prm_fail(&r->ctx, w, "TransformEnd without TransformBegin");
            r->g.ctm = r->stack[r->nstack - 1].ctm;
            free(r->stack[r->nstack - 1].area_where);
            r->nstack--;
            return 0;
        }
        return pop_state(r, w, name);
    } else if (!strcmp(name, "TransformTimes")) {
        return read_numbers(r, v, 2, name, t);
    } else if (!strcmp(name, "ActiveTransform")) {
        pbrt_token a;
        if (pbrt_lex_next(&r->lx, &a)) return -1;
        if (a.type != PTK_WORD) return prm_fail(&r->ctx, w, "ActiveTransform expects StartTime, EndTime or All");
        if (!tok_is_word(&a, "All"))
            return UNSUPPORTED(r, "motion blur", w,
                               "ActiveTransform: caustic has no motion blur; the transforms of both "
                               "times apply");
    } else if (!strcmp(name, "WorldBegin")) {
        if (r->world) return prm_fail(&r->ctx, w, "WorldBegin twice");
        r->world = 1;
        if (setup_world(r, w)) return -1;
        r->g.ctm = m4_id();
        if (GROW(r->coords, r->ncoords, r->capcoords)) return oom(r, w);
        r->coords[r->ncoords++] = (named_m4){sdup("world", 5), m4_id()};
    } else if (!strcmp(name, "WorldEnd")) {
        /* pbrt-v3: the end of the file */
    } else if (!strcmp(name, "Camera")) {
        return d_camera(r, t);
    } else if (!strcmp(name, "Film") || !strcmp(name, "Sampler") || !strcmp(name, "Integrator") ||
               !strcmp(name, "Accelerator") || !strcmp(name, "PixelFilter") || !strcmp(name, "Filter")) {
        return d_settings(r, t, name);
    } else if (!strcmp(name, "Option")) {
        plist pl;
        if (parse_params(r, &pl, "Option", t)) return -1;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        plist_free(&pl);
    } else if (!strcmp(name, "ColorSpace")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = strcmp(n, "srgb") ? UNSUPPORTED(r, "colorspace", w, "ColorSpace \"%s\": caustic renders sRGB", n) : 0;
        free(n);
        return rc;
    } else if (!strcmp(name, "Attribute")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        free(n);
        plist pl;
        if (parse_params(r, &pl, "Attribute", t)) return -1;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        plist_free(&pl);
        pbrt_where(&r->lx, t, w);
        return UNSUPPORTED(r, "attribute", w, "Attribute (default parameters): not applied");
    } else if (!strcmp(name, "Shape")) {
        return d_shape(r, t);
    } else if (!strcmp(name, "LightSource")) {
        return d_light(r, t, 0);
    } else if (!strcmp(name, "AreaLightSource")) {
        return d_light(r, t, 1);
    } else if (!strcmp(name, "Material")) {
        pbrt_token ty;
        if (pbrt_lex_next(&r->lx, &ty)) return -1;
        if (ty.type != PTK_STRING) return prm_fail(&r->ctx, w, "Material expects its type as a quoted string");
        char type[64], owner[96];
        snprintf(type, sizeof type, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
        snprintf(owner, sizeof owner, "material \"%s\"", type);
        plist pl;
        if (parse_params(r, &pl, owner, t)) return -1;
        pbrt_where(&r->lx, t, w);
        int i = make_material(r, type, &pl, NULL, w);
        plist_free(&pl);
        if (i < 0) return -1;
        r->g.material = i;
    } else if (!strcmp(name, "MakeNamedMaterial")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        char owner[128];
        snprintf(owner, sizeof owner, "material \"%.100s\"", n);
        plist pl;
        if (parse_params(r, &pl, owner, t)) {
            free(n);
            return -1;
        }
        pbrt_where(&r->lx, t, w);
        const char *type;
        int rc = prm_string(&pl.l, "type", "", &type);
        if (!rc && !type[0]) rc = prm_fail(&r->ctx, w, "MakeNamedMaterial \"%s\" needs \"string type\"", n);
        if (!rc && find_named_material(r, n) >= 0)
            rc = prm_fail(&r->ctx, w, "MakeNamedMaterial: \"%s\" is defined twice", n);
        char tcopy[64];
        if (!rc) snprintf(tcopy, sizeof tcopy, "%s", type);
        if (!rc && make_material(r, tcopy, &pl, n, w) < 0) rc = -1;
        plist_free(&pl);
        free(n);
        return rc;
    } else if (!strcmp(name, "NamedMaterial")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int i = find_named_material(r, n);
        int rc = i < 0 ? prm_fail(&r->ctx, w, "NamedMaterial: no material named \"%s\"", n) : 0;
        if (i >= 0) r->g.material = i;
        free(n);
        return rc;
    } else if (!strcmp(name, "Texture")) {
        return d_texture(r, t);
    } else if (!strcmp(name, "MakeNamedMedium")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        for (size_t i = 0; i < r->nmedia; ++i)
            if (!strcmp(r->media[i], n)) {
                int rc = prm_fail(&r->ctx, w, "MakeNamedMedium: \"%s\" is defined twice", n);
                free(n);
                return rc;
            }
        char owner[200];
        snprintf(owner, sizeof owner, "medium \"%.160s\"", n);
        plist pl;
        if (parse_params(r, &pl, owner, t)) {
            free(n);
            return -1;
        }
        char **g = realloc(r->media, (r->nmedia + 1) * sizeof *g);
        int *gr = g ? realloc(r->media_ref, (r->nmedia + 1) * sizeof *gr) : NULL;
        if (g) r->media = g;
        if (!gr) {
            free(n);
            plist_free(&pl);
            return oom(r, w);
        }
        r->media_ref = gr;
        r->media[r->nmedia] = n;
        r->media_ref[r->nmedia++] = 0;
        int ref = 0, rc = make_medium(r, &pl, n, &ref);
        r->media_ref[r->nmedia - 1] = ref;
        if (!rc) rc = finish_params(r, &pl);
        plist_free(&pl);
        return rc;
    } else if (!strcmp(name, "MediumInterface")) {
        char *a = NULL, *b = NULL;
        if (read_string(r, t, name, &a)) return -1;
        pbrt_token nx;
        if (pbrt_lex_peek(&r->lx, &nx)) {
            free(a);
            return -1;
        }
        if (nx.type == PTK_STRING && !memchr(nx.text, ' ', nx.len) && read_string(r, t, name, &b)) {
            free(a);
            return -1;
        }
        int rc = 0, ref[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            const char *m = k && b ? b : a; /* one name: the same medium on both sides (pbrt-v4) */
            if (!m || !m[0]) continue;
            size_t i = 0;
            while (i < r->nmedia && strcmp(r->media[i], m)) ++i;
            if (i == r->nmedia) {
                rc = prm_fail(&r->ctx, w, "MediumInterface: no medium named \"%s\"", m);
                break;
            }
            ref[k] = r->media_ref[i];
        }
        free(a), free(b);
        r->g.med_in = ref[0];
        r->g.med_out = ref[1];
        return rc;
    } else if (!strcmp(name, "ObjectBegin")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        if (r->cur_object) {
            free(n);
            return prm_fail(&r->ctx, w, "ObjectBegin inside ObjectBegin");
        }
        for (size_t i = 0; i < r->nobjects; ++i)
            if (!strcmp(r->objects[i].name, n)) {
                int rc = prm_fail(&r->ctx, w, "ObjectBegin: \"%s\" is defined twice", n);
                free(n);
                return rc;
            }
        if (push_state(r, w) || GROW(r->objects, r->nobjects, r->capobjects)) {
            free(n);
            return oom(r, w);
        }
        memset(&r->objects[r->nobjects], 0, sizeof r->objects[0]);
        r->objects[r->nobjects].name = n;
        r->cur_object = &r->objects[r->nobjects++];
    } else if (!strcmp(name, "ObjectEnd")) {
        if (!r->cur_object) return prm_fail(&r->ctx, w, "ObjectEnd without ObjectBegin");
        r->cur_object = NULL;
        return pop_state(r, w, name);
    } else if (!strcmp(name, "ObjectInstance")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = instance(r, n, w);
        free(n);
        return rc;
    } else if (!strcmp(name, "Include") || !strcmp(name, "Import")) {
        pbrt_token f;
        if (pbrt_lex_next(&r->lx, &f)) return -1;
        if (f.type != PTK_STRING) return prm_fail(&r->ctx, w, "%s expects a quoted file name", name);
        char *fn = sdup(f.text, f.len);
        if (!fn) return oom(r, w);
        int rc = pbrt_lex_push(&r->lx, fn, t);
        free(fn);
        return rc;
    } else if (!strcmp(name, "MakeNamedMedium")) {
        return 0;
    } else {
        static const char *const known[] = {"Identity",
                                            "Translate",
                                            "Scale",
                                            "Rotate",
                                            "LookAt",
                                            "Transform",
                                            "ConcatTransform",
                                            "CoordinateSystem",
                                            "CoordSysTransform",
                                            "ReverseOrientation",
                                            "AttributeBegin",
                                            "AttributeEnd",
                                            "TransformBegin",
                                            "TransformEnd",
                                            "TransformTimes",
                                            "ActiveTransform",
                                            "WorldBegin",
                                            "WorldEnd",
                                            "Camera",
                                            "Film",
                                            "Sampler",
                                            "Integrator",
                                            "Accelerator",
                                            "PixelFilter",
                                            "Option",
                                            "ColorSpace",
                                            "Attribute",
                                            "Shape",
                                            "LightSource",
                                            "AreaLightSource",
                                            "Material",
                                            "MakeNamedMaterial",
                                            "NamedMaterial",
                                            "Texture",
                                            "MakeNamedMedium",
                                            "MediumInterface",
                                            "ObjectBegin",
                                            "ObjectEnd",
                                            "ObjectInstance",
                                            "Include",
                                            "Import",
                                            NULL};
        const char *sug = prm_suggest(name, known);
        return prm_fail(&r->ctx, w, "unknown directive \"%s\"%s%s%s", name, sug ? " (did you mean \"" : "",
                        sug ? sug : "", sug ? "\"?)" : "");
    }
    return 0;
}

/* ---- the load ------------------------------------------------------------------------------------- */
static void free_reader(R *r) {
    pbrt_lex_free(&r->lx);
    free(r->g.area_where);
    for (size_t i = 0; i < r->nstack; ++i) free(r->stack[i].area_where);
    free(r->stack);
    for (size_t i = 0; i < r->npmats; ++i) free(r->pmats[i].name);
    free(r->pmats);
    for (size_t i = 0; i < r->nptexs; ++i) free(r->ptexs[i].name);
    free(r->ptexs);
    free(r->ders);
    for (size_t i = 0; i < r->ncoords; ++i) free(r->coords[i].name);
    free(r->coords);
    for (size_t i = 0; i < r->nmedia; ++i) free(r->media[i]);
    free(r->media);
    free(r->media_ref);
    for (size_t i = 0; i < r->nobjects; ++i) {
        pobject *o = &r->objects[i];
        free(o->name), free(o->p), free(o->n), free(o->uv), free(o->idx), free(o->mat);
    }
    free(r->objects);
    free(r->cam_type);
}

int pbrt_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);

int pbrt_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    R *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        return -1;
    }
    prm_init(&r->ctx, src->path, opts ? opts->strict : 0, err, errlen);
    r->ctx.line_format = 1;
    r->opts = opts;
    int rc = 0;
    /* a gzipped top file (.pbrt.gz): read it again through zlib */
    char *unz = NULL;
    const char *text = src->text;
    size_t size = src->size;
    if (size >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b) {
        char why[256];
        unz = pbrt_read_file(src->path, (size_t)PBRT_MAX_BYTES, &size, why, sizeof why);
        if (!unz) {
            snprintf(err, errlen, "%s: %s", src->path, why);
            free(r);
            return -1;
        }
        text = unz;
    }
    if (pbrt_lex_init(&r->lx, &r->ctx, src->path, src->dir, text, size)) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        free(unz);
        free(r);
        return -1;
    }
    r->s = scene_create();
    if (!r->s) rc = prm_fail(&r->ctx, NULL, "out of memory");
    if (!rc) {
        if (opts) {
            r->s->warn = opts->warn;
            r->s->warn_user = opts->warn_user;
        }
        r->g.ctm = m4_id();
        r->cam_from_world = m4_id();
        r->mirror = m4_id();
        r->fov = 90;
        r->focaldistance = 1e6;
        r->width = 1280;
        r->height = 720;
        r->imaging_ratio = 1.0;
        r->s->spp = 16;
        r->s->max_depth = 5;
        /* pbrt's default material: diffuse 0.5 */
        pmat d;
        memset(&d, 0, sizeof d);
        d.kind = MAT_DIFFUSE;
        d.p = material_params_default(MAT_DIFFUSE);
        d.p.rgb = v3s(0.5f);
        if (GROW(r->pmats, r->npmats, r->cappmats))
            rc = prm_fail(&r->ctx, NULL, "out of memory");
        else
            r->pmats[r->npmats++] = d;
        r->g.material = 0;
    }
    while (!rc) {
        pbrt_token t;
        if (pbrt_lex_next(&r->lx, &t)) {
            rc = -1;
            break;
        }
        if (t.type == PTK_EOF) break;
        if (t.type != PTK_WORD) {
            char w[PRM_WHERE];
            pbrt_where(&r->lx, &t, w);
            rc = prm_fail(&r->ctx, w, "expected a directive (a word such as Shape or AttributeBegin), found %s",
                          t.type == PTK_STRING   ? "a quoted string"
                          : t.type == PTK_NUMBER ? "a number"
                                                 : "a bracket");
            break;
        }
        rc = directive(r, &t);
    }
    r->ctx.src = src->path;
    if (!rc && !r->world) rc = prm_fail(&r->ctx, NULL, "no WorldBegin: this pbrt file describes no scene");
    if (!rc && r->cur_object) rc = prm_fail(&r->ctx, NULL, "ObjectBegin without ObjectEnd at the end of the file");
    if (!rc && r->nstack)
        rc = UNSUPPORTED(r, "unbalanced", NULL, "%zu AttributeBegin without AttributeEnd at the end of the file",
                         r->nstack);
    if (!rc) {
        scene *s = r->s;
        s->env_radiance = s->env_tex >= 0 ? vadd(s->env_radiance, v3s(0.0f)) : r->env_const;
        if (s->env_tex >= 0 && (r->env_const.x > 0 || r->env_const.y > 0 || r->env_const.z > 0))
            rc = UNSUPPORTED(
                r, "env const+image", NULL,
                "a constant infinite light besides the image one: caustic's environment is one of them; the "
                "constant is dropped");
        /* exposure: pbrt's imaging ratio (shutter time x ISO / 100) scales what the film records */
        float k = (float)r->imaging_ratio;
        if (k != 1.0f) {
            for (size_t i = 0; i < s->nmaterials; ++i) s->materials[i].emission = vscale(s->materials[i].emission, k);
            for (size_t i = 0; i < s->npunctual; ++i) s->punctual[i].intensity = vscale(s->punctual[i].intensity, k);
            s->env_radiance = vscale(s->env_radiance, k);
        }
        if (!s->ntriangles && !s->nspheres && !s->nquads)
            rc = UNSUPPORTED(r, "empty", NULL, "the scene has no shapes caustic can render");
    }
    if (!rc && r->s->integrator_hint > 1 && r->lensradius > 0) { /* caustic's bidirectional ones have no lens */
        r->s->integrator_hint = 0;
        prm_note(&r->ctx, "integrator lens", NULL,
                 "the pbrt file's integrator is bidirectional and its camera has a lens: caustic renders lenses with "
                 "path tracing only, so path tracing it is");
    }
    if (!rc && r->s->integrator_hint > 1 && r->s->nmedia > 0) {
        /* while the bidirectional integrators refuse media (kernel/bidir_limits.h), the file's
         * bdpt / sppm / lightpath becomes path tracing rather than a refusal */
        bidir_request q;
        memset(&q, 0, sizeof q);
        q.features = KF_MEDIA;
        if (bidir_refusal(&q)) {
            r->s->integrator_hint = 0;
            prm_note(&r->ctx, "integrator media", NULL,
                     "the pbrt file's integrator is bidirectional and the scene has participating media, which "
                     "caustic's bidirectional integrators do not render yet: path tracing it is");
        }
    }
    if (!rc && r->mirrored && opts && opts->json_out) /* said where coordinates are shown */
        prm_note(&r->ctx, "mirrored", NULL,
                 "pbrt's camera is left-handed: the scene is mirrored through the camera's vertical plane so that "
                 "caustic's right-handed camera sees pbrt's picture (coordinates in --dump-scene are mirrored)");
    if (!rc && r->ctx.npending) { /* the coverage summary closes the list */
        size_t approx = r->ctx.npending, uses = 0;
        for (size_t i = 0; i < r->ctx.npending; ++i) uses += 1 + r->ctx.pending[i].more;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "coverage: %zu pbrt-v4 feature%s above (%zu use%s) approximated or not rendered; the rest is read as "
                 "pbrt-v4 defines it",
                 approx, approx == 1 ? "" : "s", uses, uses == 1 ? "" : "s");
        prm_note(&r->ctx, "coverage summary", NULL, msg);
    }
    if (rc) {
        prm_flush(&r->ctx, NULL, 0);
        scene_destroy(r->s);
    } else {
        prm_flush(&r->ctx, r->s, 1);
        *out = r->s;
    }
    free_reader(r);
    free(unz);
    free(r);
    return rc;
}
