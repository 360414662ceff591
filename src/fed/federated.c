/* fedtrain federated: server (rank 0) and clients (ranks 1..) exchanging framed models.
 *
 * Round r: the server sends MSG_GLOBAL(seq=r, params) point to point to every client rank
 * that has taken its previous message (a rank still busy with an earlier round is skipped);
 * every selected client trains its copy for local_epochs and sends MSG_UPDATE(seq=r, meta +
 * params) back; the server takes updates until every expected client has answered or the
 * round's deadline (--round-timeout) passes, validating each frame (update_accept), then
 * combines the accepted ones in client order (deterministic), evaluates, logs and
 * checkpoints. Nothing on the server blocks on one client. MSG_STOP ends. */
#include "federated.h"

#include "mpi/msgframe.h"
#include "mpi/msgmpi.h"
#include "checkpoint.h"
#include "experiment.h"
#include "fileio.h"
#include "rng.h"
#include "update.h"

#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nclients, ranks, rank;
    client_shard *shards;
    int *hosted; /* clients this rank trains */
    int nhosted;
    dataset *local; /* local data per hosted client (index into hosted[]) */
} fed_layout;

/* Which clients take part in round r: same answer on every rank, from the seed alone. */
static int select_clients(const fed_config *cfg, int nclients, int round, uint8_t *part) {
    int k = (int)lroundf(cfg->client_fraction * (float)nclients);
    if (k < 1) k = 1;
    if (k > nclients) k = nclients;
    memset(part, 0, (size_t)nclients);
    if (k == nclients) {
        memset(part, 1, (size_t)nclients);
        return k;
    }
    int *ids = malloc(sizeof(int) * (size_t)nclients);
    for (int i = 0; i < nclients; i++) ids[i] = i;
    rng_t r;
    rng_seed(&r, rng_mix(cfg->seed, 0x5E1, (uint64_t)round));
    rng_shuffle_int(&r, ids, (size_t)nclients);
    for (int i = 0; i < k; i++) part[ids[i]] = 1;
    free(ids);
    return k;
}

static float round_lr(const fed_config *cfg, int round) { return cfg->lr * powf(cfg->lr_decay, (float)(round - 1)); }

/* Trains one client on the global model and writes a sealed update frame into *frame. */
static size_t client_update(const fed_config *cfg, const fed_layout *L, int h, const float *global, mlp *local,
                            mlp_work *w, float *velocity, int round, uint8_t **frame, size_t *cap) {
    int c = L->hosted[h];
    const dataset *d = &L->local[h];
    memcpy(local->params, global, sizeof(float) * local->nparams);
    if (velocity) memset(velocity, 0, sizeof(float) * local->nparams);
    sgd_config opt = {round_lr(cfg, round), cfg->momentum, cfg->weight_decay,
                      cfg->aggregator == AGG_FEDPROX ? cfg->prox_mu : 0.0f};
    train_stats ts;
    train_epochs(local, w, d, cfg->local_epochs, cfg->batch, &opt, velocity,
                 cfg->aggregator == AGG_FEDPROX ? global : NULL,
                 rng_mix(cfg->seed, 0xC11E47 + (uint64_t)c, (uint64_t)round), &ts);
    size_t np = local->nparams;
    int faulty = cfg->fault != FAULT_NONE && cfg->fault_client == c;
    if (faulty && cfg->fault == FAULT_SIZE) np -= 1;
    size_t need = update_frame_bytes(np);
    if (*cap < need) {
        uint8_t *nb = realloc(*frame, need);
        if (!nb) return 0;
        *frame = nb;
        *cap = need;
    }
    update_meta meta = {(uint32_t)c,    (uint32_t)d->n, (uint32_t)np,      0,
                        (float)ts.loss, (float)ts.acc,  (float)ts.seconds, opt.lr};
    if (faulty && (cfg->fault == FAULT_NAN || cfg->fault == FAULT_INF))
        local->params[np / 2] = cfg->fault == FAULT_NAN ? NAN : INFINITY;
    size_t n = update_encode(*frame, (uint32_t)round, &meta, local->params);
    if (faulty && cfg->fault == FAULT_CHECKSUM) (*frame)[n - 1] ^= 0x40; /* corrupt in transit */
    return n;
}

