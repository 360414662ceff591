#include "msgmpi.h"

#include <limits.h>
#include <stdlib.h>

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
    return MPI_Send(frame, (int)bytes, MPI_BYTE, dest, tag, comm);
}

int cmsg_mpi_recv(uint8_t **buf, size_t *cap, size_t *bytes, int source, int tag, MPI_Comm comm,
                  int *from) {
    MPI_Status st;
    int rc = MPI_Probe(source, tag, comm, &st);
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
    int rc = MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (n > INT_MAX) return MPI_ERR_COUNT;
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != root && ensure_cap(buf, cap, (size_t)n) != 0) return MPI_ERR_NO_MEM;
    *bytes = (size_t)n;
    return MPI_Bcast(*buf, (int)n, MPI_BYTE, root, comm);
}
