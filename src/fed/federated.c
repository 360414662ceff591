/* fedtrain federated: server (rank 0) and clients (ranks 1..) exchanging framed models.
 *
 * Round r: the server broadcasts MSG_GLOBAL(seq=r, params); every participating client
 * trains its copy for local_epochs and sends MSG_UPDATE(seq=r, meta + params) back; the
 * server validates each frame (checksum, version, size, NaN/Inf), aggregates the accepted
 * ones in client order (deterministic), evaluates, logs and checkpoints. MSG_STOP ends. */
#include "federated.h"

#include "../mpi/msgframe.h"
#include "../mpi/msgmpi.h"
#include "checkpoint.h"
#include "experiment.h"
#include "fileio.h"
#include "rng.h"

#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PROTO_VERSION = 1 };
enum { MSG_GLOBAL = 1, MSG_UPDATE = 2, MSG_SKIP = 3, MSG_STOP = 4 };
enum { TAG_UPDATE = 17 };

/* Update payload: this meta block, then nparams floats. */
typedef struct {
    uint32_t client, n_samples, nparams, reserved;
    float train_loss, train_acc, train_seconds, lr;
} update_meta;

typedef struct {
    int nclients, ranks, rank;
    client_shard *shards;
    int *hosted;      /* clients this rank trains */
    int nhosted;
    dataset *local;   /* local data per hosted client (index into hosted[]) */
} fed_layout;

static int host_rank(int client, int ranks) { return ranks == 1 ? 0 : 1 + client % (ranks - 1); }

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

static float round_lr(const fed_config *cfg, int round) {
    return cfg->lr * powf(cfg->lr_decay, (float)(round - 1));
}

/* Trains one client on the global model and writes a sealed update frame into *frame. */
static size_t client_update(const fed_config *cfg, const fed_layout *L, int h, const float *global,
                            mlp *local, mlp_work *w, float *velocity, int round, uint8_t **frame,
                            size_t *cap) {
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
    size_t payload = sizeof(update_meta) + sizeof(float) * np;
    size_t need = cmsg_frame_bytes(payload);
    if (*cap < need) {
        uint8_t *nb = realloc(*frame, need);
        if (!nb) return 0;
        *frame = nb;
        *cap = need;
    }
    update_meta meta = {(uint32_t)c, (uint32_t)d->n, (uint32_t)np, 0, (float)ts.loss,
                        (float)ts.acc, (float)ts.seconds, opt.lr};
    uint8_t *p = cmsg_payload(*frame);
    memcpy(p, &meta, sizeof meta);
    memcpy(p + sizeof meta, local->params, sizeof(float) * np);
    if (faulty && (cfg->fault == FAULT_NAN || cfg->fault == FAULT_INF)) {
        float bad = cfg->fault == FAULT_NAN ? NAN : INFINITY;
        memcpy(p + sizeof meta + sizeof(float) * (np / 2), &bad, sizeof bad);
    }
    size_t n = cmsg_seal(*frame, PROTO_VERSION, MSG_UPDATE, (uint32_t)round, (uint32_t)c, payload);
    if (faulty && cfg->fault == FAULT_CHECKSUM) (*frame)[n - 1] ^= 0x40; /* corrupt in transit */
    return n;
}

/* Per-round bookkeeping on the server. */
typedef struct {
    uint8_t *received;   /* per client: update accepted this round */
    float **slots;       /* per client: accepted parameters */
    update_meta *meta;
    int accepted, rejected;
} round_state;

