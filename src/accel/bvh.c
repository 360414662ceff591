/* SAH BVH builder: binned object splits (Wald 2007, centroids in 64 bins per axis) and spatial
 * splits (Stich et al. 2009) that clip long triangles into both children where the object
 * split's children would overlap, within a budget of extra references. Children of an inner
 * node are stored next to each other so a node needs one child index. */
#include "accel/bvh.h"
#include "kernel/bvh_traverse.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/timer.h"

#define BINS     64 /* 32: 10-25 % more tests per ray on Sponza (docs/performance-log.md) */
#define MAX_LEAF 8  /* primitives; a leaf is ceil(count / 4) leaf blocks */
/* the traversal packs a leaf's block count into BVH_COUNT_BITS of a stack entry */
_Static_assert(MAX_LEAF <= BVH_MAX_LEAF_BLOCKS * BVH_LEAF_WIDTH, "leaf too large for the traversal stack");
#define PARALLEL_MIN_PRIMS  20000               /* smaller subtrees are not worth a thread */
#define MAX_DEPTH           (BVH_MAX_DEPTH - 1) /* the traversal stack is sized for this */
#define COST_TRAVERSE       1.0f
#define COST_INTERSECT      1.0f /* per leaf block: its four lanes are tested together */
/* Spatial splits: at most SPATIAL_BUDGET extra references (a fraction of the primitives; each
 * costs about a leaf lane, 16 bytes), tried where an object split's children overlap by more
 * than SPATIAL_MIN_OVERLAP of the scene's surface area. Stich et al. use 1e-5; on Sponza 1e-3
 * finds the same SAH cost, and on meshes of even triangles it skips most of the clipping, which
 * made their builds 7x slower at 1e-5 for no gain (docs/performance-log.md). */
#define SPATIAL_BUDGET      0.15
#define SPATIAL_MIN_OVERLAP 1e-3f

/* SAH cost of a leaf of n primitives in units of `lanes` primitives tested together: the CPU
 * tests the four lanes of a block at once (BVH_LEAF_WIDTH), the GPU one lane at a time (1). */
static float leaf_cost_of(uint32_t n, int lanes) { return (float)((n + (uint32_t)lanes - 1) / (uint32_t)lanes); }
/* ... where only triangles share a test: spheres and quads are tested one by one (scalar). */
static float leaf_cost_mixed(uint32_t ntri, uint32_t nother, int lanes) {
    return leaf_cost_of(ntri, lanes) + (float)nother;
}
static float leaf_blocks(uint32_t n) { return leaf_cost_of(n, BVH_LEAF_WIDTH); }

typedef struct box {
    vec3 lo, hi;
} box;

static box box_empty(void) {
    box b;
    b.lo = v3s(INFINITY);
    b.hi = v3s(-INFINITY);
    return b;
}
static void box_grow(box *b, vec3 lo, vec3 hi) {
    b->lo = vmin(b->lo, lo);
    b->hi = vmax(b->hi, hi);
}
static float box_area(box b) {
    vec3 d = vsub(b.hi, b.lo);
    if (d.x < 0.0f) return 0.0f;
    return 2.0f * (d.x * d.y + d.y * d.z + d.z * d.x);
}

/* A reference: a primitive, or the part of a split triangle inside `lo..hi`. The build works on
 * a range of references with room to grow behind it (spatial splits duplicate references). */
typedef struct bref {
    vec3 lo, hi;
    uint32_t id;
} bref;

/* Shared by the build threads: each subtree works on its own range of `refs` and its own
 * nodes; only node allocation and the statistics are shared (atomics / per-task merge). */
typedef struct builder {
    bref *refs;
    const triangle *tris; /* with positions: to clip split triangles (NULL: boxes are clipped) */
    const vec3 *positions;
    bvh_node *nodes;
    atomic_size_t nnodes;
    int spawn_depth;   /* subtrees above this depth may be built on their own thread */
    int sah_lanes;     /* primitives the SAH counts as one leaf test (leaf_cost_of) */
    float min_overlap; /* spatial splits are tried where the object split's children overlap
                              by more than this area (SPATIAL_MIN_OVERLAP of the root's) */
} builder;

/* Statistics of one build task, merged when its thread is joined. */
typedef struct build_stats {
    int max_depth, max_leaf;
    size_t nleaves;
} build_stats;

/* Bin of a coordinate, clamped before the float-to-int conversion. */
static int bin_of(float c, float origin, float scale) {
    float f = (c - origin) * scale;
    if (!(f > 0.0f)) return 0;
    if (f >= (float)(BINS - 1)) return BINS - 1;
    return (int)f;
}

static int is_tri(const bref *r) { return prim_id_kind(r->id) == PRIM_TRIANGLE; }
static float centroid_of(const bref *r, int axis) { return 0.5f * (vcomp(r->lo, axis) + vcomp(r->hi, axis)); }
static int box_valid(box b) { return b.lo.x <= b.hi.x && b.lo.y <= b.hi.y && b.lo.z <= b.hi.z; }

static void split_bounds(const vec3 v[3], box bx, int axis, float s, box *left, box *right);

/* The parts of reference r inside `part` (a box within r's) on either side of the plane
 * x[axis] = s; a side the reference does not reach gets an empty (invalid) box. */
static void clip_ref(const builder *b, const bref *r, box part, int axis, float s, box *left, box *right) {
    const triangle *t = &b->tris[prim_id_index(r->id)];
    vec3 v[3];
    v[0] = b->positions[t->v[0]];
    v[1] = b->positions[t->v[1]];
    v[2] = b->positions[t->v[2]];
    split_bounds(v, part, axis, s, left, right);
}

/* A split candidate: object (partition by centroid bin) or spatial (straddling triangles are
 * clipped into both children), on `axis` between bins `bin` and bin + 1. */
typedef struct split {
    float cost; /* SAH numerator: sum of child area x child leaf cost */
    int axis, bin, spatial;
    float origin, scale;
    box left, right;
    uint32_t nleft, nright;
} split;

/* One axis's bins: the boxes of what fell in each bin, and how many references (and how many of
 * them triangles) begin ("enter") and end ("leave") in it. An object split's reference begins
 * and ends in its centroid's bin; a spatial split's spans the bins its clipped parts fill. */
