/* Binned SAH BVH builder (Wald 2007 style binning of centroids, 64 bins per axis). Children of
 * an inner node are stored next to each other so a node needs one child index. */
#include "accel/bvh.h"
#include "cpu/isa.h"
#include "kernel/bvh_traverse.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/timer.h"

#define BINS 64                    /* 32: 10-25 % more tests per ray on Sponza (docs/PERFORMANCE.md) */
#define MAX_LEAF 8                 /* primitives; a leaf is ceil(count / 4) leaf blocks */
/* the traversal packs a leaf's block count into BVH_COUNT_BITS of a stack entry */
_Static_assert(MAX_LEAF <= BVH_MAX_LEAF_BLOCKS * BVH_LEAF_WIDTH, "leaf too large for the traversal stack");
#define PARALLEL_MIN_PRIMS 20000   /* smaller subtrees are not worth a thread */
#define MAX_DEPTH (BVH_MAX_DEPTH - 1)  /* the traversal stack is sized for this */
#define COST_TRAVERSE 1.0f
#define COST_INTERSECT 1.0f        /* per leaf block: its four lanes are tested together */

/* SAH cost of a leaf of n primitives in units of `lanes` primitives tested together: the CPU
 * tests the four lanes of a block at once (BVH_LEAF_WIDTH), the GPU one lane at a time (1). */
static float leaf_cost_of(uint32_t n, int lanes) { return (float)((n + (uint32_t)lanes - 1) / (uint32_t)lanes); }
/* ... where only triangles share a test: spheres and quads are tested one by one (scalar). */
static float leaf_cost_mixed(uint32_t ntri, uint32_t nother, int lanes) { return leaf_cost_of(ntri, lanes) + (float)nother; }
static float leaf_blocks(uint32_t n) { return leaf_cost_of(n, BVH_LEAF_WIDTH); }

typedef struct box { vec3 lo, hi; } box;

static box box_empty(void) { box b; b.lo = v3s(INFINITY); b.hi = v3s(-INFINITY); return b; }
static void box_grow(box *b, vec3 lo, vec3 hi) { b->lo = vmin(b->lo, lo); b->hi = vmax(b->hi, hi); }
static float box_area(box b) {
    vec3 d = vsub(b.hi, b.lo);
    if (d.x < 0.0f) return 0.0f;
    return 2.0f * (d.x * d.y + d.y * d.z + d.z * d.x);
}

/* Shared by the build threads: each subtree works on its own range of `order` and its own
 * nodes; only node allocation and the statistics are shared (atomics / per-task merge). */
typedef struct builder {
    const vec3 *lo, *hi;
    const uint32_t *ids;   /* primitive ids of the references (their kind decides the leaf cost) */
    vec3 *centroid;
    uint32_t *order;       /* primitive indices, partitioned in place */
    bvh_node *nodes;
    atomic_size_t nnodes;
    int spawn_depth;       /* subtrees above this depth may be built on their own thread */
    int sah_lanes;         /* primitives the SAH counts as one leaf test (leaf_cost_of) */
} builder;

/* Statistics of one build task, merged when its thread is joined. */
typedef struct build_stats { int max_depth, max_leaf; size_t nleaves; } build_stats;

/* Bin of a centroid coordinate, clamped before the float-to-int conversion. */
static int bin_of(float c, float origin, float scale) {
    float f = (c - origin) * scale;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)(BINS - 1)) return BINS - 1;
    return (int)f;
}

static void make_leaf(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count) {
    b->nodes[node].index = start;
    b->nodes[node].count = count;
    st->nleaves++;
    if ((int)count > st->max_leaf) st->max_leaf = (int)count;
}

static void build_node(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count, int depth);

typedef struct build_task {
    builder *b;
    build_stats st;
    uint32_t node, start, count;
    int depth;
} build_task;

static void *build_task_main(void *arg) {
    build_task *t = arg;
    build_node(t->b, &t->st, t->node, t->start, t->count, t->depth);
    return NULL;
}

