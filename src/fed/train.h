/* Training epochs and evaluation of an MLP on an in-memory data set. */
#ifndef FED_TRAIN_H
#define FED_TRAIN_H

#include "dataset.h"
#include "metrics.h"
#include "mlp.h"
#include "optim.h"

#include <stdint.h>

typedef struct {
    double loss;  /* mean loss of the last epoch */
    double acc;   /* training accuracy of the last epoch (running, as in the paper) */
    long samples; /* sample-steps over all epochs */
    double seconds;
} train_stats;

/* Runs `epochs` epochs of shuffled mini-batch SGD. velocity (nparams) may be NULL when
 * momentum is 0; prox_ref is the FedProx anchor or NULL. The shuffles derive from seed. */
int train_epochs(mlp *m, mlp_work *w, const dataset *d, int epochs, int batch, const sgd_config *opt, float *velocity,
                 const float *prox_ref, uint64_t seed, train_stats *out);

typedef struct {
    double loss, acc;
    confusion cm;
} eval_result;

/* Evaluates in batches of w->cap; fills the confusion matrix too. */
int evaluate(const mlp *m, mlp_work *w, const dataset *d, eval_result *out);

#endif