typedef struct bins {
    box box[BINS];
    uint32_t enter[BINS], enter_tri[BINS], leave[BINS], leave_tri[BINS];
} bins;

static void bins_clear(bins *bn) {
    for (int k = 0; k < BINS; ++k) {
        bn->box[k] = box_empty();
        bn->enter[k] = bn->enter_tri[k] = bn->leave[k] = bn->leave_tri[k] = 0;
    }
}

/* Sweeps the planes between bins (from the right, then from the left) and keeps in *best any
 * split cheaper than it whose children hold at most `room` references in all. */
static void bins_sweep(const builder *b, const bins *bn, int axis, float origin, float scale, uint32_t room,
                       int spatial, split *best) {
    box right_box[BINS], acc = box_empty();
    uint32_t right_count[BINS], right_tri[BINS], n = 0, ntri = 0;
    for (int k = BINS - 1; k > 0; --k) {
        box_grow(&acc, bn->box[k].lo, bn->box[k].hi);
        n += bn->leave[k];
        ntri += bn->leave_tri[k];
        right_box[k] = acc;
        right_count[k] = n;
        right_tri[k] = ntri;
    }
    acc = box_empty();
    n = 0;
    ntri = 0;
    for (int k = 0; k < BINS - 1; ++k) {
        box_grow(&acc, bn->box[k].lo, bn->box[k].hi);
        n += bn->enter[k];
        ntri += bn->enter_tri[k];
        if (n == 0 || right_count[k + 1] == 0 || n + right_count[k + 1] > room) continue;
        float cost = box_area(acc) * leaf_cost_mixed(ntri, n - ntri, b->sah_lanes) +
                     box_area(right_box[k + 1]) *
                         leaf_cost_mixed(right_tri[k + 1], right_count[k + 1] - right_tri[k + 1], b->sah_lanes);
        if (cost < best->cost) {
            best->cost = cost;
            best->axis = axis;
            best->bin = k;
            best->spatial = spatial;
            best->origin = origin;
            best->scale = scale;
            best->left = acc;
            best->right = right_box[k + 1];
            best->nleft = n;
            best->nright = right_count[k + 1];
        }
    }
}

/* The cheapest object split of the references by centroid bins over cbounds. */
static void object_split(const builder *b, uint32_t start, uint32_t count, box cbounds, split *best) {
    vec3 ext = vsub(cbounds.hi, cbounds.lo);
    for (int axis = 0; axis < 3; ++axis) {
        float e = vcomp(ext, axis);
        /* a denormal extent makes BINS / e overflow: such an axis cannot be split anyway */
        if (!(e > 0.0f) || !isfinite((float)BINS / e)) continue;
        bins bn;
        bins_clear(&bn);
        float scale = (float)BINS / e, origin = vcomp(cbounds.lo, axis);
        for (uint32_t i = start; i < start + count; ++i) {
            const bref *r = &b->refs[i];
            int k = bin_of(centroid_of(r, axis), origin, scale);
            uint32_t tri = (uint32_t)is_tri(r);
            bn.enter[k]++;
            bn.enter_tri[k] += tri;
            bn.leave[k]++;
            bn.leave_tri[k] += tri;
            box_grow(&bn.box[k], r->lo, r->hi);
        }
        bins_sweep(b, &bn, axis, origin, scale, count, 0, best);
    }
}

/* Where a reference goes in a spatial split at bin boundary `bin`: -1 left, 1 right, 0 both.
 * Only triangles are split; other primitives go by their centroid. */
static int spatial_side(const bref *r, int axis, int bin, float origin, float scale) {
    if (!is_tri(r)) return bin_of(centroid_of(r, axis), origin, scale) <= bin ? -1 : 1;
    if (bin_of(vcomp(r->hi, axis), origin, scale) <= bin) return -1;
    if (bin_of(vcomp(r->lo, axis), origin, scale) > bin) return 1;
    return 0;
}

/* The cheapest spatial split (Stich et al. 2009, "Spatial Splits in Bounding Volume
 * Hierarchies"): bins over the node's bounds, each triangle clipped into every bin it spans,
 * counted where it enters and where it leaves. Only splits that fit the room (`room`
 * references) are considered. */
static void spatial_split(const builder *b, uint32_t start, uint32_t count, box bounds, uint32_t room, split *best) {
    vec3 ext = vsub(bounds.hi, bounds.lo);
    for (int axis = 0; axis < 3; ++axis) {
        float e = vcomp(ext, axis);
        if (!(e > 0.0f) || !isfinite((float)BINS / e)) continue;
        bins bn;
        bins_clear(&bn);
        float scale = (float)BINS / e, origin = vcomp(bounds.lo, axis), width = e / (float)BINS;
        for (uint32_t i = start; i < start + count; ++i) {
            const bref *r = &b->refs[i];
            int k0, k1, tri = is_tri(r);
            if (tri) {
                k0 = bin_of(vcomp(r->lo, axis), origin, scale);
                k1 = bin_of(vcomp(r->hi, axis), origin, scale);
            } else
                k0 = k1 = bin_of(centroid_of(r, axis), origin, scale);
            bn.enter[k0]++;
            bn.enter_tri[k0] += (uint32_t)tri;
            bn.leave[k1]++;
            bn.leave_tri[k1] += (uint32_t)tri;
            box rest;
            rest.lo = r->lo;
            rest.hi = r->hi;
            for (int k = k0; k < k1; ++k) {
                box l, rr;
                clip_ref(b, r, rest, axis, origin + (float)(k + 1) * width, &l, &rr);
                if (box_valid(l)) box_grow(&bn.box[k], l.lo, l.hi);
                rest = rr;
                if (!box_valid(rest)) break;
            }
            if (box_valid(rest)) box_grow(&bn.box[k1], rest.lo, rest.hi);
        }
        bins_sweep(b, &bn, axis, origin, scale, room, 1, best);
    }
}

/* Partitions by centroid bin; returns the number of references that go left. */
static uint32_t object_partition(builder *b, uint32_t start, uint32_t count, const split *sp) {
    uint32_t i = start, j = start + count;
    while (i < j) {
        if (bin_of(centroid_of(&b->refs[i], sp->axis), sp->origin, sp->scale) <= sp->bin)
            i++;
        else {
            bref t = b->refs[i];
            b->refs[i] = b->refs[--j];
            b->refs[j] = t;
        }
    }
    return i - start;
}

