/* What the bidirectional integrators (light tracing, BDPT, VCM and PPM: kernel/vcm.h) cannot
 * render, in one table. The API refuses such a render with the row's message before any backend
 * starts (backend_bidir_limits, src/api/backend.c), and the CPU and GPU drivers (src/cpu/
 * render_vcm.c, src/cuda/render_vcm.cu) refuse it again from what they are given, so that no
 * caller gets a wrong image. A feature the bidirectional kernels learn leaves the table; one they
 * cannot handle yet enters it with its message. Participating media left it for the CPU (kernel/
 * vcm.h's "Media": medium vertices, point-to-point merging in media); a driver that renders them
 * says so in media_ok, and emissive media stay refused everywhere (no strategy samples a point
 * on a medium's emission). */
#ifndef CAUSTIC_KERNEL_BIDIR_LIMITS_H
#define CAUSTIC_KERNEL_BIDIR_LIMITS_H

#include "features.h"

/* What a bidirectional render asks for (fields a caller does not know stay 0). */
typedef struct bidir_request {
    float adaptive;     /* adaptive sampling's threshold (0: off) */
    int adaptive_depth; /* --adaptive-depth */
    float clamp;        /* the firefly clamp (0: off) */
    float lens_radius;  /* the camera's aperture (0: pinhole) */
    uint32_t features;  /* the scene's features (kscene_features) */
    int emissive_media; /* a medium of the scene emits (kscene_emissive_media) */
    int grid_media;     /* a medium of the scene is a voxel grid (kscene_grid_media) */
    int media_ok;       /* the driver asked renders participating media (KF_MEDIA) */
} bidir_request;

/* X(NAME, refused when (over `q`, a const bidir_request *), message after "--integrator NAME") */
#define BIDIR_REFUSALS(X)                                                                                              \
    X(BIDIR_ADAPTIVE, q->adaptive > 0.0f, "does not support adaptive sampling")                                        \
    X(BIDIR_ADAPTIVE_DEPTH, q->adaptive_depth != 0, "does not support --adaptive-depth")                               \
    X(BIDIR_CLAMP, q->clamp > 0.0f, "does not support the firefly clamp")                                              \
    X(BIDIR_LENS, q->lens_radius > 0.0f, "supports pinhole cameras only (the scene has an APERTURE)")                  \
    X(BIDIR_MEDIA_EMISSION, q->emissive_media != 0, "does not render emissive media (--integrator pt does)")           \
    X(BIDIR_GRID_MEDIA, q->grid_media != 0,                                                                            \
      "does not render grid (heterogeneous) media yet: its MIS needs the free-flight pdf, which delta tracking does "  \
      "not give (--integrator pt does)")                                                                               \
    X(BIDIR_MEDIA, (q->features & KF_MEDIA) != 0u && !q->media_ok,                                                     \
      "does not render participating media on this device yet (--device cpu does)")                                    \
    X(BIDIR_DISPERSION, (q->features & KF_DISPERSION) != 0u,                                                           \
      "does not render dispersion yet (a dispersive material: DISPERSION/ABBE/CAUCHY_B); use --integrator pt")

/* The message of the first row that refuses q, or NULL. */
KFN const char *bidir_refusal(const bidir_request *q) {
#define BIDIR_REFUSAL_ROW(NAME, refused, message)                                                                      \
    if (refused) return message;
    BIDIR_REFUSALS(BIDIR_REFUSAL_ROW)
#undef BIDIR_REFUSAL_ROW
    return (const char *)0;
}

/* Does a medium of s (a host scene) emit? */
KFN int kscene_emissive_media(const kscene *s) {
    for (uint32_t i = 0; i < s->nmedia; ++i)
        if (vmaxc(s->media[i].emission) > 0.0f && vmaxc(s->media[i].sigma_a) > 0.0f) return 1;
    return 0;
}

/* Is a medium of s (a host scene) a voxel grid? */
KFN int kscene_grid_media(const kscene *s) {
    for (uint32_t i = 0; i < s->nmedia; ++i)
        if (s->media[i].kind == MEDIUM_GRID || s->media[i].kind == MEDIUM_NANOVDB) return 1;
    return 0;
}

/* What a driver knows of a render: its camera and its scene's features (the fields it does not
 * know stay 0: emissive_media is set where the host scene is at hand, media_ok by a driver that
 * renders media). */
KFN bidir_request bidir_request_of(const camera *cam, uint32_t features) {
    bidir_request q;
    q.adaptive = 0.0f;
    q.adaptive_depth = 0;
    q.clamp = 0.0f;
    q.lens_radius = cam->lens_radius;
    q.features = features;
    q.emissive_media = 0;
    q.grid_media = 0;
    q.media_ok = 0;
    return q;
}

#endif
