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
int cmsg_mpi_recv(uint8_t **buf, size_t *cap, size_t *bytes, int source, int tag, MPI_Comm comm,
                  int *from);

/* Broadcasts a frame of size known only at the root: the size goes first, then the bytes.
 * Non-root ranks get their buffer grown as needed. */
int cmsg_mpi_bcast(uint8_t **buf, size_t *cap, size_t *bytes, int root, MPI_Comm comm);

#endif