/* Partitions into left, straddling and right references, then replaces each straddling one by
 * its clipped parts: left parts after the left ones, right parts before the right ones, which
 * move up by the number of duplicates (the caller checked the room). Returns -1 when out of
 * memory (nothing changed), else sets the child counts (the right range starts at start + *nl). */
static int spatial_partition(builder *b, uint32_t start, uint32_t count, const split *sp, uint32_t *nl, uint32_t *nr) {
    bref *r = b->refs + start;
    /* three-way partition: [0, lo) left, [lo, mid) straddling, [hi, count) right */
    uint32_t lo = 0, mid = 0, hi = count;
    while (mid < hi) {
        int side = spatial_side(&r[mid], sp->axis, sp->bin, sp->origin, sp->scale);
        bref t = r[mid];
        if (side < 0) {
            r[mid] = r[lo];
            r[lo] = t;
            lo++;
            mid++;
        } else if (side > 0) {
            r[mid] = r[--hi];
            r[hi] = t;
        } else
            mid++;
    }
    uint32_t nstraddle = hi - lo, nright = count - hi;
    bref *both = malloc((nstraddle ? 2 * nstraddle : 1) * sizeof(bref)), *rparts = both + nstraddle;
    if (!both) return -1;
    memcpy(both, r + lo, nstraddle * sizeof(bref));
    float s = sp->origin + (float)(sp->bin + 1) / sp->scale;
    uint32_t left = lo, nparts = 0;
    for (uint32_t k = 0; k < nstraddle; ++k) {
        box part, l, rr;
        part.lo = both[k].lo;
        part.hi = both[k].hi;
        clip_ref(b, &both[k], part, sp->axis, s, &l, &rr);
        if (!box_valid(l) && !box_valid(rr)) l = part; /* rounding: keep it whole, on the left */
        if (box_valid(l)) {
            r[left] = both[k];
            r[left].lo = l.lo;
            r[left].hi = l.hi;
            left++;
        }
        if (box_valid(rr)) {
            rparts[nparts] = both[k];
            rparts[nparts].lo = rr.lo;
            rparts[nparts].hi = rr.hi;
            nparts++;
        }
    }
    /* right: the clipped parts, then the references that lay right of the plane */
    memmove(r + left + nparts, r + hi, nright * sizeof(bref));
    memcpy(r + left, rparts, nparts * sizeof(bref));
    free(both);
    *nl = left;
    *nr = nparts + nright;
    return 0;
}

static void make_leaf(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count) {
    b->nodes[node].index = start;
    b->nodes[node].count = count;
    st->nleaves++;
    if ((int)count > st->max_leaf) st->max_leaf = (int)count;
}

static void build_node(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count, uint32_t limit,
                       int depth);

typedef struct build_task {
    builder *b;
    build_stats st;
    uint32_t node, start, count, limit;
    int depth;
} build_task;

static void *build_task_main(void *arg) {
    build_task *t = arg;
    build_node(t->b, &t->st, t->node, t->start, t->count, t->limit, t->depth);
    return NULL;
}

/* Builds the subtree of `count` references at refs[start ..]; it may use refs up to `limit`. */
static void build_node(builder *b, build_stats *st, uint32_t node, uint32_t start, uint32_t count, uint32_t limit,
                       int depth) {
    box bounds = box_empty(), cbounds = box_empty();
    uint32_t count_tri = 0;
    for (uint32_t i = start; i < start + count; ++i) {
        const bref *r = &b->refs[i];
        box_grow(&bounds, r->lo, r->hi);
        vec3 c = vscale(vadd(r->lo, r->hi), 0.5f);
        box_grow(&cbounds, c, c);
        count_tri += (uint32_t)is_tri(r);
    }
    b->nodes[node].lo = bounds.lo;
    b->nodes[node].hi = bounds.hi;
    if (depth > st->max_depth) st->max_depth = depth;
    if (count <= 1 || depth >= MAX_DEPTH) {
        make_leaf(b, st, node, start, count);
        return;
    }

    split best;
    best.cost = INFINITY;
    best.axis = -1;
    object_split(b, start, count, cbounds, &best);
    /* spatial splits where the object split leaves its children overlapping and there is room */
    if (b->tris && best.axis >= 0 && limit - start > count && count_tri > 0) {
        box ov;
        ov.lo = vmax(best.left.lo, best.right.lo);
        ov.hi = vmin(best.left.hi, best.right.hi);
        if (box_valid(ov) && box_area(ov) > b->min_overlap)
            spatial_split(b, start, count, bounds, limit - start, &best);
    }
    float parent_area = box_area(bounds);
    float split_cost = parent_area > 0.0f ? COST_TRAVERSE + COST_INTERSECT * best.cost / parent_area : INFINITY;
    float leaf_cost = COST_INTERSECT * leaf_cost_mixed(count_tri, count - count_tri, b->sah_lanes);

    uint32_t nl = 0, nr = 0;
    if (best.axis >= 0 && !(split_cost >= leaf_cost && count <= MAX_LEAF)) {
        if (!best.spatial || spatial_partition(b, start, count, &best, &nl, &nr)) {
            if (best.spatial) { /* out of memory: the object split instead */
                best.cost = INFINITY;
                best.axis = -1;
                object_split(b, start, count, cbounds, &best);
            }
            if (best.axis >= 0) {
                nl = object_partition(b, start, count, &best);
                nr = count - nl;
            }
        }
    } else if (count <= MAX_LEAF) {
        make_leaf(b, st, node, start, count);
        return;
    }
    if (nl == 0 || nr == 0) {
        /* all centroids coincide (or a split left one side empty): split by position */
        count = nl + nr ? nl + nr : count;
        nl = count / 2;
        nr = count - nl;
    }
    /* share the room behind the children in proportion to their sizes: the right range moves up */
    uint32_t room = limit - start - nl - nr;
    uint32_t rstart = start + nl + (uint32_t)((uint64_t)room * nl / (nl + nr));
    if (rstart != start + nl) memmove(b->refs + rstart, b->refs + start + nl, nr * sizeof(bref));

    uint32_t left = (uint32_t)atomic_fetch_add(&b->nnodes, 2);
    b->nodes[node].index = left;
    b->nodes[node].count = 0;
    /* large subtrees near the root: the left one on a new thread, the right one here */
    pthread_t th;
    build_task task;
    int spawned = 0;
    if (depth < b->spawn_depth && count > PARALLEL_MIN_PRIMS) {
        task.b = b;
        task.node = left;
        task.start = start;
        task.count = nl;
        task.limit = rstart;
        task.depth = depth + 1;
        memset(&task.st, 0, sizeof task.st);
        spawned = pthread_create(&th, NULL, build_task_main, &task) == 0;
    }
    if (!spawned) build_node(b, st, left, start, nl, rstart, depth + 1);
    build_node(b, st, left + 1, rstart, nr, limit, depth + 1);
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
                   offsetof(bvh4_node, count) == 7 * BVH4_WIDTH * sizeof(float),
               "node rows");
