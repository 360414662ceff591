/* Shapes of the Mitsuba reader: meshes (obj, ply, serialized), the analytic shapes, shapegroups and
 * instances, and the materials shapes carry. */
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
    if (mi_get_point(R, n, "p0", v3(0, 0, 0), &p0) || mi_get_point(R, n, "p1", v3(0, 0, 1), &p1) ||
        mi_get_float(R, n, "radius", 1.0, &r))
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

/* The material of a shape: its BSDF (child or reference; Mitsuba's default: diffuse 0.5), with
 * the emission of its area emitter when it has one. -2: leave the shape out (null BSDF). */
static int shape_material(reader *R, const mx_node *sh, int *mat) {
    const mx_node *bsdf = NULL, *em = NULL;
    for (int i = 0; i < sh->nkids; ++i) {
        const mx_node *c = sh->kids[i];
        if (!strcmp(c->tag, "ref")) {
            const mx_node *t;
            if (mi_deref(R, c, &t)) return -1;
            if (mx_attr(c, "name") && strcmp(t->tag, "bsdf") && strcmp(t->tag, "emitter") && strcmp(t->tag, "medium"))
                continue;
            c = t;
        }
        if (!strcmp(c->tag, "bsdf")) bsdf = c;
        if (!strcmp(c->tag, "emitter")) em = c;
    }
    mi_bsdf *b = NULL;
    if (bsdf && !(b = mi_bsdf_get(R, bsdf))) return -1;
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
    if (mi_emitter_radiance(R, em, &rad, &tex)) return -1;
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

int mi_add_shape(reader *R, const mx_node *sh, xform parent, int depth);

static int add_group(reader *R, const mx_node *g, xform M, int depth) {
    ((mx_node *)g)->used = 1;
    for (int i = 0; i < g->nkids; ++i) {
        const mx_node *c = g->kids[i];
        if (!strcmp(c->tag, "shape") && mi_add_shape(R, c, M, depth + 1)) return -1;
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

static int add_shape_prims(reader *R, const mx_node *sh, xform parent, int depth);

/* A shape, and the media it bounds (kernel/medium.h's rule; Mitsuba's: entering gives the
 * interior, leaving the exterior, an unset one the vacuum). */
int mi_add_shape(reader *R, const mx_node *sh, xform parent, int depth) {
    int in, out;
    if (mi_shape_media(R, sh, &in, &out)) return -1;
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
    if (mi_get_transform(R, sh, "to_world", &T)) return -1;
    M = xform_mul(&parent, &T);
    if (!strcmp(type, "instance")) {
        const mx_node *g = NULL;
        for (int i = 0; i < sh->nkids; ++i)
            if (!strcmp(sh->kids[i]->tag, "ref") && mi_deref(R, sh->kids[i], &g)) return -1;
        if (!g || strcmp(g->tag, "shape") || !mx_attr(g, "type") || strcmp(mx_attr(g, "type"), "shapegroup"))
            FAIL(R, sh, "instance: needs a <ref> to a shapegroup");
        R->ninstances++;
        return add_instance(R, g, M, depth);
    }
    int flip, facen;
    if (mi_get_bool(R, sh, "flip_normals", 0, &flip) || mi_get_bool(R, sh, "face_normals", 0, &facen)) return -1;
    if (facen && mi_warn_at(R, sh, "face_normals", "face_normals: caustic keeps the mesh's vertex normals")) return -1;
    static const char *const known[] = {"obj",    "ply",  "serialized", "rectangle", "cube",
                                        "sphere", "disk", "cylinder",   NULL};
    int k = 0;
    while (known[k] && strcmp(known[k], type)) k++;
    if (!known[k]) {
        mi_mark_all(sh);
        return mi_warn_at(R, sh, type, "shape \"%s\": caustic has no such shape: left out", type);
    }
    int mat = -1;
    if (shape_material(R, sh, &mat)) return -1;
    if (mat == -2) return 0; /* null BSDF */
    R->nshapes++;
    size_t v0 = R->s->nvertices, t0 = R->s->ntriangles;
    if (!strcmp(type, "obj") || !strcmp(type, "ply")) {
        const char *fn = mi_get_string(sh, "filename", NULL);
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
        const char *fn = mi_get_string(sh, "filename", NULL);
        long index;
        if (!fn) FAIL(R, sh, "serialized shape without filename");
        if (mi_get_int(R, sh, "shape_index", 0, &index)) return -1;
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
        if ((mi_xf_det(&M) < 0) != (flip != 0)) {
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
        if (mi_get_point(R, sh, "center", v3s(0.0f), &c) || mi_get_float(R, sh, "radius", 1.0, &r)) return -1;
        if (!(r > 0)) FAIL(R, sh, "sphere: radius must be positive");
        xform L = xform_trs(c, v3s(0.0f), v3s((float)(2 * r))), W = xform_mul(&M, &L);
        if (scene_add_sphere(R->s, W, mat)) FAIL(R, sh, "sphere: singular transform (or out of memory)");
        if (flip && mi_warn_at(R, sh, "sphere flip", "sphere flip_normals: caustic's spheres face outwards")) return -1;
    } else if (!strcmp(type, "disk")) {
        if (mi_warn_at(R, sh, "tessellated", "shape \"%s\": caustic has no analytic %s: %d triangles instead", type,
                       type, MI_SEGMENTS))
            return -1;
        if (add_disk(R, sh, M, mat, flip)) return -1;
    } else if (!strcmp(type, "cylinder")) {
        if (mi_warn_at(R, sh, "tessellated", "shape \"%s\": caustic has no analytic %s: %d triangles instead", type,
                       type, 2 * MI_SEGMENTS))
            return -1;
        if (add_cylinder(R, sh, M, mat, flip)) return -1;
    }
    return 0;
}
