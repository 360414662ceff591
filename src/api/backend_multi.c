/* Several GPUs in one process: a layer in the backend table (backend_multi) over the GPU entry
 * after it that renders the settings, with one backend per device of the list (--device cuda:0,2,
 * or every visible device with --device cuda / auto) and one host thread per device. The threads
 * pull work units from one queue; the film lives on the host (double sums, as the CPU's).
 *
 * Units and determinism, as the distributed layer's (src/dist/dist_mpi.c). Path tracing: a unit
 * is a band of rows of the pass (or of the tile a distributed render hands this process) rendered
 * by the device's tile pass, which continues each pixel's sums from the film: every pixel takes
 * the same arithmetic as on one GPU, so the image is the single-GPU image bit for bit whichever
 * device renders which band, given the same passes (the GPU's film holds floats between them)
 * and sample split (cuda_renderer_tile_begin). Bidirectional integrators: a unit is a block of
 * consecutive iterations, rendered into its device's film emptied by the backend's clear (or by
 * writing an empty film); blocks reach the host film in index order, so no sum depends on which
 * device finished first. (The GPU's bidirectional image is not bit-reproducible anyway: its
 * splats and merges add with atomics; it equals a single GPU's within float rounding.) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/film_host.h"
#include "cuda/render_cuda.h"
#include "util/log.h"

typedef struct multi multi;

typedef struct worker {
    multi *m;
    int index; /* which backend (device) it drives */
    pthread_t thread;
    kfilm scratch; /* bidirectional: one block's film */
} worker;

struct multi {
    const backend_ops *inner;
    int n, bidir, width, height;
    void *ib[CAUSTIC_MAX_GPUS];
    int gpu[CAUSTIC_MAX_GPUS]; /* the CUDA device of each */
    worker w[CAUSTIC_MAX_GPUS];
    int started; /* threads running */
    kfilm film;  /* every sample */
    kfilm zero;  /* bidirectional, where the backend has no clear: an empty film */
    /* the current units (guarded by lock): a pass's bands over `target` (whose pixel (0, 0) is
     * the image's (x0, y0)) or its iterations [first, first + njobs) */
    pthread_mutex_t lock;
    pthread_cond_t wake, idle_cv, applied_cv;
    unsigned generation; /* a new set of units */
    int quit, idle, failed;
    kpass pass;
    kfilm target;
    int x0, y0, rows;           /* path tracing: rows per band */
    uint32_t first, end, block; /* bidirectional: iterations [first, end) in blocks */
    size_t njobs, next, applied;
    double **pending; /* bidirectional: blocks' sums that came before their predecessors */
    backend_stats st;
    char err[640];
};

/* The devices to use: the list asked for, or every visible one; their number. */
static int device_list(const backend_desc *d, int *gpus) {
    const caustic_options *o = d->opt;
    if (o->ngpus > 0) {
        memcpy(gpus, o->gpus, (size_t)o->ngpus * sizeof(int));
        return o->ngpus;
    }
    int n = cuda_device_count();
    if (n > CAUSTIC_MAX_GPUS) n = CAUSTIC_MAX_GPUS;
    for (int i = 0; i < n; ++i) gpus[i] = i;
    return n;
}

/* The GPU entry after this layer that renders d on every device of the list. */
static const backend_ops *inner_ops(const backend_desc *d, const int *gpus, int n, char *err, size_t errlen) {
    for (int i = 0; backend_table[i]; ++i) {
        const backend_ops *ops = backend_table[i];
        if (ops == &backend_multi || !ops->device || strcmp(ops->device, "cuda")) continue;
        backend_desc dd = *d;
        int sup = 1;
        for (int k = 0; k < n && sup > 0; ++k) {
            dd.gpu = gpus[k];
            sup = ops->supports(&dd, err, errlen);
        }
        if (sup == 0) continue;
        if (sup < 0) return NULL;
        if (d->opt->integrator == CAUSTIC_INTEGRATOR_PT && !ops->pass_tile) {
            snprintf(err, errlen, "several GPUs need tile passes, which backend %s lacks", ops->name);
            return NULL;
        }
        return ops;
    }
    snprintf(err, errlen, "no GPU backend renders --integrator %s", caustic_integrator_name(d->opt->integrator));
    return NULL;
}

