#include "rng.h"

#include <math.h>

uint64_t rng_mix(uint64_t a, uint64_t b, uint64_t c) {
    rng_t r = {a ^ 0x243F6A8885A308D3ull};
    uint64_t h = rng_next(&r);
    r.state ^= b * 0x9E3779B97F4A7C15ull + h;
    h ^= rng_next(&r);
    r.state ^= c * 0xC2B2AE3D27D4EB4Full + h;
    return rng_next(&r);
}

void rng_seed(rng_t *r, uint64_t seed) { r->state = seed; }

uint64_t rng_next(rng_t *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double rng_uniform(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

uint32_t rng_below(rng_t *r, uint32_t n) {
    /* Rejection keeps the draw unbiased for any n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = rng_next(r);
    while (x >= limit);
    return (uint32_t)(x % n);
}

double rng_normal(rng_t *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double rng_gamma(rng_t *r, double shape) {
    /* Marsaglia-Tsang; shapes below 1 use the x * U^(1/shape) boost. */
    if (shape < 1.0) {
        double u = rng_uniform(r);
        return rng_gamma(r, shape + 1.0) * pow(u > 1e-300 ? u : 1e-300, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
    }
}

void rng_shuffle_int(rng_t *r, int *a, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = rng_below(r, (uint32_t)i);
        int t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
