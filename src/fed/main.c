/* fedtrain: federated training of an MLP over MPI (see docs/fedtrain.md). */
#include "bench.h"
#include "central.h"
#include "config.h"
#include "experiment.h"
#include "federated.h"
#include "report.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FEDTRAIN_VERSION
#define FEDTRAIN_VERSION "unknown"
#endif

static void print_version(void) {
    printf("fedtrain %s (%s, BLAS: OpenBLAS, MPI: %d.%d)\n", FEDTRAIN_VERSION,
#ifdef FEDTRAIN_HAVE_CUDA
           "CPU and CUDA (cuBLAS)",
#else
           "CPU only",
#endif
           MPI_VERSION, MPI_SUBVERSION);
}

/* A run directory that already holds this mode's outputs (a finished or interrupted run) is not
 * written over unless --force says so; --resume continues it. Every rank decides the same (one
 * file system), rank 0 (or a lone process) says why. */
static int refuse_existing(const fed_config *cfg, int force) {
    if (force || cfg->resume || !cfg->out_dir[0]) return 0;
    static const char *const central[] = {"central_epochs.csv", "central_model.bin", "central.ckpt"};
    static const char *const federated[] = {"federated_rounds.csv", "federated_clients.csv", "federated_model.bin",
                                            "federated.ckpt"};
    const char *const *names = cfg->mode == MODE_CENTRAL ? central : federated;
    int n = cfg->mode == MODE_CENTRAL ? 3 : 4;
    for (int i = 0; i < n; i++) {
        char path[1200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", cfg->out_dir, names[i]);
        if (stat(path, &st) == 0) {
            const char *rank = getenv("OMPI_COMM_WORLD_RANK");
            if (!rank) rank = getenv("PMIX_RANK");
            if (!rank || strcmp(rank, "0") == 0)
                fprintf(stderr,
                        "fedtrain: %s: the run directory already holds a %s run (%s); --resume continues it, "
                        "--force starts over and replaces it, or name another --out\n",
                        cfg->out_dir, cfg->mode == MODE_CENTRAL ? "central" : "federated", names[i]);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    /* --version and --force are fedtrain's own (not the experiment's configuration) */
    int force = 0, n = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            print_version();
            return 0;
        }
        if (strcmp(argv[i], "--force") == 0)
            force = 1;
        else
            argv[n++] = argv[i];
    }
    argc = n;
    argv[argc] = NULL;
    fed_config cfg;
    int rc = config_parse(argc, argv, &cfg);
    if (rc != 0) return rc == 1 ? 0 : 2;
    if ((cfg.mode == MODE_CENTRAL || cfg.mode == MODE_FEDERATED) && refuse_existing(&cfg, force)) return 2;
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
