/* BVH invariants and traversal agreement with brute force on random scenes and rays. The
 * invariants are checked for both node widths (4 and 8), the traversal at the width this file's
 * kernel reads (BVH_WIDTH: 8 with AVX2; test_bvh_sse and test_bvh_scalar run it at 4). */
#include <string.h>

/* the traversal with instances too (a two-level BVH: check_instances) */
#define KERNEL_FEATURES (KF_ALL | KF_INSTANCES)
#include "kernel/kernel.h"
#include "cpu/isa.h"
#include "scene/scene.h"
#include "test_scenes.h"
#include "testing.h"

static int box_contains(vec3 lo, vec3 hi, vec3 plo, vec3 phi_) {
    return plo.x >= lo.x && plo.y >= lo.y && plo.z >= lo.z && phi_.x <= hi.x && phi_.y <= hi.y && phi_.z <= hi.z;
}

/* Builds the scene's tree again with the given SAH lanes and node width; points the kernel at it. */
static int rebuild_threads(scene *s, int lanes, int width, int threads) {
    size_t np = s->ntriangles + s->nspheres + s->nquads;
    vec3 *lo = malloc(np * sizeof(vec3)), *hi = malloc(np * sizeof(vec3));
    uint32_t *ids = malloc(np * sizeof(uint32_t));
    scene_prim_bounds(s, lo, hi, ids);
    bvh_free(&s->bvh);
    int rc = bvh_build_lanes(&s->bvh, lo, hi, ids, np, s->triangles, s->positions, threads, lanes, width);
    s->k.nodes = s->bvh.wnodes;
    s->k.leaves = s->bvh.leaves;
    s->k.leaf_pos = s->bvh.leaf_pos;
    s->k.nnodes = (uint32_t)s->bvh.nwnodes;
    free(lo);
    free(hi);
    free(ids);
    return rc;
}
static int rebuild(scene *s, int lanes, int width) { return rebuild_threads(s, lanes, width, 2); }

/* scene_prepare, then the tree at this kernel's width (the library builds its own: with
 * CAUSTIC_NO_AVX2 or CAUSTIC_NO_SIMD this file's kernel may read another) */
static int prepare(scene *s) {
    char err[256];
    if (scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err)) {
        fprintf(stderr, "prepare: %s\n", err);
        return -1;
    }
    return s->bvh.width == BVH_WIDTH ? 0 : rebuild(s, BVH_LEAF_WIDTH, BVH_WIDTH);
}

static scene *random_scene(uint64_t seed, int ntris, int nspheres, int nquads) {
    scene *s = scene_create();
    int mat = add_grey_diffuse(s);
    pcg32 r = pcg32_seed(seed, 1);
#define RND(a, b) ((a) + ((b) - (a)) * pcg32_float(&r))
    vec3 *pos = malloc(sizeof(vec3) * 3 * (size_t)ntris);
    uint32_t *idx = malloc(sizeof(uint32_t) * 3 * (size_t)ntris);
    for (int t = 0; t < ntris; ++t) {
        vec3 c = v3(RND(-10, 10), RND(-10, 10), RND(-10, 10));
        float size = pcg32_float(&r) < 0.1f ? 5.0f : 0.5f; /* some long triangles */
        for (int k = 0; k < 3; ++k) {
            pos[3 * t + k] = vadd(c, v3(RND(-size, size), RND(-size, size), RND(-size, size)));
            idx[3 * t + k] = (uint32_t)(3 * t + k);
        }
    }
    scene_add_mesh(s, pos, NULL, NULL, 3 * (size_t)ntris, idx, NULL, (size_t)ntris, xform_identity(), mat);
    free(pos);
    free(idx);
    for (int i = 0; i < nspheres; ++i)
        scene_add_sphere(s,
                         xform_trs(v3(RND(-10, 10), RND(-10, 10), RND(-10, 10)), v3(RND(0, 90), RND(0, 90), 0),
                                   v3(RND(0.2f, 2), RND(0.2f, 2), RND(0.2f, 2))),
                         mat);
    for (int i = 0; i < nquads; ++i)
        scene_add_quad(s, v3(RND(-10, 10), RND(-10, 10), RND(-10, 10)), v3(RND(-2, 2), RND(-2, 2), RND(-2, 2)),
                       v3(RND(-2, 2), RND(-2, 2), RND(-2, 2)), mat);
    /* axis-aligned flat quads: zero-thickness boxes must still be hit */
    scene_add_quad(s, v3(-3, 0, -3), v3(6, 0, 0), v3(0, 0, 6), mat);
#undef RND
    if (prepare(s)) { CHECK(0, "prepare"); }
    return s;
}

