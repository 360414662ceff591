/* What central and federated runs share: loading the data named by the configuration,
 * building the evaluation sets, and the final evaluation written to summary.json. */
#ifndef FED_EXPERIMENT_H
#define FED_EXPERIMENT_H

#include "config.h"
#include "dataset.h"
#include "summary.h"
#include "train.h"

typedef struct {
    dataset clean;            /* test set as is */
    dataset transformed;      /* six parts, one transform each */
    dataset per_tf[TF_COUNT]; /* whole test set under each transform */
} eval_sets;

/* Resolves --data / explicit paths (writing them back into cfg), loads and truncates. */
int experiment_load(fed_config *cfg, dataset *train, dataset *test, char *err, size_t errlen);
int eval_sets_build(const dataset *test, eval_sets *s);
void eval_sets_free(eval_sets *s);

/* Evaluates the final model on all sets; fills *u (section, per_transform, accuracies). */
int experiment_final_eval(const mlp *m, const eval_sets *s, summary_update *u);

/* Caps the BLAS library at `threads` threads in this process (ranks share few cores). */
void blas_set_threads(int threads);

#endif
