#include "optim.h"

void sgd_step(const sgd_config *c, float *restrict w, float *restrict v, const float *restrict g,
              const float *restrict ref, size_t n) {
    const float lr = c->lr, mom = c->momentum, wd = c->weight_decay, mu = c->prox_mu;
    /* Separate loops per case keep the common ones branch-free and vectorised. */
    if (wd == 0.0f && (mu == 0.0f || !ref)) {
        if (mom != 0.0f && v) {
            for (size_t i = 0; i < n; i++) {
                v[i] = mom * v[i] + g[i];
                w[i] -= lr * v[i];
            }
        } else {
            for (size_t i = 0; i < n; i++) w[i] -= lr * g[i];
        }
        return;
    }
    const float muv = ref ? mu : 0.0f;
    for (size_t i = 0; i < n; i++) {
        float ge = g[i] + wd * w[i] + (muv != 0.0f ? muv * (w[i] - ref[i]) : 0.0f);
        if (mom != 0.0f && v) {
            v[i] = mom * v[i] + ge;
            w[i] -= lr * v[i];
        } else {
            w[i] -= lr * ge;
        }
    }
}