static void build_node(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count, int depth) {
    box bounds = box_empty(), cbounds = box_empty();
    for (uint32_t i = start; i < start + count; ++i) {
        uint32_t p = b->order[i];
        box_grow(&bounds, b->lo[p], b->hi[p]);
        box_grow(&cbounds, b->centroid[p], b->centroid[p]);
    }
    b->nodes[node].lo = bounds.lo;
    b->nodes[node].hi = bounds.hi;
    if (depth > st->max_depth) st->max_depth = depth;
    if (count <= 1 || depth >= MAX_DEPTH) { make_leaf(b, st, node, start, count); return; }

    /* Find the cheapest binned split over all three axes. */
    float best_cost = INFINITY;
    int best_axis = -1, best_bin = 0;
    vec3 ext = vsub(cbounds.hi, cbounds.lo);
    for (int axis = 0; axis < 3; ++axis) {
        float e = vcomp(ext, axis);
        /* a denormal extent makes BINS / e overflow: such an axis cannot be split anyway */
        if (!(e > 0.0f) || !isfinite((float)BINS / e)) continue;
        box bin_box[BINS];
        uint32_t bin_count[BINS], bin_tri[BINS];
        for (int k = 0; k < BINS; ++k) { bin_box[k] = box_empty(); bin_count[k] = 0; bin_tri[k] = 0; }
        float scale = (float)BINS / e, origin = vcomp(cbounds.lo, axis);
        for (uint32_t i = start; i < start + count; ++i) {
            uint32_t p = b->order[i];
            int k = bin_of(vcomp(b->centroid[p], axis), origin, scale);
            bin_count[k]++;
            bin_tri[k] += prim_id_kind(b->ids[p]) == PRIM_TRIANGLE;
            box_grow(&bin_box[k], b->lo[p], b->hi[p]);
        }
        /* sweep from the right, then from the left */
        float right_area[BINS];
        uint32_t right_count[BINS], right_tri[BINS];
        box acc = box_empty();
        uint32_t n = 0, ntri = 0;
        for (int k = BINS - 1; k > 0; --k) {
            box_grow(&acc, bin_box[k].lo, bin_box[k].hi);
            n += bin_count[k];
            ntri += bin_tri[k];
            right_area[k] = box_area(acc);
            right_count[k] = n;
            right_tri[k] = ntri;
        }
        acc = box_empty();
        n = 0;
        ntri = 0;
        for (int k = 0; k < BINS - 1; ++k) {
            box_grow(&acc, bin_box[k].lo, bin_box[k].hi);
            n += bin_count[k];
            ntri += bin_tri[k];
            if (n == 0 || right_count[k + 1] == 0) continue;
            float cost = box_area(acc) * leaf_cost_mixed(ntri, n - ntri, b->sah_lanes) +
                         right_area[k + 1] * leaf_cost_mixed(right_tri[k + 1], right_count[k + 1] - right_tri[k + 1], b->sah_lanes);
            if (cost < best_cost) { best_cost = cost; best_axis = axis; best_bin = k; }
        }
    }
    float parent_area = box_area(bounds);
    float split_cost = parent_area > 0.0f ? COST_TRAVERSE + COST_INTERSECT * best_cost / parent_area : INFINITY;
    uint32_t count_tri = 0;
    for (uint32_t i = start; i < start + count; ++i) count_tri += prim_id_kind(b->ids[b->order[i]]) == PRIM_TRIANGLE;
    float leaf_cost = COST_INTERSECT * leaf_cost_mixed(count_tri, count - count_tri, b->sah_lanes);

    uint32_t mid;
    if (best_axis < 0) {
        /* all centroids coincide: split by position in the list if the leaf would be too big */
        if (count <= MAX_LEAF) { make_leaf(b, st, node, start, count); return; }
        mid = start + count / 2;
    } else {
        if (split_cost >= leaf_cost && count <= MAX_LEAF) { make_leaf(b, st, node, start, count); return; }
        float e = vcomp(ext, best_axis), origin = vcomp(cbounds.lo, best_axis);
        float scale = (float)BINS / e;
        uint32_t i = start, j = start + count;
        while (i < j) {
            int k = bin_of(vcomp(b->centroid[b->order[i]], best_axis), origin, scale);
            if (k <= best_bin) i++;
            else { uint32_t t = b->order[i]; b->order[i] = b->order[--j]; b->order[j] = t; }
        }
        mid = i;
        if (mid == start || mid == start + count) mid = start + count / 2;
    }
    uint32_t left = (uint32_t)atomic_fetch_add(&b->nnodes, 2);
    b->nodes[node].index = left;
    b->nodes[node].count = 0;
    /* large subtrees near the root: the left one on a new thread, the right one here */
    pthread_t th;
    build_task task;
    int spawned = 0;
    if (depth < b->spawn_depth && count > PARALLEL_MIN_PRIMS) {
        task.b = b; task.node = left; task.start = start; task.count = mid - start; task.depth = depth + 1;
        memset(&task.st, 0, sizeof task.st);
        spawned = pthread_create(&th, NULL, build_task_main, &task) == 0;
    }
    if (!spawned) build_node(b, st, left, start, mid - start, depth + 1);
    build_node(b, st, left + 1, mid, start + count - mid, depth + 1);
    if (spawned) {
        pthread_join(th, NULL);
        if (task.st.max_depth > st->max_depth) st->max_depth = task.st.max_depth;
        if (task.st.max_leaf > st->max_leaf) st->max_leaf = task.st.max_leaf;
        st->nleaves += task.st.nleaves;
    }
}