static void server_take(const fed_config *cfg, int round, const uint8_t *part, size_t nparams,
                        round_state *rs, const uint8_t *frame, size_t bytes, int from_rank,
                        int nclients) {
    cmsg_header h;
    cmsg_status st = cmsg_open(frame, bytes, PROTO_VERSION, &h);
    const char *why = NULL;
    int client = -1;
    update_meta meta = {0};
    if (st != CMSG_OK) why = cmsg_status_str(st);
    else if (h.kind == MSG_SKIP) why = "client could not use the global model";
    else if (h.kind != MSG_UPDATE) why = "unexpected message kind";
    else if (h.seq != (uint32_t)round) why = "update for another round";
    else if (h.payload_bytes < sizeof meta) why = "payload too short";
    else {
        memcpy(&meta, cmsg_payload((uint8_t *)frame), sizeof meta);
        client = (int)meta.client;
        size_t nfloat = (size_t)(h.payload_bytes - sizeof meta) / sizeof(float);
        if (client < 0 || client >= nclients || (uint32_t)client != h.sender) {
            why = "unknown client id";
            client = -1;
        } else if (!part[client]) why = "client was not selected this round";
        else if (rs->received[client]) why = "duplicate update";
        else if (meta.nparams != nfloat || (h.payload_bytes - sizeof meta) % sizeof(float))
            why = "inconsistent parameter count";
        else {
            const float *src = (const float *)(cmsg_payload((uint8_t *)frame) + sizeof meta);
            memcpy(rs->slots[client], src, sizeof(float) * (nfloat < nparams ? nfloat : nparams));
            why = update_check(rs->slots[client], nfloat, nparams);
        }
    }
    if (why) {
        rs->rejected++;
        if (client >= 0) rs->received[client] = 2;
        fprintf(stderr, "fedtrain: round %d: rejected update from %s %d: %s\n", round,
                client >= 0 ? "client" : "rank", client >= 0 ? client : from_rank, why);
        (void)cfg;
        return;
    }
    rs->received[client] = 1;
    rs->meta[client] = meta;
    rs->accepted++;
}

