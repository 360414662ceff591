/* CPU driver of the bidirectional integrators (src/kernel/vcm.h): iterations of one light
 * sub-path and one camera sub-path per pixel, parallel over the pool's threads, with results
 * that depend only on the seed (not on the thread count or scheduling). */
#ifndef CAUSTIC_CPU_RENDER_VCM_H
#define CAUSTIC_CPU_RENDER_VCM_H

#include <stdint.h>
#include "cpu/render_cpu.h"
#include "kernel/types.h"

typedef struct vcm_renderer vcm_renderer;

/* algorithm: vcm_algorithm; radius: initial merging radius (world units); alpha: radius
 * reduction exponent, r_i = radius * i^((alpha-1)/2) for iteration i = 1, 2, ... */
vcm_renderer *vcm_renderer_create(const kscene *s, int algorithm, int max_path_length, float radius, float alpha,
                                  uint32_t seed);
/* Runs iterations [first, first+count) and adds each iteration's image to accum (width*height*3
 * sums) and 1 to every pixel's count. Returns 0, or -1 when out of memory. */
int vcm_renderer_run(vcm_renderer *v, cpu_pool *pool, uint32_t first, uint32_t count, double *accum, uint32_t *counts,
                     uint64_t *rays);
void vcm_renderer_free(vcm_renderer *v);

#endif
