/* Distributed rendering over MPI: a layer in the backend table (backend_dist) over the entries
 * after it. Rank 0 coordinates: its film receives every sample; the other ranks each run the
 * local backend that the same options pick (CPU pool, GPU) and render the work units rank 0 hands
 * out, one at a time, to whichever rank asks next, so fast and slow ranks finish together.
 *
 * Units and determinism. Path tracing: a unit is (tile, sample range). It carries the tile's
 * sums and counts from rank 0's film and comes back with them continued, so every pixel still sums
 * its samples in index order, exactly as one process does (kernel_cpu.c's render_rect): the image
 * is bit-identical to a single-process render on CPUs, for any number of ranks and any split.
 * Tiles of one pass are independent. A rank whose measured speed would take longer than
 * UNIT_SECONDS for a tile's whole range gets the first part of it only (a CPU rank beside GPU
 * ranks); the rest of the range follows once that part is back, so the sums stay in order.
 * Bidirectional integrators: a unit is one iteration (the rank traces its own light paths and
 * builds its own merge grid; the radius and random streams follow the global iteration index,
 * vcm.h); it comes back as the iteration's image (floats, as the drivers add it) and rank 0 adds
 * iterations to its film in index order, as one process does: bit-identical again.
 *
 * Faults. Every wait polls (MPI_Iprobe, MPI_Test) with a deadline: a rank that does not answer
 * within the time-out (CAUSTIC_DIST_TIMEOUT seconds, default max(10, 4 x the slowest unit)) stops
 * the render with its rank named; the film keeps every unit that came back (the CLI then writes
 * the checkpoint and the image), and the interrupt flag (mpirun's SIGTERM when a rank died)
 * stops the wait at once. Errors return (MPI_ERRORS_RETURN), never abort. A resumed film tells
 * each pass what is done: a tile continues from its smallest count, iterations from the count. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/backend.h"
#include "dist/dist.h"
#include "util/timer.h"

enum { TAG_HELLO = 1, TAG_UNIT, TAG_RESULT, TAG_STOP };

static struct {
    int started, rank, size;
    int failed; /* a pass failed: the job ends (caustic_dist_stop aborts it) */
    volatile sig_atomic_t *interrupt;
} g;

int caustic_dist_start(int *rank, int *size, volatile sig_atomic_t *interrupt, char *err, size_t errlen) {
    *rank = 0;
    *size = 1;
    if (!dist_launched()) return 0;
    if (!g.started) {
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            snprintf(err, errlen, "MPI_Init failed");
            return -1;
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &g.size);
        g.started = 1;
    }
    g.interrupt = interrupt;
    *rank = g.rank;
    *size = g.size;
    return 0;
}

