/* The distributed layer's transport: the messages' tile packing, and sends and receives that
 * poll with a deadline (a dead receiver must not hang the sender) and stop at an interrupt. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist_internal.h"
#include "util/timer.h"

/* A tile's film packed after a header: sums, squared luminance (double), counts. */
size_t dist_tile_bytes(int w, int h) { return (size_t)w * h * (4 * sizeof(double) + sizeof(uint32_t)); }

kfilm dist_tile_view(unsigned char *p, int w, int h) {
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
void dist_tile_copy(const kfilm *film, const kfilm *tile, int x0, int y0, int to_tile) {
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
void dist_nap_for(long ns) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

void dist_nap(void) { dist_nap_for(200000); }

int dist_interrupted(void) { return dist_g.interrupt && *dist_g.interrupt; }

/* Sends with a deadline (a dead receiver must not hang the sender). */
int dist_send_until(const void *buf, size_t n, int dest, int tag, double seconds, char *err, size_t errlen) {
    MPI_Request rq;
    if (MPI_Isend(buf, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &rq) != MPI_SUCCESS) {
        snprintf(err, errlen, "rank %d: sending to rank %d failed", dist_g.rank, dest);
        return -1;
    }
    double t_end = timer_now() + seconds;
    for (;;) {
        int done = 0;
        if (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            snprintf(err, errlen, "rank %d: sending to rank %d failed", dist_g.rank, dest);
            return -1;
        }
        if (done) return 0;
        if (timer_now() > t_end || dist_interrupted()) {
            MPI_Cancel(&rq);
            if (dist_interrupted())
                snprintf(err, errlen, "rank %d: interrupted while sending to rank %d", dist_g.rank, dest);
            else
                snprintf(err, errlen, "rank %d did not take a message within %.0f s", dest, seconds);
            return -1;
        }
        dist_nap();
    }
}

/* Receives the message that MPI_Iprobe found, into a buffer of its size (grown as needed). */
int dist_recv_probed(const MPI_Status *st, unsigned char **buf, size_t *cap, size_t *len, char *err, size_t errlen) {
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
