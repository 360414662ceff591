/* The Mitsuba scene reader (Mitsuba 3 XML; Mitsuba 0.5/0.6 files upgraded on reading): the
 * document (mitsuba_xml.c) turned into a caustic scene through the builders (scene/scene.h), so
 * that serialized meshes, spot lights and cut-out masks, which scene JSON cannot say, are kept.
 *
 * Meanings follow Mitsuba 3's documentation: transforms compose in file order (each element is
 * applied after the ones above it), shapes keep Mitsuba's local geometry (rectangle [-1,1]^2 at
 * z = 0, cube [-1,1]^3, disk of radius 1, cylinder from p0 to p1), `max_depth` counts path
 * segments (caustic's depth counts bounces: depth = max_depth - 1), the sensor's `fov` is along
 * `fov_axis` (caustic keeps the full vertical angle). What caustic lacks is one warning naming
 * FILE:LINE and the stand-in (the table of BSDFs below says which); parameters nobody read are
 * reported, one line per feature with a count, as the coverage summary. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "image/image.h"
#include "kernel/environment.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
static int warn_at(reader *R, const mx_node *n, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int warn_at(reader *R, const mx_node *n, const char *key, const char *fmt, ...) {
    char msg[512], w[PRM_WHERE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mx_where(&R->P, w, n);
    return prm_warn(&R->P, key, w, "%s", msg);
}

/* ---- the document ------------------------------------------------------------------------------ */
/* n and everything in it read (what a warning has already said is left out) */
static void mark_all(const mx_node *n) {
    ((mx_node *)n)->used = 1;
    for (int i = 0; i < n->nkids; ++i) mark_all(n->kids[i]);
}

/* Objects by id: sorted once, looked up by bisection (a scene of many shapes has many refs). */
typedef struct id_entry {
    const char *id;
    const mx_node *node;
} id_entry;

static int collect_ids(const mx_node *n, id_entry **ids, size_t *nids, size_t *cap) {
    const char *a = strcmp(n->tag, "ref") ? mx_attr(n, "id") : NULL;
    if (a) {
        if (*nids == *cap) {
            size_t nc = *cap ? 2 * *cap : 64;
            id_entry *e = realloc(*ids, nc * sizeof *e);
            if (!e) return -1;
            *ids = e;
            *cap = nc;
        }
        (*ids)[(*nids)++] = (id_entry){a, n};
    }
    for (int i = 0; i < n->nkids; ++i)
        if (collect_ids(n->kids[i], ids, nids, cap)) return -1;
    return 0;
}

static int id_cmp(const void *a, const void *b) { return strcmp(((const id_entry *)a)->id, ((const id_entry *)b)->id); }

/* <ref id="x"/> to the object; an unknown id is an error. */
static int deref(reader *R, const mx_node *ref, const mx_node **out) {
    const char *id = mx_attr(ref, "id");
    if (!id) FAIL(R, ref, "<ref> without id");
    id_entry key = {id, NULL};
    const id_entry *hit = R->nids ? bsearch(&key, R->ids, R->nids, sizeof *R->ids, id_cmp) : NULL;
    const mx_node *t = hit ? hit->node : NULL;
    if (!t || t == ref) FAIL(R, ref, "<ref id=\"%s\">: no object has this id", id);
    ((mx_node *)ref)->used = 1;
    *out = t;
    return 0;
}

/* The property `name` of plugin n (NULL: absent), marked used. */
static mx_node *prop(const mx_node *n, const char *name) {
    for (int i = 0; i < n->nkids; ++i) {
        const char *a = mx_attr(n->kids[i], "name");
        if (a && !strcmp(a, name)) {
            n->kids[i]->used = 1;
            return n->kids[i];
        }
    }
    return NULL;
}

static int parse_numbers(const char *s, double *out, int max) {
    int n = 0;
    const char *p = s;
    while (*p && n < max) {
        while (*p == ',' || isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *e;
        errno = 0;
        double v = strtod(p, &e);
        if (e == p || !isfinite(v)) return -1;
        out[n++] = v;
        p = e;
    }
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    return *p ? -1 : n;
}

static int num_attr(reader *R, const mx_node *n, const char *attr, double *out) {
    const char *v = mx_attr(n, attr);
    if (!v) FAIL(R, n, "<%s> without %s", n->tag, attr);
    double d[2];
    if (parse_numbers(v, d, 2) != 1) FAIL(R, n, "<%s %s=\"%s\">: not a number", n->tag, attr, v);
    *out = d[0];
    return 0;
}

static int get_float(reader *R, const mx_node *n, const char *name, double def, double *out) {
    *out = def;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    if (strcmp(p->tag, "float") && strcmp(p->tag, "integer"))
        FAIL(R, p, "\"%s\" of %s \"%s\" must be a <float>, not <%s>", name, n->tag, mx_attr(n, "type"), p->tag);
    return num_attr(R, p, "value", out);
}

static int get_int(reader *R, const mx_node *n, const char *name, long def, long *out) {
    *out = def;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    double v;
    if (strcmp(p->tag, "integer") && strcmp(p->tag, "float"))
        FAIL(R, p, "\"%s\" must be an <integer>, not <%s>", name, p->tag);
    if (num_attr(R, p, "value", &v)) return -1;
    if (v != floor(v) || fabs(v) > 2e9) FAIL(R, p, "\"%s\": %g is not a whole number", name, v);
    *out = (long)v;
    return 0;
}

static int get_bool(reader *R, const mx_node *n, const char *name, int def, int *out) {
    *out = def;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    const char *v = mx_attr(p, "value");
    if (!v) FAIL(R, p, "<%s> without value", p->tag);
    if (!strcmp(v, "true") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = 0;
    else
        FAIL(R, p, "\"%s\": \"%s\" is not a boolean (true or false)", name, v);
    return 0;
}

static const char *get_string(const mx_node *n, const char *name, const char *def) {
    mx_node *p = prop(n, name);
    if (!p) return def;
    const char *v = mx_attr(p, "value");
    return v ? v : def;
}

/* x,y,z attributes or value="x, y, z" (one number: all three). */
static int vec_of(reader *R, const mx_node *p, vec3 def, vec3 *out) {
    const char *v = mx_attr(p, "value");
    if (v) {
        double d[4];
        int k = parse_numbers(v, d, 4);
        if (k == 1)
            *out = v3s((float)d[0]);
        else if (k == 3)
            *out = v3((float)d[0], (float)d[1], (float)d[2]);
        else
            FAIL(R, p, "<%s value=\"%s\">: expected 1 or 3 numbers", p->tag, v);
        return 0;
    }
    double c[3] = {def.x, def.y, def.z};
    static const char *const axes[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i)
        if (mx_attr(p, axes[i]) && num_attr(R, p, axes[i], &c[i])) return -1;
    *out = v3((float)c[0], (float)c[1], (float)c[2]);
    return 0;
}

static int get_point(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *out) {
    *out = def;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    if (strcmp(p->tag, "point") && strcmp(p->tag, "vector"))
        FAIL(R, p, "\"%s\" must be a <point> or <vector>, not <%s>", name, p->tag);
    return vec_of(R, p, v3s(0.0f), out);
}

/* ---- spectra ----------------------------------------------------------------------------------
 * A spectrum given as wavelength:value pairs ("400:0, 500:8") becomes linear sRGB as Mitsuba 3's
 * RGB variants do: the piecewise-linear spectrum (zero outside its range) integrated against the
 * CIE 1931 colour matching functions over 360..830 nm, divided by the integral of ybar (so a
 * constant 1 is XYZ (1,1,1)), then XYZ to linear sRGB. The matching functions are Wyman, Sloan and
 * Shirley's multi-lobe Gaussian fit (JCGT 2013), within about 1 % of the tables. */
static double lobe(double x, double mu, double s1, double s2) {
    double t = (x - mu) / (x < mu ? s1 : s2);
    return exp(-0.5 * t * t);
}
static void cie_xyz(double l, double *x, double *y, double *z) {
    *x = 1.056 * lobe(l, 599.8, 37.9, 31.0) + 0.362 * lobe(l, 442.0, 16.0, 26.7) - 0.065 * lobe(l, 501.1, 20.4, 26.2);
    *y = 0.821 * lobe(l, 568.8, 46.9, 40.5) + 0.286 * lobe(l, 530.9, 16.3, 31.1);
    *z = 1.217 * lobe(l, 437.0, 11.8, 36.0) + 0.681 * lobe(l, 459.0, 26.0, 13.8);
}
static vec3 spectrum_to_rgb(const double *wl, const double *val, int n) {
    double X = 0, Y = 0, Z = 0, Yn = 0;
    for (int l = 360; l <= 830; ++l) {
        double x, y, z, v = 0.0;
        cie_xyz(l, &x, &y, &z);
        Yn += y;
        for (int i = 0; i + 1 < n; ++i)
            if (l >= wl[i] && l <= wl[i + 1]) {
                double t = wl[i + 1] > wl[i] ? (l - wl[i]) / (wl[i + 1] - wl[i]) : 0.0;
                v = val[i] + t * (val[i + 1] - val[i]);
                break;
            }
        X += v * x;
        Y += v * y;
        Z += v * z;
    }
    X /= Yn;
    Y /= Yn;
    Z /= Yn;
    return v3((float)(3.2404542 * X - 1.5371385 * Y - 0.4985314 * Z),
              (float)(-0.9692660 * X + 1.8760108 * Y + 0.0415560 * Z),
              (float)(0.0556434 * X - 0.2040259 * Y + 1.0572252 * Z));
}

static float srgb_decode(double c) { return (float)(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)); }

/* A .spd file: "wavelength value" per line, '#' comments. */
static int spectrum_file(reader *R, const mx_node *p, const char *fn, vec3 *out) {
    char *path = mx_resolve(&R->D, p, fn);
    if (!path) FAIL(R, p, "out of memory");
    size_t size = 0;
    char why[256];
    char *text = file_read_all(path, 1 << 20, &size, why, sizeof why);
    free(path);
    if (!text) FAIL(R, p, "spectrum file \"%s\": %s", fn, why);
    double wl[1024], val[1024];
    int n = 0, bad = 0;
    for (char *line = text; line && *line && n < 1024;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        while (isspace((unsigned char)*line)) line++;
        if (*line && *line != '#') {
            char *e1, *e2;
            double a = strtod(line, &e1), b = e1 != line ? strtod(e1, &e2) : 0;
            if (e1 == line || e2 == e1 || (n > 0 && !(a > wl[n - 1]))) bad = 1;
            wl[n] = a;
            val[n++] = b;
        }
        line = next;
    }
    free(text);
    if (bad || n < 2) FAIL(R, p, "spectrum file \"%s\": expected increasing \"wavelength value\" lines", fn);
    *out = spectrum_to_rgb(wl, val, n);
    return 0;
}

/* <rgb>, <srgb>, <spectrum>, <float> as a colour. */
static int colour_of(reader *R, const mx_node *p, vec3 *out) {
    const char *v = mx_attr(p, "value");
    if (!strcmp(p->tag, "rgb") || !strcmp(p->tag, "srgb") || !strcmp(p->tag, "color")) {
        if (!v) FAIL(R, p, "<%s> without value", p->tag);
        double d[4];
        int k = parse_numbers(v, d, 4);
        if (k != 1 && k != 3) {
            if (v[0] == '#' && strlen(v) == 7) { /* #rrggbb */
                unsigned rr, gg, bb;
                if (sscanf(v + 1, "%2x%2x%2x", &rr, &gg, &bb) != 3)
                    FAIL(R, p, "<%s value=\"%s\">: not a colour", p->tag, v);
                d[0] = rr / 255.0, d[1] = gg / 255.0, d[2] = bb / 255.0;
                *out = v3(srgb_decode(d[0]), srgb_decode(d[1]), srgb_decode(d[2]));
                return 0;
            }
            FAIL(R, p, "<%s value=\"%s\">: expected 1 or 3 numbers", p->tag, v);
        }
        if (k == 1) d[1] = d[2] = d[0];
        if (!strcmp(p->tag, "srgb"))
            *out = v3(srgb_decode(d[0]), srgb_decode(d[1]), srgb_decode(d[2]));
        else
            *out = v3((float)d[0], (float)d[1], (float)d[2]);
        return 0;
    }
    if (!strcmp(p->tag, "float") || !strcmp(p->tag, "integer")) {
        double d;
        if (num_attr(R, p, "value", &d)) return -1;
        *out = v3s((float)d);
        return 0;
    }
    if (!strcmp(p->tag, "spectrum")) {
        if (!v) {
            const char *fn = mx_attr(p, "filename");
            if (!fn) FAIL(R, p, "<spectrum> without value or filename");
            return spectrum_file(R, p, fn, out);
        }
        if (!strchr(v, ':')) {
            /* one number: a constant spectrum; three (Mitsuba 0.x files in RGB mode): RGB */
            double d[4];
            int k = parse_numbers(v, d, 4);
            if (k == 1)
                *out = v3s((float)d[0]);
            else if (k == 3)
                *out = v3((float)d[0], (float)d[1], (float)d[2]);
            else
                FAIL(R, p, "<spectrum value=\"%s\">: expected a number or wavelength:value pairs", v);
            return 0;
        }
        double wl[512], val[512];
        int n = 0;
        for (const char *q = v; *q && n < 512;) {
            while (*q == ',' || isspace((unsigned char)*q)) q++;
            if (!*q) break;
            char *e;
            wl[n] = strtod(q, &e);
            if (e == q || *e != ':') FAIL(R, p, "<spectrum value=\"%s\">: expected wavelength:value pairs", v);
            q = e + 1;
            val[n] = strtod(q, &e);
            if (e == q) FAIL(R, p, "<spectrum value=\"%s\">: expected wavelength:value pairs", v);
            if (n > 0 && !(wl[n] > wl[n - 1])) FAIL(R, p, "<spectrum>: wavelengths must increase");
            q = e;
            n++;
        }
        *out = spectrum_to_rgb(wl, val, n);
        return 0;
    }
    if (!strcmp(p->tag, "blackbody")) {
        double T;
        if (num_attr(R, p, "temperature", &T)) return -1;
        double wl[95], val[95];
        for (int i = 0; i < 95; ++i) {
            wl[i] = 360 + 5 * i;
            double l = wl[i] * 1e-9;
            val[i] = 2 * 6.62607015e-34 * 2.99792458e8 * 2.99792458e8 /
                     (pow(l, 5) * (exp(6.62607015e-34 * 2.99792458e8 / (l * 1.380649e-23 * T)) - 1)) * 1e-9;
        }
        *out = spectrum_to_rgb(wl, val, 95);
        return 0;
    }
    FAIL(R, p, "<%s> is not a colour", p->tag);
}

/* ---- transforms ------------------------------------------------------------------------------ */
static xform xf_from_rows(const double m[12]) {
    xform x;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) x.m[r][c] = (float)m[4 * r + c];
    return x;
}

