/* Build without nvcc: the CUDA training path of mlp_cuda.h is absent; no devices. */
#include "mlp_cuda.h"

#include <stdio.h>

#define NO_CUDA "no CUDA support in this build (nvcc was not found at build time)"

static int no_cuda(char *err, size_t n) {
    if (err && n) snprintf(err, n, NO_CUDA);
    return -1;
}

int mlp_cuda_device_count(void) { return 0; }
void mlp_cuda_describe(char *buf, size_t n) { snprintf(buf, n, NO_CUDA); }
mlp_cuda *mlp_cuda_create(const mlp *m, int cap, char *err, size_t errlen) {
    (void)m;
    (void)cap;
    no_cuda(err, errlen);
    return NULL;
}
void mlp_cuda_free(mlp_cuda *g) { (void)g; }
int mlp_cuda_fits(const mlp_cuda *g, const mlp *m, int cap) {
    (void)g;
    (void)m;
    (void)cap;
    return 0;
}
int mlp_cuda_load(mlp_cuda *g, const float *params, const float *velocity, const float *prox_ref, char *err,
                  size_t errlen) {
    (void)g;
    (void)params;
    (void)velocity;
    (void)prox_ref;
    return no_cuda(err, errlen);
}
int mlp_cuda_store(mlp_cuda *g, float *params, float *velocity, char *err, size_t errlen) {
    (void)g;
    (void)params;
    (void)velocity;
    return no_cuda(err, errlen);
}
int mlp_cuda_stage(mlp_cuda *g, float **x, uint8_t **y, char *err, size_t errlen) {
    (void)g;
    *x = NULL;
    *y = NULL;
    return no_cuda(err, errlen);
}
int mlp_cuda_step(mlp_cuda *g, int B, const sgd_config *opt, int use_velocity, char *err, size_t errlen) {
    (void)g;
    (void)B;
    (void)opt;
    (void)use_velocity;
    return no_cuda(err, errlen);
}
int mlp_cuda_take_stats(mlp_cuda *g, double *loss, long *hits, char *err, size_t errlen) {
    (void)g;
    *loss = 0.0;
    *hits = 0;
    return no_cuda(err, errlen);
}
int mlp_cuda_forward(mlp_cuda *g, int B, float *logits, char *err, size_t errlen) {
    (void)g;
    (void)B;
    (void)logits;
    return no_cuda(err, errlen);
}
