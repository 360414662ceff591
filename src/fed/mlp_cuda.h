/* Optional CUDA (cuBLAS) training of the MLP of mlp.h on one GPU.
 *
 * The context keeps the parameters, the momentum buffer, the FedProx anchor, activations and
 * deltas on the device for as long as it lives; a training run loads the host model once
 * (mlp_cuda_load), then per batch only the input rows and labels travel (through two pinned
 * staging slots on one stream), and mlp_cuda_store copies the trained parameters back. The
 * math is that of mlp.c + optim.c (same layer layout, softmax-CE, SGD with momentum, weight
 * decay and proximal term); results agree with the CPU path to float rounding.
 *
 * Every function that can fail returns 0 on success and -1 with a one-line message in err.
 * Without nvcc at build time mlp_cuda_stub.c provides the same API: no devices, every call
 * fails with "no CUDA support in this build". */
#ifndef FED_MLP_CUDA_H
#define FED_MLP_CUDA_H

#include "mlp.h"
#include "optim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlp_cuda mlp_cuda;

/* Number of usable CUDA devices (0 without a device, a driver or CUDA support). */
int mlp_cuda_device_count(void);
/* Why there is no device (or which one would be used), one line. */
void mlp_cuda_describe(char *buf, size_t n);

/* Device context for networks shaped like m and batches of up to cap rows. With several
 * devices the node-local MPI rank (from the launcher's environment) picks one. */
mlp_cuda *mlp_cuda_create(const mlp *m, int cap, char *err, size_t errlen);
void mlp_cuda_free(mlp_cuda *g);
/* 1 if g was created for this layer shape and at least this batch size. */
int mlp_cuda_fits(const mlp_cuda *g, const mlp *m, int cap);

/* Copies nparams parameters to the device; velocity NULL zeroes the device momentum buffer;
 * prox_ref NULL leaves the proximal anchor unset (steps then ignore prox_mu). */
int mlp_cuda_load(mlp_cuda *g, const float *params, const float *velocity, const float *prox_ref, char *err,
                  size_t errlen);
/* Waits for all queued work and copies parameters (and velocity if non-NULL) back. The host
 * arrays are written only if every copy succeeded. */
int mlp_cuda_store(mlp_cuda *g, float *params, float *velocity, char *err, size_t errlen);

/* Pinned host slot for the next batch (cap x sizes[0] floats, cap labels); waits until the
 * slot's previous upload has finished. Fill it, then call mlp_cuda_step. */
int mlp_cuda_stage(mlp_cuda *g, float **x, uint8_t **y, char *err, size_t errlen);
/* One SGD step on the B staged rows: forward, softmax-CE, backward, update
 *   g_eff = grad + wd*w + mu*(w - ref);  v = mom*v + g_eff;  w -= lr*v  (or lr*g_eff)
 * with momentum used only if use_velocity, the proximal term only if a prox_ref was loaded.
 * Summed loss and hit count accumulate on the device (mlp_cuda_take_stats). Asynchronous. */
int mlp_cuda_step(mlp_cuda *g, int B, const sgd_config *opt, int use_velocity, char *err, size_t errlen);
/* Summed loss and hits since the last call (synchronises), then resets them. */
int mlp_cuda_take_stats(mlp_cuda *g, double *loss, long *hits, char *err, size_t errlen);

/* Forward only on B staged rows; copies the B x classes logits to the host. */
int mlp_cuda_forward(mlp_cuda *g, int B, float *logits, char *err, size_t errlen);

/* Routing of train_epochs (train.c): with on = 1, later train_epochs calls train on the GPU
 * (the model is loaded at the start of the call and stored back at its end, so callers see
 * the same host arrays as with the CPU path). Fails with the reason when no device is usable.
 * A CUDA error during training prints one line and continues that call and all later ones
 * on the CPU. */
int train_use_cuda(int on, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
