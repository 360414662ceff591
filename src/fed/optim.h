/* Mini-batch SGD with optional momentum, weight decay and a FedProx proximal term. */
#ifndef FED_OPTIM_H
#define FED_OPTIM_H

#include <stddef.h>

typedef struct {
    float lr;
    float momentum;     /* 0 disables the velocity buffer */
    float weight_decay; /* L2 coefficient */
    float prox_mu;      /* FedProx: pulls w towards ref with strength mu */
} sgd_config;

/* g_eff = g + wd*w + mu*(w - ref);  v = momentum*v + g_eff;  w -= lr * v (or lr*g_eff).
 * v may be NULL when momentum is 0; ref may be NULL when prox_mu is 0. */
void sgd_step(const sgd_config *c, float *w, float *v, const float *g, const float *ref, size_t n);

#endif
