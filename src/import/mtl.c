/* Wavefront MTL reader: newmtl, Kd, Ks, Ke, Ka, Ns, Ni, d, Tr, Tf, illum, map_Kd, bump/map_bump
 * (with -bm), norm/map_Kn, map_d, and the PBR
 * extensions Pr, Pm, map_Pr. Options before a map's file name (-bm 1, -o u v w, ...) are skipped.
 * Other statements are counted and reported by the OBJ loader in one warning line. Errors are
 * one line, "file.mtl:LINE: problem". The mapping to caustic materials (mtl_to_params) is
 * documented in docs/scene-format.md. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/mtl.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MTL_MAX_VALUE 1e7 /* colours/emission beyond this are rejected as garbage */

typedef struct mtlreader {
    mtl_lib *lib;
    const char *name;
    size_t line;
    char *err;
    size_t errlen;
} mtlreader;

static int mtlfail(mtlreader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    file_error_v(r->err, r->errlen, r->name, r->line, fmt, ap);
    va_end(ap);
    return -1;
}

/* One number token; returns 0 and advances, or -1 with an error. */
static int read_number(mtlreader *r, char **pp, const char *what, double lo, double hi, double *out) {
    char *p = text_skip_space(*pp);
    if (*p == ',' && p != *pp) p = text_skip_space(p + 1); /* "0.98 , 0.98" */
    if (!*p || *p == '#') return mtlfail(r, "%s: missing number", what);
    char *end;
    double x = strtod(p, &end);
    /* some exporters separate the numbers with commas ("Kd 0.98, 0.98, 0.98") */
    if (end != p && *end == ',') *end = ' ';
    if (end == p || (*end && !text_is_space(*end) && *end != '#')) {
        size_t len = strcspn(p, " \t\r");
        return mtlfail(r, "%s: \"%.*s\" is not a number", what, (int)(len > 32 ? 32 : len), p);
    }
    if (!isfinite(x) || x < lo || x > hi)
        return mtlfail(r, "%s: %.*s is out of range [%g, %g]", what, (int)(end - p > 32 ? 32 : end - p), p, lo, hi);
    *out = x;
    *pp = end;
    return 0;
}

static int at_end(char *p) {
    p = text_skip_space(p);
    return !*p || *p == '#';
}

/* "Kd r [g b]": one number is grey. "Kd spectral ..." / "Kd xyz ..." are not supported. */
static int read_color(mtlreader *r, char *p, const char *what, vec3 *out) {
    double c[3];
    if (read_number(r, &p, what, -MTL_MAX_VALUE, MTL_MAX_VALUE, &c[0])) return -1;
    if (at_end(p)) {
        c[1] = c[2] = c[0];
    } else {
        if (read_number(r, &p, what, -MTL_MAX_VALUE, MTL_MAX_VALUE, &c[1])) return -1;
        if (read_number(r, &p, what, -MTL_MAX_VALUE, MTL_MAX_VALUE, &c[2])) return -1;
    }
    *out = v3((float)c[0], (float)c[1], (float)c[2]);
    return 0;
}

static void note_unknown(mtl_lib *lib, const char *kw, size_t n) {
    lib->unknown++;
    text_keyword_set_add(lib->unknown_kw, sizeof lib->unknown_kw, kw, n);
}

/* Texture statement: skips "-option args" and returns the file name (rest of the line, trimmed),
 * or NULL if there is none. Options take a fixed number of arguments, except -o/-s/-t which take
 * one to three numbers. */
static char *map_filename(char *p, double *bm) {
    static const struct {
        const char *opt;
        int nargs;
    } opts[] = {{"-blendu", 1}, {"-blendv", 1}, {"-bm", 1},   {"-boost", 1}, {"-cc", 1}, {"-clamp", 1}, {"-imfchan", 1},
                {"-mm", 2},     {"-texres", 1}, {"-type", 1}, {"-o", 3},     {"-s", 3},  {"-t", 3},     {NULL, 0}};
    for (;;) {
        p = text_skip_space(p);
        if (*p != '-') break;
        char *tok = p;
        while (*p && !text_is_space(*p)) ++p;
        size_t n = (size_t)(p - tok);
        int nargs = -1, variable = 0;
        for (int i = 0; opts[i].opt; ++i) {
            if (strlen(opts[i].opt) == n && memcmp(opts[i].opt, tok, n) == 0) {
                nargs = opts[i].nargs;
                variable = opts[i].opt[1] == 'o' || opts[i].opt[1] == 's' || opts[i].opt[1] == 't';
                variable = variable && n == 2;
                break;
            }
        }
        if (nargs < 0) nargs = 0; /* unknown option: assume a flag */
        int is_bm = n == 3 && memcmp(tok, "-bm", 3) == 0;
        for (int a = 0; a < nargs; ++a) {
            p = text_skip_space(p);
            if (!*p) break;
            if (is_bm && bm) { /* the bump multiplier: kept when it is a finite number */
                char *end;
                double x = strtod(p, &end);
                if (end != p && isfinite(x) && fabs(x) <= 1e6) *bm = x;
            }
            if (variable && a > 0) { /* optional numbers */
                char *end;
                (void)strtod(p, &end);
                if (end == p || (*end && !text_is_space(*end))) break;
            }
            while (*p && !text_is_space(*p)) ++p;
        }
    }
    text_rtrim(p);
    return *p ? p : NULL;
}

