/* PCG32 (O'Neill 2014) and integer hashes used to derive independent per-sample streams. */
#ifndef CAUSTIC_KERNEL_RNG_H
#define CAUSTIC_KERNEL_RNG_H

#include "compat.h"

typedef struct pcg32 {
    uint64_t state, inc;
} pcg32;

KFN uint32_t pcg32_next(pcg32 *r) {
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}
KFN pcg32 pcg32_seed(uint64_t seed, uint64_t stream) {
    pcg32 r;
    r.state = 0u;
    r.inc = (stream << 1u) | 1u;
    pcg32_next(&r);
    r.state += seed;
    pcg32_next(&r);
    return r;
}
/* Uniform float in [0,1): 24 random mantissa bits, never rounds up to 1. */
KFN float u32_to_unit_float(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
KFN float pcg32_float(pcg32 *r) { return u32_to_unit_float(pcg32_next(r)); }
/* Unbiased integer in [0, bound) (Lemire-style rejection). */
KFN uint32_t pcg32_bounded(pcg32 *r, uint32_t bound) {
    uint32_t threshold = (0u - bound) % bound;
    for (;;) {
        uint32_t x = pcg32_next(r);
        if (x >= threshold) return x % bound;
    }
}

/* 32-bit integer mixer (lowbias32 by C. Wellons) and a 64-bit finaliser (splitmix64). */
KFN uint32_t hash_u32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
KFN uint64_t hash_u64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}
KFN uint32_t hash_combine(uint32_t a, uint32_t b) {
    return hash_u32(a ^ (hash_u32(b) + 0x9e3779b9U + (a << 6) + (a >> 2)));
}

#endif
