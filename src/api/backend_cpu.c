/* The CPU backends: path tracing over the thread pool (src/cpu/render_cpu.c) and the
 * bidirectional integrators' driver (src/cpu/render_vcm.c), through the ISA dispatcher's kernels.
 * Their film is host memory (double sums). */
#include "api/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/film_host.h"
#include "cpu/isa.h"
#include "cpu/render_cpu.h"
#include "cpu/render_vcm.h"
#include "kernel/bidir_limits.h"

typedef struct cpu_backend {
    const kscene *k;
    cpu_pool *pool;
    vcm_renderer *vcm; /* bidirectional only */
    int schedule;
    const atomic_int *cancel; /* caustic_cancel's flag (backend_desc) */
    kfilm film;
} cpu_backend;

static size_t film_pixels(const kfilm *f) { return (size_t)f->width * (size_t)f->height; }

static void cpu_free(void *p) {
    cpu_backend *b = p;
    if (!b) return;
    cpu_pool_destroy(b->pool);
    if (b->vcm) cpu_kernels_get()->vcm_free(b->vcm);
    film_host_free(&b->film);
    free(b);
}

static cpu_backend *cpu_create(const backend_desc *d, char *err, size_t errlen) {
    cpu_backend *b = calloc(1, sizeof *b);
    int film_ok = 0;
    if (b) {
        b->k = &d->scene->k;
        b->schedule = (int)d->opt->schedule;
        b->cancel = d->cancel;
        film_ok = film_host_alloc(&b->film, d->width, d->height, d->aov) == 0;
        b->pool = cpu_pool_create(d->opt->threads);
    }
    if (!b || !film_ok || !b->pool) {
        snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
        cpu_free(b);
        return NULL;
    }
    return b;
}

static int cpu_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(dst, &((const cpu_backend *)p)->film);
    return 0;
}

static int cpu_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(&((cpu_backend *)p)->film, src);
    return 0;
}

static int cpu_clear(void *p, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_clear(&((cpu_backend *)p)->film);
    return 0;
}

static int cpu_threads(const void *p) { return cpu_pool_threads(((const cpu_backend *)p)->pool); }

/* ---- path tracing ---------------------------------------------------------------------------- */
static int pt_supports(const backend_desc *d, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    return d->opt->integrator == CAUSTIC_INTEGRATOR_PT;
}

static void *pt_create(const backend_desc *d, char *err, size_t errlen) { return cpu_create(d, err, errlen); }

static int pt_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    cpu_backend *b = p;
    cpu_pass cp;
    cp.scene = b->k;
    cp.pass = *pass;
    cp.film = b->film;
    cp.x0 = cp.y0 = 0;
    cp.schedule = b->schedule;
    cp.cancel = b->cancel;
    cpu_pass_stats ps;
    cpu_pool_run(b->pool, &cp, &ps);
    st->rays = ps.rays;
    st->shadow_rays = ps.shadow_rays;
    st->bad_samples = ps.bad_samples;
    st->samples = ps.samples;
    return 0;
}

static int pt_pass_tile(void *p, const kpass *pass, const kfilm *tile, int x0, int y0, backend_stats *st, char *err,
                        size_t errlen) {
    (void)err;
    (void)errlen;
    cpu_backend *b = p;
    cpu_pass cp;
    cp.scene = b->k;
    cp.pass = *pass;
    cp.film = *tile;
    cp.x0 = x0;
    cp.y0 = y0;
    cp.schedule = b->schedule;
    cp.cancel = NULL; /* a work unit is finished whole: its owner counts it as done */
    cpu_pass_stats ps;
    cpu_pool_run(b->pool, &cp, &ps);
    st->rays = ps.rays;
    st->shadow_rays = ps.shadow_rays;
    st->bad_samples = ps.bad_samples;
    st->samples = ps.samples;
    return 0;
}

/* Path-tracing passes of about a second rather than the renderer's quarter: every pass costs each
 * pixel a fixed start, about 300 instructions with the independent sampler and 500 with Sobol
 * (whose per-pixel seeds are hashed again), and at the renderer's default a CPU pass of a large
 * image holds one or two samples a pixel: 1-sample passes run 4.5 % (random) and 7.5 % (Sobol)
 * more instructions than 16-sample ones (docs/performance-log.md, "CPU path-tracing passes of a
 * second"). A second still keeps
 * progress, Ctrl-C and time limits responsive. */