/* ---- collapse to wide nodes ------------------------------------------------------------------
 * bvh4_node and bvh8_node start with the same six rows of W floats (the boxes); then bvh4_node
 * has a child and a count row, bvh8_node one row of both packed. One collapse writes either. */
_Static_assert(offsetof(bvh8_node, ref) == 6 * BVH8_WIDTH * sizeof(float) &&
               offsetof(bvh4_node, child) == 6 * BVH4_WIDTH * sizeof(float) &&
               offsetof(bvh4_node, count) == 7 * BVH4_WIDTH * sizeof(float), "node rows");
#define BVH_MAX_WIDTH BVH8_WIDTH

/* One node of width W: its box rows and where its slots' references go. */
typedef struct wnode { float *lo[3], *hi[3]; uint32_t *refs; int width; } wnode;

static wnode wnode_at(void *base, int width, size_t at) {
    wnode w;
    float *f = (float *)((char *)base + at * bvh_wnode_size(width));
    for (int a = 0; a < 3; ++a) { w.lo[a] = f + a * width; w.hi[a] = f + (3 + a) * width; }
    w.refs = (uint32_t *)(f + 6 * width);
    w.width = width;
    return w;
}

static void set_ref(wnode *n, int i, uint32_t child, uint32_t count) {
    if (n->width == BVH8_WIDTH) n->refs[i] = child << BVH_COUNT_BITS | count;
    else { n->refs[i] = child; n->refs[BVH4_WIDTH + i] = count; }
}

typedef struct collapser {
    const bvh_node *bin; void *out; int width; size_t n;
    const uint32_t *prim_ids; const triangle *tris;
    bvh_leaf4 *leaves; size_t nleaves;
} collapser;

/* Appends the leaf blocks of binary leaf `b` (its primitives in leaf order, each once: split
 * references of one triangle may share a leaf); returns the first and sets *nblocks. */
static uint32_t emit_leaf(collapser *c, const bvh_node *b, uint32_t *nblocks) {
    uint32_t first = (uint32_t)c->nleaves, lane = BVH_LEAF_WIDTH;
    bvh_leaf4 *l = NULL;
    for (uint32_t k = 0; k < b->count; ++k) {
        uint32_t id = c->prim_ids[b->index + k], dup = 0;
        for (uint32_t q = 0; q < k; ++q) dup |= c->prim_ids[b->index + q] == id;
        if (dup) continue;
        if (lane == BVH_LEAF_WIDTH) {
            l = &c->leaves[c->nleaves++];
            for (uint32_t j = 0; j < BVH_LEAF_WIDTH; ++j) { l->v0[j] = l->v1[j] = l->v2[j] = 0; l->prim[j] = PRIM_NONE; }
            lane = 0;
        }
        l->prim[lane] = id;
        if (prim_id_kind(id) == PRIM_TRIANGLE) {
            const triangle *t = &c->tris[prim_id_index(id)];
            l->v0[lane] = t->v[0]; l->v1[lane] = t->v[1]; l->v2[lane] = t->v[2];
        }
        lane++;
    }
    *nblocks = (uint32_t)c->nleaves - first;
    return first;
}

static void set_slot(wnode *n, int i, const bvh_node *b) {
    for (int a = 0; a < 3; ++a) { n->lo[a][i] = vcomp(b->lo, a); n->hi[a][i] = vcomp(b->hi, a); }
}

/* Emits the wide node for binary node `b` at out[at]: its children are the binary node's
 * children, repeatedly replacing the inner child of largest area by its two children. */
