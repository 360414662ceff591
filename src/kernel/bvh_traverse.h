/* Iterative traversal of the wide BVH (BVH_WIDTH, types.h: 8 with AVX2, else 4): one slab test
 * covers a node's child boxes; hit children are visited nearest first, the others stacked with
 * their entry distance so that a popped entry beyond the current hit is skipped. Leaves are
 * blocks of four primitives (bvh_leaf4) whose triangle lanes are tested together.
 *
 * The loop (trace_ray_inline) is one for both targets: "while-while" (Aila & Laine 2009), inner
 * nodes until a leaf is reached, then the leaf, so that the lanes of a GPU warp run the node code
 * together and the leaf code together; on the GPU a found leaf waits while other lanes of the
 * warp still visit nodes (kwarp_all, their speculative traversal). Two helpers differ per target
 * (Cycles style): bvh_visit (the slab tests, then descend into the nearest hit child and push the
 * others) has an AVX2 body for 8-wide nodes (KERNEL_SIMD_AVX2, compat.h; the avx512 level too),
 * an SSE and a scalar body for 4-wide nodes (bvh4_visit); leaf_intersect (a leaf's blocks) tests two blocks at once
 * over 8 lanes with AVX2 (leaf8_intersect; a lone block too, with empty upper lanes), else one at
 * a time with leaf4_intersect, which has an SSE body on the CPU (KERNEL_SIMD_SSE) and a scalar
 * body on the GPU and elsewhere. The SIMD
 * bodies load a block's vertex positions as rows from kscene.leaf_pos (no gather through the
 * vertex indices, which they read only for the rare edge fallback). The scalar
 * bodies read a node's rows and a block's lanes with 16-byte loads (kload_f4/kload_u4: 128-bit
 * loads on the GPU) and keep everything in registers: the child order comes from a sorting
 * network over (distance, slot) keys, with no array indexed at run time (which would go to local
 * memory on the GPU); its slab tests are multiply-adds whose distances it compares as the integers
 * of their bits (three-operand integer min/max, one Hopper DPX instruction each). All bodies report
 * the same hits: the slab tests are conservative (make_bvh_ray's margins) and decide only which
 * boxes are visited, and the SSE triangle test performs the scalar watertight test's float
 * operations in the same order (no FMA contraction in ISO C mode), lanes that need the test's
 * double-precision edge fallback going through the scalar function. Only the visiting order may
 * differ (children whose entry distances agree to 3 ulp; leaves that wait on the GPU), which
 * matters only for exact ties between two primitives' hit distances. */
#ifndef CAUSTIC_KERNEL_BVH_TRAVERSE_H
#define CAUSTIC_KERNEL_BVH_TRAVERSE_H

#include "intersect.h"

/* A node pushes at most W - 1 entries (W: the widest layout this kernel reads, the 8-wide
 * compressed nodes on every target); the build caps the binary tree's depth at BVH_MAX_DEPTH
 * levels (src/accel/bvh.c) and a wide node takes at least one of them, so
 * (W - 1) * BVH_MAX_DEPTH entries always suffice. */
#define BVH_MAX_DEPTH  42
#define BVH_STACK_SIZE ((CW8_WIDTH - 1) * BVH_MAX_DEPTH + 2)

KFN vec3 safe_reciprocal(vec3 d) {
    /* Zero and tiny components become huge (signed) finite values so slab tests stay well defined
     * (o * inv_d too: make_bvh_ray's slab offsets). */
    const float big = 1e30f;
    return v3(fabsf(d.x) > 1e-30f ? 1.0f / d.x : copysignf(big, d.x),
              fabsf(d.y) > 1e-30f ? 1.0f / d.y : copysignf(big, d.y),
              fabsf(d.z) > 1e-30f ? 1.0f / d.z : copysignf(big, d.z));
}

/* Per-ray constants of the traversal. */
typedef struct bvh_ray {
    vec3 o, d, inv_d;
    ray_shear sh;
    int near_x, near_y, near_z; /* float offsets of the near planes in a bvh_wnode */
#if !KERNEL_SIMD_SSE
    vec3 off_n, off_f; /* the scalar slab tests' offsets: a near (far) plane q lies at q * inv_d + off_n (off_f) */
#endif
#if KERNEL_SIMD_SSE
    __m128 ox, oy, oz, ix, iy, iz; /* broadcast origin and reciprocal direction */
    __m128 sx, sy, sz;             /* shear with (kx, ky) = the two axes after kz, cyclically */
#endif
#if KERNEL_SIMD_AVX2
    __m256 ox8, oy8, oz8, ix8, iy8, iz8; /* the same, 8 lanes (node tests, pairs of leaf blocks) */
    __m256 sx8, sy8, sz8;
    __m256 nx8, ny8, nz8, fx8, fy8, fz8; /* the node test's slab offsets (bvh8_slabs) */
#endif
} bvh_ray;

KFN bvh_ray make_bvh_ray(ray r) {
    bvh_ray b;
    b.o = r.o;
    b.d = r.d;
    b.inv_d = safe_reciprocal(r.d);
    b.sh = make_ray_shear(r.d);
    /* A plane q lies at fma(q, inv_d, -o * inv_d) along the ray: one rounding of o * inv_d more than
     * (q - o) * inv_d, at most |o * inv_d| 2^-24 (plus that of the subtraction in BVH_SLAB_OFFSET),
     * which moving near planes by |o * inv_d| 2^-22 nearer and far planes as much farther covers
     * (boxes grow by |o| 2^-22 per axis: no visible cost); the relative margin on the exit distance
     * covers the multiply-add's own rounding, as it covered (q - o) * inv_d's two (and a target
     * without the fused operation, kmuladd, rounds q * inv_d and the sum: 2^-24 (|t| + |o * inv_d|)
     * and 2^-24 |t|, covered the same way). The AVX2 and the scalar slab tests take these offsets
     * (the SSE body subtracts o first). */
#define BVH_SLAB_OFFSET(oi, pm) (-(oi)pm fabsf(oi) * 0x1p-22f) /* pm: - near planes, + far planes */
#if !KERNEL_SIMD_SSE
    float ox = r.o.x * b.inv_d.x, oy = r.o.y * b.inv_d.y, oz = r.o.z * b.inv_d.z;
    b.off_n = v3(BVH_SLAB_OFFSET(ox, -), BVH_SLAB_OFFSET(oy, -), BVH_SLAB_OFFSET(oz, -));
    b.off_f = v3(BVH_SLAB_OFFSET(ox, +), BVH_SLAB_OFFSET(oy, +), BVH_SLAB_OFFSET(oz, +));
#endif
    /* node rows of W = BVH_WIDTH floats: lo_x 0, lo_y W, lo_z 2W, hi_x 3W, hi_y 4W, hi_z 5W; a
     * negative direction enters through the upper plane (the far planes are at near_x ^ 3W,
     * near_y ^ 5W, near_z ^ 7W: W is a power of two) */
    b.near_x = signbit(b.inv_d.x) ? 3 * BVH_WIDTH : 0;
    b.near_y = signbit(b.inv_d.y) ? 4 * BVH_WIDTH : BVH_WIDTH;
    b.near_z = signbit(b.inv_d.z) ? 5 * BVH_WIDTH : 2 * BVH_WIDTH;
#if KERNEL_SIMD_SSE
    b.ox = _mm_set1_ps(r.o.x);
    b.oy = _mm_set1_ps(r.o.y);
    b.oz = _mm_set1_ps(r.o.z);
    b.ix = _mm_set1_ps(b.inv_d.x);
    b.iy = _mm_set1_ps(b.inv_d.y);
    b.iz = _mm_set1_ps(b.inv_d.z);
    /* The scalar test swaps kx and ky for a negative d[kz] to keep the winding; that negates u,
     * v, w, det and the scaled t exactly and changes no result, so the SIMD test skips it. */
    int kz = b.sh.kz, kx = kz == 2 ? 0 : kz + 1, ky = kx == 2 ? 0 : kx + 1;
    float sz = b.sh.sz;
    b.sx = _mm_set1_ps(vcomp(r.d, kx) * sz);
    b.sy = _mm_set1_ps(vcomp(r.d, ky) * sz);
    b.sz = _mm_set1_ps(sz);
#endif
#if KERNEL_SIMD_AVX2
    b.ox8 = _mm256_set1_ps(r.o.x);
    b.oy8 = _mm256_set1_ps(r.o.y);
    b.oz8 = _mm256_set1_ps(r.o.z);
    b.ix8 = _mm256_set1_ps(b.inv_d.x);
    b.iy8 = _mm256_set1_ps(b.inv_d.y);
    b.iz8 = _mm256_set1_ps(b.inv_d.z);
    b.sx8 = _mm256_set1_ps(vcomp(r.d, kx) * sz);
    b.sy8 = _mm256_set1_ps(vcomp(r.d, ky) * sz);
    b.sz8 = _mm256_set1_ps(sz);
    float ox = r.o.x * b.inv_d.x, oy = r.o.y * b.inv_d.y, oz = r.o.z * b.inv_d.z;
    b.nx8 = _mm256_set1_ps(BVH_SLAB_OFFSET(ox, -));
    b.ny8 = _mm256_set1_ps(BVH_SLAB_OFFSET(oy, -));
    b.nz8 = _mm256_set1_ps(BVH_SLAB_OFFSET(oz, -));
    b.fx8 = _mm256_set1_ps(BVH_SLAB_OFFSET(ox, +));
    b.fy8 = _mm256_set1_ps(BVH_SLAB_OFFSET(oy, +));
    b.fz8 = _mm256_set1_ps(BVH_SLAB_OFFSET(oz, +));
#endif
#undef BVH_SLAB_OFFSET
    return b;
}