void caustic_dist_stop(int failed) {
    if (!g.started) return;
    g.started = 0;
    if (!failed) MPI_Finalize();
    /* after a failure only rank 0, which has saved what was finished, ends the job (the others
     * may wait on a rank that is gone); a failed worker just exits: an abort from it could kill
     * rank 0 before it has written the checkpoint */
    else if (g.rank == 0 && g.size > 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- messages: a fixed header, then the unit's pixels ----------------------------------------- */
typedef struct unit_msg {
    kpass pass;               /* the sample range: [begin, end) of the tile, or one iteration */
    int32_t id, x0, y0, w, h; /* the tile (the whole image for an iteration) */
    int32_t pad;
} unit_msg;

typedef struct result_msg {
    int32_t id, status; /* status != 0: the rank failed, why in err */
    uint64_t rays, bad, samples;
    double seconds;
    char err[240];
} result_msg;

typedef struct hello_msg {
    int32_t threads, pad;
} hello_msg;

/* A tile's film packed after a header: sums, squared luminance (double), counts. */
static size_t tile_bytes(int w, int h) { return (size_t)w * h * (4 * sizeof(double) + sizeof(uint32_t)); }

static kfilm tile_view(unsigned char *p, int w, int h) {
    size_t n = (size_t)w * h;
    kfilm f;
    f.sum = (double *)p;
    f.lum2 = (double *)(p + 3 * n * sizeof(double));
    f.count = (uint32_t *)(p + 4 * n * sizeof(double));
    f.aov = NULL;
    f.width = w;
    f.height = h;
    return f;
}

/* Copies rows between a tile and the full film (to_tile: film -> tile). */
static void tile_copy(const kfilm *film, const kfilm *tile, int x0, int y0, int to_tile) {
    for (int y = 0; y < tile->height; ++y) {
        size_t f = (size_t)(y0 + y) * film->width + x0, t = (size_t)y * tile->width, n = (size_t)tile->width;
        if (to_tile) {
            memcpy(tile->sum + 3 * t, film->sum + 3 * f, 3 * n * sizeof(double));
            memcpy(tile->lum2 + t, film->lum2 + f, n * sizeof(double));
            memcpy(tile->count + t, film->count + f, n * sizeof(uint32_t));
        } else {
            memcpy(film->sum + 3 * f, tile->sum + 3 * t, 3 * n * sizeof(double));
            memcpy(film->lum2 + f, tile->lum2 + t, n * sizeof(double));
            memcpy(film->count + f, tile->count + t, n * sizeof(uint32_t));
        }
    }
}

static void nap(void) {
    struct timespec ts = {0, 200000}; /* 0.2 ms: polling, so that a waiting rank leaves its core to the renderers */
    nanosleep(&ts, NULL);
}

static int interrupted(void) { return g.interrupt && *g.interrupt; }

/* Sends with a deadline (a dead receiver must not hang the sender). */
static int send_until(const void *buf, size_t n, int dest, int tag, double seconds, char *err, size_t errlen) {
    MPI_Request rq;
    if (MPI_Isend(buf, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &rq) != MPI_SUCCESS) {
        snprintf(err, errlen, "rank %d: sending to rank %d failed", g.rank, dest);
        return -1;
    }
    double t_end = timer_now() + seconds;
    for (;;) {
        int done = 0;
        if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            snprintf(err, errlen, "rank %d: sending to rank %d failed", g.rank, dest);
            return -1;
        }
        if (done) return 0;
        if (timer_now() > t_end || interrupted()) {
            MPI_Cancel(&rq);
            if (interrupted())
                snprintf(err, errlen, "rank %d: interrupted while sending to rank %d", g.rank, dest);
            else
                snprintf(err, errlen, "rank %d did not take a message within %.0f s", dest, seconds);
            return -1;
        }
        nap();
    }
}

/* Receives the message that MPI_Iprobe found, into a buffer of its size (grown as needed). */
static int recv_probed(const MPI_Status *st, unsigned char **buf, size_t *cap, size_t *len, char *err, size_t errlen) {
    int n;
    MPI_Get_count(st, MPI_BYTE, &n);
    if ((size_t)n > *cap) {
        unsigned char *p = realloc(*buf, (size_t)n);
        if (!p) {
            snprintf(err, errlen, "out of memory for a %d-byte message", n);
            return -1;
        }
        *buf = p;
        *cap = (size_t)n;
    }
    if (MPI_Recv(*buf, n, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        snprintf(err, errlen, "receiving from rank %d failed", st->MPI_SOURCE);
        return -1;
    }
    *len = (size_t)n;
    return 0;
}

/* ---- the layer -------------------------------------------------------------------------------- */
/* ---- the layer -------------------------------------------------------------------------------- */
typedef struct dist {
    int bidir, width, height;
    const backend_ops *inner; /* the local backend (every rank renders) */
    void *ib;
    kfilm film;         /* rank 0: every sample */
    kfilm scratch;      /* bidirectional: an empty film for one iteration */
    unsigned char *buf; /* messages */
    size_t cap;
    int tile;       /* rank 0, path tracing: tile side */
    int threads;    /* rank 0: every rank's threads, summed */
    char *ready;    /* rank 0: per rank, said hello */
    double slowest; /* rank 0: the slowest unit so far (seconds), for the time-out */
    double *rate;   /* rank 0: per rank, samples per second in its last unit */
    /* rank 0, what the other ranks' units cost beyond rendering (CAUSTIC_DIST_STATS=1 prints it):
     * the round trip (packing, sending, receiving, unpacking) less the rank's rendering time */
    uint64_t units_local, units_remote, bytes;
    double overhead, rendering;
    /* rank 0 renders too, on a thread of its own that takes units from the same list (it makes
     * no MPI calls: MPI_THREAD_FUNNELED) */
    pthread_t local;
    int local_started, local_quit, local_has_unit, local_done;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    unsigned char *local_in, *local_out;
    size_t local_in_cap, local_out_cap, local_out_len;
} dist;

/* The local backend: the first entry after this layer that renders d on the device asked for. */
static const backend_ops *inner_ops(const backend_desc *d, char *err, size_t errlen) {
    const char *want = d->opt->device == CAUSTIC_DEVICE_CPU    ? "cpu"
                       : d->opt->device == CAUSTIC_DEVICE_CUDA ? "cuda"
                                                               : NULL;
    snprintf(err, errlen, "no backend renders --integrator %s", caustic_integrator_name(d->opt->integrator));
    for (int i = 0; backend_table[i]; ++i) {
        const backend_ops *ops = backend_table[i];
        if (ops == &backend_dist || !ops->device || (want && strcmp(ops->device, want))) continue;
        char why[512];
        int sup = ops->supports(d, why, sizeof why);
        if (sup == 0) continue;
        if (sup < 0) {
            snprintf(err, errlen, "%s", why);
            continue;
        }
        if (d->opt->integrator == CAUSTIC_INTEGRATOR_PT && !ops->pass_tile) {
            /* a backend without tile passes cannot take path tracing's units */
            snprintf(err, errlen, "distributed path tracing needs tile passes, which backend %s lacks", ops->name);
            if (want) return NULL;
            continue;
        }
        return ops;
    }
    return NULL;
}

static int dist_supports(const backend_desc *d, char *err, size_t errlen) {
    if (!g.started || g.size < 2) return 0;
    if (d->aov) {
        /* work units carry the radiance sums only */
        snprintf(err, errlen, "--aov (and --denoise's guides) are not supported in distributed renders yet");
        return -1;
    }
    return inner_ops(d, err, errlen) ? 1 : -1;
}

static void film_free(kfilm *f) {
    free(f->sum);
    free(f->lum2);
    free(f->count);
}

static int film_alloc(kfilm *f, int w, int h) {
    size_t n = (size_t)w * h;
    f->width = w;
    f->height = h;
    f->sum = calloc(3 * n, sizeof(double));
    f->lum2 = calloc(n, sizeof(double));
    f->count = calloc(n, sizeof(uint32_t));
    f->aov = NULL;
    return f->sum && f->lum2 && f->count ? 0 : -1;
}

static void dist_free(void *p) {
    dist *b = p;
    if (!b) return;
    if (g.failed && b->local_started) {
        /* the job is ending (MPI_Abort follows): no goodbyes, and rank 0's thread is not waited
         * for (it may be in the middle of a unit); what it uses stays allocated */
        pthread_mutex_lock(&b->lock);
        b->local_quit = 1;
        pthread_cond_broadcast(&b->wake);
        pthread_mutex_unlock(&b->lock);
        return;
    }
    if (g.rank == 0 && getenv("CAUSTIC_DIST_STATS") && b->units_remote)
        fprintf(stderr,
                "caustic: dist: %llu units on rank 0, %llu on the other ranks: %.1f MiB moved, overhead "
                "%.3f ms per unit (%.2f %% of their rendering time)\n",
                (unsigned long long)b->units_local, (unsigned long long)b->units_remote, b->bytes / 1048576.0,
                1e3 * b->overhead / b->units_remote, b->rendering > 0 ? 100.0 * b->overhead / b->rendering : 0.0);
    if (g.rank == 0 && !g.failed) {
        /* the render is over: the other ranks' caustic_render returns */
        char err[256];
        for (int r = 1; r < g.size; ++r) send_until(NULL, 0, r, TAG_STOP, 2.0, err, sizeof err);
    }
    if (b->local_started) {
        pthread_mutex_lock(&b->lock);
        b->local_quit = 1;
        pthread_cond_broadcast(&b->wake);
        pthread_mutex_unlock(&b->lock);
        pthread_join(b->local, NULL);
        pthread_mutex_destroy(&b->lock);
        pthread_cond_destroy(&b->wake);
    }
    if (b->ib) b->inner->free(b->ib);
    film_free(&b->film);
    film_free(&b->scratch);
    free(b->buf);
    free(b->ready);
    free(b->rate);
    free(b->local_in);
    free(b->local_out);
    free(b);
}

static int render_unit(dist *b, const unsigned char *in, size_t len, unsigned char **out, size_t *outcap,
                       size_t *outlen);

/* Rank 0's renderer thread: one unit at a time, as the coordinator posts them. */
static void *local_main(void *p) {
    dist *b = p;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->local_quit && !b->local_has_unit) pthread_cond_wait(&b->wake, &b->lock);
        if (b->local_quit) break;
        pthread_mutex_unlock(&b->lock);
        size_t outlen = 0;
        int rc = render_unit(b, b->local_in, b->local_in_cap, &b->local_out, &b->local_out_cap, &outlen);
        pthread_mutex_lock(&b->lock);
        b->local_out_len = rc ? 0 : outlen;
        b->local_has_unit = 0;
        b->local_done = 1;
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

static void *dist_create(const backend_desc *d, char *err, size_t errlen) {
    dist *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->bidir = d->opt->integrator != CAUSTIC_INTEGRATOR_PT;
    b->width = d->width;
    b->height = d->height;
    if ((g.rank == 0 && film_alloc(&b->film, d->width, d->height)) ||
        (b->bidir && film_alloc(&b->scratch, d->width, d->height))) {
        snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
        dist_free(b);
        return NULL;
    }
    b->inner = inner_ops(d, err, errlen);
    /* work units are finished whole (the coordinator counts them as done): caustic_cancel stops
     * rank 0's render between passes of this layer, never inside the inner backend */
    backend_desc inner_desc = *d;
    inner_desc.cancel = NULL;
    if (b->inner) b->ib = b->inner->create(&inner_desc, err, errlen);
    if (!b->ib) {
        char why[512];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "rank %d: %s", g.rank, why);
        dist_free(b);
        return NULL;
    }
    if (g.rank == 0) {
        /* about eight tiles per rank: units long enough that messages cost little, enough of
         * them that ranks of different speeds finish a pass together; a GPU (rank 0's backend has
         * no CPU threads) needs larger tiles to fill it, four per rank. CAUSTIC_DIST_TILE sets
         * the side. */
        const char *e = getenv("CAUSTIC_DIST_TILE");
        int gpu = b->inner->threads(b->ib) == 0, t = gpu ? 1024 : 256, per_rank = gpu ? 4 : 8;
        while (t > 16 && (int64_t)((d->width + t - 1) / t) * ((d->height + t - 1) / t) < per_rank * g.size) t /= 2;
        if (e && atoi(e) >= 8) t = atoi(e);
        b->tile = t;
        b->ready = calloc((size_t)g.size, 1);
        b->rate = calloc((size_t)g.size, sizeof(double));
        b->threads = b->inner->threads(b->ib);
        pthread_mutex_init(&b->lock, NULL);
        pthread_cond_init(&b->wake, NULL);
        if (!b->ready || !b->rate || pthread_create(&b->local, NULL, local_main, b) != 0) {
            pthread_mutex_destroy(&b->lock);
            pthread_cond_destroy(&b->wake);
            snprintf(err, errlen, "out of memory");
            dist_free(b);
            return NULL;
        }
        b->local_started = 1;
    }
    return b;
}

/* ---- rank 0 ----------------------------------------------------------------------------------- */
/* A tile and the samples of the pass it still needs, [begin, end); a unit in flight renders
 * [begin, cut). Bidirectional: one iteration. */
typedef struct job {
    int x0, y0, w, h;
    uint32_t begin, end, cut;
    int busy;
} job;

/* The longest a unit should take on the rank that gets it, at that rank's measured speed: the
 * slowest ranks then hold up the end of a pass for at most this long. */
#define UNIT_SECONDS 0.3

static double unit_timeout(const dist *b) {
    const char *e = getenv("CAUSTIC_DIST_TIMEOUT");
    if (e && atof(e) > 0.0) return atof(e);
    double t = 4.0 * b->slowest;
    return t > 10.0 ? t : 10.0;
}

/* The message for job k into *buf (grown as needed); its length. */
static size_t unit_write(const dist *b, const kpass *pass, const job *jobs, size_t k, unsigned char **buf,
                         size_t *cap) {
    const job *j = &jobs[k];
    size_t len = sizeof(unit_msg) + (b->bidir ? 0 : tile_bytes(j->w, j->h));
    if (len > *cap) {
        unsigned char *q = realloc(*buf, len);
        if (!q) return 0;
        *buf = q;
        *cap = len;
    }
    unit_msg u;
    memset(&u, 0, sizeof u);
    u.pass = *pass;
    u.pass.sample_begin = j->begin;
    u.pass.sample_end = j->cut;
    u.id = (int32_t)k;
    u.x0 = j->x0;
    u.y0 = j->y0;
    u.w = j->w;
    u.h = j->h;
    memcpy(*buf, &u, sizeof u);
    if (!b->bidir) {
        kfilm tv = tile_view(*buf + sizeof u, j->w, j->h);
        tile_copy(&b->film, &tv, j->x0, j->y0, 1);
    }
    return len;
}

typedef struct pass_state {
    job *jobs;
    size_t njobs, applied;
    double *rate;    /* per rank: samples per second (0 = not measured yet) */
    float **pending; /* bidirectional: iterations that came before their predecessors */
    int *holds;      /* per rank: the job it renders, or -1 */
} pass_state;

/* The next unit for rank r: the first tile that needs samples and has none in flight, cut to
 * what rank r renders in UNIT_SECONDS; its index, or -1. */
static int next_unit(const dist *b, pass_state *ps, int r) {
    for (size_t k = 0; k < ps->njobs; ++k) {
        job *j = &ps->jobs[k];
        if (j->busy || j->begin >= j->end) continue;
        uint32_t n = j->end - j->begin;
        if (!b->bidir && ps->rate[r] > 0.0) {
            double most = ps->rate[r] * UNIT_SECONDS / ((double)j->w * j->h);
            if (most < (double)n) n = most < 1.0 ? 1u : (uint32_t)most;
        }
        j->cut = j->begin + n;
        j->busy = 1;
        return (int)k;
    }
    return -1;
}

/* Takes a result (from rank r) into the film: 0 (*finished: the unit's job needs no more
 * samples), or -1 with err. */
static int take_result(dist *b, pass_state *ps, int r, const unsigned char *msg, size_t len, backend_stats *st,
                       int *finished, char *err, size_t errlen) {
    result_msg res;
    if (len < sizeof res) {
        snprintf(err, errlen, "rank %d sent a short result (%zu bytes)", r, len);
        return -1;
    }
    memcpy(&res, msg, sizeof res);
    if (res.status) {
        snprintf(err, errlen, "rank %d: %s", r, res.err);
        return -1;
    }
    if (res.id != ps->holds[r]) {
        snprintf(err, errlen, "rank %d returned unit %d, not %d", r, res.id, ps->holds[r]);
        return -1;
    }
    job *j = &ps->jobs[res.id];
    size_t npix = (size_t)b->width * b->height;
    size_t want = sizeof res + (b->bidir ? 3 * npix * sizeof(float) : tile_bytes(j->w, j->h));
    if (len != want) {
        snprintf(err, errlen, "rank %d returned %zu bytes, not %zu", r, len, want);
        return -1;
    }
    if (b->bidir) {
        ps->pending[res.id] = malloc(3 * npix * sizeof(float));
        if (!ps->pending[res.id]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(ps->pending[res.id], msg + sizeof res, 3 * npix * sizeof(float));
        /* iterations reach the film in index order, as in one process (film_add_iteration) */
        for (; ps->applied < ps->njobs && ps->pending[ps->applied]; ++ps->applied) {
            const float *c = ps->pending[ps->applied];
            for (size_t i = 0; i < npix; ++i)
                film_add_iteration(&b->film, i, v3(c[3 * i], c[3 * i + 1], c[3 * i + 2]), NULL);
            free(ps->pending[ps->applied]);
            ps->pending[ps->applied] = NULL;
        }
    } else {
        kfilm tv = tile_view((unsigned char *)msg + sizeof res, j->w, j->h);
        tile_copy(&b->film, &tv, j->x0, j->y0, 0);
    }
    st->rays += res.rays;
    st->bad_samples += res.bad;
    st->samples += res.samples;
    if (res.seconds > b->slowest) b->slowest = res.seconds;
    if (res.seconds > 0.0 && res.samples > 0) ps->rate[r] = (double)res.samples / res.seconds;
    j->begin = j->cut;
    j->busy = 0;
    *finished = j->begin >= j->end;
    ps->holds[r] = -1;
    return 0;
}

static int dist_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    dist *b = p;
    memset(st, 0, sizeof *st);
    const kfilm *f = &b->film;
    /* after a pass that stopped early rank 0's thread may still render a unit: it touches only
     * its own buffers, so the caller could write the checkpoint at once; its result is dropped */
    pthread_mutex_lock(&b->lock);
    while (b->local_has_unit) {
        pthread_mutex_unlock(&b->lock);
        nap();
        pthread_mutex_lock(&b->lock);
    }
    b->local_done = 0;
    pthread_mutex_unlock(&b->lock);
    /* this pass's units: what the film does not hold yet */
    job *jobs = NULL;
    size_t njobs = 0;
    if (b->bidir) {
        uint32_t first = f->count[0] > pass->sample_begin ? f->count[0] : pass->sample_begin;
        jobs = calloc(first < pass->sample_end ? pass->sample_end - first : 1, sizeof *jobs);
        for (uint32_t i = first; jobs && i < pass->sample_end; ++i) {
            job j = {0, 0, b->width, b->height, i, i + 1, i + 1, 0};
            jobs[njobs++] = j;
        }
    } else {
        int t = b->tile, tx = (b->width + t - 1) / t, ty = (b->height + t - 1) / t;
        jobs = calloc((size_t)tx * ty, sizeof *jobs);
        for (int k = 0; jobs && k < tx * ty; ++k) {
            job j;
            j.x0 = (k % tx) * t;
            j.y0 = (k / tx) * t;
            j.w = j.x0 + t < b->width ? t : b->width - j.x0;
            j.h = j.y0 + t < b->height ? t : b->height - j.y0;
            /* a tile continues from its smallest count (pixels that hold more skip ahead,
             * pixels that adaptive sampling stopped stay stopped) */
            uint32_t least = UINT32_MAX;
            for (int y = j.y0; y < j.y0 + j.h; ++y)
                for (int x = j.x0; x < j.x0 + j.w; ++x) {
                    uint32_t c = f->count[(size_t)y * b->width + x];
                    least = c < least ? c : least;
                }
            j.begin = least > pass->sample_begin ? least : pass->sample_begin;
            j.end = j.cut = pass->sample_end;
            j.busy = 0;
            if (j.begin < j.end) jobs[njobs++] = j;
        }
    }
    pass_state ps;
    ps.jobs = jobs;
    ps.njobs = njobs;
    ps.applied = 0;
    ps.pending = b->bidir ? calloc(njobs ? njobs : 1, sizeof(float *)) : NULL;
    ps.holds = malloc((size_t)g.size * sizeof(int));
    ps.rate = b->rate;
    double *since = malloc((size_t)g.size * sizeof(double));
    size_t done = 0;
    int rc = 0;
    if (!jobs || !ps.holds || !since || (b->bidir && !ps.pending)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (int r = 0; rc == 0 && r < g.size; ++r) ps.holds[r] = -1;
    while (rc == 0 && done < njobs) {
        /* rank 0's own thread: take its result, give it the next unit */
        pthread_mutex_lock(&b->lock);
        int local_done = b->local_done, local_idle = !b->local_has_unit;
        pthread_mutex_unlock(&b->lock);
        if (local_done) {
            b->local_done = 0; /* the thread is idle: it touches nothing until it gets a unit */
            if (b->local_out_len == 0) {
                snprintf(err, errlen, "rank 0: out of memory for a result");
                rc = -1;
                break;
            }
            int finished = 0;
            if (take_result(b, &ps, 0, b->local_out, b->local_out_len, st, &finished, err, errlen)) {
                rc = -1;
                break;
            }
            b->units_local++;
            done += (size_t)finished;
            continue;
        }
        int k;
        if (local_idle && ps.holds[0] < 0 && (k = next_unit(b, &ps, 0)) >= 0) {
            size_t len = unit_write(b, pass, jobs, (size_t)k, &b->local_in, &b->local_in_cap);
            if (!len) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            ps.holds[0] = k;
            pthread_mutex_lock(&b->lock);
            b->local_has_unit = 1;
            pthread_cond_signal(&b->wake);
            pthread_mutex_unlock(&b->lock);
        }
        /* hand out units to the ranks that wait */
        for (int r = 1; r < g.size && rc == 0; ++r) {
            if (!b->ready[r] || ps.holds[r] >= 0 || (k = next_unit(b, &ps, r)) < 0) continue;
            since[r] = timer_now();
            size_t len = unit_write(b, pass, jobs, (size_t)k, &b->buf, &b->cap);
            if (!len) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            if (send_until(b->buf, len, r, TAG_UNIT, unit_timeout(b), err, errlen)) {
                rc = -1;
                break;
            }
            ps.holds[r] = k;
            b->bytes += len;
        }
        if (rc) break;
        /* take whatever came back */
        int flag = 0;
        MPI_Status ms;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) {
            snprintf(err, errlen, "MPI_Iprobe failed");
            rc = -1;
            break;
        }
        if (!flag) {
            if (interrupted()) {
                snprintf(err, errlen,
                         "interrupted while ranks rendered (a rank that ended makes mpirun stop the job: "
                         "its message names the rank)");
                rc = -1;
                break;
            }
            double now = timer_now(), limit = unit_timeout(b);
            for (int r = 1; r < g.size && !rc; ++r)
                if (ps.holds[r] >= 0 && now - since[r] > limit) {
                    snprintf(err, errlen,
                             "rank %d stopped answering (no result for %.0f s); stopping with the %zu "
                             "work units that came back",
                             r, now - since[r], done);
                    rc = -1;
                }
            if (!rc) nap();
            continue;
        }
        size_t len;
        if (recv_probed(&ms, &b->buf, &b->cap, &len, err, errlen)) {
            rc = -1;
            break;
        }
        int r = ms.MPI_SOURCE;
        if (ms.MPI_TAG == TAG_HELLO && len >= sizeof(hello_msg)) {
            hello_msg h;
            memcpy(&h, b->buf, sizeof h);
            b->ready[r] = 1;
            b->threads += h.threads;
            continue;
        }
        if (ms.MPI_TAG != TAG_RESULT) {
            snprintf(err, errlen, "rank %d sent an unexpected message (tag %d, %zu bytes)", r, ms.MPI_TAG, len);
            rc = -1;
            break;
        }
        result_msg res;
        memset(&res, 0, sizeof res);
        if (len >= sizeof res) memcpy(&res, b->buf, sizeof res);
        int finished = 0;
        if (take_result(b, &ps, r, b->buf, len, st, &finished, err, errlen)) {
            rc = -1;
            break;
        }
        b->units_remote++;
        b->bytes += len;
        b->overhead += timer_now() - since[r] - res.seconds;
        b->rendering += res.seconds;
        done += (size_t)finished;
    }
    if (rc) g.failed = 1;
    if (ps.pending) {
        for (size_t i = 0; i < njobs; ++i) free(ps.pending[i]);
        free(ps.pending);
    }
    free(ps.holds);
    free(since);
    free(jobs);
    return rc;
}

static int dist_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    const dist *b = p;
    size_t n = (size_t)b->width * b->height;
    memcpy(dst->sum, b->film.sum, 3 * n * sizeof(double));
    memcpy(dst->lum2, b->film.lum2, n * sizeof(double));
    memcpy(dst->count, b->film.count, n * sizeof(uint32_t));
    return 0;
}