/* Per-round bookkeeping on the server. */
enum { ST_NONE, ST_ACCEPTED, ST_REJECTED, ST_TIMEOUT, ST_BUSY };
static const char *status_name[] = {"none", "accepted", "rejected", "timeout", "busy"};

typedef struct {
    uint8_t *status;    /* per client, ST_* */
    uint32_t *answered; /* per client: last round whose answer was taken (0 = none) */
    uint32_t round;
    uint8_t *waiting; /* per client: the server expects an answer this round */
    float **slots;    /* per client: accepted parameters */
    float *scratch;   /* decoding target, swapped into a slot on acceptance */
    update_meta *meta;
    int accepted, rejected, skipped;
} round_state;

static void server_take(const fed_config *cfg, const update_rules *rules, round_state *rs, const uint8_t *frame,
                        size_t bytes) {
    int c, counts;
    update_meta meta;
    const char *why = update_accept(frame, bytes, rules, rs->scratch, &meta, &c, &counts);
    if (why) {
        rs->rejected++;
        if (counts) {
            rs->answered[c] = rules->round;
            rs->status[c] = ST_REJECTED;
        }
        fprintf(stderr, "fedtrain: round %u: rejected update from %s %d: %s\n", rules->round,
                c >= 0 ? "client" : "rank", c >= 0 ? c : rules->from_rank, why);
        return;
    }
    float *t = rs->slots[c];
    rs->slots[c] = rs->scratch;
    rs->scratch = t;
    rs->answered[c] = rules->round;
    rs->status[c] = ST_ACCEPTED;
    rs->meta[c] = meta;
    rs->accepted++;
    (void)cfg;
}

static int still_waiting(const round_state *rs, int nclients) {
    int k = 0;
    for (int c = 0; c < nclients; c++) k += rs->waiting[c] && rs->answered[c] != rs->round;
    return k;
}

static void list_waiting(const round_state *rs, int nclients, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = 0;
    for (int c = 0; c < nclients && n + 16 < len; c++)
        if (rs->waiting[c] && rs->answered[c] != rs->round)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", c);
}

static int layout_build(const fed_config *cfg, fed_layout *L, dataset *train, char *err, size_t errlen) {
    L->shards = calloc((size_t)L->nclients, sizeof(client_shard));
    L->hosted = calloc((size_t)L->nclients, sizeof(int));
    L->local = calloc((size_t)L->nclients, sizeof(dataset));
    if (!L->shards || !L->hosted || !L->local) return -1;
    if (partition_make(&cfg->partition, train, L->nclients, cfg->seed, L->shards, err, errlen) != 0) return -1;
    for (int c = 0; c < L->nclients; c++) {
        if (fed_host_rank(c, L->ranks) != L->rank) continue;
        int h = L->nhosted++;
        L->hosted[h] = c;
        int *tf = malloc(sizeof(int) * (size_t)(L->shards[c].n > 0 ? L->shards[c].n : 1));
        if (!tf) return -1;
        for (int i = 0; i < L->shards[c].n; i++) tf[i] = L->shards[c].transform;
        int rc = dataset_gather(train, L->shards[c].idx, tf, L->shards[c].n, &L->local[h]);
        free(tf);
        if (rc) return -1;
    }
    return 0;
}

static void layout_free(fed_layout *L) {
    if (L->shards) partition_free(L->shards, L->nclients);
    for (int h = 0; h < L->nhosted; h++) dataset_free(&L->local[h]);
    free(L->shards);
    free(L->hosted);
    free(L->local);
}