static int multi_supports(const backend_desc *d, char *err, size_t errlen) {
    int gpus[CAUSTIC_MAX_GPUS];
    if (d->opt->device == CAUSTIC_DEVICE_CPU || device_list(d, gpus) < 2) return 0;
    if (d->aov) { /* tile films carry no AOV planes yet: the next entry renders on the first GPU */
        lib_log("caustic: AOVs (--aov, --denoise's guides) on several GPUs are not supported yet; rendering on "
                "GPU %d alone",
                gpus[0]);
        return 0;
    }
    return inner_ops(d, gpus, device_list(d, gpus), err, errlen) ? 1 : -1;
}

static void multi_free(void *p) {
    multi *m = p;
    if (!m) return;
    if (m->started) {
        pthread_mutex_lock(&m->lock);
        m->quit = 1;
        pthread_cond_broadcast(&m->wake);
        pthread_mutex_unlock(&m->lock);
        for (int i = 0; i < m->started; ++i) pthread_join(m->w[i].thread, NULL);
    }
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->wake);
    pthread_cond_destroy(&m->idle_cv);
    pthread_cond_destroy(&m->applied_cv);
    for (int i = 0; i < m->n; ++i) {
        if (m->ib[i]) m->inner->free(m->ib[i]);
        film_host_free(&m->w[i].scratch);
    }
    film_host_free(&m->film);
    film_host_free(&m->zero);
    free(m);
}

/* One unit on worker w's device: 0, or -1 with err. Called without the lock. */
static int run_unit(multi *m, worker *w, size_t j, backend_stats *st, char *err, size_t errlen) {
    void *b = m->ib[w->index];
    kpass p = m->pass;
    if (!m->bidir) {
        /* a band of whole rows of the target: contiguous in it */
        int y = (int)j * m->rows, h = y + m->rows <= m->target.height ? m->rows : m->target.height - y;
        size_t off = (size_t)y * m->target.width;
        kfilm band = {
            .sum = m->target.sum + 3 * off,
            .count = m->target.count + off,
            .lum2 = m->target.lum2 + off,
            .width = m->target.width,
            .height = h,
        };
        return m->inner->pass_tile(b, &p, &band, m->x0, m->y0 + y, st, err, errlen);
    }
    p.sample_begin = m->first + (uint32_t)j * m->block;
    p.sample_end = m->end - p.sample_begin > m->block ? p.sample_begin + m->block : m->end;
    int empty = m->inner->clear ? m->inner->clear(b, err, errlen) : m->inner->write_film(b, &m->zero, err, errlen);
    return empty || m->inner->pass(b, &p, st, err, errlen) || m->inner->read_film(b, &w->scratch, err, errlen) ? -1 : 0;
}

/* Bidirectional, with the lock held: block j's sums (worker w's scratch) into the queue, then
 * every block whose predecessors are all in the film, in index order. Every pixel takes one
 * sample per iteration. */
static int take_block(multi *m, worker *w, size_t j) {
    size_t npix = (size_t)m->width * m->height;
    m->pending[j] = malloc(3 * npix * sizeof(double));
    if (!m->pending[j]) return -1;
    memcpy(m->pending[j], w->scratch.sum, 3 * npix * sizeof(double));
    for (; m->applied < m->njobs && m->pending[m->applied]; ++m->applied) {
        const double *c = m->pending[m->applied];
        uint32_t b = m->first + (uint32_t)m->applied * m->block, e = m->end - b > m->block ? b + m->block : m->end;
        for (size_t i = 0; i < 3 * npix; ++i) m->film.sum[i] += c[i];
        for (size_t i = 0; i < npix; ++i) m->film.count[i] += e - b;
        free(m->pending[m->applied]);
        m->pending[m->applied] = NULL;
    }
    pthread_cond_broadcast(&m->applied_cv);
    return 0;
}

