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
#include <mpi.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/film_host.h"
#include "dist/dist.h"
#include "util/timer.h"

enum { TAG_HELLO = 1, TAG_UNIT, TAG_RESULT, TAG_STOP };

static struct {
    int started, rank, size;
    int failed; /* a pass (rank 0) or serving units failed: the job ends (caustic_dist_stop) */
    volatile sig_atomic_t *interrupt;
} g;

/* The longest MPI_Init may take. Starting a job on a real cluster (the launcher reaching every
 * node, each rank loading its libraries from a shared file system, the wire-up of every pair)
 * takes seconds, a minute for thousands of ranks on a slow file system; five minutes leaves a
 * wide margin above that and costs a stuck job only minutes of its allocation. */
#define MPI_INIT_TIMEOUT_DEFAULT 300.0

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* on CLOCK_MONOTONIC: deaf to changes of the date */
    int done;            /* MPI_Init returned */
    double seconds;
} init_watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Waits for MPI_Init to return; ends the process when it has not within the limit. Nothing has
 * been written yet (the CLI only checks that its outputs can be written before), so nothing is
 * left half-written. */
static void *init_watchdog(void *arg) {
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double whole = floor(init_watch.seconds);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((init_watch.seconds - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&init_watch.lock);
    int rc = 0;
    while (!init_watch.done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&init_watch.wake, &init_watch.lock, &until);
    if (!init_watch.done) {
        /* the rank as the launcher states it (MPI cannot tell yet), else the process id */
        const char *e = getenv("OMPI_COMM_WORLD_RANK");
        if (!e) e = getenv("PMIX_RANK");
        char *tail = NULL;
        long r = e ? strtol(e, &tail, 10) : -1;
        char who[64];
        if (e && *e && !*tail && r >= 0)
            snprintf(who, sizeof who, "rank %ld", r);
        else
            snprintf(who, sizeof who, "process %ld", (long)getpid());
        fprintf(stderr,
                "caustic: %s: MPI_Init has not returned after %g s: a process of the job was probably lost while "
                "the job started; stopping (CAUSTIC_MPI_INIT_TIMEOUT=SECONDS changes the limit)\n",
                who, init_watch.seconds);
        _exit(1); /* a runtime failure; exit() would run handlers that may touch MPI's stuck start-up */
    }
    pthread_mutex_unlock(&init_watch.lock);
    return NULL;
}

/* MPI_Init under the watchdog, its limit CAUSTIC_MPI_INIT_TIMEOUT seconds. */
static int init_watched(char *err, size_t errlen) {
    const char *v = getenv("CAUSTIC_MPI_INIT_TIMEOUT");
    init_watch.seconds = MPI_INIT_TIMEOUT_DEFAULT;
    if (v && *v) {
        char *end;
        errno = 0;
        init_watch.seconds = strtod(v, &end);
        if (*end || errno || !(init_watch.seconds > 0.0 && init_watch.seconds <= 1e7)) {
            snprintf(err, errlen, "CAUSTIC_MPI_INIT_TIMEOUT='%s' is not a number of seconds in (0, 1e7]", v);
            return -1;
        }
    }
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (!rc) {
        rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        if (!rc) rc = pthread_cond_init(&init_watch.wake, &attr);
        pthread_condattr_destroy(&attr);
    }
    pthread_t watchdog;
    if (!rc && (rc = pthread_create(&watchdog, NULL, init_watchdog, NULL))) pthread_cond_destroy(&init_watch.wake);
    if (rc) {
        snprintf(err, errlen, "cannot start the MPI_Init watchdog: %s", strerror(rc));
        return -1;
    }
    int provided;
    rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    pthread_mutex_lock(&init_watch.lock);
    init_watch.done = 1;
    pthread_cond_signal(&init_watch.wake);
    pthread_mutex_unlock(&init_watch.lock);
    pthread_join(watchdog, NULL);
    pthread_cond_destroy(&init_watch.wake);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init failed");
        return -1;
    }
    return 0;
}

