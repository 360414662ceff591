/* Builds the light tree: a binary BVH over the finite lights, split by pbrt-v4's light-BVH cost
 * (power x the solid angle the emission cone covers x box surface area, with a penalty for thin
 * boxes split along their short side) over 12 buckets per axis, one light per leaf. Directions
 * are merged as cones (after pbrt-v4's DirectionCone Union). Deep recursion is capped: from depth
 * 32 on a node splits at the median, so trails fit their 64 bits. */
#include "accel/light_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LT_BUCKETS      12
#define LT_MEDIAN_DEPTH 32
#define LT_PI           3.14159265358979323846

typedef struct lt_box { /* bounds of a set of lights, in double */
    double lo[3], hi[3];
    double phi;
    double w[3], cos_o, cos_e;
    int two_sided, empty;
} lt_box;

static lt_box lt_empty(void) {
    lt_box b;
    memset(&b, 0, sizeof b);
    b.empty = 1;
    for (int a = 0; a < 3; ++a) {
        b.lo[a] = INFINITY;
        b.hi[a] = -INFINITY;
    }
    b.cos_e = 1.0;
    b.cos_o = 1.0;
    return b;
}

static lt_box lt_of(const light_bounds *l) {
    lt_box b = lt_empty();
    b.empty = 0;
    double lo[3] = {l->lo.x, l->lo.y, l->lo.z}, hi[3] = {l->hi.x, l->hi.y, l->hi.z}, w[3] = {l->w.x, l->w.y, l->w.z};
    double len = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    for (int a = 0; a < 3; ++a) {
        b.lo[a] = lo[a];
        b.hi[a] = hi[a];
        b.w[a] = len > 0.0 ? w[a] / len : (a == 2);
    }
    b.phi = l->phi;
    b.cos_o = len > 0.0 ? l->cos_o : -1.0;
    b.cos_e = l->cos_e;
    b.two_sided = l->two_sided;
    return b;
}

static double lt_acos(double c) { return acos(c < -1.0 ? -1.0 : (c > 1.0 ? 1.0 : c)); }

/* The smallest cone holding cones (wa, ca) and (wb, cb) (cosines of their half angles). */
static void lt_cone_union(const double *wa, double ca, const double *wb, double cb, double *w, double *c) {
    double ta = lt_acos(ca), tb = lt_acos(cb);
    double dot = wa[0] * wb[0] + wa[1] * wb[1] + wa[2] * wb[2];
    double td = lt_acos(dot);
    if (fmin(td + tb, LT_PI) <= ta) {
        memcpy(w, wa, 3 * sizeof(double));
        *c = ca;
        return;
    }
    if (fmin(td + ta, LT_PI) <= tb) {
        memcpy(w, wb, 3 * sizeof(double));
        *c = cb;
        return;
    }
    double to = 0.5 * (ta + td + tb);
    double ax[3] = {wa[1] * wb[2] - wa[2] * wb[1], wa[2] * wb[0] - wa[0] * wb[2], wa[0] * wb[1] - wa[1] * wb[0]};
    double al = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    if (to >= LT_PI || !(al > 1e-12)) { /* every direction */
        memcpy(w, wa, 3 * sizeof(double));
        *c = -1.0;
        return;
    }
    /* rotate wa towards wb by to - ta about their common normal (Rodrigues) */
    double tr = to - ta, cs = cos(tr), sn = sin(tr);
    for (int a = 0; a < 3; ++a) ax[a] /= al;
    double kxv[3] = {ax[1] * wa[2] - ax[2] * wa[1], ax[2] * wa[0] - ax[0] * wa[2], ax[0] * wa[1] - ax[1] * wa[0]};
    double kdv = ax[0] * wa[0] + ax[1] * wa[1] + ax[2] * wa[2];
    double len = 0.0;
    for (int a = 0; a < 3; ++a) {
        w[a] = wa[a] * cs + kxv[a] * sn + ax[a] * kdv * (1.0 - cs);
        len += w[a] * w[a];
    }
    len = sqrt(len);
    for (int a = 0; a < 3; ++a) w[a] /= len;
    *c = cos(to);
}

static lt_box lt_union(lt_box a, const lt_box *b) {
    if (b->empty) return a;
    if (a.empty) return *b;
    for (int i = 0; i < 3; ++i) {
        a.lo[i] = fmin(a.lo[i], b->lo[i]);
        a.hi[i] = fmax(a.hi[i], b->hi[i]);
    }
    double w[3], c;
    lt_cone_union(a.w, a.cos_o, b->w, b->cos_o, w, &c);
    memcpy(a.w, w, sizeof w);
    a.cos_o = c;
    a.phi += b->phi;
    a.cos_e = fmin(a.cos_e, b->cos_e);
    a.two_sided |= b->two_sided;
    return a;
}

