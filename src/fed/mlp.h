/* Multilayer perceptron: dense layers, ReLU between them, softmax + cross-entropy on top.
 * All parameters live in one flat float vector so that the federated code can send,
 * checksum and average a model as a single array. Layer l's weights are an
 * (in x out) row-major matrix, followed by its out biases. */
#ifndef FED_MLP_H
#define FED_MLP_H

#include <stddef.h>
#include <stdint.h>

#define MLP_MAX_LAYERS 8     /* weight layers */
#define MLP_MAX_WIDTH  65536 /* units per layer (--layers, checkpoints) */

typedef struct {
    int nlayers; /* weight layers; sizes has nlayers+1 entries */
    int sizes[MLP_MAX_LAYERS + 1];
    size_t w_off[MLP_MAX_LAYERS], b_off[MLP_MAX_LAYERS];
    size_t nparams;
    float *params;
} mlp;

/* Scratch space for one batch size; reused across steps. */
typedef struct {
    int cap;
    float *act[MLP_MAX_LAYERS + 1];   /* act[l]: output of layer l (ReLU applied except last);
                                         act[0] is scratch (the input is never copied) */
    float *delta[MLP_MAX_LAYERS + 1]; /* d loss / d pre-activation of layer l */
    float *grad;                      /* nparams, mean gradient of the last backward() */
} mlp_work;

/* sizes[0] = inputs, sizes[n-1] = classes. He-normal weights, zero biases. */
int mlp_create(mlp *m, const int *sizes, int nsizes, uint64_t seed);
void mlp_free(mlp *m);
/* Parses "784,256,128,10"; returns number of sizes or -1. */
int mlp_parse_layers(const char *s, int *sizes, int max);

int mlp_work_create(mlp_work *w, const mlp *m, int cap);
void mlp_work_free(mlp_work *w);

/* Logits of a batch of B <= cap rows end up in w->act[nlayers]. */
void mlp_forward(const mlp *m, mlp_work *w, const float *x, int B);

/* Softmax cross-entropy of B rows of C logits. Writes d loss_i / d logits (p - onehot, not
 * divided by B) into dlogits if non-NULL and the count of argmax hits into *correct.
 * Returns the summed loss. Numerically stable for large logits. */
double softmax_xent(const float *logits, const uint8_t *y, int B, int C, float *dlogits, int *correct);

/* After mlp_forward on the same x: fills w->grad with the gradient of the mean loss.
 * Returns the summed loss; *correct counts right predictions. */
double mlp_backward(const mlp *m, mlp_work *w, const float *x, const uint8_t *y, int B, int *correct);

/* Fused form: out = beta*out + scale*gradient. With out = velocity, scale 1, beta = momentum
 * this is the momentum update; with out = params, scale = -lr, beta = 1 plain SGD, saving
 * a pass over the parameters. out may alias m->params. */
double mlp_backward_into(const mlp *m, mlp_work *w, const float *x, const uint8_t *y, int B, int *correct, float *out,
                         float scale, float beta);

#endif
