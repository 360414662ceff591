/* pbrt-v4's shapes that caustic has no primitive for, as triangles: the quadrics (partial spheres,
 * cylinders, disks and annuli) tessellated on a (phi, z) grid with their analytic normals, and
 * Loop subdivision of a control mesh (pbrt's "loopsubdiv": the standard Loop rules, even and odd
 * vertices, boundary edges kept as cubic B-splines; the result is the mesh after `levels` steps
 * with area-weighted vertex normals, not pushed onto the limit surface as pbrt does). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/pbrt_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PBRT_PI 3.14159265358979323846

void pbrt_mesh_free(pbrt_mesh *m) {
    free(m->p);
    free(m->n);
    free(m->uv);
    free(m->idx);
    memset(m, 0, sizeof *m);
}

static int grid_alloc(pbrt_mesh *m, int nu, int nv) {
    memset(m, 0, sizeof *m);
    m->nv = (size_t)(nu + 1) * (size_t)(nv + 1);
    m->nt = 2 * (size_t)nu * (size_t)nv;
    m->p = malloc(m->nv * sizeof *m->p);
    m->n = malloc(m->nv * sizeof *m->n);
    m->uv = malloc(m->nv * sizeof *m->uv);
    m->idx = malloc(3 * m->nt * sizeof *m->idx);
    if (!m->p || !m->n || !m->uv || !m->idx) {
        pbrt_mesh_free(m);
        return -1;
    }
    /* cell (i, j): (i,j) (i+1,j) (i+1,j+1) and (i,j) (i+1,j+1) (i,j+1): the winding follows
     * d/du x d/dv */
    size_t t = 0;
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i) {
            uint32_t a = (uint32_t)(j * (nu + 1) + i), b = a + 1, c = a + (uint32_t)(nu + 1) + 1,
                     d = a + (uint32_t)(nu + 1);
            uint32_t *o = m->idx + 6 * t++;
            o[0] = a, o[1] = b, o[2] = c, o[3] = a, o[4] = c, o[5] = d;
        }
    return 0;
}

static int segments(double phimax_deg, int nphi) {
    int n = (int)ceil(nphi * fabs(phimax_deg) / 360.0);
    return n < 3 ? 3 : n;
}

int pbrt_tess_sphere(pbrt_mesh *m, double r, double zmin, double zmax, double phimax, int nphi) {
    int nu = segments(phimax, nphi), nv = nu / 2 < 4 ? 4 : nu / 2;
    if (grid_alloc(m, nu, nv)) return -1;
    double cmin = zmin / r, cmax = zmax / r;
    cmin = cmin < -1 ? -1 : cmin > 1 ? 1 : cmin;
    cmax = cmax < -1 ? -1 : cmax > 1 ? 1 : cmax;
    double th0 = acos(cmin), th1 = acos(cmax), ph = phimax * PBRT_PI / 180.0;
    for (int j = 0; j <= nv; ++j)
        for (int i = 0; i <= nu; ++i) {
            double th = th0 + (th1 - th0) * j / nv, phi = ph * i / nu;
            vec3 d = v3((float)(sin(th) * cos(phi)), (float)(sin(th) * sin(phi)), (float)cos(th));
            size_t k = (size_t)j * (size_t)(nu + 1) + (size_t)i;
            m->p[k] = vscale(d, (float)r);
            m->n[k] = d;
            m->uv[k] = v2((float)i / (float)nu, (float)j / (float)nv);
        }
    return 0;
}

int pbrt_tess_cylinder(pbrt_mesh *m, double r, double zmin, double zmax, double phimax, int nphi) {
    int nu = segments(phimax, nphi), nv = 1;
    if (grid_alloc(m, nu, nv)) return -1;
    double ph = phimax * PBRT_PI / 180.0;
    for (int j = 0; j <= nv; ++j)
        for (int i = 0; i <= nu; ++i) {
            double phi = ph * i / nu;
            size_t k = (size_t)j * (size_t)(nu + 1) + (size_t)i;
            m->n[k] = v3((float)cos(phi), (float)sin(phi), 0.0f);
            m->p[k] = v3((float)(r * cos(phi)), (float)(r * sin(phi)), (float)(j ? zmax : zmin));
            m->uv[k] = v2((float)i / (float)nu, (float)j);
        }
    return 0;
}