static int dist_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    dist *b = p;
    if (g.rank != 0) {
        snprintf(err, errlen, "only rank 0 holds the film");
        return -1;
    }
    size_t n = (size_t)b->width * b->height;
    memcpy(b->film.sum, src->sum, 3 * n * sizeof(double));
    memcpy(b->film.lum2, src->lum2, n * sizeof(double));
    memcpy(b->film.count, src->count, n * sizeof(uint32_t));
    return 0;
}

static int dist_threads(const void *p) { return ((const dist *)p)->threads; }

/* ---- every rank: one unit ------------------------------------------------------------------- */
/* Renders the unit in `in` (len bytes) into the reply *out (grown as needed): 0, or -1 when the
 * reply cannot be allocated (a failed render is a reply with its status and message). */
static int render_unit(dist *b, const unsigned char *in, size_t len, unsigned char **out, size_t *outcap,
                       size_t *outlen) {
    unit_msg u;
    result_msg res;
    memset(&res, 0, sizeof res);
    memcpy(&u, in, sizeof u);
    res.id = u.id;
    size_t body = b->bidir ? 3 * (size_t)b->width * b->height * sizeof(float) : tile_bytes(u.w, u.h);
    int bad_shape = b->bidir ? (u.w != b->width || u.h != b->height) : len < sizeof u + body;
    if (bad_shape || u.x0 < 0 || u.y0 < 0 || u.x0 + u.w > b->width || u.y0 + u.h > b->height) {
        res.status = 1;
        snprintf(res.err, sizeof res.err, "a malformed work unit");
        body = 0;
    }
    if (sizeof res + body > *outcap) {
        unsigned char *q = realloc(*out, sizeof res + body);
        if (!q) return -1;
        *out = q;
        *outcap = sizeof res + body;
    }
    double t0 = timer_now();
    backend_stats st;
    memset(&st, 0, sizeof st);
    if (!res.status && !b->bidir) {
        /* the tile's sums continue in place in the reply */
        memcpy(*out + sizeof res, in + sizeof u, body);
        kfilm tv = tile_view(*out + sizeof res, u.w, u.h);
        res.status = b->inner->pass_tile(b->ib, &u.pass, &tv, u.x0, u.y0, &st, res.err, sizeof res.err) != 0;
    } else if (!res.status) {
        /* the iteration alone: into an empty film, whose sums are then exactly its image */
        kfilm *s = &b->scratch;
        size_t n = (size_t)b->width * b->height;
        memset(s->sum, 0, 3 * n * sizeof(double));
        memset(s->lum2, 0, n * sizeof(double));
        memset(s->count, 0, n * sizeof(uint32_t));
        res.status = b->inner->write_film(b->ib, s, res.err, sizeof res.err) ||
                     b->inner->pass(b->ib, &u.pass, &st, res.err, sizeof res.err) ||
                     b->inner->read_film(b->ib, s, res.err, sizeof res.err);
        float *c = (float *)(*out + sizeof res);
        for (size_t i = 0; i < 3 * n; ++i) c[i] = (float)s->sum[i];
    }
    if (res.status) body = 0;
    res.rays = st.rays;
    res.bad = st.bad_samples;
    res.samples = st.samples;
    res.seconds = timer_now() - t0;
    memcpy(*out, &res, sizeof res);
    *outlen = sizeof res + body;
    return 0;
}

