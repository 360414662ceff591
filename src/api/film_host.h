/* Host films (kernel/film.h's kfilm with double sums): the one allocator, copy and clear that the
 * renderer, the CPU backend and the multi-GPU and distributed layers share. */
#ifndef CAUSTIC_API_FILM_HOST_H
#define CAUSTIC_API_FILM_HOST_H

#include "kernel/film.h"

/* An empty width x height film, with AOV planes when aov is set: 0, or -1 (out of memory: *f is
 * then freed). */
int film_host_alloc(kfilm *f, int width, int height, int aov);

/* Frees what film_host_alloc allocated (and a zeroed kfilm); *f becomes empty. */
void film_host_free(kfilm *f);

/* dst's sums, counts and squared luminance become src's (the same size), its AOV planes too
 * where both have them. */
void film_host_copy(const kfilm *dst, const kfilm *src);

/* Every sum and count to zero. */
void film_host_clear(const kfilm *f);

#endif