static double xf_det(const xform *x) {
    const float(*m)[4] = x->m;
    return m[0][0] * ((double)m[1][1] * m[2][2] - (double)m[1][2] * m[2][1]) -
           m[0][1] * ((double)m[1][0] * m[2][2] - (double)m[1][2] * m[2][0]) +
           m[0][2] * ((double)m[1][0] * m[2][1] - (double)m[1][1] * m[2][0]);
}

/* <transform>: its elements in order, each applied after the ones before (M = Ek ... E1). */
static int transform_of(reader *R, const mx_node *t, xform *out) {
    xform M = xform_identity();
    for (int i = 0; i < t->nkids; ++i) {
        const mx_node *e = t->kids[i];
        ((mx_node *)e)->used = 1;
        double m[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
        if (!strcmp(e->tag, "translate")) {
            vec3 v;
            if (vec_of(R, e, v3s(0.0f), &v)) return -1;
            m[3] = v.x, m[7] = v.y, m[11] = v.z;
        } else if (!strcmp(e->tag, "scale")) {
            vec3 v;
            if (vec_of(R, e, v3s(1.0f), &v)) return -1;
            m[0] = v.x, m[5] = v.y, m[10] = v.z;
        } else if (!strcmp(e->tag, "rotate")) {
            vec3 a;
            double ang;
            if (vec_of(R, e, v3s(0.0f), &a) || num_attr(R, e, "angle", &ang)) return -1;
            double len = sqrt((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z);
            if (!(len > 0)) FAIL(R, e, "<rotate> needs an axis (x, y, z or value)");
            double x = a.x / len, y = a.y / len, z = a.z / len, th = ang * MI_PI / 180.0;
            double c = cos(th), s = sin(th), C = 1 - c;
            double r[12] = {x * x * C + c,     x * y * C - z * s, x * z * C + y * s, 0,
                            y * x * C + z * s, y * y * C + c,     y * z * C - x * s, 0,
                            z * x * C - y * s, z * y * C + x * s, z * z * C + c,     0};
            memcpy(m, r, sizeof m);
        } else if (!strcmp(e->tag, "matrix")) {
            const char *v = mx_attr(e, "value");
            double d[17];
            int k = v ? parse_numbers(v, d, 17) : -1;
            if (k == 16) {
                if (fabs(d[12]) > 1e-6 || fabs(d[13]) > 1e-6 || fabs(d[14]) > 1e-6 || fabs(d[15] - 1) > 1e-6)
                    FAIL(R, e, "<matrix>: a projective matrix (last row not 0 0 0 1) is not an object transform");
                memcpy(m, d, sizeof m);
            } else if (k == 9) {
                double r[12] = {d[0], d[1], d[2], 0, d[3], d[4], d[5], 0, d[6], d[7], d[8], 0};
                memcpy(m, r, sizeof m);
            } else
                FAIL(R, e, "<matrix value=...>: expected 16 (or 9) numbers");
        } else if (!strcmp(e->tag, "lookat")) {
            double o[3] = {0, 0, 0}, tg[3] = {0, 0, 1}, up[4] = {0, 1, 0, 0};
            const char *so = mx_attr(e, "origin"), *st = mx_attr(e, "target"), *su = mx_attr(e, "up");
            if (!so || !st || parse_numbers(so, o, 3) != 3 || parse_numbers(st, tg, 3) != 3)
                FAIL(R, e, "<lookat> needs origin and target, 3 numbers each");
            int has_up = su && parse_numbers(su, up, 3) == 3;
            if (su && !has_up) FAIL(R, e, "<lookat up=\"%s\">: expected 3 numbers", su);
            double d[3] = {tg[0] - o[0], tg[1] - o[1], tg[2] - o[2]};
            double dl = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            if (!(dl > 0)) FAIL(R, e, "<lookat>: origin and target are the same point");
            for (int k = 0; k < 3; ++k) d[k] /= dl;
            if (!has_up) { /* Mitsuba picks a perpendicular when none is given */
                double ax = fabs(d[0]) < 0.9 ? 1 : 0;
                up[0] = ax, up[1] = 1 - ax, up[2] = 0;
            }
            /* left = up x dir, new up = dir x left; columns (left, up, dir, origin) */
            double l[3] = {up[1] * d[2] - up[2] * d[1], up[2] * d[0] - up[0] * d[2], up[0] * d[1] - up[1] * d[0]};
            double ll = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
            if (!(ll > 1e-9)) FAIL(R, e, "<lookat>: up is parallel to the viewing direction");
            for (int k = 0; k < 3; ++k) l[k] /= ll;
            double u[3] = {d[1] * l[2] - d[2] * l[1], d[2] * l[0] - d[0] * l[2], d[0] * l[1] - d[1] * l[0]};
            double r[12] = {l[0], u[0], d[0], o[0], l[1], u[1], d[1], o[1], l[2], u[2], d[2], o[2]};
            memcpy(m, r, sizeof m);
        } else
            FAIL(R, e, "<%s> is not a transform element (translate, rotate, scale, matrix, lookat)", e->tag);
        xform E = xf_from_rows(m);
        M = xform_mul(&E, &M);
    }
    *out = M;
    return 0;
}

/* The plugin's `name` transform (to_world), identity when absent. */
static int get_transform(reader *R, const mx_node *n, const char *name, xform *out) {
    *out = xform_identity();
    mx_node *t = prop(n, name);
    if (!t) return 0;
    if (strcmp(t->tag, "transform")) FAIL(R, t, "\"%s\" must be a <transform>, not <%s>", name, t->tag);
    return transform_of(R, t, out);
}

/* ---- textures ---------------------------------------------------------------------------------- */
static int texture_of(reader *R, const mx_node *t, int *index, vec3 *mean);
static int get_colour_tex(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *rgb, int *tex);

/* Mitsuba 0.x's <texture type="scale"> around a texture or colour: its `scale` times it. */
static int scale_texture(reader *R, const mx_node *t, vec3 *rgb, int *tex) {
    double k;
    if (R->tex_depth > MI_MAX_NEST) FAIL(R, t, "textures nested deeper than %d", MI_MAX_NEST);
    ((mx_node *)t)->used = 1;
    if (get_float(R, t, "scale", 1.0, &k)) return -1;
    const mx_node *inner = NULL;
    for (int i = 0; i < t->nkids && !inner; ++i)
        if (!strcmp(t->kids[i]->tag, "texture") || !strcmp(t->kids[i]->tag, "rgb") ||
            !strcmp(t->kids[i]->tag, "srgb") || !strcmp(t->kids[i]->tag, "spectrum") || !strcmp(t->kids[i]->tag, "ref"))
            inner = t->kids[i];
    if (!inner) FAIL(R, t, "scale texture without a texture or colour to scale");
    R->tex_depth++;
    int rc =
        get_colour_tex(R, inner->parent, mx_attr(inner, "name") ? mx_attr(inner, "name") : "", v3s(1.0f), rgb, tex);
    if (!mx_attr(inner, "name")) { /* unnamed: read it directly */
        ((mx_node *)inner)->used = 1;
        if (!strcmp(inner->tag, "texture")) {
            vec3 mean;
            rc = texture_of(R, inner, tex, &mean);
            *rgb = v3s(1.0f);
        } else
            rc = colour_of(R, inner, rgb);
    }
    R->tex_depth--;
    if (rc) return -1;
    *rgb = vscale(*rgb, (float)k);
    return 0;
}

/* A colour property that may be a texture: *tex >= 0 for a texture (then *rgb is white). */
static int get_colour_tex(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *rgb, int *tex) {
    *rgb = def;
    *tex = -1;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    if (!strcmp(p->tag, "ref")) {
        const mx_node *t;
        if (deref(R, p, &t)) return -1;
        p = (mx_node *)t;
    }
    if (!strcmp(p->tag, "texture") && mx_attr(p, "type") && !strcmp(mx_attr(p, "type"), "scale"))
        return scale_texture(R, p, rgb, tex);
    if (!strcmp(p->tag, "texture")) {
        vec3 mean;
        if (texture_of(R, p, tex, &mean)) return -1;
        *rgb = v3s(1.0f);
        return 0;
    }
    return colour_of(R, p, rgb);
}

/* A float property that may be a texture: a texture gives its mean (and *tex) */
static int get_float_tex(reader *R, const mx_node *n, const char *name, double def, double *out, int *tex) {
    *out = def;
    if (tex) *tex = -1;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    if (!strcmp(p->tag, "ref")) {
        const mx_node *t;
        if (deref(R, p, &t)) return -1;
        p = (mx_node *)t;
    }
    if (!strcmp(p->tag, "texture")) {
        vec3 mean;
        int ti;
        if (texture_of(R, p, &ti, &mean)) return -1;
        if (tex) *tex = ti;
        *out = (mean.x + mean.y + mean.z) / 3.0;
        return 0;
    }
    vec3 c;
    if (colour_of(R, p, &c)) return -1;
    *out = (c.x + c.y + c.z) / 3.0;
    return 0;
}

static int load_bitmap(reader *R, const mx_node *t, int raw, int *index, vec3 *mean) {
    const char *fn = get_string(t, "filename", NULL);
    if (!fn) FAIL(R, t, "bitmap texture without filename");
    char *full = mx_resolve(&R->D, t, fn);
    if (!full) FAIL(R, t, "out of memory");
    char ierr[512];
    int w = 0, h = 0, idx;
    int is8 = image_load_srgb8(full, scene_reserve_texels8, R->s, &w, &h, ierr, sizeof ierr);
    if (is8 < 0) {
        free(full);
        FAIL(R, t, "%s", ierr);
    }
    if (is8) {
        idx = scene_add_image_texture8(R->s, w, h, raw ? TEXEL8_LINEAR : TEXEL8_SRGB);
    } else {
        image img;
        if (image_load(&img, full, ierr, sizeof ierr)) {
            free(full);
            FAIL(R, t, "%s", ierr);
        }
        image_value_report vr;
        image_sanitize(&img, &vr);
        if ((vr.nonfinite || vr.negative) &&
            warn_at(R, t, "bad texels", "%s: %zu non-finite and %zu negative values replaced by 0", fn, vr.nonfinite,
                    vr.negative)) {
            image_free(&img);
            free(full);
            return -1;
        }
        idx = scene_take_image_texture(R->s, &img);
    }
    if (idx < 0) {
        free(full);
        FAIL(R, t, idx == -2 ? "too many texels in the scene" : "out of memory");
    }
    int rc = scene_textures_memory_check(R->s, full, ierr, sizeof ierr);
    free(full);
    if (rc) FAIL(R, t, "%s", ierr);
    /* the mean colour (for parameters caustic takes as constants) */
    const texture *tx = &R->s->textures[idx];
    double sum[3] = {0, 0, 0};
    size_t n = (size_t)tx->width * (size_t)tx->height, step = n > 65536 ? n / 65536 : 1, cnt = 0;
    for (size_t i = 0; i < n; i += step, ++cnt) {
        vec3 c = scene_texel(R->s, tx, i);
        sum[0] += c.x, sum[1] += c.y, sum[2] += c.z;
    }
    if (cnt) *mean = v3((float)(sum[0] / cnt), (float)(sum[1] / cnt), (float)(sum[2] / cnt));
    const char *wrap = get_string(t, "wrap_mode", "repeat");
    int wm = !strcmp(wrap, "clamp") ? TEX_WRAP_CLAMP : !strcmp(wrap, "mirror") ? TEX_WRAP_MIRROR : TEX_WRAP_REPEAT;
    R->s->textures[idx].wrap_u = R->s->textures[idx].wrap_v = wm;
    *index = idx;
    return 0;
}

static int texture_of(reader *R, const mx_node *t, int *index, vec3 *mean) {
    for (size_t i = 0; i < R->ntexs; ++i)
        if (R->texs[i].node == t) {
            *index = R->texs[i].index;
            *mean = R->texs[i].mean;
            return 0;
        }
    if (R->tex_depth > MI_MAX_NEST)
        FAIL(R, t, "textures nested deeper than %d (a texture made of itself?)", MI_MAX_NEST);
    ((mx_node *)t)->used = 1;
    const char *type = mx_attr(t, "type");
    if (!type) FAIL(R, t, "<texture> without type");
    xform uv;
    if (get_transform(R, t, "to_uv", &uv)) return -1;
    int idx = -1;
    *mean = v3s(0.5f);
    if (!strcmp(type, "bitmap")) {
        int raw;
        if (get_bool(R, t, "raw", 0, &raw) || load_bitmap(R, t, raw, &idx, mean)) return -1;
        (void)get_string(t, "filter_type", NULL);
        xform I = xform_identity();
        if (memcmp(&uv, &I, sizeof uv) &&
            warn_at(R, t, "bitmap to_uv", "bitmap to_uv transform: caustic's image textures have none (ignored)"))
            return -1;
    } else if (!strcmp(type, "checkerboard")) {
        texture tx;
        memset(&tx, 0, sizeof tx);
        tx.kind = TEX_CHECKER;
        int t0, t1;
        R->tex_depth++;
        int bad = get_colour_tex(R, t, "color0", v3s(0.4f), &tx.a, &t0) ||
                  get_colour_tex(R, t, "color1", v3s(0.2f), &tx.b, &t1);
        R->tex_depth--;
        if (bad) return -1;
        if ((t0 >= 0 || t1 >= 0) && warn_at(R, t, "checker of textures",
                                            "checkerboard of textures: caustic's checker has two colours: "
                                            "white where a texture was"))
            return -1;
        /* Mitsuba: two cells per unit of uv; to_uv's scale multiplies that (caustic's checker
         * has one square scale: a non-square one takes the mean, with a warning) */
        double su = sqrt((double)uv.m[0][0] * uv.m[0][0] + (double)uv.m[1][0] * uv.m[1][0]);
        double sv = sqrt((double)uv.m[0][1] * uv.m[0][1] + (double)uv.m[1][1] * uv.m[1][1]);
        if (fabs(su - sv) > 1e-6 * (su + sv) &&
            warn_at(R, t, "checker scale", "checkerboard with different u and v scales: caustic uses their mean"))
            return -1;
        tx.scale = (float)(su + sv);
        tx.uv_space = 1;
        *mean = vscale(vadd(tx.a, tx.b), 0.5f);
        idx = scene_add_texture(R->s, tx, NULL);
        if (idx < 0) FAIL(R, t, "out of memory");
    } else {
        if (warn_at(R, t, "texture type", "texture \"%s\": caustic has no such texture: grey 0.5 instead", type))
            return -1;
        texture tx;
        memset(&tx, 0, sizeof tx);
        tx.kind = TEX_CONSTANT;
        tx.a = tx.b = v3s(0.5f);
        idx = scene_add_texture(R->s, tx, NULL);
        if (idx < 0) FAIL(R, t, "out of memory");
    }
    mi_tex *nt = R->ntexs == R->capt ? realloc(R->texs, (R->capt = R->capt ? 2 * R->capt : 8) * sizeof *nt) : R->texs;
    if (!nt) FAIL(R, t, "out of memory");
    R->texs = nt;
    R->texs[R->ntexs++] = (mi_tex){t, idx, *mean};
    *index = idx;
    return 0;
}

/* ---- BSDFs -------------------------------------------------------------------------------------
 * The one table of Mitsuba BSDFs onto caustic's kinds (MATERIAL_KINDS, kernel/types.h):
 *
 *   diffuse                          Diffuse (reflectance, texture)
 *   conductor, roughconductor        Conductor with a complex index: the named `material`
 *                                    (material_metal_lookup) or eta/k; a specular_reflectance
 *                                    other than 1: Schlick with F0 from the index times it;
 *                                    alpha -> roughness sqrt(alpha); beckmann and anisotropic
 *                                    alpha_u/alpha_v warn (GGX, sqrt(au*av))
 *   dielectric                       Dielectric, IOR int_ior/ext_ior (named IORs below)
 *   roughdielectric                  RoughGlass, same IOR, roughness sqrt(alpha)
 *   thindielectric                   ThinDielectric (IOR int_ior/ext_ior)
 *   plastic, roughplastic, pplastic  Coated over a diffuse base (coat IOR int_ior/ext_ior, coat
 *                                    roughness sqrt(alpha); plastic: smooth)
 *   principled                       PBR (base_color, metallic, roughness); the lobes caustic lacks
 *                                    (clearcoat, sheen, spec_trans, anisotropic) warn when nonzero
 *   twosided                         its BSDF (caustic's surfaces are two-sided, glass aside)
 *   blendbsdf, mixturebsdf (0.x)    warns: opaque ones (diffuse, conductors, plastics) blend into
 *                                    one PBR (weighted colour, metallic, roughness); with glass,
 *                                    the BSDF of the largest weight
 *   mask                             its BSDF with a cut-out: opacity texture -> alpha map with
 *                                    cut-off 0.5; a constant opacity warns
 *   bumpmap                          its BSDF with caustic's bump map (height texture, `scale`)
 *   normalmap                        its BSDF with the normal map (tangent space)
 *   null                             the shape is left out; with interior/exterior media, an
 *                                    Interface (a boundary of media, no surface)
 *   anything else                    warns: Diffuse 0.5 */
typedef struct named {
    const char *name;
    double v[3];
} named;
/* Mitsuba's named IORs (at ~589 nm). */
static const named iors[] = {{"vacuum", {1.0}},      {"helium", {1.00004}},         {"hydrogen", {1.00013}},
                             {"air", {1.00028}},     {"carbon dioxide", {1.00045}}, {"water", {1.3330}},
                             {"acetone", {1.36}},    {"ethanol", {1.361}},          {"carbon tetrachloride", {1.461}},
                             {"glycerol", {1.4729}}, {"benzene", {1.501}},          {"silicone oil", {1.52045}},
                             {"bromine", {1.661}},   {"water ice", {1.31}},         {"fused quartz", {1.458}},
                             {"pyrex", {1.470}},     {"acrylic glass", {1.49}},     {"polypropylene", {1.49}},
                             {"bk7", {1.5046}},      {"sodium chloride", {1.544}},  {"amber", {1.55}},
                             {"pet", {1.5750}},      {"diamond", {2.419}},          {NULL, {0}}};

static const named *find_named(const named *t, const char *name) {
    for (; t->name; ++t)
        if (!strcmp(t->name, name)) return t;
    return NULL;
}

static int get_ior(reader *R, const mx_node *n, const char *name, double def, double *out) {
    *out = def;
    mx_node *p = prop(n, name);
    if (!p) return 0;
    if (!strcmp(p->tag, "string")) {
        const char *v = mx_attr(p, "value");
        const named *k = v ? find_named(iors, v) : NULL;
        if (!k) {
            const char *names[32];
            int i = 0;
            for (; iors[i].name && i < 31; ++i) names[i] = iors[i].name;
            names[i] = NULL;
            const char *sug = v ? prm_suggest(v, names) : NULL;
            FAIL(R, p, "\"%s\": unknown IOR name \"%s\"%s%s%s", name, v ? v : "", sug ? " (did you mean \"" : "",
                 sug ? sug : "", sug ? "\"?)" : "");
        }
        *out = k->v[0];
        return 0;
    }
    if (num_attr(R, p, "value", out)) return -1;
    if (!(*out > 0)) FAIL(R, p, "\"%s\": an IOR must be positive", name);
    return 0;
}

/* alpha, or alpha_u/alpha_v (anisotropic: their geometric mean, with a warning) -> roughness */
static int get_roughness(reader *R, const mx_node *b, double def_alpha, double *rough) {
    double a, au, av;
    int has_u = prop(b, "alpha_u") != NULL;
    if (get_float_tex(R, b, "alpha", def_alpha, &a, NULL)) return -1;
    if (has_u) {
        if (get_float_tex(R, b, "alpha_u", def_alpha, &au, NULL) || get_float_tex(R, b, "alpha_v", au, &av, NULL))
            return -1;
        if (fabs(au - av) > 1e-6 &&
            warn_at(R, b, "anisotropic",
                    "anisotropic roughness (alpha_u %g, alpha_v %g): caustic's GGX is isotropic "
                    "(alpha = sqrt(alpha_u alpha_v))",
                    au, av))
            return -1;
        a = sqrt(fabs(au * av));
    }
    const char *dist = get_string(b, "distribution", "beckmann");
    if (strcmp(dist, "ggx") &&
        warn_at(R, b, "beckmann", "microfacet distribution \"%s\": caustic's is GGX (same alpha)", dist))
        return -1;
    if (a < 0) a = 0;
    *rough = sqrt(a);
    if (*rough > 1) *rough = 1;
    return 0;
}

static int bsdf_build(reader *R, const mx_node *b, int depth, int *kind, material_params *p, int *skip);

/* The which-th nested BSDF of b (a <bsdf> child or a <ref> to one). */
static int inner_bsdf(reader *R, const mx_node *b, int which, const mx_node **out) {
    int k = 0;
    for (int i = 0; i < b->nkids; ++i) {
        const mx_node *c = b->kids[i];
        if (!strcmp(c->tag, "ref")) {
            const mx_node *t;
            if (deref(R, c, &t)) return -1;
            if (strcmp(t->tag, "bsdf")) continue;
            c = t;
        }
        if (!strcmp(c->tag, "bsdf") && k++ == which) {
            *out = c;
            return 0;
        }
    }
    FAIL(R, b, "bsdf \"%s\" needs %s nested BSDF", mx_attr(b, "type"), which ? "a second" : "a");
}

/* blendbsdf / mixturebsdf: caustic cannot mix BSDFs. Opaque reflectors (Diffuse, Conductor,
 * PBR) blend into one PBR: metallic, colour and roughness the weighted means of theirs (a
 * Conductor counting as metallic 1), which keeps the blend's albedo; otherwise (glass, emitters)
 * the BSDF of the largest weight. Either way one warning. */
static int blend(reader *R, const mx_node *b, int depth, const mx_node *const *in, const double *w, int n, int *kind,
                 material_params *p, int *skip) {
    int kinds[16], skips[16], best = 0, opaque = 1;
    material_params ps[16];
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        if (bsdf_build(R, in[i], depth + 1, &kinds[i], &ps[i], &skips[i])) return -1;
        if (w[i] > w[best]) best = i;
        sum += w[i] > 0 ? w[i] : 0;
        opaque &=
            !skips[i] && ps[i].alpha_tex < 0 &&
            (kinds[i] == MAT_DIFFUSE || kinds[i] == MAT_CONDUCTOR || kinds[i] == MAT_PBR || kinds[i] == MAT_COATED);
    }
    if (!opaque || !(sum > 0)) {
        *kind = kinds[best];
        *p = ps[best];
        *skip = skips[best];
        return warn_at(R, b, "blend", "%s: caustic cannot mix these BSDFs: the one of weight %.3g instead",
                       mx_attr(b, "type"), w[best]);
    }
    *kind = MAT_PBR;
    *p = material_params_default(MAT_PBR);
    *skip = 0;
    vec3 rgb = v3s(0.0f);
    double metal = 0, rough = 0;
    for (int i = 0; i < n; ++i) {
        double wi = (w[i] > 0 ? w[i] : 0) / sum;
        rgb = vadd(rgb, vscale(ps[i].rgb, (float)wi));
        /* a coated BSDF counts as its base, with the coat's roughness */
        int k = kinds[i] == MAT_COATED ? (ps[i].coat_base == COAT_BASE_CONDUCTOR ? MAT_CONDUCTOR
                                          : ps[i].coat_base == COAT_BASE_PBR     ? MAT_PBR
                                                                                 : MAT_DIFFUSE)
                                       : kinds[i];
        metal += wi * (k == MAT_CONDUCTOR ? 1.0 : k == MAT_PBR ? ps[i].metallic : 0.0);
        rough += wi * (kinds[i] == MAT_COATED ? ps[i].coat_roughness : k == MAT_DIFFUSE ? 1.0 : ps[i].roughness);
    }
    p->rgb = rgb;
    p->metallic = metal;
    p->roughness = rough;
    p->albedo_tex = ps[best].albedo_tex;
    p->normal_tex = ps[best].normal_tex;
    return warn_at(R, b, "blend",
                   "%s: caustic cannot mix BSDFs: one PBR of their weighted colour, metallic (%.3g) "
                   "and roughness (%.3g) instead",
                   mx_attr(b, "type"), metal, rough);
}

static int bsdf_build(reader *R, const mx_node *b, int depth, int *kind, material_params *p, int *skip) {
    ((mx_node *)b)->used = 1;
    if (depth > MI_MAX_NEST) FAIL(R, b, "BSDFs nested deeper than %d (a reference loop?)", MI_MAX_NEST);
    const char *type = mx_attr(b, "type");
    if (!type) FAIL(R, b, "<bsdf> without type");
    *skip = 0;
    int tex;
    vec3 c;
    if (!strcmp(type, "diffuse")) {
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        if (get_colour_tex(R, b, "reflectance", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
    } else if (!strcmp(type, "conductor") || !strcmp(type, "roughconductor")) {
        *kind = MAT_CONDUCTOR;
        *p = material_params_default(MAT_CONDUCTOR);
        /* a complex index (named metal or eta/k: the exact conductor Fresnel of caustic's
         * conductor, material_metal_lookup's table of Mitsuba's names); a specular_reflectance
         * other than 1 tints it, which caustic's complex Fresnel cannot: Schlick with that F0 */
        vec3 eta = v3s(0.0f), k = v3s(1.0f);
        int complex = 1;
        if (prop(b, "eta") || prop(b, "k")) {
            int t1, t2;
            if (get_colour_tex(R, b, "eta", v3s(0.0f), &eta, &t1) || get_colour_tex(R, b, "k", v3s(1.0f), &k, &t2))
                return -1;
        } else {
            const char *m = get_string(b, "material", "none");
            if (material_metal_lookup(m, &eta, &k, NULL)) {
                const char *names[64];
                int i = 0;
                for (; i < 63 && material_metal_name(i); ++i) names[i] = material_metal_name(i);
                names[i] = NULL;
                const char *sug = prm_suggest(m, names);
                if (warn_at(R, b, "conductor material",
                            "conductor material \"%s\" is not in caustic's table%s%s%s: "
                            "F0 0.9 instead",
                            m, sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : ""))
                    return -1;
                complex = 0;
                eta = v3s(0.0f);
                k = v3s(0.0f);
            }
        }
        float e[3] = {eta.x, eta.y, eta.z}, kk[3] = {k.x, k.y, k.z}, f[3];
        for (int i = 0; i < 3; ++i)
            f[i] = ((e[i] - 1) * (e[i] - 1) + kk[i] * kk[i]) / ((e[i] + 1) * (e[i] + 1) + kk[i] * kk[i]);
        vec3 f0 = complex ? v3(f[0], f[1], f[2]) : v3s(0.9f);
        if (get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &c, &tex)) return -1;
        if (tex >= 0 || c.x != 1.0f || c.y != 1.0f || c.z != 1.0f) complex = 0;
        p->rgb = vmul(f0, c);
        p->albedo_tex = tex;
        p->complex_ior = complex;
        p->eta = eta;
        p->k = k;
        p->roughness = 0;
        if (!strcmp(type, "roughconductor") && get_roughness(R, b, 0.1, &p->roughness)) return -1;
    } else if (!strcmp(type, "dielectric") || !strcmp(type, "roughdielectric") || !strcmp(type, "thindielectric")) {
        int rough = !strcmp(type, "roughdielectric"), thin = !strcmp(type, "thindielectric");
        *kind = thin ? MAT_THIN_DIELECTRIC : rough ? MAT_ROUGH_GLASS : MAT_DIELECTRIC;
        *p = material_params_default(*kind);
        double in, ext;
        if (get_ior(R, b, "int_ior", 1.5046, &in) || get_ior(R, b, "ext_ior", 1.000277, &ext)) return -1;
        p->ior = in / ext;
        if (get_colour_tex(R, b, "specular_transmittance", v3s(1.0f), &c, &tex)) return -1;
        p->rgb = c;
        vec3 sr;
        int t2;
        if (get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &sr, &t2)) return -1;
        if (rough && get_roughness(R, b, 0.1, &p->roughness)) return -1;
    } else if (!strcmp(type, "phong")) {
        /* Mitsuba 0.x: the normalised Phong of caustic's Phong kind, the same formula */
        *kind = MAT_PHONG;
        *p = material_params_default(MAT_PHONG);
        vec3 sp;
        int t2;
        double ex;
        if (get_colour_tex(R, b, "diffuse_reflectance", v3s(0.5f), &c, &tex) ||
            get_colour_tex(R, b, "specular_reflectance", v3s(0.2f), &sp, &t2) ||
            get_float_tex(R, b, "exponent", 30, &ex, NULL))
            return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        p->specular = sp;
        p->exponent = ex > 0 ? ex : 0;
    } else if (!strcmp(type, "coating") || !strcmp(type, "roughcoating")) {
        /* Mitsuba 0.x: a dielectric coat over a nested BSDF: caustic's Coated kind where the base
         * is diffuse, a conductor or PBR; the nested BSDF alone otherwise */
        const mx_node *in;
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        double ci, ce, r = 0, thick;
        vec3 sa;
        int t1;
        if (get_ior(R, b, "int_ior", 1.5046, &ci) || get_ior(R, b, "ext_ior", 1.000277, &ce) ||
            get_float(R, b, "thickness", 1.0, &thick) || get_colour_tex(R, b, "sigma_a", v3s(0.0f), &sa, &t1))
            return -1;
        if (!strcmp(type, "roughcoating") && get_roughness(R, b, 0.1, &r)) return -1;
        (void)prop(b, "specular_reflectance");
        int base = *kind == MAT_DIFFUSE     ? COAT_BASE_DIFFUSE
                   : *kind == MAT_CONDUCTOR ? COAT_BASE_CONDUCTOR
                   : *kind == MAT_PBR       ? COAT_BASE_PBR
                                            : -1;
        if (base < 0)
            return warn_at(R, b, "coating",
                           "%s over this BSDF: caustic coats diffuse, conductor and PBR bases only: "
                           "the BSDF under the coat instead",
                           type);
        *kind = MAT_COATED;
        p->coat_base = base;
        p->ior = ci / ce;
        p->coat_roughness = r;
        p->coat_weight = 1.0;
        p->coat_tint =
            v3(expf(-2.0f * (float)thick * sa.x), expf(-2.0f * (float)thick * sa.y), expf(-2.0f * (float)thick * sa.z));
    } else if (!strcmp(type, "plastic") || !strcmp(type, "roughplastic") || !strcmp(type, "pplastic")) {
        /* caustic's Coated kind over a diffuse base: Mitsuba's plastic (a dielectric coat, smooth
         * or rough, over a Lambertian base, the coat-base interreflection restored as Mitsuba's
         * nonlinear = false does) */
        *kind = MAT_COATED;
        *p = material_params_default(MAT_COATED);
        p->coat_base = COAT_BASE_DIFFUSE;
        if (get_colour_tex(R, b, "diffuse_reflectance", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        double in, ext, r = 0;
        if (get_ior(R, b, "int_ior", 1.49, &in) || get_ior(R, b, "ext_ior", 1.000277, &ext)) return -1;
        p->ior = in / ext;
        vec3 sr;
        int t2, nl;
        if (get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &sr, &t2) || get_bool(R, b, "nonlinear", 0, &nl))
            return -1;
        if (strcmp(type, "plastic") && get_roughness(R, b, 0.1, &r)) return -1;
        p->coat_roughness = r;
        if (nl && warn_at(R, b, "plastic nonlinear",
                          "%s: nonlinear = true (the colour shift of internal scattering) "
                          "is not modelled: the linear form instead",
                          type))
            return -1;
        if ((t2 >= 0 || sr.x != 1.0f || sr.y != 1.0f || sr.z != 1.0f) &&
            warn_at(R, b, "plastic specular", "%s: specular_reflectance other than 1 is not modelled (a clear coat)",
                    type))
            return -1;
    } else if (!strcmp(type, "principled")) {
        *kind = MAT_PBR;
        *p = material_params_default(MAT_PBR);
        if (get_colour_tex(R, b, "base_color", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        int mt, rt;
        if (get_float_tex(R, b, "metallic", 0.0, &p->metallic, &mt) ||
            get_float_tex(R, b, "roughness", 0.5, &p->roughness, &rt))
            return -1;
        if ((mt >= 0 || rt >= 0) && warn_at(R, b, "principled textured scalar",
                                            "principled: textured metallic/roughness: caustic takes the "
                                            "texture's mean (%.3g, %.3g)",
                                            p->metallic, p->roughness))
            return -1;
        /* clearcoat is left out: Disney's clear coat is added on top of the base without taking
         * its light, so caustic's energy-conserving Coated kind over the PBR base measured further
         * from Mitsuba's mean (0.833 against 0.876 without it, mi3-principled-textured) */
        static const char *const lobes[] = {"anisotropic", "clearcoat", "spec_trans", "flatness", NULL};
        for (int i = 0; lobes[i]; ++i) {
            double v;
            int t;
            if (get_float_tex(R, b, lobes[i], 0.0, &v, &t)) return -1;
            if ((v > 0 || t >= 0) &&
                warn_at(R, b, lobes[i], "principled: \"%s\" (caustic's PBR has no such lobe): left out", lobes[i]))
                return -1;
        }
        double sp, st, ct, eta, sh, sht;
        int sht_tex;
        if (get_float_tex(R, b, "specular", 0.5, &sp, NULL) || get_float_tex(R, b, "spec_tint", 0.0, &st, NULL) ||
            get_float_tex(R, b, "clearcoat_gloss", 0.0, &ct, NULL) || get_float(R, b, "eta", 1.5, &eta) ||
            get_float_tex(R, b, "sheen", 0.0, &sh, &sht_tex) || get_float_tex(R, b, "sheen_tint", 0.0, &sht, NULL))
            return -1;
        /* the base colour's hue (Disney's "tint": the colour over its luminance) */
        float lum = vluminance(c);
        vec3 tint = lum > 0.0f ? vscale(c, 1.0f / lum) : v3s(1.0f);
        /* Disney's specular: the dielectric F0 = 0.08 specular mix(1, tint, spec_tint), as caustic's
         * KHR_materials_specular tint over F0 0.04 (0.5 and no tint: the plain lobe) */
        if (sp != 0.5 || st > 0.0) p->spec_tint = vscale(vlerp(v3s(1.0f), tint, (float)st), (float)(2.0 * sp));
        /* Disney's sheen (a grazing lobe added on top) as caustic's Charlie sheen of the colour
         * sheen mix(1, tint, sheen_tint), roughness 0.5: another lobe, not Mitsuba's */
        if (sh > 0.0 || sht_tex >= 0) {
            p->sheen = vscale(vlerp(v3s(1.0f), tint, (float)sht), (float)kclamp((float)sh, 0.0f, 1.0f));
            p->sheen = v3(kmin(p->sheen.x, 1.0f), kmin(p->sheen.y, 1.0f), kmin(p->sheen.z, 1.0f));
            p->sheen_roughness = 0.5;
            if (warn_at(R, b, "sheen",
                        "principled: \"sheen\" %.3g is rendered as Charlie sheen (KHR_materials_sheen, roughness "
                        "0.5), not Disney's lobe: the sheen's light differs from Mitsuba's",
                        sh))
                return -1;
        }
    } else if (!strcmp(type, "twosided")) {
        const mx_node *in;
        return inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip) ? -1 : 0;
    } else if (!strcmp(type, "blendbsdf")) {
        double w;
        int wt;
        const mx_node *a, *bb;
        if (get_float_tex(R, b, "weight", 0.5, &w, &wt) || inner_bsdf(R, b, 0, &a) || inner_bsdf(R, b, 1, &bb))
            return -1;
        const mx_node *in[2] = {a, bb};
        double wv[2] = {1 - w, w};
        return blend(R, b, depth, in, wv, 2, kind, p, skip);
    } else if (!strcmp(type, "mixturebsdf")) {
        /* Mitsuba 0.x: weights "w1, w2, ..." over the nested BSDFs (Mitsuba 3 has blendbsdf) */
        const char *ws = get_string(b, "weights", NULL);
        double wv[16];
        int nw = ws ? parse_numbers(ws, wv, 16) : -1;
        if (nw < 1) FAIL(R, b, "mixturebsdf: \"weights\" must be a list of numbers");
        const mx_node *in[16];
        for (int i = 0; i < nw; ++i)
            if (inner_bsdf(R, b, i, &in[i])) return -1;
        return blend(R, b, depth, in, wv, nw, kind, p, skip);
    } else if (!strcmp(type, "mask")) {
        const mx_node *in;
        double op;
        int ot;
        if (get_float_tex(R, b, "opacity", 0.5, &op, &ot) || inner_bsdf(R, b, 0, &in) ||
            bsdf_build(R, in, depth + 1, kind, p, skip))
            return -1;
        if (ot >= 0) {
            p->alpha_tex = ot;
            p->alpha_cutoff = 0.5;
        } else if (op < 1 && warn_at(R, b, "mask constant",
                                     "mask with constant opacity %.3g: caustic's cut-outs are "
                                     "all or nothing: %s",
                                     op, op < 0.5 ? "left out" : "opaque"))
            return -1;
        else if (op < 0.5)
            *skip = 1;
    } else if (!strcmp(type, "bumpmap")) {
        /* caustic's bump map: the height texture times `scale` in scene units along the normal */
        const mx_node *in, *ht = NULL;
        double scale;
        if (get_float(R, b, "scale", 1.0, &scale)) return -1;
        for (int i = 0; i < b->nkids && !ht; ++i) {
            const mx_node *c2 = b->kids[i];
            if (!strcmp(c2->tag, "ref")) {
                const mx_node *t;
                if (deref(R, c2, &t)) return -1;
                c2 = t;
            }
            if (!strcmp(c2->tag, "texture")) ht = c2;
        }
        if (!ht) FAIL(R, b, "bumpmap without a height <texture>");
        ((mx_node *)ht)->used = 1;
        int ti;
        vec3 mean;
        if (texture_of(R, ht, &ti, &mean)) return -1;
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        p->bump_tex = ti;
        p->bump_scale = scale;
    } else if (!strcmp(type, "normalmap")) {
        const mx_node *in;
        mx_node *nt = prop(b, "normalmap");
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        if (nt) {
            vec3 mean;
            int ti;
            if (!strcmp(nt->tag, "ref")) {
                const mx_node *t;
                if (deref(R, nt, &t)) return -1;
                nt = (mx_node *)t;
            }
            if (strcmp(nt->tag, "texture")) FAIL(R, nt, "normalmap: \"normalmap\" must be a bitmap <texture>");
            if (texture_of(R, nt, &ti, &mean)) return -1;
            p->normal_tex = ti;
            p->normal_scale = 1;
        }
    } else if (!strcmp(type, "null")) {
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        *skip = 1;
    } else {
        if (warn_at(R, b, type, "bsdf \"%s\": caustic has no such model: Diffuse 0.5 instead", type)) return -1;
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        p->rgb = v3s(0.5f);
        mark_all(b); /* said once above */
    }
    return 0;
}

static mi_bsdf *bsdf_get(reader *R, const mx_node *b) {
    for (size_t i = 0; i < R->nbsdfs; ++i)
        if (R->bsdfs[i].node == b) return &R->bsdfs[i];
    mi_bsdf nb;
    memset(&nb, 0, sizeof nb);
    nb.node = b;
    nb.mat = -1;
    if (bsdf_build(R, b, 0, &nb.kind, &nb.p, &nb.skip)) return NULL;
    if (R->nbsdfs == R->capb) {
        mi_bsdf *a = realloc(R->bsdfs, (R->capb = R->capb ? 2 * R->capb : 16) * sizeof *a);
        if (!a) {
            prm_fail(&R->P, NULL, "out of memory");
            return NULL;
        }
        R->bsdfs = a;
    }
    R->bsdfs[R->nbsdfs] = nb;
    return &R->bsdfs[R->nbsdfs++];
}

/* ---- shapes ---------------------------------------------------------------------------------- */
/* Mitsuba's .serialized: a little-endian header (0x041C, version 3 or 4), then per shape a zlib
 * stream of flags, (v4) a name, vertex and triangle counts, positions, normals, uvs, colours
 * (single or double precision) and indices; a table of shape offsets and their count at the end. */
enum {
    SER_NORMALS = 0x1,
    SER_UVS = 0x2,
    SER_COLOURS = 0x8,
    SER_FACE_NORMALS = 0x10,
    SER_SINGLE = 0x1000,
    SER_DOUBLE = 0x2000
};

static uint64_t rd_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}
static uint32_t rd_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float rd_real(const unsigned char *p, size_t size) {
    if (size == 8) {
        double v;
        memcpy(&v, p, 8);
        return (float)v;
    }
    float v;
    memcpy(&v, p, 4);
    return v;
}

static int inflate_all(const unsigned char *in, size_t n, unsigned char **out, size_t *outn) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) return -1;
    size_t cap = n * 4 + 1024, len = 0;
    unsigned char *buf = malloc(cap);
    int rc = Z_OK;
    z.next_in = (unsigned char *)in;
    while (buf && rc == Z_OK) {
        if (len == cap) {
            if (cap >= (size_t)MI_MAX_SERIALIZED) break;
            unsigned char *b = realloc(buf, cap * 2);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
        size_t avail_in = n - (size_t)(z.next_in - in);
        z.avail_in = avail_in > 0x40000000u ? 0x40000000u : (uInt)avail_in;
        z.next_out = buf + len;
        z.avail_out = cap - len > 0x40000000u ? 0x40000000u : (uInt)(cap - len);
        size_t before = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        len += before - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
        if (rc == Z_BUF_ERROR) rc = Z_OK;
    }
    inflateEnd(&z);
    if (!buf || rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *outn = len;
    return 0;
}

static int load_serialized(reader *R, const mx_node *n, const char *path, long index, xform M, int mat, int flip) {
    size_t size = 0;
    char why[256];
    unsigned char *f = (unsigned char *)file_read_all(path, MI_MAX_SERIALIZED, &size, why, sizeof why);
    if (!f) FAIL(R, n, "%s: %s", path, why);
    int rc = -1;
    unsigned char *d = NULL;
    size_t dn = 0;
    vec3 *pos = NULL, *nrm = NULL;
    vec2 *uv = NULL;
    uint32_t *idx = NULL;
    char w[PRM_WHERE];
    mx_where(&R->P, w, n);
    if (size < 4 || f[0] != 0x1C || f[1] != 0x04) {
        prm_fail(&R->P, w, "%s: not a Mitsuba .serialized file (no 0x041C header)", path);
        goto done;
    }
    unsigned version = (unsigned)f[2] | (unsigned)f[3] << 8;
    if (version != 3 && version != 4) {
        prm_fail(&R->P, w, "%s: .serialized version %u (caustic reads 3 and 4)", path, version);
        goto done;
    }
    size_t start = 0, end = size;
    if (size < 8) {
        prm_fail(&R->P, w, "%s: truncated", path);
        goto done;
    }
    uint32_t count = rd_u32(f + size - 4);
    size_t osz = version == 4 ? 8 : 4;
    if (count == 0 || (size_t)count > (size - 4) / osz) {
        prm_fail(&R->P, w, "%s: bad shape table", path);
        goto done;
    }
    if (index < 0 || index >= (long)count) {
        prm_fail(&R->P, w, "%s: shape_index %ld, but the file has %u shape%s", path, index, count,
                 count == 1 ? "" : "s");
        goto done;
    }
    const unsigned char *table = f + size - 4 - (size_t)count * osz;
    start = version == 4 ? (size_t)rd_u64(table + 8 * index) : rd_u32(table + 4 * index);
    end = index + 1 < (long)count
              ? (version == 4 ? (size_t)rd_u64(table + 8 * (index + 1)) : rd_u32(table + 4 * (index + 1)))
              : (size_t)(table - f);
    if (start + 4 > end || end > size || rd_u32(f + start) != (0x041Cu | (uint32_t)version << 16)) {
        prm_fail(&R->P, w, "%s: shape %ld: bad offset or header", path, index);
        goto done;
    }
    if (inflate_all(f + start + 4, end - start - 4, &d, &dn)) {
        prm_fail(&R->P, w, "%s: shape %ld: the zlib data is damaged or too large", path, index);
        goto done;
    }
    size_t at = 0;
#define NEED(k)                                                                                                        \
    if (dn - at < (size_t)(k)) {                                                                                       \
        prm_fail(&R->P, w, "%s: shape %ld: truncated", path, index);                                                   \
        goto done;                                                                                                     \
    }
    NEED(4);
    uint32_t flags = rd_u32(d);
    at = 4;
    if (version == 4) {
        while (at < dn && d[at]) at++;
        NEED(1);
        at++;
    }
    NEED(16);
    uint64_t nv = rd_u64(d + at), nt = rd_u64(d + at + 8);
    at += 16;
    size_t fs = flags & SER_DOUBLE ? 8 : 4;
    if (nv == 0 || nt == 0 || nv > (1u << 30) || nt > (1u << 30)) {
        prm_fail(&R->P, w, "%s: shape %ld: %llu vertices, %llu triangles", path, index, (unsigned long long)nv,
                 (unsigned long long)nt);
        goto done;
    }
    size_t is = nv > 0xFFFFFFFFu ? 8 : 4;
    /* everything the counts promise is there before anything is allocated */
    size_t per_v = 3 * fs + (flags & SER_NORMALS ? 3 * fs : 0) + (flags & SER_UVS ? 2 * fs : 0) +
                   (flags & SER_COLOURS ? 3 * fs : 0);
    NEED(nv * per_v + nt * 3 * is);
    pos = malloc(nv * sizeof *pos);
    nrm = flags & SER_NORMALS ? malloc(nv * sizeof *nrm) : NULL;
    uv = flags & SER_UVS ? malloc(nv * sizeof *uv) : NULL;
    idx = malloc(nt * 3 * sizeof *idx);
    if (!pos || !idx || (flags & SER_NORMALS && !nrm) || (flags & SER_UVS && !uv)) {
        prm_fail(&R->P, w, "out of memory");
        goto done;
    }
#define RDF(p) rd_real((p), fs)
    NEED(nv * 3 * fs);
    for (uint64_t i = 0; i < nv; ++i, at += 3 * fs) pos[i] = v3(RDF(d + at), RDF(d + at + fs), RDF(d + at + 2 * fs));
    if (nrm) {
        NEED(nv * 3 * fs);
        for (uint64_t i = 0; i < nv; ++i, at += 3 * fs) {
            nrm[i] = v3(RDF(d + at), RDF(d + at + fs), RDF(d + at + 2 * fs));
            if (flip) nrm[i] = vscale(nrm[i], -1.0f);
        }
    }
    if (uv) {
        NEED(nv * 2 * fs);
        for (uint64_t i = 0; i < nv; ++i, at += 2 * fs) uv[i] = v2(RDF(d + at), RDF(d + at + fs));
    }
    if (flags & SER_COLOURS) {
        NEED(nv * 3 * fs);
        at += nv * 3 * fs;
    }
    NEED(nt * 3 * is);
    for (uint64_t i = 0; i < nt * 3; ++i, at += is) {
        uint64_t v = is == 8 ? rd_u64(d + at) : rd_u32(d + at);
        if (v >= nv) {
            prm_fail(&R->P, w, "%s: shape %ld: index %llu of %llu vertices", path, index, (unsigned long long)v,
                     (unsigned long long)nv);
            goto done;
        }
        idx[i] = (uint32_t)v;
    }
    if (flip)
        for (uint64_t i = 0; i < nt; ++i) {
            uint32_t t = idx[3 * i + 1];
            idx[3 * i + 1] = idx[3 * i + 2];
            idx[3 * i + 2] = t;
        }
#undef NEED
#undef RDF
    if (scene_add_mesh(R->s, pos, nrm, uv, nv, idx, NULL, nt, M, mat)) {
        prm_fail(&R->P, w, "%s: out of memory (or a singular transform)", path);
        goto done;
    }
    rc = 0;
done:
    free(f);
    free(d);
    free(pos);
    free(nrm);
    free(uv);
    free(idx);
    return rc;
}

/* Mitsuba's disk (radius 1 at z = 0, normal +z) and open cylinder (radius r from p0 to p1),
 * tessellated: caustic has no analytic disk or cylinder. */
static int add_disk(reader *R, const mx_node *n, xform M, int mat, int flip) {
    enum { S = MI_SEGMENTS };
    vec3 pos[S + 1], nrm[S + 1];
    vec2 uv[S + 1];
    uint32_t idx[3 * S];
    pos[0] = v3s(0.0f);
    uv[0] = v2(0, 0);
    for (int i = 0; i <= S; ++i) nrm[i] = v3(0, 0, flip ? -1.0f : 1.0f);
    for (int i = 0; i < S; ++i) {
        double a = 2 * MI_PI * i / S;
        pos[i + 1] = v3((float)cos(a), (float)sin(a), 0);
        uv[i + 1] = v2(1.0f, (float)i / S);
        idx[3 * i] = 0;
        idx[3 * i + 1] = (uint32_t)(1 + (flip ? (i + 1) % S : i));
        idx[3 * i + 2] = (uint32_t)(1 + (flip ? i : (i + 1) % S));
    }
    if (scene_add_mesh(R->s, pos, nrm, uv, S + 1, idx, NULL, S, M, mat))
        FAIL(R, n, "out of memory (or a singular transform)");
    return 0;
}

static int add_cylinder(reader *R, const mx_node *n, xform M, int mat, int flip) {
    enum { S = MI_SEGMENTS };
    vec3 p0, p1;
    double r;
    if (get_point(R, n, "p0", v3(0, 0, 0), &p0) || get_point(R, n, "p1", v3(0, 0, 1), &p1) ||
        get_float(R, n, "radius", 1.0, &r))
        return -1;
    vec3 ax = vsub(p1, p0);
    float h = vlen(ax);
    if (!(h > 0) || !(r > 0)) FAIL(R, n, "cylinder: p0 and p1 must differ and radius be positive");
    vec3 z = vscale(ax, 1.0f / h);
    vec3 x = fabsf(z.x) < 0.9f ? v3(1, 0, 0) : v3(0, 1, 0);
    x = vnorm(vsub(x, vscale(z, vdot(x, z))));
    vec3 y = vcross(z, x);
    vec3 pos[2 * (S + 1)], nrm[2 * (S + 1)];
    vec2 uv[2 * (S + 1)];
    uint32_t idx[6 * S];
    for (int i = 0; i <= S; ++i) {
        double a = 2 * MI_PI * i / S;
        vec3 d = vadd(vscale(x, (float)cos(a)), vscale(y, (float)sin(a)));
        for (int e = 0; e < 2; ++e) {
            pos[2 * i + e] = vadd(vadd(p0, vscale(ax, (float)e)), vscale(d, (float)r));
            nrm[2 * i + e] = flip ? vscale(d, -1.0f) : d;
            uv[2 * i + e] = v2((float)i / S, (float)e);
        }
    }
    for (int i = 0; i < S; ++i) {
        uint32_t a = (uint32_t)(2 * i), b = a + 1, c = a + 2, d = a + 3;
        uint32_t t[6] = {a, c, d, a, d, b};
        if (flip) {
            uint32_t u[6] = {a, d, c, a, b, d};
            memcpy(t, u, sizeof t);
        }
        memcpy(idx + 6 * i, t, sizeof t);
    }
    if (scene_add_mesh(R->s, pos, nrm, uv, 2 * (S + 1), idx, NULL, 2 * S, M, mat))
        FAIL(R, n, "out of memory (or a singular transform)");
    return 0;
}

/* Mitsuba decides a surface's sides by its shading normal (an area light emits on the side its
 * vertex normals face; the inside of glass is behind them); caustic by the winding. Triangles
 * added since t0 whose vertex normals oppose their winding are turned round (positions and
 * normals kept), so both say the same. */
static size_t align_winding(scene *s, size_t t0) {
    size_t turned = 0;
    if (!s->normals || !s->has_normals) return 0;
    for (size_t i = t0; i < s->ntriangles; ++i) {
        triangle *t = &s->triangles[i];
        vec3 p0 = s->positions[t->v[0]], p1 = s->positions[t->v[1]], p2 = s->positions[t->v[2]];
        vec3 g = vcross(vsub(p1, p0), vsub(p2, p0));
        vec3 n = vadd(vadd(s->normals[t->v[0]], s->normals[t->v[1]]), s->normals[t->v[2]]);
        if (vdot(g, n) < 0) {
            uint32_t k = t->v[1];
            t->v[1] = t->v[2];
            t->v[2] = k;
            turned++;
        }
    }
    return turned;
}

/* Mitsuba's cube: [-1,1]^3 as 6 faces of 4 vertices each, with per-face uvs and flat normals
 * (scene_add_cube shares 8 corners, so a texture could not follow the faces). */
static int add_cube(reader *R, const mx_node *n, xform M, int mat, int flip) {
    vec3 pos[24], nrm[24];
    vec2 uv[24];
    uint32_t idx[36];
    for (int f = 0; f < 6; ++f) {
        int axis = f / 2;
        float sgn = f % 2 ? 1.0f : -1.0f;
        float nn[3] = {0, 0, 0};
        nn[axis] = sgn;
        vec3 N = v3(nn[0], nn[1], nn[2]);
        /* two tangents with t1 x t2 = N */
        float a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
        a[(axis + 1) % 3] = 1;
        b[(axis + 2) % 3] = sgn;
        vec3 t1 = v3(a[0], a[1], a[2]), t2 = v3(b[0], b[1], b[2]);
        for (int k = 0; k < 4; ++k) {
            float su = k == 1 || k == 2 ? 1.0f : -1.0f, sv = k >= 2 ? 1.0f : -1.0f;
            pos[4 * f + k] = vadd(N, vadd(vscale(t1, su), vscale(t2, sv)));
            nrm[4 * f + k] = flip ? vscale(N, -1.0f) : N;
            uv[4 * f + k] = v2(0.5f * (su + 1), 0.5f * (sv + 1));
        }
        uint32_t q[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; ++k)
            idx[6 * f + k] = (uint32_t)(4 * f) + q[flip ? (k % 3 == 1 ? k + 1 : k % 3 == 2 ? k - 1 : k) : k];
    }
    if (scene_add_mesh(R->s, pos, nrm, uv, 24, idx, NULL, 12, M, mat))
        FAIL(R, n, "cube: singular transform (or out of memory)");
    return 0;
}

/* Reverses the triangles added since t0 and the normals of the vertices since v0 (flip_normals on
 * a mesh read by another reader). */
static void flip_added(scene *s, size_t v0, size_t t0) {
    for (size_t i = t0; i < s->ntriangles; ++i) {
        uint32_t t = s->triangles[i].v[1];
        s->triangles[i].v[1] = s->triangles[i].v[2];
        s->triangles[i].v[2] = t;
    }
    if (s->normals)
        for (size_t i = v0; i < s->nvertices; ++i) s->normals[i] = vscale(s->normals[i], -1.0f);
}

static int emitter_radiance(reader *R, const mx_node *e, vec3 *rgb, int *tex) {
    return get_colour_tex(R, e, "radiance", v3s(1.0f), rgb, tex);
}

/* The material of a shape: its BSDF (child or reference; Mitsuba's default: diffuse 0.5), with
 * the emission of its area emitter when it has one. -2: leave the shape out (null BSDF). */
static int shape_material(reader *R, const mx_node *sh, int *mat) {
    const mx_node *bsdf = NULL, *em = NULL;
    for (int i = 0; i < sh->nkids; ++i) {
        const mx_node *c = sh->kids[i];
        if (!strcmp(c->tag, "ref")) {
            const mx_node *t;
            if (deref(R, c, &t)) return -1;
            if (mx_attr(c, "name") && strcmp(t->tag, "bsdf") && strcmp(t->tag, "emitter") && strcmp(t->tag, "medium"))
                continue;
            c = t;
        }
        if (!strcmp(c->tag, "bsdf")) bsdf = c;
        if (!strcmp(c->tag, "emitter")) em = c;
    }
    mi_bsdf *b = NULL;
    if (bsdf && !(b = bsdf_get(R, bsdf))) return -1;
    if (!em) {
        if (!b) {
            *mat = R->default_mat;
            return 0;
        }
        if (b->skip && R->shape_boundary) { /* a null BSDF bounding media: no surface, a boundary */
            if (R->interface_mat < 0) {
                R->interface_mat = scene_add_material(R->s, "(null bsdf)", material_default(MAT_INTERFACE));
                if (R->interface_mat < 0) FAIL(R, sh, "out of memory");
            }
            *mat = R->interface_mat;
            return 0;
        }
        if (b->skip) {
            *mat = -2;
            return 0;
        }
        if (b->mat < 0) {
            char name[64];
            const char *id = mx_attr(b->node, "id");
            snprintf(name, sizeof name, "%s#%zu", id ? id : "bsdf", (size_t)(b - R->bsdfs));
            b->mat = scene_add_material(R->s, name, material_from_params(b->kind, &b->p));
            if (b->mat < 0) FAIL(R, sh, "out of memory");
        }
        *mat = b->mat;
        return 0;
    }
    ((mx_node *)em)->used = 1;
    const char *et = mx_attr(em, "type");
    if (!et || strcmp(et, "area")) FAIL(R, em, "a shape's emitter must be \"area\", not \"%s\"", et ? et : "");
    vec3 rad;
    int tex;
    if (emitter_radiance(R, em, &rad, &tex)) return -1;
    int kind = MAT_EMITTER;
    material_params p = material_params_default(MAT_EMITTER);
    if (b && !b->skip) {
        kind = b->kind;
        p = b->p;
    }
    p.emission = rad;
    p.emission_tex = tex;
    p.two_sided = 0; /* Mitsuba's area lights emit on the side the normal faces */
    char name[64];
    snprintf(name, sizeof name, "area#%d", R->nemit++);
    *mat = scene_add_material(R->s, name, material_from_params(kind, &p));
    if (*mat < 0) FAIL(R, sh, "out of memory");
    return 0;
}

static int add_shape(reader *R, const mx_node *sh, xform parent, int depth);

static int add_group(reader *R, const mx_node *g, xform M, int depth) {
    ((mx_node *)g)->used = 1;
    for (int i = 0; i < g->nkids; ++i) {
        const mx_node *c = g->kids[i];
        if (!strcmp(c->tag, "shape") && add_shape(R, c, M, depth + 1)) return -1;
    }
    return 0;
}

/* A shapegroup whose shapes are all triangles in caustic (meshes, cubes, tessellated disks and
 * cylinders) is one mesh that each instance places (scene_add_instance); one with a rectangle or a
 * sphere (caustic's quads and spheres, which meshes do not hold) is copied under each instance. */
static int add_instance(reader *R, const mx_node *g, xform M, int depth) {
    static const char *const triangles[] = {"obj", "ply", "serialized", "cube", "disk", "cylinder", NULL};
    for (int i = 0; i < g->nkids; ++i) {
        const mx_node *c = g->kids[i];
        if (strcmp(c->tag, "shape")) continue;
        const char *type = mx_attr(c, "type");
        int k = 0;
        while (type && triangles[k] && strcmp(triangles[k], type)) k++;
        if (!type || !triangles[k]) return add_group(R, g, M, depth); /* the flatten fallback */
    }
    size_t i = 0;
    while (i < R->ngroups && R->groups[i].g != g) i++;
    if (i == R->ngroups) { /* the group's triangles once, in its own space */
        size_t t0 = R->s->ntriangles, v0 = R->s->nvertices;
        if (add_group(R, g, xform_identity(), depth)) return -1;
        if (array_grow((void **)&R->groups, &R->capgroups, R->ngroups + 1, sizeof *R->groups))
            FAIL(R, g, "out of memory");
        R->groups[i].g = g;
        R->groups[i].mesh = -1;
        if (R->s->ntriangles > t0) {
            R->groups[i].mesh = scene_add_instanced_mesh(R->s, t0, R->s->ntriangles - t0, v0, R->s->nvertices - v0);
            if (R->groups[i].mesh < 0) FAIL(R, g, "out of memory");
        }
        R->ngroups++;
    }
    if (R->groups[i].mesh >= 0 && scene_add_instance(R->s, R->groups[i].mesh, M, -1, 0))
        FAIL(R, g, "instance: singular to_world (or out of memory)");
    return 0;
}

/* A <medium> (or a <ref> to one) as a caustic medium reference, read once per node: Mitsuba 3's
 * homogeneous medium (sigma_t and albedo, colours or floats or a constvolume, times scale; sigma_s
 * = albedo sigma_t, sigma_a = (1 - albedo) sigma_t; phase hg (g) or isotropic). Other media
 * (heterogeneous grids) warn and give 0: rendered without the medium. */
static int medium_of(reader *R, const mx_node *n, int *ref) {
    *ref = 0;
    if (!strcmp(n->tag, "ref")) {
        const mx_node *t;
        ((mx_node *)n)->used = 1;
        if (deref(R, n, &t)) return -1;
        if (strcmp(t->tag, "medium")) FAIL(R, n, "a medium reference names a <%s>, not a <medium>", t->tag);
        n = t;
    }
    for (size_t i = 0; i < R->nmed; ++i)
        if (R->med_nodes[i] == n) {
            *ref = R->med_refs[i];
            return 0;
        }
    ((mx_node *)n)->used = 1;
    const char *type = mx_attr(n, "type");
    if (!type) FAIL(R, n, "<medium> without type");
    if (!strcmp(type, "homogeneous")) {
        vec3 st = v3s(1.0f), albedo = v3s(0.75f);
        const char *names[2] = {"sigma_t", "albedo"};
        vec3 *dst[2] = {&st, &albedo};
        for (int k = 0; k < 2; ++k) {
            mx_node *p = prop(n, names[k]);
            if (!p) continue;
            if (!strcmp(p->tag, "volume")) { /* constvolume: its value */
                const char *vt = mx_attr(p, "type");
                if (!vt || strcmp(vt, "constvolume"))
                    FAIL(R, p, "\"%s\" of a homogeneous medium: a <volume> must be a constvolume", names[k]);
                p->used = 1;
                mx_node *v = prop(p, "value");
                if (!v) FAIL(R, p, "constvolume without \"value\"");
                v->used = 1;
                if (colour_of(R, v, dst[k])) return -1;
                continue;
            }
            int tex;
            if (get_colour_tex(R, n, names[k], *dst[k], dst[k], &tex)) return -1;
            if (tex >= 0) FAIL(R, p, "\"%s\" of a homogeneous medium cannot be a texture", names[k]);
        }
        double scale, g = 0.0;
        if (get_float(R, n, "scale", 1.0, &scale)) return -1;
        int unused;
        if (get_bool(R, n, "sample_emitters", 1, &unused) || get_bool(R, n, "has_spectral_extinction", 1, &unused))
            return -1;
        for (int i = 0; i < n->nkids; ++i) {
            const mx_node *c = n->kids[i];
            if (strcmp(c->tag, "phase")) continue;
            ((mx_node *)c)->used = 1;
            const char *pt = mx_attr(c, "type");
            if (pt && !strcmp(pt, "hg")) {
                if (get_float(R, c, "g", 0.8, &g)) return -1;
                if (!(g > -1.0 && g < 1.0)) FAIL(R, c, "phase hg: g must be in (-1, 1), not %g", g);
            } else if (!pt || strcmp(pt, "isotropic")) {
                mark_all(c);
                if (warn_at(R, c, "phase", "phase function \"%s\": caustic has Henyey-Greenstein only: isotropic",
                            pt ? pt : "?"))
                    return -1;
            }
        }
        if (!(scale >= 0.0)) FAIL(R, n, "homogeneous medium: scale must be >= 0");
        if (albedo.x > 1.0f || albedo.y > 1.0f || albedo.z > 1.0f)
            FAIL(R, n, "homogeneous medium: albedo above 1 (%g %g %g)", albedo.x, albedo.y, albedo.z);
        medium md;
        memset(&md, 0, sizeof md);
        md.kind = MEDIUM_HOMOGENEOUS;
        st = vscale(st, (float)scale);
        md.sigma_s = vmul(albedo, st);
        md.sigma_a = vsub(st, md.sigma_s);
        md.g = (float)g;
        char name[64];
        const char *id = mx_attr(n, "id");
        snprintf(name, sizeof name, "%.40s#%zu", id ? id : "medium", R->nmed);
        int idx = scene_add_medium(R->s, name, md);
        if (idx < 0) FAIL(R, n, "homogeneous medium: not a medium (negative or non-finite coefficients?)");
        *ref = idx + 1;
    } else {
        mark_all(n);
        if (warn_at(R, n, "medium",
                    "medium \"%s\": caustic reads only homogeneous media from Mitsuba files yet; "
                    "rendered without the medium",
                    type))
            return -1;
    }
    const mx_node **gn = realloc(R->med_nodes, (R->nmed + 1) * sizeof *gn);
    if (gn) R->med_nodes = gn;
    int *gr = gn ? realloc(R->med_refs, (R->nmed + 1) * sizeof *gr) : NULL;
    if (!gr) FAIL(R, n, "out of memory");
    R->med_refs = gr;
    R->med_nodes[R->nmed] = n;
    R->med_refs[R->nmed++] = *ref;
    return 0;
}

/* A shape's media: its <medium name="interior"> / "exterior" children (or refs so named); 0 the
 * vacuum. */
static int shape_media(reader *R, const mx_node *sh, int *in, int *out) {
    *in = *out = 0;
    for (int i = 0; i < sh->nkids; ++i) {
        const mx_node *c = sh->kids[i];
        const mx_node *t = c;
        if (!strcmp(c->tag, "ref")) {
            if (deref(R, c, &t)) return -1;
            if (strcmp(t->tag, "medium")) continue;
        } else if (strcmp(c->tag, "medium")) {
            continue;
        }
        const char *nm = mx_attr(c, "name");
        int ref;
        if (medium_of(R, c, &ref)) return -1;
        if (nm && !strcmp(nm, "interior"))
            *in = ref;
        else if (nm && !strcmp(nm, "exterior"))
            *out = ref;
        else
            FAIL(R, c, "a shape's medium must be named \"interior\" or \"exterior\", not \"%s\"", nm ? nm : "");
    }
    return 0;
}

static int add_shape_prims(reader *R, const mx_node *sh, xform parent, int depth);

/* A shape, and the media it bounds (kernel/medium.h's rule; Mitsuba's: entering gives the
 * interior, leaving the exterior, an unset one the vacuum). */
static int add_shape(reader *R, const mx_node *sh, xform parent, int depth) {
    int in, out;
    if (shape_media(R, sh, &in, &out)) return -1;
    size_t t0 = R->s->ntriangles, s0 = R->s->nspheres, q0 = R->s->nquads;
    int saved = R->shape_boundary;
    R->shape_boundary = in != out;
    int rc = add_shape_prims(R, sh, parent, depth);
    R->shape_boundary = saved;
    if (rc) return -1;
    if (in != out && scene_bind_media(R->s, t0, s0, q0, in, out)) FAIL(R, sh, "out of memory");
    return 0;
}

static int add_shape_prims(reader *R, const mx_node *sh, xform parent, int depth) {
    ((mx_node *)sh)->used = 1;
    if (depth > MI_MAX_NEST) FAIL(R, sh, "shapegroups nested deeper than %d (an instance of itself?)", MI_MAX_NEST);
    const char *type = mx_attr(sh, "type");
    if (!type) FAIL(R, sh, "<shape> without type");
    if (!strcmp(type, "shapegroup")) return 0; /* placed by its instances */
    xform T, M;
    if (get_transform(R, sh, "to_world", &T)) return -1;
    M = xform_mul(&parent, &T);
    if (!strcmp(type, "instance")) {
        const mx_node *g = NULL;
        for (int i = 0; i < sh->nkids; ++i)
            if (!strcmp(sh->kids[i]->tag, "ref") && deref(R, sh->kids[i], &g)) return -1;
        if (!g || strcmp(g->tag, "shape") || !mx_attr(g, "type") || strcmp(mx_attr(g, "type"), "shapegroup"))
            FAIL(R, sh, "instance: needs a <ref> to a shapegroup");
        R->ninstances++;
        return add_instance(R, g, M, depth);
    }
    int flip, facen;
    if (get_bool(R, sh, "flip_normals", 0, &flip) || get_bool(R, sh, "face_normals", 0, &facen)) return -1;
    if (facen && warn_at(R, sh, "face_normals", "face_normals: caustic keeps the mesh's vertex normals")) return -1;
    static const char *const known[] = {"obj",    "ply",  "serialized", "rectangle", "cube",
                                        "sphere", "disk", "cylinder",   NULL};
    int k = 0;
    while (known[k] && strcmp(known[k], type)) k++;
    if (!known[k]) {
        mark_all(sh);
        return warn_at(R, sh, type, "shape \"%s\": caustic has no such shape: left out", type);
    }
    int mat = -1;
    if (shape_material(R, sh, &mat)) return -1;
    if (mat == -2) return 0; /* null BSDF */
    R->nshapes++;
    size_t v0 = R->s->nvertices, t0 = R->s->ntriangles;
    if (!strcmp(type, "obj") || !strcmp(type, "ply")) {
        const char *fn = get_string(sh, "filename", NULL);
        if (!fn) FAIL(R, sh, "shape \"%s\" without filename", type);
        char *path = mx_resolve(&R->D, sh, fn);
        if (!path) FAIL(R, sh, "out of memory");
        char err[1024];
        int rc = scene_load_mesh_file(R->s, path, M, mat, err, sizeof err);
        free(path);
        if (rc) FAIL(R, sh, "%s", err);
        if (flip) flip_added(R->s, v0, t0);
        align_winding(R->s, t0);
    } else if (!strcmp(type, "serialized")) {
        const char *fn = get_string(sh, "filename", NULL);
        long index;
        if (!fn) FAIL(R, sh, "serialized shape without filename");
        if (get_int(R, sh, "shape_index", 0, &index)) return -1;
        char *path = mx_resolve(&R->D, sh, fn);
        if (!path) FAIL(R, sh, "out of memory");
        int rc = load_serialized(R, sh, path, index, M, mat, flip);
        free(path);
        if (rc) return -1;
        align_winding(R->s, t0);
    } else if (!strcmp(type, "rectangle")) {
        vec3 o = xform_point(&M, v3(-1, -1, 0)), u = xform_vector(&M, v3(2, 0, 0)), v = xform_vector(&M, v3(0, 2, 0));
        /* Mitsuba's normal is the transformed +z (inverse transpose): u x v flips with a mirroring
         * transform */
        if ((xf_det(&M) < 0) != (flip != 0)) {
            vec3 t = u;
            u = v;
            v = t;
        }
        if (scene_add_quad(R->s, o, u, v, mat)) FAIL(R, sh, "rectangle: degenerate transform (or out of memory)");
    } else if (!strcmp(type, "cube")) {
        if (add_cube(R, sh, M, mat, flip)) return -1;
    } else if (!strcmp(type, "sphere")) {
        vec3 c;
        double r;
        if (get_point(R, sh, "center", v3s(0.0f), &c) || get_float(R, sh, "radius", 1.0, &r)) return -1;
        if (!(r > 0)) FAIL(R, sh, "sphere: radius must be positive");
        xform L = xform_trs(c, v3s(0.0f), v3s((float)(2 * r))), W = xform_mul(&M, &L);
        if (scene_add_sphere(R->s, W, mat)) FAIL(R, sh, "sphere: singular transform (or out of memory)");
        if (flip && warn_at(R, sh, "sphere flip", "sphere flip_normals: caustic's spheres face outwards")) return -1;
    } else if (!strcmp(type, "disk")) {
        if (warn_at(R, sh, "tessellated", "shape \"%s\": caustic has no analytic %s: %d triangles instead", type, type,
                    MI_SEGMENTS))
            return -1;
        if (add_disk(R, sh, M, mat, flip)) return -1;
    } else if (!strcmp(type, "cylinder")) {
        if (warn_at(R, sh, "tessellated", "shape \"%s\": caustic has no analytic %s: %d triangles instead", type, type,
                    2 * MI_SEGMENTS))
            return -1;
        if (add_cylinder(R, sh, M, mat, flip)) return -1;
    }
    return 0;
}

/* ---- emitters ---------------------------------------------------------------------------------- */
/* Mitsuba's envmap: lat-long, u = atan2(x, -z) / 2pi wrapped to [0, 1) (caustic's u is that plus
 * one half), under to_world. Resampled here into caustic's convention (bilinear where rotated;
 * a shift of whole columns when not). */
static int add_envmap(reader *R, const mx_node *e, xform M, double scale) {
    const char *fn = get_string(e, "filename", NULL);
    if (!fn) FAIL(R, e, "envmap without filename");
    char *full = mx_resolve(&R->D, e, fn);
    if (!full) FAIL(R, e, "out of memory");
    image src, dst;
    char ierr[512];
    if (image_load(&src, full, ierr, sizeof ierr)) {
        free(full);
        FAIL(R, e, "%s", ierr);
    }
    image_value_report vr;
    image_sanitize(&src, &vr);
    if (image_init(&dst, src.width, src.height)) {
        image_free(&src);
        free(full);
        FAIL(R, e, "out of memory");
    }
    int W = src.width, H = src.height;
    xform inv;
    if (xform_invert(&M, &inv)) {
        image_free(&src);
        image_free(&dst);
        free(full);
        FAIL(R, e, "envmap: singular to_world");
    }
    xform I = xform_identity();
    int rotated = memcmp(&M, &I, sizeof M) != 0;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            float *o = dst.rgb + 3 * ((size_t)y * W + x);
            if (!rotated) { /* the same row, half a turn along it */
                const float *s = src.rgb + 3 * ((size_t)y * W + (x + W / 2) % W);
                memcpy(o, s, 3 * sizeof *o);
                if (W % 2) { /* odd widths: average the two neighbours */
                    const float *s2 = src.rgb + 3 * ((size_t)y * W + (x + W / 2 + 1) % W);
                    for (int c = 0; c < 3; ++c) o[c] = 0.5f * (s[c] + s2[c]);
                }
                continue;
            }
            vec3 d = env_uv_to_dir(v2((x + 0.5f) / W, (y + 0.5f) / H));
            vec3 l = vnorm(xform_vector(&inv, d));
            double u = atan2(l.x, -l.z) / (2 * MI_PI), v = acos(fmax(-1.0, fmin(1.0, l.y))) / MI_PI;
            u -= floor(u);
            double fx = u * W - 0.5, fy = v * H - 0.5;
            int x0 = (int)floor(fx), y0 = (int)floor(fy);
            double ax = fx - x0, ay = fy - y0;
            for (int c = 0; c < 3; ++c) {
                double acc = 0;
                for (int j = 0; j < 2; ++j)
                    for (int i = 0; i < 2; ++i) {
                        int xx = ((x0 + i) % W + W) % W, yy = y0 + j < 0 ? 0 : y0 + j >= H ? H - 1 : y0 + j;
                        acc += (i ? ax : 1 - ax) * (j ? ay : 1 - ay) * src.rgb[3 * ((size_t)yy * W + xx) + c];
                    }
                o[c] = (float)acc;
            }
        }
    image_free(&src);
    int idx = scene_take_image_texture(R->s, &dst);
    if (idx < 0) {
        free(full);
        FAIL(R, e, "out of memory");
    }
    R->s->env_tex = idx;
    R->s->env_radiance = v3s((float)scale);
    int rc = scene_env_memory_check(R->s, idx, full, ierr, sizeof ierr);
    free(full);
    if (rc) FAIL(R, e, "%s", ierr);
    return 0;
}

static int add_emitter(reader *R, const mx_node *e) {
    ((mx_node *)e)->used = 1;
    const char *type = mx_attr(e, "type");
    if (!type) FAIL(R, e, "<emitter> without type");
    xform M;
    if (get_transform(R, e, "to_world", &M)) return -1;
    vec3 rgb;
    int tex;
    char w[PRM_WHERE];
    mx_where(&R->P, w, e);
    if (!strcmp(type, "point")) {
        vec3 pos = xform_point(&M, v3s(0.0f));
        if (prop(e, "position") && get_point(R, e, "position", pos, &pos)) return -1;
        if (get_colour_tex(R, e, "intensity", v3s(1.0f), &rgb, &tex)) return -1;
        if (scene_add_point_light(R->s, pos, rgb)) FAIL(R, e, "point light: bad values (or out of memory)");
    } else if (!strcmp(type, "spot")) {
        double cut, beam;
        if (get_colour_tex(R, e, "intensity", v3s(1.0f), &rgb, &tex) || get_float(R, e, "cutoff_angle", 20.0, &cut) ||
            get_float(R, e, "beam_width", cut * 0.75, &beam))
            return -1;
        mx_node *tp = prop(e, "texture");
        if (tp) {
            vec3 mean;
            int ti;
            if (!strcmp(tp->tag, "ref")) {
                const mx_node *t;
                if (deref(R, tp, &t)) return -1;
                tp = (mx_node *)t;
            }
            if (strcmp(tp->tag, "texture")) FAIL(R, tp, "spot: \"texture\" must be a <texture>");
            if (texture_of(R, tp, &ti, &mean)) return -1;
            rgb = vmul(rgb, mean);
            if (warn_at(R, e, "spot texture",
                        "spot light with a texture: caustic's spot lights are plain: the "
                        "texture's mean colour (%.3g, %.3g, %.3g) instead",
                        mean.x, mean.y, mean.z))
                return -1;
        }
        if (!(cut > 0 && cut <= 90)) FAIL(R, e, "spot: cutoff_angle %g must be in (0, 90]", cut);
        if (beam > cut) beam = cut;
        vec3 pos = xform_point(&M, v3s(0.0f)), ax = vnorm(xform_vector(&M, v3(0, 0, 1)));
        if (scene_add_spot_light(R->s, pos, ax, rgb, (float)beam, (float)cut))
            FAIL(R, e, "spot light: bad values (or out of memory)");
    } else if (!strcmp(type, "directional")) {
        vec3 dir = xform_vector(&M, v3(0, 0, 1));
        if (prop(e, "direction") && get_point(R, e, "direction", dir, &dir)) return -1;
        if (get_colour_tex(R, e, "irradiance", v3s(1.0f), &rgb, &tex)) return -1;
        if (scene_add_directional_light(R->s, dir, rgb)) FAIL(R, e, "directional light: bad direction");
    } else if (!strcmp(type, "constant")) {
        if (get_colour_tex(R, e, "radiance", v3s(1.0f), &rgb, &tex)) return -1;
        if (R->s->env_tex >= 0 || R->s->env_radiance.x + R->s->env_radiance.y + R->s->env_radiance.z > 0) {
            if (warn_at(R, e, "two environments",
                        "a second environment emitter: caustic has one; this one is left out"))
                return -1;
            return 0;
        }
        R->s->env_radiance = rgb;
    } else if (!strcmp(type, "envmap")) {
        double scale;
        if (get_float(R, e, "scale", 1.0, &scale)) return -1;
        if (R->s->env_tex >= 0 || R->s->env_radiance.x + R->s->env_radiance.y + R->s->env_radiance.z > 0) {
            if (warn_at(R, e, "two environments",
                        "a second environment emitter: caustic has one; this one is left out"))
                return -1;
            mark_all(e);
            return 0;
        }
        return add_envmap(R, e, M, scale);
    } else if (!strcmp(type, "area")) {
        FAIL(R, e, "an area emitter belongs inside a <shape>");
    } else {
        mark_all(e);
        return warn_at(R, e, type, "emitter \"%s\": caustic has no such light: left out", type);
    }
    return 0;
}

/* ---- sensor, film, sampler, integrator ---------------------------------------------------------- */
static int read_sensor(reader *R, const mx_node *sn) {
    ((mx_node *)sn)->used = 1;
    const char *type = mx_attr(sn, "type");
    if (!type) FAIL(R, sn, "<sensor> without type");
    camera_desc *cd = &R->s->camera;
    long w = 768, h = 576, spp = 4;
    for (int i = 0; i < sn->nkids; ++i) {
        const mx_node *c = sn->kids[i];
        if (!strcmp(c->tag, "film")) {
            ((mx_node *)c)->used = 1;
            if (get_int(R, c, "width", 768, &w) || get_int(R, c, "height", 576, &h)) return -1;
            if (w < 1 || h < 1 || w > 16384 || h > 16384 || (double)w * h > (double)(1 << 26))
                FAIL(R, c, "film %ldx%ld: each side 1..16384, at most 2^26 pixels", w, h);
            if ((prop(c, "crop_width") || prop(c, "crop_offset_x")) &&
                warn_at(R, c, "crop", "film crop: caustic renders the whole film (--crop crops)"))
                return -1;
            for (int k = 0; k < c->nkids; ++k)
                if (!strcmp(c->kids[k]->tag, "rfilter")) {
                    ((mx_node *)c->kids[k])->used = 1;
                    const char *ft = mx_attr(c->kids[k], "type");
                    if (ft && strcmp(ft, "box") &&
                        warn_at(R, c->kids[k], "rfilter", "reconstruction filter \"%s\": caustic's film is a box", ft))
                        return -1;
                    for (int j = 0; j < c->kids[k]->nkids; ++j) ((mx_node *)c->kids[k]->kids[j])->used = 1;
                }
            /* output settings with no meaning for the picture */
            static const char *const fmt[] = {"pixel_format",       "component_format", "file_format",   "banner",
                                              "high_quality_edges", "rfilter",          "sample_border", NULL};
            for (int k = 0; fmt[k]; ++k) (void)prop(c, fmt[k]);
        } else if (!strcmp(c->tag, "sampler")) {
            ((mx_node *)c)->used = 1;
            if (get_int(R, c, "sample_count", 4, &spp)) return -1;
            if (spp < 1) FAIL(R, c, "sample_count %ld must be at least 1", spp);
            (void)prop(c, "seed");
        } else if (!strcmp(c->tag, "medium") || !strcmp(c->tag, "ref")) {
            const mx_node *t = c; /* the medium around the camera */
            if (!strcmp(c->tag, "ref") && deref(R, c, &t)) return -1;
            if (!strcmp(t->tag, "medium") && medium_of(R, c, &cd->medium)) return -1;
        }
    }
    cd->width = (int)w;
    cd->height = (int)h;
    R->s->spp = (int)(spp > 1 << 24 ? 1 << 24 : spp);
    xform M;
    if (get_transform(R, sn, "to_world", &M)) return -1;
    cd->eye = xform_point(&M, v3s(0.0f));
    vec3 fwd = vnorm(xform_vector(&M, v3(0, 0, 1))), up = vnorm(xform_vector(&M, v3(0, 1, 0)));
    cd->lookat = vadd(cd->eye, fwd);
    cd->up = up;
    /* Mitsuba's film x runs along the camera's -x: caustic's right is fwd x up; a mirroring
     * to_world flips the picture, which caustic's camera cannot */
    vec3 right_mi = vscale(xform_vector(&M, v3(1, 0, 0)), -1.0f);
    if (vdot(right_mi, vcross(fwd, up)) < 0 &&
        warn_at(R, sn, "mirrored camera", "the sensor's to_world mirrors the picture: caustic renders it unmirrored"))
        return -1;
    double fov = 0, vfov;
    const char *axis = get_string(sn, "fov_axis", "x");
    if (prop(sn, "fov")) {
        if (get_float(R, sn, "fov", 0, &fov)) return -1;
    } else {
        const char *fl = get_string(sn, "focal_length", "50mm");
        double f = atof(fl);
        if (!(f > 0)) FAIL(R, sn, "focal_length \"%s\" is not a length (as \"50mm\")", fl);
        fov = 2 * atan(sqrt(36.0 * 36.0 + 24.0 * 24.0) / (2 * f)) * 180 / MI_PI;
        axis = "diagonal";
    }
    if (!(fov > 0 && fov < 180)) FAIL(R, sn, "fov %g must be in (0, 180) degrees", fov);
    double t = tan(fov * MI_PI / 360.0), aspect = (double)w / (double)h;
    if (!strcmp(axis, "smaller")) axis = w < h ? "x" : "y";
    if (!strcmp(axis, "larger")) axis = w > h ? "x" : "y";
    if (!strcmp(axis, "x"))
        vfov = 2 * atan(t / aspect);
    else if (!strcmp(axis, "y"))
        vfov = 2 * atan(t);
    else if (!strcmp(axis, "diagonal"))
        vfov = 2 * atan(t / sqrt(aspect * aspect + 1));
    else
        FAIL(R, sn, "fov_axis \"%s\": one of x, y, diagonal, smaller, larger", axis);
    cd->fovy_deg = (float)(vfov * 180 / MI_PI);
    cd->aperture_radius = 0;
    cd->focus_distance = 0;
    (void)prop(sn, "near_clip");
    (void)prop(sn, "far_clip");
    (void)prop(sn, "shutter_open");
    (void)prop(sn, "shutter_close");
    if (!strcmp(type, "thinlens")) {
        double ar, fd;
        if (get_float(R, sn, "aperture_radius", 0.0, &ar) || get_float(R, sn, "focus_distance", 0.0, &fd)) return -1;
        if (ar < 0 || fd < 0) FAIL(R, sn, "thinlens: aperture_radius and focus_distance must not be negative");
        cd->aperture_radius = (float)ar;
        cd->focus_distance = (float)fd;
    } else if (!strcmp(type, "orthographic")) {
        if (warn_at(R, sn, "orthographic",
                    "orthographic sensor: caustic's cameras are perspective: a %g degree "
                    "perspective view from the same place instead",
                    vfov * 180 / MI_PI))
            return -1;
    } else if (strcmp(type, "perspective")) {
        if (warn_at(R, sn, type, "sensor \"%s\": caustic has no such camera: a perspective one instead", type))
            return -1;
    }
    return 0;
}

/* Integrators: wrappers (moment, aov, stokes) hold the one that renders. Mitsuba's max_depth
 * counts path segments (1: emitters seen directly, 2: direct light; -1: unbounded); caustic's
 * depth counts bounces (depth = max_depth - 1). */
static int read_integrator(reader *R, const mx_node *in) {
    ((mx_node *)in)->used = 1;
    const char *type = mx_attr(in, "type");
    if (!type) FAIL(R, in, "<integrator> without type");
    if (!strcmp(type, "moment") || !strcmp(type, "aov") || !strcmp(type, "stokes")) {
        for (int i = 0; i < in->nkids; ++i)
            if (!strcmp(in->kids[i]->tag, "integrator")) return read_integrator(R, in->kids[i]);
        return 0;
    }
    long md;
    if (get_int(R, in, "max_depth", -1, &md)) return -1;
    if (!strcmp(type, "direct")) md = 2;
    (void)prop(in, "rr_depth");
    (void)prop(in, "hide_emitters");
    if (md < 0 || md > 1025)
        R->s->max_depth = 1024;
    else if (md <= 1) {
        if (warn_at(R, in, "max_depth 1",
                    "max_depth %ld (emitters seen directly): caustic's shortest paths are "
                    "depth 1 (direct light)",
                    md))
            return -1;
        R->s->max_depth = 1;
    } else
        R->s->max_depth = (int)md - 1;
    static const char *const native[] = {"path", "volpath", "volpathmis", "direct", "prb", "prbvolpath", NULL};
    int k = 0;
    while (native[k] && strcmp(native[k], type)) k++;
    if (!native[k]) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "integrator \"%s\": caustic renders with the integrator --integrator chooses "
                 "(path tracing unless told; vcm for caustics)",
                 type);
        char w[PRM_WHERE];
        mx_where(&R->P, w, in);
        prm_note(&R->P, "integrator", w, msg);
        mark_all(in);
    }
    return 0;
}

