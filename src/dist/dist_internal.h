/* What the distributed layer's files share (dist_mpi.c: the layer and the ranks' runners;
 * dist_queue.c: rank 0's unit queue; dist_transport.c: messages and polled sends and receives;
 * dist_recovery.c: joining and leaving the job, and the deadlines on peers). Not installed. */
#ifndef CAUSTIC_DIST_INTERNAL_H
#define CAUSTIC_DIST_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "api/backend.h"
#include "api/film_host.h"
#include "dist/dist.h"

enum { TAG_HELLO = 1, TAG_UNIT, TAG_RESULT, TAG_STOP };

typedef struct dist_globals {
    int started, rank, size;
    int failed;  /* a pass (rank 0) or serving units failed: the job ends (caustic_dist_stop) */
    int stopped; /* interrupted: rank 0 stopped its pass, or a worker stopped serving; the job
                    ends normally (MPI_Finalize), without waiting for units still out */
    volatile sig_atomic_t *interrupt;
} dist_globals;
extern dist_globals dist_g;

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

/* ---- dist_transport.c ---- */
size_t dist_tile_bytes(int w, int h);
kfilm dist_tile_view(unsigned char *p, int w, int h);
void dist_tile_copy(const kfilm *film, const kfilm *tile, int x0, int y0, int to_tile);
void dist_nap_for(long ns);
void dist_nap(void);
int dist_interrupted(void);
int dist_send_until(const void *buf, size_t n, int dest, int tag, double seconds, char *err, size_t errlen);
int dist_recv_probed(const MPI_Status *st, unsigned char **buf, size_t *cap, size_t *len, char *err, size_t errlen);

/* ---- dist_recovery.c ---- */
/* A rank's deadline on rank 0 (seconds) where CAUSTIC_DIST_TIMEOUT is not set: rank 0 is silent
 * while it loads the scene, writes a checkpoint or the image; two minutes covers that for large
 * renders and ends a job whose rank 0 is lost within minutes of its allocation. */
#define DIST_PEER_TIMEOUT_DEFAULT 120.0
double dist_unit_timeout(const dist *b);
double dist_peer_timeout(void);

/* ---- dist_mpi.c: the ranks' runners ---- */
slot *dist_runner_free_slot(runner *q);
void dist_runner_post(runner *q, slot *s);
slot *dist_runner_done(runner *q);
void dist_runner_retire(runner *q, slot *s, int state);
int dist_runner_busy(runner *q);

/* ---- dist_queue.c: rank 0 ---- */
int dist_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen);

#endif
