/* Builds without MPI: one process. Started by mpirun with several ranks, it says so instead of
 * rendering the same image once per rank. */
#include <stdio.h>
#include <stdlib.h>

#include "caustic.h"
#include "dist/dist.h"

int caustic_dist_start(int *rank, int *size, volatile sig_atomic_t *interrupt, char *err, size_t errlen) {
    (void)interrupt;
    *rank = 0;
    *size = 1;
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (dist_launched() && n && atoi(n) > 1) {
        snprintf(err, errlen,
                 "started by mpirun with %s ranks, but this caustic was built without MPI "
                 "(install libopenmpi-dev and rebuild)",
                 n);
        return -1;
    }
    return 0;
}

void caustic_dist_stop(int failed) { (void)failed; }
