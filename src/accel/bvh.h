/* Binned-SAH BVH over all primitives (triangles, spheres, quads), built in parallel. */
#ifndef CAUSTIC_ACCEL_BVH_H
#define CAUSTIC_ACCEL_BVH_H

#include <stddef.h>
#include "kernel/types.h"

typedef struct bvh {
    bvh_node *nodes; size_t nnodes;      /* binary SAH tree */
    bvh4_node *nodes4; size_t nnodes4;   /* the same tree collapsed to 4-wide nodes */
    uint32_t *prim_ids; size_t nprims;
    /* statistics */
    double build_seconds, sah_cost;
    int max_depth, max_leaf;
    size_t nleaves;
} bvh;

/* Builds over the primitives described by their bounds/centroids/ids (n entries). */
int bvh_build(bvh *b, const vec3 *lo, const vec3 *hi, const uint32_t *ids, size_t n, int threads);
void bvh_free(bvh *b);
/* Collapses a binary tree (root at 0; an inner node's children at index and index + 1) into
 * 4-wide nodes at out (room for as many nodes as the binary tree has); returns the count. Used
 * by bvh_build and by the GPU LBVH builder (src/cuda/lbvh.cu). */
size_t bvh_collapse4(const bvh_node *bin, bvh4_node *out);

#endif