/* Returns the wide tree's leaf slots. */
static size_t check_invariants(const scene *s) {
    const bvh *b = &s->bvh;
    size_t nprims = s->ntriangles + s->nspheres + s->nquads;
    /* triangles cut by spatial splits have several references */
    CHECK(b->nprims >= nprims && b->nprims <= nprims + nprims / 4, "bvh holds %zu references of %zu primitives",
          b->nprims, nprims);
    unsigned char *seen = calloc(nprims, 1);
    size_t in_leaves = 0;
    for (size_t i = 0; i < b->nnodes; ++i) {
        const bvh_node *n = &b->nodes[i];
        if (n->count == 0) {
            CHECK(n->index + 1 < b->nnodes, "child index in range");
            for (int c = 0; c < 2; ++c) {
                const bvh_node *ch = &b->nodes[n->index + (uint32_t)c];
                CHECK(box_contains(n->lo, n->hi, ch->lo, ch->hi), "child %u not inside parent %zu", n->index + c, i);
            }
        } else {
            for (uint32_t k = 0; k < n->count; ++k) {
                uint32_t id = b->prim_ids[n->index + k];
                size_t flat = prim_flat_index(&s->k, id);
                CHECK(flat < nprims, "prim id in range");
                if (flat < nprims) seen[flat]++;
                in_leaves++;
            }
        }
    }
    size_t once = 0;
    for (size_t i = 0; i < nprims; ++i) once += seen[i] >= 1;
    CHECK(once == nprims && in_leaves == b->nprims, "%zu of %zu primitives in a leaf", once, nprims);

    /* the collapsed wide tree: every node reached once from the root, leaves cover every
     * primitive once, each leaf slot's box contains its primitives' boxes */
    memset(seen, 0, nprims);
    CHECK(b->width == 4 || b->width == 8, "node width %d", b->width);
    CHECK(((uintptr_t)b->wnodes & 63) == 0, "nodes on cache-line boundaries");
    const int W = b->width;
    unsigned char *reached = calloc(b->nwnodes ? b->nwnodes : 1, 1);
    unsigned char *blocks_seen = calloc(b->nleaf4 ? b->nleaf4 : 1, 1);
    size_t stack[512], sp = 0, leaf_entries = 0, leaf_slots = 0;
    if (b->nwnodes) stack[sp++] = 0;
    while (sp) {
        size_t ni = stack[--sp];
        CHECK(ni < b->nwnodes, "node index in range");
        if (ni >= b->nwnodes) break;
        reached[ni]++;
        /* the node's rows: lo x/y/z, hi x/y/z, then child and count (8-wide: packed, types.h) */
        const float *f = (const float *)((const char *)b->wnodes + ni * bvh_wnode_size(W));
        const uint32_t *row = (const uint32_t *)(f + 6 * W);
        uint32_t child[BVH8_WIDTH], count[BVH8_WIDTH];
        for (int c = 0; c < W; ++c) {
            child[c] = W == BVH8_WIDTH ? row[c] >> BVH_COUNT_BITS : row[c];
            count[c] = W == BVH8_WIDTH ? row[c] & BVH_MAX_LEAF_BLOCKS : row[W + c];
        }
        for (int c = 0; c < W; ++c) {
            if (child[c] == 0 && count[c] == 0) continue; /* empty slot */
            if (count[c] == 0) {
                if (sp < 512) stack[sp++] = child[c];
                continue;
            }
            vec3 blo = v3(f[c], f[W + c], f[2 * W + c]), bhi = v3(f[3 * W + c], f[4 * W + c], f[5 * W + c]);
            CHECK(child[c] + count[c] <= b->nleaf4, "leaf blocks in range");
            leaf_slots++;
            if (child[c] + count[c] > b->nleaf4) continue;
            for (uint32_t k = 0; k < count[c]; ++k) {
                const bvh_leaf4 *l = &b->leaves[child[c] + k];
                blocks_seen[child[c] + k]++;
                int used = 0;
                for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                    uint32_t id = l->prim[j];
                    if (id == PRIM_NONE) continue;
                    CHECK(used == j, "unused lanes come last (block %u lane %d)", child[c] + k, j);
                    used++;
                    size_t flat = prim_flat_index(&s->k, id);
                    CHECK(flat < nprims, "prim id in range");
                    if (flat >= nprims) continue;
                    seen[flat]++;
                    leaf_entries++;
                    if (prim_id_kind(id) == PRIM_TRIANGLE) {
                        const triangle *t = &s->triangles[prim_id_index(id)];
                        vec3 p0 = s->positions[t->v[0]], p1 = s->positions[t->v[1]], p2 = s->positions[t->v[2]];
                        /* a split reference's box holds a part of its triangle */
                        vec3 tlo = vmax(blo, vmin(p0, vmin(p1, p2))), thi = vmin(bhi, vmax(p0, vmax(p1, p2)));
                        CHECK(tlo.x <= thi.x && tlo.y <= thi.y && tlo.z <= thi.z, "leaf slot box meets triangle %x",
                              id);
                        CHECK(l->v0[j] == t->v[0] && l->v1[j] == t->v[1] && l->v2[j] == t->v[2],
                              "leaf block vertex indices of prim %x", id);
                    }
                }
                CHECK(used > 0, "leaf block %u not empty", child[c] + k);
            }
        }
    }
    size_t reached_once = 0;
    for (size_t i = 0; i < b->nwnodes; ++i) reached_once += reached[i] == 1;
    CHECK(reached_once == b->nwnodes, "%zu of %zu %d-wide nodes reached exactly once", reached_once, b->nwnodes, W);
    once = 0;
    size_t split = 0;
    for (size_t i = 0; i < nprims; ++i) {
        once += seen[i] >= 1;
        split += seen[i] > 1;
    }
    CHECK(once == nprims && leaf_entries >= nprims && leaf_entries <= b->nprims,
          "%d-wide: %zu of %zu primitives in a leaf (%zu entries)", W, once, nprims, leaf_entries);
    /* only triangles are split */
    for (size_t i = s->ntriangles; i < nprims; ++i) CHECK(seen[i] == 1, "non-triangle %zu in one leaf", i);
    if (split) printf("test_bvh: %zu of %zu primitives in several leaves\n", split, nprims);
    size_t blocks_once = 0;
    for (size_t i = 0; i < b->nleaf4; ++i) blocks_once += blocks_seen[i] == 1;
    CHECK(blocks_once == b->nleaf4, "%zu of %zu leaf blocks referenced exactly once", blocks_once, b->nleaf4);
    free(blocks_seen);
    free(reached);
    free(seen);
    /* the rows' id row (the CPU's leaf tests read the ids there) and the GPU's per-lane copy of
     * the blocks' triangles (bvh_leaf_lanes) hold what the blocks' ids and the rows do */
    if (b->leaf_pos) {
        float *lanes = bvh_leaf_lanes(b->leaves, b->nleaf4, s->positions);
        size_t bad = 0;
        for (size_t i = 0; lanes && i < b->nleaf4; ++i)
            for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                const float *l = lanes + i * BVH_LEAF_LANES_FLOATS + j * BVH_LEAF_LANE_FLOATS;
                const float *rows = b->leaf_pos + i * BVH_LEAF_POS_FLOATS;
                uint32_t id, row_id;
                memcpy(&id, &l[3], sizeof id);
                memcpy(&row_id, &rows[BVH_LEAF_POS_IDS + j], sizeof row_id);
                bad += id != b->leaves[i].prim[j] || row_id != id;
                for (int v = 0; v < 3; ++v)
                    for (int a = 0; a < 3; ++a) bad += l[4 * v + a] != rows[(3 * v + a) * BVH_LEAF_WIDTH + j];
            }
        CHECK(lanes && bad == 0, "%zu differences between the GPU's leaf lanes and the rows", bad);
        free(lanes);
    }
    return leaf_slots;
}