#define BVH_MAX_WIDTH BVH8_WIDTH

/* One node of width W: its box rows and where its slots' references go. */
typedef struct wnode {
    float *lo[3], *hi[3];
    uint32_t *refs;
    int width;
} wnode;

static wnode wnode_at(void *base, int width, size_t at) {
    wnode w;
    float *f = (float *)((char *)base + at * bvh_wnode_size(width));
    for (int a = 0; a < 3; ++a) {
        w.lo[a] = f + a * width;
        w.hi[a] = f + (3 + a) * width;
    }
    w.refs = (uint32_t *)(f + 6 * width);
    w.width = width;
    return w;
}

static void set_ref(wnode *n, int i, uint32_t child, uint32_t count) {
    if (n->width == BVH8_WIDTH)
        n->refs[i] = child << BVH_COUNT_BITS | count;
    else {
        n->refs[i] = child;
        n->refs[BVH4_WIDTH + i] = count;
    }
}

static void get_ref(const wnode *n, int i, uint32_t *child, uint32_t *count) {
    if (n->width == BVH8_WIDTH) {
        *child = n->refs[i] >> BVH_COUNT_BITS;
        *count = n->refs[i] & BVH_MAX_LEAF_BLOCKS;
    } else {
        *child = n->refs[i];
        *count = n->refs[BVH4_WIDTH + i];
    }
}

/* A leaf of the wide tree is a binary leaf or a whole binary subtree of at most COLLAPSE_MAX_LEAF
 * distinct primitives: COLLAPSE_MAX_LEAF_BLOCKS blocks, so that the leaf slots of a compressed
 * node stay within the offsets its meta bytes hold (the 8th slot's blocks start after seven
 * others' at most; types.h, cw8_node). */
#define COLLAPSE_MAX_LEAF_BLOCKS (BVH_COLLAPSE_MAX_LEAF / BVH_LEAF_WIDTH)
#define COLLAPSE_MAX_LEAF        BVH_COLLAPSE_MAX_LEAF
_Static_assert((CW8_WIDTH - 1) * COLLAPSE_MAX_LEAF_BLOCKS <= CW8_MAX_OFFSET, "leaf blocks past a cw8 node's offsets");
_Static_assert(COLLAPSE_MAX_LEAF_BLOCKS <= BVH_MAX_LEAF_BLOCKS, "leaf too large for the traversal stack");
_Static_assert(MAX_LEAF <= COLLAPSE_MAX_LEAF, "the builder's leaves must fit the collapse's");

/* The collapse's choice for one binary node (Ylitie, Karras & Laine 2017, section 3.1): as one
 * slot of its parent it is a leaf or a wide node of its own (`leaf`); a wide node of its own
 * gives `own` of its slots to its left child, the rest to its right; and where its parent hands
 * it i > 1 slots, split[i] of them go to its left child and the others to its right (0: it
 * takes one slot itself). */
typedef struct collapse_choice {
    uint8_t leaf, own, split[BVH_MAX_WIDTH + 1];
} collapse_choice;

typedef struct collapser {
    const bvh_node *bin;
    void *out;
    int width, lanes; /* lanes: primitives the SAH counts as one leaf test (leaf_cost_of) */
    size_t n;
    const uint32_t *prim_ids;
    const triangle *tris;
    bvh_leaf4 *leaves;
    size_t nleaves;
    collapse_choice *choice; /* per binary node */
    double node_cost;        /* BVH_COLLAPSE_NODE_COST */
} collapser;

/* Appends the leaf blocks of n references (each primitive once: split references of one
 * triangle may share a leaf); returns the first and sets *nblocks. */
static uint32_t emit_leaf(collapser *c, const uint32_t *ids, uint32_t n, uint32_t *nblocks) {
    uint32_t first = (uint32_t)c->nleaves, lane = BVH_LEAF_WIDTH;
    bvh_leaf4 *l = NULL;
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t id = ids[k], dup = 0;
        for (uint32_t q = 0; q < k; ++q) dup |= ids[q] == id;
        if (dup) continue;
        if (lane == BVH_LEAF_WIDTH) {
            l = &c->leaves[c->nleaves++];
            for (uint32_t j = 0; j < BVH_LEAF_WIDTH; ++j) {
                l->v0[j] = l->v1[j] = l->v2[j] = 0;
                l->prim[j] = PRIM_NONE;
            }
            lane = 0;
        }
        l->prim[lane] = id;
        if (prim_id_kind(id) == PRIM_TRIANGLE) {
            const triangle *t = &c->tris[prim_id_index(id)];
            l->v0[lane] = t->v[0];
            l->v1[lane] = t->v[1];
            l->v2[lane] = t->v[2];
        }
        lane++;
    }
    *nblocks = (uint32_t)c->nleaves - first;
    return first;
}

/* The references of binary subtree b in leaf order into ids (room for `room`); returns how many
 * there are, or room + 1 when they do not fit. */
static uint32_t gather_refs(const collapser *c, uint32_t b, uint32_t *ids, uint32_t room) {
    const bvh_node *n = &c->bin[b];
    if (n->count > 0) {
        if (n->count > room) return room + 1;
        memcpy(ids, c->prim_ids + n->index, n->count * sizeof(uint32_t));
        return n->count;
    }
    uint32_t nl = gather_refs(c, n->index, ids, room);
    if (nl > room) return nl;
    uint32_t nr = gather_refs(c, n->index + 1, ids + nl, room - nl);
    return nr > room - nl ? room + 1 : nl + nr;
}