static void *worker_main(void *p) {
    worker *w = p;
    multi *m = w->m;
    unsigned seen = 0;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (!m->quit && m->generation == seen) pthread_cond_wait(&m->wake, &m->lock);
        if (m->quit) break;
        seen = m->generation;
        while (!m->failed && m->next < m->njobs) {
            size_t j = m->next++;
            /* bidirectional: at most a few blocks ahead of the film, so that waiting images stay
             * few when one device is slower */
            while (m->bidir && !m->failed && j >= m->applied + 2 * (size_t)m->n)
                pthread_cond_wait(&m->applied_cv, &m->lock);
            if (m->failed) break;
            pthread_mutex_unlock(&m->lock);
            backend_stats st;
            char err[512];
            memset(&st, 0, sizeof st);
            int rc = run_unit(m, w, j, &st, err, sizeof err);
            pthread_mutex_lock(&m->lock);
            if (!rc && m->bidir && take_block(m, w, j)) {
                rc = -1;
                snprintf(err, sizeof err, "out of memory for a block of iterations");
            }
            if (rc) {
                if (!m->failed) snprintf(m->err, sizeof m->err, "GPU %d: %s", m->gpu[w->index], err);
                m->failed = 1;
                pthread_cond_broadcast(&m->applied_cv);
            }
            m->st.rays += st.rays;
            m->st.shadow_rays += st.shadow_rays;
            m->st.bad_samples += st.bad_samples;
            m->st.samples += st.samples;
        }
        if (++m->idle == m->n) pthread_cond_signal(&m->idle_cv);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static void *multi_create(const backend_desc *d, char *err, size_t errlen) {
    int gpus[CAUSTIC_MAX_GPUS], n = device_list(d, gpus);
    multi *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->wake, NULL);
    pthread_cond_init(&m->idle_cv, NULL);
    pthread_cond_init(&m->applied_cv, NULL);
    m->n = n;
    m->bidir = d->opt->integrator != CAUSTIC_INTEGRATOR_PT;
    m->width = d->width;
    m->height = d->height;
    m->inner = inner_ops(d, gpus, n, err, errlen);
    if (!m->inner) {
        multi_free(m);
        return NULL;
    }
    if (film_host_alloc(&m->film, d->width, d->height, 0) ||
        (m->bidir && !m->inner->clear && film_host_alloc(&m->zero, d->width, d->height, 0))) {
        snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
        multi_free(m);
        return NULL;
    }
    /* the backends one after another (each uploads the scene to its device), then their threads */
    for (int i = 0; i < n; ++i) {
        backend_desc dd = *d;
        dd.gpu = m->gpu[i] = gpus[i];
        dd.cancel = NULL; /* a unit is finished whole (caustic_cancel stops between passes) */
        char why[512];
        m->ib[i] = m->inner->create(&dd, why, sizeof why);
        if (!m->ib[i]) {
            snprintf(err, errlen, "GPU %d: %s", gpus[i], why);
            multi_free(m);
            return NULL;
        }
        if (m->bidir && film_host_alloc(&m->w[i].scratch, d->width, d->height, 0)) {
            snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
            multi_free(m);
            return NULL;
        }
    }
    for (int i = 0; i < n; ++i) {
        m->w[i].m = m;
        m->w[i].index = i;
        if (pthread_create(&m->w[i].thread, NULL, worker_main, &m->w[i]) != 0) {
            snprintf(err, errlen, "cannot start a thread per GPU");
            multi_free(m);
            return NULL;
        }
        m->started++;
    }
    return m;
}

