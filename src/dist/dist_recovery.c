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
    if (!dist_g.started) {
        if (init_watched(err, errlen)) return -1;
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

double dist_unit_timeout(const dist *b) {
    const char *e = getenv("CAUSTIC_DIST_TIMEOUT");
    if (e && atof(e) > 0.0) return atof(e);
    double t = 4.0 * AHEAD * b->slowest;
    return t > 10.0 ? t : 10.0;
}