/* The most references a subtree may have to become a leaf (spatial splits: twice the primitives). */
#define COLLAPSE_MAX_REFS (2 * COLLAPSE_MAX_LEAF)

/* SAH cost of binary subtree b (unnormalised areas) of nref references as a leaf: +infinity when
 * it holds more than COLLAPSE_MAX_LEAF distinct primitives (a binary leaf is always one). */
static double leaf_sah(const collapser *c, uint32_t b, uint32_t nref, float area) {
    const bvh_node *n = &c->bin[b];
    uint32_t buf[COLLAPSE_MAX_REFS];
    const uint32_t *ids = c->prim_ids + n->index;
    if (n->count == 0) {
        if (nref > COLLAPSE_MAX_REFS) return INFINITY;
        gather_refs(c, b, buf, COLLAPSE_MAX_REFS);
        ids = buf;
    }
    uint32_t ntri = 0, nother = 0;
    for (uint32_t k = 0; k < nref; ++k) {
        uint32_t dup = 0;
        for (uint32_t q = 0; q < k; ++q) dup |= ids[q] == ids[k];
        if (dup) continue;
        if (prim_id_kind(ids[k]) == PRIM_TRIANGLE)
            ntri++;
        else
            nother++;
    }
    if (n->count == 0 && ntri + nother > COLLAPSE_MAX_LEAF) return INFINITY;
    return (double)area * COST_INTERSECT * leaf_cost_mixed(ntri, nother, c->lanes);
}

static float node_area(const bvh_node *n) {
    box bx;
    bx.lo = n->lo;
    bx.hi = n->hi;
    return box_area(bx);
}

/* The dynamic programme, bottom up: cost[i] (i = 1 .. width) is the least SAH cost (unnormalised
 * areas) of binary subtree b as at most i slots of a wide node; records the choices and returns
 * the subtree's reference count. O(width^2) per node. */
static uint32_t collapse_costs(collapser *c, uint32_t b, double cost[BVH_MAX_WIDTH + 1]) {
    const bvh_node *n = &c->bin[b];
    collapse_choice *ch = &c->choice[b];
    const int W = c->width;
    float area = node_area(n);
    memset(ch, 0, sizeof *ch);
    if (n->count > 0) {
        ch->leaf = 1;
        double l = leaf_sah(c, b, n->count, area);
        for (int i = 1; i <= W; ++i) cost[i] = l;
        return n->count;
    }
    double left[BVH_MAX_WIDTH + 1], right[BVH_MAX_WIDTH + 1], split[BVH_MAX_WIDTH + 1] = {0};
    uint32_t nref = collapse_costs(c, n->index, left);
    nref += collapse_costs(c, n->index + 1, right);
    /* split[i]: the children side by side in i slots, the best division */
    uint8_t at[BVH_MAX_WIDTH + 1] = {0};
    for (int i = 2; i <= W; ++i) {
        split[i] = INFINITY;
        at[i] = 1;
        for (int k = 1; k < i; ++k)
            if (left[k] + right[i - k] < split[i]) {
                split[i] = left[k] + right[i - k];
                at[i] = (uint8_t)k;
            }
    }
    double inner = (double)area * c->node_cost + split[W], leaf = leaf_sah(c, b, nref, area);
    ch->own = at[W];
    ch->leaf = leaf <= inner;
    cost[1] = ch->leaf ? leaf : inner;
    for (int i = 2; i <= W; ++i) {
        cost[i] = cost[1];
        if (split[i] < cost[1]) {
            cost[i] = split[i];
            ch->split[i] = at[i];
        }
    }
    return nref;
}

/* The slots binary subtree b fills when its parent hands it i of them (collapse_choice.split). */
static void collect_slots(const collapser *c, uint32_t b, int i, uint32_t *kids, int *nk) {
    int k = i > 1 ? c->choice[b].split[i] : 0;
    if (k == 0) {
        kids[(*nk)++] = b;
        return;
    }
    collect_slots(c, c->bin[b].index, k, kids, nk);
    collect_slots(c, c->bin[b].index + 1, i - k, kids, nk);
}

static void set_slot(wnode *n, int i, const bvh_node *b) {
    for (int a = 0; a < 3; ++a) {
        n->lo[a][i] = vcomp(b->lo, a);
        n->hi[a][i] = vcomp(b->hi, a);
    }
}

static int is_leaf_slot(const collapser *c, uint32_t b) { return c->bin[b].count > 0 || c->choice[b].leaf; }

/* Emits the wide node of binary node b at out[at] with the children the programme chose. */
static void collapse(collapser *c, uint32_t b, size_t at, uint32_t *ids) {
    uint32_t kids[BVH_MAX_WIDTH];
    int nk = 0;
    const bvh_node *bn = &c->bin[b];
    if (bn->count > 0) {
        kids[nk++] = b;
    } /* a leaf root: one leaf child */
    else {
        collect_slots(c, bn->index, c->choice[b].own, kids, &nk);
        collect_slots(c, bn->index + 1, c->width - c->choice[b].own, kids, &nk);
    }
    memset((char *)c->out + at * bvh_wnode_size(c->width), 0, bvh_wnode_size(c->width));
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
        if (is_leaf_slot(c, kids[i])) {
            uint32_t nblocks, first;
            if (k->count > 0)
                first = emit_leaf(c, c->prim_ids + k->index, k->count, &nblocks);
            else
                first = emit_leaf(c, ids, gather_refs(c, kids[i], ids, COLLAPSE_MAX_REFS), &nblocks);
            set_ref(&n, i, first, nblocks);
        } else {
            inner_at[i] = c->n++;
            set_ref(&n, i, (uint32_t)inner_at[i], 0);
        }
    }
    for (int i = 0; i < nk; ++i)
        if (!is_leaf_slot(c, kids[i])) collapse(c, kids[i], inner_at[i], ids);
}

