/* CPU driver of the bidirectional integrators (src/kernel/vcm.h): iterations of one light
 * sub-path and one camera sub-path per pixel, parallel over the pool's threads, with results
 * that depend only on the seed (not on the thread count or scheduling). */
#ifndef CAUSTIC_CPU_RENDER_VCM_H
#define CAUSTIC_CPU_RENDER_VCM_H

#include <stdint.h>
#include "cpu/render_cpu.h"
#include "kernel/types.h"

typedef struct vcm_renderer vcm_renderer;

/* The entry points are compiled once per CPU ISA level (src/cpu/isa.h); callers go through
 * cpu_kernels_get()->vcm_create / vcm_run / vcm_free:
 *   create(s, cam, algorithm, max_path_length, radius, alpha, seed): cam: the camera (and the image's
 *     resolution); algorithm: vcm_algorithm; radius:
 *     initial merging radius (world units); alpha: radius reduction exponent,
 *     r_i = radius * i^((alpha-1)/2) for iteration i = 1, 2, ...
 *   run(v, pool, cam, first, count, film, rays): runs iterations [first, first+count) through
 *     camera cam (the pass's; the resolution create was given) and adds each iteration's image
 *     to the film (kernel/film.h: one sample per pixel).
 *     Returns 0, or -1 when out of memory.
 *   free(v) */

#endif