int pbrt_tess_disk(pbrt_mesh *m, double h, double r, double ri, double phimax, int nphi) {
    int nu = segments(phimax, nphi), nv = 1;
    if (grid_alloc(m, nu, nv)) return -1;
    double ph = phimax * PBRT_PI / 180.0;
    for (int j = 0; j <= nv; ++j)
        for (int i = 0; i <= nu; ++i) {
            double phi = ph * i / nu, rho = j ? ri : r; /* outer ring first: the winding faces +z */
            size_t k = (size_t)j * (size_t)(nu + 1) + (size_t)i;
            m->n[k] = v3(0.0f, 0.0f, 1.0f);
            m->p[k] = v3((float)(rho * cos(phi)), (float)(rho * sin(phi)), (float)h);
            m->uv[k] = v2((float)i / (float)nu, (float)j);
        }
    return 0;
}

/* ---- Loop subdivision ---------------------------------------------------------------------------- */
typedef struct half {
    uint64_t key; /* min << 32 | max */
    uint32_t tri, k;
} half;

static int half_cmp(const void *a, const void *b) {
    uint64_t x = ((const half *)a)->key, y = ((const half *)b)->key;
    return x < y ? -1 : x > y;
}

static int loop_once(pbrt_mesh *m) {
    size_t nt = m->nt, nv = m->nv;
    half *h = malloc(3 * nt * sizeof *h);
    uint32_t *edge_of = malloc(3 * nt * sizeof *edge_of); /* tri*3+k -> edge id (edge k: v[k] - v[k+1]) */
    if (!h || !edge_of) {
        free(h);
        free(edge_of);
        return -1;
    }
    for (size_t t = 0; t < nt; ++t)
        for (uint32_t k = 0; k < 3; ++k) {
            uint32_t a = m->idx[3 * t + k], b = m->idx[3 * t + (k + 1) % 3];
            uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
            h[3 * t + k] = (half){((uint64_t)lo << 32) | hi, (uint32_t)t, k};
        }
    qsort(h, 3 * nt, sizeof *h, half_cmp);
    /* edges: endpoints, how many faces, the opposite corners of the first two */
    size_t ne = 0;
    uint32_t(*ends)[2] = malloc(3 * nt * sizeof *ends);
    uint32_t(*opp)[2] = malloc(3 * nt * sizeof *opp);
    int *nface = malloc(3 * nt * sizeof *nface);
    if (!ends || !opp || !nface) goto oom;
    for (size_t i = 0; i < 3 * nt;) {
        size_t j = i;
        ends[ne][0] = (uint32_t)(h[i].key >> 32);
        ends[ne][1] = (uint32_t)(h[i].key & 0xffffffffu);
        nface[ne] = 0;
        for (; j < 3 * nt && h[j].key == h[i].key; ++j) {
            if (nface[ne] < 2) opp[ne][nface[ne]] = m->idx[3 * h[j].tri + (h[j].k + 2) % 3];
            nface[ne]++;
            edge_of[3 * h[j].tri + h[j].k] = (uint32_t)ne;
        }
        ne++;
        i = j;
    }
    {
        size_t nnv = nv + ne;
        vec3 *np = malloc(nnv * sizeof *np);
        vec3 *sum = calloc(nv, sizeof *sum), *bsum = calloc(nv, sizeof *bsum);
        int *val = calloc(nv, sizeof *val), *bval = calloc(nv, sizeof *bval);
        uint32_t *nidx = malloc(12 * nt * sizeof *nidx);
        if (!np || !sum || !bsum || !val || !bval || !nidx) {
            free(np), free(sum), free(bsum), free(val), free(bval), free(nidx);
            goto oom;
        }
        for (size_t e = 0; e < ne; ++e) {
            uint32_t a = ends[e][0], b = ends[e][1];
            sum[a] = vadd(sum[a], m->p[b]), sum[b] = vadd(sum[b], m->p[a]);
            val[a]++, val[b]++;
            if (nface[e] == 1) {
                bsum[a] = vadd(bsum[a], m->p[b]), bsum[b] = vadd(bsum[b], m->p[a]);
                bval[a]++, bval[b]++;
            }
            vec3 pa = m->p[a], pb = m->p[b];
            if (nface[e] == 2)
                np[nv + e] = vadd(vscale(vadd(pa, pb), 0.375f), vscale(vadd(m->p[opp[e][0]], m->p[opp[e][1]]), 0.125f));
            else
                np[nv + e] = vscale(vadd(pa, pb), 0.5f);
        }
        for (size_t v = 0; v < nv; ++v) {
            if (bval[v] == 2) {
                np[v] = vadd(vscale(m->p[v], 0.75f), vscale(bsum[v], 0.125f));
            } else if (bval[v] == 0 && val[v] >= 3) {
                double n = val[v], beta = val[v] == 3 ? 3.0 / 16.0 : 3.0 / (8.0 * n);
                np[v] = vadd(vscale(m->p[v], (float)(1.0 - n * beta)), vscale(sum[v], (float)beta));
            } else {
                np[v] = m->p[v]; /* corners and non-manifold vertices stay */
            }
        }
        for (size_t t = 0; t < nt; ++t) {
            uint32_t a = m->idx[3 * t], b = m->idx[3 * t + 1], c = m->idx[3 * t + 2];
            uint32_t ab = (uint32_t)nv + edge_of[3 * t], bc = (uint32_t)nv + edge_of[3 * t + 1],
                     ca = (uint32_t)nv + edge_of[3 * t + 2];
            uint32_t q[12] = {a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca};
            memcpy(nidx + 12 * t, q, sizeof q);
        }
        free(sum), free(bsum), free(val), free(bval);
        free(m->p);
        free(m->idx);
        free(m->n);
        free(m->uv);
        m->n = NULL;
        m->uv = NULL;
        m->p = np;
        m->idx = nidx;
        m->nv = nnv;
        m->nt = 4 * nt;
    }
    free(h), free(edge_of), free(ends), free(opp), free(nface);
    return 0;
oom:
    free(h), free(edge_of), free(ends), free(opp), free(nface);
    return -1;
}

