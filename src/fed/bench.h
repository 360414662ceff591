#ifndef FED_BENCH_H
#define FED_BENCH_H
#include "config.h"
/* fedtrain bench: training throughput of one core at --batch, and the same step in
 * single-threaded PyTorch measured right after it when torch is importable. */
int run_bench(fed_config *cfg);
/* bench --comm (inside MPI): times moving one model frame server -> clients and back with
 * MPI_Bcast vs a loop of MPI_Send, and MPI_Send/MPI_Recv vs MPI_Gather. */
int run_comm_bench(fed_config *cfg);
#endif
