/* The compressed 8-wide layout (cw8_node, kernel/types.h) from an 8-wide tree of bvh8_nodes:
 * node i stays node i, each child box quantised conservatively: its planes, in exact arithmetic
 * (the traversal's rounding is its own to bound: bvh_traverse.h, cw8_visit), contain the float box. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accel/bvh.h"

/* Plane q of a grid at p with spacing sp, in double: exact (sp * q has at most 8 significant bits)
 * unless p's exponent exceeds sp's by more than 44, when it is within 2^-53 relative. */
static double plane(float p, float sp, uint32_t q) { return (double)p + (double)sp * (double)q; }

/* Quantises one axis of a node's used slots (lo/hi rows) into qlo/qhi on a grid at p; returns the
 * exponent bits of the spacing, or -1 when the planes are not finite. */
static int quantise_axis(const float *lo, const float *hi, uint32_t used, float *p_out, uint8_t *qlo, uint8_t *qhi) {
    float p = INFINITY, top = -INFINITY;
    for (int i = 0; i < CW8_WIDTH; ++i)
        if (used >> i & 1u) {
            p = fminf(p, lo[i]);
            top = fmaxf(top, hi[i]);
        }
    if (!isfinite(p) || !isfinite(top)) return -1;
    /* the smallest power-of-two spacing that spans the node in 255 steps, raised while rounding
     * pushes some child's upper plane past 255 */
    int e2;
    frexpf((top - p) / 255.0f, &e2); /* (top - p) / 255 < 2^e2 */
    int e = e2 + 127;
    if (e < 1) e = 1;
    for (; e <= 254; ++e) {
        float sp = cw8_spacing((uint32_t)e);
        int ok = 1;
        for (int i = 0; i < CW8_WIDTH && ok; ++i) {
            if (!(used >> i & 1u)) {
                qlo[i] = 255;
                qhi[i] = 0;
                continue;
            }
            double fl = floor(((double)lo[i] - p) / sp), ce = ceil(((double)hi[i] - p) / sp);
            uint32_t a = fl < 0 ? 0u : fl > 255 ? 255u : (uint32_t)fl;
            while (a > 0 && plane(p, sp, a) > lo[i]) --a;
            if (plane(p, sp, a) > lo[i]) {
                ok = 0;
                break;
            } /* cannot happen: plane 0 is p */
            double bq = ce < 0 ? 0 : ce;
            if (bq > 255) {
                ok = 0;
                break;
            }
            uint32_t b = (uint32_t)bq;
            while (b < 255 && plane(p, sp, b) < hi[i]) ++b;
            if (plane(p, sp, b) < hi[i]) {
                ok = 0;
                break;
            }
            qlo[i] = (uint8_t)a;
            qhi[i] = (uint8_t)b;
        }
        if (ok) {
            *p_out = p;
            return e;
        }
    }
    return -1;
}

int bvh_compress8(const void *wide, size_t nnodes, cw8_node *out, char *err, size_t errlen) {
    const bvh8_node *in = wide;
    for (size_t ni = 0; ni < nnodes; ++ni) {
        const bvh8_node *n = &in[ni];
        cw8_node *c = &out[ni];
        memset(c, 0, sizeof *c);
        uint32_t used = 0, child_base = UINT32_MAX, leaf_base = UINT32_MAX;
        for (int i = 0; i < CW8_WIDTH; ++i) {
            if (n->lo_x[i] == INFINITY) continue; /* an empty slot (bvh_collapse) */
            used |= 1u << i;
            uint32_t cnt = n->ref[i] & BVH_MAX_LEAF_BLOCKS, ref = n->ref[i] >> BVH_COUNT_BITS;
            uint32_t *base = cnt ? &leaf_base : &child_base;
            if (ref < *base) *base = ref;
        }
        c->used = (uint8_t)used;
        c->child_base = child_base == UINT32_MAX ? 0 : child_base;
        c->leaf_base = leaf_base == UINT32_MAX ? 0 : leaf_base;
        for (int i = 0; i < CW8_WIDTH; ++i) {
            if (!(used >> i & 1u)) continue;
            uint32_t cnt = n->ref[i] & BVH_MAX_LEAF_BLOCKS, ref = n->ref[i] >> BVH_COUNT_BITS;
            uint32_t off = ref - (cnt ? c->leaf_base : c->child_base);
            if (off > CW8_MAX_OFFSET) {
                snprintf(err, errlen, "compressed BVH: node %zu: a child %u entries past its node's first", ni, off);
                return -1;
            }
            c->meta[i] = (uint8_t)(cnt << CW8_META_COUNT_SHIFT | off);
        }
        const float *lo[3] = {n->lo_x, n->lo_y, n->lo_z}, *hi[3] = {n->hi_x, n->hi_y, n->hi_z};
        for (int a = 0; a < 3; ++a) {
            int e = used ? quantise_axis(lo[a], hi[a], used, &c->p[a], c->qlo[a], c->qhi[a]) : 1;
            if (e < 0) {
                snprintf(err, errlen, "compressed BVH: node %zu: a child box is not finite", ni);
                return -1;
            }
            c->e[a] = (uint8_t)e;
        }
    }
    return 0;
}

void cw8_child_box(const cw8_node *n, int slot, double lo[3], double hi[3]) {
    for (int a = 0; a < 3; ++a) {
        float sp = cw8_spacing(n->e[a]);
        lo[a] = plane(n->p[a], sp, n->qlo[a][slot]);
        hi[a] = plane(n->p[a], sp, n->qhi[a][slot]);
    }
}
