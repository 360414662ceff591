/* Wavefront OBJ reader.
 *
 * Statements: v, vt, vn, f (corners v, v/vt, v//vn, v/vt/vn; negative = relative indices),
 * mtllib (one or more files, relative to the OBJ file), usemtl; g, o, s are accepted (grouping
 * does not change the mesh; smoothing follows the angle threshold below). n-gons are
 * fan-triangulated, CRLF and a final line without a newline are fine. Anything else (l, p, vp,
 * curves, ...) is counted and reported in one warning line (scene_warn).
 *
 * The file is read into memory once and parsed in place; triangles are kept as attribute-index
 * corners until the end, then:
 *   - corners without a normal get a smooth normal: the area-weighted sum of the normals of the
 *     triangles around that position whose normal is within the angle threshold (60 degrees) of
 *     the corner's own triangle (so hard edges stay hard);
 *   - corners with the same (position, uv, normal) become one mesh vertex (vertices are split
 *     where the normals differ);
 *   - usemtl names are resolved against the MTL files (material < 0), or every face gets the
 *     caller's material (material >= 0: the MTL files are not read at all).
 * Zero-area triangles are skipped and counted in one warning line. Errors are one line,
 * "mesh.obj:12: problem" (or "mesh.mtl:3: problem" for the material file). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/mtl.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"
#include "image/image.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define OBJ_MAX_FILE          (1LL << 30)
#define MTL_MAX_FILE          (64LL << 20)
#define OBJ_MAX_VERTS         (1u << 30) /* mesh vertices/triangles must fit the kernel's 30-bit ids */
#define OBJ_MAX_COORD         1e15       /* beyond this a transformed float position overflows */
#define OBJ_SMOOTH_MAX_DEGREE 1024       /* positions shared by more triangles get face normals */
#define OBJ_DEFAULT_MATERIAL  "obj:default"

typedef struct corner {
    int32_t v, t, n;
} corner; /* t, n = -1 when absent */

typedef struct objreader {
    const char *path;     /* for messages */
    const char *base_dir; /* directory of the OBJ file (mtllib paths), NULL = cwd */
    size_t line;
    char *err;
    size_t errlen;
    obj_options *opt;
    int want_materials;
    /* raw attribute lists, as the file defines them */
    vec3 *v;
    size_t nv, cap_v;
    vec2 *vt;
    size_t nvt, cap_vt;
    vec3 *vn;
    size_t nvn, cap_vn;
    /* triangles as corners, with their usemtl slot (-1 = none) */
    corner *tc;
    size_t ntri, cap_tc;
    int32_t *tslot;
    size_t cap_tslot;
    corner *face;
    size_t cap_face;
    int any_vt, any_missing_n;
    /* usemtl names (slots) and mtllib paths (resolved) */
    char **slots;
    size_t nslots, cap_slots;
    int32_t cur_slot;
    char **libs;
    size_t nlibs, cap_libs;
    size_t degenerate, unknown;
    char unknown_kw[120];
    int over_budget; /* a texture broke the scene's image memory budget: the load fails (r->err says) */
    const scene *s;  /* warnings go to its sink */
} objreader;

static int objfail(objreader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    file_error_v(r->err, r->errlen, r->path, r->line, fmt, ap);
    va_end(ap);
    return -1;
}

static void objwarn(objreader *r, const char *fmt, ...) {
    if (r->opt->quiet) return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    scene_warn(r->s, "%s", msg);
}

/* ---- files and paths ---------------------------------------------------------------------- */

/* dir + "/" + rel (rel with '\' turned into '/'; absolute rel kept). Caller frees. */
static char *join_path(const char *dir, const char *rel) {
    size_t nr = strlen(rel);
    int abs = rel[0] == '/' || rel[0] == '\\';
    size_t nd = (!abs && dir && *dir) ? strlen(dir) : 0;
    char *out = malloc(nd + nr + 2);
    if (!out) return NULL;
    size_t k = 0;
    if (nd) {
        memcpy(out, dir, nd);
        k = nd;
        if (out[k - 1] != '/') out[k++] = '/';
    }
    for (size_t i = 0; i < nr; ++i) out[k++] = rel[i] == '\\' ? '/' : rel[i];
    out[k] = '\0';
    return out;
}

/* Directory part of path ("." -> NULL for a bare name). Caller frees. */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/* If `path` does not exist, looks for each missing component case-insensitively (MTL files
 * written on Windows often disagree with the on-disk case). Returns a new string or NULL. */