size_t bvh_collapse(const bvh_node *bin, size_t nbin, const uint32_t *prim_ids, const triangle *tris, int width,
                    int sah_lanes, void *out, bvh_leaf4 *leaves, size_t *nleaf4) {
    collapser c;
    c.bin = bin;
    c.out = out;
    c.width = width;
    c.lanes = sah_lanes < 1 ? 1 : sah_lanes;
    c.n = 1;
    c.prim_ids = prim_ids;
    c.tris = tris;
    c.leaves = leaves;
    c.nleaves = 0;
    c.node_cost = BVH_COLLAPSE_NODE_COST(width);
    c.choice = malloc((nbin ? nbin : 1) * sizeof(collapse_choice));
    if (!c.choice) return 0;
    double cost[BVH_MAX_WIDTH + 1];
    collapse_costs(&c, 0, cost);
    uint32_t ids[COLLAPSE_MAX_REFS];
    collapse(&c, 0, 0, ids);
    free(c.choice);
    *nleaf4 = c.nleaves;
    return c.n;
}

/* The wide tree's SAH cost below node `at` (its box bx), relative to root_area, as the collapse
 * counts it: BVH_COLLAPSE_NODE_COST per node, COST_INTERSECT per leaf test as the binary build
 * counts them (leaf_cost_mixed in units of `lanes` primitives). */
static double wide_sah_of(const void *wide, int width, const bvh_leaf4 *leaves, size_t at, box bx, float root_area,
                          int lanes) {
    wnode n = wnode_at((void *)(uintptr_t)wide, width, at);
    double cost = BVH_COLLAPSE_NODE_COST(width) * box_area(bx) / root_area;
    for (int i = 0; i < width; ++i) {
        if (n.lo[0][i] == INFINITY) continue; /* an empty slot */
        uint32_t child, count;
        get_ref(&n, i, &child, &count);
        box cb;
        cb.lo = v3(n.lo[0][i], n.lo[1][i], n.lo[2][i]);
        cb.hi = v3(n.hi[0][i], n.hi[1][i], n.hi[2][i]);
        if (count == 0) {
            cost += wide_sah_of(wide, width, leaves, child, cb, root_area, lanes);
            continue;
        }
        uint32_t ntri = 0, nother = 0;
        for (uint32_t k = 0; k < count; ++k)
            for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                uint32_t id = leaves[child + k].prim[j];
                if (id == PRIM_NONE) continue;
                if (prim_id_kind(id) == PRIM_TRIANGLE)
                    ntri++;
                else
                    nother++;
            }
        cost += COST_INTERSECT * leaf_cost_mixed(ntri, nother, lanes) * box_area(cb) / root_area;
    }
    return cost;
}

static double sah_of(const bvh_node *nodes, uint32_t node, float root_area) {
    const bvh_node *n = &nodes[node];
    box bx;
    bx.lo = n->lo;
    bx.hi = n->hi;
    double a = root_area > 0.0f ? box_area(bx) / root_area : 0.0;
    if (n->count > 0) return a * COST_INTERSECT * leaf_blocks(n->count);
    return a * COST_TRAVERSE + sah_of(nodes, n->index, root_area) + sah_of(nodes, n->index + 1, root_area);
}

static int build_refs(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, size_t cap,
                      const triangle *tris, const vec3 *positions, int threads, int sah_lanes);

/* ---- spatial-split clipping ----------------------------------------------------------------- */
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
            if (axis == 0)
                p.x = s;
            else if (axis == 1)
                p.y = s;
            else
                p.z = s;
            box_grow(left, p, p);
            box_grow(right, p, p);
        }
    }
    left->lo = vmax(left->lo, bx.lo);
    left->hi = vmin(left->hi, bx.hi);
    right->lo = vmax(right->lo, bx.lo);
    right->hi = vmin(right->hi, bx.hi);
    if (axis == 0) {
        left->hi.x = kmin(left->hi.x, s);
        right->lo.x = kmax(right->lo.x, s);
    } else if (axis == 1) {
        left->hi.y = kmin(left->hi.y, s);
        right->lo.y = kmax(right->lo.y, s);
    } else {
        left->hi.z = kmin(left->hi.z, s);
        right->lo.z = kmax(right->lo.z, s);
    }
}

static atomic_size_t builds; /* bvh_build_count */

size_t bvh_build_count(void) { return atomic_load(&builds); }

int bvh_build(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
              const vec3 *positions, int threads, int width) {
    return bvh_build_lanes(out, lo, hi, ids, n, tris, positions, threads, BVH_LEAF_WIDTH, width);
}

int bvh_build_lanes(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                    const vec3 *positions, int threads, int sah_lanes, int width) {
    double t0 = timer_now();
    atomic_fetch_add(&builds, 1u);
    memset(out, 0, sizeof(*out));
    out->width = width == BVH8_WIDTH ? BVH8_WIDTH : BVH4_WIDTH;
    if (n == 0) return 0;
    size_t room = tris && positions ? (size_t)(SPATIAL_BUDGET * (double)n) : 0;
    int rc = build_refs(out, lo, hi, ids, n, n + room, tris, positions, threads, sah_lanes < 1 ? 1 : sah_lanes);
    out->build_seconds = timer_now() - t0;
    return rc;
}

/* Copies the leaves' references, depth first, into prim_ids (the build leaves gaps of unused
 * room between subtrees) and points the leaves at their new place. */
static size_t compact_leaves(bvh_node *nodes, uint32_t node, const bref *refs, uint32_t *prim_ids, size_t at) {
    bvh_node *nd = &nodes[node];
    if (nd->count == 0) {
        at = compact_leaves(nodes, nd->index, refs, prim_ids, at);
        return compact_leaves(nodes, nd->index + 1, refs, prim_ids, at);
    }
    for (uint32_t k = 0; k < nd->count; ++k) prim_ids[at + k] = refs[nd->index + k].id;
    nd->index = (uint32_t)at;
    return at + nd->count;
}