/* ---- the traversal stack -----------------------------------------------------------------------
 * One 64-bit entry per pushed child: its entry distance's bits above, its reference and count
 * (0 = inner node) below, packed as ref << BVH_COUNT_BITS | count (types.h), so that a push is
 * one store and a pop one load (local memory on the GPU; its bottom entries in shared memory were
 * measured and dropped: docs/performance-log.md, 2026-11-27, branch `gpu`). A node pushes at most BVH_WIDTH - 1
 * entries per level. On the GPU (BVH_STACK_TOP) a register holds a copy of the top entry, and a
 * pop loads the entry below it right away, one pop ahead of its use: the load's latency then
 * overlaps the next node visit instead of stalling the pop that reads it (docs/performance-log.md,
 * 2026-11-27, branch `gpu7`). The entries stay in the array (a push stores, a pop only loads), and the stack's
 * array is a local array of its own beside the register (a struct with an array indexed at run
 * time would keep the copy in local memory too). */
#ifndef BVH_STACK_TOP
#if defined(__CUDA_ARCH__)
#define BVH_STACK_TOP 1
#else
#define BVH_STACK_TOP 0
#endif
#endif
#if BVH_STACK_TOP
typedef struct bvh_stack {
    uint64_t *e;  /* the entries: a local array of BVH_STACK_SIZE (BVH_STACK_DECL) */
    uint64_t top; /* e[sp - 1] while sp > 0 */
} bvh_stack;
#define BVH_STACK_DECL(st)                                                                                             \
    uint64_t st##_entries[BVH_STACK_SIZE];                                                                             \
    bvh_stack st = {st##_entries, 0}
#else
typedef struct bvh_stack {
    uint64_t e[BVH_STACK_SIZE];
} bvh_stack;
#define BVH_STACK_DECL(st) bvh_stack st
#endif
/* A missed child's sort key in the scalar node visitors: sorts last. */
#define BVH_KEY_NONE 0xffffffffu
/* compare-exchange of two keys of the scalar node visitors' sorting networks */
#define BVH_KEY_SORT2(a, b)                                                                                            \
    do {                                                                                                               \
        uint32_t lo_ = kminu(a, b);                                                                                    \
        b = kmaxu(a, b);                                                                                               \
        a = lo_;                                                                                                       \
    } while (0)

/* An entry from its distance's bits and its word ref << BVH_COUNT_BITS | count. */
KFN void bvh_push_word(bvh_stack *st, int *sp, uint32_t tbits, uint32_t word) {
    uint64_t e = (uint64_t)tbits << 32 | word;
    st->e[*sp] = e;
#if BVH_STACK_TOP
    st->top = e;
#endif
    ++*sp;
}
KFN void bvh_push(bvh_stack *st, int *sp, uint32_t ref, uint32_t cnt, float t) {
    bvh_push_word(st, sp, kfloat_bits(t), ref << BVH_COUNT_BITS | cnt);
}

/* The scalar node visitors push a hit child's entry from its sorted key (entry distance bits with
 * the slot in the low bits `slot_bits`, so the distance is rounded down: a popped entry is skipped
 * only when it cannot hold a nearer hit); a missed child's key, BVH_KEY_NONE, pushes nothing. */
KFN void bvh_push_key(bvh_stack *st, int *sp, uint32_t key, uint32_t slot_bits, uint32_t word) {
    if (key != BVH_KEY_NONE) bvh_push_word(st, sp, key & ~slot_bits, word);
}
/* The next node or leaf to visit, *ref and *cnt, from its stack word; returns 1. */
KFN int bvh_descend_word(uint32_t word, uint32_t *ref, uint32_t *cnt) {
    *ref = word >> BVH_COUNT_BITS;
    *cnt = word & BVH_MAX_LEAF_BLOCKS;
    return 1;
}

/* Pops the next entry that can still hold a hit nearer than tmax; 0 when the stack is empty. */
KFN int bvh_pop(bvh_stack *st, int *sp, float tmax, uint32_t *ref, uint32_t *cnt) {
    while (*sp > 0) {
#if BVH_STACK_TOP
        uint64_t e = st->top;
        --*sp;
        st->top = st->e[*sp > 0 ? *sp - 1 : 0]; /* the next top, loaded ahead (e[0]: unused) */
#else
        uint64_t e = st->e[--*sp];
#endif
        if (kbits_float((uint32_t)(e >> 32)) < tmax) return bvh_descend_word((uint32_t)e, ref, cnt);
    }
    return 0;
}

/* ---- helper 1: one inner node ----------------------------------------------------------------
 * Slab tests of the children within (0, tmax) (1+2ulp on the exit distance keeps flat boxes,
 * Ize 2013). If some child is hit: sets *ref / *cnt to the nearest (any-hit rays: some) hit
 * child, pushes the others farthest first, returns 1; else returns 0. */
#if KERNEL_SIMD_AVX2
/* The eight children's entry distances (*tnear, their float bits) and the hit children (the
 * returned mask): a multiply-add per plane (make_bvh_ray's offsets), then the distances compared
 * as the signed integers of their bits, as the scalar body (bvh4_visit) does: tnear = max(near
 * planes, 0), a hit when tnear's bits <= min(far planes' bits, tmax's bits) + 4, capped below
 * +inf's bits. The same entry distances as float min/max, and a margin of 4 ulp where the float
 * test took 1 + 2^-22 (2-4 ulp); but the integer min/max and compare take a cycle each where the
 * float ones took four, on the chain from a node's load to the next node's address
 * (docs/performance-log.md, 2026-11-27, branch `cpu8`). */
KFN uint32_t bvh8_slabs(const bvh8_node *n, const bvh_ray *r, float tmax, __m256i *tnear) {
    const float *f = (const float *)n;
#define BVH8_PLANE(row, inv, off) _mm256_castps_si256(_mm256_fmadd_ps(_mm256_loadu_ps(f + (row)), r->inv, r->off))
    __m256i tnx = BVH8_PLANE(r->near_x, ix8, nx8), tny = BVH8_PLANE(r->near_y, iy8, ny8);
    __m256i tnz = BVH8_PLANE(r->near_z, iz8, nz8), tfx = BVH8_PLANE(r->near_x ^ 24, ix8, fx8);
    __m256i tfy = BVH8_PLANE(r->near_y ^ 40, iy8, fy8), tfz = BVH8_PLANE(r->near_z ^ 56, iz8, fz8);
#undef BVH8_PLANE
    __m256i tn = _mm256_max_epi32(_mm256_max_epi32(tnx, tny), _mm256_max_epi32(tnz, _mm256_setzero_si256()));
    __m256i lim = _mm256_set1_epi32(kmini((int)kfloat_bits(tmax), 0x7f7fffff - 4));
    /* tn <= tf + 4 as tf + 5 > tn: the mask straight from the compare (no not/and on the chain) */
    __m256i tf = _mm256_add_epi32(_mm256_min_epi32(_mm256_min_epi32(tfx, tfy), _mm256_min_epi32(tfz, lim)),
                                  _mm256_set1_epi32(5));
    *tnear = tn;
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(tf, tn)));
}
#endif
#if KERNEL_SIMD_AVX2
/* AVX2: the slab tests' hit mask by movemask, the hit children's stack entries built in slot
 * order and picked by ctz; three or more pushed and sorted by insertion (branches that coherent
 * rays predict well). The avx512 level takes this body too, for any-hit rays since branch `cpu8`: its
 * own (the entries compressed into a 512-bit register, pushed by a masked store) had won 1-2 %
 * on shadow rays over the float slab tests, but lost 4-7 % once the distances compare as
 * integers (docs/performance-log.md); closest-hit rays had left it in branch `cpu5`. */
