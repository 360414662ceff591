/* Binned-SAH BVH over all primitives (triangles, spheres, quads), built in parallel. */
#ifndef CAUSTIC_ACCEL_BVH_H
#define CAUSTIC_ACCEL_BVH_H

#include <stddef.h>
#include "kernel/types.h"

typedef struct bvh {
    bvh_node *nodes;
    size_t nnodes; /* binary SAH tree */
    int width;     /* of the collapsed tree: 4 or 8 */
    void *wnodes;
    size_t nwnodes; /* the same tree collapsed to `width`-wide nodes
                                            (bvh4_node / bvh8_node, 64-byte aligned) */
    uint32_t *prim_ids;
    size_t nprims; /* references in the binary tree's leaf order: a
                                            triangle split by spatial splits has several (nprims >= input) */
    bvh_leaf4 *leaves;
    size_t nleaf4;   /* the wide tree's leaf blocks (kernel layout) */
    float *leaf_pos; /* the blocks' vertex positions and ids for the CPU's leaf
                                            test (kscene.leaf_pos, bvh_leaf_positions); NULL
                                            without leaf blocks */
    /* statistics */
    double build_seconds, sah_cost; /* sah_cost: the binary tree's, leaf cost in blocks */
    double wide_sah_cost;           /* the collapsed tree's, leaf cost as the build counts it */
    int max_depth, max_leaf;
    size_t nleaves;
} bvh;

/* Builds over the primitives described by their bounds/ids (n entries); `tris` and `positions`
 * (the scene's triangles and vertex positions, may be NULL without triangles) fill the leaf
 * blocks' vertex indices and let large triangles be split into several references. The tree
 * is collapsed to nodes of `width` (4 or 8: the width of the kernel that will traverse it). */
int bvh_build(bvh *b, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
              const vec3 *positions, int threads, int width);
/* The same with the SAH's leaf cost counted in units of sah_lanes primitives and nodes of the
 * given width (4 or 8): bvh_build uses BVH_LEAF_WIDTH (the CPU tests a leaf block's four lanes
 * together), the CUDA backend 1 (a GPU thread tests the lanes one after another, so smaller
 * leaves pay off) and width 4. */
int bvh_build_lanes(bvh *b, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
                    const vec3 *positions, int threads, int sah_lanes, int width);
void bvh_free(bvh *b);
/* Two levels in one tree (types.h, kinstance): the top-level tree `top` (built over instance
 * bounds, its leaf lanes prim_instance_lane(i)) and the bottom-level trees parts[0..nparts), all of
 * one width, into *out: top's nodes and leaf blocks first (its root stays node 0), then each part's
 * with its references moved past the ones before; instance i's lanes get part lane_part[i]'s root
 * node in the block's v0. leaf_pos is the parts' (the TLAS blocks' rows 0, their ids kept). The
 * binary trees are not kept (out->nodes NULL). Returns 0, or -1 (out of memory, widths differ,
 * more references than a stack entry holds). */
int bvh_combine(bvh *out, const bvh *top, const bvh *parts, size_t nparts, const uint32_t *lane_part);
/* SAH builds run in this process so far (tests: a scene's trees are built once). */
size_t bvh_build_count(void);
/* The collapse's SAH: a `width`-wide node costs BVH_COLLAPSE_NODE_COST(width) leaf tests (the
 * binary builder's inner node costs one; the 8-wide node's box tests cost about two of the CPU's
 * four-lane leaf tests: docs/performance-log.md, 2026-11-28, branch `bvhopt`), a leaf at most BVH_COLLAPSE_MAX_LEAF
 * primitives (4 blocks: a compressed node's leaf offsets hold 7 such leaves). */
#define BVH_COLLAPSE_NODE_COST(width) ((double)(width) / BVH4_WIDTH)
#define BVH_COLLAPSE_MAX_LEAF         16u
/* Collapses a binary tree of nbin nodes (root at 0; an inner node's children at index and
 * index + 1; a leaf's primitives at prim_ids[index .. index + count)) into `width`-wide nodes (4:
 * bvh4_node, 8: bvh8_node) at out (room for nbin / 2 + 1 nodes) and their leaf blocks at leaves
 * (room for bvh_leaf4_bound(leaf count, primitive count) blocks; `tris` gives triangle lanes
 * their vertex indices; a leaf lists a primitive once even if several of its references are
 * there). The wide tree is the one of least SAH cost, leaf tests counted per sah_lanes primitives
 * (bvh_build_lanes), that keeps the binary tree's boxes: every wide node and leaf is a binary
 * node's subtree. Returns the node count (0: out of memory) and
 * sets *nleaf4 to the block count. Used by bvh_build and by the GPU LBVH builder
 * (src/cuda/lbvh.cu). */
size_t bvh_collapse(const bvh_node *bin, size_t nbin, const uint32_t *prim_ids, const triangle *tris, int width,
                    int sah_lanes, void *out, bvh_leaf4 *leaves, size_t *nleaf4);
/* The vertex positions and primitive ids of nleaf4 leaf blocks as the CPU's leaf test reads them
 * (kscene.leaf_pos: BVH_LEAF_POS_FLOATS floats per block; positions may be NULL for a scene
 * without triangles: the vertices are 0), 64-byte aligned (free()); NULL when out of memory. */
float *bvh_leaf_positions(const bvh_leaf4 *leaves, size_t nleaf4, const vec3 *positions);
/* The same for the GPU's leaf test (kscene.leaf_pos on a CUDA device): BVH_LEAF_LANES_FLOATS floats
 * per block, each lane's vertices and primitive id together (types.h; positions may be NULL for a
 * scene without triangles: the vertices are 0), 64-byte aligned (free()); NULL when out of memory. */
float *bvh_leaf_lanes(const bvh_leaf4 *leaves, size_t nleaf4, const vec3 *positions);
/* The compressed 8-wide layout of an 8-wide tree (nnodes bvh8_nodes at wide, as bvh_collapse
 * lays them out) into out (nnodes cw8_nodes, the same indices; src/accel/bvh_compress.c).
 * Returns -1 with a message when a box is not finite or a node's children lie too far apart. */
int bvh_compress8(const void *wide, size_t nnodes, cw8_node *out, char *err, size_t errlen);
/* The dequantised box of a compressed node's slot, in exact arithmetic (tests). */
void cw8_child_box(const cw8_node *n, int slot, double lo[3], double hi[3]);
/* Bytes of one node of the given width. */
static inline size_t bvh_wnode_size(int width) { return width == BVH8_WIDTH ? sizeof(bvh8_node) : sizeof(bvh4_node); }
/* Leaf blocks that a tree of nleaves leaves over nprims primitives needs at most. */
static inline size_t bvh_leaf4_bound(size_t nleaves, size_t nprims) { return nleaves + nprims / BVH_LEAF_WIDTH + 1; }

#endif