#define CPU_PT_PASS_SECONDS 1.0

const backend_ops backend_cpu_pt = {
    .name = "cpu-pt",
    .device = "cpu",
    .supports = pt_supports,
    .create = pt_create,
    .pass = pt_pass,
    .read_film = cpu_read_film,
    .write_film = cpu_write_film,
    .threads = cpu_threads,
    .free = cpu_free,
    .pass_tile = pt_pass_tile,
    .clear = cpu_clear,
    .pass_seconds = CPU_PT_PASS_SECONDS,
};

/* ---- bidirectional --------------------------------------------------------------------------- */
static int bidir_supports(const backend_desc *d, char *err, size_t errlen) {
    if (d->opt->integrator == CAUSTIC_INTEGRATOR_PT) return 0;
    return backend_bidir_limits(d, 1, err, errlen) ? -1 : 1;
}

static void *bidir_create(const backend_desc *d, char *err, size_t errlen) {
    cpu_backend *b = cpu_create(d, err, errlen);
    if (!b) return NULL;
    const caustic_options *o = d->opt;
    /* the kernel's own list of what it cannot render (kernel/bidir_limits.h), from the scene it gets */
    bidir_request q = bidir_request_of(&d->cam, kscene_features(b->k));
    q.emissive_media = kscene_emissive_media(b->k);
    q.grid_media = kscene_grid_media(b->k);
    q.media_ok = 1; /* render_vcm_media.c */
    const char *why = bidir_refusal(&q);
    if (why) {
        snprintf(err, errlen, "--integrator %s %s", caustic_integrator_name(o->integrator), why);
        cpu_free(b);
        return NULL;
    }
    /* path length counts segments: depth d bounces allow paths of d + 1 segments */
    b->vcm = cpu_kernels_get()->vcm_create(b->k, &d->cam, (int)o->integrator - 1, d->max_depth + 1,
                                           o->merge_radius * b->k->scene_radius, o->merge_alpha, o->merge_everywhere,
                                           o->seed);
    if (!b->vcm) {
        snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
        cpu_free(b);
        return NULL;
    }
    return b;
}

static int bidir_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    cpu_backend *b = p;
    /* every pixel holds one sample per iteration: the film continues from the iterations it
     * holds (a distributed render's checkpoint may hold some beyond its last whole pass) */
    uint32_t first = pass->sample_begin, held = film_pixels(&b->film) ? b->film.count[0] : 0;
    if (held > first) first = held;
    uint32_t iterations = pass->sample_end > first ? pass->sample_end - first : 0;
    memset(st, 0, sizeof *st);
    if (pass->cam.width != b->film.width || pass->cam.height != b->film.height) {
        snprintf(err, errlen, "a %dx%d pass on a %dx%d film", pass->cam.width, pass->cam.height, b->film.width,
                 b->film.height);
        return -1;
    }
    if (iterations &&
        cpu_kernels_get()->vcm_run(b->vcm, b->pool, &pass->cam, first, iterations, b->cancel, &b->film, &st->rays)) {
        snprintf(err, errlen, "out of memory for light vertices");
        return -1;
    }
    /* a cancelled pass ends after a whole iteration: every pixel holds the same count. The
     * iterations run are what the count grew by: a distributed unit renders iteration `first`
     * into an empty film (held 0), where count - first would wrap around */
    uint32_t done = film_pixels(&b->film) ? b->film.count[0] - held : 0;
    st->samples = (uint64_t)done * film_pixels(&b->film);
    return 0;
}

const backend_ops backend_cpu_bidir = {
    .name = "cpu-bidir",
    .device = "cpu",
    .supports = bidir_supports,
    .create = bidir_create,
    .pass = bidir_pass,
    .read_film = cpu_read_film,
    .write_film = cpu_write_film,
    .threads = cpu_threads,
    .free = cpu_free,
    .clear = cpu_clear,
};
