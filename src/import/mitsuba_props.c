/* Property values of the Mitsuba reader: a plugin's named properties (numbers, booleans, strings,
 * points), colours and spectra turned into linear sRGB, and transforms. */
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

/* The property `name` of plugin n (NULL: absent), marked used. */
mx_node *mi_prop(const mx_node *n, const char *name) {
    for (int i = 0; i < n->nkids; ++i) {
        const char *a = mx_attr(n->kids[i], "name");
        if (a && !strcmp(a, name)) {
            n->kids[i]->used = 1;
            return n->kids[i];
        }
    }
    return NULL;
}

int mi_parse_numbers(const char *s, double *out, int max) {
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

int mi_num_attr(reader *R, const mx_node *n, const char *attr, double *out) {
    const char *v = mx_attr(n, attr);
    if (!v) FAIL(R, n, "<%s> without %s", n->tag, attr);
    double d[2];
    if (mi_parse_numbers(v, d, 2) != 1) FAIL(R, n, "<%s %s=\"%s\">: not a number", n->tag, attr, v);
    *out = d[0];
    return 0;
}

int mi_get_float(reader *R, const mx_node *n, const char *name, double def, double *out) {
    *out = def;
    mx_node *p = mi_prop(n, name);
    if (!p) return 0;
    if (strcmp(p->tag, "float") && strcmp(p->tag, "integer"))
        FAIL(R, p, "\"%s\" of %s \"%s\" must be a <float>, not <%s>", name, n->tag, mx_attr(n, "type"), p->tag);
    return mi_num_attr(R, p, "value", out);
}

int mi_get_int(reader *R, const mx_node *n, const char *name, long def, long *out) {
    *out = def;
    mx_node *p = mi_prop(n, name);
    if (!p) return 0;
    double v;
    if (strcmp(p->tag, "integer") && strcmp(p->tag, "float"))
        FAIL(R, p, "\"%s\" must be an <integer>, not <%s>", name, p->tag);
    if (mi_num_attr(R, p, "value", &v)) return -1;
    if (v != floor(v) || fabs(v) > 2e9) FAIL(R, p, "\"%s\": %g is not a whole number", name, v);
    *out = (long)v;
    return 0;
}

int mi_get_bool(reader *R, const mx_node *n, const char *name, int def, int *out) {
    *out = def;
    mx_node *p = mi_prop(n, name);
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

const char *mi_get_string(const mx_node *n, const char *name, const char *def) {
    mx_node *p = mi_prop(n, name);
    if (!p) return def;
    const char *v = mx_attr(p, "value");
    return v ? v : def;
}

/* x,y,z attributes or value="x, y, z" (one number: all three). */
static int vec_of(reader *R, const mx_node *p, vec3 def, vec3 *out) {
    const char *v = mx_attr(p, "value");
    if (v) {
        double d[4];
        int k = mi_parse_numbers(v, d, 4);
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
        if (mx_attr(p, axes[i]) && mi_num_attr(R, p, axes[i], &c[i])) return -1;
    *out = v3((float)c[0], (float)c[1], (float)c[2]);
    return 0;
}

int mi_get_point(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *out) {
    *out = def;
    mx_node *p = mi_prop(n, name);
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
int mi_colour_of(reader *R, const mx_node *p, vec3 *out) {
    const char *v = mx_attr(p, "value");
    if (!strcmp(p->tag, "rgb") || !strcmp(p->tag, "srgb") || !strcmp(p->tag, "color")) {
        if (!v) FAIL(R, p, "<%s> without value", p->tag);
        double d[4];
        int k = mi_parse_numbers(v, d, 4);
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
        if (mi_num_attr(R, p, "value", &d)) return -1;
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
            int k = mi_parse_numbers(v, d, 4);
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
        if (mi_num_attr(R, p, "temperature", &T)) return -1;
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

double mi_xf_det(const xform *x) {
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
            if (vec_of(R, e, v3s(0.0f), &a) || mi_num_attr(R, e, "angle", &ang)) return -1;
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
            int k = v ? mi_parse_numbers(v, d, 17) : -1;
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
            if (!so || !st || mi_parse_numbers(so, o, 3) != 3 || mi_parse_numbers(st, tg, 3) != 3)
                FAIL(R, e, "<lookat> needs origin and target, 3 numbers each");
            int has_up = su && mi_parse_numbers(su, up, 3) == 3;
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
int mi_get_transform(reader *R, const mx_node *n, const char *name, xform *out) {
    *out = xform_identity();
    mx_node *t = mi_prop(n, name);
    if (!t) return 0;
    if (strcmp(t->tag, "transform")) FAIL(R, t, "\"%s\" must be a <transform>, not <%s>", name, t->tag);
    return transform_of(R, t, out);
}