static void check_traversal(const scene *s, uint64_t seed) {
    const kscene *k = &s->k;
    pcg32 r = pcg32_seed(seed, 9);
    int mismatches = 0;
    for (int i = 0; i < 20000; ++i) {
        vec3 o = v3(20 * pcg32_float(&r) - 10, 20 * pcg32_float(&r) - 10, 20 * pcg32_float(&r) - 10);
        vec3 d = sample_uniform_sphere(v2(pcg32_float(&r), pcg32_float(&r)));
        if (i % 7 == 0) d = v3(0, (i % 2) ? 1.0f : -1.0f, 0); /* axis-parallel rays */
        ray ry = make_ray(o, d, i % 5 == 0 ? 3.0f : K_INF);
        hit h;
        int got = trace_closest(k, ry, &h);
        /* brute force over every primitive */
        hit bf;
        bf.t = ry.tmax;
        bf.prim = PRIM_NONE;
        ray_shear sh = make_ray_shear(d);
        size_t nprims = s->ntriangles + s->nspheres + s->nquads;
        for (size_t f = 0; f < nprims; ++f) {
            uint32_t id = f < s->ntriangles ? prim_id(PRIM_TRIANGLE, (uint32_t)f)
                          : f < s->ntriangles + s->nspheres
                              ? prim_id(PRIM_SPHERE, (uint32_t)(f - s->ntriangles))
                              : prim_id(PRIM_QUAD, (uint32_t)(f - s->ntriangles - s->nspheres));
            intersect_prim(k, id, o, d, &sh, &bf);
        }
        int expect = bf.prim != PRIM_NONE;
        if (got != expect || (got && (h.prim != bf.prim || h.t != bf.t))) {
            if (++mismatches <= 5)
                fprintf(stderr, "ray %d: bvh %d prim %x t %.9g, brute force %d prim %x t %.9g\n", i, got, h.prim, h.t,
                        expect, bf.prim, bf.t);
        }
        int occluded = trace_occluded(k, ry);
        if (occluded != expect && ++mismatches <= 5) fprintf(stderr, "ray %d: any-hit %d vs %d\n", i, occluded, expect);
    }
    CHECK(mismatches == 0, "%d traversal mismatches", mismatches);
}

static void check_cw8(scene *s, int lanes, uint64_t seed, void (*extra)(scene *));

/* The other builds: the CUDA backend's (SAH leaf cost per primitive, width 4) and both widths
 * with the CPU's block cost: the same invariants, and where this kernel reads the width, the
 * same hits as brute force. Leaves the scene at this kernel's width. */
static void check_other_builds(scene *s, uint64_t seed) {
    for (int lanes = 1; lanes <= BVH_LEAF_WIDTH; lanes += BVH_LEAF_WIDTH - 1)
        for (int width = BVH4_WIDTH; width <= BVH8_WIDTH; width *= 2) {
            if (lanes == BVH_LEAF_WIDTH && width == BVH_WIDTH) continue; /* the main test's build */
            int rc = rebuild(s, lanes, width);
            CHECK(rc == 0 && s->bvh.width == width, "build with %d SAH lanes at width %d", lanes, width);
            if (rc) continue;
            check_invariants(s);
            if (width == BVH_WIDTH) check_traversal(s, seed);
        }
    CHECK(rebuild(s, BVH_LEAF_WIDTH, BVH_WIDTH) == 0, "rebuild");
    check_cw8(s, 1, seed + 1, NULL);
    check_cw8(s, BVH_LEAF_WIDTH, seed + 2, NULL);
}

/* The compressed 8-wide layout (the GPU's --gpu-bvh cwbvh) of the scene's tree rebuilt at width
 * 8 with the given SAH lanes: every used slot's meta byte gives back its stack word, its
 * dequantised box (in exact arithmetic) contains the child's float box and hence every
 * primitive of a leaf child (a primitive's whole box where the build split no reference, else
 * the part inside the float box), unused slots are marked so; then the shared traversal over
 * the compressed nodes finds the same hits as brute force (check_traversal), and `extra` (may be
 * NULL) runs over them too. Leaves the scene at this kernel's width. */
static int dbox_contains(const double lo[3], const double hi[3], vec3 plo, vec3 phi_) {
    return plo.x >= lo[0] && plo.y >= lo[1] && plo.z >= lo[2] && phi_.x <= hi[0] && phi_.y <= hi[1] && phi_.z <= hi[2];
}
static void check_cw8(scene *s, int lanes, uint64_t seed, void (*extra)(scene *)) {
    CHECK(rebuild(s, lanes, BVH8_WIDTH) == 0, "build at width 8 with %d SAH lanes", lanes);
    char err[256];
    cw8_node *cw = malloc((s->bvh.nwnodes + 1) * sizeof(cw8_node));
    CHECK(bvh_compress8(s->bvh.wnodes, s->bvh.nwnodes, cw, err, sizeof err) == 0, "compress: %s", err);
    const bvh8_node *wide = s->bvh.wnodes;
    int split = s->bvh.nprims > kscene_nprims(&s->k);
    int words_off = 0, boxes_off = 0, prims_off = 0, used_off = 0;
    double slack = 0.0; /* mean growth of a child's box diagonal by the quantisation */
    size_t nslots = 0;
    for (size_t ni = 0; ni < s->bvh.nwnodes; ++ni) {
        const cw8_node *c = &cw[ni];
        const bvh8_node *n = &wide[ni];
        const uint32_t *w = (const uint32_t *)c;
        ku4 m = {{w[4], w[5], w[6], w[7]}};
        for (int i = 0; i < CW8_WIDTH; ++i) {
            int used = n->lo_x[i] != INFINITY;
            used_off += used != (int)(c->used >> i & 1u);
            if (!used) continue;
            words_off += cw8_word(m, (uint32_t)i) != n->ref[i];
            vec3 flo = v3(n->lo_x[i], n->lo_y[i], n->lo_z[i]), fhi = v3(n->hi_x[i], n->hi_y[i], n->hi_z[i]);
            double lo[3], hi[3];
            cw8_child_box(c, i, lo, hi);
            boxes_off += !dbox_contains(lo, hi, flo, fhi);
            slack += sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                          (hi[2] - lo[2]) * (hi[2] - lo[2])) /
                     fmax((double)vlen(vsub(fhi, flo)), 1e-30);
            nslots++;
            uint32_t cnt = n->ref[i] & BVH_MAX_LEAF_BLOCKS, first = n->ref[i] >> BVH_COUNT_BITS;
            for (uint32_t b = 0; b < cnt; ++b)
                for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                    uint32_t id = s->bvh.leaves[first + b].prim[j];
                    if (id == PRIM_NONE) continue;
                    vec3 plo, phi_;
                    kscene_prim_bounds_of(&s->k, id, &plo, &phi_);
                    if (split) {
                        plo = vmax(plo, flo);
                        phi_ = vmin(phi_, fhi);
                    }
                    prims_off += !dbox_contains(lo, hi, plo, phi_);
                }
        }
    }
    CHECK(used_off == 0, "%d slots marked wrongly as used or unused", used_off);
    CHECK(words_off == 0, "%d meta bytes do not give back their stack word", words_off);
    CHECK(boxes_off == 0, "%d dequantised child boxes do not contain the float box", boxes_off);
    CHECK(prims_off == 0, "%d primitives outside their dequantised child box", prims_off);
    CHECK(nslots == 0 || slack / (double)nslots < 4.0, "quantised boxes grow their diagonal %.3fx on average",
          slack / (double)nslots);
    printf("compressed 8-wide (%d SAH lanes): %zu nodes, quantisation grows a child box's diagonal %.3fx on average\n",
           lanes, s->bvh.nwnodes, nslots ? slack / (double)nslots : 1.0);
    s->k.nodes = cw;
    s->k.node_layout = KNODES_CW8;
    check_traversal(s, seed);
    if (extra) extra(s);
    s->k.node_layout = KNODES_WIDE;
    free(cw);
    CHECK(rebuild(s, BVH_LEAF_WIDTH, BVH_WIDTH) == 0, "rebuild");
}

