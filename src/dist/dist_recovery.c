/* Joining and leaving the job, and the deadlines each rank keeps on its peers (docs/architecture.md,
 * "Distributed rendering"). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist_internal.h"
#include "util/timer.h"

dist_globals dist_g;

/* The longest MPI_Init may take. Starting a job on a real cluster (the launcher reaching every
 * node, each rank loading its libraries from a shared file system, the wire-up of every pair)
 * takes seconds, a minute for thousands of ranks on a slow file system; five minutes leaves a
 * wide margin above that and costs a stuck job only minutes of its allocation. */
#define MPI_INIT_TIMEOUT_DEFAULT 300.0

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* on CLOCK_MONOTONIC: deaf to changes of the date */
    int done;            /* MPI_Init returned */
    int rc;              /* its status */
} init_call = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* MPI_Init on a thread of its own, so that the caller can stop waiting for it. The thread level
 * is MPI_THREAD_SERIALIZED: the caller's thread makes every later call (one at a time; the
 * ranks' runners make none), not the thread that initialised MPI. */
static void *init_thread(void *arg) {
    (void)arg;
    int provided;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    pthread_mutex_lock(&init_call.lock);
    init_call.done = 1;
    init_call.rc = rc;
    pthread_cond_signal(&init_call.wake);
    pthread_mutex_unlock(&init_call.lock);
    return NULL;
}

/* MPI_Init with a limit of CAUSTIC_MPI_INIT_TIMEOUT seconds: 0; -1 with err; -2 with err when it
 * has not returned in time (a process of the job lost while the job started: Open MPI's
 * collective start-up then waits for good under --enable-recovery). After -2 the start-up still
 * runs on its thread: the caller must end the process with _exit (exit's handlers may touch it).
 * Nothing has been written yet (the CLI only checks that its outputs can be written before). */
static int init_watched(char *err, size_t errlen) {
    const char *v = getenv("CAUSTIC_MPI_INIT_TIMEOUT");
    double seconds = MPI_INIT_TIMEOUT_DEFAULT;
    if (v && *v) {
        char *end;
        errno = 0;
        seconds = strtod(v, &end);
        if (*end || errno || !(seconds > 0.0 && seconds <= 1e7)) {
            snprintf(err, errlen, "CAUSTIC_MPI_INIT_TIMEOUT='%s' is not a number of seconds in (0, 1e7]", v);
            return -1;
        }
    }
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (!rc) {
        rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        if (!rc) rc = pthread_cond_init(&init_call.wake, &attr);
        pthread_condattr_destroy(&attr);
    }
    pthread_t thread;
    if (!rc && (rc = pthread_create(&thread, NULL, init_thread, NULL))) pthread_cond_destroy(&init_call.wake);
    if (rc) {
        snprintf(err, errlen, "cannot start MPI_Init's thread: %s", strerror(rc));
        return -1;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double whole = floor(seconds);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((seconds - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&init_call.lock);
    int w = 0;
    while (!init_call.done && w != ETIMEDOUT) w = pthread_cond_timedwait(&init_call.wake, &init_call.lock, &until);
    int done = init_call.done;
    pthread_mutex_unlock(&init_call.lock);
    if (!done) {
        pthread_detach(thread);
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
        snprintf(err, errlen,
                 "%s: MPI_Init has not returned after %g s: a process of the job was probably lost while the job "
                 "started; stopping (CAUSTIC_MPI_INIT_TIMEOUT=SECONDS changes the limit)",
                 who, seconds);
        return -2;
    }
    pthread_join(thread, NULL);
    pthread_cond_destroy(&init_call.wake);
    if (init_call.rc != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init failed");
        return -1;
    }
    return 0;
}

int caustic_dist_start(int *rank, int *size, volatile sig_atomic_t *interrupt, char *err, size_t errlen) {
    *rank = 0;
    *size = 1;
    if (!dist_launched()) return 0;
    if (!dist_g.started) {
        int rc = init_watched(err, errlen);
        if (rc) return rc;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &dist_g.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &dist_g.size);
        dist_g.started = 1;
    }
    dist_g.interrupt = interrupt;
    *rank = dist_g.rank;
    *size = dist_g.size;
    return 0;
}

void caustic_dist_stop(int failed) {
    if (!dist_g.started) return;
    dist_g.started = 0;
    if (!failed && !dist_g.failed) MPI_Finalize();
    /* after a failure only rank 0, which has saved what was finished, ends the job (the others
     * may wait on a rank that is gone); a failed worker just exits: an abort from it could kill
     * rank 0 before it has written the checkpoint */
    else if (dist_g.rank == 0 && dist_g.size > 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The deadline each rank keeps on its peers, CAUSTIC_DIST_TIMEOUT seconds where set (both
 * directions), else: rank 0 on a rank that holds work units, max(10 s, 8 x the slowest unit so
 * far); a rank on rank 0, DIST_PEER_TIMEOUT_DEFAULT (rank 0 also loads the scene, writes
 * checkpoints and the image between its messages). */
static double timeout_env(void) {
    const char *e = getenv("CAUSTIC_DIST_TIMEOUT");
    return e && atof(e) > 0.0 ? atof(e) : 0.0;
}

double dist_unit_timeout(const dist *b) {
    double e = timeout_env();
    if (e > 0.0) return e;
    double t = 4.0 * AHEAD * b->slowest;
    return t > 10.0 ? t : 10.0;
}

double dist_peer_timeout(void) {
    double e = timeout_env();
    return e > 0.0 ? e : DIST_PEER_TIMEOUT_DEFAULT;
}
