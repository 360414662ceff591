/* CPU backend: a persistent pthread pool that renders passes of samples over the image with
 * one of four scheduling strategies. */
#ifndef CAUSTIC_CPU_RENDER_H
#define CAUSTIC_CPU_RENDER_H

#include <stdatomic.h>
#include <stdint.h>
#include "kernel/film.h"
#include "kernel/pass.h"
#include "kernel/types.h"

typedef enum cpu_schedule { CPU_TILES = 0, CPU_ROWS = 1, CPU_ROWS_STATIC = 2, CPU_PIXELS = 3 } cpu_schedule;

/* A pass of path tracing on the CPU: the kernel's pass and film, and how the pool splits the image. */
typedef struct cpu_pass {
    const kscene *scene;
    kpass pass;
    kfilm film;               /* host sums (double), added in sample order */
    int x0, y0;               /* the film's top-left pixel in the image (0, 0 but for a tile's film) */
    int schedule;             /* cpu_schedule */
    const atomic_int *cancel; /* set: no further tiles (rows, pixels) are started; NULL: never */
} cpu_pass;

typedef struct cpu_pass_stats {
    uint64_t rays, shadow_rays, bad_samples, samples; /* shadow_rays: of rays */
} cpu_pass_stats;

typedef struct cpu_pool cpu_pool;
cpu_pool *cpu_pool_create(int threads); /* threads <= 0: all cores */
int cpu_pool_threads(const cpu_pool *p);
void cpu_pool_run(cpu_pool *p, const cpu_pass *pass, cpu_pass_stats *stats);
/* Runs fn(ctx, item, thread) for item = 0..n-1 on the pool's threads, items handed out in
 * order as threads become free; returns when all are done. */
typedef void (*cpu_job_fn)(void *ctx, unsigned item, int thread);
void cpu_pool_parallel_for(cpu_pool *p, unsigned n, cpu_job_fn fn, void *ctx);
void cpu_pool_destroy(cpu_pool *p);
int cpu_core_count(void);

#endif
