/* Basic Wavefront OBJ reader: v, vt, vn and f (v, v/vt, v//vn, v/vt/vn, negative indices),
 * n-gons fan-triangulated, CRLF tolerated. Grouping and material statements (g, o, s, usemtl,
 * mtllib, ...) are ignored for now. Corners that share a (v, vt, vn) triple share one mesh
 * vertex. Errors name the file and line: "mesh.obj:12: problem". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OBJ_MAX_FILE (1LL << 30)
#define OBJ_MAX_VERTS (1u << 30)   /* mesh vertices/triangles must fit the kernel's 30-bit ids */
#define OBJ_MAX_COORD 1e15         /* beyond this a transformed float position overflows */

typedef struct objreader {
    const char *path;
    size_t line;
    char *err;
    size_t errlen;
    /* raw attribute lists, as the file defines them */
    vec3 *v; size_t nv, cap_v;
    vec2 *vt; size_t nvt, cap_vt;
    vec3 *vn; size_t nvn, cap_vn;
    /* mesh vertices: one per distinct (v, vt, vn) triple */
    vec3 *pos; vec3 *nrm; vec2 *uv; size_t nverts, cap_verts;
    int any_uv, any_nrm;
    /* dedup table: open addressing, key = triple, value = mesh vertex + 1 (0 = empty) */
    int64_t (*keys)[3]; uint32_t *vals; size_t cap_hash;
    uint32_t *idx; size_t nidx, cap_idx;
    uint32_t *face; size_t nface, cap_face;   /* current face's corners */
    size_t degenerate;
} objreader;

static int objfail(objreader *r, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->err && r->errlen) {
        if (r->line) snprintf(r->err, r->errlen, "%s:%zu: %s", r->path, r->line, msg);
        else snprintf(r->err, r->errlen, "%s: %s", r->path, msg);
        for (char *c = r->err; *c; ++c) /* one printable line, whatever the path holds */
            if ((unsigned char)*c < 32 || *c == 127) *c = '?';
    }
    return -1;
}

static int grow(void **arr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    if (n > SIZE_MAX / size) return -1;
    void *p = realloc(*arr, n * size);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}
#define GROW(arr, cap, need) grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static char *skip_space(char *p) {
    while (is_space(*p)) ++p;
    return p;
}

/* Reads `n` required and up to `extra` optional finite numbers; anything after is ignored
 * (e.g. vertex colours after "v x y z"). */
static int read_floats(objreader *r, char **pp, double *out, int n, int extra, const char *what) {
    char *p = *pp;
    for (int i = 0; i < n + extra; ++i) {
        p = skip_space(p);
        if (!*p) {
            if (i < n) return objfail(r, "%s needs %d numbers, found %d", what, n, i);
            break;
        }
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || (*end && !is_space(*end))) {
            size_t len = strcspn(p, " \t\r");
            return objfail(r, "%s: \"%.*s\" is not a number", what, (int)(len > 32 ? 32 : len), p);
        }
        if (!isfinite(x) || fabs(x) > OBJ_MAX_COORD) return objfail(r, "%s: %.*s is not a finite coordinate", what, (int)(end - p > 32 ? 32 : end - p), p);
        out[i] = x;
        p = end;
    }
    *pp = p;
    return 0;
}

/* OBJ index (1-based, or negative = relative to the end so far) -> 0-based, or -1 with error. */
static long resolve_index(objreader *r, const char *tok, long i, size_t count, const char *what) {
    if (i == 0) return objfail(r, "face corner \"%s\": %s index 0 is invalid (indices start at 1)", tok, what);
    long k = i > 0 ? i - 1 : (long)count + i;
    if (k < 0 || (size_t)k >= count)
        return objfail(r, "face corner \"%s\": %s index %ld out of range (%zu defined so far)", tok, what, i, count);
    return k;
}

