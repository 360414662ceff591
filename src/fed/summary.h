/* RUN_DIR/summary.json: the paper's four accuracies, F1 scores, per-transform accuracy,
 * per-class metrics, confusion matrices and the full configuration. Central and federated
 * runs into the same RUN_DIR merge into one summary (each keeps its own section). */
#ifndef FED_SUMMARY_H
#define FED_SUMMARY_H

#include "config.h"
#include "train.h"

#include <cjson/cJSON.h>
#include <stddef.h>

cJSON *config_to_json(const fed_config *c, int nclients, int ranks);
/* accuracy, loss, F1s, per-class precision/recall/F1/support, confusion raw + normalised */
cJSON *eval_to_json(const eval_result *r);

typedef struct {
    run_mode mode; /* central or federated */
    double acc_test, acc_transformed;
    eval_result test;     /* clean test set: drives the top-level F1 keys */
    cJSON *section;       /* mode's full details; ownership passes to summary_write */
    cJSON *per_transform; /* object transform -> accuracy; ownership passes */
    cJSON *config;        /* ownership passes */
    double seconds;
} summary_update;

int summary_write(const char *out_dir, summary_update *u, char *err, size_t errlen);

#endif