static int layout_build(const fed_config *cfg, fed_layout *L, dataset *train, char *err,
                        size_t errlen) {
    L->shards = calloc((size_t)L->nclients, sizeof(client_shard));
    L->hosted = calloc((size_t)L->nclients, sizeof(int));
    L->local = calloc((size_t)L->nclients, sizeof(dataset));
    if (!L->shards || !L->hosted || !L->local) return -1;
    if (partition_make(&cfg->partition, train, L->nclients, cfg->seed, L->shards, err, errlen) != 0)
        return -1;
    for (int c = 0; c < L->nclients; c++) {
        if (host_rank(c, L->ranks) != L->rank) continue;
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
        layout_free(&L);
        mlp_free(&global);
        free(server_mom);
        return 2;
    }

    eval_sets es = {0};
    mlp_work we = {0};
    csvlog rlog = {0}, clog = {0};
    round_state rs = {0};
    if (is_server) {
        if (eval_sets_build(&test, &es) != 0 || mlp_work_create(&we, &global, 500) != 0) {
            fprintf(stderr, "fedtrain: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        csvlog_open(&rlog, rounds_csv,
                    "round,lr,test_loss,test_acc,transformed_acc,accepted,rejected,round_seconds,"
                    "bcast_seconds,gather_seconds,max_client_train_seconds,comm_seconds,"
                    "bytes_down,bytes_up",
                    cfg->resume ? start : -1);
        csvlog_open(&clog, clients_csv,
                    "round,client,transform,samples,train_loss,train_acc,train_seconds,status",
                    cfg->resume ? start : -1);
        rs.received = calloc((size_t)L.nclients, 1);
        rs.slots = calloc((size_t)L.nclients, sizeof(float *));
        rs.meta = calloc((size_t)L.nclients, sizeof(update_meta));
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
    if (is_server) {
        gcap = cmsg_frame_bytes(sizeof(float) * nparams);
        gframe = malloc(gcap);
    }
    int status = 0;
    double comm_total = 0, bytes_total = 0;

    for (int round = start + 1;; round++) {
        /* -- server: publish the global model (or the stop message) -- */
        double t_round = now_seconds();
        int stop = round > cfg->rounds;
        if (is_server) {
            if (stop) gbytes = cmsg_seal(gframe, PROTO_VERSION, MSG_STOP, (uint32_t)round, 0, 0);
            else {
                memcpy(cmsg_payload(gframe), global.params, sizeof(float) * nparams);
                gbytes = cmsg_seal(gframe, PROTO_VERSION, MSG_GLOBAL, (uint32_t)round, 0,
                                   sizeof(float) * nparams);
            }
        }
        double t0 = now_seconds();
        if (ranks > 1) cmsg_mpi_bcast(&gframe, &gcap, &gbytes, 0, MPI_COMM_WORLD);
        double t_bcast = now_seconds() - t0;

        /* -- clients: check the frame, train, send -- */
        cmsg_header gh;
        cmsg_status gst = cmsg_open(gframe, gbytes, PROTO_VERSION, &gh);
        if (gst == CMSG_OK && gh.kind == MSG_STOP) break;
        int gok = gst == CMSG_OK && gh.kind == MSG_GLOBAL && gh.payload_bytes == sizeof(float) * nparams;
        if (!gok && !is_server)
            fprintf(stderr, "fedtrain: rank %d: unusable global model in round %d: %s\n", rank, round,
                    gst == CMSG_OK ? "wrong kind or size" : cmsg_status_str(gst));
        if (!is_server && gok) round = (int)gh.seq; /* clients follow the server's numbering */
        int nsel = select_clients(cfg, L.nclients, round, part);
        const float *gparams = (const float *)cmsg_payload(gframe);
        if (is_server) {
            memset(rs.received, 0, (size_t)L.nclients);
            rs.accepted = rs.rejected = 0;
        }
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
                n = cmsg_seal(uframe, PROTO_VERSION, MSG_SKIP, (uint32_t)round, (uint32_t)c, 0);
            }
            if (is_server) server_take(cfg, round, part, nparams, &rs, uframe, n, 0, L.nclients);
            else cmsg_mpi_send(uframe, n, 0, TAG_UPDATE, MPI_COMM_WORLD);
        }
        if (!is_server) continue;

        /* -- server: collect the updates of remote clients -- */
        int remote = 0;
        for (int c = 0; c < L.nclients; c++) remote += part[c] && host_rank(c, ranks) != 0;
        double bytes_up = 0;
        double t1 = now_seconds();
        for (int i = 0; i < remote; i++) {
            size_t n;
            int from;
            if (cmsg_mpi_recv(&uframe, &ucap, &n, MPI_ANY_SOURCE, TAG_UPDATE, MPI_COMM_WORLD, &from) != MPI_SUCCESS) {
                fprintf(stderr, "fedtrain: round %d: receive failed\n", round);
                rs.rejected++;
                continue;
            }
            bytes_up += (double)n;
            server_take(cfg, round, part, nparams, &rs, uframe, n, from, L.nclients);
        }
        double t_gather = now_seconds() - t1;

        /* -- aggregate accepted updates in client order -- */
        int k = 0;
        double max_train = 0;
        for (int c = 0; c < L.nclients; c++) {
            if (rs.received[c] != 1) continue;
            accepted[k] = rs.slots[c];
            weights[k] = rs.meta[c].n_samples;
            if (rs.meta[c].train_seconds > max_train) max_train = rs.meta[c].train_seconds;
            k++;
        }
        if (k > 0) {
            int weighted = cfg->aggregator != AGG_FEDAVG;
            aggregate_mean(accepted, weighted ? weights : NULL, k, nparams, avg);
            aggregate_server_step(cfg->aggregator, global.params, avg, server_mom,
                                  cfg->server_momentum, cfg->server_lr, nparams);
        } else {
            fprintf(stderr, "fedtrain: round %d: no usable update, global model unchanged\n", round);
        }
        eval_result et, ex;
        evaluate(&global, &we, &es.clean, &et);
        evaluate(&global, &we, &es.transformed, &ex);
        double round_s = now_seconds() - t_round;
        double bytes_down = ranks > 1 ? (double)gbytes * (ranks - 1) : 0;
        /* Communication time: the broadcast plus the part of the gather not explained by the
         * slowest client's training (an estimate; clients share cores when oversubscribed). */
        double comm = t_bcast + (ranks > 1 && t_gather > max_train ? t_gather - max_train : 0);
        comm_total += comm;
        bytes_total += bytes_down + bytes_up;
        tb_printf(&rlog.buf, "%d,%.6g,%.6f,%.6f,%.6f,%d,%d,%.4f,%.6f,%.4f,%.4f,%.6f,%.0f,%.0f\n", round,
                  round_lr(cfg, round), et.loss, et.acc, ex.acc, rs.accepted, rs.rejected, round_s,
                  t_bcast, t_gather, max_train, comm, bytes_down, bytes_up);
        for (int c = 0; c < L.nclients; c++) {
            if (!part[c]) continue;
            const update_meta *m = &rs.meta[c];
            if (rs.received[c] == 1)
                tb_printf(&clog.buf, "%d,%d,%s,%u,%.6f,%.6f,%.4f,accepted\n", round, c,
                          transform_name(L.shards[c].transform), m->n_samples, m->train_loss,
                          m->train_acc, m->train_seconds);
            else
                tb_printf(&clog.buf, "%d,%d,%s,%d,,,,rejected\n", round, c,
                          transform_name(L.shards[c].transform), L.shards[c].n);
        }
        checkpoint ck = {CKPT_FEDERATED, (uint32_t)round, fp, global.nlayers, {0}, nparams,
                         global.params, server_mom, elapsed_before + now_seconds() - t_start};
        memcpy(ck.sizes, global.sizes, sizeof ck.sizes);
        if (csvlog_flush(&rlog, err, sizeof err) || csvlog_flush(&clog, err, sizeof err) ||
            ckpt_save(ckpt_path, &ck, err, sizeof err)) {
            fprintf(stderr, "fedtrain: %s\n", err);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (!cfg->quiet)
            fprintf(stderr,
                    "round %3d/%d  clients %d/%d ok (%d rejected)  test %.4f  transformed %.4f  "
                    "%.2fs (comm %.3fs, %.1f MB)\n",
                    round, cfg->rounds, rs.accepted, nsel, rs.rejected, et.acc, ex.acc, round_s,
                    comm, (bytes_down + bytes_up) / 1e6);
        if (cfg->kill_after == round) raise(SIGKILL); /* testing hook: die like a killed job */
    }

    if (is_server) {
        summary_update u = {0};
        u.mode = MODE_FEDERATED;
        experiment_final_eval(&global, &es, &u);
        u.config = config_to_json(cfg, L.nclients, ranks);
        u.seconds = elapsed_before + now_seconds() - t_start;
        cJSON *comm = cJSON_AddObjectToObject(u.section, "communication");
        cJSON_AddNumberToObject(comm, "model_parameters", (double)nparams);
        cJSON_AddNumberToObject(comm, "frame_bytes", (double)cmsg_frame_bytes(sizeof(float) * nparams));
        cJSON_AddNumberToObject(comm, "bytes_total_this_session", bytes_total);
        cJSON_AddNumberToObject(comm, "comm_seconds_this_session", comm_total);
        cJSON *cl = cJSON_AddArrayToObject(u.section, "clients");
        for (int c = 0; c < L.nclients; c++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "client", c);
            cJSON_AddNumberToObject(o, "samples", L.shards[c].n);
            cJSON_AddStringToObject(o, "transform", transform_name(L.shards[c].transform));
            cJSON_AddItemToArray(cl, o);
        }
        checkpoint ck = {CKPT_MODEL, (uint32_t)cfg->rounds, fp, global.nlayers, {0}, nparams,
                         global.params, NULL, 0.0}; /* no timing: equal models give equal files */
        memcpy(ck.sizes, global.sizes, sizeof ck.sizes);
        if (ckpt_save(model_path, &ck, err, sizeof err) != 0 ||
            summary_write(cfg->out_dir, &u, err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: %s\n", err);
            status = 2;
        } else {
            fprintf(stderr,
                    "FEDERATED_TEST %.4f  FEDERATED_TRANSFORMED %.4f  (%.1fs, %d ranks)  -> %s/summary.json\n",
                    u.acc_test, u.acc_transformed, u.seconds, ranks, cfg->out_dir);
        }
        csvlog_close(&rlog);
        csvlog_close(&clog);
        eval_sets_free(&es);
        mlp_work_free(&we);
        for (int c = 0; c < L.nclients; c++) free(rs.slots[c]);
        free(rs.slots);
        free(rs.received);
        free(rs.meta);
    }
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
