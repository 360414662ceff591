#include "config.h"

#include "mpi/msgframe.h"
#include "mlp_cuda.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mode_name(run_mode m) {
    switch (m) {
    case MODE_CENTRAL: return "central";
    case MODE_FEDERATED: return "federated";
    case MODE_REPORT: return "report";
    case MODE_BENCH: return "bench";
    }
    return "?";
}

void config_usage(void) {
    fputs("usage: fedtrain central   --data DIR --out RUN_DIR [options]\n"
          "       mpirun -np N+1 fedtrain federated --data DIR --out RUN_DIR [options]\n"
          "       fedtrain report RUN_DIR [--central CENTRAL_RUN_DIR]\n"
          "       fedtrain bench [--batch B] [--seconds S] [--torch auto|on|off]\n"
          "       mpirun -np N fedtrain bench --comm   (model exchange: Bcast/Send/Recv vs collectives)\n"
          "\n"
          "data:   --data DIR  (finds *train-images*, *train-labels*, *t10k-images*|*test-images*,\n"
          "                     *t10k-labels*|*test-labels*, raw or .gz)\n"
          "        --train-images F --train-labels F --test-images F --test-labels F\n"
          "        --limit-train N --limit-test N   use only the first N samples\n"
          "model:  --layers 784,256,128,10   --seed S   --threads T (BLAS threads per rank, 1)\n"
          "        --device cpu|cuda (cpu; cuda: local training with cuBLAS on a GPU)\n"
          "mpi:    --idle-sleep-us U (100; 0 = wait inside MPI, which spins)\n"
          "sgd:    --lr X (0.03) --lr-decay G (0.97, per round/epoch) --batch B (16; bench 32)\n"
          "        --momentum M (0.9) --weight-decay W (0)\n"
          "central: --epochs N (30)  --central-set clean|paper (train on clean or pooled transformed)\n"
          "federated: --rounds N (30) --local-epochs L (3) --clients N (ranks-1)\n"
          "        --partition paper|iid|dirichlet:ALPHA  --client-fraction F (1)\n"
          "        --aggregator fedavg|fedavg-weighted|fedavgm|fedprox (fedavgm)\n"
          "        --server-momentum B (0.7) --server-lr X (1) --prox-mu MU (0)\n"
          "        --round-timeout SEC (0 = none): skip clients that have not answered by then\n"
          "        --robust mean|median|trimmed:F (mean)  --clip-norm C (0 = off)\n"
          "        --max-param V (1e4)  --max-update-norm N (0 = off)   refuse updates beyond these\n"
          "        --preset paper   the paper's plain setting (SGD lr 0.01, no momentum, fedavg)\n"
          "data:   --normalize none|standard  (standard: pixels minus the training mean, over its std)\n"
          "run:    --out RUN_DIR  --resume  --quiet\n",
          stderr);
}

static void set_defaults(fed_config *c) {
    memset(c, 0, sizeof *c);
    c->epochs = 30;
    c->rounds = 30;
    c->local_epochs = 3;
    snprintf(c->partition_str, sizeof c->partition_str, "paper");
    c->partition.kind = PART_PAPER;
    snprintf(c->central_set, sizeof c->central_set, "clean");
    snprintf(c->preset, sizeof c->preset, "default");
    /* Defaults chosen by the experiments in docs/RESULTS.md. */
    c->lr = 0.03f;
    c->lr_decay = 0.97f;
    c->momentum = 0.9f;
    c->weight_decay = 0.0f;
    c->batch = 16;
    c->aggregator = AGG_FEDAVGM;
    c->server_momentum = 0.7f;
    c->server_lr = 1.0f;
    c->prox_mu = 0.0f;
    c->client_fraction = 1.0f;
    c->robust = ROBUST_MEAN;
    c->max_param = 1e4f;
    c->seed = 1;
    int def[] = {784, 256, 128, 10};
    memcpy(c->sizes, def, sizeof def);
    c->nsizes = 4;
    c->threads = 1;
    c->idle_sleep_us = 100;
    c->bench_seconds = 3.0;
    c->torch = -1;
    snprintf(c->python, sizeof c->python, "python3");
    c->fault_client = -1;
}

static void apply_paper_preset(fed_config *c) {
    c->lr = 0.01f;
    c->lr_decay = 1.0f;
    c->momentum = 0.0f;
    c->weight_decay = 0.0f;
    c->aggregator = AGG_FEDAVG;
    c->server_momentum = 0.0f;
    c->server_lr = 1.0f;
    c->batch = 32;
    snprintf(c->preset, sizeof c->preset, "paper");
}

