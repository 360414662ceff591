/* Binned-SAH BVH over all primitives (triangles, spheres, quads), built in parallel. */
#ifndef CAUSTIC_ACCEL_BVH_H
#define CAUSTIC_ACCEL_BVH_H

#include <stddef.h>
#include "kernel/types.h"

typedef struct bvh {
    bvh_node *nodes; size_t nnodes;      /* binary SAH tree */
    bvh4_node *nodes4; size_t nnodes4;   /* the same tree collapsed to 4-wide nodes */
    uint32_t *prim_ids; size_t nprims;   /* references in the binary tree's leaf order: a
                                            pre-split triangle has several (nprims >= input) */
    bvh_leaf4 *leaves; size_t nleaf4;    /* the 4-wide tree's leaf blocks (kernel layout) */
    /* statistics */
    double build_seconds, sah_cost;
    int max_depth, max_leaf;
    size_t nleaves;
} bvh;

/* Builds over the primitives described by their bounds/ids (n entries); `tris` and `positions`
 * (the scene's triangles and vertex positions, may be NULL without triangles) fill the leaf
 * blocks' vertex indices and let large triangles be split into several references. */
int bvh_build(bvh *b, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, const triangle *tris,
              const vec3 *positions, int threads);
void bvh_free(bvh *b);

#endif
