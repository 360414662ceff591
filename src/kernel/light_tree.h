/* Light tree traversal for next-event estimation (the tree: types.h, light_tree_node; its builder:
 * src/scene/light_tree.c). After pbrt-v4's BVHLightSampler (its LightBounds::Importance) and
 * Cycles' light tree: a node's importance as seen from a shading point p with normal n is
 *   phi * cos(theta') * cos(theta'_i) / d^2,
 * phi the node's power, d the distance to the node's centre (at least its radius, half the box's
 * diagonal, as pbrt does, so that a point inside a large node does not blow up), theta' the smallest angle
 * between any emission direction the node allows and the direction from the node to p (the angle
 * between the axis and that direction less theta_o and less the angle the box subtends; 0 where
 * that exceeds theta_e), theta'_i the smallest angle between n and a direction into the box
 * (none where n is zero: a point without a surface).
 *
 * Sampling descends from the root choosing a child with probability proportional to its
 * importance; light_tree_pmf walks a light's trail (kscene.light_trail) and multiplies the same
 * ratios, computed by the same function from the same numbers, so the pmf that MIS uses is the
 * probability that sampling produced, up to the rounding of the product. */
#ifndef CAUSTIC_KERNEL_LIGHT_TREE_H
#define CAUSTIC_KERNEL_LIGHT_TREE_H

#include "types.h"

/* cos(max(0, a - b)) and sin(max(0, a - b)) from the cosines and sines of angles a and b in [0, pi]. */
KFN float light_cos_sub_clamped(float sin_a, float cos_a, float sin_b, float cos_b) {
    return cos_a > cos_b ? 1.0f : cos_a * cos_b + sin_a * sin_b;
}
KFN float light_sin_sub_clamped(float sin_a, float cos_a, float sin_b, float cos_b) {
    return cos_a > cos_b ? 0.0f : sin_a * cos_b - cos_a * sin_b;
}

/* The importance of node nd for shading point p with (shading) normal n, or n zero. */
KFN float light_node_importance(const light_tree_node *nd, vec3 p, vec3 n) {
    vec3 dv = vsub(p, nd->c);
    float dc2 = vlen2(dv);
    float d2 = kmax(dc2, kmax(nd->r, 1e-12f));
    /* the cone of directions from p into the box's bounding sphere */
    float r2 = nd->r * nd->r;
    float inv_d = dc2 > 0.0f ? 1.0f / sqrtf(dc2) : 0.0f;
    float cos_b = -1.0f, sin_b = 0.0f;
    if (dc2 >= r2 && dc2 > 0.0f) {
        sin_b = kmin(nd->r * inv_d, 1.0f);
        cos_b = ksafe_sqrt(1.0f - sin_b * sin_b);
    }
    /* the direction from the box's centre to p, against the node's emission cone */
    vec3 wi = dc2 > 0.0f ? vscale(dv, inv_d) : v3(0.0f, 0.0f, 1.0f);
    float cos_w = vdot(nd->w, wi);
    if (nd->child & LIGHT_NODE_TWO_SIDED) cos_w = fabsf(cos_w);
    float sin_w = ksafe_sqrt(1.0f - cos_w * cos_w);
    float cos_x = light_cos_sub_clamped(sin_w, cos_w, nd->sin_o, nd->cos_o);
    float sin_x = light_sin_sub_clamped(sin_w, cos_w, nd->sin_o, nd->cos_o);
    float cos_p = light_cos_sub_clamped(sin_x, cos_x, sin_b, cos_b);
    if (cos_p <= nd->cos_e) return 0.0f;
    float imp = nd->phi * cos_p / d2;
    if (n.x != 0.0f || n.y != 0.0f || n.z != 0.0f) {
        float cos_i = fabsf(vdot(wi, n));
        float sin_i = ksafe_sqrt(1.0f - cos_i * cos_i);
        imp *= light_cos_sub_clamped(sin_i, cos_i, sin_b, cos_b);
    }
    return kmax(imp, 0.0f);
}

/* The weights of inner node i's children for p (normal n, or zero): their importances, or where
 * both are 0 (a node whose loose box passed while its children's tighter ones do not), their
 * powers, so that the picks from every point sum to one (the lights picked then contribute
 * nothing, as pbrt's failed samples, but sampling and light_tree_pmf stay one distribution). */
KFN void light_tree_children(const kscene *s, uint32_t i, vec3 p, vec3 n, float *c0, float *c1) {
    const light_tree_node *a = &s->light_nodes[i + 1u],
                          *b = &s->light_nodes[s->light_nodes[i].child & LIGHT_NODE_INDEX];
    *c0 = light_node_importance(a, p, n);
    *c1 = light_node_importance(b, p, n);
    if (!(*c0 + *c1 > 0.0f)) {
        *c0 = a->phi;
        *c1 = b->phi;
    }
}

/* Picks a light of the tree for p (normal n, or zero) with uniform u: its index in *li and the
 * probability of the pick (among the tree's lights) in *pmf. 0 where no light can matter. */
KFN int light_tree_sample(const kscene *s, vec3 p, vec3 n, float u, uint32_t *li, float *pmf) {
    uint32_t i = 0;
    float prob = 1.0f;
    for (int depth = 0; depth < LIGHT_TREE_MAX_DEPTH; ++depth) {
        const light_tree_node *nd = &s->light_nodes[i];
        if (nd->child & LIGHT_NODE_LEAF) {
            *li = nd->child & LIGHT_NODE_INDEX;
            *pmf = prob;
            return prob > 0.0f;
        }
        float c0, c1;
        light_tree_children(s, i, p, n, &c0, &c1);
        float sum = c0 + c1;
        if (!(sum > 0.0f)) return 0;
        float p0 = c0 / sum, p1 = c1 / sum;
        if ((u < p0 && p0 > 0.0f) || !(p1 > 0.0f)) {
            u = kmin(u / p0, 0.99999994f);
            prob *= p0;
            i = i + 1u;
        } else {
            u = kmin((u - p0) / p1, 0.99999994f);
            prob *= p1;
            i = nd->child & LIGHT_NODE_INDEX;
        }
    }
    return 0;
}

/* The probability that light_tree_sample picks light li from p (normal n, or zero). */
KFN float light_tree_pmf(const kscene *s, uint32_t li, vec3 p, vec3 n) {
    uint64_t trail = s->light_trail[li];
    uint32_t i = 0;
    float prob = 1.0f;
    for (int depth = 0; depth < LIGHT_TREE_MAX_DEPTH; ++depth) {
        const light_tree_node *nd = &s->light_nodes[i];
        if (nd->child & LIGHT_NODE_LEAF) return prob;
        uint32_t second = (uint32_t)(trail & 1u);
        float c0, c1;
        light_tree_children(s, i, p, n, &c0, &c1);
        float sum = c0 + c1;
        if (!(sum > 0.0f)) return 0.0f;
        prob *= (second ? c1 : c0) / sum;
        if (!(prob > 0.0f)) return 0.0f;
        i = second ? nd->child & LIGHT_NODE_INDEX : i + 1u;
        trail >>= 1;
    }
    return 0.0f;
}

#endif
