/* pbrt-v4's shapes that caustic has no primitive for, as triangles: the quadrics (partial spheres,
 * cylinders, disks and annuli) tessellated on a (phi, z) grid with their analytic normals, and
 * Loop subdivision of a control mesh (pbrt's "loopsubdiv": the standard Loop rules, even and odd
 * vertices, boundary edges kept as cubic B-splines; the result is the mesh after `levels` steps
 * with area-weighted vertex normals, not pushed onto the limit surface as pbrt does). */
#include "import/pbrt_internal.h"

#include <math.h>
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