/* Builds over n references with room for cap (>= n; spatial splits fill the rest). */
static int build_refs(bvh *out, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, size_t cap,
                      const triangle *tris, const vec3 *positions, int threads, int sah_lanes) {
    if (cap > (size_t)UINT32_MAX / 2) cap = n;
    builder b;
    memset(&b, 0, sizeof(b));
    b.sah_lanes = sah_lanes;
    b.tris = tris;
    b.positions = positions;
    b.refs = malloc(cap * sizeof(bref));
    b.nodes = malloc((2 * cap) * sizeof(bvh_node));
    if (!b.refs || !b.nodes) {
        free(b.refs);
        free(b.nodes);
        return -1;
    }
    box root = box_empty();
    for (size_t i = 0; i < n; ++i) {
        b.refs[i].lo = lo[i];
        b.refs[i].hi = hi[i];
        b.refs[i].id = ids[i];
        box_grow(&root, lo[i], hi[i]);
    }
    if (!tris || !positions) b.tris = NULL;
    b.min_overlap = SPATIAL_MIN_OVERLAP * box_area(root);
    atomic_init(&b.nnodes, 1);
    /* threads <= 0: all cores; subtrees are handed out down to depth log2(threads) + 1 */
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    b.spawn_depth = 0;
    while ((1 << b.spawn_depth) < threads) b.spawn_depth++;
    if (threads > 1) b.spawn_depth++;
    build_stats st;
    memset(&st, 0, sizeof st);
    build_node(&b, &st, 0, 0, (uint32_t)n, (uint32_t)cap, 0);
    size_t nnodes = atomic_load(&b.nnodes);
    out->prim_ids = malloc(cap * sizeof(uint32_t));
    if (!out->prim_ids) {
        free(b.refs);
        free(b.nodes);
        return -1;
    }
    n = compact_leaves(b.nodes, 0, b.refs, out->prim_ids, 0);
    free(b.refs);
    uint32_t *shrunk_ids = realloc(out->prim_ids, n * sizeof(uint32_t));
    if (shrunk_ids) out->prim_ids = shrunk_ids;
    bvh_node *shrunk = realloc(b.nodes, nnodes * sizeof(bvh_node));
    out->nodes = shrunk ? shrunk : b.nodes;
    out->nnodes = nnodes;
    out->nprims = n;
    out->max_depth = st.max_depth;
    out->max_leaf = st.max_leaf;
    out->nleaves = st.nleaves;
    root.lo = out->nodes[0].lo;
    root.hi = out->nodes[0].hi;
    out->sah_cost = sah_of(out->nodes, 0, box_area(root));
    /* every wide node absorbs at least one binary inner node (a full binary tree of nnodes has
     * nnodes / 2 of them; a leaf root makes one wide node) */
    size_t wsize = bvh_wnode_size(out->width);
    void *wide = malloc((out->nnodes / 2 + 1) * wsize);
    /* each leaf needs ceil(count / 4) <= count / 4 + 1 blocks */
    size_t max_blocks = bvh_leaf4_bound(st.nleaves, n);
    out->leaves = malloc(max_blocks * sizeof(bvh_leaf4));
    if (!wide || !out->leaves) {
        free(wide);
        bvh_free(out);
        return -1;
    }
    out->nwnodes = bvh_collapse(out->nodes, out->nnodes, out->prim_ids, tris, out->width, sah_lanes, wide, out->leaves,
                                &out->nleaf4);
    if (out->nwnodes == 0) {
        free(wide);
        bvh_free(out);
        return -1;
    }
    /* the final copy on cache-line boundaries: a node is read as whole lines */
    out->wnodes = aligned_alloc(64, (out->nwnodes * wsize + 63) / 64 * 64);
    if (out->wnodes) memcpy(out->wnodes, wide, out->nwnodes * wsize);
    free(wide);
    if (!out->wnodes) {
        bvh_free(out);
        return -1;
    }
    bvh_leaf4 *shrunkl = realloc(out->leaves, out->nleaf4 * sizeof(bvh_leaf4));
    if (shrunkl) out->leaves = shrunkl;
    float root_area = box_area(root);
    out->wide_sah_cost =
        root_area > 0.0f ? wide_sah_of(out->wnodes, out->width, out->leaves, 0, root, root_area, sah_lanes) : 0.0;
    if (out->nleaf4) {
        out->leaf_pos = bvh_leaf_positions(out->leaves, out->nleaf4, positions);
        if (!out->leaf_pos) {
            bvh_free(out);
            return -1;
        }
    }
    /* references beyond BVH_MAX_REF do not fit a traversal stack entry (2^29 nodes: 64 GiB) */
    if (out->nwnodes > (size_t)BVH_MAX_REF + 1 || out->nleaf4 > (size_t)BVH_MAX_REF + 1) {
        bvh_free(out);
        return -1;
    }
    return 0;
}

float *bvh_leaf_positions(const bvh_leaf4 *leaves, size_t nleaf4, const vec3 *positions) {
    size_t bytes = (nleaf4 * BVH_LEAF_POS_FLOATS * sizeof(float) + 63) / 64 * 64;
    float *out = aligned_alloc(64, bytes ? bytes : 64);
    if (!out) return NULL;
    for (size_t i = 0; i < nleaf4; ++i) {
        float *row = out + i * BVH_LEAF_POS_FLOATS;
        const uint32_t *v[3] = {leaves[i].v0, leaves[i].v1, leaves[i].v2};
        /* unused and non-triangle lanes hold vertex 0 (their indices), as a gather would read */
        for (int c = 0; c < 3; ++c)
            for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                vec3 p = positions && !prim_is_instance_lane(leaves[i].prim[j]) ? positions[v[c][j]] : v3s(0.0f);
                row[(3 * c + 0) * BVH_LEAF_WIDTH + j] = p.x;
                row[(3 * c + 1) * BVH_LEAF_WIDTH + j] = p.y;
                row[(3 * c + 2) * BVH_LEAF_WIDTH + j] = p.z;
            }
        memcpy(row + BVH_LEAF_POS_IDS, leaves[i].prim, sizeof leaves[i].prim);
    }
    return out;
}

