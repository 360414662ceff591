/* Iterative traversal of the 4-wide BVH: one slab test covers a node's four child boxes; hit
 * children are visited nearest first, the others stacked with their entry distance so that a
 * popped entry beyond the current hit is skipped. */
#ifndef CAUSTIC_KERNEL_BVH_TRAVERSE_H
#define CAUSTIC_KERNEL_BVH_TRAVERSE_H

#include "intersect.h"

/* A 4-wide node pushes at most 3 entries; the build caps the depth at BVH_MAX_DEPTH levels
 * (src/accel/bvh.c), so 3 * BVH_MAX_DEPTH entries always suffice. */
#define BVH_MAX_DEPTH 42
#define BVH_STACK_SIZE (3 * BVH_MAX_DEPTH + 2)

KFN vec3 safe_reciprocal(vec3 d) {
    /* Zero components become huge (signed) values so slab tests stay well defined. */
    const float big = 1e30f;
    return v3(d.x != 0.0f ? 1.0f / d.x : copysignf(big, d.x),
              d.y != 0.0f ? 1.0f / d.y : copysignf(big, d.y),
              d.z != 0.0f ? 1.0f / d.z : copysignf(big, d.z));
}

/* Entry distances of the ray into the node's four boxes (K_INF where missed). Written as a
 * plain loop so compilers vectorise it; the 1+2ulp factor keeps flat boxes (Ize 2013). */
KFN void bvh4_intersect_boxes(const bvh4_node *n, vec3 o, vec3 inv_d, float tmax, float *tnear_out) {
    for (int i = 0; i < BVH4_WIDTH; ++i) {
        float tx0 = (n->lo_x[i] - o.x) * inv_d.x, tx1 = (n->hi_x[i] - o.x) * inv_d.x;
        float ty0 = (n->lo_y[i] - o.y) * inv_d.y, ty1 = (n->hi_y[i] - o.y) * inv_d.y;
        float tz0 = (n->lo_z[i] - o.z) * inv_d.z, tz1 = (n->hi_z[i] - o.z) * inv_d.z;
        float tn = kmax(kmax(kmin(tx0, tx1), kmin(ty0, ty1)), kmax(kmin(tz0, tz1), 0.0f));
        float tf = kmin(kmin(kmax(tx0, tx1), kmax(ty0, ty1)), kmin(kmax(tz0, tz1), tmax));
        tnear_out[i] = tn <= tf * 1.00000024f ? tn : K_INF;
    }
}

/* Closest hit along r within (0, r.tmax). `any` stops at the first hit (shadow rays). */
KFN int trace_ray(const kscene *s, ray r, hit *h, int any) {
    h->t = r.tmax;
    h->prim = PRIM_NONE;
    if (s->nnodes == 0) return 0;
    vec3 inv_d = safe_reciprocal(r.d);
    ray_shear sh = make_ray_shear(r.d);
    /* stack entries: child reference + count (0 = inner node) + entry distance */
    uint32_t st_ref[BVH_STACK_SIZE], st_cnt[BVH_STACK_SIZE];
    float st_t[BVH_STACK_SIZE];
    int sp = 0;
    uint32_t ref = 0, cnt = 0;  /* start at the root node */
    for (;;) {
        if (cnt > 0) {
            /* a leaf */
            for (uint32_t k = 0; k < cnt; ++k)
                if (intersect_prim(s, s->prim_ids[ref + k], r.o, r.d, &sh, h) && any) return 1;
        } else {
            const bvh4_node *n = &s->nodes[ref];
            float tn[BVH4_WIDTH];
            bvh4_intersect_boxes(n, r.o, inv_d, h->t, tn);
            /* order the hit children near to far (insertion sort of at most four); any-hit rays
             * only need some hit, so they skip the sort */
            int order[BVH4_WIDTH], nhit = 0;
            for (int i = 0; i < BVH4_WIDTH; ++i) {
                if (tn[i] == K_INF) continue;
                int j = nhit++;
                while (!any && j > 0 && tn[order[j - 1]] > tn[i]) { order[j] = order[j - 1]; --j; }
                order[j] = i;
            }
            if (nhit > 0) {
                /* push all but the nearest, farthest first, then descend into the nearest */
                for (int j = nhit - 1; j >= 1; --j) {
                    int c = order[j];
                    st_ref[sp] = n->child[c]; st_cnt[sp] = n->count[c]; st_t[sp] = tn[c];
                    sp++;
                }
                ref = n->child[order[0]];
                cnt = n->count[order[0]];
                continue;
            }
        }
        /* pop the next entry that can still hold a nearer hit */
        for (;;) {
            if (sp == 0) return h->prim != PRIM_NONE;
            --sp;
            if (st_t[sp] < h->t) { ref = st_ref[sp]; cnt = st_cnt[sp]; break; }
        }
    }
}

KFN int trace_closest(const kscene *s, ray r, hit *h) { return trace_ray(s, r, h, 0); }
KFN int trace_occluded(const kscene *s, ray r) { hit h; return trace_ray(s, r, &h, 1); }

#endif
