#ifndef FED_FEDERATED_H
#define FED_FEDERATED_H
#include "config.h"
/* Runs the federated protocol on MPI_COMM_WORLD (rank 0 = server). With one rank the server
 * simulates all clients itself, still going through message framing and checks.
 * Returns the process exit status. */
int run_federated(fed_config *cfg);
#endif
