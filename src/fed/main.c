/* fedtrain: federated training of an MLP over MPI (see docs/fedtrain.md). */
#include "bench.h"
#include "central.h"
#include "config.h"
#include "experiment.h"
#include "federated.h"
#include "report.h"

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    fed_config cfg;
    int rc = config_parse(argc, argv, &cfg);
    if (rc != 0) return rc == 1 ? 0 : 2;
    switch (cfg.mode) {
    case MODE_REPORT: return run_report(&cfg);
    case MODE_BENCH:
        if (cfg.bench_comm) {
            MPI_Init(&argc, &argv);
            rc = run_comm_bench(&cfg);
            MPI_Finalize();
            return rc;
        }
        return run_bench(&cfg);
    case MODE_CENTRAL: blas_set_threads(cfg.threads); return run_central(&cfg);
    case MODE_FEDERATED: {
        MPI_Init(&argc, &argv);
        blas_set_threads(cfg.threads);
        rc = run_federated(&cfg);
        MPI_Finalize();
        return rc;
    }
    }
    return 2;
}