/* Runs the units set up in m on every device's thread; returns when all are done. */
static int run_units(multi *m, backend_stats *st, char *err, size_t errlen) {
    pthread_mutex_lock(&m->lock);
    m->next = m->applied = 0;
    m->idle = m->failed = 0;
    memset(&m->st, 0, sizeof m->st);
    m->generation++;
    pthread_cond_broadcast(&m->wake);
    while (m->idle < m->n) pthread_cond_wait(&m->idle_cv, &m->lock);
    int rc = m->failed ? -1 : 0;
    if (rc) snprintf(err, errlen, "%s", m->err);
    *st = m->st;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* Path tracing over target (pixel (0, 0) = the image's (x0, y0)) in bands of rows: `per_device`
 * bands per device, so that a device that finishes early takes another. */
static int pt_units(multi *m, const kpass *pass, const kfilm *target, int x0, int y0, int per_device, backend_stats *st,
                    char *err, size_t errlen) {
    int bands = per_device * m->n;
    if (bands > target->height) bands = target->height;
    m->pass = *pass;
    m->target = *target;
    m->x0 = x0;
    m->y0 = y0;
    m->rows = (target->height + bands - 1) / bands;
    m->njobs = (size_t)((target->height + m->rows - 1) / m->rows);
    return run_units(m, st, err, errlen);
}

static int multi_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    multi *m = p;
    memset(st, 0, sizeof *st);
    if (!m->bidir) return pt_units(m, pass, &m->film, 0, 0, 4, st, err, errlen);
    /* every pixel holds one sample per iteration: continue from the iterations the film holds */
    uint32_t first = pass->sample_begin, held = m->film.count[0];
    if (held > first) first = held;
    if (first >= pass->sample_end) return 0;
    /* two blocks per device: few image transfers, and a device that finishes early takes more */
    m->pass = *pass;
    m->first = first;
    m->end = pass->sample_end;
    m->block = (m->end - first + 2 * (uint32_t)m->n - 1) / (2 * (uint32_t)m->n);
    m->njobs = (m->end - first + m->block - 1) / m->block;
    m->pending = calloc(m->njobs, sizeof(double *));
    if (!m->pending) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = run_units(m, st, err, errlen);
    for (size_t i = 0; i < m->njobs; ++i) free(m->pending[i]);
    free(m->pending);
    m->pending = NULL;
    return rc;
}

/* A distributed render's unit: the tile split between the devices, a band each. */
static int multi_pass_tile(void *p, const kpass *pass, const kfilm *tile, int x0, int y0, backend_stats *st, char *err,
                           size_t errlen) {
    multi *m = p;
    memset(st, 0, sizeof *st);
    if (m->bidir) {
        snprintf(err, errlen, "tile passes are path tracing only");
        return -1;
    }
    return pt_units(m, pass, tile, x0, y0, 1, st, err, errlen);
}

static int multi_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(dst, &((const multi *)p)->film);
    return 0;
}

static int multi_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(&((multi *)p)->film, src);
    return 0;
}

static int multi_clear(void *p, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_clear(&((multi *)p)->film);
    return 0;
}

static int multi_threads(const void *p) {
    (void)p;
    return 0;
}

/* Path tracing continues the devices' float sums: cut passes as one GPU does (cuts_by_count). */
static int multi_cuts_by_count(const void *p) {
    const multi *m = p;
    return !m->bidir && m->inner->cuts_by_count && m->inner->cuts_by_count(m->ib[0]);
}

/* Bidirectional passes of about two seconds (pass_seconds, as the distributed layer's): each
 * unit's transfers (a block's whole film) cost little beside its rendering; path tracing's passes
 * are cut by count, as long. */
const backend_ops backend_multi = {
    .name = "cuda-multi",
    .device = "cuda",
    .supports = multi_supports,
    .create = multi_create,
    .pass = multi_pass,
    .read_film = multi_read_film,
    .write_film = multi_write_film,
    .threads = multi_threads,
    .free = multi_free,
    .pass_tile = multi_pass_tile,
    .pass_seconds = 2.0,
    .clear = multi_clear,
    .cuts_by_count = multi_cuts_by_count,
};