/* ---- the other ranks -------------------------------------------------------------------------- */
static int dist_serve(void *p, char *err, size_t errlen) {
    dist *b = p;
    if (g.rank == 0) return 1;
    hello_msg h = {b->inner->threads(b->ib), 0};
    /* rank 0 may be busy loading the scene: the hello waits for it as long as it takes */
    if (send_until(&h, sizeof h, 0, TAG_HELLO, 3600.0, err, errlen)) return -1;
    unsigned char *out = NULL;
    size_t outcap = 0, outlen = 0;
    int rc = 0;
    for (;;) {
        int flag = 0;
        MPI_Status ms;
        if (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) {
            snprintf(err, errlen, "rank %d: MPI_Iprobe failed", g.rank);
            rc = -1;
            break;
        }
        if (!flag) {
            if (interrupted()) {
                snprintf(err, errlen, "rank %d: interrupted", g.rank);
                rc = -1;
                break;
            }
            nap();
            continue;
        }
        size_t len;
        if (recv_probed(&ms, &b->buf, &b->cap, &len, err, errlen)) {
            rc = -1;
            break;
        }
        if (ms.MPI_TAG == TAG_STOP) break;
        if (ms.MPI_TAG != TAG_UNIT || len < sizeof(unit_msg)) continue;
        if (render_unit(b, b->buf, len, &out, &outcap, &outlen)) {
            snprintf(err, errlen, "rank %d: out of memory for a result", g.rank);
            rc = -1;
            break;
        }
        /* rank 0 polls for results; a generous deadline, since it may be writing a checkpoint */
        if (send_until(out, outlen, 0, TAG_RESULT, 600.0, err, errlen)) {
            rc = -1;
            break;
        }
    }
    free(out);
    return rc;
}

const backend_ops backend_dist = {
    "dist",       NULL,      dist_supports, dist_create, dist_pass, dist_read_film, dist_write_film, NULL,
    dist_threads, dist_free, NULL,          dist_serve,  2.0,       NULL,
};