static int parse_mtl_line(mtlreader *r, char *p, mtl_entry **cur) {
    p = text_skip_space(p);
    if (!*p || *p == '#') return 0;
    char *kw = p;
    while (*p && !text_is_space(*p)) ++p;
    size_t n = (size_t)(p - kw);
#define KW(s) (n == sizeof(s) - 1 && memcmp(kw, s, n) == 0)
    mtl_lib *lib = r->lib;
    if (KW("newmtl")) {
        p = text_skip_space(p);
        text_rtrim(p);
        if (!*p) return mtlfail(r, "newmtl without a name");
        if (lib->n == lib->cap) {
            size_t cap = lib->cap ? lib->cap * 2 : 16;
            mtl_entry *e = realloc(lib->entries, cap * sizeof *e);
            if (!e) return mtlfail(r, "out of memory");
            lib->entries = e;
            lib->cap = cap;
        }
        mtl_entry *e = &lib->entries[lib->n];
        memset(e, 0, sizeof *e);
        e->name = text_dup(p);
        if (!e->name) return mtlfail(r, "out of memory");
        e->kd = v3s(0.8f);
        e->ni = 1.0f;
        e->d = 1.0f;
        e->illum = 2;
        e->line = r->line > (size_t)INT32_MAX ? INT32_MAX : (int)r->line;
        lib->n++;
        *cur = e;
        return 0;
    }
    mtl_entry *e = *cur;
    if (!e) {
        note_unknown(lib, kw, n); /* statements before the first newmtl */
        return 0;
    }
    double x;
    if (KW("Kd") || KW("Ks") || KW("Ke") || KW("Ka") || KW("Tf")) {
        char *q = text_skip_space(p);
        if (strncmp(q, "spectral", 8) == 0 || strncmp(q, "xyz", 3) == 0) {
            note_unknown(lib, kw, n);
            return 0;
        }
        char what[3] = {kw[0], kw[1], 0};
        vec3 c;
        if (read_color(r, p, what, &c)) return -1;
        if (KW("Kd")) {
            e->kd = c;
            e->has |= MTL_HAS_KD;
        } else if (KW("Ks")) {
            e->ks = c;
            e->has |= MTL_HAS_KS;
        } else if (KW("Ke")) {
            e->ke = c;
            e->has |= MTL_HAS_KE;
        }
        return 0; /* Ka, Tf: accepted, unused */
    }
    if (KW("Ni")) {
        if (read_number(r, &p, "Ni", 0.0, 1000.0, &x)) return -1;
        e->ni = (float)x;
        e->has |= MTL_HAS_NI;
        return 0;
    }
    if (KW("Ns")) {
        if (read_number(r, &p, "Ns", 0.0, 1e6, &x)) return -1;
        e->ns = (float)x;
        e->has |= MTL_HAS_NS;
        return 0;
    }
    if (KW("d")) {
        char *q = text_skip_space(p);
        if (strncmp(q, "-halo", 5) == 0) p = q + 5;
        if (read_number(r, &p, "d", 0.0, 1.0, &x)) return -1;
        e->d = (float)x;
        e->has |= MTL_HAS_D;
        return 0;
    }
    if (KW("Tr")) { /* transparency = 1 - d; used only when there is no d */
        if (read_number(r, &p, "Tr", 0.0, 1.0, &x)) return -1;
        if (!(e->has & MTL_HAS_D)) e->d = (float)(1.0 - x);
        e->has |= MTL_HAS_TR;
        return 0;
    }
    if (KW("illum")) {
        if (read_number(r, &p, "illum", 0.0, 10.0, &x)) return -1;
        if (x != floor(x)) return mtlfail(r, "illum: %g is not a whole number", x);
        e->illum = (int)x;
        e->has |= MTL_HAS_ILLUM;
        return 0;
    }
    if (KW("Pr") || KW("Pm")) {
        if (read_number(r, &p, KW("Pr") ? "Pr" : "Pm", 0.0, 1.0, &x)) return -1;
        if (KW("Pr")) {
            e->pr = (float)x;
            e->has |= MTL_HAS_PR;
        } else {
            e->pm = (float)x;
            e->has |= MTL_HAS_PM;
        }
        return 0;
    }
    if (KW("bump") || KW("map_bump") || KW("map_Bump") || KW("norm") || KW("map_Kn") || KW("map_d")) {
        int is_norm = KW("norm") || KW("map_Kn"), is_d = KW("map_d");
        double bm = 1.0;
        char *f = map_filename(p, is_norm || is_d ? NULL : &bm);
        if (!f) return mtlfail(r, "%.*s without a file name", (int)n, kw);
        char *d = text_dup(f);
        if (!d) return mtlfail(r, "out of memory");
        char **slot = is_norm ? &e->map_norm : is_d ? &e->map_d : &e->map_bump;
        free(*slot);
        *slot = d;
        if (!is_norm && !is_d) e->bump_scale = (float)bm;
        return 0;
    }
    if (KW("map_Kd")) {
        char *f = map_filename(p, NULL);
        if (!f) return mtlfail(r, "map_Kd without a file name");
        char *d = text_dup(f);
        if (!d) return mtlfail(r, "out of memory");
        free(e->map_kd);
        e->map_kd = d;
        return 0;
    }
    if (KW("map_Pr")) {
        e->map_pr = 1;
        return 0;
    }
#undef KW
    note_unknown(lib, kw, n);
    return 0;
}

