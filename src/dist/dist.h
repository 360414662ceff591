/* Distributed rendering: what the MPI layer (dist_mpi.c) and its stub (dist_stub.c) share. */
#ifndef CAUSTIC_DIST_H
#define CAUSTIC_DIST_H

#include <stdlib.h>

/* Whether the environment says mpirun (Open MPI, or any PMIx launcher) started this process. */
static inline int dist_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL; }

#endif