static void collapse(collapser *c, uint32_t b, size_t at) {
    uint32_t kids[BVH_MAX_WIDTH];
    int nk = 0;
    const bvh_node *bn = &c->bin[b];
    if (bn->count > 0) { kids[nk++] = b; }           /* a leaf root: one leaf child */
    else { kids[nk++] = bn->index; kids[nk++] = bn->index + 1; }
    while (nk < c->width) {
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < nk; ++i) {
            const bvh_node *k = &c->bin[kids[i]];
            if (k->count > 0) continue;
            box bx; bx.lo = k->lo; bx.hi = k->hi;
            float a = box_area(bx);
            if (a > best_area) { best_area = a; best = i; }
        }
        if (best < 0) break;
        uint32_t open = kids[best];
        kids[best] = c->bin[open].index;
        kids[nk++] = c->bin[open].index + 1;
    }
    wnode n = wnode_at(c->out, c->width, at);
    for (int i = 0; i < c->width; ++i) {
        /* empty slot: a box at +infinity is never entered (an inverted box would be: the slab
         * test sees -inf..+inf intervals) */
        for (int a = 0; a < 3; ++a) n.lo[a][i] = n.hi[a][i] = INFINITY;
        set_ref(&n, i, 0, 0);
    }
    /* reserve this node's inner children contiguously, then recurse */
    size_t inner_at[BVH_MAX_WIDTH];
    for (int i = 0; i < nk; ++i) {
        const bvh_node *k = &c->bin[kids[i]];
        set_slot(&n, i, k);
        if (k->count > 0) {
            uint32_t nblocks, first = emit_leaf(c, k, &nblocks);
            set_ref(&n, i, first, nblocks);
        } else {
            inner_at[i] = c->n++;
            set_ref(&n, i, (uint32_t)inner_at[i], 0);
        }
    }
    for (int i = 0; i < nk; ++i)
        if (c->bin[kids[i]].count == 0) collapse(c, kids[i], inner_at[i]);
}

size_t bvh_collapse(const bvh_node *bin, const uint32_t *prim_ids, const triangle *tris, int width, void *out,
                    bvh_leaf4 *leaves, size_t *nleaf4) {
    collapser c;
    c.bin = bin; c.out = out; c.width = width; c.n = 1;
    c.prim_ids = prim_ids; c.tris = tris; c.leaves = leaves; c.nleaves = 0;
    collapse(&c, 0, 0);
    *nleaf4 = c.nleaves;
    return c.n;
}

static double sah_of(const bvh_node *nodes, uint32_t node, float root_area) {
    const bvh_node *n = &nodes[node];
    box bx; bx.lo = n->lo; bx.hi = n->hi;
    double a = root_area > 0.0f ? box_area(bx) / root_area : 0.0;
    if (n->count > 0) return a * COST_INTERSECT * leaf_blocks(n->count);
    return a * COST_TRAVERSE + sah_of(nodes, n->index, root_area) + sah_of(nodes, n->index + 1, root_area);
}

static int build_refs(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                      int threads, int sah_lanes);

/* ---- pre-splitting of large triangles ------------------------------------------------------
 * Long triangles (Sponza's walls, floors and columns) have boxes far larger than themselves and
 * make every box around them overlap. Before the build, the largest ones are split into several
 * references, each with the box of the part of the triangle inside one cell of a global grid
 * (Karras & Aila 2013, "Fast Parallel Construction of High-Quality Bounding Volume Hierarchies",
 * section 3: priority (2^-level * (box area - ideal area))^(1/4), a budget of extra references,
 * splits at the most important grid plane). The SAH build then treats references like
 * primitives; a leaf lists a primitive once even when two of its references end up there. */
#define PRESPLIT_BUDGET 0.15   /* extra references, as a fraction of the primitives, at most */
#define PRESPLIT_LARGE 16.0f   /* only boxes of more than this x the median triangle box area */

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

typedef struct presplit_ctx {
    vec3 scene_lo, scene_ext;
    vec3 *lo, *hi; uint32_t *ids; size_t n, cap;
} presplit_ctx;

/* The most important grid plane across [lo, hi] on an axis: returns its level (1 = the scene's
 * middle) and position, or 0 if the interval is too thin. */
static int grid_plane(float lo, float hi, float scene_lo, float ext, float *pos) {
    if (!(ext > 0.0f)) return 0;
    for (int level = 1; level < 24; ++level) {
        float cell = ext / (float)(1 << level);
        float k = ceilf((lo - scene_lo) / cell);
        float p = scene_lo + k * cell;
        if (p > lo && p < hi) { *pos = p; return level; }
    }
    return 0;
}