int pbrt_loop_subdivide(pbrt_mesh *m, int levels) {
    for (int l = 0; l < levels; ++l)
        if (loop_once(m)) return -1;
    /* area-weighted normals, oriented as the winding */
    free(m->n);
    m->n = calloc(m->nv, sizeof *m->n);
    if (!m->n) return -1;
    for (size_t t = 0; t < m->nt; ++t) {
        uint32_t a = m->idx[3 * t], b = m->idx[3 * t + 1], c = m->idx[3 * t + 2];
        vec3 n = vcross(vsub(m->p[b], m->p[a]), vsub(m->p[c], m->p[a]));
        m->n[a] = vadd(m->n[a], n), m->n[b] = vadd(m->n[b], n), m->n[c] = vadd(m->n[c], n);
    }
    for (size_t v = 0; v < m->nv; ++v) {
        float l = vlen(m->n[v]);
        m->n[v] = l > 0 ? vscale(m->n[v], 1.0f / l) : v3s(0.0f);
    }
    return 0;
}

/* ---- shapes ----------------------------------------------------------------------------------------- */

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
    const double *ix = pbrt_pnums(r, pl, name, &k);
    *out = NULL;
    *n = 0;
    if (k == (size_t)-1) return -1;
    if (!ix) {
        if (!required) return 0;
        return prm_fail(&r->ctx, pl->where, "%s needs \"integer %s\"", pl->owner, name);
    }
    prm_value *v = pbrt_pfind(pl, name);
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
    const double *a = pbrt_pnums(r, pl, name, &k);
    *out = NULL;
    *n = 0;
    if (k == (size_t)-1) return -1;
    if (!a) return 0;
    prm_value *v = pbrt_pfind(pl, name);
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
    const char *t = pbrt_ptype(pl, "alpha");
    if (!t) return 0;
    if (!strcmp(t, "texture")) {
        const char *tn;
        if (prm_string(&pl->l, "alpha", "", &tn)) return -1;
        ptex *x = pbrt_find_tex(r, tn, 1);
        prm_value *v = pbrt_pfind(pl, "alpha");
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

int pbrt_d_shape(R *r, const pbrt_token *at) {
    char w[PRM_WHERE], type[64];
    plist pl;
    if (pbrt_typed_params(r, at, "Shape", "shape", type, &pl, w)) return -1;
    if (!r->world) {
        pbrt_plist_free(&pl);
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
        if (!rc && !P) rc = prm_fail(&r->ctx, w, "%s needs \"point3 P\"", pl.owner);
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
            if ((ex = pbrt_pfind(&pl, ignore[i]))) ex->used = 1;
    } else if (!strcmp(type, "plymesh")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_fail(&r->ctx, w, "plymesh needs \"string filename\"");
        if (!rc) {
            char *path = pbrt_resolve(&r->lx, at, fn);
            rc = path ? read_ply_mesh(r, path, w, &m) : oom(r, w);
            free(path);
        }
        prm_value *d = pbrt_pfind(&pl, "displacement");
        if (!rc && d) {
            d->used = 1;
            prm_value *e = pbrt_pfind(&pl, "edgelength");
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
    if (!rc) rc = pbrt_finish_params(r, &pl);
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
        int mat = rc ? -1 : pbrt_shape_material(r, alpha_tex, w);
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
    pbrt_plist_free(&pl);
    return rc;
}