/* A flat grid of 16x16 unit squares (two triangles each) at z = 0: rays straight down through
 * the grid's vertices, edge midpoints and diagonals hit exactly on edges, where the SIMD leaf
 * test hands lanes to the scalar test's double-precision fallback; every such ray must hit (the
 * test is watertight) and agree with brute force. */
static void grid_rays(scene *s);
static void check_edges(void) {
    scene *s = scene_create();
    int mat = add_grey_diffuse(s);
    enum { N = 16 };
    vec3 pos[(N + 1) * (N + 1)];
    uint32_t idx[N * N * 6];
    for (int y = 0; y <= N; ++y)
        for (int x = 0; x <= N; ++x) pos[y * (N + 1) + x] = v3((float)x, (float)y, 0.0f);
    int t = 0;
    for (int y = 0; y < N; ++y)
        for (int x = 0; x < N; ++x) {
            uint32_t a = (uint32_t)(y * (N + 1) + x), b = a + 1, c = a + N + 1, d = c + 1;
            idx[t++] = a;
            idx[t++] = b;
            idx[t++] = d;
            idx[t++] = a;
            idx[t++] = d;
            idx[t++] = c;
        }
    scene_add_mesh(s, pos, NULL, NULL, (N + 1) * (N + 1), idx, NULL, N * N * 2, xform_identity(), mat);
    CHECK(prepare(s) == 0, "prepare grid");
    grid_rays(s);
    check_cw8(s, 1, 5, grid_rays);
    scene_destroy(s);
}

/* Rays straight down through the grid's vertices, edge midpoints and diagonals (check_edges). */
static void grid_rays(scene *s) {
    enum { N = 16 };
    int misses = 0, mismatches = 0;
    for (int y = 1; y < 2 * N; ++y)
        for (int x = 1; x < 2 * N; ++x)
            for (int dir = 0; dir < 2; ++dir) {
                vec3 o = v3(0.5f * (float)x, 0.5f * (float)y, dir ? 3.0f : -3.0f);
                ray r = make_ray(o, v3(0, 0, dir ? -1.0f : 1.0f), K_INF);
                hit h, bf;
                int got = trace_closest(&s->k, r, &h);
                misses += !got;
                bf.t = K_INF;
                bf.prim = PRIM_NONE;
                ray_shear sh = make_ray_shear(r.d);
                for (size_t f = 0; f < s->ntriangles; ++f)
                    intersect_prim(&s->k, prim_id(PRIM_TRIANGLE, (uint32_t)f), o, r.d, &sh, &bf);
                mismatches += got != (bf.prim != PRIM_NONE) || h.t != bf.t;
                misses += !trace_occluded(&s->k, r);
            }
    CHECK(misses == 0, "%d rays through grid edges/vertices missed", misses);
    CHECK(mismatches == 0, "%d grid rays disagree with brute force", mismatches);
}

/* Long slivers across the scene (Sponza's floor strips and wall edges) among small triangles:
 * object splits cannot separate them, spatial splits clip them into several references. The
 * tree is the same whatever the thread count (room is shared by subtree size, not by timing). */
static void check_spatial_splits(void) {
    scene *s = scene_create();
    int mat = add_grey_diffuse(s);
    pcg32 r = pcg32_seed(5, 1);
    enum { NSLIVER = 64, NSMALL = 20000 };
    vec3 *pos = malloc(sizeof(vec3) * 3 * (NSLIVER + NSMALL));
    uint32_t *idx = malloc(sizeof(uint32_t) * 3 * (NSLIVER + NSMALL));
    for (int t = 0; t < NSLIVER + NSMALL; ++t) {
        vec3 c = v3(20.0f * pcg32_float(&r) - 10.0f, 20.0f * pcg32_float(&r) - 10.0f, 20.0f * pcg32_float(&r) - 10.0f);
        if (t < NSLIVER) { /* 20 units long along x, 0.2 wide */
            pos[3 * t] = v3(-10.0f, c.y, c.z);
            pos[3 * t + 1] = v3(10.0f, c.y, c.z);
            pos[3 * t + 2] = v3(10.0f, c.y + 0.2f, c.z);
        } else {
            for (int k = 0; k < 3; ++k)
                pos[3 * t + k] = vadd(c, v3(0.3f * pcg32_float(&r), 0.3f * pcg32_float(&r), 0.3f * pcg32_float(&r)));
        }
        for (int k = 0; k < 3; ++k) idx[3 * t + k] = (uint32_t)(3 * t + k);
    }
    scene_add_mesh(s, pos, NULL, NULL, 3 * (NSLIVER + NSMALL), idx, NULL, NSLIVER + NSMALL, xform_identity(), mat);
    free(pos);
    free(idx);
    CHECK(prepare(s) == 0, "prepare slivers");
    CHECK(s->bvh.nprims > s->ntriangles, "spatial splits: %zu references of %zu triangles", s->bvh.nprims,
          s->ntriangles);
    /* the collapse forms leaves of whole binary subtrees, here some whose triangles' split references
     * meet again in one leaf */
    size_t leaf_slots = check_invariants(s);
    CHECK(leaf_slots < s->bvh.nleaves, "%zu leaves in the wide tree, %zu in the binary one: none merged", leaf_slots,
          s->bvh.nleaves);
    check_traversal(s, 21);
    check_cw8(s, 1, 22, NULL);
    size_t nwnodes = s->bvh.nwnodes, nbytes = nwnodes * bvh_wnode_size(s->bvh.width);
    void *one = malloc(nbytes);
    memcpy(one, s->bvh.wnodes, nbytes);
    for (int threads = 1; threads <= 4; threads *= 4) {
        CHECK(rebuild_threads(s, BVH_LEAF_WIDTH, BVH_WIDTH, threads) == 0, "rebuild with %d threads", threads);
        CHECK(s->bvh.nwnodes == nwnodes && memcmp(one, s->bvh.wnodes, nbytes) == 0, "the same tree with %d threads",
              threads);
    }
    free(one);
    scene_destroy(s);
}