KFN int bvh_visit(const bvh8_node *n, const bvh_ray *r, float tmax, int any, bvh_stack *st, int *sp, uint32_t *ref,
                  uint32_t *cnt) {
    __m256i tnear;
    uint32_t mask = bvh8_slabs(n, r, tmax, &tnear);
    if (!mask) return 0;
    /* every child's stack entry (entry distance bits above, the node's packed ref below), in
     * slot order: the 64-bit permutes put lanes 0-3 in the low and 4-7 in the high unpack */
    __m256i rf = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i *)n->ref), 0xd8);
    __m256i tb = _mm256_permute4x64_epi64(tnear, 0xd8);
    uint64_t ent[BVH8_WIDTH];
    _mm256_storeu_si256((__m256i *)ent, _mm256_unpacklo_epi32(rf, tb));
    _mm256_storeu_si256((__m256i *)(ent + 4), _mm256_unpackhi_epi32(rf, tb));
    uint64_t e = ent[kctz(mask)];
    mask &= mask - 1;
    if (mask) {
        uint64_t e1 = ent[kctz(mask)];
        mask &= mask - 1;
        if (mask == 0) { /* two: push the farther (any-hit rays: the second) */
            if (!any && e1 < e) {
                uint64_t x = e;
                e = e1;
                e1 = x;
            }
            st->e[(*sp)++] = e1;
        } else {
            /* three or more: push them all, sort the pushed entries farthest first (entries
             * compare as their distances; any-hit rays skip it), then pop the nearest */
            int base = *sp;
            st->e[(*sp)++] = e;
            st->e[(*sp)++] = e1;
            while (mask) {
                st->e[(*sp)++] = ent[kctz(mask)];
                mask &= mask - 1;
            }
            for (int i = base + 1; !any && i < *sp; ++i) {
                uint64_t x = st->e[i];
                int j = i;
                while (j > base && st->e[j - 1] < x) {
                    st->e[j] = st->e[j - 1];
                    --j;
                }
                st->e[j] = x;
            }
            e = st->e[--*sp];
        }
    }
    return bvh_descend_word((uint32_t)e, ref, cnt);
}
#endif
#if KERNEL_SIMD_SSE && !KERNEL_SIMD_AVX2
KFN uint32_t bvh4_hit_children(const bvh4_node *n, const bvh_ray *r, float tmax, float *tn) {
    const float *f = (const float *)n;
    __m128 tnx = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + r->near_x), r->ox), r->ix);
    __m128 tny = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + r->near_y), r->oy), r->iy);
    __m128 tnz = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + r->near_z), r->oz), r->iz);
    __m128 tfx = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + (r->near_x ^ 12)), r->ox), r->ix);
    __m128 tfy = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + (r->near_y ^ 20)), r->oy), r->iy);
    __m128 tfz = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + (r->near_z ^ 28)), r->oz), r->iz);
    __m128 tnear = _mm_max_ps(_mm_max_ps(tnx, tny), _mm_max_ps(tnz, _mm_setzero_ps()));
    __m128 tfar = _mm_min_ps(_mm_min_ps(tfx, tfy), _mm_min_ps(tfz, _mm_set1_ps(tmax)));
    __m128 hitm = _mm_and_ps(_mm_cmple_ps(tnear, _mm_mul_ps(tfar, _mm_set1_ps(1.00000024f))),
                             _mm_cmplt_ps(tnear, _mm_set1_ps(K_INF)));
    _mm_storeu_ps(tn, tnear);
    return (uint32_t)_mm_movemask_ps(hitm);
}

KFN int bvh4_visit(const bvh4_node *n, const bvh_ray *r, float tmax, int any, bvh_stack *st, int *sp, uint32_t *ref,
                   uint32_t *cnt) {
    float tn[BVH4_WIDTH];
    uint32_t mask = bvh4_hit_children(n, r, tmax, tn);
    if (!mask) return 0;
    int c0 = kctz(mask);
    mask &= mask - 1;
    if (mask == 0) { /* one child hit: descend */
        *ref = n->child[c0];
        *cnt = n->count[c0];
        return 1;
    }
    int c1 = kctz(mask);
    mask &= mask - 1;
    if (mask == 0) { /* two: push the farther (any-hit rays: the second) */
        if (!any && tn[c1] < tn[c0]) {
            int c = c0;
            c0 = c1;
            c1 = c;
        }
        bvh_push(st, sp, n->child[c1], n->count[c1], tn[c1]);
        *ref = n->child[c0];
        *cnt = n->count[c0];
        return 1;
    }
    /* three or four: order near to far (insertion sort; any-hit rays skip it) */
    int order[BVH4_WIDTH], nhit = 2;
    order[0] = c0;
    order[1] = c1;
    if (!any && tn[c1] < tn[c0]) {
        order[0] = c1;
        order[1] = c0;
    }
    while (mask) {
        int i = kctz(mask);
        mask &= mask - 1;
        int j = nhit++;
        while (!any && j > 0 && tn[order[j - 1]] > tn[i]) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = i;
    }
    /* push all but the nearest, farthest first, then descend into the nearest */
    for (int j = nhit - 1; j >= 1; --j) {
        int c = order[j];
        bvh_push(st, sp, n->child[c], n->count[c], tn[c]);
    }
    *ref = n->child[order[0]];
    *cnt = n->count[order[0]];
    return 1;
}
#elif !KERNEL_SIMD_AVX2
/* Lane `slot` (0..3) of a row held in registers, by selects on the slot's two bits. */
KFN uint32_t ku4_lane(ku4 a, uint32_t slot) {
    uint32_t lo = slot & 1u ? a.v[1] : a.v[0], hi = slot & 1u ? a.v[3] : a.v[2];
    return slot & 2u ? hi : lo;
}

KFN int bvh4_visit(const bvh4_node *n, const bvh_ray *r, float tmax, int any, bvh_stack *st, int *sp, uint32_t *ref,
                   uint32_t *cnt) {
    (void)any; /* the sort costs a few integer min/max: any-hit rays take the same order */
    const float *f = (const float *)n;
    kf4 nx = kload_f4(f + r->near_x), ny = kload_f4(f + r->near_y), nz = kload_f4(f + r->near_z);
    kf4 fx = kload_f4(f + (r->near_x ^ 12)), fy = kload_f4(f + (r->near_y ^ 20)), fz = kload_f4(f + (r->near_z ^ 28));
    vec3 inv_d = r->inv_d, on = r->off_n, of = r->off_f;
    /* The planes' distances are compared as the signed integers of their bits: among floats >= 0
     * they order as the values, and every negative float (sign bit set) is a negative integer. So
     * tnear = max(near planes, 0) is one 3-operand max with 0 (DPX on the GPU: kimax3_relu), the
     * exit distance min(far planes, tmax) is negative whenever a far plane is (then tnear >= 0 >
     * it: a miss, as with floats), and "tnear <= tfar (1 + 2^-22)" becomes tnear's bits <= tfar's
     * bits + 4 (4 ulp, at least 2^-22 relative), capped below +inf's bits so that tnear must be
     * finite. A NaN distance would need o * inv_d to overflow (inv_d is finite: safe_reciprocal). */
    int32_t lim = kmini((int32_t)kfloat_bits(tmax) + 4, 0x7f7fffff);
    /* key of a hit child: its entry distance's bits with the slot in the low 2 bits; a missed
     * child sorts last */
    uint32_t key[BVH4_WIDTH];
    KUNROLL
    for (int i = 0; i < BVH4_WIDTH; ++i) {
        int32_t tnr = kimax3_relu((int32_t)kfloat_bits(kmuladd(nx.v[i], inv_d.x, on.x)),
                                  (int32_t)kfloat_bits(kmuladd(ny.v[i], inv_d.y, on.y)),
                                  (int32_t)kfloat_bits(kmuladd(nz.v[i], inv_d.z, on.z)));
        int32_t tfr = kimin3((int32_t)kfloat_bits(kmuladd(fx.v[i], inv_d.x, of.x)),
                             (int32_t)kfloat_bits(kmuladd(fy.v[i], inv_d.y, of.y)),
                             (int32_t)kfloat_bits(kmuladd(fz.v[i], inv_d.z, of.z)));
        key[i] = tnr <= kiaddmin(tfr, 4, lim) ? ((uint32_t)tnr & ~3u) | (uint32_t)i : BVH_KEY_NONE;
    }
    uint32_t k0 = key[0], k1 = key[1], k2 = key[2], k3 = key[3];
    BVH_KEY_SORT2(k0, k1);
    BVH_KEY_SORT2(k2, k3);
    BVH_KEY_SORT2(k0, k2);
    BVH_KEY_SORT2(k1, k3);
    BVH_KEY_SORT2(k1, k2);
    if (k0 == BVH_KEY_NONE) return 0;
    ku4 child = kload_u4(n->child), count = kload_u4(n->count), word;
    /* each slot's stack word first, so that one select picks an entry's reference and count */
    KUNROLL
    for (int i = 0; i < BVH4_WIDTH; ++i) word.v[i] = child.v[i] << BVH_COUNT_BITS | count.v[i];
    /* push all but the nearest, farthest first (with the distance rounded down: a popped entry is
     * skipped only when it cannot hold a nearer hit), then descend into the nearest */
    bvh_push_key(st, sp, k3, 3u, ku4_lane(word, k3 & 3u));
    bvh_push_key(st, sp, k2, 3u, ku4_lane(word, k2 & 3u));
    bvh_push_key(st, sp, k1, 3u, ku4_lane(word, k1 & 3u));
    return bvh_descend_word(ku4_lane(word, k0 & 3u), ref, cnt);
}
#endif
#if !KERNEL_SIMD_AVX2
KFN int bvh_visit(const bvh4_node *n, const bvh_ray *r, float tmax, int any, bvh_stack *st, int *sp, uint32_t *ref,
                  uint32_t *cnt) {
    return bvh4_visit(n, r, tmax, any, st, sp, ref, cnt);
}
#endif