static float tri_area(vec3 a, vec3 b, vec3 c) { return 0.5f * vlen(vcross(vsub(b, a), vsub(c, a))); }

/* Bounds of the parts of triangle v on either side of the plane x[axis] = s, each clipped to bx. */
static void split_bounds(const vec3 v[3], box bx, int axis, float s, box *left, box *right) {
    *left = box_empty();
    *right = box_empty();
    for (int i = 0; i < 3; ++i) {
        vec3 a = v[i], b = v[(i + 1) % 3];
        float ca = vcomp(a, axis), cb = vcomp(b, axis);
        if (ca <= s) box_grow(left, a, a);
        if (ca >= s) box_grow(right, a, a);
        if ((ca < s && cb > s) || (ca > s && cb < s)) {
            float t = (s - ca) / (cb - ca);
            vec3 p = vadd(a, vscale(vsub(b, a), t));
            if (axis == 0) p.x = s; else if (axis == 1) p.y = s; else p.z = s;
            box_grow(left, p, p);
            box_grow(right, p, p);
        }
    }
    left->lo = vmax(left->lo, bx.lo); left->hi = vmin(left->hi, bx.hi);
    right->lo = vmax(right->lo, bx.lo); right->hi = vmin(right->hi, bx.hi);
    if (axis == 0) { left->hi.x = kmin(left->hi.x, s); right->lo.x = kmax(right->lo.x, s); }
    else if (axis == 1) { left->hi.y = kmin(left->hi.y, s); right->lo.y = kmax(right->lo.y, s); }
    else { left->hi.z = kmin(left->hi.z, s); right->lo.z = kmax(right->lo.z, s); }
}

static void presplit_emit(presplit_ctx *c, box bx, uint32_t id) {
    c->lo[c->n] = bx.lo; c->hi[c->n] = bx.hi; c->ids[c->n] = id; c->n++;
}

/* Splits the reference (v, bx) into extra + 1 references. */
static void presplit_tri(presplit_ctx *c, const vec3 v[3], box bx, uint32_t id, uint32_t extra) {
    vec3 d = vsub(bx.hi, bx.lo);
    int axis = d.x >= d.y && d.x >= d.z ? 0 : (d.y >= d.z ? 1 : 2);
    float pos;
    if (extra == 0 || !grid_plane(vcomp(bx.lo, axis), vcomp(bx.hi, axis), vcomp(c->scene_lo, axis),
                                  vcomp(c->scene_ext, axis), &pos)) {
        presplit_emit(c, bx, id);
        return;
    }
    box l, r;
    split_bounds(v, bx, axis, pos, &l, &r);
    int lok = vcomp(l.hi, axis) >= vcomp(l.lo, axis) && l.hi.x >= l.lo.x && l.hi.y >= l.lo.y && l.hi.z >= l.lo.z;
    int rok = vcomp(r.hi, axis) >= vcomp(r.lo, axis) && r.hi.x >= r.lo.x && r.hi.y >= r.lo.y && r.hi.z >= r.lo.z;
    if (!lok || !rok) { /* the triangle lies on one side (touching the plane): keep it whole */
        presplit_emit(c, lok ? l : (rok ? r : bx), id);
        return;
    }
    /* share the remaining splits by the halves' extents along the axis */
    float wl = vcomp(vsub(l.hi, l.lo), axis), wr = vcomp(vsub(r.hi, r.lo), axis);
    uint32_t rest = extra - 1;
    uint32_t el = wl + wr > 0.0f ? (uint32_t)((float)rest * wl / (wl + wr) + 0.5f) : rest / 2;
    if (el > rest) el = rest;
    presplit_tri(c, v, l, id, el);
    presplit_tri(c, v, r, id, rest - el);
}

/* Returns the number of references (>= n) in *rlo, *rhi, *rids, or 0 when nothing was split
 * (the caller then uses its own arrays) or memory ran out. */
