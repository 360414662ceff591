/* Sample generators. Every value depends only on (pixel, sample index, dimension, seed), never
 * on thread or schedule, so images are bit-identical for any thread count.
 *   random      PCG32 stream per pixel sample.
 *   stratified  jittered strata over the pixel's spp per dimension (pair), strata order
 *               permuted per dimension, Cranley-Patterson rotated per pixel.
 *   sobol       2D Sobol (0,2)-sequence, Owen-scrambled (hash-based nested uniform scramble)
 *               and index-shuffled per pixel and dimension pair (padded, Burley 2020). */
#ifndef CAUSTIC_KERNEL_SAMPLER_H
#define CAUSTIC_KERNEL_SAMPLER_H

#include "rng.h"
#include "vec.h"

typedef enum sampler_type { SAMPLER_RANDOM = 0, SAMPLER_STRATIFIED = 1, SAMPLER_SOBOL = 2 } sampler_type;

typedef struct sampler {
    int type;
    uint32_t pixel_seed; /* hash of pixel and user seed */
    uint32_t index;      /* sample index within the pixel */
    uint32_t dim;        /* next dimension (pair) */
    uint32_t spp;        /* strata count for the stratified sampler */
    pcg32 rng;           /* per-sample stream: random sampler and jitter */
} sampler;

KFN sampler sampler_start(int type, uint32_t px, uint32_t py, uint32_t index, uint32_t seed, uint32_t spp) {
    sampler s;
    s.type = type;
    s.pixel_seed = hash_combine(hash_combine(hash_u32(px), py), seed);
    s.index = index;
    s.dim = 0;
    s.spp = spp > 0 ? spp : 1;
    s.rng = pcg32_seed(hash_u64(((uint64_t)s.pixel_seed << 32) | index), s.pixel_seed);
    return s;
}

KFN uint32_t reverse_bits32(uint32_t x) {
    x = (x << 16) | (x >> 16);
    x = ((x & 0x00ff00ffu) << 8) | ((x & 0xff00ff00u) >> 8);
    x = ((x & 0x0f0f0f0fu) << 4) | ((x & 0xf0f0f0f0u) >> 4);
    x = ((x & 0x33333333u) << 2) | ((x & 0xccccccccu) >> 2);
    x = ((x & 0x55555555u) << 1) | ((x & 0xaaaaaaaau) >> 1);
    return x;
}

/* First two Sobol dimensions as 32-bit fixed point. Dimension 0 is the van der Corput radical
 * inverse; dimension 1 uses direction numbers v_k = v_{k-1} ^ (v_{k-1} >> 1), v_0 = 2^31. */
KFN uint32_t sobol_dim0(uint32_t i) { return reverse_bits32(i); }
KFN uint32_t sobol_dim1(uint32_t i) {
    /* branchless: scrambled indices use all 32 bits, so a data-dependent loop only mispredicts */
    uint32_t r = 0u, v = 0x80000000u;
    for (int k = 0; k < 32; ++k, i >>= 1, v ^= v >> 1) r ^= v & (0u - (i & 1u));
    return r;
}

/* Laine-Karras style hash permutation: bit k of the result depends only on bits <= k. Applied
 * to bit-reversed values it is a nested uniform (Owen) scramble. */
KFN uint32_t lk_permute(uint32_t x, uint32_t seed) {
    x += seed;
    x ^= x * 0x6c50b47cu;
    x ^= x * 0xb82f1e52u;
    x ^= x * 0xc7afe638u;
    x ^= x * 0x8d22f6e6u;
    return x;
}
KFN uint32_t owen_scramble(uint32_t x, uint32_t seed) {
    return reverse_bits32(lk_permute(reverse_bits32(x), seed));
}

/* Random bijection of [0, n) (cycle-walking an invertible hash on the next power of two). */
KFN uint32_t permute_index(uint32_t i, uint32_t n, uint32_t seed) {
    if (n <= 1u) return 0u;
    uint32_t w = n - 1u;
    w |= w >> 1; w |= w >> 2; w |= w >> 4; w |= w >> 8; w |= w >> 16;
    do {
        i ^= seed & w;
        i = (i * 0x9e3779b1u) & w;        /* odd multiplier: bijective mod 2^k */
        i ^= (i & w) >> 3;
        i = (i + (seed >> 8)) & w;
        i = (i * 0x2c1b3c6du + 0x12345u) & w; /* odd: bijective */
        i ^= (i & w) >> 5;
    } while (i >= n);
    return i;
}

KFN float fixed_to_unit(uint32_t x) { return u32_to_unit_float(x); }

KFN vec2 sampler_2d(sampler *s) {
    uint32_t pair_seed = hash_combine(s->pixel_seed, s->dim);
    s->dim++;
    switch (s->type) {
    case SAMPLER_SOBOL: {
        uint32_t idx = owen_scramble(s->index, pair_seed);
        uint32_t x = owen_scramble(sobol_dim0(idx), hash_u32(pair_seed ^ 0x68bc21ebu));
        uint32_t y = owen_scramble(sobol_dim1(idx), hash_u32(pair_seed ^ 0x02e5be93u));
        return v2(fixed_to_unit(x), fixed_to_unit(y));
    }
    case SAMPLER_STRATIFIED: {
        uint32_t sx = (uint32_t)sqrtf((float)s->spp);
        if (sx < 1u) sx = 1u;
        uint32_t sy = s->spp / sx, n = sx * sy;
        uint32_t round = s->index / n;
        /* strata order depends on the dimension only, so all pixels share the pattern... */
        uint32_t stratum = permute_index(s->index % n, n, hash_combine(s->dim * 0x9e3779b9u, round));
        /* ...and a per-pixel Cranley-Patterson rotation decorrelates neighbouring pixels. The
         * shift is quantised to whole strata: a fractional shift would split strata across the
         * wrap-around and lose stratification on integrands that are not periodic. */
        uint32_t shift_x = hash_u32(pair_seed) % sx, shift_y = hash_u32(pair_seed ^ 0x5bd1e995u) % sy;
        float jx = pcg32_float(&s->rng), jy = pcg32_float(&s->rng);
        float x = ((float)((stratum % sx + shift_x) % sx) + jx) / (float)sx;
        float y = ((float)((stratum / sx + shift_y) % sy) + jy) / (float)sy;
        return v2(kmin(x, 0.99999994f), kmin(y, 0.99999994f));
    }
    default: {
        float x = pcg32_float(&s->rng);
        float y = pcg32_float(&s->rng);
        return v2(x, y);
    }
    }
}

KFN float sampler_1d(sampler *s) {
    if (s->type == SAMPLER_RANDOM) { s->dim++; return pcg32_float(&s->rng); }
    return sampler_2d(s).x;
}

#endif