int caustic_dist_start(int *rank, int *size, volatile sig_atomic_t *interrupt, char *err, size_t errlen) {
    *rank = 0;
    *size = 1;
    if (!dist_launched()) return 0;
    if (!g.started) {
        if (init_watched(err, errlen)) return -1;
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
    if (!failed && !g.failed) MPI_Finalize();
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
    int32_t first;            /* the rank's first unit of the pass: its wait before it is no cost */
} unit_msg;

typedef struct result_msg {
    int32_t id, status; /* status != 0: the rank failed, why in err */
    uint64_t rays, shadow_rays, bad, samples;
    double seconds; /* rendering */
    double idle;    /* the runner's wait for this unit since its previous one (0 for a first) */
    char err[240];
} result_msg;

typedef struct hello_msg {
    int32_t threads;
    int32_t overlap; /* its runner overlaps two units (runner_main): keep one more queued there */
} hello_msg;

/* A tile's film packed after a header: sums, squared luminance (double), counts. */
static size_t tile_bytes(int w, int h) { return (size_t)w * h * (4 * sizeof(double) + sizeof(uint32_t)); }

static kfilm tile_view(unsigned char *p, int w, int h) {
    size_t n = (size_t)w * h;
    return (kfilm){
        .sum = (double *)p,
        .count = (uint32_t *)(p + 4 * n * sizeof(double)),
        .lum2 = (double *)(p + 3 * n * sizeof(double)),
        .width = w,
        .height = h,
    };
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

/* Polling waits sleep between polls, leaving the core to the renderers: 0.2 ms where a renderer
 * waits on this thread, 1 ms where it has work queued (the latency is then hidden). */
static void nap_for(long ns) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static void nap(void) { nap_for(200000); }

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
/* Units rank 0 keeps in flight at a rank (rendering or queued) while units are plentiful: AHEAD,
 * or AHEAD_MAX where the rank's runner overlaps two units (a GPU: the backend's tile_begin), so
 * that one waits behind the two on the device. */
#define AHEAD     2
#define AHEAD_MAX 3
/* A rank's unit buffers: those in flight there and one whose result is on its way. */
#define QUEUE     (AHEAD_MAX + 1)

enum { SLOT_FREE, SLOT_QUEUED, SLOT_DONE, SLOT_SENDING };

typedef struct slot {
    unsigned char *in, *out; /* the unit's message, its result */
    size_t incap, outcap, inlen, outlen;
    int state;
    MPI_Request req; /* SLOT_SENDING: the result's send (ranks other than 0) */
} slot;

/* The renderer thread of a rank: it renders the queued units of `s` in sequence order (unit i in
 * s[i % QUEUE]); the main thread posts units and retires results. */
typedef struct runner {
    pthread_t thread;
    int started, quit;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    slot s[QUEUE];
    unsigned posted, begun, rendered, retired; /* units given, begun, rendered, whose results were taken */
    double last_end;                           /* when the runner finished its previous unit */
} runner;

typedef struct dist {
    int bidir, width, height;
    const backend_ops *inner; /* the local backend (every rank renders) */
    void *ib;
    kfilm film;         /* rank 0: every sample */
    kfilm scratch;      /* bidirectional: an empty film for one iteration */
    unsigned char *buf; /* rank 0: a result; elsewhere: messages */
    size_t cap;
    runner run;
    int tile;       /* rank 0, path tracing: tile side */
    int threads;    /* rank 0: every rank's threads, summed */
    char *ready;    /* rank 0: per rank, said hello */
    char *gpu;      /* rank 0: per rank, renders on a GPU (no CPU threads): its units are never cut */
    char *overlap;  /* rank 0: per rank, its runner overlaps two units (AHEAD_MAX queued there) */
    double slowest; /* rank 0: the slowest unit so far (seconds), for the time-out */
    /* rank 0, the speed model (next_unit): per rank, its rate in work per second and the delay
     * between its rendering's end and its result's arrival; per device kind (CPU, GPU) and tile,
     * the cost of one pixel sample in work (an average pixel sample is about 1): a CPU pays far
     * more than a GPU for a mesh's tiles against the sky's, so each kind learns its own, and a
     * rank's rate is in its kind's work. Smoothed over units and passes. */
    double *rate, *latency, *tile_cost; /* tile_cost[kind * ntiles + tile], kind = gpu[r] */
    int ntiles;
    uint64_t *rank_samples; /* rank 0: per rank, the pixel samples it rendered (CAUSTIC_DIST_STATS) */
    /* rank 0: per rank, the results still due of earlier passes' units whose backup copy won
     * (backup_unit; dropped as they come); and its last sign of life while it holds units (a
     * result, or the unit that made it busy), for the time-out */
    unsigned *stale;
    double *since;
    /* rank 0: per remote rank, the units' messages and their sends (unit i of the rank in
     * [i % QUEUE]; a buffer is reused once its unit's result is back and its send completed) */
    unsigned char **sbuf;
    size_t *scap;
    MPI_Request *sreq;
    unsigned *nsent;
    /* rank 0, where the time goes (CAUSTIC_DIST_STATS=1 prints it) */
    uint64_t units_local, units_remote, bytes, backups;
    double rendering, idle, coord, wall;
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

/* Whether the runner overlaps two units: path tracing on a backend that renders a tile in two
 * halves. */
static int overlaps(const dist *b) { return !b->bidir && b->inner->tile_begin && b->inner->tile_end; }

static int dist_supports(const backend_desc *d, char *err, size_t errlen) {
    if (!g.started || g.size < 2) return 0;
    if (d->aov) {
        /* work units carry the radiance sums only */
        snprintf(err, errlen, "--aov (and --denoise's guides) are not supported in distributed renders yet");
        return -1;
    }
    return inner_ops(d, err, errlen) ? 1 : -1;
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

static int unit_begin(dist *b, runner_unit *u, int tile_slot);
static void unit_end(dist *b, runner_unit *u);

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
            if (unit_begin(b, &cur, tile_slot) == 0 && cur.pending) tile_slot ^= 1;
        }
        runner_unit *done[2] = {prev.pending ? &prev : NULL, cur.s && !cur.pending ? &cur : NULL};
        for (int i = 0; i < 2; ++i) {
            if (!done[i]) continue;
            unit_end(b, done[i]);
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
static slot *runner_free_slot(runner *q) {
    pthread_mutex_lock(&q->lock);
    slot *s = &q->s[q->posted % QUEUE];
    int free_ = s->state == SLOT_FREE && q->posted - q->retired < QUEUE;
    pthread_mutex_unlock(&q->lock);
    return free_ ? s : NULL;
}

/* Hands the runner the unit now in s (runner_free_slot's). */
static void runner_post(runner *q, slot *s) {
    pthread_mutex_lock(&q->lock);
    s->state = SLOT_QUEUED;
    q->posted++;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
}

/* The oldest finished unit not yet retired, or NULL. */
static slot *runner_done(runner *q) {
    pthread_mutex_lock(&q->lock);
    slot *s = q->retired < q->rendered ? &q->s[q->retired % QUEUE] : NULL;
    if (s && s->state != SLOT_DONE) s = NULL;
    pthread_mutex_unlock(&q->lock);
    return s;
}

/* Its result is taken (or on its way: SLOT_SENDING until the send completes). */
static void runner_retire(runner *q, slot *s, int state) {
    pthread_mutex_lock(&q->lock);
    s->state = state;
    q->retired++;
    pthread_mutex_unlock(&q->lock);
}

static void runner_set(runner *q, slot *s, int state) {
    pthread_mutex_lock(&q->lock);
    s->state = state;
    pthread_mutex_unlock(&q->lock);
}

static int runner_busy(runner *q) {
    pthread_mutex_lock(&q->lock);
    int busy = q->rendered < q->posted;
    pthread_mutex_unlock(&q->lock);
    return busy;
}

static void runner_stop(runner *q) {
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

static double unit_timeout(const dist *b);

static void dist_free(void *p) {
    dist *b = p;
    if (!b) return;
    if (g.failed) {
        /* the job is ending (caustic_dist_stop): no goodbyes, and what sends may still read stays
         * allocated; the runner finishes its unit (a fraction of a second: the caller frees the
         * scene it renders next) and takes no other */
        runner_stop(&b->run);
        return;
    }
    if (g.rank == 0 && getenv("CAUSTIC_DIST_STATS") && b->units_remote) {
        double rank_time = b->wall * g.size, busy = b->rendering + b->idle;
        fprintf(stderr,
                "caustic: dist: %llu units on rank 0, %llu on the other ranks, %.1f MiB moved; rank 0's "
                "coordinator %.3f ms per remote unit (packing, sending, receiving, adding); ranks rendered "
                "%.3f s and waited %.3f s between units (%.3f ms per unit, %.2f %% of the ranks' time); the ends "
                "of passes %.2f %%\n",
                (unsigned long long)b->units_local, (unsigned long long)b->units_remote, b->bytes / 1048576.0,
                1e3 * b->coord / b->units_remote, b->rendering, b->idle,
                1e3 * b->idle / (double)(b->units_local + b->units_remote),
                rank_time > 0 ? 100.0 * b->idle / rank_time : 0.0,
                rank_time > 0 ? 100.0 * (rank_time - busy) / rank_time : 0.0);
        uint64_t all = 0;
        for (int r = 0; r < g.size; ++r) all += b->rank_samples[r];
        fprintf(stderr, "caustic: dist: pixel samples by rank (%%):");
        for (int r = 0; r < g.size; ++r) fprintf(stderr, " %.2f", all ? 100.0 * b->rank_samples[r] / all : 0.0);
        fprintf(stderr, "; %llu backup copies of late units\n", (unsigned long long)b->backups);
    }
    if (g.rank == 0 && !g.failed) {
        /* the render is over: every unit came back, so its send is complete (MPI_Test frees its
         * request); the other ranks' caustic_render returns */
        char err[256];
        /* the results still due of copies that lost (a rank's send completes only when received);
         * a rank that does not send them is gone: the job ends (caustic_dist_stop), the image is
         * whole */
        for (int r = 1; r < g.size && !g.failed; ++r) {
            for (double t_end = timer_now() + unit_timeout(b); b->stale[r] > 0 && timer_now() < t_end;) {
                int flag = 0;
                MPI_Status ms;
                size_t len;
                if (MPI_Iprobe(r, TAG_RESULT, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) break;
                if (!flag) {
                    nap();
                    continue;
                }
                if (recv_probed(&ms, &b->buf, &b->cap, &len, err, sizeof err)) break;
                b->stale[r]--;
            }
            if (b->stale[r] > 0) {
                fprintf(stderr, "caustic: rank %d stopped answering at the end of the render\n", r);
                g.failed = 1;
            }
        }
        for (int i = 0; !g.failed && b->sreq && i < g.size * QUEUE; ++i) {
            int done = 0;
            for (double t_end = timer_now() + 2.0; b->sreq[i] != MPI_REQUEST_NULL && !done && timer_now() < t_end;)
                if (MPI_Test(&b->sreq[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        }
        for (int r = 1; r < g.size && !g.failed; ++r) send_until(NULL, 0, r, TAG_STOP, 2.0, err, sizeof err);
    }
    runner_stop(&b->run);
    if (b->ib) b->inner->free(b->ib);
    film_host_free(&b->film);
    film_host_free(&b->scratch);
    if (b->sbuf)
        for (int i = 0; i < g.size * QUEUE; ++i) free(b->sbuf[i]);
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
    if ((g.rank == 0 && film_host_alloc(&b->film, d->width, d->height, 0)) ||
        (b->bidir && film_host_alloc(&b->scratch, d->width, d->height, 0))) {
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
        size_t n = (size_t)g.size;
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
        b->overlap[0] = (char)overlaps(b);
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

/* ---- rank 0 ----------------------------------------------------------------------------------- */
/* What the pass still has to hand out: a rectangle of the image and the samples [begin, end) its
 * pixels need (units take rows off its top), or one iteration (bidirectional). */
typedef struct job {
    int x0, y0, w, h, tile; /* tile: its index in the grid, for its cost (path tracing) */
    uint32_t begin, end;
} job;

/* A unit given out: its job, its rectangle and samples; when it was given, when its result is
 * expected, and whether its rank was idle then (its round trip less its rendering is then the
 * rank's latency); whether a backup copy went to another rank (backup_unit), and whether a
 * result is in (the other copy's is then dropped). */
typedef struct unit {
    int job, x0, y0, w, h;
    uint32_t begin, end;
    double given, eta;
    int timed, backed, done;
} unit;

/* The longest a CPU rank's unit should take at its measured speed: the end of a pass waits for at
 * most this long (passes last pass_seconds, many units per rank). A unit's messages cost well
 * under a millisecond and are hidden behind the rendering of the next unit. */
#define UNIT_SECONDS 0.25

static double unit_timeout(const dist *b) {
    const char *e = getenv("CAUSTIC_DIST_TIMEOUT");
    if (e && atof(e) > 0.0) return atof(e);
    double t = 4.0 * AHEAD * b->slowest;
    return t > 10.0 ? t : 10.0;
}

/* The message for unit `id` into *buf (grown as needed); its length. */
static size_t unit_write(const dist *b, const kpass *pass, const unit *u, int id, int first, unsigned char **buf,
                         size_t *cap) {
    size_t len = sizeof(unit_msg) + (b->bidir ? 0 : tile_bytes(u->w, u->h));
    if (len > *cap) {
        unsigned char *q = realloc(*buf, len);
        if (!q) return 0;
        *buf = q;
        *cap = len;
    }
    unit_msg m = {
        .pass = *pass,
        .id = id,
        .x0 = u->x0,
        .y0 = u->y0,
        .w = u->w,
        .h = u->h,
        .first = first,
    };
    m.pass.sample_begin = u->begin;
    m.pass.sample_end = u->end;
    memcpy(*buf, &m, sizeof m);
    if (!b->bidir) {
        kfilm tv = tile_view(*buf + sizeof m, u->w, u->h);
        tile_copy(&b->film, &tv, u->x0, u->y0, 1);
    }
    return len;
}

typedef struct pass_state {
    job *jobs;
    size_t njobs, open; /* open: jobs with rows not handed out */
    unit *units;        /* every unit of the pass, in the order given */
    size_t nunits, units_cap, inflight, returned;
    size_t applied;       /* bidirectional: iterations added to the film */
    float **pending;      /* bidirectional: iterations that came before their predecessors */
    int *holds;           /* per rank: the units in flight there, oldest first (AHEAD_MAX each) */
    int *nholds;          /* per rank: how many */
    double *hold_seconds; /* per rank and hold: the unit's predicted rendering time */
    double *free_at;      /* per rank: when it is predicted to have rendered what it holds */
    char *given;          /* per rank: had a unit in this pass */
} pass_state;

/* The work of one pixel sample of a tile for a device kind (0 CPU, 1 GPU) in the speed model's
 * unit: an average pixel sample is about 1; a tile's cost is measured by the kind's units, 1 until
 * then (and for iterations). */
static double pixel_cost(const dist *b, int kind, int tile) {
    double c = b->bidir ? 0.0 : b->tile_cost[kind * b->ntiles + tile];
    return c > 0.0 ? c : 1.0;
}

/* The work of one row of job j's pixels over its samples, for a device kind. */
static double row_work(const dist *b, const job *j, int kind) {
    return pixel_cost(b, kind, j->tile) * (double)j->w * (double)(j->end - j->begin);
}

/* When the pass is predicted to end: no earlier than the ranks with a measured rate render what
 * they hold and the jobs left between them (each job's pixel samples over the ranks' summed
 * pixel samples per second on its tile, each kind at its own cost), nor than the last unit in
 * flight. */
static double pass_end(const dist *b, const pass_state *ps, double now) {
    double rates[2] = {0.0, 0.0}, held = 0.0, end = now;
    for (int r = 0; r < g.size; ++r) {
        rates[(int)b->gpu[r]] += b->rate[r];
        if (b->rate[r] > 0.0 && ps->free_at[r] > now) held += b->rate[r] * (ps->free_at[r] - now);
        for (int i = 0; i < ps->nholds[r]; ++i) {
            double eta = ps->units[ps->holds[r * AHEAD_MAX + i]].eta;
            end = eta > end ? eta : end;
        }
    }
    double t = now + held / (rates[0] + rates[1]);
    for (size_t k = 0; k < ps->njobs; ++k) {
        const job *j = &ps->jobs[k];
        if (j->h <= 0) continue;
        double per_s = 0.0; /* the ranks' pixel samples per second on this job's tile */
        for (int kind = 0; kind < 2; ++kind) per_s += rates[kind] / pixel_cost(b, kind, j->tile);
        t += (double)j->h * j->w * (j->end - j->begin) / per_s;
    }
    return t > end ? t : end;
}

/* The next unit for rank r: its index in ps->units, -1 where it should take none now, -2 when out
 * of memory. The job with the most work left goes first. A unit holds every sample the pass still
 * needs of its pixels (so no unit waits for another), and a CPU rank takes only some rows of the
 * job: what it renders in UNIT_SECONDS at its measured rate (as much work as one sample of the
 * whole job until the rate is measured). A GPU takes the job whole (its float tile would round
 * where a unit ends: its units follow the passes, which are cut alike by count).
 * A rank takes a unit only where its result is predicted back by the pass's predicted end (a CPU
 * rank's rows cut to fit), or where no other rank would finish it sooner: a slow rank beside fast
 * ones renders what it finishes in time and leaves the rest to them, so it never holds a pass up,
 * and ranks alike take units as they come. */
static int next_unit(const dist *b, pass_state *ps, int r) {
    const double now = timer_now(), rate = b->rate[r], lat = b->latency[r];
    const int kind = b->gpu[r], rows_cut = !b->bidir && !kind;
    const double start = ps->free_at[r] > now ? ps->free_at[r] : now;
    const double t_end = rate > 0.0 ? pass_end(b, ps, now) : 0.0;
    job *best = NULL;
    double best_left = 0.0;
    int best_rows = 0;
    for (size_t k = 0; k < ps->njobs; ++k) {
        job *j = &ps->jobs[k];
        if (j->h <= 0) continue;
        const double row = row_work(b, j, kind), left = row * j->h;
        if (best && left <= best_left) continue;
        int rows = j->h;
        if (rate <= 0.0) {
            /* its speed unknown, a CPU rank's first unit is one row (and nothing is queued behind
             * it: wants_unit), so that a slow rank cannot hold the first pass up */
            if (rows_cut) rows = 1;
        } else {
            if (rows_cut) {
                double most = rate * UNIT_SECONDS / row;
                if (most < rows) rows = most < 1.0 ? 1 : (int)most;
            }
            double fin = start + lat + rows * row / rate;
            if (fin > t_end && rows_cut) {
                /* no shorter than a quarter of a unit: at the end of a pass, ranks alike would
                 * otherwise cut ever shorter units towards the predicted end */
                double fit = (t_end - start - lat) * rate / row, least = rate * UNIT_SECONDS / 4.0 / row;
                if (fit >= 1.0 && fit >= least) {
                    rows = (int)fit < rows ? (int)fit : rows;
                    fin = start + lat + rows * row / rate;
                }
            }
            if (fin > t_end) {
                double alt = HUGE_VAL; /* the soonest another rank would finish the unit */
                for (int s = 0; s < g.size; ++s) {
                    if (s == r || b->rate[s] <= 0.0 || (s > 0 && !b->ready[s])) continue;
                    double t = (ps->free_at[s] > now ? ps->free_at[s] : now) + b->latency[s] +
                               rows * row_work(b, j, b->gpu[s]) / b->rate[s];
                    alt = t < alt ? t : alt;
                }
                if (fin > alt) continue;
            }
        }
        best = j;
        best_left = left;
        best_rows = rows;
    }
    if (!best) return -1;
    if (ps->nunits == ps->units_cap) {
        size_t cap = ps->units_cap ? 2 * ps->units_cap : 64;
        unit *u = realloc(ps->units, cap * sizeof *u);
        if (!u) return -2;
        ps->units = u;
        ps->units_cap = cap;
    }
    double seconds = rate > 0.0 ? best_rows * row_work(b, best, kind) / rate : 0.0;
    unit *u = &ps->units[ps->nunits];
    *u = (unit){
        .job = (int)(best - ps->jobs),
        .x0 = best->x0,
        .y0 = best->y0,
        .w = best->w,
        .h = best_rows,
        .begin = best->begin,
        .end = best->end,
        .given = now,
        .eta = start + lat + seconds,
        .timed = ps->nholds[r] == 0 && b->stale[r] == 0,
    };
    best->y0 += best_rows;
    best->h -= best_rows;
    if (best->h == 0) ps->open--;
    ps->inflight++;
    ps->hold_seconds[r * AHEAD_MAX + ps->nholds[r]] = seconds; /* the caller adds the hold */
    ps->free_at[r] = start + seconds;
    return (int)ps->nunits++;
}

/* Smoothing of the speed model: each measurement counts half. */
static double smooth(double old, double now) { return old > 0.0 ? 0.5 * (old + now) : now; }

/* Takes a result (from rank r) into the film: 0, or -1 with err. The result of a unit whose other
 * copy came first (backup_unit), in this pass or an earlier one, only frees its rank. */
static int take_result(dist *b, pass_state *ps, int r, const unsigned char *msg, size_t len, backend_stats *st,
                       char *err, size_t errlen) {
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
    if (b->stale[r] > 0) { /* an earlier pass's (results come in order) */
        b->stale[r]--;
        b->since[r] = timer_now();
        b->rendering += res.seconds;
        return 0;
    }
    int *h = &ps->holds[r * AHEAD_MAX];
    if (ps->nholds[r] == 0 || res.id != h[0]) {
        snprintf(err, errlen, "rank %d returned unit %d, not %d", r, res.id, ps->nholds[r] ? h[0] : -1);
        return -1;
    }
    unit *u = &ps->units[res.id];
    size_t npix = (size_t)b->width * b->height;
    size_t want = sizeof res + (b->bidir ? 3 * npix * sizeof(float) : tile_bytes(u->w, u->h));
    if (len != want) {
        snprintf(err, errlen, "rank %d returned %zu bytes, not %zu", r, len, want);
        return -1;
    }
    const int first = !u->done; /* else the other copy's result is in the film */
    if (first && b->bidir) {
        ps->pending[u->job] = malloc(3 * npix * sizeof(float));
        if (!ps->pending[u->job]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(ps->pending[u->job], msg + sizeof res, 3 * npix * sizeof(float));
        /* iterations reach the film in index order, as in one process (film_add_iteration) */
        for (; ps->applied < ps->njobs && ps->pending[ps->applied]; ++ps->applied) {
            const float *c = ps->pending[ps->applied];
            for (size_t i = 0; i < npix; ++i)
                film_add_iteration(&b->film, i, v3(c[3 * i], c[3 * i + 1], c[3 * i + 2]), NULL);
            free(ps->pending[ps->applied]);
            ps->pending[ps->applied] = NULL;
        }
    } else if (first) {
        kfilm tv = tile_view((unsigned char *)msg + sizeof res, u->w, u->h);
        tile_copy(&b->film, &tv, u->x0, u->y0, 0);
    }
    if (first) {
        st->rays += res.rays;
        st->shadow_rays += res.shadow_rays;
        st->bad_samples += res.bad;
        st->samples += res.samples;
        u->done = 1;
        ps->inflight--;
        ps->returned++;
    }
    b->rendering += res.seconds;
    b->idle += res.idle;
    if (res.seconds > b->slowest) b->slowest = res.seconds;
    /* the speed model: the tile's cost at the rank's rate so far, then the rank's rate at that cost */
    const job *j = &ps->jobs[u->job];
    const double now = timer_now(), pixel_samples = (double)(u->end - u->begin) * u->w * u->h;
    if (first) b->rank_samples[r] += (uint64_t)pixel_samples;
    if (res.seconds > 0.0 && pixel_samples > 0.0) {
        double *cost = b->bidir ? NULL : &b->tile_cost[b->gpu[r] * b->ntiles + j->tile];
        if (cost && b->rate[r] > 0.0) *cost = smooth(*cost, res.seconds * b->rate[r] / pixel_samples);
        b->rate[r] = smooth(b->rate[r], pixel_samples * pixel_cost(b, b->gpu[r], j->tile) / res.seconds);
    }
    /* (a backed-up unit's "given" is its first copy's) */
    if (u->timed && !u->backed && now - u->given > res.seconds)
        b->latency[r] = smooth(b->latency[r], now - u->given - res.seconds);
    double *hs = &ps->hold_seconds[r * AHEAD_MAX];
    memmove(h, h + 1, (AHEAD_MAX - 1) * sizeof *h);
    memmove(hs, hs + 1, (AHEAD_MAX - 1) * sizeof *hs);
    ps->nholds[r]--;
    /* what it still holds started when this unit ended, its latency ago */
    ps->free_at[r] = now;
    if (ps->nholds[r] > 0) ps->free_at[r] -= b->latency[r];
    for (int i = 0; i < ps->nholds[r]; ++i) ps->free_at[r] += hs[i];
    b->since[r] = now;
    return 0;
}

/* Whether rank r takes another unit now (next_unit then decides which, if any): an idle rank
 * always, and one that overlaps units a second (both render at once: no wait); one with more
 * work queued only while every rank can still find a job (at the end of a pass units go to idle
 * ranks), and never before its speed is measured (its first unit back). */
static int wants_unit(const dist *b, const pass_state *ps, int r) {
    const unsigned held = (unsigned)ps->nholds[r] + b->stale[r]; /* an earlier pass's too */
    if (held >= (unsigned)(b->overlap[r] ? AHEAD_MAX : AHEAD) || (r > 0 && !b->ready[r])) return 0;
    if (b->rate[r] <= 0.0 && held > 0) return 0;
    return held == 0 || (b->overlap[r] && held == 1) || ps->open > (size_t)g.size;
}

/* A backup copy for rank r, idle once every job of the pass is handed out: the unit in flight at
 * another rank that r is predicted to finish soonest before its holder does, by more than r's
 * latency (a slow rank's last rows of a pass, which a GPU renders in milliseconds; a unit queued
 * behind another). Its index, or -1. A unit overdue at its holder is taken to need a quarter of
 * its predicted time more. Both copies render the same samples from the same sums (the film keeps
 * a unit's pixels until a result comes back), so whichever comes first is the result (on CPUs the
 * other's bit for bit; between a GPU and a CPU within float rounding, as any of their units) and
 * the other is dropped: the pass ends with its fastest ranks, not with the slowest unit. */
static int backup_unit(const dist *b, pass_state *ps, int r) {
    const double now = timer_now(), rate = b->rate[r];
    if (rate <= 0.0 || ps->open > 0) return -1;
    int best = -1;
    double best_gain = 0.0, best_seconds = 0.0;
    for (int s = 0; s < g.size; ++s)
        for (int i = 0; s != r && i < ps->nholds[s]; ++i) {
            const int k = ps->holds[s * AHEAD_MAX + i];
            const unit *u = &ps->units[k];
            if (u->done || u->backed) continue;
            double held = u->eta > now ? u->eta : now + 0.25 * ps->hold_seconds[s * AHEAD_MAX + i];
            double seconds = (double)(u->end - u->begin) * u->w * u->h *
                             pixel_cost(b, b->gpu[r], ps->jobs[u->job].tile) / rate,
                   gain = held - (now + b->latency[r] + seconds);
            if (gain > b->latency[r] && gain > best_gain) {
                best = k;
                best_gain = gain;
                best_seconds = seconds;
            }
        }
    if (best < 0) return -1;
    ps->units[best].backed = 1;
    ps->hold_seconds[r * AHEAD_MAX + ps->nholds[r]] = best_seconds; /* the caller adds the hold */
    ps->free_at[r] = (ps->free_at[r] > now ? ps->free_at[r] : now) + best_seconds;
    return best;
}

/* The unit for rank r: a new one (next_unit), or a backup copy (backup_unit). */
static int pick_unit(const dist *b, pass_state *ps, int r, int backup) {
    return backup ? backup_unit(b, ps, r) : next_unit(b, ps, r);
}

/* Gives rank r (> 0) a unit: its message into the rank's next send buffer, sent without waiting
 * (the send completes while the rank renders). 1 when given, 0 when none (or the buffer is still
 * in use), -1 on error. */
static int give_remote(dist *b, const kpass *pass, pass_state *ps, int r, int backup, char *err, size_t errlen) {
    size_t i = (size_t)r * QUEUE + b->nsent[r] % QUEUE;
    int done = 1;
    if (b->sreq[i] != MPI_REQUEST_NULL && MPI_Test(&b->sreq[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        snprintf(err, errlen, "sending to rank %d failed", r);
        return -1;
    }
    if (!done) return 0;
    int k = pick_unit(b, ps, r, backup);
    if (k == -1) return 0;
    size_t len = k < 0 ? 0 : unit_write(b, pass, &ps->units[k], k, !ps->given[r], &b->sbuf[i], &b->scap[i]);
    if (!len) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (MPI_Isend(b->sbuf[i], (int)len, MPI_BYTE, r, TAG_UNIT, MPI_COMM_WORLD, &b->sreq[i]) != MPI_SUCCESS) {
        snprintf(err, errlen, "sending to rank %d failed", r);
        return -1;
    }
    b->nsent[r]++;
    if (ps->nholds[r] == 0 && b->stale[r] == 0) b->since[r] = timer_now();
    ps->holds[r * AHEAD_MAX + ps->nholds[r]++] = k;
    ps->given[r] = 1;
    b->bytes += len;
    return 1;
}

/* Gives rank 0's runner a unit. 1 when given, 0 when none (or its next slot is in use), -1 on
 * error. */
static int give_local(dist *b, const kpass *pass, pass_state *ps, int backup, char *err, size_t errlen) {
    slot *s = runner_free_slot(&b->run);
    if (!s) return 0;
    int k = pick_unit(b, ps, 0, backup);
    if (k == -1) return 0;
    s->inlen = k < 0 ? 0 : unit_write(b, pass, &ps->units[k], k, !ps->given[0], &s->in, &s->incap);
    if (!s->inlen) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ps->holds[ps->nholds[0]++] = k;
    ps->given[0] = 1;
    runner_post(&b->run, s);
    return 1;
}

static int dist_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    dist *b = p;
    memset(st, 0, sizeof *st);
    const double t_pass = timer_now();
    const kfilm *f = &b->film;
    /* this pass's jobs: what the film does not hold yet */
    job *jobs = NULL;
    size_t njobs = 0;
    if (b->bidir) {
        uint32_t first = f->count[0] > pass->sample_begin ? f->count[0] : pass->sample_begin;
        jobs = calloc(first < pass->sample_end ? pass->sample_end - first : 1, sizeof *jobs);
        for (uint32_t i = first; jobs && i < pass->sample_end; ++i)
            jobs[njobs++] = (job){.w = b->width, .h = b->height, .begin = i, .end = i + 1};
    } else {
        int t = b->tile, tx = (b->width + t - 1) / t, ty = (b->height + t - 1) / t;
        jobs = calloc((size_t)tx * ty, sizeof *jobs);
        for (int k = 0; jobs && k < tx * ty; ++k) {
            job j = {.x0 = (k % tx) * t, .y0 = (k / tx) * t, .tile = k};
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
            j.end = pass->sample_end;
            if (j.begin < j.end) jobs[njobs++] = j;
        }
    }
    size_t n = (size_t)g.size;
    pass_state ps = {
        .jobs = jobs,
        .njobs = njobs,
        .open = njobs,
        .pending = b->bidir ? calloc(njobs ? njobs : 1, sizeof(float *)) : NULL,
        .holds = malloc(n * AHEAD_MAX * sizeof(int)),
        .nholds = calloc(n, sizeof(int)),
        .hold_seconds = calloc(n * AHEAD_MAX, sizeof(double)),
        .free_at = calloc(n, sizeof(double)),
        .given = calloc(n, 1),
    };
    int rc = 0;
    if (!jobs || !ps.holds || !ps.nholds || !ps.hold_seconds || !ps.free_at || !ps.given || (b->bidir && !ps.pending)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    while (rc == 0 && (ps.open > 0 || ps.inflight > 0)) {
        int progress = 0;
        /* rank 0's runner: its results, then units to keep it busy */
        slot *s;
        while (rc == 0 && (s = runner_done(&b->run))) {
            if (s->outlen == 0) {
                snprintf(err, errlen, "rank 0: out of memory for a result");
                rc = -1;
            } else if (take_result(b, &ps, 0, s->out, s->outlen, st, err, errlen)) {
                rc = -1;
            }
            runner_retire(&b->run, s, SLOT_FREE);
            b->units_local++;
            progress = 1;
        }
        while (rc == 0 && wants_unit(b, &ps, 0)) {
            int given = give_local(b, pass, &ps, 0, err, errlen);
            if (given < 0) rc = -1;
            if (given <= 0) break;
        }
        /* the other ranks: first those that wait, then a unit ahead for each */
        for (int ahead = 0; ahead < 2 && rc == 0; ++ahead)
            for (int r = 1; r < g.size && rc == 0; ++r) {
                if (!wants_unit(b, &ps, r) || (ahead == 0) != (ps.nholds[r] == 0)) continue;
                double t0 = timer_now();
                int given = give_remote(b, pass, &ps, r, 0, err, errlen);
                if (given < 0) rc = -1;
                b->coord += timer_now() - t0;
                progress |= given > 0;
            }
        /* every job handed out: idle ranks take backup copies of units that are late elsewhere */
        for (int r = 0; r < g.size && rc == 0 && ps.open == 0 && ps.inflight > 0; ++r) {
            if (ps.nholds[r] > 0 || b->stale[r] > 0 || (r > 0 && !b->ready[r])) continue;
            double t0 = timer_now();
            int given =
                r == 0 ? give_local(b, pass, &ps, 1, err, errlen) : give_remote(b, pass, &ps, r, 1, err, errlen);
            if (given < 0) rc = -1;
            if (r > 0) b->coord += timer_now() - t0;
            if (given > 0) b->backups++;
            progress |= given > 0;
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
                if ((ps.nholds[r] > 0 || b->stale[r] > 0) && now - b->since[r] > limit) {
                    snprintf(err, errlen,
                             "rank %d stopped answering (no result for %.0f s); stopping with the %zu "
                             "work units that came back",
                             r, now - b->since[r], ps.returned);
                    rc = -1;
                }
            /* short naps while rank 0's runner waits for a unit, longer ones while it renders */
            if (!rc && !progress) nap_for(runner_busy(&b->run) ? 1000000 : 200000);
            continue;
        }
        double t0 = timer_now();
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
            b->gpu[r] = h.threads == 0;
            b->overlap[r] = h.overlap != 0;
            b->threads += h.threads;
            continue;
        }
        if (ms.MPI_TAG != TAG_RESULT) {
            snprintf(err, errlen, "rank %d sent an unexpected message (tag %d, %zu bytes)", r, ms.MPI_TAG, len);
            rc = -1;
            break;
        }
        if (take_result(b, &ps, r, b->buf, len, st, err, errlen)) {
            rc = -1;
            break;
        }
        b->coord += timer_now() - t0;
        b->units_remote++;
        b->bytes += len;
    }
    if (rc) g.failed = 1;
    /* what ranks still hold are copies whose other copy came first: their results are dropped */
    for (int r = 0; r < g.size && rc == 0; ++r) b->stale[r] += (unsigned)ps.nholds[r];
    b->wall += timer_now() - t_pass;
    if (ps.pending) {
        for (size_t i = 0; i < njobs; ++i) free(ps.pending[i]);
        free(ps.pending);
    }
    free(ps.units);
    free(ps.holds);
    free(ps.nholds);
    free(ps.hold_seconds);
    free(ps.free_at);
    free(ps.given);
    free(jobs);
    return rc;
}

static int dist_read_film(void *p, const kfilm *dst, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    film_host_copy(dst, &((const dist *)p)->film);
    return 0;
}

static int dist_write_film(void *p, const kfilm *src, char *err, size_t errlen) {
    dist *b = p;
    if (g.rank != 0) {
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
static int unit_begin(dist *b, runner_unit *u, int tile_slot) {
    slot *s = u->s;
    unit_msg m;
    memcpy(&m, s->in, sizeof m);
    u->res.id = m.id;
    u->tile_slot = tile_slot;
    u->body = b->bidir ? 3 * (size_t)b->width * b->height * sizeof(float) : tile_bytes(m.w, m.h);
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
        kfilm tv = tile_view(s->out + sizeof(result_msg), m.w, m.h);
        if (overlaps(b)) {
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
static void unit_end(dist *b, runner_unit *u) {
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
    if (g.rank == 0) return 1;
    runner *q = &b->run;
    hello_msg h = {b->inner->threads(b->ib), overlaps(b)};
    /* rank 0 may be busy loading the scene: the hello waits for it as long as it takes */
    if (send_until(&h, sizeof h, 0, TAG_HELLO, 3600.0, err, errlen)) return -1;
    int rc = 0, stop = 0;
    /* rank 0 polls for results; a generous deadline, since it may be writing a checkpoint */
    double send_deadline = 0.0;
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
                snprintf(err, errlen, "rank %d: sending a result failed", g.rank);
                rc = -1;
            } else if (done) {
                runner_set(q, s, SLOT_FREE);
                progress = 1;
            } else {
                sending = 1;
            }
        }
        slot *s;
        while (rc == 0 && (s = runner_done(q))) {
            if (s->outlen == 0) {
                snprintf(err, errlen, "rank %d: out of memory for a result", g.rank);
                rc = -1;
                break;
            }
            if (MPI_Isend(s->out, (int)s->outlen, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD, &s->req) != MPI_SUCCESS) {
                snprintf(err, errlen, "rank %d: sending a result failed", g.rank);
                rc = -1;
                break;
            }
            runner_retire(q, s, SLOT_SENDING);
            if (!sending) send_deadline = timer_now() + 600.0;
            sending = progress = 1;
        }
        if (rc) break;
        if (sending && timer_now() > send_deadline) {
            snprintf(err, errlen, "rank 0 did not take a result within 600 s");
            rc = -1;
            break;
        }
        if (stop && !sending && !runner_busy(q)) break;
        int flag = 0;
        MPI_Status ms;
        if (!stop && MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) {
            snprintf(err, errlen, "rank %d: MPI_Iprobe failed", g.rank);
            rc = -1;
            break;
        }
        slot *in = flag && ms.MPI_TAG == TAG_UNIT ? runner_free_slot(q) : NULL;
        if (flag && (ms.MPI_TAG != TAG_UNIT || in)) {
            unsigned char **buf = in ? &in->in : &b->buf;
            size_t *cap = in ? &in->incap : &b->cap, len;
            if (recv_probed(&ms, buf, cap, &len, err, errlen)) {
                rc = -1;
                break;
            }
            progress = 1;
            if (ms.MPI_TAG == TAG_STOP) stop = 1;
            if (in && len >= sizeof(unit_msg)) {
                in->inlen = len;
                runner_post(q, in);
            }
        }
        if (progress) continue;
        if (interrupted()) {
            snprintf(err, errlen, "rank %d: interrupted", g.rank);
            rc = -1;
            break;
        }
        /* long naps only while the runner renders and no result is on its way */
        nap_for(runner_busy(q) && !sending ? 1000000 : 200000);
    }
    /* a failed worker says no goodbyes either (caustic_dist_stop(1) follows) */
    if (rc) g.failed = 1;
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