/* ---- helper 1b: one compressed 8-wide node (cw8_node, types.h) -------------------------------
 * The same contract as bvh_visit, on every target (scalar: the GPU's layout; the CPU reads it
 * only in tests). Per node and axis, a plane q lies at distance q * a + b along the ray, with
 * a = spacing / d (exact: a power-of-two scaling) and b = (p - o) / d, so a plane costs one
 * conversion and one multiply-add (Ylitie et al.'s formulation). Its rounding (of p - o, of b,
 * of q * a + b: at most 2^-22 (|b| + |t|)) is paid for by moving each axis's near planes
 * |b| * 2^-20 nearer and far planes as much farther (folded into b, per node), and the slab
 * test's relative margin on the exit distance; the builder made the exact planes contain the
 * child's box, so the box test stays conservative. The hit children's keys (entry distance,
 * slot in the low 3 bits) are sorted by a network of integer min/max in registers; a slot's stack
 * word comes from its meta byte by shifts and selects. */
#define CW8_T_SLACK 9.5367431640625e-07f /* 2^-20 */
KFN uint32_t cw8_byte(uint32_t w0, uint32_t w1, uint32_t slot) {
    return ((slot & 4u ? w1 : w0) >> ((slot & 3u) * 8u)) & 0xffu;
}
/* The stack word (ref << BVH_COUNT_BITS | count) of the slot whose meta byte is in m (bases, meta). */
KFN uint32_t cw8_word(ku4 m, uint32_t slot) {
    uint32_t b = cw8_byte(m.v[2], m.v[3], slot), c = b >> CW8_META_COUNT_SHIFT;
    return ((c ? m.v[1] : m.v[0]) + (b & CW8_MAX_OFFSET)) << BVH_COUNT_BITS | c;
}

KFN int cw8_visit(const cw8_node *n, const bvh_ray *r, float tmax, bvh_stack *st, int *sp, uint32_t *ref,
                  uint32_t *cnt) {
    const uint32_t *w = (const uint32_t *)n;
    ku4 h = kload_u4(w), m = kload_u4(w + 4), qa = kload_u4(w + 8), qb = kload_u4(w + 12), qc = kload_u4(w + 16);
    vec3 inv_d = r->inv_d;
    float ax = cw8_spacing(h.v[3] & 0xffu) * inv_d.x, ay = cw8_spacing(h.v[3] >> 8 & 0xffu) * inv_d.y;
    float az = cw8_spacing(h.v[3] >> 16 & 0xffu) * inv_d.z;
    float bx = (kbits_float(h.v[0]) - r->o.x) * inv_d.x, by = (kbits_float(h.v[1]) - r->o.y) * inv_d.y;
    float bz = (kbits_float(h.v[2]) - r->o.z) * inv_d.z;
    float bnx = bx - fabsf(bx) * CW8_T_SLACK, bfx = bx + fabsf(bx) * CW8_T_SLACK;
    float bny = by - fabsf(by) * CW8_T_SLACK, bfy = by + fabsf(by) * CW8_T_SLACK;
    float bnz = bz - fabsf(bz) * CW8_T_SLACK, bfz = bz + fabsf(bz) * CW8_T_SLACK;
    uint32_t used = h.v[3] >> 24;
    /* the near and far plane rows of each axis (two words of four slots), by the ray's signs */
    int sx = signbit(inv_d.x), sy = signbit(inv_d.y), sz = signbit(inv_d.z);
    uint32_t nx0 = sx ? qb.v[2] : qa.v[0], nx1 = sx ? qb.v[3] : qa.v[1], fx0 = sx ? qa.v[0] : qb.v[2],
             fx1 = sx ? qa.v[1] : qb.v[3];
    uint32_t ny0 = sy ? qc.v[0] : qa.v[2], ny1 = sy ? qc.v[1] : qa.v[3], fy0 = sy ? qa.v[2] : qc.v[0],
             fy1 = sy ? qa.v[3] : qc.v[1];
    uint32_t nz0 = sz ? qc.v[2] : qb.v[0], nz1 = sz ? qc.v[3] : qb.v[1], fz0 = sz ? qb.v[0] : qc.v[2],
             fz1 = sz ? qb.v[1] : qc.v[3];
    uint32_t key[CW8_WIDTH];
    KUNROLL
    for (uint32_t i = 0; i < CW8_WIDTH; ++i) {
        float tnr = kmax(kmax((float)cw8_byte(nx0, nx1, i) * ax + bnx, (float)cw8_byte(ny0, ny1, i) * ay + bny),
                         kmax((float)cw8_byte(nz0, nz1, i) * az + bnz, 0.0f));
        float tfr = kmin(kmin((float)cw8_byte(fx0, fx1, i) * ax + bfx, (float)cw8_byte(fy0, fy1, i) * ay + bfy),
                         kmin((float)cw8_byte(fz0, fz1, i) * az + bfz, tmax));
        key[i] =
            (used >> i & 1u) && tnr <= tfr * 1.00000024f && tnr < K_INF ? (kfloat_bits(tnr) & ~7u) | i : BVH_KEY_NONE;
    }
    uint32_t k0 = key[0], k1 = key[1], k2 = key[2], k3 = key[3], k4 = key[4], k5 = key[5], k6 = key[6], k7 = key[7];
    /* Batcher's odd-even merge sort of eight keys (19 compare-exchanges) */
    BVH_KEY_SORT2(k0, k1);
    BVH_KEY_SORT2(k2, k3);
    BVH_KEY_SORT2(k4, k5);
    BVH_KEY_SORT2(k6, k7);
    BVH_KEY_SORT2(k0, k2);
    BVH_KEY_SORT2(k1, k3);
    BVH_KEY_SORT2(k4, k6);
    BVH_KEY_SORT2(k5, k7);
    BVH_KEY_SORT2(k1, k2);
    BVH_KEY_SORT2(k5, k6);
    BVH_KEY_SORT2(k0, k4);
    BVH_KEY_SORT2(k1, k5);
    BVH_KEY_SORT2(k2, k6);
    BVH_KEY_SORT2(k3, k7);
    BVH_KEY_SORT2(k2, k4);
    BVH_KEY_SORT2(k3, k5);
    BVH_KEY_SORT2(k1, k2);
    BVH_KEY_SORT2(k3, k4);
    BVH_KEY_SORT2(k5, k6);
    if (k0 == BVH_KEY_NONE) return 0;
    /* push all but the nearest, farthest first (distance rounded down), descend into the nearest */
    bvh_push_key(st, sp, k7, 7u, cw8_word(m, k7 & 7u));
    bvh_push_key(st, sp, k6, 7u, cw8_word(m, k6 & 7u));
    bvh_push_key(st, sp, k5, 7u, cw8_word(m, k5 & 7u));
    bvh_push_key(st, sp, k4, 7u, cw8_word(m, k4 & 7u));
    bvh_push_key(st, sp, k3, 7u, cw8_word(m, k3 & 7u));
    bvh_push_key(st, sp, k2, 7u, cw8_word(m, k2 & 7u));
    bvh_push_key(st, sp, k1, 7u, cw8_word(m, k1 & 7u));
    return bvh_descend_word(cw8_word(m, k0 & 7u), ref, cnt);
}

