/* caustic-bench-rays: traversal-only throughput on fixed ray sets (see docs/performance-log.md for
 * the exact generation rules, so other tracers can trace the same rays). */
#ifndef CAUSTIC_TOOLS_BENCH_RAYS_H
#define CAUSTIC_TOOLS_BENCH_RAYS_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/types.h"

typedef struct ray_set {
    const char *name; /* "primary", "diffuse", "shadow" */
    int any_hit;      /* shadow rays: occlusion only */
    size_t n;
    float *o, *d, *tmax; /* n*3, n*3, n */
} ray_set;

/* An external tracer to compare against (Embree when built with it). */
typedef struct ext_tracer ext_tracer;
ext_tracer *ext_tracer_create(const vec3 *pos, size_t nverts, const uint32_t *idx, size_t ntris, char *name,
                              size_t namelen);
/* Traces rays [begin, end) of the set; returns hits and adds hit distances to *tsum. */
size_t ext_tracer_trace(ext_tracer *t, const ray_set *rs, size_t begin, size_t end, double *tsum);
void ext_tracer_free(ext_tracer *t);

int cmd_bench_rays(int argc, char **argv);

#endif