/* ---- the coverage summary: parameters nobody read --------------------------------------------- */
static int is_property(const char *tag) {
    static const char *const t[] = {"float", "integer", "boolean",   "string",  "rgb",       "srgb", "spectrum",
                                    "point", "vector",  "transform", "texture", "blackbody", NULL};
    for (int i = 0; t[i]; ++i)
        if (!strcmp(t[i], tag)) return 1;
    return 0;
}

static int report_unused(reader *R, const mx_node *n) {
    for (int i = 0; i < n->nkids; ++i) {
        const mx_node *c = n->kids[i];
        if (n->used && !c->used && is_property(c->tag) && mx_attr(c, "name")) {
            char key[160];
            snprintf(key, sizeof key, "unused %s %s %s", n->tag, mx_attr(n, "type") ? mx_attr(n, "type") : "",
                     mx_attr(c, "name"));
            if (warn_at(R, c, key, "%s \"%s\": parameter \"%s\" is not used (caustic has no such setting)", n->tag,
                        mx_attr(n, "type") ? mx_attr(n, "type") : "", mx_attr(c, "name")))
                return -1;
        }
        if (report_unused(R, c)) return -1;
    }
    return 0;
}

/* ---- the scene ------------------------------------------------------------------------------- */
static int read_scene(reader *R) {
    const mx_node *root = R->D.root;
    ((mx_node *)root)->used = 1;
    R->s->spp = 4;
    R->s->max_depth = 1024;
    R->s->env_tex = -1;
    R->s->env_radiance = v3s(0.0f);
    size_t cap = 0;
    if (collect_ids(root, &R->ids, &R->nids, &cap)) return prm_fail(&R->P, NULL, "out of memory");
    if (R->nids) qsort(R->ids, R->nids, sizeof *R->ids, id_cmp);
    /* an id given twice: Mitsuba refuses it */
    for (size_t i = 1; i < R->nids; ++i)
        if (!strcmp(R->ids[i].id, R->ids[i - 1].id)) {
            const mx_node *a = R->ids[i - 1].node, *b = R->ids[i].node;
            if (a->line > b->line && a->file == b->file) a = b;
            char w[PRM_WHERE];
            mx_where(&R->P, w, R->ids[i].node == a ? R->ids[i - 1].node : R->ids[i].node);
            return prm_fail(&R->P, w, "id \"%s\" is given twice (also at line %ld)", R->ids[i].id, a->line);
        }
    R->default_mat = scene_add_material(R->s, "mitsuba-default", material_default(MAT_DIFFUSE));
    if (R->default_mat < 0) return prm_fail(&R->P, NULL, "out of memory");
    R->s->materials[R->default_mat].albedo = v3s(0.5f);
    int sensors = 0;
    for (int i = 0; i < root->nkids; ++i) {
        const mx_node *c = root->kids[i];
        const char *t = c->tag;
        if (!strcmp(t, "sensor")) {
            if (sensors++) {
                if (warn_at(R, c, "second sensor", "a second sensor: caustic renders the first")) return -1;
                ((mx_node *)c)->used = 1;
                continue;
            }
            if (read_sensor(R, c)) return -1;
        } else if (!strcmp(t, "integrator")) {
            if (read_integrator(R, c)) return -1;
        } else if (!strcmp(t, "shape")) {
            if (add_shape(R, c, xform_identity(), 0)) return -1;
        } else if (!strcmp(t, "emitter")) {
            if (add_emitter(R, c)) return -1;
        } else if (!strcmp(t, "bsdf") || !strcmp(t, "texture") || !strcmp(t, "spectrum") || !strcmp(t, "rgb")) {
            /* declared for reference */
        } else if (!strcmp(t, "medium")) {
            int ref; /* declared for reference; read here so that its problems are said once */
            if (medium_of(R, c, &ref)) return -1;
        } else if (!strcmp(t, "default") || !strcmp(t, "path")) {
        } else if (warn_at(R, c, t, "<%s> at the scene's top level is not read", t))
            return -1;
    }
    if (!sensors) {
        /* Mitsuba's default sensor: perspective at the origin looking along +z */
        camera_desc *cd = &R->s->camera;
        cd->width = 768;
        cd->height = 576;
        cd->eye = v3s(0.0f);
        cd->lookat = v3(0, 0, 1);
        cd->up = v3(0, 1, 0);
        cd->fovy_deg = (float)(2 * atan(tan(45 * MI_PI / 360) * 576.0 / 768.0) * 180 / MI_PI);
        if (warn_at(R, root, "no sensor", "no <sensor>: Mitsuba's default camera (at the origin, looking along +z)"))
            return -1;
    }
    /* R->bsdfs are read where shapes use them; declared but unused ones are read too, so that
     * their errors are not hidden */
    for (int i = 0; i < root->nkids; ++i)
        if (!strcmp(root->kids[i]->tag, "bsdf") && !bsdf_get(R, root->kids[i])) return -1;
    int cur = 0;
    for (const char *d; (d = mx_unused_define(&R->D, &cur));) {
        char key[128];
        snprintf(key, sizeof key, "unused define %.100s", d);
        if (prm_warn(&R->P, key, NULL, "-D %s: the scene has no $%s", d, d)) return -1;
    }
    return report_unused(R, root);
}

