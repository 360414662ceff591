#include "train.h"

#include "fileio.h"
#include "mlp_cuda.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --device cuda: one device context per process, reused while the network shape fits. */
static int use_cuda;
static mlp_cuda *gpu;

int train_use_cuda(int on, char *err, size_t errlen) {
    if (on && mlp_cuda_device_count() < 1) {
        mlp_cuda_describe(err, errlen);
        return -1;
    }
    use_cuda = on;
    return 0;
}

/* Same batches (same shuffles) and the same update as the CPU loop below, on the GPU. The host
 * parameters and velocity are written only at the end, after every step succeeded. */
static int train_epochs_cuda(mlp *m, const dataset *d, int epochs, int batch, const sgd_config *opt, float *velocity,
                             const float *prox_ref, uint64_t seed, train_stats *out, char *err, size_t errlen) {
    if (!mlp_cuda_fits(gpu, m, batch)) {
        mlp_cuda_free(gpu);
        gpu = mlp_cuda_create(m, batch, err, errlen);
        if (!gpu) return -1;
    }
    int use_velocity = velocity && opt->momentum != 0.0f;
    const float *ref = opt->prox_mu != 0.0f ? prox_ref : NULL;
    int *order = malloc(sizeof(int) * (size_t)(d->n > 0 ? d->n : 1));
    if (!order) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    if (mlp_cuda_load(gpu, m->params, use_velocity ? velocity : NULL, ref, err, errlen)) goto done;
    rng_t r;
    rng_seed(&r, seed);
    double t0 = now_seconds();
    for (int i = 0; i < d->n; i++) order[i] = i;
    for (int e = 0; e < epochs; e++) {
        rng_shuffle_int(&r, order, (size_t)d->n);
        for (int s = 0; s < d->n; s += batch) {
            int B = d->n - s < batch ? d->n - s : batch;
            float *xb;
            uint8_t *yb;
            if (mlp_cuda_stage(gpu, &xb, &yb, err, errlen)) goto done;
            for (int i = 0; i < B; i++) {
                memcpy(xb + (size_t)i * d->dim, d->x + (size_t)order[s + i] * d->dim, sizeof(float) * d->dim);
                yb[i] = d->y[order[s + i]];
            }
            if (mlp_cuda_step(gpu, B, opt, use_velocity, err, errlen)) goto done;
        }
        double loss;
        long hits;
        if (mlp_cuda_take_stats(gpu, &loss, &hits, err, errlen)) goto done;
        out->loss = d->n ? loss / d->n : 0.0;
        out->acc = d->n ? (double)hits / d->n : 0.0;
        out->samples += d->n;
    }
    if (mlp_cuda_store(gpu, m->params, use_velocity ? velocity : NULL, err, errlen)) goto done;
    out->seconds = now_seconds() - t0;
    rc = 0;
done:
    free(order);
    return rc;
}

int train_epochs(mlp *m, mlp_work *w, const dataset *d, int epochs, int batch, const sgd_config *opt, float *velocity,
                 const float *prox_ref, uint64_t seed, train_stats *out) {
    memset(out, 0, sizeof *out);
    if (batch > w->cap) batch = w->cap;
    if (use_cuda && d->dim == m->sizes[0]) {
        char err[256];
        if (train_epochs_cuda(m, d, epochs, batch, opt, velocity, prox_ref, seed, out, err, sizeof err) == 0) return 0;
        /* the host model is untouched: redo this call on the CPU and stay there */
        fprintf(stderr, "fedtrain: CUDA training failed, continuing on the CPU: %s\n", err);
        mlp_cuda_free(gpu);
        gpu = NULL;
        use_cuda = 0;
        memset(out, 0, sizeof *out);
    }
    int *order = malloc(sizeof(int) * (size_t)(d->n > 0 ? d->n : 1));
    float *xb = malloc(sizeof(float) * (size_t)batch * d->dim);
    uint8_t *yb = malloc((size_t)batch);
    if (!order || !xb || !yb) {
        free(order);
        free(xb);
        free(yb);
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
                memcpy(xb + (size_t)i * d->dim, d->x + (size_t)order[s + i] * d->dim, sizeof(float) * d->dim);
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