/* One node visit (bvh_visit, the body this file's kernel compiles: AVX2 over 8-wide nodes, SSE or
 * the scalar body, whose slab test compares distances as integers, over 4-wide ones) against an
 * exact slab test in double precision, on random boxes, flat boxes, empty slots, boxes behind the
 * origin or beyond tmax, and rays with axis-parallel directions: a child whose exact interval
 * [max(tnear, 0), min(tfar, tmax)] is non-empty by a margin must be visited (descended into or
 * pushed), one that is empty by a margin must not, and a closest-hit ray descends into the
 * nearest visited child. */
static double dslab(double lo, double hi, double o, double d, double *tn, double *tf) {
    if (d == 0.0) return o > lo && o < hi ? 1.0 : (o < lo || o > hi ? -1.0 : 0.0); /* 0: on a plane */
    double a = (lo - o) / d, b = (hi - o) / d;
    *tn = a < b ? (a > *tn ? a : *tn) : (b > *tn ? b : *tn);
    *tf = a < b ? (b < *tf ? b : *tf) : (a < *tf ? a : *tf);
    return 1.0;
}
static void check_node_visit(void) {
    pcg32 rng = pcg32_seed(31, 7);
    int missed = 0, extra = 0, unordered = 0, robust_hits = 0;
    for (int it = 0; it < 100000; ++it) {
        float o[3], d[3];
        for (int a = 0; a < 3; ++a) {
            o[a] = pcg32_next(&rng) % 8 == 0 ? 0.0f : 16.0f * pcg32_float(&rng) - 8.0f;
            d[a] = pcg32_next(&rng) % 6 == 0 ? 0.0f : 2.0f * pcg32_float(&rng) - 1.0f;
        }
        if (d[0] == 0.0f && d[1] == 0.0f && d[2] == 0.0f) d[2] = 1.0f;
        float tmax = pcg32_next(&rng) % 2 ? K_INF : 30.0f * pcg32_float(&rng);
        int any = (int)(pcg32_next(&rng) % 2);
        bvh_wnode n;
        float *f = (float *)&n;
        double lo[BVH_WIDTH][3], hi[BVH_WIDTH][3];
        int kind[BVH_WIDTH];
        for (int c = 0; c < BVH_WIDTH; ++c) {
            kind[c] = (int)(pcg32_next(&rng) % 8); /* 0: empty slot, 1: flat on one axis, else a box */
            int flat = (int)(pcg32_next(&rng) % 3), near_ray = (int)(pcg32_next(&rng) % 2);
            float along = 20.0f * pcg32_float(&rng); /* half the boxes around a point of the ray */
            for (int a = 0; a < 3; ++a) {
                float ce = near_ray ? o[a] + along * d[a] + 2.0f * pcg32_float(&rng) - 1.0f
                                    : 24.0f * pcg32_float(&rng) - 12.0f;
                float h = 4.0f * pcg32_float(&rng);
                float l = kind[c] == 0 ? K_INF : ce - h,
                      u = kind[c] == 0 ? K_INF : (kind[c] == 1 && a == flat ? ce - h : ce + h);
                f[a * BVH_WIDTH + c] = l;
                f[(3 + a) * BVH_WIDTH + c] = u;
                lo[c][a] = l;
                hi[c][a] = u;
            }
#if BVH_WIDTH == 8
            n.ref[c] = (uint32_t)(100 + c) << BVH_COUNT_BITS;
#else
            n.child[c] = (uint32_t)(100 + c);
            n.count[c] = 0;
#endif
        }
        bvh_ray br = make_bvh_ray(make_ray(v3(o[0], o[1], o[2]), v3(d[0], d[1], d[2]), tmax));
        BVH_STACK_DECL(st);
        int sp = 0;
        uint32_t ref = 0, cnt = 0;
        int got = bvh_visit(&n, &br, tmax, any, &st, &sp, &ref, &cnt);
        int visited[BVH_WIDTH] = {0};
        if (got && ref >= 100 && ref < 100 + BVH_WIDTH) visited[ref - 100] = 2; /* 2: descended into */
        for (int i = 0; i < sp; ++i) {
            uint32_t r = (uint32_t)st.e[i] >> BVH_COUNT_BITS;
            if (r >= 100 && r < 100 + BVH_WIDTH) visited[r - 100] = 1;
        }
        double tnear[BVH_WIDTH];
        for (int c = 0; c < BVH_WIDTH; ++c) {
            double tn = 0.0, tf = tmax, in = 1.0;
            for (int a = 0; a < 3 && kind[c] != 0; ++a) {
                double v = dslab(lo[c][a], hi[c][a], o[a], d[a], &tn, &tf);
                in = v < in ? v : in;
            }
            tnear[c] = tn;
            double eps = 1e-4 * (1.0 + fabs(tf));
            int hit = kind[c] != 0 && in > 0.0 && tn < tf - eps, miss = kind[c] == 0 || in < 0.0 || tn > tf + eps;
            robust_hits += hit;
            missed += hit && !visited[c];
            extra += miss && visited[c];
        }
        for (int c = 0; c < BVH_WIDTH && !any && got; ++c)
            unordered += visited[c] == 1 && tnear[c] < tnear[ref - 100] - 1e-4 * (1.0 + tnear[c]);
    }
    CHECK(robust_hits > 10000, "%d children hit by a margin", robust_hits);
    CHECK(missed == 0, "%d children hit by a margin not visited", missed);
    CHECK(extra == 0, "%d children missed by a margin visited", extra);
    CHECK(unordered == 0, "%d nearer children pushed while a farther one was descended into", unordered);
}

