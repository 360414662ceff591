/* The light tree's builder (the kernel's side: kernel/light_tree.h; the node: types.h,
 * light_tree_node). */
#ifndef CAUSTIC_ACCEL_LIGHT_TREE_H
#define CAUSTIC_ACCEL_LIGHT_TREE_H

#include <stddef.h>
#include "kernel/types.h"

/* What the builder needs of one light: where it is, how much it emits, and which way. */
typedef struct light_bounds {
    vec3 lo, hi;   /* box around the emitter (a point: lo == hi) */
    double phi;    /* power (> 0) */
    vec3 w;        /* axis of the normals' cone (unit) */
    float cos_o;   /* cosine of the normals' spread about w (1: one normal; -1: every direction) */
    float cos_e;   /* cosine of the emission's spread about a normal (0: a hemisphere) */
    int two_sided; /* emits on both sides of its normals */
} light_bounds;

/* Builds the tree over lights[0..n) (n >= 1; indices into the scene's light table), light i's
 * bounds lb[i]; lights whose lb[i].phi is 0 are left out (a directional light: trail 0).
 * *nodes gets 2 m - 1 nodes for the m lights in it, depth first (kernel/light_tree.h reads them),
 * *trail one bit trail per light (bit d set where depth d takes the second child). Depth stays
 * below LIGHT_TREE_MAX_DEPTH. Returns 0, or -1 out of memory or with no light in the tree. */
int light_tree_build(const light_bounds *lb, size_t n, light_tree_node **nodes, uint32_t *nnodes, uint64_t **trail);

#endif