static char *find_case_insensitive(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return text_dup(path);
    size_t n = strlen(path);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t k = 0;
    const char *p = path;
    if (*p == '/') {
        out[k++] = '/';
        while (*p == '/') ++p;
    }
    while (*p) {
        const char *e = strchr(p, '/');
        size_t m = e ? (size_t)(e - p) : strlen(p);
        char comp[256];
        if (m == 0 || m >= sizeof comp) { /* "//" or absurd name: copy as is */
            memcpy(out + k, p, m);
            k += m;
        } else {
            memcpy(comp, p, m);
            comp[m] = '\0';
            out[k] = '\0';
            char *probe = malloc(k + m + 2);
            if (!probe) {
                free(out);
                return NULL;
            }
            memcpy(probe, out, k);
            memcpy(probe + k, comp, m + 1);
            int exists = stat(probe, &st) == 0;
            free(probe);
            if (!exists) {
                DIR *d = opendir(k ? out : ".");
                if (d) {
                    struct dirent *de;
                    while ((de = readdir(d))) {
                        if (strlen(de->d_name) == m && strcasecmp(de->d_name, comp) == 0) {
                            memcpy(comp, de->d_name, m);
                            break;
                        }
                    }
                    closedir(d);
                }
            }
            memcpy(out + k, comp, m);
            k += m;
        }
        p += m;
        if (*p == '/') {
            out[k++] = '/';
            while (*p == '/') ++p;
        }
    }
    out[k] = '\0';
    if (stat(out, &st) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- parsing -------------------------------------------------------------------------------- */

/* Reads `n` required and up to `extra` optional finite numbers; anything after is ignored
 * (e.g. vertex colours after "v x y z"). */
static int read_floats(objreader *r, char **pp, double *out, int n, int extra, const char *what) {
    char *p = *pp;
    for (int i = 0; i < n + extra; ++i) {
        p = text_skip_space(p);
        if (!*p || *p == '#') {
            if (i < n) return objfail(r, "%s needs %d numbers, found %d", what, n, i);
            break;
        }
        char *end;
        double x = strtod(p, &end);
        if (end == p || (*end && !text_is_space(*end))) {
            size_t len = strcspn(p, " \t\r");
            return objfail(r, "%s: \"%.*s\" is not a number", what, (int)(len > 32 ? 32 : len), p);
        }
        if (!isfinite(x) || fabs(x) > OBJ_MAX_COORD)
            return objfail(r, "%s: %.*s is not a finite coordinate", what, (int)(end - p > 32 ? 32 : end - p), p);
        out[i] = x;
        p = end;
    }
    *pp = p;
    return 0;
}

/* OBJ index (1-based, or negative = relative to the end so far) -> 0-based, or -1 with error. */
static long resolve_index(objreader *r, const char *tok, long i, size_t count, const char *what) {
    if (i == 0) return objfail(r, "face corner \"%.32s\": %s index 0 is invalid (indices start at 1)", tok, what);
    long k = i > 0 ? i - 1 : (long)count + i;
    if (k < 0 || (size_t)k >= count)
        return objfail(r, "face corner \"%.32s\": %s index %ld out of range (%zu defined so far)", tok, what, i, count);
    return k;
}

/* Decimal integer with optional sign; at most 10 digits (so no overflow). */
static const char *parse_int(const char *p, long *out) {
    int neg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    long x = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        if (++digits > 10) return NULL;
        x = x * 10 + (*p++ - '0');
    }
    if (!digits) return NULL;
    *out = neg ? -x : x;
    return p;
}

/* One "v/vt/vn" token (NUL-terminated) -> corner, or -1. */
static int parse_corner(objreader *r, const char *tok, corner *c) {
    long ids[3] = {0, 0, 0};
    int present[3] = {0, 0, 0};
    const char *p = tok;
    for (int part = 0; part < 3; ++part) {
        if (*p && *p != '/') {
            const char *end = parse_int(p, &ids[part]);
            if (!end || (*end && *end != '/'))
                return objfail(r, "face corner \"%.32s\" is not of the form v, v/vt, v//vn or v/vt/vn", tok);
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
    c->v = (int32_t)vi;
    c->t = (int32_t)ti;
    c->n = (int32_t)ni;
    return 0;
}

static int parse_face(objreader *r, char *p) {
    size_t nface = 0;
    for (;;) {
        p = text_skip_space(p);
        if (!*p || *p == '#') break;
        char *tok = p;
        while (*p && !text_is_space(*p)) ++p;
        char saved = *p;
        *p = '\0';
        if (GROW(r->face, r->cap_face, nface + 1)) return objfail(r, "out of memory");
        int rc = parse_corner(r, tok, &r->face[nface]);
        *p = saved;
        if (rc) return -1;
        nface++;
    }
    if (nface < 3) return objfail(r, "face has %zu corners, needs at least 3", nface);
    /* fan triangulation; zero-area triangles would only cost BVH work and divide by zero */
    for (size_t k = 1; k + 1 < nface; ++k) {
        corner a = r->face[0], b = r->face[k], c = r->face[k + 1];
        vec3 pa = r->v[a.v], pb = r->v[b.v], pc = r->v[c.v];
        double e1[3] = {(double)pb.x - pa.x, (double)pb.y - pa.y, (double)pb.z - pa.z};
        double e2[3] = {(double)pc.x - pa.x, (double)pc.y - pa.y, (double)pc.z - pa.z};
        double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
        if (!(cx * cx + cy * cy + cz * cz > 0.0)) {
            r->degenerate++;
            continue;
        }
        if (r->ntri >= OBJ_MAX_VERTS) return objfail(r, "too many triangles (at most %u)", OBJ_MAX_VERTS);
        if (GROW(r->tc, r->cap_tc, 3 * (r->ntri + 1)) || GROW(r->tslot, r->cap_tslot, r->ntri + 1))
            return objfail(r, "out of memory");
        corner *t = &r->tc[3 * r->ntri];
        t[0] = a;
        t[1] = b;
        t[2] = c;
        r->any_vt |= (a.t >= 0) | (b.t >= 0) | (c.t >= 0);
        r->any_missing_n |= (a.n < 0) | (b.n < 0) | (c.n < 0);
        r->tslot[r->ntri++] = r->cur_slot;
    }
    return 0;
}

static void note_unknown(objreader *r, const char *kw, size_t n) {
    r->unknown++;
    text_keyword_set_add(r->unknown_kw, sizeof r->unknown_kw, kw, n);
}

/* Whether path (dir joined with what the file named) leaves the folder dir (NULL: the working
 * directory) by its text: an absolute name, or a ".." component. Symbolic links inside the folder
 * are the user's own arrangement and are followed. */
static int outside_folder(const char *dir, const char *path) {
    size_t n = dir && *dir ? strlen(dir) : 0;
    const char *rel = path;
    if (n) {
        if (strncmp(path, dir, n) != 0 || (path[n] != '/' && dir[n - 1] != '/')) return 1;
        rel = path + n + (path[n] == '/');
    }
    if (rel[0] == '/') return 1;
    for (const char *c = rel; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 2 && c[0] == '.' && c[1] == '.') return 1;
        c += len + (c[len] == '/');
    }
    return 0;
}

static int add_mtllibs(objreader *r, char *p) {
    for (;;) {
        p = text_skip_space(p);
        if (!*p || *p == '#') break;
        char *tok = p;
        while (*p && !text_is_space(*p)) ++p;
        char saved = *p;
        *p = '\0';
        char *full = join_path(r->base_dir, tok);
        *p = saved;
        if (!full) return objfail(r, "out of memory");
        int dup = 0;
        for (size_t i = 0; i < r->nlibs && !dup; ++i) dup = strcmp(r->libs[i], full) == 0;
        if (dup || GROW(r->libs, r->cap_libs, r->nlibs + 1)) {
            free(full);
            if (!dup) return objfail(r, "out of memory");
            continue;
        }
        r->libs[r->nlibs++] = full;
    }
    return 0;
}

static int use_material(objreader *r, char *p) {
    p = text_skip_space(p);
    text_rtrim(p);
    if (!*p) return objfail(r, "usemtl without a material name");
    for (size_t i = 0; i < r->nslots; ++i) {
        if (strcmp(r->slots[i], p) == 0) {
            r->cur_slot = (int32_t)i;
            return 0;
        }
    }
    if (r->nslots >= (size_t)INT32_MAX || GROW(r->slots, r->cap_slots, r->nslots + 1))
        return objfail(r, "out of memory");
    char *d = text_dup(p);
    if (!d) return objfail(r, "out of memory");
    r->slots[r->nslots] = d;
    r->cur_slot = (int32_t)r->nslots++;
    return 0;
}

static int parse_line(objreader *r, char *p) {
    p = text_skip_space(p);
    if (!*p || *p == '#') return 0;
    char *kw = p;
    while (*p && !text_is_space(*p)) ++p;
    size_t n = (size_t)(p - kw);
    double x[3] = {0, 0, 0};
    if (n == 1 && kw[0] == 'v') {
        if (read_floats(r, &p, x, 3, 0, "vertex")) return -1;
        if (r->nv >= OBJ_MAX_VERTS) return objfail(r, "too many vertices (at most %u)", OBJ_MAX_VERTS);
        if (GROW(r->v, r->cap_v, r->nv + 1)) return objfail(r, "out of memory");
        r->v[r->nv++] = v3((float)x[0], (float)x[1], (float)x[2]);
    } else if (n == 2 && kw[0] == 'v' && kw[1] == 't') {
        if (read_floats(r, &p, x, 1, 2, "texture coordinate")) return -1;
        if (r->nvt >= OBJ_MAX_VERTS) return objfail(r, "too many texture coordinates (at most %u)", OBJ_MAX_VERTS);
        if (GROW(r->vt, r->cap_vt, r->nvt + 1)) return objfail(r, "out of memory");
        r->vt[r->nvt++] = v2((float)x[0], (float)x[1]);
    } else if (n == 2 && kw[0] == 'v' && kw[1] == 'n') {
        if (read_floats(r, &p, x, 3, 0, "normal")) return -1;
        if (r->nvn >= OBJ_MAX_VERTS) return objfail(r, "too many normals (at most %u)", OBJ_MAX_VERTS);
        if (GROW(r->vn, r->cap_vn, r->nvn + 1)) return objfail(r, "out of memory");
        r->vn[r->nvn++] = v3((float)x[0], (float)x[1], (float)x[2]);
    } else if (n == 1 && kw[0] == 'f') {
        return parse_face(r, p);
    } else if (n == 6 && memcmp(kw, "usemtl", 6) == 0) {
        if (r->want_materials) return use_material(r, p);
    } else if (n == 6 && memcmp(kw, "mtllib", 6) == 0) {
        if (r->want_materials) return add_mtllibs(r, p);
    } else if (n == 1 && (kw[0] == 'g' || kw[0] == 'o' || kw[0] == 's')) {
        /* groups, objects and smoothing groups: accepted */
    } else {
        note_unknown(r, kw, n);
    }
    return 0;
}

/* ---- normals and vertices ------------------------------------------------------------------- */

/* Per-corner normals: the file's, or generated (see the top of the file). */
static int corner_normals(objreader *r, vec3 *cn, float cos_thresh) {
    size_t nt = r->ntri;
    double(*fn)[3] = NULL; /* area-weighted face normal (twice the area) */
    vec3 *un = NULL;       /* unit face normal */
    uint32_t *start = NULL, *adj = NULL;
    int rc = -1;
    for (size_t i = 0; i < 3 * nt; ++i)
        if (r->tc[i].n >= 0) cn[i] = r->vn[r->tc[i].n];
    if (!r->any_missing_n) return 0;
    fn = malloc(nt * sizeof *fn);
    un = malloc(nt * sizeof *un);
    start = calloc(r->nv + 1, sizeof *start);
    adj = malloc(3 * nt * sizeof *adj);
    if (!fn || !un || !start || !adj) goto done;
    for (size_t t = 0; t < nt; ++t) {
        vec3 a = r->v[r->tc[3 * t].v], b = r->v[r->tc[3 * t + 1].v], c = r->v[r->tc[3 * t + 2].v];
        double e1[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
        double e2[3] = {(double)c.x - a.x, (double)c.y - a.y, (double)c.z - a.z};
        fn[t][0] = e1[1] * e2[2] - e1[2] * e2[1];
        fn[t][1] = e1[2] * e2[0] - e1[0] * e2[2];
        fn[t][2] = e1[0] * e2[1] - e1[1] * e2[0];
        double len = sqrt(fn[t][0] * fn[t][0] + fn[t][1] * fn[t][1] + fn[t][2] * fn[t][2]);
        if (len > 0.0 && isfinite(len))
            un[t] = v3((float)(fn[t][0] / len), (float)(fn[t][1] / len), (float)(fn[t][2] / len));
        else
            un[t] = v3s(0.0f);
    }
    /* position -> triangles (CSR) */
    for (size_t i = 0; i < 3 * nt; ++i) start[r->tc[i].v + 1]++;
    for (size_t v = 0; v < r->nv; ++v) start[v + 1] += start[v];
    for (size_t i = 0; i < 3 * nt; ++i) {
        uint32_t v = (uint32_t)r->tc[i].v;
        adj[start[v]++] = (uint32_t)(i / 3);
    }
    for (size_t v = r->nv; v > 0; --v) start[v] = start[v - 1];
    start[0] = 0;
    for (size_t i = 0; i < 3 * nt; ++i) {
        if (r->tc[i].n >= 0) continue;
        size_t t = i / 3;
        uint32_t v = (uint32_t)r->tc[i].v;
        uint32_t b = start[v], e = start[v + 1];
        vec3 own = un[t];
        if (e - b > OBJ_SMOOTH_MAX_DEGREE) {
            cn[i] = own;
            continue;
        }
        double s[3] = {0, 0, 0};
        for (uint32_t k = b; k < e; ++k) {
            uint32_t u = adj[k];
            if (u != t && vdot(own, un[u]) < cos_thresh) continue;
            s[0] += fn[u][0];
            s[1] += fn[u][1];
            s[2] += fn[u][2];
        }
        double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
        cn[i] = (len > 0.0 && isfinite(len)) ? v3((float)(s[0] / len), (float)(s[1] / len), (float)(s[2] / len)) : own;
    }
    rc = 0;
done:
    free(fn);
    free(un);
    free(start);
    free(adj);
    return rc;
}

typedef struct vkey {
    uint32_t v, t, nx, ny, nz;
} vkey;

static uint64_t hash_key(const vkey *k) {
    uint64_t h = 1469598103934665603ULL;
    const uint32_t w[5] = {k->v, k->t, k->nx, k->ny, k->nz};
    for (int i = 0; i < 5; ++i) {
        h ^= w[i];
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

static uint32_t fbits(float f) {
    if (f == 0.0f) f = 0.0f; /* -0 == +0 */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Distinct (position, uv, normal) corners -> mesh vertices and triangle indices. */
static int build_vertices(objreader *r, const vec3 *cn, vec3 **opos, vec3 **onrm, vec2 **ouv, size_t *onv,
                          uint32_t **oidx) {
    size_t nc = 3 * r->ntri;
    size_t cap = 1024;
    while (cap < 2 * nc) cap *= 2;
    vkey *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    vec3 *pos = malloc(nc * sizeof *pos), *nrm = malloc(nc * sizeof *nrm);
    vec2 *uv = malloc(nc * sizeof *uv);
    uint32_t *idx = malloc(nc * sizeof *idx);
    if (!keys || !vals || !pos || !nrm || !uv || !idx) {
        free(keys);
        free(vals);
        free(pos);
        free(nrm);
        free(uv);
        free(idx);
        return -1;
    }
    size_t nv = 0;
    for (size_t i = 0; i < nc; ++i) {
        const corner *c = &r->tc[i];
        vkey k = {(uint32_t)c->v, (uint32_t)c->t, fbits(cn[i].x), fbits(cn[i].y), fbits(cn[i].z)};
        size_t j = (size_t)hash_key(&k) & (cap - 1);
        while (vals[j] && memcmp(&keys[j], &k, sizeof k) != 0) j = (j + 1) & (cap - 1);
        if (!vals[j]) {
            keys[j] = k;
            vals[j] = (uint32_t)(nv + 1);
            pos[nv] = r->v[c->v];
            nrm[nv] = cn[i];
            uv[nv] = c->t >= 0 ? r->vt[c->t] : v2(0.0f, 0.0f);
            nv++;
        }
        idx[i] = vals[j] - 1;
    }
    free(keys);
    free(vals);
    *opos = pos;
    *onrm = nrm;
    *ouv = uv;
    *onv = nv;
    *oidx = idx;
    return 0;
}

/* ---- materials ------------------------------------------------------------------------------- */

typedef struct texcache {
    char *path;
    int index;
    int data; /* loaded as data (height, normal and opacity maps: 8-bit codes linear), not colour */
} texcache;   /* index -1: failed */

static int default_material(scene *s) {
    int m = scene_find_material(s, OBJ_DEFAULT_MATERIAL);
    if (m >= 0) return m;
    material d = material_default(MAT_DIFFUSE); /* grey 0.8 */
    return scene_add_material(s, OBJ_DEFAULT_MATERIAL, d);
}

/* Image texture for an MTL map (path relative to the MTL's directory), loaded once per file per
 * OBJ load; -1 (after one warning) when it is missing or unreadable. */
static int load_texture(objreader *r, scene *s, texcache **cache, size_t *ncache, size_t *capcache, const char *mtl_dir,
                        const char *map, int data) {
    char *full = join_path(mtl_dir, map);
    if (!full) return -1;
    for (size_t i = 0; i < *ncache; ++i) {
        if ((*cache)[i].data == data && strcmp((*cache)[i].path, full) == 0) {
            free(full);
            return (*cache)[i].index;
        }
    }
    int index = -1;
    char *found = find_case_insensitive(full);
    struct stat st;
    if (found && (stat(found, &st) != 0 || !S_ISREG(st.st_mode))) { /* a FIFO or device would block */
        free(found);
        found = NULL;
    }
    if (!found) {
        objwarn(r, "%s: texture %s not found (material uses its Kd colour)", r->path, full);
        r->opt->warn_missing_texture++;
    } else {
        image img = {0, 0, NULL};
        char ierr[512];
        int w8 = 0, h8 = 0;
        /* 8-bit sRGB stays 8-bit, decoded straight into the scene's store, as in the JSON loader */
        int is8 = image_load_srgb8(found, scene_reserve_texels8, s, &w8, &h8, ierr, sizeof ierr);
        if (is8 == 1) {
            index = scene_add_image_texture8(s, w8, h8, data ? TEXEL8_LINEAR : TEXEL8_SRGB);
        } else if (is8 < 0 || image_load(&img, found, ierr, sizeof ierr)) {
            objwarn(r, "%s: texture not loaded, material uses its Kd colour: %s", r->path, ierr);
            r->opt->warn_missing_texture++;
        } else {
            image_value_report vr; /* as the JSON loader: said once per file, replaced by 0 */
            image_sanitize(&img, &vr);
            if (vr.nonfinite || vr.negative)
                objwarn(r, "%s: texture %s: %zu non-finite and %zu negative values replaced by 0", r->path, found,
                        vr.nonfinite, vr.negative);
            if (vr.huge)
                objwarn(r, "%s: texture %s: %zu values above %g (largest %g): a broken file?", r->path, found, vr.huge,
                        (double)IMAGE_HUGE_VALUE, (double)vr.largest);
            index = scene_take_image_texture(s, &img);
            if (index == -2) {
                objwarn(r, "%s: texture %s: too many texels in the scene (uses Kd)", r->path, found);
                index = -1;
            }
        }
        /* one image memory budget per scene, whatever file named the texture (JSON, MTL, glTF) */
        if (index >= 0 && scene_textures_memory_check(s, found, ierr, sizeof ierr)) {
            if (r->err && r->errlen) snprintf(r->err, r->errlen, "%s", ierr);
            r->over_budget = 1;
            index = -1;
        }
        free(found);
    }
    if (!GROW(*cache, *capcache, *ncache + 1)) {
        (*cache)[*ncache].path = full;
        (*cache)[*ncache].data = data;
        (*cache)[(*ncache)++].index = index;
    } else {
        free(full);
    }
    return index;
}

/* usemtl slots -> scene materials. Scene material names are "mtl:<mtl path>:<name>", so a file
 * loaded twice (instancing) shares its materials and textures. */
static int resolve_materials(objreader *r, scene *s, int32_t *slot_mat) {
    mtl_lib *libs = calloc(r->nlibs ? r->nlibs : 1, sizeof *libs);
    texcache *cache = NULL;
    size_t ncache = 0, capcache = 0;
    int rc = -1, warned_pr = 0;
    if (!libs) return objfail(r, "out of memory");
    for (size_t i = 0; i < r->nlibs; ++i) {
        char why[200];
        size_t size = 0;
        char *text = NULL;
        if (r->opt->mtl_text) {
            text = malloc(r->opt->mtl_size + 1);
            if (!text) {
                objfail(r, "out of memory");
                goto done;
            }
            if (r->opt->mtl_size) memcpy(text, r->opt->mtl_text, r->opt->mtl_size);
            size = r->opt->mtl_size;
        } else if (outside_folder(r->base_dir, r->libs[i])) {
            /* an absolute path, or one through "..": it may name any file on the system, whose
             * content a message would repeat; not read */
            objwarn(r,
                    "%s: material library %s is outside the model's folder: not read (its materials become "
                    "the default grey)",
                    r->path, r->libs[i]);
            continue;
        } else {
            text = file_read_all(r->libs[i], MTL_MAX_FILE, &size, why, sizeof why);
            if (!text) {
                /* a lone OBJ without its MTL still loads: faces get the default material */
                char *alt = find_case_insensitive(r->libs[i]);
                if (alt) text = file_read_all(alt, MTL_MAX_FILE, &size, why, sizeof why);
                free(alt);
            }
            if (!text) {
                objwarn(r, "%s: material library %s: %s (its materials become the default grey)", r->path, r->libs[i],
                        why);
                continue;
            }
        }
        char merr[512];
        int prc = mtl_parse(&libs[i], text, size, r->libs[i], merr, sizeof merr);
        free(text);
        if (prc) {
            if (r->err && r->errlen) snprintf(r->err, r->errlen, "%s", merr);
            goto done;
        }
        if (libs[i].unknown) {
            objwarn(r, "%s: ignored %zu unsupported statement%s (%s)", r->libs[i], libs[i].unknown,
                    libs[i].unknown == 1 ? "" : "s", libs[i].unknown_kw);
            r->opt->warn_unknown += libs[i].unknown;
        }
    }
    for (size_t k = 0; k < r->nslots; ++k) {
        const mtl_entry *e = NULL;
        size_t li = 0;
        for (size_t i = r->nlibs; i-- > 0 && !e;) /* a later mtllib overrides an earlier one */
            if ((e = mtl_find(&libs[i], r->slots[k]))) li = i;
        if (!e) {
            objwarn(r, "%s: material \"%.64s\" is not defined in any material library (default grey used)", r->path,
                    r->slots[k]);
            r->opt->warn_missing_material++;
            slot_mat[k] = -1;
            continue;
        }
        size_t nlen = strlen(r->libs[li]) + strlen(e->name) + 8;
        char *name = malloc(nlen);
        if (!name) {
            objfail(r, "out of memory");
            goto done;
        }
        snprintf(name, nlen, "mtl:%s:%s", r->libs[li], e->name);
        int m = scene_find_material(s, name);
        if (m < 0) {
            material_params mp;
            material_kind kind = mtl_to_params(e, &mp);
            if (e->map_kd &&
                (kind == MAT_DIFFUSE || kind == MAT_CONDUCTOR || ((e->has & MTL_HAS_PM) && e->pm > 0.5f))) {
                char *mdir = dir_of(r->libs[li]);
                mp.albedo_tex = load_texture(r, s, &cache, &ncache, &capcache, mdir, e->map_kd, 0);
                free(mdir);
            }
            /* normal or bump map (a normal map wins), and an opacity map as an alpha cut-out (glTF's
             * MASK path: no surface where d times the map is below 1/2); glass has neither */
            if ((e->map_norm || e->map_bump || e->map_d) && kind != MAT_DIELECTRIC) {
                char *mdir = dir_of(r->libs[li]);
                if (e->map_norm)
                    mp.normal_tex = load_texture(r, s, &cache, &ncache, &capcache, mdir, e->map_norm, 1);
                else if (e->map_bump) {
                    mp.bump_tex = load_texture(r, s, &cache, &ncache, &capcache, mdir, e->map_bump, 1);
                    mp.bump_scale = MTL_BUMP_UNIT * e->bump_scale;
                }
                if (e->map_d) {
                    mp.alpha_tex = load_texture(r, s, &cache, &ncache, &capcache, mdir, e->map_d, 1);
                    if (mp.alpha_tex >= 0) {
                        mp.opacity = (e->has & (MTL_HAS_D | MTL_HAS_TR)) ? e->d : 1.0;
                        mp.alpha_cutoff = 0.5;
                    }
                }
                free(mdir);
            }
            material mat = material_from_params(kind, &mp);
            if (e->map_pr && !warned_pr) {
                objwarn(r, "%s: map_Pr (roughness texture) is not supported; using Pr", r->libs[li]);
                warned_pr = 1;
            }
            m = scene_add_material(s, name, mat);
        }
        free(name);
        if (m < 0) {
            objfail(r, "out of memory");
            goto done;
        }
        slot_mat[k] = m;
    }
    if (!r->over_budget) rc = 0;
done:
    for (size_t i = 0; i < r->nlibs; ++i) mtl_lib_free(&libs[i]);
    free(libs);
    for (size_t i = 0; i < ncache; ++i) free(cache[i].path);
    free(cache);
    return rc;
}

/* ---- driver ---------------------------------------------------------------------------------- */

static void objreader_free(objreader *r) {
    free(r->v);
    free(r->vt);
    free(r->vn);
    free(r->tc);
    free(r->tslot);
    free(r->face);
    for (size_t i = 0; i < r->nslots; ++i) free(r->slots[i]);
    free(r->slots);
    for (size_t i = 0; i < r->nlibs; ++i) free(r->libs[i]);
    free(r->libs);
}

/* Parses text (NUL-terminated at text[size], modified in place) and adds the mesh. */
static int load_text(objreader *r, scene *s, char *text, size_t size, xform to_world, int material) {
    char *line = text, *end = text + size;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl) nl = end;
        *nl = '\0'; /* one line at a time: strtod must not run into the next line */
        r->line++;
        if (memchr(line, '\0', (size_t)(nl - line))) return objfail(r, "NUL byte in the file (not a text OBJ?)");
        if (parse_line(r, line)) return -1;
        line = nl + 1;
    }
    r->line = 0;
    if (r->ntri == 0)
        return r->degenerate ? objfail(r, "all %zu triangles are degenerate (zero area)", r->degenerate)
                             : objfail(r, "no faces");
    if (r->degenerate) {
        objwarn(r, "%s: skipped %zu degenerate (zero-area) triangle%s", r->path, r->degenerate,
                r->degenerate == 1 ? "" : "s");
        r->opt->warn_degenerate = r->degenerate;
    }
    if (r->unknown) {
        objwarn(r, "%s: ignored %zu unsupported statement%s (%s)", r->path, r->unknown, r->unknown == 1 ? "" : "s",
                r->unknown_kw);
        r->opt->warn_unknown += r->unknown;
    }
    int rc = -1;
    vec3 *cn = malloc(3 * r->ntri * sizeof *cn);
    int32_t *slot_mat = malloc((r->nslots ? r->nslots : 1) * sizeof *slot_mat);
    int *tri_mat = NULL;
    vec3 *pos = NULL, *nrm = NULL;
    vec2 *uv = NULL;
    uint32_t *idx = NULL;
    size_t nverts = 0;
    if (!cn || !slot_mat) {
        objfail(r, "out of memory");
        goto done;
    }
    float angle = r->opt->smooth_angle_deg > 0.0f ? r->opt->smooth_angle_deg : OBJ_SMOOTH_ANGLE_DEG;
    if (corner_normals(r, cn, cosf(angle * 3.14159265f / 180.0f))) {
        objfail(r, "out of memory");
        goto done;
    }
    if (build_vertices(r, cn, &pos, &nrm, &uv, &nverts, &idx)) {
        objfail(r, "out of memory");
        goto done;
    }
    if (material < 0) {
        if (resolve_materials(r, s, slot_mat)) goto done;
        int def = -1;
        tri_mat = malloc(r->ntri * sizeof *tri_mat);
        if (!tri_mat) {
            objfail(r, "out of memory");
            goto done;
        }
        for (size_t t = 0; t < r->ntri; ++t) {
            int32_t sl = r->tslot[t];
            int m = sl >= 0 ? slot_mat[sl] : -1;
            if (m < 0) {
                if (def < 0 && (def = default_material(s)) < 0) {
                    objfail(r, "out of memory");
                    goto done;
                }
                m = def;
            }
            tri_mat[t] = m;
        }
    }
    if (scene_add_mesh(s, pos, nrm, r->any_vt ? uv : NULL, nverts, idx, tri_mat, r->ntri, to_world,
                       material < 0 ? 0 : material)) {
        objfail(r, "could not add the mesh (singular transform or out of memory)");
        goto done;
    }
    rc = 0;
done:
    free(cn);
    free(slot_mat);
    free(tri_mat);
    free(pos);
    free(nrm);
    free(uv);
    free(idx);
    return rc;
}

int scene_load_obj_memory(scene *s, const char *data, size_t size, const char *name, const char *base_dir,
                          xform to_world, int material, obj_options *opt, char *err, size_t errlen) {
    obj_options defaults;
    memset(&defaults, 0, sizeof defaults);
    objreader r;
    memset(&r, 0, sizeof r);
    r.path = name ? name : "(memory)";
    r.base_dir = base_dir;
    r.err = err;
    r.errlen = errlen;
    r.opt = opt ? opt : &defaults;
    r.want_materials = material < 0;
    r.cur_slot = -1;
    r.s = s;
    char *text = malloc(size + 1);
    if (!text) return objfail(&r, "out of memory");
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    int rc = load_text(&r, s, text, size, to_world, material);
    free(text);
    objreader_free(&r);
    return rc ? -1 : 0;
}

int scene_load_obj(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    return scene_load_obj_ex(s, path, to_world, material, NULL, err, errlen);
}

int scene_load_obj_ex(scene *s, const char *path, xform to_world, int material, obj_options *opt, char *err,
                      size_t errlen) {
    obj_options defaults;
    memset(&defaults, 0, sizeof defaults);
    objreader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.err = err;
    r.errlen = errlen;
    r.opt = opt ? opt : &defaults;
    r.want_materials = material < 0;
    r.cur_slot = -1;
    r.s = s;
    char why[200];
    size_t size = 0;
    char *text = file_read_all(path, OBJ_MAX_FILE, &size, why, sizeof why);
    if (!text) return objfail(&r, "%s", why);
    char *dir = dir_of(path);
    r.base_dir = dir;
    int rc = load_text(&r, s, text, size, to_world, material);
    free(text);
    free(dir);
    objreader_free(&r);
    return rc ? -1 : 0;
}
