/* The seam for participating media: what every integrator calls between tracing a ray and
 * shading what it found, and where a shadow ray asks how much light gets through. No medium
 * exists yet: with KERNEL_MEDIA 0 (kernel/path_state.h) every function here is the surface-only
 * answer, and inlined it leaves no instruction (a segment is empty, a shadow ray's transmittance
 * is 0 or 1). The media issue fills the KERNEL_MEDIA branches; the recipe, step by step, is
 * docs/extending.md, "A medium".
 *
 * The pieces of the seam:
 *   - the path state's media columns (PATH_STATE_MEDIUM_FIELDS, kernel/path_state.h), compiled
 *     only into kernels with KERNEL_MEDIA;
 *   - path_segment: the segment step, run on every traced path segment before anything is
 *     shaded (integrator_pt.h's stage_intersect_done); its segment_event is what path_next reads;
 *   - trace_transmittance: a shadow ray's RGB transmittance, used by NEE in path tracing and by
 *     every connection of the bidirectional integrators (vcm.h);
 *   - the media block of the sampler (sampler_medium_1d, sampler_medium_stream, kernel/sampler.h),
 *     which draws without moving the surface dimensions;
 *   - the bidirectional integrators' refusals (kernel/bidir_limits.h), where KF_MEDIA is refused
 *     until they handle media. */
#ifndef CAUSTIC_KERNEL_MEDIUM_H
#define CAUSTIC_KERNEL_MEDIUM_H

#include "bvh_traverse.h"
#include "features.h"
#include "pass.h"
#include "path_state.h"

/* A kernel's media code and its medium column come and go together. */
KSTATIC_ASSERT(KHAS(KF_MEDIA) == (KERNEL_MEDIA != 0),
               "a kernel with KF_MEDIA in KERNEL_FEATURES defines KERNEL_MEDIA 1 first (kernel/path_state.h), and "
               "only such a kernel");

/* The medium a camera ray starts in (the camera's: a render setting, so kpass's). */
KFN void path_medium_start(path_state *ps, const kpass *p) {
#if KERNEL_MEDIA
    (void)p;
    ps->medium = MEDIUM_NONE; /* kpass's camera medium goes here */
#else
    (void)ps;
    (void)p;
#endif
}

/* The segment step: the ray ps->r has been traced (got: it hit ps->h at ps->h.t, else it escaped).
 * The medium it travels in (ps->medium) may absorb, emit and scatter along [0, h.t) (to infinity
 * on a miss): it attenuates ps->throughput, adds its emission to ps->radiance, and where it samples
 * a real scattering it moves the path's vertex there and answers an event of its own. Random
 * numbers: sampler_medium_1d / _2d / _stream of bounce ps->depth (never the surface draws). With no
 * medium: what the trace found. */
KFN int path_segment(path_state *ps, const kscene *s, const kpass *p, int got) {
    (void)ps;
    (void)s;
    (void)p;
    return got ? SEGMENT_SURFACE : SEGMENT_MISS;
}

/* The transmittance of a shadow ray that one traversal found occluded or not: the whole answer
 * for surfaces (0 or 1 on every channel). */
KFN vec3 surface_transmittance(int occluded) { return v3s(occluded ? 0.0f : 1.0f); }

/* The RGB transmittance along shadow ray r (r.t_max: the light's distance), which starts in
 * medium `medium` (MEDIUM_NONE: the vacuum). For surfaces 0 (occluded) or 1. With media the walk
 * passes the interfaces (materials that are only a medium boundary), changing medium at each, and
 * estimates each medium's part by ratio tracking with a stream seeded by `seed` (a pure function
 * of the path's sample: sampler_medium_stream's, or the bidirectional integrators' generator's
 * state, unused and so free where the kernel has no media). Where a connection's radiance is
 * weighted by it: add vmul(contrib, tr) where tr is not black, which for surfaces is the old
 * "add contrib if unoccluded" to the bit. */
KFN vec3 trace_transmittance(const kscene *s, ray r, int32_t medium, uint32_t seed, uint32_t layout) {
    (void)medium;
    (void)seed;
    return surface_transmittance(trace_occluded_layout(s, r, layout));
}

#endif
