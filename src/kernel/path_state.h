/* Path-tracer integrator state as an X-macro: expanded to a struct for the CPU megakernel and
 * to a structure of arrays (one array per field) for the GPU wavefront pipeline's path pool. */
#ifndef CAUSTIC_KERNEL_PATH_STATE_H
#define CAUSTIC_KERNEL_PATH_STATE_H

#include "sampler.h"
#include "types.h"

/* KERNEL_MEDIA: 1 in a translation unit whose kernel handles participating media (its
 * KERNEL_FEATURES has KF_MEDIA, kernel/medium.h checks the two agree). A preprocessor constant,
 * unlike KHAS, because it adds columns to the path state: a kernel without media carries none of
 * their state, in registers (megakernel) or in the wavefront pool's arrays. No kernel has media
 * yet (docs/extending.md, "A medium"). */
#ifndef KERNEL_MEDIA
#define KERNEL_MEDIA 0
#endif
#define MEDIUM_NONE (-1) /* the vacuum: no medium */
/* KERNEL_SPECTRAL: 1 in a kernel that carries a path's wavelength (KF_DISPERSION, kernel/spectral.h):
 * the media kernels. */
#ifndef KERNEL_SPECTRAL
#define KERNEL_SPECTRAL 0
#endif
#if KERNEL_SPECTRAL
#define PATH_STATE_SPECTRAL_FIELDS(X) X(float, lambda) /* the path's wavelength in nm, 0: none picked yet */
#else
#define PATH_STATE_SPECTRAL_FIELDS(X)
#endif

/* The path state's media columns, in PATH_STATE_FIELDS where the kernel has media. */
#if KERNEL_MEDIA
#define PATH_STATE_MEDIUM_FIELDS(X)                                                                                    \
    X(int32_t, medium)        /* the medium r travels in, or MEDIUM_NONE */                                            \
    X(int32_t, shadow_medium) /* the medium the pending shadow ray starts in */                                        \
    X(uint32_t, mdim)         /* media events so far: their draws' index in the media block */
#else
#define PATH_STATE_MEDIUM_FIELDS(X)
#endif

#define PATH_STATE_FIELDS(X)                                                                                           \
    X(ray, r)               /* ray to intersect next */                                                                \
    X(hit, h)               /* its closest hit */                                                                      \
    X(vec3, throughput)     /* product of BSDF weights / pdfs so far */                                                \
    X(float, eta_scale)     /* product of eta^2 over refractions: throughput * eta_scale is the throughput      \
                               without radiance's 1/eta^2 compression, what Russian roulette weighs (pbrt-v4's   \
                               etaScale): paths deep inside nested glass are not killed for it */      \
    X(vec3, radiance)       /* accumulated estimate */                                                                 \
    X(vec3, prev_p)         /* previous scattering vertex, for emitter MIS */                                          \
    X(vec3, prev_n)         /* its shading normal (the light tree's pick depends on it) */                             \
    X(float, prev_pdf)      /* solid-angle pdf of the BSDF sample that produced r */                                   \
    X(int32_t, prev_delta)  /* r came from a delta lobe (or the camera): no MIS */                                     \
    X(int32_t, depth)       /* scattering events so far */                                                             \
    X(ray, shadow)          /* pending NEE shadow ray */                                                               \
    X(vec3, shadow_contrib) /* its contribution if unoccluded */                                                       \
    X(int32_t, shadow_pending)                                                                                         \
    X(int32_t, alive)        /* the path continues after the pending shadow ray */                                     \
    X(uint32_t, rays)        /* rays traced, for statistics (path segments and shadow rays) */                         \
    X(uint32_t, shadow_rays) /* of those, NEE shadow rays */                                                           \
    X(sampler, smp)                                                                                                    \
    PATH_STATE_MEDIUM_FIELDS(X)                                                                                        \
    PATH_STATE_SPECTRAL_FIELDS(X)

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

/* The stages of a path. Which one runs next is path_next's decision alone (integrator_pt.h): the
 * CPU's loop, the GPU megakernel's step and the wavefront's queues all ask it. */
typedef enum path_stage {
    STAGE_INTERSECT = 0,
    STAGE_SHADE = 1,
    STAGE_SHADOW = 2,
    STAGE_DONE = 3,
    STAGE_MEDIUM = 4 /* a scattering vertex in a medium (kernels with KERNEL_MEDIA only) */
} path_stage;

/* What the segment step (path_segment, kernel/medium.h) found along the ray just traced, the
 * result of STAGE_INTERSECT that path_next reads. A medium adds its events here (a real
 * scattering inside the segment, its own stage): docs/extending.md, "A medium". */
typedef enum segment_event {
    SEGMENT_MISS = 0,
    SEGMENT_SURFACE = 1,
    SEGMENT_SCATTER = 2,   /* a real scattering in the medium, at h.t (stage STAGE_MEDIUM) */
    SEGMENT_INTERFACE = 3, /* an interface-only surface: the ray goes on from it (STAGE_INTERSECT) */
    SEGMENT_ABSORBED = 4   /* the medium took all of the throughput: the path ends */
} segment_event;

#endif