static size_t presplit(const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                       const vec3 *pos, vec3 **rlo, vec3 **rhi, uint32_t **rids) {
    if (!tris || !pos || n < 64) return 0;
    box scene = box_empty();
    for (size_t i = 0; i < n; ++i) box_grow(&scene, lo[i], hi[i]);
    vec3 ext = vsub(scene.hi, scene.lo);
    float *prio = malloc(n * sizeof(float));
    if (!prio) return 0;
    /* only triangles whose box is much larger than the typical one are worth splitting (meshes of
     * even, small triangles such as scanned models get none): threshold = PRESPLIT_LARGE x the
     * median box area of a sample of the triangles */
    float sample[4096];
    size_t ns = 0, step = n / 4096 + 1;
    for (size_t i = 0; i < n && ns < 4096; i += step) {
        if (prim_id_kind(ids[i]) != PRIM_TRIANGLE) continue;
        box bx; bx.lo = lo[i]; bx.hi = hi[i];
        sample[ns++] = box_area(bx);
    }
    if (ns == 0) { free(prio); return 0; }
    qsort(sample, ns, sizeof(float), cmp_float);
    float large = PRESPLIT_LARGE * sample[ns / 2];
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
        prio[i] = 0.0f;
        if (prim_id_kind(ids[i]) != PRIM_TRIANGLE) continue;
        const triangle *t = &tris[prim_id_index(ids[i])];
        box bx; bx.lo = lo[i]; bx.hi = hi[i];
        vec3 d = vsub(bx.hi, bx.lo);
        int axis = d.x >= d.y && d.x >= d.z ? 0 : (d.y >= d.z ? 1 : 2);
        float p;
        int level = grid_plane(vcomp(bx.lo, axis), vcomp(bx.hi, axis), vcomp(scene.lo, axis), vcomp(ext, axis), &p);
        if (!level) continue;
        if (!(box_area(bx) > large)) continue;
        float excess = box_area(bx) - 2.0f * tri_area(pos[t->v[0]], pos[t->v[1]], pos[t->v[2]]);
        if (!(excess > 0.0f)) continue;
        prio[i] = powf(ldexpf(excess, -level), 0.25f);
        sum += prio[i];
    }
    size_t budget = (size_t)(PRESPLIT_BUDGET * (double)n);
    if (!(sum > 0.0) || budget == 0) { free(prio); return 0; }
    /* the largest scale D with sum floor(D * prio) <= budget (bisection) */
    double dlo = 0.0, dhi = (double)budget / sum * 64.0;
    for (int it = 0; it < 40; ++it) {
        double dm = 0.5 * (dlo + dhi);
        size_t tot = 0;
        for (size_t i = 0; i < n && tot <= budget; ++i) tot += (size_t)(dm * prio[i]);
        if (tot <= budget) dlo = dm; else dhi = dm;
    }
    size_t extra = 0;
    for (size_t i = 0; i < n; ++i) extra += (size_t)(dlo * prio[i]);
    if (extra == 0) { free(prio); return 0; }
    presplit_ctx c;
    c.scene_lo = scene.lo; c.scene_ext = ext; c.n = 0; c.cap = n + extra;
    c.lo = malloc(c.cap * sizeof(vec3)); c.hi = malloc(c.cap * sizeof(vec3)); c.ids = malloc(c.cap * sizeof(uint32_t));
    if (!c.lo || !c.hi || !c.ids) { free(c.lo); free(c.hi); free(c.ids); free(prio); return 0; }
    for (size_t i = 0; i < n; ++i) {
        uint32_t k = (uint32_t)(dlo * prio[i]);
        box bx; bx.lo = lo[i]; bx.hi = hi[i];
        if (k == 0) { presplit_emit(&c, bx, ids[i]); continue; }
        const triangle *t = &tris[prim_id_index(ids[i])];
        vec3 v[3];
        v[0] = pos[t->v[0]]; v[1] = pos[t->v[1]]; v[2] = pos[t->v[2]];
        presplit_tri(&c, v, bx, ids[i], k);
    }
    free(prio);
    *rlo = c.lo; *rhi = c.hi; *rids = c.ids;
    return c.n;
}

int bvh_build(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
              const vec3 *positions, int threads) {
    return bvh_build_lanes(out, lo, hi, ids, n, tris, positions, threads, BVH_LEAF_WIDTH, cpu_kernels_get()->bvh_width);
}