/* bvh_collapse against brute force on small random binary trees: the wide tree it writes costs
 * (by the collapse's SAH, bvh.h) exactly the least over every wide tree that keeps the binary
 * tree's boxes, found by enumerating for each binary node every cut of its subtree into at most
 * `width` slots; its leaves list each primitive once (references of one primitive in several
 * binary leaves, as spatial splits make them, meet again when leaves merge) and cover every one. */
enum { CT_MAX_LEAVES = 9, CT_MAX_NODES = 2 * CT_MAX_LEAVES, CT_MAX_REFS = 4 * CT_MAX_LEAVES };
typedef struct ctree {
    bvh_node n[CT_MAX_NODES];
    uint32_t ids[CT_MAX_REFS], nnodes, nrefs;
    int width, lanes;
} ctree;

static double dbox_area(vec3 lo, vec3 hi) {
    double dx = (double)hi.x - lo.x, dy = (double)hi.y - lo.y, dz = (double)hi.z - lo.z;
    return 2.0 * (dx * dy + dy * dz + dz * dx);
}

/* Subtree `at` of nleaf leaves inside the cube at c of half size h; leaves hold 1-4 references,
 * some repeating the previous leaf's last primitive. */
static void ct_grow(ctree *t, pcg32 *r, uint32_t at, int nleaf, vec3 c, float h) {
    bvh_node *n = &t->n[at];
    if (nleaf == 1) {
        uint32_t cnt = 1 + pcg32_next(r) % 4, first = t->nrefs;
        for (uint32_t k = 0; k < cnt; ++k) {
            int dup = k == 0 && first > 0 && pcg32_next(r) % 3 == 0;
            t->ids[t->nrefs] = dup ? t->ids[first - 1] : prim_id(PRIM_TRIANGLE, t->nrefs);
            t->nrefs++;
        }
        vec3 e = v3(h * (0.2f + pcg32_float(r)), h * (0.2f + pcg32_float(r)), h * (0.2f + pcg32_float(r)));
        n->lo = vsub(c, e);
        n->hi = vadd(c, e);
        n->index = first;
        n->count = cnt;
        return;
    }
    uint32_t kid = t->nnodes;
    t->nnodes += 2;
    int nl = 1 + (int)(pcg32_next(r) % (uint32_t)(nleaf - 1));
    for (int k = 0; k < 2; ++k) {
        vec3 d = v3(pcg32_float(r) - 0.5f, pcg32_float(r) - 0.5f, pcg32_float(r) - 0.5f);
        ct_grow(t, r, kid + (uint32_t)k, k ? nleaf - nl : nl, vadd(c, vscale(d, h)), 0.6f * h);
    }
    n->lo = vmin(t->n[kid].lo, t->n[kid + 1].lo);
    n->hi = vmax(t->n[kid].hi, t->n[kid + 1].hi);
    n->index = kid;
    n->count = 0;
}

/* Distinct primitives below binary node b, into seen (a set over ids). */
static uint32_t ct_distinct(const ctree *t, uint32_t b, unsigned char *seen) {
    const bvh_node *n = &t->n[b];
    if (n->count == 0) return ct_distinct(t, n->index, seen) + ct_distinct(t, n->index + 1, seen);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->count; ++i) {
        uint32_t id = prim_id_index(t->ids[n->index + i]);
        k += !seen[id];
        seen[id] = 1;
    }
    return k;
}

static double ct_leaf(const ctree *t, uint32_t b) {
    unsigned char seen[CT_MAX_REFS] = {0};
    uint32_t d = ct_distinct(t, b, seen);
    if (t->n[b].count == 0 && d > BVH_COLLAPSE_MAX_LEAF) return INFINITY;
    return dbox_area(t->n[b].lo, t->n[b].hi) * (double)((d + (uint32_t)t->lanes - 1) / (uint32_t)t->lanes);
}

static double ct_best(const ctree *t, uint32_t b);
/* The least cost of filling at most `room` slots with a cut of the subtrees list[0 .. n) (each
 * slot one subtree of the cut, costing ct_best). */
static double ct_cut(const ctree *t, const uint32_t *list, int n, int room) {
    if (n == 0) return 0.0;
    if (n > room) return INFINITY;
    uint32_t b = list[0];
    /* b takes a slot ... */
    double best = ct_best(t, b) + ct_cut(t, list + 1, n - 1, room - 1);
    /* ... or its children take its place */
    if (t->n[b].count == 0) {
        uint32_t more[CT_MAX_NODES];
        more[0] = t->n[b].index;
        more[1] = t->n[b].index + 1;
        memcpy(more + 2, list + 1, (size_t)(n - 1) * sizeof(uint32_t));
        double open = ct_cut(t, more, n + 1, room);
        if (open < best) best = open;
    }
    return best;
}
/* b as one slot: a leaf or a wide node of its own. */
static double ct_best(const ctree *t, uint32_t b) {
    double leaf = ct_leaf(t, b);
    if (t->n[b].count > 0) return leaf;
    uint32_t kids[2] = {t->n[b].index, t->n[b].index + 1};
    double node = BVH_COLLAPSE_NODE_COST(t->width) * dbox_area(t->n[b].lo, t->n[b].hi) + ct_cut(t, kids, 2, t->width);
    return leaf < node ? leaf : node;
}

/* The written tree's cost below wide node `at` (its box lo..hi); counts leaves and the entries
 * of each primitive (seen) and flags a leaf that lists a primitive twice. */
static double ct_written(const ctree *t, const void *wide, const bvh_leaf4 *leaves, uint32_t at, vec3 lo, vec3 hi,
                         unsigned char *seen, int *twice, int *nleaves) {
    const int W = t->width;
    const float *f = (const float *)((const char *)wide + at * bvh_wnode_size(W));
    const uint32_t *row = (const uint32_t *)(f + 6 * W);
    double cost = BVH_COLLAPSE_NODE_COST(W) * dbox_area(lo, hi);
    for (int c = 0; c < W; ++c) {
        if (f[c] == INFINITY) continue;
        uint32_t child = W == BVH8_WIDTH ? row[c] >> BVH_COUNT_BITS : row[c];
        uint32_t count = W == BVH8_WIDTH ? row[c] & BVH_MAX_LEAF_BLOCKS : row[W + c];
        vec3 clo = v3(f[c], f[W + c], f[2 * W + c]), chi = v3(f[3 * W + c], f[4 * W + c], f[5 * W + c]);
        if (count == 0) {
            cost += ct_written(t, wide, leaves, child, clo, chi, seen, twice, nleaves);
            continue;
        }
        unsigned char here[CT_MAX_REFS] = {0};
        uint32_t nprim = 0;
        for (uint32_t k = 0; k < count; ++k)
            for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                uint32_t id = leaves[child + k].prim[j];
                if (id == PRIM_NONE) continue;
                *twice |= here[prim_id_index(id)]++ > 0;
                seen[prim_id_index(id)]++;
                nprim++;
            }
        (*nleaves)++;
        cost += dbox_area(clo, chi) * (double)((nprim + (uint32_t)t->lanes - 1) / (uint32_t)t->lanes);
    }
    return cost;
}

