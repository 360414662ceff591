/* Distributed rendering over MPI: a layer in the backend table (backend_dist) over the entries
 * after it. Rank 0 coordinates: its film receives every sample; the other ranks each run the
 * local backend that the same options pick (CPU pool, GPU) and render the work units rank 0 hands
 * out to whichever rank has room, so fast and slow ranks finish together.
 *
 * Overlap. Every rank renders on a thread of its own (a runner, which makes no MPI calls:
 * MPI_THREAD_FUNNELED) while its main thread talks to rank 0: rank 0 keeps up to AHEAD units
 * queued at each rank, so a rank starts its next unit the moment it finishes one, and its result
 * travels (MPI_Isend, polled) while it renders the next. A GPU rank's runner also overlaps its
 * units with each other (the backend's tile_begin/tile_end): the next tile is converted, uploaded
 * and launched before the previous one is read back, so the device does not idle between units;
 * rank 0 keeps one more unit queued there (AHEAD_MAX). Rank 0's main thread only coordinates;
 * its runner takes units from the same list. CAUSTIC_DIST_STATS=1 prints where the time went.
 *
 * Units and determinism. Path tracing: a unit is a rectangle of pixels and every sample the pass
 * still needs of them. It carries the rectangle's sums and counts from rank 0's film and comes back
 * with them continued, so every pixel still sums its samples in index order, exactly as one
 * process does (kernel_cpu.c's render_rect): the image is bit-identical to a single-process
 * render on CPUs, for any number of ranks and any split. A pass starts from a grid of tiles; a GPU
 * rank takes what is left of a tile whole, a CPU rank rows off its top, as many as it renders in
 * UNIT_SECONDS; no unit waits for another. A GPU's float tile would round where a unit ends, so
 * passes over GPUs are cut by count (backend.h).
 * Scheduling. Rank 0 measures each rank's rate and, per device kind, each tile's cost, and gives
 * a rank a unit only where its result is predicted back by the pass's predicted end, or where no
 * other rank would finish it sooner (next_unit): a slow rank beside fast ones renders what it is
 * predicted to finish in time and leaves the rest to them. A rank of unknown speed gets one small
 * unit (a row on a CPU) and nothing behind it until its rate is measured.
 * Bidirectional integrators: a unit is one iteration (the rank traces its own light paths and
 * builds its own merge grid; the radius and random streams follow the global iteration index,
 * vcm.h); it comes back as the iteration's image (floats, as the drivers add it) and rank 0 adds
 * iterations to its film in index order, as one process does: bit-identical again.
 *
 * Faults. Every wait polls (MPI_Iprobe, MPI_Test) with a deadline: a rank that does not answer
 * within the time-out (CAUSTIC_DIST_TIMEOUT seconds, default max(10, 8 x the slowest unit)) stops
 * the render with its rank named; the film keeps every unit that came back (the CLI then writes
 * the checkpoint and the image), and the interrupt flag (mpirun's SIGTERM when a rank died)
 * stops the wait at once. Errors return (MPI_ERRORS_RETURN), never abort. A resumed film tells
 * each pass what is done: a tile continues from its smallest count, iterations from the count.
 * Start-up is the exception: a rank lost before every rank has entered MPI_Init leaves the others
 * in Open MPI's collective start-up for good under --enable-recovery (no time-out, and no call of
 * ours runs until it returns), so a watchdog thread ends such a process after
 * CAUSTIC_MPI_INIT_TIMEOUT seconds (init_watchdog). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"
#include "util/log.h"
#include "util/timer.h"

/* The local backend: the first entry after this layer that renders d on the device asked for. */
static const backend_ops *dist_inner_ops(const backend_desc *d, char *err, size_t errlen) {
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

/* Whether the runner overlaps two units: path tracing on a backend that renders a tile in two
 * halves. */
static int dist_overlaps(const dist *b) { return !b->bidir && b->inner->tile_begin && b->inner->tile_end; }

static int dist_supports(const backend_desc *d, char *err, size_t errlen) {
    if (!dist_g.started || dist_g.size < 2) return 0;
    if (d->aov) {
        /* work units carry the radiance sums only */
        snprintf(err, errlen, "--aov (and --denoise's guides) are not supported in distributed renders yet");
        return -1;
    }
    return dist_inner_ops(d, err, errlen) ? 1 : -1;
}

/* A unit the runner has begun: its slot, its reply's header so far and body length, the tile slot
 * it renders in where it is still on the device (pending), when it began. */
typedef struct runner_unit {
    slot *s;
    result_msg res;
    size_t body;
    int pending, tile_slot;
    double t0;
} runner_unit;

static int dist_unit_begin(dist *b, runner_unit *u, int tile_slot);
static void dist_unit_end(dist *b, runner_unit *u);

/* The runner: unit after unit, as the main thread posts them. Where the local backend renders a
 * tile in two halves (tile_begin/tile_end: a GPU), it begins the next unit before it ends the
 * previous one, so the next tile's conversion and upload run while the previous renders and its
 * readback while the next renders: the device does not idle between units. Units end in the
 * order they began; a unit's rendering time is its end less the later of its beginning and the
 * previous unit's end (what it added to the device's busy time). */
static void *runner_main(void *p) {
    dist *b = p;
    runner *q = &b->run;
    runner_unit prev = {0}; /* begun and still on the device (prev.pending) */
    int tile_slot = 0;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->quit && q->begun == q->posted && !prev.pending) pthread_cond_wait(&q->wake, &q->lock);
        if (q->quit && !prev.pending) break;
        runner_unit cur = {0};
        if (!q->quit && q->begun < q->posted) cur.s = &q->s[q->begun++ % QUEUE];
        pthread_mutex_unlock(&q->lock);
        if (cur.s) {
            unit_msg u;
            memcpy(&u, cur.s->in, sizeof u);
            /* a device busy with the previous unit does not wait */
            cur.res.idle = u.first || q->last_end == 0.0 || prev.pending ? 0.0 : timer_now() - q->last_end;
            cur.t0 = timer_now();
            if (dist_unit_begin(b, &cur, tile_slot) == 0 && cur.pending) tile_slot ^= 1;
        }
        runner_unit *done[2] = {prev.pending ? &prev : NULL, cur.s && !cur.pending ? &cur : NULL};
        for (int i = 0; i < 2; ++i) {
            if (!done[i]) continue;
            dist_unit_end(b, done[i]);
            pthread_mutex_lock(&q->lock);
            done[i]->s->state = SLOT_DONE;
            q->rendered++;
            pthread_mutex_unlock(&q->lock);
        }
        prev = cur.pending ? cur : (runner_unit){0};
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* The slot for the next unit to post, or NULL while it is still in use. */
slot *dist_runner_free_slot(runner *q) {
    pthread_mutex_lock(&q->lock);
    slot *s = &q->s[q->posted % QUEUE];
    int free_ = s->state == SLOT_FREE && q->posted - q->retired < QUEUE;
    pthread_mutex_unlock(&q->lock);
    return free_ ? s : NULL;
}

/* Hands the runner the unit now in s (runner_free_slot's). */
void dist_runner_post(runner *q, slot *s) {
    pthread_mutex_lock(&q->lock);
    s->state = SLOT_QUEUED;
    q->posted++;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
}

/* The oldest finished unit not yet retired, or NULL. */
slot *dist_runner_done(runner *q) {
    pthread_mutex_lock(&q->lock);
    slot *s = q->retired < q->rendered ? &q->s[q->retired % QUEUE] : NULL;
    if (s && s->state != SLOT_DONE) s = NULL;
    pthread_mutex_unlock(&q->lock);
    return s;
}

/* Its result is taken (or on its way: SLOT_SENDING until the send completes). */
void dist_runner_retire(runner *q, slot *s, int state) {
    pthread_mutex_lock(&q->lock);
    s->state = state;
    q->retired++;
    pthread_mutex_unlock(&q->lock);
}

static void dist_runner_set(runner *q, slot *s, int state) {
    pthread_mutex_lock(&q->lock);
    s->state = state;
    pthread_mutex_unlock(&q->lock);
}

int dist_runner_busy(runner *q) {
    pthread_mutex_lock(&q->lock);
    int busy = q->rendered < q->posted;
    pthread_mutex_unlock(&q->lock);
    return busy;
}

static void dist_runner_stop(runner *q) {
    if (!q->started) return;
    pthread_mutex_lock(&q->lock);
    q->quit = 1;
    pthread_cond_broadcast(&q->wake);
    pthread_mutex_unlock(&q->lock);
    pthread_join(q->thread, NULL);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    q->started = 0;
    for (int i = 0; i < QUEUE; ++i) {
        free(q->s[i].in);
        free(q->s[i].out);
    }
}

static void dist_free(void *p) {
    dist *b = p;
    if (!b) return;
    if (dist_g.failed) {
        /* the job is ending (caustic_dist_stop): no goodbyes, and what sends may still read stays
         * allocated; the runner finishes its unit (a fraction of a second: the caller frees the
         * scene it renders next) and takes no other */
        dist_runner_stop(&b->run);
        return;
    }
    if (dist_g.rank == 0 && getenv("CAUSTIC_DIST_STATS") && b->units_remote) {
        double rank_time = b->wall * dist_g.size, busy = b->rendering + b->idle;
        lib_log("caustic: dist: %llu units on rank 0, %llu on the other ranks, %.1f MiB moved; rank 0's "
                "coordinator %.3f ms per remote unit (packing, sending, receiving, adding); ranks rendered "
                "%.3f s and waited %.3f s between units (%.3f ms per unit, %.2f %% of the ranks' time); the ends "
                "of passes %.2f %%",
                (unsigned long long)b->units_local, (unsigned long long)b->units_remote, b->bytes / 1048576.0,
                1e3 * b->coord / b->units_remote, b->rendering, b->idle,
                1e3 * b->idle / (double)(b->units_local + b->units_remote),
                rank_time > 0 ? 100.0 * b->idle / rank_time : 0.0,
                rank_time > 0 ? 100.0 * (rank_time - busy) / rank_time : 0.0);
        uint64_t all = 0;
        for (int r = 0; r < dist_g.size; ++r) all += b->rank_samples[r];
        char line[4096];
        size_t len = (size_t)snprintf(line, sizeof line, "caustic: dist: pixel samples by rank (%%):");
        for (int r = 0; r < dist_g.size && len < sizeof line; ++r)
            len +=
                (size_t)snprintf(line + len, sizeof line - len, " %.2f", all ? 100.0 * b->rank_samples[r] / all : 0.0);
        lib_log("%s; %llu backup copies of late units", line, (unsigned long long)b->backups);
    }
    if (dist_g.rank == 0 && !dist_g.failed && dist_g.stopped) {
        /* interrupted: each rank is told to stop (those that were signalled too have stopped
         * rendering), and results still on their way are taken and dropped, so that every send
         * completes and every rank leaves the job normally; until quiet for half a second (or the
         * deadline on the ranks) */
        char err[256];
        for (int r = 1; r < dist_g.size; ++r) dist_send_until(NULL, 0, r, TAG_STOP, 2.0, err, sizeof err);
        double quiet = timer_now(), t_end = quiet + dist_unit_timeout(b);
        for (double now = quiet; now < t_end && now - quiet < 0.5; now = timer_now()) {
            int flag = 0, pending = 0;
            MPI_Status ms;
            size_t len;
            for (int i = 0; b->sreq && i < dist_g.size * QUEUE; ++i) {
                int done = 1;
                if (b->sreq[i] != MPI_REQUEST_NULL && MPI_Test(&b->sreq[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    done = 1;
                pending |= !done;
            }
            if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) break;
            if (flag && dist_recv_probed(&ms, &b->buf, &b->cap, &len, err, sizeof err)) break;
            if (flag || pending) quiet = now;
            if (!flag) dist_nap();
        }
    } else if (dist_g.rank == 0 && !dist_g.failed) {
        /* the render is over: every unit came back, so its send is complete (MPI_Test frees its
         * request); the other ranks' caustic_render returns */
        char err[256];
        /* the results still due of copies that lost (a rank's send completes only when received);
         * a rank that does not send them is gone: the job ends (caustic_dist_stop), the image is
         * whole */
        for (int r = 1; r < dist_g.size && !dist_g.failed; ++r) {
            for (double t_end = timer_now() + dist_unit_timeout(b); b->stale[r] > 0 && timer_now() < t_end;) {
                int flag = 0;
                MPI_Status ms;
                size_t len;
                if (MPI_Iprobe(r, TAG_RESULT, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) break;
                if (!flag) {
                    dist_nap();
                    continue;
                }
                if (dist_recv_probed(&ms, &b->buf, &b->cap, &len, err, sizeof err)) break;
                b->stale[r]--;
            }
            if (b->stale[r] > 0) {
                lib_log("caustic: rank %d stopped answering at the end of the render", r);
                dist_g.failed = 1;
            }
        }
        for (int i = 0; !dist_g.failed && b->sreq && i < dist_g.size * QUEUE; ++i) {
            int done = 0;
            for (double t_end = timer_now() + 2.0; b->sreq[i] != MPI_REQUEST_NULL && !done && timer_now() < t_end;)
                if (MPI_Test(&b->sreq[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        }
        for (int r = 1; r < dist_g.size && !dist_g.failed; ++r)
            dist_send_until(NULL, 0, r, TAG_STOP, 2.0, err, sizeof err);
    }
    dist_runner_stop(&b->run);
    if (b->ib) b->inner->free(b->ib);
    film_host_free(&b->film);
    film_host_free(&b->scratch);
    if (b->sbuf)
        for (int i = 0; i < dist_g.size * QUEUE; ++i) free(b->sbuf[i]);
    free(b->sbuf);
    free(b->scap);
    free(b->sreq);
    free(b->nsent);
    free(b->buf);
    free(b->ready);
    free(b->gpu);
    free(b->overlap);
    free(b->rate);
    free(b->latency);
    free(b->rank_samples);
    free(b->stale);
    free(b->since);
    free(b->tile_cost);
    free(b);
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
    if ((dist_g.rank == 0 && film_host_alloc(&b->film, d->width, d->height, 0)) ||
        (b->bidir && film_host_alloc(&b->scratch, d->width, d->height, 0))) {
        snprintf(err, errlen, "out of memory for a %dx%d image", d->width, d->height);
        dist_free(b);
        return NULL;
    }
    b->inner = dist_inner_ops(d, err, errlen);
    /* work units are finished whole (the coordinator counts them as done): caustic_cancel stops
     * rank 0's render between passes of this layer, never inside the inner backend */
    backend_desc inner_desc = *d;
    inner_desc.cancel = NULL;
    if (b->inner) b->ib = b->inner->create(&inner_desc, err, errlen);
    if (!b->ib) {
        char why[512];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "rank %d: %s", dist_g.rank, why);
        dist_free(b);
        return NULL;
    }
    if (dist_g.rank == 0) {
        /* about eight tiles per rank: units long enough that messages cost little, enough of
         * them that ranks of different speeds finish a pass together; a GPU (rank 0's backend has
         * no CPU threads) needs larger tiles to fill it, four per rank. CAUSTIC_DIST_TILE sets
         * the side. */
        const char *e = getenv("CAUSTIC_DIST_TILE");
        int gpu = b->inner->threads(b->ib) == 0, t = gpu ? 1024 : 256, per_rank = gpu ? 4 : 8;
        while (t > 16 && (int64_t)((d->width + t - 1) / t) * ((d->height + t - 1) / t) < per_rank * dist_g.size) t /= 2;
        if (e && atoi(e) >= 8) t = atoi(e);
        b->tile = t;
        size_t n = (size_t)dist_g.size;
        b->ready = calloc(n, 1);
        b->gpu = calloc(n, 1);
        b->overlap = calloc(n, 1);
        b->rate = calloc(n, sizeof(double));
        b->latency = calloc(n, sizeof(double));
        b->rank_samples = calloc(n, sizeof(uint64_t));
        b->stale = calloc(n, sizeof(unsigned));
        b->since = calloc(n, sizeof(double));
        b->ntiles = ((d->width + t - 1) / t) * ((d->height + t - 1) / t);
        b->tile_cost = calloc(2 * (size_t)b->ntiles, sizeof(double));
        b->sbuf = calloc(n * QUEUE, sizeof *b->sbuf);
        b->scap = calloc(n * QUEUE, sizeof *b->scap);
        b->sreq = malloc(n * QUEUE * sizeof *b->sreq);
        b->nsent = calloc(n, sizeof *b->nsent);
        if (!b->ready || !b->gpu || !b->overlap || !b->rate || !b->latency || !b->rank_samples || !b->stale ||
            !b->since || !b->tile_cost || !b->sbuf || !b->scap || !b->sreq || !b->nsent) {
            snprintf(err, errlen, "out of memory");
            dist_free(b);
            return NULL;
        }
        for (size_t i = 0; i < n * QUEUE; ++i) b->sreq[i] = MPI_REQUEST_NULL;
        b->threads = b->inner->threads(b->ib);
        b->gpu[0] = (char)gpu;
        b->overlap[0] = (char)dist_overlaps(b);
    }
    runner *q = &b->run;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, NULL);
    if (pthread_create(&q->thread, NULL, runner_main, b) != 0) {
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->wake);
        snprintf(err, errlen, "cannot start a renderer thread");
        dist_free(b);
        return NULL;
    }
    q->started = 1;
    return b;
}

static int dist_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(dst, &((const dist *)p)->film);
    return 0;
}

static int dist_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    dist *b = p;
    if (dist_g.rank != 0) {
        snprintf(err, errlen, "only rank 0 holds the film");
        return -1;
    }
    film_host_copy(&b->film, src);
    return 0;
}

/* Where rank 0 renders on a GPU, passes are cut as one GPU cuts them (cuts_by_count). */
static int dist_cuts_by_count(const void *p) {
    const dist *b = p;
    return b->inner->cuts_by_count && b->inner->cuts_by_count(b->ib);
}

static int dist_threads(const void *p) { return ((const dist *)p)->threads; }

/* ---- every rank: one unit ------------------------------------------------------------------- */
/* Begins the unit in u->s->in: checks it, makes room for the reply in u->s->out and renders it,
 * through the backend's tile_begin in tile slot `tile_slot` where it overlaps (u->pending: the
 * tile is on the device until unit_end), else whole. A failed render or a malformed unit is a
 * reply with its status and message (unit_end writes it); -1 when the reply cannot be allocated
 * (u->s->outlen 0). */
static int dist_unit_begin(dist *b, runner_unit *u, int tile_slot) {
    slot *s = u->s;
    unit_msg m;
    memcpy(&m, s->in, sizeof m);
    u->res.id = m.id;
    u->tile_slot = tile_slot;
    u->body = b->bidir ? 3 * (size_t)b->width * b->height * sizeof(float) : dist_tile_bytes(m.w, m.h);
    int bad_shape = b->bidir ? (m.w != b->width || m.h != b->height) : s->inlen < sizeof m + u->body;
    if (bad_shape || m.x0 < 0 || m.y0 < 0 || m.x0 + m.w > b->width || m.y0 + m.h > b->height) {
        u->res.status = 1;
        snprintf(u->res.err, sizeof u->res.err, "a malformed work unit");
        u->body = 0;
    }
    if (sizeof(result_msg) + u->body > s->outcap) {
        unsigned char *q = realloc(s->out, sizeof(result_msg) + u->body);
        if (!q) {
            u->res.status = -1;
            return -1;
        }
        s->out = q;
        s->outcap = sizeof(result_msg) + u->body;
    }
    if (u->res.status) return 0;
    if (!b->bidir) {
        /* the tile's sums continue in place in the reply */
        memcpy(s->out + sizeof(result_msg), s->in + sizeof m, u->body);
        kfilm tv = dist_tile_view(s->out + sizeof(result_msg), m.w, m.h);
        if (dist_overlaps(b)) {
            u->res.status =
                b->inner->tile_begin(b->ib, tile_slot, &m.pass, &tv, m.x0, m.y0, u->res.err, sizeof u->res.err) != 0;
            u->pending = !u->res.status;
            return 0;
        }
        backend_stats st;
        memset(&st, 0, sizeof st);
        u->res.status = b->inner->pass_tile(b->ib, &m.pass, &tv, m.x0, m.y0, &st, u->res.err, sizeof u->res.err) != 0;
        u->res.rays = st.rays;
        u->res.shadow_rays = st.shadow_rays;
        u->res.bad = st.bad_samples;
        u->res.samples = st.samples;
        return 0;
    }
    /* the iteration alone: into an empty film, whose sums are then exactly its image */
    kfilm *f = &b->scratch;
    size_t n = (size_t)b->width * b->height;
    backend_stats st;
    memset(&st, 0, sizeof st);
    film_host_clear(f);
    u->res.status = b->inner->write_film(b->ib, f, u->res.err, sizeof u->res.err) ||
                    b->inner->pass(b->ib, &m.pass, &st, u->res.err, sizeof u->res.err) ||
                    b->inner->read_film(b->ib, f, u->res.err, sizeof u->res.err);
    float *c = (float *)(s->out + sizeof(result_msg));
    for (size_t i = 0; i < 3 * n; ++i) c[i] = (float)f->sum[i];
    u->res.rays = st.rays;
    u->res.shadow_rays = st.shadow_rays;
    u->res.bad = st.bad_samples;
    u->res.samples = st.samples;
    return 0;
}

/* Ends a begun unit (waits for its tile where pending) and writes its reply's header. */
static void dist_unit_end(dist *b, runner_unit *u) {
    slot *s = u->s;
    if (u->res.status < 0) { /* no room for a reply */
        s->outlen = 0;
        return;
    }
    if (u->pending) {
        backend_stats st;
        memset(&st, 0, sizeof st);
        u->res.status = b->inner->tile_end(b->ib, u->tile_slot, &st, u->res.err, sizeof u->res.err) != 0;
        u->pending = 0;
        u->res.rays = st.rays;
        u->res.shadow_rays = st.shadow_rays;
        u->res.bad = st.bad_samples;
        u->res.samples = st.samples;
    }
    const double now = timer_now(), last = b->run.last_end;
    u->res.seconds = now - (last > u->t0 ? last : u->t0);
    b->run.last_end = now;
    memcpy(s->out, &u->res, sizeof u->res);
    s->outlen = sizeof u->res + (u->res.status ? 0 : u->body);
}

/* ---- the other ranks -------------------------------------------------------------------------- */
/* The main thread talks to rank 0 while the runner renders: units are received into free slots
 * as they come (rank 0 keeps up to AHEAD queued here), results are sent as the runner finishes
 * them, and the sends complete while the next unit renders. */
static int dist_serve(void *p, char *err, size_t errlen) {
    dist *b = p;
    if (dist_g.rank == 0) return 1;
    runner *q = &b->run;
    hello_msg h = {b->inner->threads(b->ib), dist_overlaps(b)};
    /* rank 0 may be busy loading the scene: the hello waits for it as long as it takes */
    if (dist_send_until(&h, sizeof h, 0, TAG_HELLO, 3600.0, err, errlen)) return -1;
    /* stop: rank 0 said the render is over; stopping: interrupted (mpirun's SIGTERM on Ctrl-C),
     * no more units are rendered (those that come are dropped) and the rank leaves at rank 0's
     * stop, so that every rank ends the job normally. heard: rank 0's last sign of life (a message,
     * a result it took); silent for longer than the deadline on it (dist_peer_timeout) while this
     * rank has nothing to render, rank 0 is gone or stopped and this rank leaves the job */
    int rc = 0, stop = 0, stopping = 0;
    const double patience = dist_peer_timeout();
    double heard = timer_now();
    while (rc == 0) {
        int progress = 0, sending = 0;
        /* sends that completed free their slots; a finished unit's result goes out */
        for (int i = 0; i < QUEUE && rc == 0; ++i) {
            slot *s = &q->s[i];
            pthread_mutex_lock(&q->lock);
            int st = s->state;
            pthread_mutex_unlock(&q->lock);
            if (st != SLOT_SENDING) continue;
            int done = 0;
            if (MPI_Test(&s->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                snprintf(err, errlen, "rank %d: sending a result failed", dist_g.rank);
                rc = -1;
            } else if (done) {
                dist_runner_set(q, s, SLOT_FREE);
                progress = 1;
                heard = timer_now();
            } else {
                sending = 1;
            }
        }
        slot *s;
        while (rc == 0 && (s = dist_runner_done(q))) {
            if (s->outlen == 0) {
                snprintf(err, errlen, "rank %d: out of memory for a result", dist_g.rank);
                rc = -1;
                break;
            }
            if (MPI_Isend(s->out, (int)s->outlen, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD, &s->req) != MPI_SUCCESS) {
                snprintf(err, errlen, "rank %d: sending a result failed", dist_g.rank);
                rc = -1;
                break;
            }
            dist_runner_retire(q, s, SLOT_SENDING);
            sending = progress = 1;
        }
        if (rc) break;
        if (stop && !sending && !dist_runner_busy(q)) break;
        int flag = 0;
        MPI_Status ms;
        if (!stop && MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) {
            snprintf(err, errlen, "rank %d: MPI_Iprobe failed", dist_g.rank);
            rc = -1;
            break;
        }
        slot *in = flag && ms.MPI_TAG == TAG_UNIT && !stopping ? dist_runner_free_slot(q) : NULL;
        if (flag && (ms.MPI_TAG != TAG_UNIT || in || stopping)) {
            unsigned char **buf = in ? &in->in : &b->buf;
            size_t *cap = in ? &in->incap : &b->cap, len;
            if (dist_recv_probed(&ms, buf, cap, &len, err, errlen)) {
                rc = -1;
                break;
            }
            progress = 1;
            heard = timer_now();
            if (ms.MPI_TAG == TAG_STOP) stop = 1;
            if (in && len >= sizeof(unit_msg)) {
                in->inlen = len;
                dist_runner_post(q, in);
            }
        }
        if (progress) continue;
        if (dist_interrupted() && !stopping) {
            stopping = 1;
            dist_g.stopped = 1;
        }
        if ((sending || !dist_runner_busy(q)) && timer_now() - heard > patience) {
            snprintf(err, errlen,
                     "rank %d: rank 0 sent nothing for %.0f s: it is gone or stopped; leaving the job "
                     "(CAUSTIC_DIST_TIMEOUT=SECONDS sets this deadline)",
                     dist_g.rank, timer_now() - heard);
            rc = -1;
            break;
        }
        /* long naps only while the runner renders and no result is on its way */
        dist_nap_for(dist_runner_busy(q) && !sending ? 1000000 : 200000);
    }
    /* a failed worker says no goodbyes either (caustic_dist_stop(1) follows) */
    if (rc) dist_g.failed = 1;
    return rc;
}

const backend_ops backend_dist = {
    .name = "dist",
    .supports = dist_supports,
    .create = dist_create,
    .pass = dist_pass,
    .read_film = dist_read_film,
    .write_film = dist_write_film,
    .threads = dist_threads,
    .free = dist_free,
    .serve = dist_serve,
    .pass_seconds = 8.0,
    .cuts_by_count = dist_cuts_by_count,
};