int mitsuba_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);

int mitsuba_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    reader R;
    memset(&R, 0, sizeof R);
    R.interface_mat = -1;
    prm_init(&R.P, src->path, opts ? opts->strict : 0, err, errlen);
    R.P.line_format = 1;
    /* -D name=value: Mitsuba's parameters ($name); the names are not JSON paths here */
    int rc =
        mx_read(&R.D, &R.P, src->path, src->text, src->size, opts ? opts->defines : NULL, opts ? opts->ndefines : 0);
    if (rc == 0) {
        R.s = scene_create();
        if (!R.s)
            rc = prm_fail(&R.P, NULL, "out of memory");
        else {
            R.s->warn = opts ? opts->warn : NULL;
            R.s->warn_user = opts ? opts->warn_user : NULL;
            rc = read_scene(&R);
        }
    }
    if (rc == 0 && R.s->ntriangles + R.s->nspheres + R.s->nquads == 0 && R.s->env_tex < 0 && R.s->npunctual == 0)
        rc = prm_fail(&R.P, NULL, "the scene has nothing caustic can render (no shape, light or environment read)");
    /* -D was this reader's own ($name parameters); no caustic JSON is handed out (it cannot say
     * serialized meshes, spot lights, cut-out masks), so --dump-scene refuses (scene_api.c) */
    if (rc == 0 && opts && opts->defines_taken) *opts->defines_taken = 1;
    prm_flush(&R.P, R.s, rc == 0);
    if (rc == 0)
        *out = R.s;
    else
        scene_destroy(R.s);
    free(R.bsdfs);
    free(R.texs);
    free(R.ids);
    free(R.groups);
    free(R.med_nodes);
    free(R.med_refs);
    mx_free(&R.D);
    return rc;
}