static void check_collapse_optimal(void) {
    pcg32 r = pcg32_seed(77, 3);
    triangle tris[CT_MAX_REFS];
    memset(tris, 0, sizeof tris);
    int worse = 0, wrong = 0, merged = 0, met = 0; /* met: a merged leaf lists a primitive of two binary leaves once */
    for (int it = 0; it < 400; ++it) {
        ctree t;
        memset(&t, 0, sizeof t);
        t.width = it % 2 ? BVH8_WIDTH : BVH4_WIDTH;
        t.lanes = it % 4 < 2 ? 1 : BVH_LEAF_WIDTH;
        t.nnodes = 1;
        int nleaf = 1 + (int)(pcg32_next(&r) % CT_MAX_LEAVES);
        ct_grow(&t, &r, 0, nleaf, v3s(0.0f), 10.0f);
        _Alignas(64) unsigned char wide[CT_MAX_NODES * sizeof(bvh8_node)];
        bvh_leaf4 leaves[CT_MAX_REFS + CT_MAX_LEAVES];
        size_t nleaf4 = 0, nw = bvh_collapse(t.n, t.nnodes, t.ids, tris, t.width, t.lanes, wide, leaves, &nleaf4);
        CHECK(nw >= 1 && nw <= t.nnodes / 2 + 1, "%zu wide nodes from %u binary ones", nw, t.nnodes);
        unsigned char seen[CT_MAX_REFS] = {0}, input[CT_MAX_REFS] = {0};
        int twice = 0, nwleaves = 0;
        double got = ct_written(&t, wide, leaves, 0, t.n[0].lo, t.n[0].hi, seen, &twice, &nwleaves);
        /* the root is a wide node even where one leaf would be cheaper */
        uint32_t kids[2] = {t.n[0].index, t.n[0].index + 1};
        double best = t.n[0].count ? BVH_COLLAPSE_NODE_COST(t.width) * dbox_area(t.n[0].lo, t.n[0].hi) + ct_leaf(&t, 0)
                                   : BVH_COLLAPSE_NODE_COST(t.width) * dbox_area(t.n[0].lo, t.n[0].hi) +
                                         ct_cut(&t, kids, 2, t.width);
        worse += got > best * (1.0 + 1e-5);
        uint32_t entries = 0;
        for (uint32_t i = 0; i < t.nrefs; ++i) input[prim_id_index(t.ids[i])] = 1;
        for (uint32_t i = 0; i < t.nrefs; ++i) {
            wrong += input[i] != (seen[i] > 0);
            entries += seen[i];
        }
        wrong += twice;
        merged += nwleaves < nleaf;
        met += entries < t.nrefs;
    }
    CHECK(worse == 0, "%d collapses costlier than the best wide tree", worse);
    CHECK(wrong == 0, "%d collapses lose a primitive or list one twice in a leaf", wrong);
    CHECK(merged > 20 && met > 5, "only %d of the random trees had leaves merged, %d references met again", merged,
          met);
    printf("collapse: %d of 400 random trees with merged leaves, %d with a primitive's references met again\n", merged,
           met);
}

/* Two levels (kernel/types.h, kinstance): a mesh placed by instances under random rotations,
 * non-uniform scales and mirrors (one with its winding reversed, pbrt's rule), beside world
 * triangles and a sphere, against brute force over the same triangles copied under each transform
 * (the flatten fallback's scene): the same closest hits (t within float rounding of the object-space
 * test), the same world positions, geometric and shading normals (the inverse transpose), and
 * occlusion. A few rays through an edge may disagree (the two tests round differently). */