int bvh_build_lanes(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                    const vec3 *positions, int threads, int sah_lanes, int width) {
    double t0 = timer_now();
    memset(out, 0, sizeof(*out));
    out->width = width == BVH8_WIDTH ? BVH8_WIDTH : BVH4_WIDTH;
    if (n == 0) return 0;
    vec3 *rlo = NULL, *rhi = NULL;
    uint32_t *rids = NULL;
    size_t nrefs = presplit(lo, hi, ids, n, tris, positions, &rlo, &rhi, &rids);
    if (nrefs) { lo = rlo; hi = rhi; ids = rids; n = nrefs; }
    int rc = build_refs(out, lo, hi, ids, n, tris, threads, sah_lanes < 1 ? 1 : sah_lanes);
    free(rlo); free(rhi); free(rids);
    out->build_seconds = timer_now() - t0;
    return rc;
}

static int build_refs(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                      int threads, int sah_lanes) {
    builder b;
    memset(&b, 0, sizeof(b));
    b.sah_lanes = sah_lanes;
    b.lo = lo;
    b.hi = hi;
    b.ids = ids;
    b.centroid = malloc(n * sizeof(vec3));
    b.order = malloc(n * sizeof(uint32_t));
    b.nodes = malloc((2 * n) * sizeof(bvh_node));
    out->prim_ids = malloc(n * sizeof(uint32_t));
    if (!b.centroid || !b.order || !b.nodes || !out->prim_ids) {
        free(b.centroid); free(b.order); free(b.nodes); free(out->prim_ids);
        out->prim_ids = NULL;
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        b.centroid[i] = vscale(vadd(lo[i], hi[i]), 0.5f);
        b.order[i] = (uint32_t)i;
    }
    atomic_init(&b.nnodes, 1);
    /* threads <= 0: all cores; subtrees are handed out down to depth log2(threads) + 1 */
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    b.spawn_depth = 0;
    while ((1 << b.spawn_depth) < threads) b.spawn_depth++;
    if (threads > 1) b.spawn_depth++;
    build_stats st;
    memset(&st, 0, sizeof st);
    build_node(&b, &st, 0, 0, (uint32_t)n, 0);
    size_t nnodes = atomic_load(&b.nnodes);
    for (size_t i = 0; i < n; ++i) out->prim_ids[i] = ids[b.order[i]];
    bvh_node *shrunk = realloc(b.nodes, nnodes * sizeof(bvh_node));
    out->nodes = shrunk ? shrunk : b.nodes;
    out->nnodes = nnodes;
    out->nprims = n;
    out->max_depth = st.max_depth;
    out->max_leaf = st.max_leaf;
    out->nleaves = st.nleaves;
    box root; root.lo = out->nodes[0].lo; root.hi = out->nodes[0].hi;
    out->sah_cost = sah_of(out->nodes, 0, box_area(root));
    /* every wide node absorbs at least one binary inner node (a full binary tree of nnodes has
     * nnodes / 2 of them; a leaf root makes one wide node) */
    size_t wsize = bvh_wnode_size(out->width);
    void *wide = malloc((out->nnodes / 2 + 1) * wsize);
    /* each leaf needs ceil(count / 4) <= count / 4 + 1 blocks */
    size_t max_blocks = bvh_leaf4_bound(st.nleaves, n);
    out->leaves = malloc(max_blocks * sizeof(bvh_leaf4));
    if (!wide || !out->leaves) { free(wide); free(b.centroid); free(b.order); bvh_free(out); return -1; }
    out->nwnodes = bvh_collapse(out->nodes, out->prim_ids, tris, out->width, wide, out->leaves, &out->nleaf4);
    /* the final copy on cache-line boundaries: a node is read as whole lines */
    out->wnodes = aligned_alloc(64, (out->nwnodes * wsize + 63) / 64 * 64);
    if (out->wnodes) memcpy(out->wnodes, wide, out->nwnodes * wsize);
    free(wide);
    if (!out->wnodes) { free(b.centroid); free(b.order); bvh_free(out); return -1; }
    bvh_leaf4 *shrunkl = realloc(out->leaves, out->nleaf4 * sizeof(bvh_leaf4));
    if (shrunkl) out->leaves = shrunkl;
    free(b.centroid);
    free(b.order);
    /* references beyond BVH_MAX_REF do not fit a traversal stack entry (2^29 nodes: 64 GiB) */
    if (out->nwnodes > (size_t)BVH_MAX_REF + 1 || out->nleaf4 > (size_t)BVH_MAX_REF + 1) { bvh_free(out); return -1; }
    return 0;
}

void bvh_free(bvh *b) {
    free(b->nodes);
    free(b->wnodes);
    free(b->leaves);
    free(b->prim_ids);
    memset(b, 0, sizeof(*b));
}
