/* Run configuration of fedtrain and its command-line parser. */
#ifndef FED_CONFIG_H
#define FED_CONFIG_H

#include "aggregate.h"
#include "dataset.h"
#include "mlp.h"

#include <stdint.h>

typedef enum { MODE_CENTRAL, MODE_FEDERATED, MODE_REPORT, MODE_BENCH } run_mode;

typedef enum { FAULT_NONE, FAULT_NAN, FAULT_INF, FAULT_SIZE, FAULT_CHECKSUM } fault_kind;

typedef struct {
    run_mode mode;
    char data_dir[1024];
    data_paths paths; /* explicit overrides, then filled from data_dir */
    char out_dir[1024];
    char central_dir[1024]; /* report --central DIR: central baseline from another run directory */
    char preset[16];
    int epochs; /* central */
    int rounds; /* federated */
    int local_epochs;
    int clients; /* 0: MPI ranks - 1 (or 6 in a single process) */
    char partition_str[64];
    partition_spec partition;
    char central_set[16]; /* clean | paper (pooled transformed shards) */
    float lr, lr_decay, momentum, weight_decay;
    int batch;
    aggregator_kind aggregator;
    float server_momentum, server_lr, prox_mu, client_fraction;
    /* failure handling (docs/fedtrain.md, "Failure model") */
    double round_timeout;  /* seconds the server waits for a round's updates; 0 = no deadline */
    robust_kind robust;    /* how accepted client models are combined */
    float trim;            /* trimmed mean: fraction dropped at each end */
    float clip_norm;       /* clip ||update - global|| to this; 0 = off */
    float max_param;       /* refuse updates with |parameter| above this */
    float max_update_norm; /* refuse updates with ||update - global|| above this; 0 = off */
    uint64_t seed;
    int resume;
    int sizes[MLP_MAX_LAYERS + 1];
    int nsizes;
    int limit_train, limit_test;
    int normalize;     /* 1: standardise pixels with the training set's scalar mean and std */
    int threads;       /* BLAS threads per rank */
    int device;        /* --device: 0 cpu, 1 cuda (train_epochs runs on the GPU, see mlp_cuda.h) */
    int idle_sleep_us; /* MPI waits: poll with sleeps of this length (0 = block/spin in MPI) */
    int quiet;
    /* testing hooks */
    fault_kind fault;
    int fault_client;
    int kill_after; /* SIGKILL itself after checkpointing this round/epoch */
    /* bench */
    double bench_seconds;
    int bench_comm; /* bench --comm: time model exchange patterns over MPI instead */
    int torch;      /* -1 auto, 0 off, 1 required */
    char python[256];
} fed_config;

/* Parses argv (argv[1] is the mode). Returns 0 on success, 1 if help was printed,
 * 2 on a usage error (message already printed, naming the flag). */
int config_parse(int argc, char **argv, fed_config *cfg);
void config_usage(void);
/* CRC of the settings that change the training trajectory (not --rounds or paths), stored in
 * checkpoints so --resume refuses a different run. */
uint32_t config_fingerprint(const fed_config *cfg);
const char *mode_name(run_mode m);

#endif