int mtl_parse(mtl_lib *lib, const char *text, size_t size, const char *name, char *err, size_t errlen) {
    mtlreader r = {lib, name, 0, err, errlen};
    char *buf = malloc(size + 1);
    if (!buf) return mtlfail(&r, "out of memory");
    if (size) memcpy(buf, text, size);
    buf[size] = '\0';
    int rc = 0;
    mtl_entry *cur = NULL;
    char *line = buf, *end = buf + size;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl) nl = end;
        *nl = '\0';
        r.line++;
        if (memchr(line, '\0', (size_t)(nl - line))) {
            rc = mtlfail(&r, "NUL byte in the file (not a text MTL?)");
            break;
        }
        /* cur points into lib->entries; only newmtl grows it, and it resets cur */
        if (parse_mtl_line(&r, line, &cur)) {
            rc = -1;
            break;
        }
        line = nl + 1;
    }
    free(buf);
    return rc;
}

void mtl_lib_free(mtl_lib *lib) {
    for (size_t i = 0; i < lib->n; ++i) {
        free(lib->entries[i].name);
        free(lib->entries[i].map_kd);
        free(lib->entries[i].map_bump);
        free(lib->entries[i].map_norm);
        free(lib->entries[i].map_d);
    }
    free(lib->entries);
    memset(lib, 0, sizeof *lib);
}

const mtl_entry *mtl_find(const mtl_lib *lib, const char *name) {
    for (size_t i = lib->n; i-- > 0;)
        if (strcmp(lib->entries[i].name, name) == 0) return &lib->entries[i];
    return NULL;
}

static float clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static vec3 clamp01v(vec3 c) { return v3(clamp01(c.x), clamp01(c.y), clamp01(c.z)); }
static float maxc(vec3 c) { return fmaxf(c.x, fmaxf(c.y, c.z)); }

material_kind mtl_to_params(const mtl_entry *e, material_params *out) {
    material_kind kind = MAT_DIFFUSE;
    vec3 kd = clamp01v(e->kd), ks = clamp01v(e->ks);
    material_params p = material_params_default(MAT_DIFFUSE);
    p.rgb = kd;
    p.emission = v3(fmaxf(e->ke.x, 0.0f), fmaxf(e->ke.y, 0.0f), fmaxf(e->ke.z, 0.0f));
    int il = e->illum;
    int transparent = (e->has & (MTL_HAS_D | MTL_HAS_TR)) && e->d < 1.0f && e->ni > 1.0f;
    if (il == 4 || il == 6 || il == 7 || transparent) {
        kind = MAT_DIELECTRIC;
        p.ior = e->ni > 1.0f ? fminf(e->ni, 10.0f) : 1.5f;
        p.rgb = v3s(1.0f); /* clear glass: Kd/Tf of these files are not tints */
    } else if ((e->has & MTL_HAS_PM) && e->pm > 0.5f) {
        p.rgb = kd; /* PBR base colour is the conductor's F0 */
        kind = e->pr > 0.0f ? MAT_CONDUCTOR : MAT_MIRROR;
        p.roughness = e->pr; /* GGX alpha = Pr^2: the float product is exact in double */
    } else if ((il == 3 || il == 5) && maxc(ks) > 0.0f) {
        p.rgb = ks;
        kind = (e->has & MTL_HAS_PR) && e->pr > 0.0f ? MAT_CONDUCTOR : MAT_MIRROR;
        p.roughness = e->pr;
    }
    *out = p;
    return kind;
}