/* All ranks agree on failure so nobody waits in a collective for a rank that gave up. */
static int all_ok(int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int run_federated(fed_config *cfg) {
    double t_start = now_seconds();
    char err[1400] = "";
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int is_server = rank == 0;
    /* Idle ranks (the server during training, clients during evaluation) sleep instead of
     * spinning, so that they do not steal cores from the clients that compute. */
    cmsg_mpi_set_idle_sleep(cfg->idle_sleep_us);
    fed_layout L = {0};
    L.rank = rank;
    L.ranks = ranks;
    L.nclients = cfg->clients ? cfg->clients : (ranks > 1 ? ranks - 1 : TF_COUNT);
    cfg->clients = L.nclients; /* resolved value goes into the fingerprint and summary */

    dataset train, test;
    int ok = experiment_load(cfg, &train, &test, err, sizeof err) == 0;
    if (ok && layout_build(cfg, &L, &train, err, sizeof err) != 0) {
        ok = 0;
        if (!err[0]) snprintf(err, sizeof err, "out of memory while building client data");
    }
    if (ok) dataset_free(&train);
    if (!all_ok(ok)) {
        if (is_server) fprintf(stderr, "fedtrain: %s\n", err[0] ? err : "a client rank failed to load its data");
        layout_free(&L);
        return 2;
    }

    mlp global;
    if (mlp_create(&global, cfg->sizes, cfg->nsizes, cfg->seed) != 0) {
        fprintf(stderr, "fedtrain: out of memory for the model\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t nparams = global.nparams;
    uint32_t fp = config_fingerprint(cfg);
    char ckpt_path[1100], rounds_csv[1100], clients_csv[1100], model_path[1100];
    snprintf(ckpt_path, sizeof ckpt_path, "%s/federated.ckpt", cfg->out_dir);
    snprintf(rounds_csv, sizeof rounds_csv, "%s/federated_rounds.csv", cfg->out_dir);
    snprintf(clients_csv, sizeof clients_csv, "%s/federated_clients.csv", cfg->out_dir);
    snprintf(model_path, sizeof model_path, "%s/federated_model.bin", cfg->out_dir);

    /* ---- server state: resume, output directory ---- */
    float *server_mom = NULL;
    const char *err_prefix = "";
    int start = 0;
    double elapsed_before = 0;
    ok = 1;
    if (is_server) {
        if (cfg->aggregator == AGG_FEDAVGM) server_mom = calloc(nparams, sizeof(float));
        if (cfg->resume && file_exists(ckpt_path)) {
            checkpoint ck;
            if (ckpt_load(ckpt_path, &ck, err, sizeof err) != 0) {
                ok = 0;
            } else if (ck.kind != CKPT_FEDERATED || ck.config_crc != fp || ck.nparams != nparams) {
                snprintf(err, sizeof err, "%s was written by a run with different settings", ckpt_path);
                ok = 0;
                ckpt_free(&ck);
            } else {
                memcpy(global.params, ck.params, sizeof(float) * nparams);
                if (server_mom && ck.state) memcpy(server_mom, ck.state, sizeof(float) * nparams);
                start = (int)ck.steps_done;
                elapsed_before = ck.elapsed;
                ckpt_free(&ck);
                fprintf(stderr, "fedtrain: resuming federated training after round %d\n", start);
            }
            if (!ok) err_prefix = "--resume: ";
        }
        if (ok && mkdir_p(cfg->out_dir, err, sizeof err) != 0) ok = 0;
    }
    if (!all_ok(ok)) {
        if (is_server) fprintf(stderr, "fedtrain: %s%s\n", err_prefix, err);
        dataset_free(&test);
        layout_free(&L);
        mlp_free(&global);
        free(server_mom);
        return 2;
    }

    /* The protocol's own communicator: errors are returned, not fatal (an oversize frame from
     * a misbehaving client is refused, not a crash). */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    eval_sets es = {0};
    mlp_work we = {0};
    csvlog rlog = {0}, clog = {0};
    round_state rs = {0};
    int *shard_n = malloc(sizeof(int) * (size_t)L.nclients);
    for (int c = 0; c < L.nclients; c++) shard_n[c] = L.shards[c].n;
    if (is_server) {
        if (eval_sets_build(&test, &es) != 0 || mlp_work_create(&we, &global, 500) != 0) {
            fprintf(stderr, "fedtrain: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        csvlog_open(&rlog, rounds_csv,
                    "round,lr,test_loss,test_acc,transformed_acc,accepted,rejected,round_seconds,"
                    "bcast_seconds,gather_seconds,max_client_train_seconds,comm_seconds,"
                    "bytes_down,bytes_up,skipped",
                    cfg->resume ? start : -1);
        csvlog_open(&clog, clients_csv, "round,client,transform,samples,train_loss,train_acc,train_seconds,status",
                    cfg->resume ? start : -1);
        rs.status = calloc((size_t)L.nclients, 1);
        rs.answered = calloc((size_t)L.nclients, sizeof(uint32_t));
        rs.waiting = calloc((size_t)L.nclients, 1);
        rs.slots = calloc((size_t)L.nclients, sizeof(float *));
        rs.meta = calloc((size_t)L.nclients, sizeof(update_meta));
        rs.scratch = malloc(sizeof(float) * nparams);
        for (int c = 0; c < L.nclients; c++) rs.slots[c] = malloc(sizeof(float) * nparams);
    }
    dataset_free(&test);

    /* ---- working buffers for training hosted clients ---- */
    mlp local = {0};
    mlp_work w = {0};
    float *velocity = NULL;
    if (L.nhosted > 0) {
        local = global;
        local.params = malloc(sizeof(float) * nparams);
        if (cfg->momentum > 0) velocity = calloc(nparams, sizeof(float));
        if (!local.params || mlp_work_create(&w, &global, cfg->batch) != 0) {
            fprintf(stderr, "fedtrain: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    uint8_t *gframe = NULL, *uframe = NULL;
    size_t gcap = 0, ucap = 0, gbytes = 0;
    uint8_t *part = malloc((size_t)L.nclients);
    float *avg = malloc(sizeof(float) * nparams);
    const float **accepted = malloc(sizeof(float *) * (size_t)L.nclients);
    double *weights = malloc(sizeof(double) * (size_t)L.nclients);
    int *dests = malloc(sizeof(int) * (size_t)(ranks > 1 ? ranks : 1));
    gcap = cmsg_frame_bytes(sizeof(float) * nparams);
    gframe = malloc(gcap);
    int status = 0;
    double comm_total = 0, bytes_total = 0;

    /* ================================ clients ================================ */
    if (!is_server) {
        int round = start;
        for (;;) {
            if (cmsg_mpi_recv(&gframe, &gcap, &gbytes, 0, TAG_GLOBAL, comm, NULL) != MPI_SUCCESS) {
                fprintf(stderr, "fedtrain: rank %d: receive from the server failed\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            /* A rank that fell behind (stopped, slow) finds several models queued: only the
             * newest is worth training on; the server has skipped this rank meanwhile. */
            int stale = 0, found = 0;
            while (MPI_Iprobe(0, TAG_GLOBAL, comm, &found, MPI_STATUS_IGNORE) == MPI_SUCCESS && found) {
                if (cmsg_mpi_recv(&gframe, &gcap, &gbytes, 0, TAG_GLOBAL, comm, NULL) != MPI_SUCCESS) break;
                stale++;
            }
            if (stale)
                fprintf(stderr, "fedtrain: rank %d: fell behind, skipped %d stale global model(s)\n", rank, stale);
            cmsg_header gh;
            cmsg_status gst = cmsg_open(gframe, gbytes, FED_PROTO_VERSION, &gh);
            if (gst == CMSG_OK && gh.kind == MSG_STOP) break;
            int gok = gst == CMSG_OK && gh.kind == MSG_GLOBAL && gh.payload_bytes == sizeof(float) * nparams;
            if (gok)
                round = (int)gh.seq; /* clients follow the server's numbering */
            else {
                cmsg_header ph;
                round = cmsg_peek_header(gframe, gbytes, &ph) == CMSG_OK ? (int)ph.seq : round + 1;
                fprintf(stderr, "fedtrain: rank %d: unusable global model in round %d: %s\n", rank, round,
                        gst == CMSG_OK ? "wrong kind or size" : cmsg_status_str(gst));
            }
            select_clients(cfg, L.nclients, round, part);
            const float *gparams = (const float *)cmsg_payload(gframe);
            for (int h = 0; h < L.nhosted; h++) {
                int c = L.hosted[h];
                if (!part[c]) continue;
                size_t n;
                if (gok) {
                    n = client_update(cfg, &L, h, gparams, &local, &w, velocity, round, &uframe, &ucap);
                } else {
                    if (ucap < CMSG_HEADER_BYTES) {
                        uframe = realloc(uframe, CMSG_HEADER_BYTES);
                        ucap = CMSG_HEADER_BYTES;
                    }
                    n = cmsg_seal(uframe, FED_PROTO_VERSION, MSG_SKIP, (uint32_t)round, (uint32_t)c, 0);
                }
                cmsg_mpi_send(uframe, n, 0, TAG_UPDATE, comm);
            }
        }
    }

    /* ================================ server ================================ */
    cmsg_inbox *inbox = NULL;
    cmsg_outbox *outbox = NULL;
    if (is_server && ranks > 1) {
        inbox = cmsg_inbox_create(comm, TAG_UPDATE, update_frame_bytes(nparams));
        outbox = cmsg_outbox_create(comm, TAG_GLOBAL);
        if (!inbox || !outbox) {
            fprintf(stderr, "fedtrain: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (int round = start + 1; is_server && round <= cfg->rounds; round++) {
        double t_round = now_seconds();
        int nsel = select_clients(cfg, L.nclients, round, part);
        memset(rs.status, ST_NONE, (size_t)L.nclients);
        rs.round = (uint32_t)round;
        memset(rs.waiting, 0, (size_t)L.nclients);
        rs.accepted = rs.rejected = rs.skipped = 0;
        update_rules rules = {
            (uint32_t)round, L.nclients,          ranks, 0, nparams, shard_n, part, rs.answered, global.params,
            cfg->max_param,  cfg->max_update_norm};
        double t_bcast = 0, t_gather = 0, bytes_up = 0, bytes_down = 0;
        if (ranks == 1) {
            /* single process: the server trains every client itself, same frames, same checks */
            for (int h = 0; h < L.nhosted; h++) {
                int c = L.hosted[h];
                if (!part[c]) continue;
                size_t n = client_update(cfg, &L, h, global.params, &local, &w, velocity, round, &uframe, &ucap);
                server_take(cfg, &rules, &rs, uframe, n);
            }
        } else {
            /* -- publish the global model to every rank that has taken the previous one -- */
            memcpy(cmsg_payload(gframe), global.params, sizeof(float) * nparams);
            gbytes = cmsg_seal(gframe, FED_PROTO_VERSION, MSG_GLOBAL, (uint32_t)round, 0, sizeof(float) * nparams);
            double t0 = MPI_Wtime();
            cmsg_outbox_progress(outbox);
            int ndests = 0;
            for (int r = 1; r < ranks; r++) {
                if (!cmsg_outbox_busy(outbox, r)) {
                    dests[ndests++] = r;
                    continue;
                }
                for (int c = 0; c < L.nclients; c++)
                    if (part[c] && fed_host_rank(c, ranks) == r) {
                        rs.status[c] = ST_BUSY;
                        rs.skipped++;
                        fprintf(stderr,
                                "fedtrain: round %d: client %d skipped: rank %d has not taken "
                                "an earlier global model yet\n",
                                round, c, r);
                    }
            }
            if (cmsg_outbox_post(outbox, gframe, gbytes, dests, ndests) != MPI_SUCCESS) {
                fprintf(stderr, "fedtrain: round %d: sending the global model failed\n", round);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            bytes_down = (double)gbytes * ndests;
            for (int c = 0; c < L.nclients; c++) rs.waiting[c] = part[c] && rs.status[c] != ST_BUSY;
            double t1 = MPI_Wtime();
            t_bcast = t1 - t0;

            /* -- take updates until every expected client has answered or the deadline -- */
            double deadline = cfg->round_timeout > 0 ? t0 + cfg->round_timeout : -1;
            double notice = t1 + 60; /* without a deadline, say every minute who is missing */
            char who[512];
            cmsg_rx rx;
            while (still_waiting(&rs, L.nclients) > 0) {
                double wake = deadline >= 0 && deadline < notice ? deadline : notice;
                cmsg_rx_status st = cmsg_inbox_next(inbox, wake, &rx);
                if (st == CMSG_RX_TIMEOUT) {
                    if (deadline >= 0 && MPI_Wtime() >= deadline) break;
                    list_waiting(&rs, L.nclients, who, sizeof who);
                    fprintf(stderr,
                            "fedtrain: round %d: still waiting for client(s) %s after %.0f s "
                            "(--round-timeout sets a deadline)\n",
                            round, who, MPI_Wtime() - t0);
                    notice = MPI_Wtime() + 60;
                    continue;
                }
                if (st == CMSG_RX_FRAME) {
                    bytes_up += (double)rx.bytes;
                    rules.from_rank = rx.from;
                    server_take(cfg, &rules, &rs, rx.frame, rx.bytes);
                } else {
                    rs.rejected++;
                    fprintf(stderr, "fedtrain: round %d: rejected update from rank %d: %s\n", round, rx.from,
                            st == CMSG_RX_OVERSIZE ? "frame larger than an update (discarded)" : "receive failed");
                }
            }
            /* what has already arrived belongs to this round too (e.g. a duplicate) */
            cmsg_rx_status st;
            while ((st = cmsg_inbox_next(inbox, 0, &rx)) != CMSG_RX_TIMEOUT) {
                if (st == CMSG_RX_FRAME) {
                    bytes_up += (double)rx.bytes;
                    rules.from_rank = rx.from;
                    server_take(cfg, &rules, &rs, rx.frame, rx.bytes);
                } else {
                    rs.rejected++;
                    fprintf(stderr, "fedtrain: round %d: rejected update from rank %d: %s\n", round, rx.from,
                            st == CMSG_RX_OVERSIZE ? "frame larger than an update (discarded)" : "receive failed");
                }
            }
            for (int c = 0; c < L.nclients; c++)
                if (rs.waiting[c] && rs.answered[c] != rs.round) {
                    rs.status[c] = ST_TIMEOUT;
                    rs.skipped++;
                }
            if (deadline >= 0 && still_waiting(&rs, L.nclients)) {
                list_waiting(&rs, L.nclients, who, sizeof who);
                fprintf(stderr,
                        "fedtrain: round %d: no answer from client(s) %s within --round-timeout "
                        "%g s: skipped this round\n",
                        round, who, cfg->round_timeout);
            }
            t_gather = MPI_Wtime() - t1;
        }

        /* -- combine accepted updates in client order -- */
        int k = 0;
        double max_train = 0;
        for (int c = 0; c < L.nclients; c++) {
            if (rs.status[c] != ST_ACCEPTED) continue;
            if (cfg->clip_norm > 0) aggregate_clip(rs.slots[c], global.params, nparams, cfg->clip_norm);
            accepted[k] = rs.slots[c];
            weights[k] = rs.meta[c].n_samples;
            if (rs.meta[c].train_seconds > max_train) max_train = rs.meta[c].train_seconds;
            k++;
        }
        if (k > 0) {
            if (cfg->robust == ROBUST_MEDIAN)
                aggregate_median(accepted, k, nparams, avg);
            else if (cfg->robust == ROBUST_TRIMMED)
                aggregate_trimmed_mean(accepted, k, nparams, cfg->trim, avg);
            else
                aggregate_mean(accepted, cfg->aggregator != AGG_FEDAVG ? weights : NULL, k, nparams, avg);
            aggregate_server_step(cfg->aggregator, global.params, avg, server_mom, cfg->server_momentum, cfg->server_lr,
                                  nparams);
        } else {
            fprintf(stderr, "fedtrain: round %d: no usable update, global model unchanged\n", round);
        }
        eval_result et, ex;
        evaluate(&global, &we, &es.clean, &et);
        evaluate(&global, &we, &es.transformed, &ex);
        double round_s = now_seconds() - t_round;
        /* Communication time: sending plus the part of the gather not explained by the
         * slowest client's training (an estimate; clients share cores when oversubscribed). */
        double comm_s = t_bcast + (ranks > 1 && t_gather > max_train ? t_gather - max_train : 0);
        comm_total += comm_s;
        bytes_total += bytes_down + bytes_up;
        tb_printf(&rlog.buf, "%d,%.6g,%.6f,%.6f,%.6f,%d,%d,%.4f,%.6f,%.4f,%.4f,%.6f,%.0f,%.0f,%d\n", round,
                  round_lr(cfg, round), et.loss, et.acc, ex.acc, rs.accepted, rs.rejected, round_s, t_bcast, t_gather,
                  max_train, comm_s, bytes_down, bytes_up, rs.skipped);
        for (int c = 0; c < L.nclients; c++) {
            if (!part[c]) continue;
            const update_meta *m = &rs.meta[c];
            if (rs.status[c] == ST_ACCEPTED)
                tb_printf(&clog.buf, "%d,%d,%s,%u,%.6f,%.6f,%.4f,accepted\n", round, c,
                          transform_name(L.shards[c].transform), m->n_samples, m->train_loss, m->train_acc,
                          m->train_seconds);
            else
                tb_printf(&clog.buf, "%d,%d,%s,%d,,,,%s\n", round, c, transform_name(L.shards[c].transform),
                          L.shards[c].n, status_name[rs.status[c] == ST_NONE ? ST_REJECTED : rs.status[c]]);
        }
        checkpoint ck = {CKPT_FEDERATED,
                         (uint32_t)round,
                         fp,
                         global.nlayers,
                         {0},
                         nparams,
                         global.params,
                         server_mom,
                         elapsed_before + now_seconds() - t_start};
        memcpy(ck.sizes, global.sizes, sizeof ck.sizes);
        if (csvlog_flush(&rlog, err, sizeof err) || csvlog_flush(&clog, err, sizeof err) ||
            ckpt_save(ckpt_path, &ck, err, sizeof err)) {
            fprintf(stderr, "fedtrain: %s\n", err);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (!cfg->quiet)
            fprintf(stderr,
                    "round %3d/%d  clients %d/%d ok (%d rejected, %d skipped)  test %.4f  transformed %.4f  "
                    "%.2fs (comm %.3fs, %.1f MB)\n",
                    round, cfg->rounds, rs.accepted, nsel, rs.rejected, rs.skipped, et.acc, ex.acc, round_s, comm_s,
                    (bytes_down + bytes_up) / 1e6);
        if (cfg->kill_after == round) raise(SIGKILL); /* testing hook: die like a killed job */
    }

    if (is_server) {
        summary_update u = {0};
        u.mode = MODE_FEDERATED;
        experiment_final_eval(&global, &es, &u);
        u.config = config_to_json(cfg, L.nclients, ranks);
        u.seconds = elapsed_before + now_seconds() - t_start;
        cJSON *cj = cJSON_AddObjectToObject(u.section, "communication");
        cJSON_AddNumberToObject(cj, "model_parameters", (double)nparams);
        cJSON_AddNumberToObject(cj, "frame_bytes", (double)cmsg_frame_bytes(sizeof(float) * nparams));
        cJSON_AddNumberToObject(cj, "bytes_total_this_session", bytes_total);
        cJSON_AddNumberToObject(cj, "comm_seconds_this_session", comm_total);
        cJSON *cl = cJSON_AddArrayToObject(u.section, "clients");
        for (int c = 0; c < L.nclients; c++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "client", c);
            cJSON_AddNumberToObject(o, "samples", L.shards[c].n);
            cJSON_AddStringToObject(o, "transform", transform_name(L.shards[c].transform));
            cJSON_AddItemToArray(cl, o);
        }
        checkpoint ck = {CKPT_MODEL, (uint32_t)cfg->rounds, fp, global.nlayers, {0}, nparams, global.params, NULL,
                         0.0}; /* no timing: equal models give equal files */
        memcpy(ck.sizes, global.sizes, sizeof ck.sizes);
        if (ckpt_save(model_path, &ck, err, sizeof err) != 0 || summary_write(cfg->out_dir, &u, err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: %s\n", err);
            status = 2;
        } else {
            fprintf(stderr, "FEDERATED_TEST %.4f  FEDERATED_TRANSFORMED %.4f  (%.1fs, %d ranks)  -> %s/summary.json\n",
                    u.acc_test, u.acc_transformed, u.seconds, ranks, cfg->out_dir);
        }
        csvlog_close(&rlog);
        csvlog_close(&clog);
        if (ranks > 1) {
            /* Results are written; now stop the clients. A rank that fell behind first gets
             * its queued model, trains and answers (dropped as late), then the stop. */
            gbytes = cmsg_seal(gframe, FED_PROTO_VERSION, MSG_STOP, (uint32_t)cfg->rounds + 1, 0, 0);
            int ndests = 0;
            for (int r = 1; r < ranks; r++) dests[ndests++] = r;
            cmsg_outbox_post(outbox, gframe, gbytes, dests, ndests);
            double limit = cfg->round_timeout > 0 ? (cfg->round_timeout > 10 ? cfg->round_timeout : 10) : -1;
            double deadline = limit > 0 ? MPI_Wtime() + limit : -1;
            cmsg_rx rx;
            while (cmsg_outbox_progress(outbox) > 0) {
                double wake = MPI_Wtime() + 0.05;
                if (deadline >= 0 && MPI_Wtime() >= deadline) break;
                if (cmsg_inbox_next(inbox, wake, &rx) == CMSG_RX_FRAME)
                    fprintf(stderr, "fedtrain: late update from rank %d after the last round: dropped\n", rx.from);
            }
            int left = cmsg_outbox_progress(outbox);
            if (left > 0) {
                fprintf(stderr,
                        "fedtrain: %d client rank(s) did not take the stop message within %g s "
                        "(stopped or hung); the results in %s are complete; ending the job\n",
                        left, limit, cfg->out_dir);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        eval_sets_free(&es);
        mlp_work_free(&we);
        for (int c = 0; c < L.nclients; c++) free(rs.slots[c]);
        free(rs.slots);
        free(rs.scratch);
        free(rs.status);
        free(rs.answered);
        free(rs.waiting);
        free(rs.meta);
    }
    cmsg_inbox_free(inbox);
    cmsg_outbox_free(outbox);
    MPI_Comm_free(&comm);
    free(shard_n);
    free(dests);
    free(local.params);
    mlp_work_free(&w);
    free(velocity);
    free(gframe);
    free(uframe);
    free(part);
    free(avg);
    free(accepted);
    free(weights);
    free(server_mom);
    mlp_free(&global);
    layout_free(&L);
    return status;
}
