/* Path-tracer integrator state as an X-macro: expanded to a struct for the CPU megakernel and
 * (later) to structure-of-arrays queues for the GPU wavefront pipeline. */
#ifndef CAUSTIC_KERNEL_PATH_STATE_H
#define CAUSTIC_KERNEL_PATH_STATE_H

#include "sampler.h"
#include "types.h"

#define PATH_STATE_FIELDS(X)                                                                 \
    X(ray, r)              /* ray to intersect next */                                       \
    X(hit, h)              /* its closest hit */                                             \
    X(vec3, throughput)    /* product of BSDF weights / pdfs so far */                       \
    X(vec3, radiance)      /* accumulated estimate */                                        \
    X(vec3, prev_p)        /* previous scattering vertex, for emitter MIS */                 \
    X(float, prev_pdf)     /* solid-angle pdf of the BSDF sample that produced r */          \
    X(int32_t, prev_delta) /* r came from a delta lobe (or the camera): no MIS */            \
    X(int32_t, depth)      /* scattering events so far */                                    \
    X(ray, shadow)         /* pending NEE shadow ray */                                      \
    X(vec3, shadow_contrib)/* its contribution if unoccluded */                              \
    X(int32_t, shadow_pending)                                                               \
    X(int32_t, alive)      /* the path continues after the pending shadow ray */             \
    X(uint32_t, rays)      /* rays traced, for statistics */                                 \
    X(sampler, smp)

#define PATH_STATE_DECLARE(type, name) type name;
typedef struct path_state { PATH_STATE_FIELDS(PATH_STATE_DECLARE) } path_state;
#undef PATH_STATE_DECLARE

/* The stages of a path. Each stage function returns the stage that must run next. */
typedef enum path_stage { STAGE_INTERSECT = 0, STAGE_SHADE = 1, STAGE_SHADOW = 2, STAGE_DONE = 3 } path_stage;

#endif