static uint64_t hash3(const int64_t k[3]) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 3; ++i) {
        h ^= (uint64_t)k[i];
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

static int rehash(objreader *r, size_t cap) {
    int64_t (*keys)[3] = malloc(cap * sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < r->cap_hash; ++i) {
        if (!r->vals[i]) continue;
        size_t j = (size_t)hash3(r->keys[i]) & (cap - 1);
        while (vals[j]) j = (j + 1) & (cap - 1);
        memcpy(keys[j], r->keys[i], sizeof keys[j]);
        vals[j] = r->vals[i];
    }
    free(r->keys);
    free(r->vals);
    r->keys = keys;
    r->vals = vals;
    r->cap_hash = cap;
    return 0;
}

/* Mesh vertex for a (v, vt, vn) triple (vt/vn = -1 when absent), created on first use. */
static long corner_vertex(objreader *r, long vi, long ti, long ni) {
    if (2 * (r->nverts + 1) > r->cap_hash && rehash(r, r->cap_hash ? 2 * r->cap_hash : 1024))
        return objfail(r, "out of memory");
    int64_t key[3] = {vi, ti, ni};
    size_t j = (size_t)hash3(key) & (r->cap_hash - 1);
    while (r->vals[j]) {
        if (memcmp(r->keys[j], key, sizeof key) == 0) return (long)(r->vals[j] - 1);
        j = (j + 1) & (r->cap_hash - 1);
    }
    if (r->nverts >= OBJ_MAX_VERTS) return objfail(r, "too many vertices (at most %u)", OBJ_MAX_VERTS);
    size_t need = r->nverts + 1;
    if (need > r->cap_verts) {
        size_t cap = r->cap_verts;
        if (GROW(r->pos, cap, need)) return objfail(r, "out of memory");
        size_t c2 = r->cap_verts, c3 = r->cap_verts;
        if (GROW(r->nrm, c2, need) || GROW(r->uv, c3, need)) return objfail(r, "out of memory");
        r->cap_verts = cap;
    }
    r->pos[r->nverts] = r->v[vi];
    r->uv[r->nverts] = ti >= 0 ? r->vt[ti] : v2(0.0f, 0.0f);
    r->nrm[r->nverts] = ni >= 0 ? r->vn[ni] : v3s(0.0f); /* zero normal = none, per scene_add_mesh */
    r->any_uv |= ti >= 0;
    r->any_nrm |= ni >= 0;
    memcpy(r->keys[j], key, sizeof key);
    r->vals[j] = (uint32_t)(r->nverts + 1);
    return (long)r->nverts++;
}

/* One "v/vt/vn" token (NUL-terminated) -> mesh vertex index, or -1. */
static long parse_corner(objreader *r, const char *tok) {
    long ids[3] = {0, 0, 0};
    int present[3] = {0, 0, 0};
    const char *p = tok;
    for (int part = 0; part < 3; ++part) {
        if (*p && *p != '/') {
            char *end;
            errno = 0;
            long x = strtol(p, &end, 10);
            if (end == p || errno == ERANGE || (*end && *end != '/'))
                return objfail(r, "face corner \"%.32s\" is not of the form v, v/vt, v//vn or v/vt/vn", tok);
            ids[part] = x;
            present[part] = 1;
            p = end;
        }
        if (*p == '/') {
            ++p;
            if (part == 2) return objfail(r, "face corner \"%.32s\" has too many '/'", tok);
        } else {
            break;
        }
    }
    if (*p) return objfail(r, "face corner \"%.32s\" is not of the form v, v/vt, v//vn or v/vt/vn", tok);
    if (!present[0]) return objfail(r, "face corner \"%.32s\" has no vertex index", tok);
    long vi = resolve_index(r, tok, ids[0], r->nv, "vertex");
    if (vi < 0) return -1;
    long ti = -1, ni = -1;
    if (present[1] && (ti = resolve_index(r, tok, ids[1], r->nvt, "texture coordinate")) < 0) return -1;
    if (present[2] && (ni = resolve_index(r, tok, ids[2], r->nvn, "normal")) < 0) return -1;
    return corner_vertex(r, vi, ti, ni);
}

static int parse_face(objreader *r, char *p) {
    r->nface = 0;
    for (;;) {
        p = skip_space(p);
        if (!*p) break;
        char *tok = p;
        while (*p && !is_space(*p)) ++p;
        char saved = *p;
        *p = '\0';
        long vtx = parse_corner(r, tok);
        *p = saved;
        if (vtx < 0) return -1;
        if (GROW(r->face, r->cap_face, r->nface + 1)) return objfail(r, "out of memory");
        r->face[r->nface++] = (uint32_t)vtx;
    }
    if (r->nface < 3) return objfail(r, "face has %zu corners, needs at least 3", r->nface);
    /* fan triangulation; zero-area triangles would only cost BVH work and divide by zero */
    for (size_t k = 1; k + 1 < r->nface; ++k) {
        uint32_t a = r->face[0], b = r->face[k], c = r->face[k + 1];
        vec3 pa = r->pos[a], pb = r->pos[b], pc = r->pos[c];
        double e1[3] = {(double)pb.x - pa.x, (double)pb.y - pa.y, (double)pb.z - pa.z};
        double e2[3] = {(double)pc.x - pa.x, (double)pc.y - pa.y, (double)pc.z - pa.z};
        double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
        if (!(cx * cx + cy * cy + cz * cz > 0.0)) {
            r->degenerate++;
            continue;
        }
        if (r->nidx / 3 >= OBJ_MAX_VERTS) return objfail(r, "too many triangles (at most %u)", OBJ_MAX_VERTS);
        if (GROW(r->idx, r->cap_idx, r->nidx + 3)) return objfail(r, "out of memory");
        r->idx[r->nidx++] = a;
        r->idx[r->nidx++] = b;
        r->idx[r->nidx++] = c;
    }
    return 0;
}

static int parse_line(objreader *r, char *p) {
    p = skip_space(p);
    if (!*p || *p == '#') return 0;
    char *kw = p;
    while (*p && !is_space(*p)) ++p;
    size_t n = (size_t)(p - kw);
    double x[3] = {0, 0, 0};
    if (n == 1 && kw[0] == 'v') {
        if (read_floats(r, &p, x, 3, 0, "vertex")) return -1;
        if (GROW(r->v, r->cap_v, r->nv + 1)) return objfail(r, "out of memory");
        r->v[r->nv++] = v3((float)x[0], (float)x[1], (float)x[2]);
    } else if (n == 2 && kw[0] == 'v' && kw[1] == 't') {
        if (read_floats(r, &p, x, 1, 2, "texture coordinate")) return -1;
        if (GROW(r->vt, r->cap_vt, r->nvt + 1)) return objfail(r, "out of memory");
        r->vt[r->nvt++] = v2((float)x[0], (float)x[1]);
    } else if (n == 2 && kw[0] == 'v' && kw[1] == 'n') {
        if (read_floats(r, &p, x, 3, 0, "normal")) return -1;
        if (GROW(r->vn, r->cap_vn, r->nvn + 1)) return objfail(r, "out of memory");
        r->vn[r->nvn++] = v3((float)x[0], (float)x[1], (float)x[2]);
    } else if (n == 1 && kw[0] == 'f') {
        return parse_face(r, p);
    }
    /* everything else (g, o, s, usemtl, mtllib, l, p, vp, ...) is ignored for now */
    return 0;
}

static void objreader_free(objreader *r) {
    free(r->v); free(r->vt); free(r->vn);
    free(r->pos); free(r->nrm); free(r->uv);
    free(r->keys); free(r->vals);
    free(r->idx); free(r->face);
}

int scene_load_obj(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    objreader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.err = err;
    r.errlen = errlen;

    /* stat before opening: opening a FIFO blocks, and a device (/dev/zero) never ends */
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        return objfail(&r, "cannot open: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) return objfail(&r, "not a regular file");
    if ((long long)st.st_size > OBJ_MAX_FILE) return objfail(&r, "file too large (%lld bytes)", (long long)st.st_size);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return objfail(&r, "cannot open: %s", strerror(e));
    }
    size_t size = (size_t)st.st_size;
    char *text = malloc(size + 1);
    if (!text) {
        fclose(f);
        return objfail(&r, "out of memory");
    }
    size_t got = fread(text, 1, size, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || got != size) {
        free(text);
        return objfail(&r, "read error");
    }
    text[size] = '\0';

    int rc = 0;
    char *line = text, *end = text + size;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl) nl = end;
        *nl = '\0'; /* one line at a time: strtod must not run into the next line */
        r.line++;
        if (memchr(line, '\0', (size_t)(nl - line))) {
            rc = objfail(&r, "NUL byte in the file (not a text OBJ?)");
            break;
        }
        if ((rc = parse_line(&r, line))) break;
        line = nl + 1;
    }
    free(text);
    if (!rc) {
        r.line = 0;
        if (r.nidx == 0) {
            rc = r.degenerate ? objfail(&r, "all %zu triangles are degenerate (zero area)", r.degenerate)
                              : objfail(&r, "no faces");
        } else if (scene_add_mesh(s, r.pos, r.any_nrm ? r.nrm : NULL, r.any_uv ? r.uv : NULL, r.nverts, r.idx, NULL,
                                  r.nidx / 3, to_world, material)) {
            rc = objfail(&r, "could not add the mesh (singular transform or out of memory)");
        }
    }
    objreader_free(&r);
    return rc ? -1 : 0;
}
