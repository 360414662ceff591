#define _POSIX_C_SOURCE 200809L
#include "msgmpi.h"

#include <time.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

int cmsg_mpi_recv(uint8_t **buf, size_t *cap, size_t *bytes, int source, int tag, MPI_Comm comm, int *from) {
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

/* ---- inbox ------------------------------------------------------------------------------ */

typedef struct {
    MPI_Request req;
    uint8_t *buf;
    size_t bytes; /* size sent */
    int from, oversize;
} rx_slot;

struct cmsg_inbox {
    MPI_Comm comm;
    int tag;
    size_t max_bytes;
    rx_slot *slots;
    int n, cap;
    uint8_t *last; /* frame handed out by the previous call */
};

cmsg_inbox *cmsg_inbox_create(MPI_Comm comm, int tag, size_t max_bytes) {
    cmsg_inbox *ib = calloc(1, sizeof *ib);
    if (!ib) return NULL;
    ib->comm = comm;
    ib->tag = tag;
    ib->max_bytes = max_bytes;
    return ib;
}

cmsg_rx_status cmsg_inbox_next(cmsg_inbox *ib, double deadline, cmsg_rx *rx) {
    free(ib->last);
    ib->last = NULL;
    rx->frame = NULL;
    rx->bytes = 0;
    rx->from = -1;
    for (;;) {
        /* finished receives first, oldest first */
        for (int i = 0; i < ib->n; i++) {
            int done = 0;
            int rc = MPI_Test(&ib->slots[i].req, &done, MPI_STATUS_IGNORE);
            if (!done && rc == MPI_SUCCESS) continue;
            rx_slot s = ib->slots[i];
            memmove(ib->slots + i, ib->slots + i + 1, sizeof(rx_slot) * (size_t)(ib->n - i - 1));
            ib->n--;
            rx->bytes = s.bytes;
            rx->from = s.from;
            if (s.oversize) { /* the truncation error is expected: the bytes were discarded */
                free(s.buf);
                return CMSG_RX_OVERSIZE;
            }
            if (rc != MPI_SUCCESS) {
                free(s.buf);
                return CMSG_RX_ERROR;
            }
            ib->last = s.buf;
            rx->frame = s.buf;
            return CMSG_RX_FRAME;
        }
        /* then start receiving whatever has arrived */
        int found = 0;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, ib->tag, ib->comm, &found, &msg, &st) != MPI_SUCCESS) return CMSG_RX_ERROR;
        if (found) {
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (ib->n == ib->cap) {
                int ncap = ib->cap ? 2 * ib->cap : 8;
                rx_slot *p = realloc(ib->slots, sizeof(rx_slot) * (size_t)ncap);
                if (!p) return CMSG_RX_ERROR;
                ib->slots = p;
                ib->cap = ncap;
            }
            rx_slot *s = &ib->slots[ib->n];
            s->bytes = count > 0 ? (size_t)count : 0;
            s->from = st.MPI_SOURCE;
            /* Received whole even when oversize (a truncated receive is not reliably safe in
             * every MPI); an int count bounds it to 2 GiB, and it is freed at once. */
            s->oversize = s->bytes > ib->max_bytes;
            int take = count;
            s->buf = malloc(take > 0 ? (size_t)take : 1);
            if (!s->buf) return CMSG_RX_ERROR;
            if (MPI_Imrecv(s->buf, take, MPI_BYTE, &msg, &s->req) != MPI_SUCCESS) {
                free(s->buf);
                return CMSG_RX_ERROR;
            }
            ib->n++;
            continue;
        }
        if (deadline >= 0 && MPI_Wtime() >= deadline) return CMSG_RX_TIMEOUT;
        if (idle_sleep_us > 0) nap();
    }
}

void cmsg_inbox_free(cmsg_inbox *ib) {
    if (!ib) return;
    for (int i = 0; i < ib->n; i++) {
        /* a receive still in flight: cancel it if MPI can, else leave its buffer to MPI */
        MPI_Cancel(&ib->slots[i].req);
        int done = 0;
        MPI_Test(&ib->slots[i].req, &done, MPI_STATUS_IGNORE);
        if (done)
            free(ib->slots[i].buf);
        else
            MPI_Request_free(&ib->slots[i].req);
    }
    free(ib->slots);
    free(ib->last);
    free(ib);
}

/* ---- outbox ----------------------------------------------------------------------------- */

typedef struct {
    int refs;
    size_t bytes;
    uint8_t data[];
} shared_frame;

typedef struct {
    MPI_Request req;
    int dest;
    shared_frame *frame;
} tx_slot;

struct cmsg_outbox {
    MPI_Comm comm;
    int tag;
    tx_slot *slots;
    int n, cap;
};

cmsg_outbox *cmsg_outbox_create(MPI_Comm comm, int tag) {
    cmsg_outbox *ob = calloc(1, sizeof *ob);
    if (!ob) return NULL;
    ob->comm = comm;
    ob->tag = tag;
    return ob;
}

int cmsg_outbox_post(cmsg_outbox *ob, const uint8_t *frame, size_t bytes, const int *dests, int ndests) {
    if (ndests <= 0) return MPI_SUCCESS;
    if (bytes > INT_MAX) return MPI_ERR_COUNT;
    if (ob->n + ndests > ob->cap) {
        int ncap = ob->cap ? ob->cap : 8;
        while (ncap < ob->n + ndests) ncap *= 2;
        tx_slot *p = realloc(ob->slots, sizeof(tx_slot) * (size_t)ncap);
        if (!p) return MPI_ERR_NO_MEM;
        ob->slots = p;
        ob->cap = ncap;
    }
    shared_frame *f = malloc(sizeof *f + bytes);
    if (!f) return MPI_ERR_NO_MEM;
    f->refs = 0;
    f->bytes = bytes;
    memcpy(f->data, frame, bytes);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < ndests; i++) {
        tx_slot *s = &ob->slots[ob->n];
        int r = MPI_Isend(f->data, (int)bytes, MPI_BYTE, dests[i], ob->tag, ob->comm, &s->req);
        if (r != MPI_SUCCESS) {
            rc = r;
            continue;
        }
        s->dest = dests[i];
        s->frame = f;
        f->refs++;
        ob->n++;
    }
    if (f->refs == 0) free(f);
    return rc;
}

int cmsg_outbox_progress(cmsg_outbox *ob) {
    for (int i = 0; i < ob->n;) {
        int done = 0;
        int rc = MPI_Test(&ob->slots[i].req, &done, MPI_STATUS_IGNORE);
        if (!done && rc == MPI_SUCCESS) {
            i++;
            continue;
        }
        if (--ob->slots[i].frame->refs == 0) free(ob->slots[i].frame);
        ob->slots[i] = ob->slots[--ob->n];
    }
    return ob->n;
}

int cmsg_outbox_busy(const cmsg_outbox *ob, int dest) {
    int k = 0;
    for (int i = 0; i < ob->n; i++) k += ob->slots[i].dest == dest;
    return k;
}

void cmsg_outbox_free(cmsg_outbox *ob) {
    if (!ob) return;
    cmsg_outbox_progress(ob);
    for (int i = 0; i < ob->n; i++) MPI_Request_free(&ob->slots[i].req);
    free(ob->slots);
    free(ob);
}
