/* Iterative BVH traversal: nearer child first, far child on a small stack, early exit when the
 * stacked box starts beyond the current hit. */
#ifndef CAUSTIC_KERNEL_BVH_TRAVERSE_H
#define CAUSTIC_KERNEL_BVH_TRAVERSE_H

#include "intersect.h"

#define BVH_STACK_SIZE 64

KFN vec3 safe_reciprocal(vec3 d) {
    /* Zero components become huge (signed) values so slab tests stay well defined. */
    const float big = 1e30f;
    return v3(d.x != 0.0f ? 1.0f / d.x : copysignf(big, d.x),
              d.y != 0.0f ? 1.0f / d.y : copysignf(big, d.y),
              d.z != 0.0f ? 1.0f / d.z : copysignf(big, d.z));
}

/* Closest hit along r within (0, r.tmax). `any` stops at the first hit (shadow rays). */
KFN int trace_ray(const kscene *s, ray r, hit *h, int any) {
    h->t = r.tmax;
    h->prim = PRIM_NONE;
    if (s->nnodes == 0) return 0;
    vec3 inv_d = safe_reciprocal(r.d);
    ray_shear sh = make_ray_shear(r.d);
    uint32_t stack[BVH_STACK_SIZE];
    float stack_t[BVH_STACK_SIZE];
    int sp = 0;
    uint32_t node = 0;
    if (intersect_aabb(s->nodes[0].lo, s->nodes[0].hi, r.o, inv_d, h->t) == K_INF) return 0;
    for (;;) {
        const bvh_node *n = &s->nodes[node];
        if (n->count > 0) {
            for (uint32_t k = 0; k < n->count; ++k) {
                if (intersect_prim(s, s->prim_ids[n->index + k], r.o, r.d, &sh, h) && any) return 1;
            }
        } else {
            uint32_t c0 = n->index, c1 = n->index + 1;
            float t0 = intersect_aabb(s->nodes[c0].lo, s->nodes[c0].hi, r.o, inv_d, h->t);
            float t1 = intersect_aabb(s->nodes[c1].lo, s->nodes[c1].hi, r.o, inv_d, h->t);
            if (t0 != K_INF || t1 != K_INF) {
                if (t0 == K_INF) { node = c1; continue; }
                if (t1 == K_INF) { node = c0; continue; }
                uint32_t near = t0 <= t1 ? c0 : c1, far = t0 <= t1 ? c1 : c0;
                if (sp < BVH_STACK_SIZE) { stack[sp] = far; stack_t[sp] = kmax(t0, t1); sp++; }
                node = near;
                continue;
            }
        }
        /* pop the next box that can still hold a nearer hit */
        for (;;) {
            if (sp == 0) return h->prim != PRIM_NONE;
            --sp;
            if (stack_t[sp] < h->t) { node = stack[sp]; break; }
        }
    }
}

KFN int trace_closest(const kscene *s, ray r, hit *h) { return trace_ray(s, r, h, 0); }
KFN int trace_occluded(const kscene *s, ray r) { hit h; return trace_ray(s, r, &h, 1); }

#endif