/* ---- helper 2: one leaf block -----------------------------------------------------------------
 * Intersects the primitives of block b; updates *h with the nearest hit closer than h->t and
 * returns 1 if there was one (with `any`, as soon as there is one). */
KFN int leaf_hit(hit *h, float t, uint32_t id, float b1, float b2) {
    h->t = t;
    h->prim = id;
    h->b1 = b1;
    h->b2 = b2;
    return 1;
}

#if KERNEL_SIMD_SSE
/* A closest-hit candidate `id`: its triangle record is fetched now, while traversal goes on,
 * because surface_at reads it as soon as traversal ends (the leaf test reads the positions from
 * leaf_pos, not through the record). Only the record: its address comes from the id the leaf row
 * holds, so the prefetch waits on nothing. Fetching the vertices too (their indices loaded from
 * the bvh_leaf4 block, a miss of its own on incoherent rays, then three or six lines per
 * candidate) cost diffuse rays 2-6 % and the renderer 1.5-2 % (docs/performance-log.md, 2026-11-28, branch `cpu10`). */
KFN void leaf_hit_prefetch(const kscene *s, uint32_t id) { __builtin_prefetch(&s->triangles[prim_id_index(id)]); }

/* Lane j's primitive id from a block's row of ids in kscene.leaf_pos (p: the block's entries). */
KFN uint32_t leaf_pos_id(const float *p, int j) { return kfloat_bits(p[BVH_LEAF_POS_IDS + j]); }

/* One vertex of a block's four triangle lanes (its x, y, z rows of kscene.leaf_pos), relative to
 * the ray origin. */
KFN void leaf4_rows(const float *row, const bvh_ray *r, __m128 *x, __m128 *y, __m128 *z) {
    *x = _mm_sub_ps(_mm_load_ps(row), r->ox);
    *y = _mm_sub_ps(_mm_load_ps(row + BVH_LEAF_WIDTH), r->oy);
    *z = _mm_sub_ps(_mm_load_ps(row + 2 * BVH_LEAF_WIDTH), r->oz);
}

/* The watertight test (intersect_triangle) on four triangles whose origin-relative vertices are
 * given in (kx, ky, kz) order. Returns the lanes that hit within (0, tmax) as a mask; lanes where
 * an edge function is exactly zero are excluded and flagged in *edge (the scalar test decides
 * them in double precision). */
KFN __m128 leaf4_watertight(const bvh_ray *r, __m128 ax, __m128 ay, __m128 az, __m128 bx, __m128 by, __m128 bz,
                            __m128 cx, __m128 cy, __m128 cz, float tmax, __m128 *t_out, __m128 *b1_out, __m128 *b2_out,
                            int *edge) {
    ax = _mm_sub_ps(ax, _mm_mul_ps(r->sx, az));
    ay = _mm_sub_ps(ay, _mm_mul_ps(r->sy, az));
    bx = _mm_sub_ps(bx, _mm_mul_ps(r->sx, bz));
    by = _mm_sub_ps(by, _mm_mul_ps(r->sy, bz));
    cx = _mm_sub_ps(cx, _mm_mul_ps(r->sx, cz));
    cy = _mm_sub_ps(cy, _mm_mul_ps(r->sy, cz));
    __m128 u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
    __m128 v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
    __m128 w = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
    __m128 zero = _mm_setzero_ps();
    __m128 on_edge = _mm_or_ps(_mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)), _mm_cmpeq_ps(w, zero));
    __m128 neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)), _mm_cmplt_ps(w, zero));
    __m128 pos = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)), _mm_cmpgt_ps(w, zero));
    __m128 det = _mm_add_ps(_mm_add_ps(u, v), w);
    __m128 ts = _mm_mul_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(u, az), _mm_mul_ps(v, bz)), _mm_mul_ps(w, cz)), r->sz);
    __m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), det);
    __m128 t = _mm_mul_ps(ts, inv);
    __m128 ok = _mm_andnot_ps(_mm_or_ps(_mm_and_ps(neg, pos), on_edge), _mm_cmpneq_ps(det, zero));
    ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpgt_ps(t, zero), _mm_cmplt_ps(t, _mm_set1_ps(tmax))));
    *t_out = t;
    *b1_out = _mm_mul_ps(v, inv);
    *b2_out = _mm_mul_ps(w, inv);
    *edge = _mm_movemask_ps(on_edge);
    return ok;
}

KFN int leaf4_intersect(const kscene *s, const bvh_leaf4 *b, const bvh_ray *r, hit *h, int any, int compact) {
    (void)compact;
    const float *p = s->leaf_pos + (size_t)(b - s->leaves) * BVH_LEAF_POS_FLOATS;
    __m128i ids = _mm_load_si128((const __m128i *)(p + BVH_LEAF_POS_IDS));
    __m128i none = _mm_set1_epi32((int)PRIM_NONE);
    int valid = 0xf & ~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(ids, none)));
    __m128 trim = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_srli_epi32(ids, PRIM_KIND_SHIFT), _mm_setzero_si128()));
    int tri = _mm_movemask_ps(trim);
    int found = 0;
    if (tri) {
        __m128 x0, y0, z0, x1, y1, z1, x2, y2, z2, t, b1, b2, ok;
        leaf4_rows(p, r, &x0, &y0, &z0);
        leaf4_rows(p + 3 * BVH_LEAF_WIDTH, r, &x1, &y1, &z1);
        leaf4_rows(p + 6 * BVH_LEAF_WIDTH, r, &x2, &y2, &z2);
        int edge;
        switch (r->sh.kz) { /* the same for a whole ray: predicted */
        case 0: ok = leaf4_watertight(r, y0, z0, x0, y1, z1, x1, y2, z2, x2, h->t, &t, &b1, &b2, &edge); break;
        case 1: ok = leaf4_watertight(r, z0, x0, y0, z1, x1, y1, z2, x2, y2, h->t, &t, &b1, &b2, &edge); break;
        default: ok = leaf4_watertight(r, x0, y0, z0, x1, y1, z1, x2, y2, z2, h->t, &t, &b1, &b2, &edge); break;
        }
        ok = _mm_and_ps(ok, trim);
        edge &= tri;
        int m = _mm_movemask_ps(ok);
        if (m) {
            /* the nearest lane, the lowest on ties (as testing the lanes in order would pick) */
            __m128 tm = _mm_or_ps(_mm_and_ps(ok, t), _mm_andnot_ps(ok, _mm_set1_ps(K_INF)));
            __m128 mn = _mm_min_ps(tm, _mm_shuffle_ps(tm, tm, _MM_SHUFFLE(2, 3, 0, 1)));
            mn = _mm_min_ps(mn, _mm_shuffle_ps(mn, mn, _MM_SHUFFLE(1, 0, 3, 2)));
            int j = kctz((uint32_t)(_mm_movemask_ps(_mm_cmpeq_ps(tm, mn)) & m));
            float tl[4], b1l[4], b2l[4];
            _mm_storeu_ps(tl, t);
            _mm_storeu_ps(b1l, b1);
            _mm_storeu_ps(b2l, b2);
            found = leaf_hit(h, tl[j], leaf_pos_id(p, j), b1l[j], b2l[j]);
            if (any) return 1;
            leaf_hit_prefetch(s, h->prim);
        }
        while (edge) { /* rare: a ray through an edge or vertex */
            int j = kctz((uint32_t)edge);
            edge &= edge - 1;
            float tt, bb1, bb2;
            if (intersect_triangle(r->o, &r->sh, s->positions[b->v0[j]], s->positions[b->v1[j]], s->positions[b->v2[j]],
                                   h->t, &tt, &bb1, &bb2)) {
                found = leaf_hit(h, tt, b->prim[j], bb1, bb2);
                if (any) return 1;
            }
        }
    }
    int other = valid & ~tri;
    while (other) { /* spheres and quads */
        int j = kctz((uint32_t)other);
        other &= other - 1;
        if (intersect_prim(s, b->prim[j], r->o, r->d, &r->sh, h)) {
            found = 1;
            if (any) return 1;
        }
    }
    return found;
}
#if KERNEL_SIMD_AVX2
/* Two leaf blocks at once: the SSE functions above over 8 lanes (lanes 0-3 block b0, 4-7 b1),
 * the same float operations in the same order, so the hits are the same as testing the blocks
 * one after the other (up to exact ties of two primitives' distances). */
