/* fedtrain central: the paper's centralized baseline (80/20 train/validation split). */
#include "central.h"

#include "checkpoint.h"
#include "experiment.h"
#include "fileio.h"
#include "rng.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Training pool: the clean training set, or (--central-set paper) the six transformed
 * shards of the paper partition pooled together. */
static int build_pool(const fed_config *cfg, const dataset *train, dataset *pool, char *err, size_t errlen) {
    if (strcmp(cfg->central_set, "paper") != 0) return dataset_gather(train, NULL, NULL, train->n, pool);
    client_shard shards[TF_COUNT];
    partition_spec spec = {PART_PAPER, 0};
    if (partition_make(&spec, train, TF_COUNT, cfg->seed, shards, err, errlen) != 0) return -1;
    int total = 0;
    for (int c = 0; c < TF_COUNT; c++) total += shards[c].n;
    int *idx = malloc(sizeof(int) * (size_t)total), *tf = malloc(sizeof(int) * (size_t)total);
    int rc = -1;
    if (idx && tf) {
        int k = 0;
        for (int c = 0; c < TF_COUNT; c++)
            for (int i = 0; i < shards[c].n; i++, k++) {
                idx[k] = shards[c].idx[i];
                tf[k] = shards[c].transform;
            }
        rc = dataset_gather(train, idx, tf, total, pool);
    }
    free(idx);
    free(tf);
    partition_free(shards, TF_COUNT);
    return rc;
}