/* pbrt-v4's EvaluateCost: phi x M_Omega x Kr x surface area, splitting along axis dim. */
static double lt_cost(const lt_box *b, int dim) {
    if (b->empty) return 0.0;
    double to = lt_acos(b->cos_o), te = lt_acos(b->cos_e);
    double tw = fmin(to + te, LT_PI);
    double so = sqrt(fmax(0.0, 1.0 - b->cos_o * b->cos_o));
    double m =
        2.0 * LT_PI * (1.0 - b->cos_o) + LT_PI / 2.0 * (2.0 * tw * so - cos(to - 2.0 * tw) - 2.0 * to * so + b->cos_o);
    double d[3] = {b->hi[0] - b->lo[0], b->hi[1] - b->lo[1], b->hi[2] - b->lo[2]};
    double dmax = fmax(d[0], fmax(d[1], d[2]));
    double kr = d[dim] > 0.0 ? dmax / d[dim] : 1.0;
    double area = 2.0 * (d[0] * d[1] + d[1] * d[2] + d[2] * d[0]);
    return b->phi * m * kr * area;
}

typedef struct lt_build {
    const light_bounds *lb;
    uint32_t *ids; /* the lights in the tree, reordered as the build partitions them */
    double *cent;  /* 3 per light: box centres */
    light_tree_node *nodes;
    uint32_t nnodes;
    uint64_t *trail;
    int sort_axis; /* for the median split's comparison */
} lt_build;

static const lt_build *lt_sort_ctx; /* qsort has no context argument in C11 */
static int lt_cmp(const void *a, const void *b) {
    double ca = lt_sort_ctx->cent[3u * *(const uint32_t *)a + (unsigned)lt_sort_ctx->sort_axis];
    double cb = lt_sort_ctx->cent[3u * *(const uint32_t *)b + (unsigned)lt_sort_ctx->sort_axis];
    return ca < cb ? -1 : (ca > cb ? 1 : 0);
}

static void lt_store(light_tree_node *nd, const lt_box *b) {
    /* the box's bounding sphere, its radius grown by the centre's rounding (to float) so that the
     * float sphere still holds the box */
    double c[3], r2 = 0.0, cmax = 0.0;
    for (int a = 0; a < 3; ++a) {
        c[a] = 0.5 * (b->lo[a] + b->hi[a]);
        r2 += 0.25 * (b->hi[a] - b->lo[a]) * (b->hi[a] - b->lo[a]);
        cmax = fmax(cmax, fabs(c[a]));
    }
    nd->c = v3((float)c[0], (float)c[1], (float)c[2]);
    double err = sqrt(3.0) * cmax * 0x1p-23; /* >= |c - float(c)| */
    nd->r = c[0] == (double)nd->c.x && c[1] == (double)nd->c.y && c[2] == (double)nd->c.z ? 0.0f : (float)err;
    nd->r = nextafterf((float)(sqrt(r2) + (double)nd->r), INFINITY);
    if (r2 == 0.0 && nd->r == nextafterf(0.0f, INFINITY)) nd->r = 0.0f; /* a point light's exact position */
    nd->phi = (float)b->phi;
    nd->w = v3((float)b->w[0], (float)b->w[1], (float)b->w[2]);
    /* rounded outwards: a float cone never smaller than the double one */
    nd->cos_o = nextafterf((float)b->cos_o, -2.0f);
    nd->cos_e = nextafterf((float)b->cos_e, -2.0f);
    if (nd->cos_o < -1.0f) nd->cos_o = -1.0f;
    if (nd->cos_e < -1.0f) nd->cos_e = -1.0f;
    nd->sin_o = sqrtf(fmaxf(0.0f, 1.0f - nd->cos_o * nd->cos_o));
    nd->child = b->two_sided ? LIGHT_NODE_TWO_SIDED : 0u;
}

/* Builds the subtree over ids[begin, end) at depth `depth` with trail bits `bits`; returns its
 * node index and its bounds in *out. */
