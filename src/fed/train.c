#include "train.h"

#include "fileio.h"
#include "rng.h"

#include <stdlib.h>
#include <string.h>

int train_epochs(mlp *m, mlp_work *w, const dataset *d, int epochs, int batch,
                 const sgd_config *opt, float *velocity, const float *prox_ref, uint64_t seed,
                 train_stats *out) {
    memset(out, 0, sizeof *out);
    if (batch > w->cap) batch = w->cap;
    int *order = malloc(sizeof(int) * (size_t)(d->n > 0 ? d->n : 1));
    float *xb = malloc(sizeof(float) * (size_t)batch * d->dim);
    uint8_t *yb = malloc((size_t)batch);
    if (!order || !xb || !yb) {
        free(order); free(xb); free(yb);
        return -1;
    }
    rng_t r;
    rng_seed(&r, seed);
    /* Without weight decay or a proximal term the update can be fused into the gradient
     * GEMMs (see mlp_backward_into); the general path keeps a separate gradient. */
    int simple = opt->weight_decay == 0.0f && (opt->prox_mu == 0.0f || !prox_ref);
    int fused_momentum = simple && velocity && opt->momentum != 0.0f;
    int fused_plain = simple && opt->momentum == 0.0f;
    double t0 = now_seconds();
    for (int i = 0; i < d->n; i++) order[i] = i;
    for (int e = 0; e < epochs; e++) {
        rng_shuffle_int(&r, order, (size_t)d->n);
        double loss = 0.0;
        long hits = 0;
        for (int s = 0; s < d->n; s += batch) {
            int B = d->n - s < batch ? d->n - s : batch;
            for (int i = 0; i < B; i++) {
                memcpy(xb + (size_t)i * d->dim, d->x + (size_t)order[s + i] * d->dim,
                       sizeof(float) * d->dim);
                yb[i] = d->y[order[s + i]];
            }
            int correct = 0;
            mlp_forward(m, w, xb, B);
            if (fused_momentum) {
                loss += mlp_backward_into(m, w, xb, yb, B, &correct, velocity, 1.0f, opt->momentum);
                for (size_t i = 0; i < m->nparams; i++) m->params[i] -= opt->lr * velocity[i];
            } else if (fused_plain) {
                loss += mlp_backward_into(m, w, xb, yb, B, &correct, m->params, -opt->lr, 1.0f);
            } else {
                loss += mlp_backward(m, w, xb, yb, B, &correct);
                sgd_step(opt, m->params, velocity, w->grad, prox_ref, m->nparams);
            }
            hits += correct;
        }
        out->loss = d->n ? loss / d->n : 0.0;
        out->acc = d->n ? (double)hits / d->n : 0.0;
        out->samples += d->n;
    }
    out->seconds = now_seconds() - t0;
    free(order);
    free(xb);
    free(yb);
    return 0;
}

int evaluate(const mlp *m, mlp_work *w, const dataset *d, eval_result *out) {
    memset(out, 0, sizeof *out);
    int C = m->sizes[m->nlayers];
    uint8_t *pred = malloc((size_t)(d->n > 0 ? d->n : 1));
    if (!pred) return -1;
    double loss = 0.0;
    for (int s = 0; s < d->n; s += w->cap) {
        int B = d->n - s < w->cap ? d->n - s : w->cap;
        mlp_forward(m, w, d->x + (size_t)s * d->dim, B);
        const float *z = w->act[m->nlayers];
        loss += softmax_xent(z, d->y + s, B, C, NULL, NULL);
        for (int i = 0; i < B; i++) {
            int arg = 0;
            for (int k = 1; k < C; k++)
                if (z[(size_t)i * C + k] > z[(size_t)i * C + arg]) arg = k;
            pred[s + i] = (uint8_t)arg;
        }
    }
    confusion_build(&out->cm, d->y, pred, d->n);
    long diag = 0;
    for (int k = 0; k < MET_CLASSES; k++) diag += out->cm.cm[k][k];
    out->acc = d->n ? (double)diag / d->n : 0.0;
    out->loss = d->n ? loss / d->n : 0.0;
    free(pred);
    return 0;
}