/* One vertex of two blocks' triangle lanes (rows of kscene.leaf_pos: p0 block b0's, p1 b1's). */
KFN void leaf8_rows(const float *p0, const float *p1, const bvh_ray *r, __m256 *x, __m256 *y, __m256 *z) {
    *x = _mm256_sub_ps(_mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(p0)), _mm_load_ps(p1), 1), r->ox8);
    *y = _mm256_sub_ps(_mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(p0 + BVH_LEAF_WIDTH)),
                                            _mm_load_ps(p1 + BVH_LEAF_WIDTH), 1),
                       r->oy8);
    *z = _mm256_sub_ps(_mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(p0 + 2 * BVH_LEAF_WIDTH)),
                                            _mm_load_ps(p1 + 2 * BVH_LEAF_WIDTH), 1),
                       r->oz8);
}

KFN __m256 leaf8_watertight(const bvh_ray *r, __m256 ax, __m256 ay, __m256 az, __m256 bx, __m256 by, __m256 bz,
                            __m256 cx, __m256 cy, __m256 cz, float tmax, __m256 *t_out, __m256 *b1_out, __m256 *b2_out,
                            int *edge) {
    ax = _mm256_sub_ps(ax, _mm256_mul_ps(r->sx8, az));
    ay = _mm256_sub_ps(ay, _mm256_mul_ps(r->sy8, az));
    bx = _mm256_sub_ps(bx, _mm256_mul_ps(r->sx8, bz));
    by = _mm256_sub_ps(by, _mm256_mul_ps(r->sy8, bz));
    cx = _mm256_sub_ps(cx, _mm256_mul_ps(r->sx8, cz));
    cy = _mm256_sub_ps(cy, _mm256_mul_ps(r->sy8, cz));
    __m256 u = _mm256_sub_ps(_mm256_mul_ps(cx, by), _mm256_mul_ps(cy, bx));
    __m256 v = _mm256_sub_ps(_mm256_mul_ps(ax, cy), _mm256_mul_ps(ay, cx));
    __m256 w = _mm256_sub_ps(_mm256_mul_ps(bx, ay), _mm256_mul_ps(by, ax));
    __m256 zero = _mm256_setzero_ps();
    __m256 on_edge = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_EQ_OQ), _mm256_cmp_ps(v, zero, _CMP_EQ_OQ)),
                                  _mm256_cmp_ps(w, zero, _CMP_EQ_OQ));
    __m256 neg = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_LT_OQ), _mm256_cmp_ps(v, zero, _CMP_LT_OQ)),
                              _mm256_cmp_ps(w, zero, _CMP_LT_OQ));
    __m256 pos = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(u, zero, _CMP_GT_OQ), _mm256_cmp_ps(v, zero, _CMP_GT_OQ)),
                              _mm256_cmp_ps(w, zero, _CMP_GT_OQ));
    __m256 det = _mm256_add_ps(_mm256_add_ps(u, v), w);
    __m256 ts = _mm256_mul_ps(
        _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(u, az), _mm256_mul_ps(v, bz)), _mm256_mul_ps(w, cz)), r->sz8);
    __m256 inv = _mm256_div_ps(_mm256_set1_ps(1.0f), det);
    __m256 t = _mm256_mul_ps(ts, inv);
    __m256 ok = _mm256_andnot_ps(_mm256_or_ps(_mm256_and_ps(neg, pos), on_edge), _mm256_cmp_ps(det, zero, _CMP_NEQ_UQ));
    ok = _mm256_and_ps(
        ok, _mm256_and_ps(_mm256_cmp_ps(t, zero, _CMP_GT_OQ), _mm256_cmp_ps(t, _mm256_set1_ps(tmax), _CMP_LT_OQ)));
    *t_out = t;
    *b1_out = _mm256_mul_ps(v, inv);
    *b2_out = _mm256_mul_ps(w, inv);
    *edge = _mm256_movemask_ps(on_edge);
    return ok;
}

KFN int leaf8_intersect(const kscene *s, const bvh_leaf4 *b0, const bvh_leaf4 *b1, const bvh_ray *r, hit *h, int any) {
    const float *p0 = s->leaf_pos + (size_t)(b0 - s->leaves) * BVH_LEAF_POS_FLOATS;
    const float *p1 = s->leaf_pos + (size_t)(b1 - s->leaves) * BVH_LEAF_POS_FLOATS;
    /* b1 == b0: a block alone (leaf_intersect); the upper lanes, its copy, get PRIM_NONE ids, so
     * they are invalid and no triangles, and the block's rows are loaded twice from the same lines */
    __m128i none1 = _mm_set1_epi32(-(int)(b1 == b0));
    __m256i ids =
        _mm256_insertf128_si256(_mm256_castsi128_si256(_mm_load_si128((const __m128i *)(p0 + BVH_LEAF_POS_IDS))),
                                _mm_or_si128(_mm_load_si128((const __m128i *)(p1 + BVH_LEAF_POS_IDS)), none1), 1);
    int valid =
        0xff & ~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(ids, _mm256_set1_epi32((int)PRIM_NONE))));
    __m256 trim =
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_srli_epi32(ids, PRIM_KIND_SHIFT), _mm256_setzero_si256()));
    int tri = _mm256_movemask_ps(trim);
    int found = 0;
    if (tri) {
        __m256 x0, y0, z0, x1, y1, z1, x2, y2, z2, t, b1v, b2v, ok;
        leaf8_rows(p0, p1, r, &x0, &y0, &z0);
        leaf8_rows(p0 + 3 * BVH_LEAF_WIDTH, p1 + 3 * BVH_LEAF_WIDTH, r, &x1, &y1, &z1);
        leaf8_rows(p0 + 6 * BVH_LEAF_WIDTH, p1 + 6 * BVH_LEAF_WIDTH, r, &x2, &y2, &z2);
        int edge;
        switch (r->sh.kz) { /* the same for a whole ray: predicted */
        case 0: ok = leaf8_watertight(r, y0, z0, x0, y1, z1, x1, y2, z2, x2, h->t, &t, &b1v, &b2v, &edge); break;
        case 1: ok = leaf8_watertight(r, z0, x0, y0, z1, x1, y1, z2, x2, y2, h->t, &t, &b1v, &b2v, &edge); break;
        default: ok = leaf8_watertight(r, x0, y0, z0, x1, y1, z1, x2, y2, z2, h->t, &t, &b1v, &b2v, &edge); break;
        }
        ok = _mm256_and_ps(ok, trim);
        edge &= tri;
        int m = _mm256_movemask_ps(ok);
        if (m) {
            /* the nearest lane, the lowest on ties (block b0 first, as testing in order would) */
            __m256 tm = _mm256_or_ps(_mm256_and_ps(ok, t), _mm256_andnot_ps(ok, _mm256_set1_ps(K_INF)));
            __m256 mn = _mm256_min_ps(tm, _mm256_permute2f128_ps(tm, tm, 1));
            mn = _mm256_min_ps(mn, _mm256_shuffle_ps(mn, mn, _MM_SHUFFLE(2, 3, 0, 1)));
            mn = _mm256_min_ps(mn, _mm256_shuffle_ps(mn, mn, _MM_SHUFFLE(1, 0, 3, 2)));
            int j = kctz((uint32_t)(_mm256_movemask_ps(_mm256_cmp_ps(tm, mn, _CMP_EQ_OQ)) & m));
            float tl[8], b1l[8], b2l[8];
            _mm256_storeu_ps(tl, t);
            _mm256_storeu_ps(b1l, b1v);
            _mm256_storeu_ps(b2l, b2v);
            found = leaf_hit(h, tl[j], leaf_pos_id(j < 4 ? p0 : p1, j & 3), b1l[j], b2l[j]);
            if (any) return 1;
            leaf_hit_prefetch(s, h->prim);
        }
        while (edge) { /* rare: a ray through an edge or vertex */
            int j = kctz((uint32_t)edge);
            edge &= edge - 1;
            const bvh_leaf4 *b = j < 4 ? b0 : b1;
            int l = j & 3;
            float tt, bb1, bb2;
            if (intersect_triangle(r->o, &r->sh, s->positions[b->v0[l]], s->positions[b->v1[l]], s->positions[b->v2[l]],
                                   h->t, &tt, &bb1, &bb2)) {
                found = leaf_hit(h, tt, b->prim[l], bb1, bb2);
                if (any) return 1;
            }
        }
    }
    int other = valid & ~tri;
    while (other) { /* spheres and quads */
        int j = kctz((uint32_t)other);
        other &= other - 1;
        if (intersect_prim(s, (j < 4 ? b0 : b1)->prim[j & 3], r->o, r->d, &r->sh, h)) {
            found = 1;
            if (any) return 1;
        }
    }
    return found;
}
#endif
#else
/* Lane j of a leaf block: its primitive id and, for a triangle, its vertices, from the block's
 * copy of its triangles in kscene.leaf_pos (p: the block's entries). On the GPU that copy is laid
 * out per lane (BVH_LEAF_LANE_FLOATS, bvh_leaf_lanes: vertex 0 with the id, vertices 1 and 2),
 * so a lane is three 128-bit loads that depend on the block's address only, where the CPU's rows
 * (BVH_LEAF_POS_FLOATS, for its SIMD tests) would be nine 32-bit loads and the block's ids
 * (docs/performance-log.md, 2026-11-27, branch `gpu7`); elsewhere the rows and `prim`, the block's ids. The copies hold
 * the scene's positions, so the test is the one the vertex indices would give. */
