#define _POSIX_C_SOURCE 200809L
#include "msgmpi.h"

#include <time.h>

#include <limits.h>
#include <stdlib.h>

/* 0: plain blocking MPI calls (which busy-poll in Open MPI). >0: poll the request, sleeping
 * this many microseconds in between, so that a waiting rank leaves its core to the ranks
 * that compute (matters when ranks outnumber cores). */
static int idle_sleep_us = 0;

void cmsg_mpi_set_idle_sleep(int microseconds) { idle_sleep_us = microseconds > 0 ? microseconds : 0; }

static void nap(void) {
    struct timespec ts = {0, (long)idle_sleep_us * 1000L};
    nanosleep(&ts, NULL);
}

static int wait_request(MPI_Request *req) {
    if (idle_sleep_us == 0) return MPI_Wait(req, MPI_STATUS_IGNORE);
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        nap();
    }
}

static int ensure_cap(uint8_t **buf, size_t *cap, size_t need) {
    if (*cap >= need && *buf) return 0;
    uint8_t *p = realloc(*buf, need ? need : 1);
    if (!p) return -1;
    *buf = p;
    *cap = need;
    return 0;
}

int cmsg_mpi_send(const uint8_t *frame, size_t bytes, int dest, int tag, MPI_Comm comm) {
    if (bytes > INT_MAX) return MPI_ERR_COUNT; /* frames here are model-sized, far below 2 GiB */
    MPI_Request req;
    int rc = MPI_Isend(frame, (int)bytes, MPI_BYTE, dest, tag, comm, &req);
    return rc == MPI_SUCCESS ? wait_request(&req) : rc;
}

int cmsg_mpi_recv(uint8_t **buf, size_t *cap, size_t *bytes, int source, int tag, MPI_Comm comm,
                  int *from) {
    MPI_Status st;
    int rc, found = 0;
    if (idle_sleep_us == 0) {
        rc = MPI_Probe(source, tag, comm, &st);
    } else {
        while ((rc = MPI_Iprobe(source, tag, comm, &found, &st)) == MPI_SUCCESS && !found) nap();
    }
    if (rc != MPI_SUCCESS) return rc;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (ensure_cap(buf, cap, (size_t)count) != 0) return MPI_ERR_NO_MEM;
    rc = MPI_Recv(*buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
    *bytes = (size_t)count;
    if (from) *from = st.MPI_SOURCE;
    return rc;
}

int cmsg_mpi_bcast(uint8_t **buf, size_t *cap, size_t *bytes, int root, MPI_Comm comm) {
    unsigned long long n = *bytes;
    MPI_Request req;
    int rc = MPI_Ibcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm, &req);
    if (rc == MPI_SUCCESS) rc = wait_request(&req);
    if (rc != MPI_SUCCESS) return rc;
    if (n > INT_MAX) return MPI_ERR_COUNT;
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != root && ensure_cap(buf, cap, (size_t)n) != 0) return MPI_ERR_NO_MEM;
    *bytes = (size_t)n;
    rc = MPI_Ibcast(*buf, (int)n, MPI_BYTE, root, comm, &req);
    return rc == MPI_SUCCESS ? wait_request(&req) : rc;
}