static void check_instances(uint64_t seed) {
    pcg32 r = pcg32_seed(seed, 5);
#define IRND(a, b) ((a) + ((b) - (a)) * pcg32_float(&r))
    enum { NT = 60, NW = 30, NI = 14 };
    vec3 pos[3 * NT], nrm[3 * NT], wpos[3 * NW];
    uint32_t idx[3 * NT], ridx[3 * NT], widx[3 * NW];
    for (int t = 0; t < NT; ++t) {
        vec3 c = v3(IRND(-1, 1), IRND(-1, 1), IRND(-1, 1));
        for (int k = 0; k < 3; ++k) {
            pos[3 * t + k] = vadd(c, v3(IRND(-0.4f, 0.4f), IRND(-0.4f, 0.4f), IRND(-0.4f, 0.4f)));
            nrm[3 * t + k] = vnorm(v3(IRND(-1, 1), IRND(-1, 1), IRND(0.2f, 1))); /* authored, some facing away */
            idx[3 * t + k] = (uint32_t)(3 * t + k);
            ridx[3 * t + k] = (uint32_t)(3 * t + (k == 0 ? 0 : 3 - k)); /* winding reversed */
        }
    }
    for (int t = 0; t < NW; ++t) {
        vec3 c = v3(IRND(-8, 8), IRND(-8, 8), IRND(-8, 8));
        for (int k = 0; k < 3; ++k) {
            wpos[3 * t + k] = vadd(c, v3(IRND(-1, 1), IRND(-1, 1), IRND(-1, 1)));
            widx[3 * t + k] = (uint32_t)(3 * t + k);
        }
    }
    scene *si = scene_create(), *sf = scene_create();
    int mi = add_grey_diffuse(si), mf = add_grey_diffuse(sf);
    CHECK(scene_add_mesh(si, wpos, NULL, NULL, 3 * NW, widx, NULL, NW, xform_identity(), mi) == 0, "world");
    CHECK(scene_add_mesh(sf, wpos, NULL, NULL, 3 * NW, widx, NULL, NW, xform_identity(), mf) == 0, "world");
    xform ball = xform_trs(v3(0, 0, 7), v3s(0), v3(1.5f, 1.0f, 2.0f));
    CHECK(scene_add_sphere(si, ball, mi) == 0 && scene_add_sphere(sf, ball, mf) == 0, "sphere");
    size_t t0 = si->ntriangles, v0 = si->nvertices;
    CHECK(scene_add_mesh(si, pos, nrm, NULL, 3 * NT, idx, NULL, NT, xform_identity(), mi) == 0, "mesh");
    int mesh = scene_add_instanced_mesh(si, t0, NT, v0, 3 * NT);
    CHECK(mesh >= 0, "instanced mesh");
    xform mirror = xform_identity();
    mirror.m[0][0] = -1.0f;
    for (int i = 0; i < NI; ++i) {
        xform x =
            xform_trs(v3(IRND(-7, 7), IRND(-7, 7), IRND(-7, 7)), v3(IRND(-180, 180), IRND(-180, 180), IRND(-180, 180)),
                      v3(IRND(0.3f, 2.5f), IRND(0.3f, 2.5f), IRND(0.3f, 2.5f)));
        if (i % 3 == 1) x = xform_mul(&x, &mirror);
        if (i == 0) x = xform_identity(); /* the mesh where it is */
        int rev = i == 4;
        CHECK(scene_add_instance(si, mesh, x, -1, rev) == 0, "instance %d", i);
        CHECK(scene_add_mesh(sf, pos, nrm, NULL, 3 * NT, rev ? ridx : idx, NULL, NT, x, mf) == 0, "copy %d", i);
    }
    char err[256] = "";
    CHECK(scene_prepare(si, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare instanced: %s", err);
    CHECK(scene_prepare(sf, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare flat: %s", err);
    CHECK(si->ninstances == NI + 1 && si->k.ninstances == NI + 1, "%zu instances (the world's and %d)", si->ninstances,
          (int)NI);
    /* the tree at this file's width (scene_bvh: the two levels at any width) */
    const bvh *b = scene_bvh(si, BVH_WIDTH, BVH_LEAF_WIDTH, err, sizeof err);
    CHECK(b != NULL, "two-level tree at width %d: %s", BVH_WIDTH, err);
    if (!b) return;
    si->k.nodes = b->wnodes;
    si->k.leaves = b->leaves;
    si->k.leaf_pos = b->leaf_pos;
    si->k.nnodes = (uint32_t)b->nwnodes;
    si->k.nleaf4 = (uint32_t)b->nleaf4;
    CHECK(si->ntriangles == NW + NT && sf->ntriangles == NW + (size_t)NI * NT, "unique triangles %zu", si->ntriangles);
    int nrays = 6000, hits = 0, miss = 0, bad_t = 0, bad_p = 0, bad_ng = 0, bad_ns = 0, bad_occ = 0;
    for (int i = 0; i < nrays; ++i) {
        vec3 o = v3(IRND(-12, 12), IRND(-12, 12), IRND(-12, 12));
        vec3 d = vsub(v3(IRND(-6, 6), IRND(-6, 6), IRND(-6, 6)), o);
        if (i % 2) d = vnorm(d);
        ray ry = make_ray(o, d, i % 5 == 0 ? 0.8f : K_INF);
        hit h, bf;
        int got = trace_closest(&si->k, ry, &h);
        bf.t = ry.tmax;
        bf.prim = PRIM_NONE;
        bf.b1 = bf.b2 = 0.0f;
        bf.inst = 0u;
        ray_shear sh = make_ray_shear(d);
        for (size_t f = 0; f < sf->ntriangles + sf->nspheres; ++f)
            intersect_prim(&sf->k, f < sf->ntriangles ? prim_id(PRIM_TRIANGLE, (uint32_t)f) : prim_id(PRIM_SPHERE, 0),
                           o, d, &sh, &bf);
        int expect = bf.prim != PRIM_NONE;
        if (got != expect) {
            miss++;
            continue;
        }
        if (trace_occluded(&si->k, ry) != expect) bad_occ++;
        if (!got) continue;
        hits++;
        if (fabsf(h.t - bf.t) > 1e-4f * (1.0f + bf.t)) {
            bad_t++;
            continue;
        }
        surface a = surface_at(&si->k, ry, &h), e = surface_at(&sf->k, ry, &bf);
        if (vlen(vsub(a.p, e.p)) > 1e-3f * (1.0f + vlen(e.p))) bad_p++;
        if (vdot(a.ng, e.ng) < 0.999f) bad_ng++;
        if (vdot(a.ns, e.ns) < 0.999f) bad_ns++;
    }
    CHECK(hits > nrays / 10, "%d of %d rays hit", hits, nrays);
    CHECK(miss <= nrays / 500, "%d rays hit on one side only", miss);
    CHECK(bad_t <= nrays / 500, "%d hits at another distance", bad_t);
    CHECK(bad_occ <= nrays / 500, "%d occlusion answers differ", bad_occ);
    CHECK(bad_p == 0 && bad_ng == 0 && bad_ns == 0, "positions %d, geometric normals %d, shading normals %d differ",
          bad_p, bad_ng, bad_ns);
    printf("instances: %d rays, %d hits; %d one-sided, %d distance, %d occlusion, %d/%d/%d p/ng/ns mismatches\n", nrays,
           hits, miss, bad_t, bad_occ, bad_p, bad_ng, bad_ns);
    scene_destroy(si);
    scene_destroy(sf);
#undef IRND
}

int main(void) {
    check_instances(77);
    check_collapse_optimal();
    check_node_visit();
    check_edges();
    check_spatial_splits();
    const int configs[4][3] = {{1, 0, 0}, {200, 0, 0}, {3000, 50, 50}, {0, 100, 0}};
    for (int c = 0; c < 4; ++c) {
        scene *s = random_scene(100 + (uint64_t)c, configs[c][0], configs[c][1], configs[c][2]);
        check_invariants(s);
        check_traversal(s, 7 + (uint64_t)c);
        CHECK(s->bvh.max_depth < BVH_MAX_DEPTH, "depth %d fits the traversal stack", s->bvh.max_depth);
        if (configs[c][0] + configs[c][1] + configs[c][2] > 0) check_other_builds(s, 11 + (uint64_t)c);
        scene_destroy(s);
    }
    /* many coincident primitives (all centroids equal) still build and traverse */
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    int mat = scene_add_material(s, "m", m);
    for (int i = 0; i < 300; ++i) scene_add_sphere(s, xform_trs(v3s(0), v3s(0), v3s(1.0f + 0.001f * i)), mat);
    CHECK(prepare(s) == 0, "prepare coincident");
    check_invariants(s);
    check_traversal(s, 3);
    check_cw8(s, 1, 4, NULL);
    scene_destroy(s);
    return test_result("test_bvh");
}