#if defined(__CUDA_ARCH__)
#define LEAF_BLOCK_FLOATS BVH_LEAF_LANES_FLOATS
KFN uint32_t leaf_lane_load(const float *p, ku4 prim, uint32_t j, vec3 *a, vec3 *b, vec3 *c) {
    (void)prim;
    const float *q = p + j * BVH_LEAF_LANE_FLOATS;
    kf4 x = kload_f4(q), y = kload_f4(q + 4), z = kload_f4(q + 8);
    *a = v3(x.v[0], x.v[1], x.v[2]);
    *b = v3(y.v[0], y.v[1], y.v[2]);
    *c = v3(z.v[0], z.v[1], z.v[2]);
    return kfloat_bits(x.v[3]);
}
#else
#define LEAF_BLOCK_FLOATS BVH_LEAF_POS_FLOATS
KFN uint32_t leaf_lane_load(const float *p, ku4 prim, uint32_t j, vec3 *a, vec3 *b, vec3 *c) {
    const uint32_t w = BVH_LEAF_WIDTH;
    uint32_t id = ku4_lane(prim, j);
    if (prim_id_kind(id) != PRIM_TRIANGLE) { /* a scene without triangles has no rows */
        *a = *b = *c = v3s(0.0f);
        return id;
    }
    *a = v3(p[j], p[w + j], p[2 * w + j]);
    *b = v3(p[3 * w + j], p[4 * w + j], p[5 * w + j]);
    *c = v3(p[6 * w + j], p[7 * w + j], p[8 * w + j]);
    return id;
}
#endif

/* One lane of a leaf block: primitive `id`, for a triangle with vertices a, b, c. Spheres and
 * quads are tested directly (intersect_prim would carry a second triangle test: larger code, 1-3 %
 * slower in the megakernel); a kernel compiled for triangles only (KERNEL_FEATURES) skips the
 * kind's decode. */
KFN int leaf_lane(const kscene *s, const bvh_ray *r, hit *h, uint32_t id, vec3 a, vec3 b, vec3 c) {
    float t, b1 = 0.0f, b2 = 0.0f;
    uint32_t i = prim_id_index(id);
    prim_kind kind = KHAS(KF_PRIM(PRIM_SPHERE)) || KHAS(KF_PRIM(PRIM_QUAD)) ? prim_id_kind(id) : PRIM_TRIANGLE;
    switch (kind) {
    case PRIM_TRIANGLE:
        if (!intersect_triangle(r->o, &r->sh, a, b, c, h->t, &t, &b1, &b2)) return 0;
        break;
    case PRIM_SPHERE:
        if (!KHAS(KF_PRIM(PRIM_SPHERE)) || !intersect_sphere(&s->spheres[i], r->o, r->d, 0.0f, h->t, &t)) return 0;
        break;
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */
        if (!KHAS(KF_PRIM(PRIM_QUAD)) || !intersect_quad(&s->quads[i], r->o, r->d, 0.0f, h->t, &t, &b1, &b2)) return 0;
        break;
    }
    return leaf_hit(h, t, id, b1, b2);
}

/* compact: the lanes in a rolled loop (one copy of the primitive tests, lanes picked by selects)
 * instead of four unrolled copies; the megakernel, bound by instruction fetch, runs 8-15 %
 * faster with it, the trace-only kernel up to 4 % slower (docs/performance-log.md). */
KFN int leaf4_intersect(const kscene *s, const bvh_leaf4 *b, const bvh_ray *r, hit *h, int any, int compact) {
#if defined(__CUDA_ARCH__)
    ku4 prim = {{0u, 0u, 0u, 0u}}; /* the ids come with the lanes' vertices */
#else
    ku4 prim = kload_u4(b->prim);
#endif
    const float *p = s->leaf_pos + (size_t)(b - s->leaves) * LEAF_BLOCK_FLOATS;
    int found = 0;
    if (compact) {
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (uint32_t j = 0; j < BVH_LEAF_WIDTH; ++j) {
            vec3 v0, v1, v2;
            uint32_t id = leaf_lane_load(p, prim, j, &v0, &v1, &v2);
            if (id == PRIM_NONE) break; /* unused lanes come last */
            if (leaf_lane(s, r, h, id, v0, v1, v2)) {
                found = 1;
                if (any) return 1;
            }
        }
        return found;
    }
    KUNROLL
    for (uint32_t j = 0; j < BVH_LEAF_WIDTH; ++j) {
        vec3 v0, v1, v2;
        uint32_t id = leaf_lane_load(p, prim, j, &v0, &v1, &v2);
        if (id == PRIM_NONE) break;
        if (leaf_lane(s, r, h, id, v0, v1, v2)) {
            found = 1;
            if (any) return 1;
        }
    }
    return found;
}
#endif

/* The lcnt blocks of a leaf from block lref on: with AVX2 two at a time (leaf8_intersect), a last
 * odd block (a one-block leaf) as a pair with itself whose copy leaf8_intersect leaves out, so
 * that every leaf takes the same code: a one-block leaf through leaf4_intersect's SSE test was a
 * branch on the block count that incoherent rays mispredict (docs/performance-log.md, 2026-11-28, branch `cpu12`); else
 * one by one. Returns 1 if some hit was found (with `any`: as soon as there is one). */
KFN int leaf_intersect(const kscene *s, uint32_t lref, uint32_t lcnt, const bvh_ray *r, hit *h, int any, int compact) {
    int found = 0;
    uint32_t k = 0;
#if KERNEL_SIMD_AVX2
    for (; k < lcnt; k += 2)
        if (leaf8_intersect(s, &s->leaves[lref + k], &s->leaves[lref + (k + 1 < lcnt ? k + 1 : k)], r, h, any)) {
            if (any) return 1;
            found = 1;
        }
    (void)compact;
#else
    for (; k < lcnt; ++k)
        if (leaf4_intersect(s, &s->leaves[lref + k], r, h, any, compact)) {
            if (any) return 1;
            found = 1;
        }
#endif
    return found;
}

/* The walk from node `root` down to the leaves (every hit nearer than h->t goes into *h; returns
 * whether *h holds a hit): the whole traversal of a scene without instances (root 0), and a
 * BLAS's in one with instances (trace_instances). `any` stops at the first hit (shadow rays);
 * `compact` (a constant at each call site) selects leaf4_intersect's rolled lane loop; `layout`
 * (KNODES_*: kscene.node_layout, or a constant where the caller specialises the loop per layout)
 * the node visitor. */
KFN int bvh_walk(const kscene *s, const bvh_ray *br, hit *h, int any, int compact, uint32_t layout, uint32_t root) {
    BVH_STACK_DECL(st);
    int sp = 0;
    uint32_t ref = root, cnt = 0; /* the entry to visit next (`have`): first the root node */
    int have = 1;
    for (;;) {
        /* inner nodes until a leaf is reached (or nothing is left). The leaf waits in lref/lcnt;
         * on the GPU the thread visits further nodes while other lanes of its warp still do
         * (kwarp_all), so that the warp enters the leaf code together (Aila & Laine's
         * speculative traversal); on the CPU kwarp_all(x) is x and the leaf comes at once. */
        uint32_t lref = 0, lcnt = 0;
        for (;;) {
            if (!have && !(have = bvh_pop(&st, &sp, h->t, &ref, &cnt))) break;
            if (cnt > 0) {
                if (lcnt > 0) break; /* a second leaf: after the waiting one */
                lref = ref;
                lcnt = cnt;
                have = 0;
            } else {
                have = layout == KNODES_CW8
                           ? cw8_visit((const cw8_node *)s->nodes + ref, br, h->t, &st, &sp, &ref, &cnt)
                           : bvh_visit((const bvh_wnode *)s->nodes + ref, br, h->t, any, &st, &sp, &ref, &cnt);
            }
            if (kwarp_all(lcnt > 0)) break;
        }
        if (lcnt == 0) return h->prim != PRIM_NONE; /* nothing left */
        if (leaf_intersect(s, lref, lcnt, br, h, any, compact) && any) return 1;
    }
}