static int bad(const char *flag, const char *val, const char *why) {
    fprintf(stderr, "fedtrain: %s %s: %s\n", flag, val ? val : "", why);
    return 2;
}

static int parse_int(const char *flag, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno) return bad(flag, s, "not an integer");
    if (v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "must be between %ld and %ld", lo, hi);
        return bad(flag, s, why);
    }
    *out = (int)v;
    return 0;
}

static int parse_float(const char *flag, const char *s, double lo, double hi, int lo_open, float *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v)) return bad(flag, s, "not a finite number");
    if (v < lo || v > hi || (lo_open && v == lo)) {
        char why[96];
        snprintf(why, sizeof why, "must be in %s%g, %g]", lo_open ? "(" : "[", lo, hi);
        return bad(flag, s, why);
    }
    *out = (float)v;
    return 0;
}

static int copy_str(const char *flag, const char *s, char *dst, size_t n) {
    if (strlen(s) >= n) return bad(flag, s, "too long");
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

int config_parse(int argc, char **argv, fed_config *c) {
    set_defaults(c);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        config_usage();
        return argc < 2 ? 2 : 1;
    }
    const char *m = argv[1];
    if (strcmp(m, "central") == 0)
        c->mode = MODE_CENTRAL;
    else if (strcmp(m, "federated") == 0)
        c->mode = MODE_FEDERATED;
    else if (strcmp(m, "report") == 0)
        c->mode = MODE_REPORT;
    else if (strcmp(m, "bench") == 0)
        c->mode = MODE_BENCH;
    else {
        fprintf(stderr, "fedtrain: unknown command '%s' (expected central, federated, report or bench)\n", m);
        return 2;
    }
    if (c->mode == MODE_BENCH) c->batch = 32; /* the speed target is stated at batch 32 */
    /* The preset is applied first so that explicit flags override it. */
    for (int i = 2; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--preset") == 0) {
            if (strcmp(argv[i + 1], "paper") == 0)
                apply_paper_preset(c);
            else if (strcmp(argv[i + 1], "default") != 0)
                return bad("--preset", argv[i + 1], "expected paper or default");
        }
    }
    int rc;
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
            config_usage();
            return 1;
        }
        if (strcmp(f, "--resume") == 0) {
            c->resume = 1;
            continue;
        }
        if (strcmp(f, "--quiet") == 0) {
            c->quiet = 1;
            continue;
        }
        if (strcmp(f, "--comm") == 0 && c->mode == MODE_BENCH) {
            c->bench_comm = 1;
            continue;
        }
        if (f[0] != '-') {
            if (c->mode == MODE_REPORT && !c->out_dir[0]) {
                if ((rc = copy_str("RUN_DIR", f, c->out_dir, sizeof c->out_dir))) return rc;
                continue;
            }
            fprintf(stderr, "fedtrain: unexpected argument '%s'\n", f);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "fedtrain: %s needs a value\n", f);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(f, "--data") == 0)
            rc = copy_str(f, v, c->data_dir, sizeof c->data_dir);
        else if (strcmp(f, "--train-images") == 0)
            rc = copy_str(f, v, c->paths.train_images, 1024);
        else if (strcmp(f, "--train-labels") == 0)
            rc = copy_str(f, v, c->paths.train_labels, 1024);
        else if (strcmp(f, "--test-images") == 0)
            rc = copy_str(f, v, c->paths.test_images, 1024);
        else if (strcmp(f, "--test-labels") == 0)
            rc = copy_str(f, v, c->paths.test_labels, 1024);
        else if (strcmp(f, "--out") == 0)
            rc = copy_str(f, v, c->out_dir, sizeof c->out_dir);
        else if (strcmp(f, "--central") == 0 && c->mode == MODE_REPORT)
            rc = copy_str(f, v, c->central_dir, sizeof c->central_dir);
        else if (strcmp(f, "--preset") == 0)
            rc = 0;
        else if (strcmp(f, "--epochs") == 0)
            rc = parse_int(f, v, 0, 100000, &c->epochs);
        else if (strcmp(f, "--rounds") == 0)
            rc = parse_int(f, v, 1, 100000, &c->rounds);
        else if (strcmp(f, "--local-epochs") == 0)
            rc = parse_int(f, v, 1, 10000, &c->local_epochs);
        else if (strcmp(f, "--clients") == 0)
            rc = parse_int(f, v, 1, 4096, &c->clients);
        else if (strcmp(f, "--partition") == 0) {
            rc = copy_str(f, v, c->partition_str, sizeof c->partition_str);
            if (!rc && partition_parse(v, &c->partition) != 0)
                rc = bad(f, v, "expected paper, iid or dirichlet:ALPHA with ALPHA > 0");
        } else if (strcmp(f, "--central-set") == 0) {
            if (strcmp(v, "clean") && strcmp(v, "paper"))
                rc = bad(f, v, "expected clean or paper");
            else
                rc = copy_str(f, v, c->central_set, sizeof c->central_set);
        } else if (strcmp(f, "--lr") == 0)
            rc = parse_float(f, v, 0, 10, 1, &c->lr);
        else if (strcmp(f, "--lr-decay") == 0)
            rc = parse_float(f, v, 0, 1, 1, &c->lr_decay);
        else if (strcmp(f, "--momentum") == 0)
            rc = parse_float(f, v, 0, 0.999, 0, &c->momentum);
        else if (strcmp(f, "--weight-decay") == 0)
            rc = parse_float(f, v, 0, 1, 0, &c->weight_decay);
        else if (strcmp(f, "--batch") == 0)
            rc = parse_int(f, v, 1, 65536, &c->batch);
        else if (strcmp(f, "--aggregator") == 0) {
            rc = aggregator_parse(v, &c->aggregator) ? bad(f, v, "expected fedavg, fedavg-weighted, fedavgm or fedprox")
                                                     : 0;
        } else if (strcmp(f, "--server-momentum") == 0)
            rc = parse_float(f, v, 0, 0.999, 0, &c->server_momentum);
        else if (strcmp(f, "--server-lr") == 0)
            rc = parse_float(f, v, 0, 10, 1, &c->server_lr);
        else if (strcmp(f, "--prox-mu") == 0)
            rc = parse_float(f, v, 0, 100, 0, &c->prox_mu);
        else if (strcmp(f, "--client-fraction") == 0)
            rc = parse_float(f, v, 0, 1, 1, &c->client_fraction);
        else if (strcmp(f, "--round-timeout") == 0) {
            float t;
            rc = parse_float(f, v, 0, 86400, 0, &t);
            c->round_timeout = t;
        } else if (strcmp(f, "--robust") == 0) {
            rc = robust_parse(v, &c->robust, &c->trim)
                     ? bad(f, v, "expected mean, median or trimmed:F with F in [0,0.5)")
                     : 0;
        } else if (strcmp(f, "--clip-norm") == 0)
            rc = parse_float(f, v, 0, 1e30, 0, &c->clip_norm);
        else if (strcmp(f, "--max-param") == 0)
            rc = parse_float(f, v, 0, 1e30, 1, &c->max_param);
        else if (strcmp(f, "--max-update-norm") == 0)
            rc = parse_float(f, v, 0, 1e30, 0, &c->max_update_norm);
        else if (strcmp(f, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            rc = (end == v || *end || errno || v[0] == '-') ? bad(f, v, "not a non-negative integer") : 0;
            c->seed = s;
        } else if (strcmp(f, "--layers") == 0) {
            int n = mlp_parse_layers(v, c->sizes, MLP_MAX_LAYERS + 1);
            rc = n < 2 ? bad(f, v, "expected 2 to 9 comma-separated sizes in 1..65536, e.g. 784,256,128,10") : 0;
            if (!rc) c->nsizes = n;
        } else if (strcmp(f, "--limit-train") == 0)
            rc = parse_int(f, v, 1, 100000000, &c->limit_train);
        else if (strcmp(f, "--limit-test") == 0)
            rc = parse_int(f, v, 1, 100000000, &c->limit_test);
        else if (strcmp(f, "--normalize") == 0) {
            if (!strcmp(v, "none"))
                c->normalize = 0;
            else if (!strcmp(v, "standard"))
                c->normalize = 1;
            else
                return bad(f, v, "expected none or standard");
            rc = 0;
        } else if (strcmp(f, "--device") == 0) {
            if (!strcmp(v, "cpu"))
                c->device = 0;
            else if (!strcmp(v, "cuda"))
                c->device = 1;
            else
                return bad(f, v, "expected cpu or cuda");
            rc = 0;
        } else if (strcmp(f, "--idle-sleep-us") == 0)
            rc = parse_int(f, v, 0, 100000, &c->idle_sleep_us);
        else if (strcmp(f, "--threads") == 0)
            rc = parse_int(f, v, 1, 256, &c->threads);
        else if (strcmp(f, "--seconds") == 0) {
            float s;
            rc = parse_float(f, v, 0, 3600, 1, &s);
            c->bench_seconds = s;
        } else if (strcmp(f, "--torch") == 0) {
            if (!strcmp(v, "auto"))
                c->torch = -1;
            else if (!strcmp(v, "on"))
                c->torch = 1;
            else if (!strcmp(v, "off"))
                c->torch = 0;
            else
                return bad(f, v, "expected auto, on or off");
            rc = 0;
        } else if (strcmp(f, "--python") == 0)
            rc = copy_str(f, v, c->python, sizeof c->python);
        else if (strcmp(f, "--inject-fault") == 0) {
            /* testing hook: KIND:CLIENT, the client corrupts every update it sends */
            char kind[16];
            int client;
            if (sscanf(v, "%15[a-z]:%d", kind, &client) != 2 || client < 0)
                rc = bad(f, v, "expected nan|inf|size|checksum:CLIENT");
            else {
                rc = 0;
                c->fault_client = client;
                if (!strcmp(kind, "nan"))
                    c->fault = FAULT_NAN;
                else if (!strcmp(kind, "inf"))
                    c->fault = FAULT_INF;
                else if (!strcmp(kind, "size"))
                    c->fault = FAULT_SIZE;
                else if (!strcmp(kind, "checksum"))
                    c->fault = FAULT_CHECKSUM;
                else
                    rc = bad(f, v, "expected nan|inf|size|checksum:CLIENT");
            }
        } else if (strcmp(f, "--kill-after") == 0)
            rc = parse_int(f, v, 1, 100000, &c->kill_after);
        else {
            fprintf(stderr, "fedtrain: unknown flag '%s' (see fedtrain --help)\n", f);
            return 2;
        }
        if (rc) return rc;
    }
    if (c->sizes[0] < 1 || c->sizes[c->nsizes - 1] != NUM_CLASSES) {
        fprintf(stderr, "fedtrain: --layers: the last size must be %d (classes)\n", NUM_CLASSES);
        return 2;
    }
    if ((c->mode == MODE_CENTRAL || c->mode == MODE_FEDERATED || c->mode == MODE_REPORT) && !c->out_dir[0]) {
        fprintf(stderr, "fedtrain: %s needs %s\n", mode_name(c->mode),
                c->mode == MODE_REPORT ? "a RUN_DIR argument" : "--out RUN_DIR");
        return 2;
    }
    if (c->device == 1 && c->mode != MODE_REPORT && !c->bench_comm) {
        /* routes train_epochs (central, federated clients, bench) to the GPU */
        char why[256];
        if (train_use_cuda(1, why, sizeof why) != 0) {
            fprintf(stderr, "fedtrain: --device cuda: %s\n", why);
            return 2;
        }
    }
    if (c->mode == MODE_FEDERATED && c->aggregator == AGG_FEDAVGM && c->server_momentum == 0.0f)
        c->server_momentum = 0.7f; /* fedavgm without momentum would just be fedavg */
    return 0;
}

uint32_t config_fingerprint(const fed_config *c) {
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%d|%d|%d|%s|%s|%.9g|%.9g|%.9g|%.9g|%d|%d|%.9g|%.9g|%.9g|%.9g|%llu|%d|%d|%d|",
                     (int)c->mode, c->local_epochs, c->clients, c->partition_str, c->central_set, c->lr, c->lr_decay,
                     c->momentum, c->weight_decay, c->batch, (int)c->aggregator, c->server_momentum, c->server_lr,
                     c->prox_mu, c->client_fraction, (unsigned long long)c->seed, c->limit_train, c->limit_test,
                     c->normalize);
    if (c->robust != ROBUST_MEAN || c->clip_norm > 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "robust%d:%.9g:%.9g|", (int)c->robust, c->trim, c->clip_norm);
    for (int i = 0; i < c->nsizes && n < (int)sizeof buf - 8; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%d,", c->sizes[i]);
    return cmsg_crc32(buf, (size_t)n);
}
