/* PLY reader: ascii 1.0, binary_little_endian 1.0 and binary_big_endian 1.0.
 *
 * Reads the whole file into memory once, parses the header, checks every element count against
 * the bytes the file actually holds (so no count can make it allocate more than a small multiple
 * of the file size), then walks the body once. From the 'vertex' element it takes x,y,z
 * (required), nx,ny,nz (all three or none) and u,v / s,t / texture_u,texture_v / texture_s,
 * texture_t; from the 'face' element the vertex_indices (or vertex_index) list, fan-triangulating
 * polygons. Every other property and element is skipped, lists included.
 *
 * Errors are one line: "PATH: problem", "PATH: header line N: problem" or
 * "PATH: element 'face' record N: problem" (records count from 0, like PLY vertex indices).
 * Faces with fewer than 3 indices and zero-area triangles are skipped and reported in a single
 * warning line (scene_warn: the loader's warning sink). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"
#include "util/array.h"
#include "util/file.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int scene_load_ply(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);
int scene_load_ply_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                          char *err, size_t errlen);

#define PLY_MAX_FILE     (1LL << 31)
#define PLY_MAX_MESH     (1u << 30) /* vertices/triangles must fit the kernel's 30-bit ids */
#define PLY_MAX_COORD    1e15       /* beyond this a transformed float position overflows */
#define PLY_MAX_LINE     4096       /* longest header line */
#define PLY_MAX_ELEMENTS 1024
#define PLY_MAX_PROPS    1024 /* per element */
#define PLY_NAME         64

enum { FMT_NONE = 0, FMT_ASCII, FMT_LE, FMT_BE };
enum { T_I8 = 1, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 };
static const size_t type_size[] = {0, 1, 1, 2, 2, 4, 4, 4, 8};
enum { R_NONE = 0, R_X, R_Y, R_Z, R_NX, R_NY, R_NZ, R_U, R_V, R_INDICES, R_COUNT };
enum { E_OTHER = 0, E_VERTEX, E_FACE };

typedef struct plyprop {
    int type;       /* item type for lists */
    int count_type; /* 0 = scalar property */
    int role;
    char name[PLY_NAME];
} plyprop;

typedef struct plyelem {
    char name[PLY_NAME];
    uint64_t count;
    int kind;
    plyprop *props;
    size_t nprops, cap_props;
} plyelem;

typedef struct plyreader {
    const char *path;
    char *err;
    size_t errlen;
    char *buf; /* whole file, NUL-terminated at buf[size] */
    size_t size;
    int format;
    size_t header_line; /* nonzero while parsing the header */
    plyelem *elems;
    size_t nelems, cap_elems;
    const plyelem *cur; /* element being read, for messages */
    uint64_t rec;
    /* mesh */
    uint64_t nverts;
    vec3 *pos, *nrm;
    vec2 *uv;
    uint32_t *idx;
    size_t ntris, cap_tris;
    size_t short_faces, degenerate;
    /* current face: fan state */
    uint32_t f0, fprev;
    uint64_t fn;
} plyreader;

static int plyfail(plyreader *r, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->err && r->errlen) {
        if (r->cur)
            snprintf(r->err, r->errlen, "%s: element '%s' record %llu: %s", r->path, r->cur->name,
                     (unsigned long long)r->rec, msg);
        else if (r->header_line)
            snprintf(r->err, r->errlen, "%s: header line %zu: %s", r->path, r->header_line, msg);
        else
            snprintf(r->err, r->errlen, "%s: %s", r->path, msg);
        text_one_line(r->err);
    }
    return -1;
}

/* ---- header ------------------------------------------------------------------------------- */
static int parse_type(const char *t) {
    static const struct {
        const char *name;
        int type;
    } names[] = {
        {"char", T_I8},   {"int8", T_I8},     {"uchar", T_U8},   {"uint8", T_U8},
        {"short", T_I16}, {"int16", T_I16},   {"ushort", T_U16}, {"uint16", T_U16},
        {"int", T_I32},   {"int32", T_I32},   {"uint", T_U32},   {"uint32", T_U32},
        {"float", T_F32}, {"float32", T_F32}, {"double", T_F64}, {"float64", T_F64},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(t, names[i].name) == 0) return names[i].type;
    return 0;
}

