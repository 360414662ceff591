/* Path-tracer integrator state as an X-macro: expanded to a struct for the CPU megakernel and
 * to a structure of arrays (one array per field) for the GPU wavefront pipeline's path pool. */
#ifndef CAUSTIC_KERNEL_PATH_STATE_H
#define CAUSTIC_KERNEL_PATH_STATE_H

#include "sampler.h"
#include "types.h"

#define PATH_STATE_FIELDS(X)                                                                                           \
    X(ray, r)               /* ray to intersect next */                                                                \
    X(hit, h)               /* its closest hit */                                                                      \
    X(vec3, throughput)     /* product of BSDF weights / pdfs so far */                                                \
    X(vec3, radiance)       /* accumulated estimate */                                                                 \
    X(vec3, prev_p)         /* previous scattering vertex, for emitter MIS */                                          \
    X(float, prev_pdf)      /* solid-angle pdf of the BSDF sample that produced r */                                   \
    X(int32_t, prev_delta)  /* r came from a delta lobe (or the camera): no MIS */                                     \
    X(int32_t, depth)       /* scattering events so far */                                                             \
    X(ray, shadow)          /* pending NEE shadow ray */                                                               \
    X(vec3, shadow_contrib) /* its contribution if unoccluded */                                                       \
    X(int32_t, shadow_pending)                                                                                         \
    X(int32_t, alive)        /* the path continues after the pending shadow ray */                                     \
    X(uint32_t, rays)        /* rays traced, for statistics (path segments and shadow rays) */                         \
    X(uint32_t, shadow_rays) /* of those, NEE shadow rays */                                                           \
    X(sampler, smp)

#define PATH_STATE_DECLARE(type, name) type name;
typedef struct path_state {
    PATH_STATE_FIELDS(PATH_STATE_DECLARE)
} path_state;
#undef PATH_STATE_DECLARE

/* Structure of arrays over the same fields: path_soa.name[i] is field `name` of path i. */
#define PATH_SOA_DECLARE(type, name) type *name;
typedef struct path_soa {
    PATH_STATE_FIELDS(PATH_SOA_DECLARE)
} path_soa;
#undef PATH_SOA_DECLARE

#define PATH_SOA_LOAD(type, name)  ps->name = soa->name[i];
#define PATH_SOA_STORE(type, name) soa->name[i] = ps->name;
KFN void path_soa_load(const path_soa *soa, uint32_t i, path_state *ps){PATH_STATE_FIELDS(PATH_SOA_LOAD)} KFN
    void path_soa_store(const path_soa *soa, uint32_t i, const path_state *ps) {
    PATH_STATE_FIELDS(PATH_SOA_STORE)
}
#undef PATH_SOA_LOAD
#undef PATH_SOA_STORE

/* The stages of a path. Each stage function returns the stage that must run next. */
typedef enum path_stage { STAGE_INTERSECT = 0, STAGE_SHADE = 1, STAGE_SHADOW = 2, STAGE_DONE = 3 } path_stage;

#endif
