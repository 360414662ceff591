#include "summary.h"

#include "fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *config_to_json(const fed_config *c, int nclients, int ranks) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mode", mode_name(c->mode));
    cJSON_AddStringToObject(o, "preset", c->preset);
    cJSON *d = cJSON_AddObjectToObject(o, "data");
    cJSON_AddStringToObject(d, "dir", c->data_dir);
    cJSON_AddStringToObject(d, "train_images", c->paths.train_images);
    cJSON_AddStringToObject(d, "train_labels", c->paths.train_labels);
    cJSON_AddStringToObject(d, "test_images", c->paths.test_images);
    cJSON_AddStringToObject(d, "test_labels", c->paths.test_labels);
    cJSON_AddNumberToObject(d, "limit_train", c->limit_train);
    cJSON_AddNumberToObject(d, "limit_test", c->limit_test);
    cJSON_AddStringToObject(d, "normalize", c->normalize ? "standard" : "none");
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (int i = 0; i < c->nsizes; i++) cJSON_AddItemToArray(layers, cJSON_CreateNumber(c->sizes[i]));
    cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    cJSON_AddNumberToObject(o, "lr", c->lr);
    cJSON_AddNumberToObject(o, "lr_decay", c->lr_decay);
    cJSON_AddNumberToObject(o, "batch", c->batch);
    cJSON_AddNumberToObject(o, "momentum", c->momentum);
    cJSON_AddNumberToObject(o, "weight_decay", c->weight_decay);
    cJSON_AddNumberToObject(o, "blas_threads", c->threads);
    if (c->mode == MODE_CENTRAL) {
        cJSON_AddNumberToObject(o, "epochs", c->epochs);
        cJSON_AddStringToObject(o, "central_set", c->central_set);
    } else {
        cJSON_AddNumberToObject(o, "rounds", c->rounds);
        cJSON_AddNumberToObject(o, "local_epochs", c->local_epochs);
        cJSON_AddNumberToObject(o, "clients", nclients);
        cJSON_AddNumberToObject(o, "mpi_ranks", ranks);
        cJSON_AddStringToObject(o, "partition", c->partition_str);
        cJSON_AddStringToObject(o, "aggregator", aggregator_name(c->aggregator));
        cJSON_AddNumberToObject(o, "server_momentum", c->server_momentum);
        cJSON_AddNumberToObject(o, "server_lr", c->server_lr);
        cJSON_AddNumberToObject(o, "prox_mu", c->prox_mu);
        cJSON_AddNumberToObject(o, "client_fraction", c->client_fraction);
        cJSON_AddNumberToObject(o, "round_timeout", c->round_timeout);
        cJSON_AddStringToObject(o, "robust",
                                c->robust == ROBUST_MEDIAN    ? "median"
                                : c->robust == ROBUST_TRIMMED ? "trimmed"
                                                              : "mean");
        cJSON_AddNumberToObject(o, "trim", c->trim);
        cJSON_AddNumberToObject(o, "clip_norm", c->clip_norm);
        cJSON_AddNumberToObject(o, "max_param", c->max_param);
        cJSON_AddNumberToObject(o, "max_update_norm", c->max_update_norm);
    }
    return o;
}

cJSON *eval_to_json(const eval_result *r) {
    class_metrics m;
    metrics_compute(&r->cm, &m);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "accuracy", m.accuracy);
    cJSON_AddNumberToObject(o, "loss", r->loss);
    cJSON_AddNumberToObject(o, "samples", (double)r->cm.n);
    cJSON_AddNumberToObject(o, "macro_precision", m.macro_precision);
    cJSON_AddNumberToObject(o, "macro_recall", m.macro_recall);
    cJSON_AddNumberToObject(o, "macro_f1", m.macro_f1);
    cJSON_AddNumberToObject(o, "micro_f1", m.micro_f1);
    cJSON_AddNumberToObject(o, "weighted_f1", m.weighted_f1);
    cJSON *pc = cJSON_AddArrayToObject(o, "per_class");
    for (int k = 0; k < MET_CLASSES; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "class", k);
        cJSON_AddNumberToObject(e, "precision", m.precision[k]);
        cJSON_AddNumberToObject(e, "recall", m.recall[k]);
        cJSON_AddNumberToObject(e, "f1", m.f1[k]);
        cJSON_AddNumberToObject(e, "support", (double)m.support[k]);
        cJSON_AddItemToArray(pc, e);
    }
    double norm[MET_CLASSES][MET_CLASSES];
    confusion_normalize(&r->cm, norm);
    cJSON *raw = cJSON_AddArrayToObject(o, "confusion");
    cJSON *nrm = cJSON_AddArrayToObject(o, "confusion_normalized");
    for (int k = 0; k < MET_CLASSES; k++) {
        cJSON *rr = cJSON_CreateArray(), *nr = cJSON_CreateArray();
        for (int j = 0; j < MET_CLASSES; j++) {
            cJSON_AddItemToArray(rr, cJSON_CreateNumber((double)r->cm.cm[k][j]));
            cJSON_AddItemToArray(nr, cJSON_CreateNumber(norm[k][j]));
        }
        cJSON_AddItemToArray(raw, rr);
        cJSON_AddItemToArray(nrm, nr);
    }
    return o;
}

static void set_item(cJSON *o, const char *key, cJSON *v) {
    if (cJSON_HasObjectItem(o, key))
        cJSON_ReplaceItemInObject(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

int summary_write(const char *out_dir, summary_update *u, char *err, size_t errlen) {
    char path[1100];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    cJSON *root = NULL;
    char *old = read_file(path, NULL);
    if (old) {
        root = cJSON_Parse(old); /* keep the other mode's results */
        free(old);
        if (root && !cJSON_IsObject(root)) {
            cJSON_Delete(root);
            root = NULL;
        }
    }
    if (!root) root = cJSON_CreateObject();
    const char *mode = mode_name(u->mode);
    class_metrics m;
    metrics_compute(&u->test.cm, &m);
    set_item(root, "tool", cJSON_CreateString("fedtrain"));
    set_item(root, "mode", cJSON_CreateString(mode));
    char key[64];
    snprintf(key, sizeof key, "%s_test", mode);
    set_item(root, key, cJSON_CreateNumber(u->acc_test));
    snprintf(key, sizeof key, "%s_transformed", mode);
    set_item(root, key, cJSON_CreateNumber(u->acc_transformed));
    set_item(root, "per_transform", cJSON_Duplicate(u->per_transform, 1));
    set_item(root, "macro_f1", cJSON_CreateNumber(m.macro_f1));
    set_item(root, "micro_f1", cJSON_CreateNumber(m.micro_f1));
    set_item(root, "weighted_f1", cJSON_CreateNumber(m.weighted_f1));
    set_item(root, "seconds", cJSON_CreateNumber(u->seconds));
    set_item(root, "config", cJSON_Duplicate(u->config, 1));
    cJSON_AddItemToObject(u->section, "config", u->config);
    cJSON_AddItemToObject(u->section, "per_transform", u->per_transform);
    cJSON_AddNumberToObject(u->section, "seconds", u->seconds);
    set_item(root, mode, u->section);
    u->section = u->config = u->per_transform = NULL;
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t len = strlen(text);
    char *withnl = realloc(text, len + 2);
    if (withnl) {
        text = withnl;
        text[len++] = '\n';
        text[len] = 0;
    }
    int rc = write_file_atomic(path, text, len, err, errlen);
    free(text);
    return rc;
}