static uint32_t lt_node(lt_build *B, uint32_t begin, uint32_t end, int depth, uint64_t bits, lt_box *out) {
    uint32_t me = B->nnodes++;
    if (end - begin == 1) {
        uint32_t li = B->ids[begin];
        *out = lt_of(&B->lb[li]);
        lt_store(&B->nodes[me], out);
        B->nodes[me].child |= li | LIGHT_NODE_LEAF;
        B->trail[li] = bits;
        return me;
    }
    double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = begin; i < end; ++i)
        for (int a = 0; a < 3; ++a) {
            clo[a] = fmin(clo[a], B->cent[3u * B->ids[i] + (unsigned)a]);
            chi[a] = fmax(chi[a], B->cent[3u * B->ids[i] + (unsigned)a]);
        }
    int best_axis = -1, best_bucket = -1;
    double best_cost = INFINITY;
    if (depth < LT_MEDIAN_DEPTH) {
        for (int a = 0; a < 3; ++a) {
            double ext = chi[a] - clo[a];
            if (!(ext > 0.0)) continue;
            lt_box bk[LT_BUCKETS];
            for (int k = 0; k < LT_BUCKETS; ++k) bk[k] = lt_empty();
            for (uint32_t i = begin; i < end; ++i) {
                uint32_t li = B->ids[i];
                int k = (int)(LT_BUCKETS * (B->cent[3u * li + (unsigned)a] - clo[a]) / ext);
                if (k >= LT_BUCKETS) k = LT_BUCKETS - 1;
                lt_box one = lt_of(&B->lb[li]);
                bk[k] = lt_union(bk[k], &one);
            }
            lt_box below[LT_BUCKETS];
            below[0] = bk[0];
            for (int k = 1; k < LT_BUCKETS; ++k) below[k] = lt_union(below[k - 1], &bk[k]);
            lt_box above = lt_empty();
            for (int k = LT_BUCKETS - 1; k > 0; --k) {
                above = lt_union(above, &bk[k]);
                if (below[k - 1].empty || above.empty) continue;
                double c = lt_cost(&below[k - 1], a) + lt_cost(&above, a);
                if (c < best_cost) {
                    best_cost = c;
                    best_axis = a;
                    best_bucket = k;
                }
            }
        }
    }
    uint32_t mid = begin;
    if (best_axis >= 0) {
        double ext = chi[best_axis] - clo[best_axis];
        uint32_t lo = begin, hi = end;
        while (lo < hi) {
            uint32_t li = B->ids[lo];
            int k = (int)(LT_BUCKETS * (B->cent[3u * li + (unsigned)best_axis] - clo[best_axis]) / ext);
            if (k >= LT_BUCKETS) k = LT_BUCKETS - 1;
            if (k < best_bucket)
                ++lo;
            else {
                B->ids[lo] = B->ids[--hi];
                B->ids[hi] = li;
            }
        }
        mid = lo;
    }
    if (mid <= begin || mid >= end) { /* no split that pays: the median along the widest axis */
        int axis = 0;
        for (int a = 1; a < 3; ++a)
            if (chi[a] - clo[a] > chi[axis] - clo[axis]) axis = a;
        B->sort_axis = axis;
        lt_sort_ctx = B;
        qsort(B->ids + begin, end - begin, sizeof(uint32_t), lt_cmp);
        mid = begin + (end - begin) / 2u;
    }
    lt_box l, r;
    lt_node(B, begin, mid, depth + 1, bits, &l);
    uint32_t second = lt_node(B, mid, end, depth + 1, bits | ((uint64_t)1u << depth), &r);
    *out = lt_union(l, &r);
    lt_store(&B->nodes[me], out);
    B->nodes[me].child |= second;
    return me;
}

int light_tree_build(const light_bounds *lb, size_t n, light_tree_node **nodes, uint32_t *nnodes, uint64_t **trail) {
    *nodes = NULL;
    *trail = NULL;
    *nnodes = 0;
    lt_build B;
    memset(&B, 0, sizeof B);
    B.lb = lb;
    B.ids = malloc((n ? n : 1) * sizeof(uint32_t));
    B.cent = malloc((n ? n : 1) * 3 * sizeof(double));
    B.trail = calloc(n ? n : 1, sizeof(uint64_t));
    uint32_t m = 0;
    for (size_t i = 0; B.ids && i < n; ++i)
        if (lb[i].phi > 0.0) B.ids[m++] = (uint32_t)i;
    B.nodes = m ? calloc(2u * (size_t)m - 1u, sizeof(light_tree_node)) : NULL;
    if (!B.ids || !B.cent || !B.trail || !B.nodes) {
        free(B.ids);
        free(B.cent);
        free(B.trail);
        free(B.nodes);
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        B.cent[3 * i + 0] = 0.5 * ((double)lb[i].lo.x + (double)lb[i].hi.x);
        B.cent[3 * i + 1] = 0.5 * ((double)lb[i].lo.y + (double)lb[i].hi.y);
        B.cent[3 * i + 2] = 0.5 * ((double)lb[i].lo.z + (double)lb[i].hi.z);
    }
    lt_box root;
    lt_node(&B, 0, m, 0, 0u, &root);
    free(B.ids);
    free(B.cent);
    *nodes = B.nodes;
    *nnodes = B.nnodes;
    *trail = B.trail;
    return 0;
}