float *bvh_leaf_lanes(const bvh_leaf4 *leaves, size_t nleaf4, const vec3 *positions) {
    size_t bytes = (nleaf4 * BVH_LEAF_LANES_FLOATS * sizeof(float) + 63) / 64 * 64;
    float *out = aligned_alloc(64, bytes ? bytes : 64);
    if (!out) return NULL;
    for (size_t i = 0; i < nleaf4; ++i)
        for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
            float *lane = out + i * BVH_LEAF_LANES_FLOATS + j * BVH_LEAF_LANE_FLOATS;
            /* unused and non-triangle lanes hold vertex 0 (their indices), as in the rows; without
             * positions (spheres and quads only) every vertex is 0 */
            vec3 p[3] = {v3s(0.0f), v3s(0.0f), v3s(0.0f)};
            if (positions && !prim_is_instance_lane(leaves[i].prim[j])) { /* a TLAS lane's v0 is a node */
                p[0] = positions[leaves[i].v0[j]];
                p[1] = positions[leaves[i].v1[j]];
                p[2] = positions[leaves[i].v2[j]];
            }
            for (int c = 0; c < 3; ++c) {
                lane[4 * c + 0] = p[c].x;
                lane[4 * c + 1] = p[c].y;
                lane[4 * c + 2] = p[c].z;
                lane[4 * c + 3] = 0.0f;
            }
            uint32_t id = leaves[i].prim[j];
            memcpy(&lane[3], &id, sizeof id);
        }
    return out;
}

/* A child reference of a wide node moved by node_off (inner) or leaf_off (leaf); an empty slot
 * (child = count = 0) stays empty. */
static uint32_t relocate_child(uint32_t child, uint32_t count, uint32_t node_off, uint32_t leaf_off) {
    if (count) return child + leaf_off;
    return child ? child + node_off : 0u;
}

int bvh_combine(bvh *out, const bvh *top, const bvh *parts, size_t nparts, const uint32_t *lane_part) {
    memset(out, 0, sizeof *out);
    int width = top->width;
    size_t wsize = bvh_wnode_size(width), nn = top->nwnodes, nl = top->nleaf4;
    uint32_t *node_off = malloc((nparts ? nparts : 1) * sizeof(uint32_t));
    uint32_t *leaf_off = malloc((nparts ? nparts : 1) * sizeof(uint32_t));
    if (!node_off || !leaf_off) goto fail;
    for (size_t p = 0; p < nparts; ++p) {
        if (parts[p].width != width) goto fail;
        node_off[p] = (uint32_t)nn;
        leaf_off[p] = (uint32_t)nl;
        nn += parts[p].nwnodes;
        nl += parts[p].nleaf4;
    }
    if (nn > (size_t)BVH_MAX_REF + 1 || nl > (size_t)BVH_MAX_REF + 1) goto fail;
    out->width = width;
    out->wnodes = aligned_alloc(64, (nn * wsize + 63) / 64 * 64);
    out->leaves = malloc((nl ? nl : 1) * sizeof(bvh_leaf4));
    out->leaf_pos = aligned_alloc(64, (nl * BVH_LEAF_POS_FLOATS * sizeof(float) + 63) / 64 * 64 + 64);
    if (!out->wnodes || !out->leaves || !out->leaf_pos) goto fail;
    memcpy(out->wnodes, top->wnodes, top->nwnodes * wsize);
    memcpy(out->leaves, top->leaves, top->nleaf4 * sizeof(bvh_leaf4));
    memset(out->leaf_pos, 0, top->nleaf4 * BVH_LEAF_POS_FLOATS * sizeof(float));
    for (size_t i = 0; i < top->nleaf4; ++i) { /* the instances' BLAS roots */
        bvh_leaf4 *b = &out->leaves[i];
        for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
            if (!prim_is_instance_lane(b->prim[j])) continue;
            b->v0[j] = node_off[lane_part[prim_id_index(b->prim[j])]];
            memcpy(&out->leaf_pos[i * BVH_LEAF_POS_FLOATS + BVH_LEAF_POS_IDS + j], &b->prim[j], sizeof(uint32_t));
        }
    }
    out->max_depth = top->max_depth;
    out->max_leaf = top->max_leaf;
    out->nleaves = top->nleaves;
    out->build_seconds = top->build_seconds;
    out->sah_cost = top->sah_cost;
    out->wide_sah_cost = top->wide_sah_cost;
    out->nprims = top->nprims;
    for (size_t p = 0; p < nparts; ++p) {
        const bvh *b = &parts[p];
        char *dst = (char *)out->wnodes + (size_t)node_off[p] * wsize;
        memcpy(dst, b->wnodes, b->nwnodes * wsize);
        for (size_t i = 0; i < b->nwnodes; ++i) {
            if (width == BVH8_WIDTH) {
                bvh8_node *n = (bvh8_node *)dst + i;
                for (int c = 0; c < BVH8_WIDTH; ++c) {
                    uint32_t cnt = n->ref[c] & BVH_MAX_LEAF_BLOCKS, ch = n->ref[c] >> BVH_COUNT_BITS;
                    n->ref[c] = relocate_child(ch, cnt, node_off[p], leaf_off[p]) << BVH_COUNT_BITS | cnt;
                }
            } else {
                bvh4_node *n = (bvh4_node *)dst + i;
                for (int c = 0; c < BVH4_WIDTH; ++c)
                    n->child[c] = relocate_child(n->child[c], n->count[c], node_off[p], leaf_off[p]);
            }
        }
        memcpy(out->leaves + leaf_off[p], b->leaves, b->nleaf4 * sizeof(bvh_leaf4));
        if (b->nleaf4)
            memcpy(out->leaf_pos + (size_t)leaf_off[p] * BVH_LEAF_POS_FLOATS, b->leaf_pos,
                   b->nleaf4 * BVH_LEAF_POS_FLOATS * sizeof(float));
        if (top->max_depth + b->max_depth > out->max_depth) out->max_depth = top->max_depth + b->max_depth;
        if (b->max_leaf > out->max_leaf) out->max_leaf = b->max_leaf;
        out->nleaves += b->nleaves;
        out->build_seconds += b->build_seconds;
        out->nprims += b->nprims;
    }
    out->nwnodes = nn;
    out->nleaf4 = nl;
    free(node_off);
    free(leaf_off);
    return 0;
fail:
    free(node_off);
    free(leaf_off);
    bvh_free(out);
    return -1;
}

void bvh_free(bvh *b) {
    free(b->nodes);
    free(b->leaf_pos);
    free(b->wnodes);
    free(b->leaves);
    free(b->prim_ids);
    memset(b, 0, sizeof(*b));
}