static void copy_name(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n >= PLY_NAME) n = PLY_NAME - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int header_line(plyreader *r, char *line, int *done) {
    char *tok[8];
    int nt = 0;
    for (char *p = line; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v') ++p;
        if (!*p) break;
        if (nt == 8) return plyfail(r, "too many words");
        tok[nt++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\f' && *p != '\v') ++p;
        if (*p) *p++ = '\0';
    }
    if (nt == 0) return 0; /* blank line: tolerated */
    const char *kw = tok[0];
    if (strcmp(kw, "comment") == 0 || strcmp(kw, "obj_info") == 0) return 0;
    if (strcmp(kw, "format") == 0) {
        if (nt != 3) return plyfail(r, "expected 'format TYPE 1.0'");
        if (r->format) return plyfail(r, "second 'format' line");
        if (strcmp(tok[1], "ascii") == 0)
            r->format = FMT_ASCII;
        else if (strcmp(tok[1], "binary_little_endian") == 0)
            r->format = FMT_LE;
        else if (strcmp(tok[1], "binary_big_endian") == 0)
            r->format = FMT_BE;
        else
            return plyfail(r, "unknown format '%.32s'", tok[1]);
        if (strcmp(tok[2], "1.0") != 0 && strcmp(tok[2], "1") != 0)
            return plyfail(r, "unsupported format version '%.32s' (only 1.0)", tok[2]);
        return 0;
    }
    if (strcmp(kw, "element") == 0) {
        if (nt != 3) return plyfail(r, "expected 'element NAME COUNT'");
        if (r->nelems >= PLY_MAX_ELEMENTS) return plyfail(r, "too many elements (at most %d)", PLY_MAX_ELEMENTS);
        const char *c = tok[2];
        if (!*c || strspn(c, "0123456789") != strlen(c) || strlen(c) > 18)
            return plyfail(r, "element '%.32s': count '%.32s' is not a non-negative integer", tok[1], c);
        if (GROW(r->elems, r->cap_elems, r->nelems + 1)) return plyfail(r, "out of memory");
        plyelem *e = &r->elems[r->nelems];
        memset(e, 0, sizeof *e);
        copy_name(e->name, tok[1]);
        e->count = strtoull(c, NULL, 10);
        e->kind = strcmp(tok[1], "vertex") == 0 ? E_VERTEX : strcmp(tok[1], "face") == 0 ? E_FACE : E_OTHER;
        for (size_t i = 0; i < r->nelems; ++i)
            if (e->kind != E_OTHER && r->elems[i].kind == e->kind) return plyfail(r, "second '%s' element", e->name);
        r->nelems++;
        return 0;
    }
    if (strcmp(kw, "property") == 0) {
        if (!r->nelems) return plyfail(r, "property before any element");
        plyelem *e = &r->elems[r->nelems - 1];
        if (e->nprops >= PLY_MAX_PROPS) return plyfail(r, "too many properties (at most %d)", PLY_MAX_PROPS);
        plyprop p;
        memset(&p, 0, sizeof p);
        if (nt >= 2 && strcmp(tok[1], "list") == 0) {
            if (nt != 5) return plyfail(r, "expected 'property list COUNTTYPE ITEMTYPE NAME'");
            p.count_type = parse_type(tok[2]);
            p.type = parse_type(tok[3]);
            if (!p.count_type) return plyfail(r, "unknown list count type '%.32s'", tok[2]);
            if (p.count_type == T_F32 || p.count_type == T_F64)
                return plyfail(r, "list count type '%.32s' is not an integer type", tok[2]);
            if (!p.type) return plyfail(r, "unknown list item type '%.32s'", tok[3]);
            copy_name(p.name, tok[4]);
        } else {
            if (nt != 3) return plyfail(r, "expected 'property TYPE NAME'");
            p.type = parse_type(tok[1]);
            if (!p.type) return plyfail(r, "unknown property type '%.32s'", tok[1]);
            copy_name(p.name, tok[2]);
        }
        if (GROW(e->props, e->cap_props, e->nprops + 1)) return plyfail(r, "out of memory");
        e->props[e->nprops++] = p;
        return 0;
    }
    if (strcmp(kw, "end_header") == 0) {
        if (nt != 1) return plyfail(r, "unexpected words after end_header");
        *done = 1;
        return 0;
    }
    if (strcmp(kw, "ply") == 0) return plyfail(r, "second 'ply' line");
    return plyfail(r, "unknown header keyword '%.32s'", kw);
}

static plyprop *find_prop(plyelem *e, const char *name) {
    for (size_t i = 0; i < e->nprops; ++i)
        if (strcmp(e->props[i].name, name) == 0) return &e->props[i];
    return NULL;
}

/* Parses the header; returns the body offset in *body. */
static int parse_header(plyreader *r, size_t *body) {
    const char *b = r->buf, *end = r->buf + r->size;
    if (r->size < 4 || memcmp(b, "ply", 3) != 0 || !(b[3] == '\n' || (b[3] == '\r' && r->size > 4 && b[4] == '\n')))
        return plyfail(r, "not a PLY file (the first line is not 'ply')");
    const char *p = b + (b[3] == '\n' ? 4 : 5);
    char line[PLY_MAX_LINE + 1];
    int done = 0;
    r->header_line = 1;
    while (!done) {
        r->header_line++;
        size_t avail = (size_t)(end - p);
        size_t lim = avail < PLY_MAX_LINE + 1 ? avail : PLY_MAX_LINE + 1;
        const char *nl = memchr(p, '\n', lim);
        if (!nl) {
            if (avail < PLY_MAX_LINE + 1) return plyfail(r, "missing end_header (the file ends in the header)");
            return plyfail(r, "header line too long (over %d bytes)", PLY_MAX_LINE);
        }
        size_t n = (size_t)(nl - p);
        if (memchr(p, '\0', n)) return plyfail(r, "NUL byte in the header");
        memcpy(line, p, n);
        if (n && line[n - 1] == '\r') --n;
        line[n] = '\0';
        if (header_line(r, line, &done)) return -1;
        p = nl + 1;
    }
    r->header_line = 0;
    *body = (size_t)(p - b);
    if (!r->format) return plyfail(r, "no 'format' line in the header");

    /* roles */
    plyelem *ve = NULL, *fe = NULL;
    for (size_t i = 0; i < r->nelems; ++i) {
        if (r->elems[i].kind == E_VERTEX) ve = &r->elems[i];
        if (r->elems[i].kind == E_FACE) fe = &r->elems[i];
    }
    if (!ve) return plyfail(r, "no 'vertex' element");
    if (!fe) return plyfail(r, "no 'face' element (point clouds are not supported)");
    static const char *const xyz[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; ++k) {
        plyprop *q = find_prop(ve, xyz[k]);
        if (!q) return plyfail(r, "element 'vertex' has no property '%s'", xyz[k]);
        if (q->count_type) return plyfail(r, "vertex property '%s' is a list", xyz[k]);
        q->role = R_X + k;
    }
    plyprop *nx = find_prop(ve, "nx"), *ny = find_prop(ve, "ny"), *nz = find_prop(ve, "nz");
    if (nx && ny && nz && !nx->count_type && !ny->count_type && !nz->count_type) {
        nx->role = R_NX;
        ny->role = R_NY;
        nz->role = R_NZ;
    }
    static const char *const uvnames[4][2] = {
        {"u", "v"}, {"s", "t"}, {"texture_u", "texture_v"}, {"texture_s", "texture_t"}};
    for (int k = 0; k < 4; ++k) {
        plyprop *u = find_prop(ve, uvnames[k][0]), *v = find_prop(ve, uvnames[k][1]);
        if (u && v && !u->count_type && !v->count_type) {
            u->role = R_U;
            v->role = R_V;
            break;
        }
    }
    plyprop *vi = find_prop(fe, "vertex_indices");
    if (!vi) vi = find_prop(fe, "vertex_index");
    if (!vi) return plyfail(r, "element 'face' has no 'vertex_indices' list");
    if (!vi->count_type) return plyfail(r, "face property '%s' is not a list", vi->name);
    vi->role = R_INDICES;
    if (ve->count > PLY_MAX_MESH)
        return plyfail(r, "too many vertices (%llu; at most %u)", (unsigned long long)ve->count, PLY_MAX_MESH);

    /* every record takes at least this many bytes: no count may promise more than the file holds */
    uint64_t bodysize = (uint64_t)(r->size - *body) + (r->format == FMT_ASCII ? 1 : 0), used = 0;
    for (size_t i = 0; i < r->nelems; ++i) {
        plyelem *e = &r->elems[i];
        uint64_t minrec = 0;
        for (size_t j = 0; j < e->nprops; ++j)
            minrec += r->format == FMT_ASCII
                          ? 2
                          : type_size[e->props[j].count_type ? e->props[j].count_type : e->props[j].type];
        if (minrec == 0) continue; /* no properties: nothing to read */
        if (e->count > (bodysize - used) / minrec)
            return plyfail(r, "element '%s' count %llu is more than the file can hold (%llu bytes of data)", e->name,
                           (unsigned long long)e->count, (unsigned long long)(r->size - *body));
        used += e->count * minrec;
    }
    return 0;
}

/* ---- body: shared per-record handling ------------------------------------------------------ */
static int emit_corner(plyreader *r, double x) {
    if (!(x >= 0.0 && x < (double)r->nverts)) {
        if (x != x) return plyfail(r, "vertex index is NaN");
        return plyfail(r, "vertex index %.17g out of range (%llu vertices)", x, (unsigned long long)r->nverts);
    }
    if (x != floor(x)) return plyfail(r, "vertex index %.17g is not an integer", x);
    uint32_t v = (uint32_t)x;
    if (r->fn == 0)
        r->f0 = v;
    else if (r->fn >= 2) {
        if (r->ntris >= PLY_MAX_MESH) return plyfail(r, "too many triangles (at most %u)", PLY_MAX_MESH);
        if (GROW(r->idx, r->cap_tris, 3 * (r->ntris + 1))) return plyfail(r, "out of memory");
        uint32_t *t = r->idx + 3 * r->ntris++;
        t[0] = r->f0;
        t[1] = r->fprev;
        t[2] = v;
    }
    r->fprev = v;
    r->fn++;
    return 0;
}

static int store_vertex(plyreader *r, const double *val) {
    size_t i = (size_t)r->rec;
    for (int k = 0; k < 3; ++k)
        if (!(fabs(val[R_X + k]) <= PLY_MAX_COORD))
            return plyfail(r, "position (%g, %g, %g) is NaN, infinite or out of range", val[R_X], val[R_Y], val[R_Z]);
    r->pos[i] = v3((float)val[R_X], (float)val[R_Y], (float)val[R_Z]);
    if (r->nrm) {
        float n[3];
        int ok = 1;
        for (int k = 0; k < 3; ++k) {
            double x = val[R_NX + k];
            ok &= fabs(x) <= FLT_MAX;
            n[k] = ok ? (float)x : 0.0f;
        }
        r->nrm[i] = ok ? v3(n[0], n[1], n[2]) : v3s(0.0f); /* zero = no normal, per scene_add_mesh */
    }
    if (r->uv) {
        if (!(fabs(val[R_U]) <= PLY_MAX_COORD && fabs(val[R_V]) <= PLY_MAX_COORD))
            return plyfail(r, "texture coordinate (%g, %g) is NaN, infinite or out of range", val[R_U], val[R_V]);
        r->uv[i] = v2((float)val[R_U], (float)val[R_V]);
    }
    return 0;
}

static void end_face(plyreader *r) {
    if (r->fn < 3) r->short_faces++;
}

/* ---- binary body --------------------------------------------------------------------------- */
/* the bytes in host order, read as a property of type T */
#define PLY_LOAD(T)                                                                                                    \
    do {                                                                                                               \
        T v;                                                                                                           \
        memcpy(&v, b, sizeof v);                                                                                       \
        return (double)v;                                                                                              \
    } while (0)
static double get_scalar(const unsigned char *p, int type, int be) {
    unsigned char b[8];
    size_t n = type_size[type];
    if (be)
        for (size_t i = 0; i < n; ++i) b[i] = p[n - 1 - i];
    else
        memcpy(b, p, n);
    switch (type) {
    case T_I8: PLY_LOAD(int8_t);
    case T_U8: PLY_LOAD(uint8_t);
    case T_I16: PLY_LOAD(int16_t);
    case T_U16: PLY_LOAD(uint16_t);
    case T_I32: PLY_LOAD(int32_t);
    case T_U32: PLY_LOAD(uint32_t);
    case T_F32: PLY_LOAD(float);
    default: PLY_LOAD(double);
    }
#undef PLY_LOAD
}

static int read_binary(plyreader *r, size_t body) {
    const unsigned char *p = (const unsigned char *)r->buf + body, *end = (const unsigned char *)r->buf + r->size;
    int be = r->format == FMT_BE;
    double val[R_COUNT];
    memset(val, 0, sizeof val);
    for (size_t ei = 0; ei < r->nelems; ++ei) {
        const plyelem *e = &r->elems[ei];
        if (!e->nprops) continue;
        r->cur = e;
        /* fixed-size records of an element we do not read: skip them in one step */
        if (e->kind == E_OTHER) {
            size_t recsize = 0;
            int fixed = 1;
            for (size_t j = 0; j < e->nprops; ++j) {
                fixed &= !e->props[j].count_type;
                recsize += type_size[e->props[j].type];
            }
            if (fixed) {
                if (e->count > (uint64_t)(end - p) / recsize) {
                    r->rec = (uint64_t)(end - p) / recsize;
                    return plyfail(r, "unexpected end of file");
                }
                p += (size_t)e->count * recsize;
                continue;
            }
        }
        for (r->rec = 0; r->rec < e->count; ++r->rec) {
            r->fn = 0;
            for (size_t j = 0; j < e->nprops; ++j) {
                const plyprop *q = &e->props[j];
                size_t isz = type_size[q->type];
                if (!q->count_type) {
                    if ((size_t)(end - p) < isz) return plyfail(r, "unexpected end of file");
                    if (q->role) val[q->role] = get_scalar(p, q->type, be);
                    p += isz;
                    continue;
                }
                size_t csz = type_size[q->count_type];
                if ((size_t)(end - p) < csz) return plyfail(r, "unexpected end of file");
                double c = get_scalar(p, q->count_type, be);
                p += csz;
                if (c < 0) return plyfail(r, "list '%s' has a negative count (%.0f)", q->name, c);
                size_t n = (size_t)c;
                if (n > (size_t)(end - p) / isz)
                    return plyfail(r, "list '%s' count %zu is more than the rest of the file holds", q->name, n);
                if (q->role == R_INDICES) {
                    for (size_t k = 0; k < n; ++k)
                        if (emit_corner(r, get_scalar(p + k * isz, q->type, be))) return -1;
                    end_face(r);
                }
                p += n * isz;
            }
            if (e->kind == E_VERTEX && store_vertex(r, val)) return -1;
        }
    }
    r->cur = NULL;
    return 0;
}

/* ---- ASCII body ------------------------------------------------------------------------------ */
static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static int is_sep(char c) { return is_blank(c) || c == '\n'; }

/* Next value on the current line: *pp is left after it. 1 = found, 0 = end of line/file. */
static int next_token(plyreader *r, char **pp, char **tok) {
    char *p = *pp, *end = r->buf + r->size;
    while (p < end && is_blank(*p)) ++p;
    if (p >= end || *p == '\n') {
        *pp = p;
        return 0;
    }
    *tok = p;
    while (p < end && !is_sep(*p)) ++p;
    *pp = p;
    return 1;
}

static int parse_number(plyreader *r, char *tok, char *tokend, double *out, const char *what) {
    /* fast path for plain decimals of at most 15 significant digits ("-0.0378297", "12"): the
     * mantissa and 10^k are exact doubles, so one division rounds exactly as strtod does */
    static const double pow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *q = tok;
    int neg = *q == '-';
    if (*q == '-' || *q == '+') ++q;
    uint64_t m = 0;
    int digits = 0, frac = 0;
    for (; *q >= '0' && *q <= '9' && digits < 16; ++q, ++digits) m = m * 10 + (uint64_t)(*q - '0');
    if (*q == '.')
        for (++q; *q >= '0' && *q <= '9' && digits < 16; ++q, ++digits, ++frac) m = m * 10 + (uint64_t)(*q - '0');
    if (q == tokend && digits > 0 && digits <= 15) {
        double x = (double)m / pow10[frac];
        *out = neg ? -x : x;
        return 0;
    }
    char *e;
    double x = strtod(tok, &e);
    if (e != tokend) {
        size_t len = (size_t)(tokend - tok);
        return plyfail(r, "%s: '%.*s' is not a number", what, (int)(len > 32 ? 32 : len), tok);
    }
    *out = x;
    return 0;
}

static int read_ascii(plyreader *r, size_t body) {
    char *p = r->buf + body, *end = r->buf + r->size;
    double val[R_COUNT];
    memset(val, 0, sizeof val);
    for (size_t ei = 0; ei < r->nelems; ++ei) {
        const plyelem *e = &r->elems[ei];
        if (!e->nprops) continue;
        r->cur = e;
        for (r->rec = 0; r->rec < e->count; ++r->rec) {
            while (p < end && is_sep(*p)) ++p; /* blank lines between records are tolerated */
            if (p >= end) return plyfail(r, "unexpected end of file");
            r->fn = 0;
            char *tok;
            for (size_t j = 0; j < e->nprops; ++j) {
                const plyprop *q = &e->props[j];
                if (!next_token(r, &p, &tok))
                    return plyfail(r, "too few values on the line (property '%s' missing)", q->name);
                if (!q->count_type) {
                    if (q->role && parse_number(r, tok, p, &val[q->role], q->name)) return -1;
                    continue;
                }
                double c = 0.0;
                if (parse_number(r, tok, p, &c, q->name)) return -1;
                if (!(c >= 0.0 && c <= 1e18 && c == floor(c)))
                    return plyfail(r, "list '%s' count '%.32s' is not a non-negative integer", q->name, tok);
                uint64_t n = (uint64_t)c;
                for (uint64_t k = 0; k < n; ++k) {
                    if (!next_token(r, &p, &tok))
                        return plyfail(r, "list '%s' promises %llu items, the line has %llu", q->name,
                                       (unsigned long long)n, (unsigned long long)k);
                    if (q->role == R_INDICES) {
                        double x = 0.0;
                        if (parse_number(r, tok, p, &x, q->name) || emit_corner(r, x)) return -1;
                    }
                }
                if (q->role == R_INDICES) end_face(r);
            }
            if (next_token(r, &p, &tok)) return plyfail(r, "more values on the line than the element has properties");
            if (e->kind == E_VERTEX && store_vertex(r, val)) return -1;
        }
    }
    r->cur = NULL;
    return 0;
}

/* ---- driver ---------------------------------------------------------------------------------- */
static void plyreader_free(plyreader *r) {
    for (size_t i = 0; i < r->nelems; ++i) free(r->elems[i].props);
    free(r->elems);
    free(r->pos);
    free(r->nrm);
    free(r->uv);
    free(r->idx);
}

/* buf holds size bytes plus a NUL at buf[size]; it is modified and not freed here. */
static int load_buffer(plyreader *r, scene *s, xform to_world, int material) {
    size_t body = 0;
    if (parse_header(r, &body)) return -1;
    const plyelem *ve = NULL;
    for (size_t i = 0; i < r->nelems; ++i)
        if (r->elems[i].kind == E_VERTEX) ve = &r->elems[i];
    r->nverts = ve->count;
    int has_nrm = 0, has_uv = 0;
    for (size_t j = 0; j < ve->nprops; ++j) {
        has_nrm |= ve->props[j].role == R_NX;
        has_uv |= ve->props[j].role == R_U;
    }
    size_t nv = (size_t)r->nverts ? (size_t)r->nverts : 1;
    r->pos = malloc(nv * sizeof(vec3));
    if (has_nrm) r->nrm = malloc(nv * sizeof(vec3));
    if (has_uv) r->uv = malloc(nv * sizeof(vec2));
    if (!r->pos || (has_nrm && !r->nrm) || (has_uv && !r->uv)) return plyfail(r, "out of memory");

    if ((r->format == FMT_ASCII ? read_ascii(r, body) : read_binary(r, body))) return -1;

    /* drop zero-area triangles: they only cost BVH work and divide by zero in light sampling */
    size_t kept = 0;
    for (size_t t = 0; t < r->ntris; ++t) {
        const uint32_t *v = r->idx + 3 * t;
        vec3 a = r->pos[v[0]], b = r->pos[v[1]], c = r->pos[v[2]];
        double e1[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
        double e2[3] = {(double)c.x - a.x, (double)c.y - a.y, (double)c.z - a.z};
        double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
        if (!(cx * cx + cy * cy + cz * cz > 0.0)) {
            r->degenerate++;
            continue;
        }
        if (kept != t) memmove(r->idx + 3 * kept, v, 3 * sizeof(uint32_t));
        kept++;
    }
    r->ntris = kept;
    if (r->ntris == 0) {
        if (r->degenerate) return plyfail(r, "all %zu triangles are degenerate (zero area)", r->degenerate);
        if (r->short_faces) return plyfail(r, "no triangles (%zu faces with fewer than 3 vertices)", r->short_faces);
        return plyfail(r, "no faces");
    }
    if (scene_add_mesh(s, r->pos, r->nrm, r->uv, (size_t)r->nverts, r->idx, NULL, r->ntris, to_world, material))
        return plyfail(r, "could not add the mesh (singular transform or out of memory)");
    if (r->short_faces || r->degenerate) {
        char msg[300];
        int n = 0;
        if (r->short_faces) n = snprintf(msg, sizeof msg, "%zu faces with fewer than 3 vertices", r->short_faces);
        if (r->degenerate)
            snprintf(msg + n, sizeof msg - (size_t)n, "%s%zu degenerate triangles", n ? ", " : "", r->degenerate);
        scene_warn(s, "%s: skipped %s", r->path, msg);
    }
    return 0;
}

int scene_load_ply_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                          char *err, size_t errlen) {
    plyreader r;
    memset(&r, 0, sizeof r);
    r.path = name ? name : "(memory)";
    r.err = err;
    r.errlen = errlen;
    if (size > (size_t)PLY_MAX_FILE) return plyfail(&r, "file too large (%zu bytes)", size);
    r.buf = malloc(size + 1);
    if (!r.buf) return plyfail(&r, "out of memory");
    if (size) memcpy(r.buf, data, size);
    r.buf[size] = '\0';
    r.size = size;
    int rc = load_buffer(&r, s, to_world, material);
    free(r.buf);
    plyreader_free(&r);
    return rc ? -1 : 0;
}

int scene_load_ply(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    plyreader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.err = err;
    r.errlen = errlen;
    size_t size;
    char why[256];
    r.buf = file_read_all(path, PLY_MAX_FILE, &size, why, sizeof why);
    if (!r.buf) return plyfail(&r, "%s", why);
    r.size = size;
    int rc = load_buffer(&r, s, to_world, material);
    free(r.buf);
    plyreader_free(&r);
    return rc ? -1 : 0;
}
