#include "experiment.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void blas_set_threads(int threads) { openblas_set_num_threads(threads); }

int experiment_load(fed_config *cfg, dataset *train, dataset *test, char *err, size_t errlen) {
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (data_find_files(cfg->data_dir, &cfg->paths, err, errlen) != 0) return -1;
    if (dataset_load(cfg->paths.train_images, cfg->paths.train_labels, (uint32_t)cfg->limit_train, train, err,
                     errlen) != 0)
        return -1;
    if (dataset_load(cfg->paths.test_images, cfg->paths.test_labels, (uint32_t)cfg->limit_test, test, err, errlen) !=
        0) {
        dataset_free(train);
        return -1;
    }
    if (train->dim != test->dim || train->rows != test->rows) {
        snprintf(err, errlen, "%s is %dx%d but %s is %dx%d", cfg->paths.train_images, train->rows, train->cols,
                 cfg->paths.test_images, test->rows, test->cols);
        goto fail;
    }
    if (train->dim != cfg->sizes[0]) {
        snprintf(err, errlen, "--layers: input size %d does not match the %dx%d images of %s", cfg->sizes[0],
                 train->rows, train->cols, cfg->paths.train_images);
        goto fail;
    }
    /* --limit-train/--limit-test were applied while loading (reading stops there) */
    if (cfg->normalize) {
        /* One scalar mean and std over all training pixels: unchanged by the rotations and
         * flips, so every client would compute (nearly) the same pair from its own shard. */
        double s = 0, s2 = 0;
        size_t n = (size_t)train->n * train->dim;
        for (size_t i = 0; i < n; i++) {
            s += train->x[i];
            s2 += (double)train->x[i] * train->x[i];
        }
        double mean = s / (double)n, var = s2 / (double)n - mean * mean;
        float inv = var > 1e-12 ? (float)(1.0 / sqrt(var)) : 1.0f, mu = (float)mean;
        for (size_t i = 0; i < n; i++) train->x[i] = (train->x[i] - mu) * inv;
        size_t nt = (size_t)test->n * test->dim;
        for (size_t i = 0; i < nt; i++) test->x[i] = (test->x[i] - mu) * inv;
    }
    return 0;
fail:
    dataset_free(train);
    dataset_free(test);
    return -1;
}

int eval_sets_build(const dataset *test, eval_sets *s) {
    memset(s, 0, sizeof *s);
    if (dataset_gather(test, NULL, NULL, test->n, &s->clean) != 0) return -1;
    if (dataset_transformed_test(test, &s->transformed) != 0) return -1;
    for (int t = 0; t < TF_COUNT; t++)
        if (dataset_with_transform(test, t, &s->per_tf[t]) != 0) return -1;
    return 0;
}

void eval_sets_free(eval_sets *s) {
    dataset_free(&s->clean);
    dataset_free(&s->transformed);
    for (int t = 0; t < TF_COUNT; t++) dataset_free(&s->per_tf[t]);
}

int experiment_final_eval(const mlp *m, const eval_sets *s, summary_update *u) {
    mlp_work w;
    if (mlp_work_create(&w, m, 500) != 0) return -1;
    const char *mode = mode_name(u->mode);
    eval_result tf;
    evaluate(m, &w, &s->clean, &u->test);
    evaluate(m, &w, &s->transformed, &tf);
    u->acc_test = u->test.acc;
    u->acc_transformed = tf.acc;
    u->section = cJSON_CreateObject();
    cJSON *ev = cJSON_AddObjectToObject(u->section, "evaluations");
    char key[64];
    snprintf(key, sizeof key, "%s_test", mode);
    cJSON_AddItemToObject(ev, key, eval_to_json(&u->test));
    snprintf(key, sizeof key, "%s_transformed", mode);
    cJSON_AddItemToObject(ev, key, eval_to_json(&tf));
    u->per_transform = cJSON_CreateObject();
    cJSON *ptf_detail = cJSON_AddObjectToObject(u->section, "per_transform_metrics");
    for (int t = 0; t < TF_COUNT; t++) {
        eval_result r;
        evaluate(m, &w, &s->per_tf[t], &r);
        cJSON_AddNumberToObject(u->per_transform, transform_name(t), r.acc);
        class_metrics cm;
        metrics_compute(&r.cm, &cm);
        cJSON *e = cJSON_AddObjectToObject(ptf_detail, transform_name(t));
        cJSON_AddNumberToObject(e, "accuracy", cm.accuracy);
        cJSON_AddNumberToObject(e, "micro_f1", cm.micro_f1);
        cJSON_AddNumberToObject(e, "macro_f1", cm.macro_f1);
    }
    mlp_work_free(&w);
    return 0;
}