int run_central(fed_config *cfg) {
    char err[1400];
    double t_start = now_seconds();
    dataset train, test, pool, tr, val;
    if (experiment_load(cfg, &train, &test, err, sizeof err) != 0) {
        fprintf(stderr, "fedtrain: %s\n", err);
        return 2;
    }
    if (build_pool(cfg, &train, &pool, err, sizeof err) != 0) {
        fprintf(stderr, "fedtrain: %s\n", err);
        return 2;
    }
    dataset_free(&train);
    if (pool.n < 5) {
        fprintf(stderr, "fedtrain: training set too small for an 80/20 split (%d samples)\n", pool.n);
        return 2;
    }
    /* 80/20 split after a seeded shuffle */
    int *perm = malloc(sizeof(int) * (size_t)pool.n);
    if (!perm) return 2;
    for (int i = 0; i < pool.n; i++) perm[i] = i;
    rng_t r;
    rng_seed(&r, rng_mix(cfg->seed, 0xC3, 0));
    rng_shuffle_int(&r, perm, (size_t)pool.n);
    int n_val = pool.n / 5;
    if (dataset_gather(&pool, perm, NULL, pool.n - n_val, &tr) != 0 ||
        dataset_gather(&pool, perm + (pool.n - n_val), NULL, n_val, &val) != 0) {
        fprintf(stderr, "fedtrain: out of memory\n");
        return 2;
    }
    free(perm);
    dataset_free(&pool);
    eval_sets es;
    if (eval_sets_build(&test, &es) != 0) {
        fprintf(stderr, "fedtrain: out of memory\n");
        return 2;
    }

    mlp model;
    if (mlp_create(&model, cfg->sizes, cfg->nsizes, cfg->seed) != 0) {
        fprintf(stderr, "fedtrain: out of memory for the model\n");
        return 2;
    }
    float *velocity = cfg->momentum > 0 ? calloc(model.nparams, sizeof(float)) : NULL;
    uint32_t fp = config_fingerprint(cfg);
    char ckpt_path[1100], csv_path[1100], model_path[1100];
    snprintf(ckpt_path, sizeof ckpt_path, "%s/central.ckpt", cfg->out_dir);
    snprintf(csv_path, sizeof csv_path, "%s/central_epochs.csv", cfg->out_dir);
    snprintf(model_path, sizeof model_path, "%s/central_model.bin", cfg->out_dir);
    int start = 0;
    double elapsed_before = 0;
    if (cfg->resume && file_exists(ckpt_path)) {
        checkpoint ck;
        if (ckpt_load(ckpt_path, &ck, err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: --resume: %s\n", err);
            goto refused;
        }
        if (ck.kind != CKPT_CENTRAL || ck.config_crc != fp || ck.nparams != model.nparams) {
            fprintf(stderr, "fedtrain: --resume: %s was written by a run with different settings\n", ckpt_path);
            ckpt_free(&ck);
            goto refused;
        }
        memcpy(model.params, ck.params, sizeof(float) * model.nparams);
        if (velocity && ck.state) memcpy(velocity, ck.state, sizeof(float) * model.nparams);
        start = (int)ck.steps_done;
        elapsed_before = ck.elapsed;
        ckpt_free(&ck);
        fprintf(stderr, "fedtrain: resuming central training after epoch %d\n", start);
    }
    if (mkdir_p(cfg->out_dir, err, sizeof err) != 0) {
        fprintf(stderr, "fedtrain: --out %s\n", err);
        goto refused;
    }
    csvlog log;
    csvlog_open(&log, csv_path,
                "epoch,lr,train_loss,train_acc,val_loss,val_acc,test_loss,test_acc,transformed_acc,"
                "epoch_seconds,samples_per_second",
                cfg->resume ? start : -1);
    mlp_work w, we;
    if (mlp_work_create(&w, &model, cfg->batch) != 0 || mlp_work_create(&we, &model, 500) != 0) {
        fprintf(stderr, "fedtrain: out of memory\n");
        return 2;
    }
    int status = 0;
    for (int e = start + 1; e <= cfg->epochs; e++) {
        sgd_config opt = {cfg->lr * powf(cfg->lr_decay, (float)(e - 1)), cfg->momentum, cfg->weight_decay, 0.0f};
        train_stats ts;
        train_epochs(&model, &w, &tr, 1, cfg->batch, &opt, velocity, NULL, rng_mix(cfg->seed, 0xCE, (uint64_t)e), &ts);
        eval_result ev, et, ex;
        evaluate(&model, &we, &val, &ev);
        evaluate(&model, &we, &es.clean, &et);
        evaluate(&model, &we, &es.transformed, &ex);
        tb_printf(&log.buf, "%d,%.6g,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.0f\n", e, opt.lr, ts.loss, ts.acc,
                  ev.loss, ev.acc, et.loss, et.acc, ex.acc, ts.seconds, ts.seconds > 0 ? ts.samples / ts.seconds : 0.0);
        checkpoint ck = {CKPT_CENTRAL,  (uint32_t)e, fp,
                         model.nlayers, {0},         model.nparams,
                         model.params,  velocity,    elapsed_before + now_seconds() - t_start};
        memcpy(ck.sizes, model.sizes, sizeof ck.sizes);
        if (csvlog_flush(&log, err, sizeof err) != 0 || ckpt_save(ckpt_path, &ck, err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: %s\n", err);
            status = 2;
            break;
        }
        if (!cfg->quiet)
            fprintf(stderr,
                    "central epoch %3d/%d  train loss %.4f acc %.4f | val loss %.4f acc %.4f | test %.4f "
                    "transformed %.4f | %.2fs (%.0f samples/s)\n",
                    e, cfg->epochs, ts.loss, ts.acc, ev.loss, ev.acc, et.acc, ex.acc, ts.seconds,
                    ts.seconds > 0 ? ts.samples / ts.seconds : 0.0);
        if (cfg->kill_after == e) raise(SIGKILL); /* testing hook: die like a killed job */
    }
    if (status == 0) {
        summary_update u = {0};
        u.mode = MODE_CENTRAL;
        experiment_final_eval(&model, &es, &u);
        u.config = config_to_json(cfg, 0, 1);
        u.seconds = elapsed_before + now_seconds() - t_start;
        cJSON_AddNumberToObject(u.section, "train_samples", tr.n);
        cJSON_AddNumberToObject(u.section, "validation_samples", val.n);
        checkpoint ck = {CKPT_MODEL, (uint32_t)cfg->epochs, fp, model.nlayers, {0}, model.nparams, model.params, NULL,
                         0.0}; /* no timing: equal models give equal files */
        memcpy(ck.sizes, model.sizes, sizeof ck.sizes);
        if (ckpt_save(model_path, &ck, err, sizeof err) != 0 || summary_write(cfg->out_dir, &u, err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: %s\n", err);
            status = 2;
        } else {
            fprintf(stderr, "CENTRAL_TEST %.4f  CENTRAL_TRANSFORMED %.4f  (%.1fs)  -> %s/summary.json\n", u.acc_test,
                    u.acc_transformed, u.seconds, cfg->out_dir);
        }
    }
    csvlog_close(&log);
    mlp_work_free(&w);
    mlp_work_free(&we);
    mlp_free(&model);
    free(velocity);
    eval_sets_free(&es);
    dataset_free(&tr);
    dataset_free(&val);
    dataset_free(&test);
    return status;
refused: /* bad --resume or --out: nothing was written */
    mlp_free(&model);
    free(velocity);
    eval_sets_free(&es);
    dataset_free(&tr);
    dataset_free(&val);
    dataset_free(&test);
    return 2;
}
