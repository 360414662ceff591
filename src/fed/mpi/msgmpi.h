/* Moving msgframe frames over MPI: send, receive of unknown size, and broadcast. */
#ifndef CAUSTIC_MSGMPI_H
#define CAUSTIC_MSGMPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Waiting strategy for all calls below: 0 (default) blocks in MPI, which busy-polls in
 * Open MPI; > 0 polls with sleeps of that many microseconds, freeing the core while idle. */
void cmsg_mpi_set_idle_sleep(int microseconds);

/* Sends one frame; returns the MPI error code. */
int cmsg_mpi_send(const uint8_t *frame, size_t bytes, int dest, int tag, MPI_Comm comm);

/* Waits for a frame from `source` (may be MPI_ANY_SOURCE) with `tag` and receives it into
 * *buf, growing it (realloc) to fit. Returns the MPI error code, or MPI_ERR_NO_MEM.
 * *bytes is the received size, *from the actual source rank. */
int cmsg_mpi_recv(uint8_t **buf, size_t *cap, size_t *bytes, int source, int tag, MPI_Comm comm, int *from);

/* Broadcasts a frame of size known only at the root: the size goes first, then the bytes.
 * Non-root ranks get their buffer grown as needed. */
int cmsg_mpi_bcast(uint8_t **buf, size_t *cap, size_t *bytes, int root, MPI_Comm comm);

/* ---- deadlines: a server that must not wait for a stalled peer ----------------------------
 * Communicators used with these should have MPI_ERRORS_RETURN (a failed transfer is reported,
 * not fatal). Times are MPI_Wtime() seconds; a deadline < 0 means none. */

/* Incoming frames with one tag from any source. A receive that has started but not finished
 * (its sender stopped mid-transfer) stays pending inside and completes in a later call. */
typedef struct cmsg_inbox cmsg_inbox;
typedef enum { CMSG_RX_FRAME, CMSG_RX_OVERSIZE, CMSG_RX_TIMEOUT, CMSG_RX_ERROR } cmsg_rx_status;
typedef struct {
    const uint8_t *frame; /* valid until the next call; NULL unless CMSG_RX_FRAME */
    size_t bytes;         /* frame size (for OVERSIZE: the size sent, which was discarded) */
    int from;             /* source rank */
} cmsg_rx;
cmsg_inbox *cmsg_inbox_create(MPI_Comm comm, int tag, size_t max_bytes);
/* Next complete frame, or CMSG_RX_TIMEOUT once `deadline` has passed (deadline 0: only what
 * is already there). Frames larger than max_bytes are discarded as soon as they are received
 * (CMSG_RX_OVERSIZE): never handed on, never kept. */
cmsg_rx_status cmsg_inbox_next(cmsg_inbox *ib, double deadline, cmsg_rx *rx);
void cmsg_inbox_free(cmsg_inbox *ib);

/* Outgoing frames that need not be waited for: each post copies the frame once and starts
 * non-blocking sends; a destination is busy while an earlier send to it is incomplete. */
typedef struct cmsg_outbox cmsg_outbox;
cmsg_outbox *cmsg_outbox_create(MPI_Comm comm, int tag);
int cmsg_outbox_post(cmsg_outbox *ob, const uint8_t *frame, size_t bytes, const int *dests, int ndests);
/* Tests the pending sends; returns how many are still pending in all. */
int cmsg_outbox_progress(cmsg_outbox *ob);
/* Pending sends to dest (call progress first). */
int cmsg_outbox_busy(const cmsg_outbox *ob, int dest);
/* Sends still pending are abandoned (their buffers are kept alive: MPI may still read them). */
void cmsg_outbox_free(cmsg_outbox *ob);

#endif
