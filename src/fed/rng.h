/* Small deterministic random number generator (SplitMix64) and the draws fedtrain needs.
 * Everything random in fedtrain derives from --seed through these functions, so runs repeat. */
#ifndef FED_RNG_H
#define FED_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} rng_t;

/* Mixes several integers into one seed, so streams for (seed, client, round) do not overlap. */
uint64_t rng_mix(uint64_t a, uint64_t b, uint64_t c);
void rng_seed(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
double rng_uniform(rng_t *r);             /* [0,1) */
uint32_t rng_below(rng_t *r, uint32_t n); /* [0,n), unbiased */
double rng_normal(rng_t *r);
double rng_gamma(rng_t *r, double shape); /* scale 1 */
void rng_shuffle_int(rng_t *r, int *a, size_t n);

#endif
