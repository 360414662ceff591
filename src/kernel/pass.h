/* One pass of samples as every backend's kernel sees it: the render settings (camera for the
 * image's resolution, sampler, depth, clamp, adaptive sampling) and the sample range, passed by
 * value like kscene. The scene (kscene) holds no render settings, so several renderers with
 * different cameras or depths can share one scene. */
#ifndef CAUSTIC_KERNEL_PASS_H
#define CAUSTIC_KERNEL_PASS_H

#include "types.h"

#define KPASS_RR_DEPTH 3

typedef struct kpass {
    camera cam;      /* for the image's resolution (cam.width x cam.height) */
    int32_t sampler; /* sampler_type */
    uint32_t seed;
    uint32_t spp_total; /* the spp target: strata of the stratified sampler, --adaptive-depth's weights */
    int32_t max_depth;
    int32_t rr_depth;         /* Russian roulette starts after this many bounces (KPASS_RR_DEPTH) */
    int32_t depth_start;      /* --adaptive-depth: the first samples' depth limit (adaptive_depth.h), 0 = off */
    float clamp;              /* firefly clamp: max sample luminance, 0 = off */
    float adaptive_threshold; /* adaptive sampling's relative error (adaptive.h), 0 = off */
    uint32_t adaptive_min;    /* ... and the samples a pixel takes before it may stop */
    uint32_t sample_begin, sample_end; /* sample indices [begin, end) of every pixel */
} kpass;

#endif
