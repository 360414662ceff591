/* Backends behind one table of functions (as SQLite's VFS): the renderer picks the first entry
 * of backend_table that supports its settings and drives it through these operations only.
 * Each backend owns its film (kernel/film.h) and states its own limits in `supports`. A backend
 * that fails to start hands over to the next entry of the table (the GPU ones come first, so the
 * CPU is the fallback), unless the device was asked for explicitly. New backends (distributed
 * rendering, one per MPI rank) are new entries: passes over a sample range, the film read and
 * written as host sums, and accumulation reset by writing an empty film. */
#ifndef CAUSTIC_API_BACKEND_H
#define CAUSTIC_API_BACKEND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "caustic.h"
#include "kernel/film.h"
#include "kernel/pass.h"
#include "scene/scene.h"

/* What a renderer asks of a backend. */
typedef struct backend_desc {
    scene *scene;               /* prepared; shared by every renderer over it */
    const caustic_options *opt; /* resolved: integrator, merge settings, threads, device, ... */
    int width, height;
    camera cam; /* for width x height */
    int max_depth;
    int gpu; /* the CUDA device of a GPU backend (an index; backend_multi
                                    creates one backend per device of the list) */
    /* caustic_cancel's flag: a pass ends early at its next safe point (a finished tile of path
     * tracing, a finished iteration of the bidirectional integrators) once it is set; NULL: never */
    const atomic_int *cancel;
    int aov; /* the film needs AOV planes (kfilm.aov, kernel/aov.h) */
} backend_desc;

typedef struct backend_stats {
    uint64_t rays, shadow_rays, bad_samples, samples; /* shadow_rays: of rays (path tracing) */
    int stopped; /* the pass ended early on its own (the distributed layer on an interrupt): the
                    render stops as after caustic_cancel, each pixel keeping what it took */
} backend_stats;

typedef struct backend_ops {
    const char *name;   /* "cpu-pt", "cpu-bidir", "cuda-pt", "cuda-bidir" */
    const char *device; /* "cpu" | "cuda" (caustic_device's names) */
    /* 1: this backend renders d; 0: not its integrator (silently skipped); -1: it refuses, with
     * the reason in err (a setting it does not support, no device). */
    int (*supports)(const backend_desc *d, char *err, size_t errlen);
    void *(*create)(const backend_desc *d, char *err, size_t errlen);
    /* Adds samples [p->sample_begin, p->sample_end) of every pixel to the film (fewer where
     * desc->cancel stopped it: each pixel's count says what it holds). */
    int (*pass)(void *b, const kpass *p, backend_stats *st, char *err, size_t errlen);
    /* The film as host sums (dst: width x height, double; its AOV planes when dst->aov is set,
     * which it is exactly when the backend was created with desc.aov). */
    int (*read_film)(void *b, const kfilm *dst, char *err, size_t errlen);
    int (*write_film)(void *b, const kfilm *src, char *err, size_t errlen);
    /* The mean times `scale` (2^exposure) through tone map `op` (kernel/tonemap.h) to 8-bit sRGB
     * where the film lives (image_quantize8's rule); NULL: the caller tonemaps what read_film
     * returns. */
    int (*tonemap8)(void *b, int op, float scale, unsigned char *rgb8, char *err, size_t errlen);
    int (*threads)(const void *b); /* CPU worker threads, 0 for a GPU */
    void (*free)(void *b);
    /* Optional (NULL where not offered). Path tracing into a tile's own film: samples
     * [p->sample_begin, p->sample_end) of the pixels [x0, x0 + tile->width) x [y0, y0 +
     * tile->height), each continuing from the sums and count the tile holds (a distributed work
     * unit; the backend's own film is untouched). Safe to call from any thread, one call at a time
     * per backend (backend_multi drives one backend per device from a thread of its own). */
    int (*pass_tile)(void *b, const kpass *p, const kfilm *tile, int x0, int y0, backend_stats *st, char *err,
                     size_t errlen);
    /* Optional: pass_tile in two halves, so that a caller overlaps one tile's transfers with
     * another's rendering (a GPU). tile_begin starts the pass over `tile` in slot 0 or 1 and
     * returns; the tile's memory is the backend's until tile_end(slot) has waited for it and left
     * the result there. A slot takes one tile at a time, both may be in flight; same threading
     * rule as pass_tile. */
    int (*tile_begin)(void *b, int slot, const kpass *p, const kfilm *tile, int x0, int y0, char *err, size_t errlen);
    int (*tile_end)(void *b, int slot, backend_stats *st, char *err, size_t errlen);
    /* A layer over several processes (src/dist): 1 on the process that coordinates (the caller
     * runs passes as usual); elsewhere it serves work units until the coordinator ends the
     * render, then returns 0 (or -1 with err). */
    int (*serve)(void *b, char *err, size_t errlen);
    double pass_seconds; /* how long a pass should take; 0: the renderer's default */
    /* Optional: nonzero when the film rounds its sums where a pass ends (a GPU's float film), so
     * that the image depends on where passes are cut. caustic_render then cuts them by sample
     * count alone (caustic.c's count_pass), never by time, so that every run, and every layer
     * over the same device (one GPU, backend_multi, GPU ranks), cuts them alike. NULL or 0:
     * passes follow pass_seconds (a double film sums each pixel in sample order whatever the
     * cuts). */
    int (*cuts_by_count)(const void *b);
    /* Empties the film (a camera moved); NULL: the renderer writes an empty film instead. */
    int (*clear)(void *b, char *err, size_t errlen);
    /* Optional: the kernel variant the backend runs (caustic_render_stats.kernel); NULL: none. */
    const char *(*kernel)(const void *b);
} backend_ops;

/* In order of preference; NULL-terminated. */
extern const backend_ops *const backend_table[];

extern const backend_ops backend_cpu_pt, backend_cpu_bidir, backend_cuda_pt, backend_cuda_bidir, backend_dist,
    backend_multi;

/* The bidirectional integrators' limits (kernel/bidir_limits.h): 0, or -1 and why. media_ok: the
 * calling backend's driver renders participating media. */
int backend_bidir_limits(const backend_desc *d, int media_ok, char *err, size_t errlen);

#endif