/* Two levels (a scene with instances, kscene.ninstances; types.h, kinstance): the TLAS from node
 * 0, whose leaf lanes are instances; at each, the ray goes into the instance's object space
 * (origin and direction through to_object, the direction left unnormalised so that a distance
 * along it is the world's) and the instance's BLAS is walked with the hit so far as its bound.
 * h->inst names the instance of the hit. The 4- and 8-wide float layouts only (the CUDA backend's
 * LBVH and compressed trees refuse instanced scenes). */
KFN int trace_instances(const kscene *s, ray r, hit *h, int any, int compact) {
    h->t = r.tmax;
    h->prim = PRIM_NONE;
    h->b1 = h->b2 = 0.0f;
    h->inst = 0u;
    if (s->nnodes == 0 || !vis_finite(r.o) || !vis_finite(r.d)) return 0;
    bvh_ray br = make_bvh_ray(r);
    BVH_STACK_DECL(st);
    int sp = 0;
    uint32_t ref = 0, cnt = 0;
    int have = 1;
    for (;;) {
        if (!have && !(have = bvh_pop(&st, &sp, h->t, &ref, &cnt))) return h->prim != PRIM_NONE;
        if (cnt == 0) {
            have = bvh_visit((const bvh_wnode *)s->nodes + ref, &br, h->t, any, &st, &sp, &ref, &cnt);
            continue;
        }
        have = 0;
        for (uint32_t k = 0; k < cnt; ++k) {
            const bvh_leaf4 *b = &s->leaves[ref + k];
            for (uint32_t j = 0; j < BVH_LEAF_WIDTH; ++j) {
                uint32_t id = b->prim[j];
                if (id == PRIM_NONE) break; /* unused lanes come last */
                id = prim_id_index(id);
                const kinstance *in = &s->instances[id];
                float t0 = h->t;
                ray q = make_ray(xform_point(&in->to_object, r.o), xform_vector(&in->to_object, r.d), t0);
                if (!vis_finite(q.o) || !vis_finite(q.d)) continue;
                bvh_ray qb = make_bvh_ray(q);
                bvh_walk(s, &qb, h, any, compact, KNODES_WIDE, b->v0[j]);
                if (h->t < t0) { /* a hit nearer than the ones before: this instance's */
                    h->inst = id;
                    if (any) return 1;
                }
            }
        }
    }
}

/* Closest hit along r within (0, r.tmax). `any` stops at the first hit (shadow rays); `compact`
 * and `layout` as bvh_walk. A kernel with KF_INSTANCES takes the two levels in a scene with
 * instances; every other kernel (KHAS folds to 0) is the single walk from the root. */
KFN int trace_ray_inline(const kscene *s, ray r, hit *h, int any, int compact, uint32_t layout) {
    if (KHAS(KF_INSTANCES) && s->ninstances) return trace_instances(s, r, h, any, compact);
    h->t = r.tmax;
    h->prim = PRIM_NONE;
    h->b1 = h->b2 = 0.0f;                 /* set with every hit; initialised so compilers can see it */
    if (KHAS(KF_INSTANCES)) h->inst = 0u; /* (read only in such a kernel's scenes with instances) */
    /* a non-finite origin or direction hits nothing (the slab tests would let NaN through) */
    if (s->nnodes == 0 || !vis_finite(r.o) || !vis_finite(r.d)) return 0;
    bvh_ray br = make_bvh_ray(r);
    return bvh_walk(s, &br, h, any, compact, layout, 0u);
}

/* The traversal's entry point, with compact leaves; the trace-only kernel calls trace_ray_inline
 * with unrolled leaves. `layout` is s->node_layout: read at run time by most callers, a
 * compile-time constant where the caller is compiled once per node layout (the CUDA megakernel,
 * render_cuda.cu), so that only that layout's visitor is compiled into it. In the CUDA megakernel
 * the loop is one real function per node layout (KFN_TRACE, compat.h), each specialised to its
 * visitor: a megakernel that could call both paid for the compressed layout's registers and code
 * on the 4-wide path (1.7-3.3 %, docs/performance-log.md). Elsewhere one inlined loop. */
#if defined(__CUDA_ARCH__)
KFN_TRACE int trace_ray_wide(const kscene *s, ray r, hit *h, int any) {
    return trace_ray_inline(s, r, h, any, 1, KNODES_WIDE);
}
KFN_TRACE int trace_ray_cw8(const kscene *s, ray r, hit *h, int any) {
    return trace_ray_inline(s, r, h, any, 1, KNODES_CW8);
}
KFN int trace_ray(const kscene *s, ray r, hit *h, int any, uint32_t layout) {
    return layout == KNODES_CW8 ? trace_ray_cw8(s, r, h, any) : trace_ray_wide(s, r, h, any);
}
#else
KFN_TRACE int trace_ray(const kscene *s, ray r, hit *h, int any, uint32_t layout) {
    return trace_ray_inline(s, r, h, any, 1, layout);
}
#endif

/* Alpha-masked surfaces (material alpha_cutoff > 0, glTF alphaMode MASK): a hit where the mask
 * cuts the surface out is not a hit. Only scenes that have such materials pay for it
 * (kscene.has_cutouts): their rays take closest hits one after another, stepping past each
 * cut-out one (at most CUTOUT_MAX_LAYERS, after which the hit counts as opaque), and shadow rays
 * do the same instead of stopping at any hit. */
#define CUTOUT_MAX_LAYERS 64
KFN int hit_cut_out(const kscene *s, const hit *h) {
    if (prim_id_kind(h->prim) != PRIM_TRIANGLE) return 0;
    const triangle *tr = &s->triangles[prim_id_index(h->prim)];
    const material *m = &s->materials[tr->material];
    if (!(m->alpha_cutoff > 0.0f)) return 0;
    float b0 = 1.0f - h->b1 - h->b2;
    vec2 uv = v2(h->b1, h->b2);
    if (s->uvs) {
        vec2 u0 = s->uvs[tr->v[0]], u1 = s->uvs[tr->v[1]], u2 = s->uvs[tr->v[2]];
        uv = v2(b0 * u0.x + h->b1 * u1.x + h->b2 * u2.x, b0 * u0.y + h->b1 * u1.y + h->b2 * u2.y);
    }
    return material_cut_out(s, m, uv, v3s(0.0f));
}
KFN int trace_past_cutouts(const kscene *s, ray r, hit *h, uint32_t layout) {
    float t0 = 0.0f;
    ray q = r;
    for (int layer = 0; layer < CUTOUT_MAX_LAYERS; ++layer) {
        if (!trace_ray(s, q, h, 0, layout)) return 0;
        h->t += t0;
        if (!hit_cut_out(s, h)) return 1;
        vec3 p = ray_at(r, h->t);
        float step = K_RAY_EPS * (1.0f + vmaxc(v3(fabsf(p.x), fabsf(p.y), fabsf(p.z))));
        t0 = h->t + step;
        q = make_ray(ray_at(r, t0), r.d, r.tmax - t0);
        if (!(q.tmax > 0.0f)) return 0;
    }
    return 1;
}
/* Through the nodes of `layout` (s->node_layout, see trace_ray): the closest hit, or with `any`
 * whether anything blocks r (into *h: past cut-outs, the closest opaque hit). */
KFN int trace_layout(const kscene *s, ray r, hit *h, int any, uint32_t layout) {
    return KHAS(KF_CUTOUTS) && s->has_cutouts ? trace_past_cutouts(s, r, h, layout) : trace_ray(s, r, h, any, layout);
}
KFN int trace_closest_layout(const kscene *s, ray r, hit *h, uint32_t layout) {
    return trace_layout(s, r, h, 0, layout);
}
KFN int trace_occluded_layout(const kscene *s, ray r, uint32_t layout) {
    hit h;
    return trace_layout(s, r, &h, 1, layout);
}
/* ... with the layout read from the scene */
KFN int trace_closest(const kscene *s, ray r, hit *h) { return trace_closest_layout(s, r, h, s->node_layout); }
KFN int trace_occluded(const kscene *s, ray r) { return trace_occluded_layout(s, r, s->node_layout); }

#endif
