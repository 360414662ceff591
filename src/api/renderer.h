/* The library's handles as the API's files share them (caustic.c: options, the renderer and its
 * passes; scene_api.c: scenes; options_names.c: the names of options; steer.c: the camera and the
 * resolution; renderer_output.c: images and AOVs; renderer_checkpoint.c: checkpoints). Private to
 * src/api. */
#ifndef CAUSTIC_API_RENDERER_H
#define CAUSTIC_API_RENDERER_H

#include <stdatomic.h>
#include <stdint.h>

#include "api/backend.h"
#include "caustic.h"
#include "kernel/camera.h"
#include "kernel/film.h"
#include "kernel/pass.h"
#include "scene/scene.h"

struct caustic_scene {
    scene *s;
};

struct caustic_renderer {
    caustic_scene *scene;
    caustic_options opt; /* resolved (defaults filled in) */
    int width, height, spp_target, max_depth;
    camera_desc camera;     /* this renderer's camera (the scene's at creation) */
    kpass pass;             /* every pass's settings; the sample range is set per pass */
    const backend_ops *ops; /* the backend that renders (backend_table) */
    void *backend;
    kfilm film;                        /* host copy of the backend's film (images, checkpoints) */
    int film_stale;                    /* the backend has samples that the host copy lacks */
    float *image;                      /* current mean, refreshed by caustic_image */
    float *aov_out[CAUSTIC_AOV_COUNT]; /* current AOV means, refreshed by caustic_aov_image */
    int spp_done;
    double seconds; /* rendering time across calls */
    uint64_t rays, bad;
    uint64_t shadow_rays; /* of rays; not in checkpoints (counted from a resume on) */
    uint64_t samples;     /* pixel samples taken (fewer than spp x pixels with adaptive sampling) */
    atomic_int cancel;    /* caustic_cancel: the backends stop at their next safe point */
};

/* The AOVs traced per sample into the film's AOV planes (kernel/aov.h); the others come from the
 * film's sums and counts. */
#define AOV_TRACED                                                                                                     \
    (CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_DEPTH))

/* caustic.c */
/* A backend's description for the renderer's settings at camera `cam`. */
void api_desc_of(const caustic_renderer *r, const camera *cam, backend_desc *d);
/* The host film and a backend for r->width x r->height (r->pass.cam): a new, empty image. */
int api_start_film(caustic_renderer *r, char *err, size_t errlen);
/* Frees the backend and the host film. */
void api_free_film(caustic_renderer *r);
/* renderer_output.c: brings the backend's film to the host copy (images, checkpoints). */
int api_sync_film(caustic_renderer *r, char *err, size_t errlen);

#endif
