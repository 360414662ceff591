/* Device-resident MLP training with cuBLAS (see mlp_cuda.h).
 *
 * Layout: everything is row-major as in mlp.c. cuBLAS is column-major, and a row-major
 * R x C matrix is the column-major C x R matrix of its transpose, so a row-major product
 * C = A B is computed as the column-major C^T = B^T A^T (operands swapped). */
#include "mlp_cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSLOTS      2
#define RED_THREADS 256

struct mlp_cuda {
    int nlayers;
    int sizes[MLP_MAX_LAYERS + 1];
    size_t w_off[MLP_MAX_LAYERS], b_off[MLP_MAX_LAYERS];
    size_t nparams;
    int cap;
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    float *params, *vel, *ref, *grad; /* device, nparams each */
    float *act[MLP_MAX_LAYERS + 1];   /* act[0]: the input batch */
    float *delta[MLP_MAX_LAYERS + 1];
    uint8_t *y;      /* device labels */
    double *rowloss; /* per-row loss of the last batch */
    int *rowhit;
    double *acc_loss; /* device accumulators */
    long long *acc_hits;
    int have_ref;
    /* pinned host memory */
    float *hx[NSLOTS];
    uint8_t *hy[NSLOTS];
    cudaEvent_t slot_free[NSLOTS];
    int slot; /* slot handed out by the last mlp_cuda_stage, -1 if none */
    int next_slot;
    float *hparams, *hvel; /* nparams each, staging for store */
    double *hacc_loss;
    long long *hacc_hits;
};

static int fail(char *err, size_t n, const char *fmt, ...) {
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess)                                                                                         \
            return fail(err, errlen, "CUDA error %s (%s) in %s", cudaGetErrorName(e_), cudaGetErrorString(e_), #call); \
    } while (0)
#define CB(call)                                                                                                       \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                                               \
            return fail(err, errlen, "cuBLAS error %s in %s", cublasGetStatusString(s_), #call);                       \
    } while (0)
#define CKLAUNCH(what) CK(cudaPeekAtLastError())

static unsigned blocks_for(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 65535u * 32u ? (b ? b : 1) : 65535u * 32u);
}

/* ---- kernels ----------------------------------------------------------------------------- */

/* out[i, j] += b[j], then ReLU if relu. */
__global__ void k_bias_act(float *out, const float *b, int rows, int cols, int relu) {
    size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = out[i] + b[i % cols];
        out[i] = relu ? fmaxf(v, 0.0f) : v;
    }
}

/* d[i] = 0 where the ReLU output a[i] was not positive. */
__global__ void k_relu_mask(float *d, const float *a, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (!(a[i] > 0.0f)) d[i] = 0.0f;
}

/* One thread per row: argmax, log-sum-exp in double (max shift), d logits = p - onehot. */
__global__ void k_softmax_xent(const float *z, const uint8_t *y, int B, int C, float *dz, double *rowloss,
                               int *rowhit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B) return;
    const float *r = z + (size_t)i * C;
    int arg = 0;
    for (int k = 1; k < C; k++)
        if (r[k] > r[arg]) arg = k;
    double zmax = r[arg], sum = 0.0;
    for (int k = 0; k < C; k++) sum += exp((double)r[k] - zmax);
    double lse = zmax + log(sum);
    int yi = y[i] < C ? y[i] : C - 1;
    rowloss[i] = lse - r[yi];
    rowhit[i] = arg == y[i];
    float *d = dz + (size_t)i * C;
    for (int k = 0; k < C; k++) d[k] = (float)exp((double)r[k] - lse);
    d[yi] -= 1.0f;
}

/* Single block, fixed order: deterministic sum of the batch's row losses and hits. */
__global__ void k_reduce_stats(const double *rowloss, const int *rowhit, int B, double *acc_loss, long long *acc_hits) {
    __shared__ double sl[RED_THREADS];
    __shared__ long long sh[RED_THREADS];
    double l = 0.0;
    long long h = 0;
    for (int i = threadIdx.x; i < B; i += RED_THREADS) {
        l += rowloss[i];
        h += rowhit[i];
    }
    sl[threadIdx.x] = l;
    sh[threadIdx.x] = h;
    __syncthreads();
    for (int s = RED_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            sl[threadIdx.x] += sl[threadIdx.x + s];
            sh[threadIdx.x] += sh[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *acc_loss += sl[0];
        *acc_hits += sh[0];
    }
}

/* gb[j] = scale * sum_i d[i, j] (one thread per column; rows read coalesced across j). */
__global__ void k_colsum(const float *d, int rows, int cols, float scale, float *gb) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cols) return;
    float s = 0.0f;
    for (int i = 0; i < rows; i++) s += d[(size_t)i * cols + j];
    gb[j] = scale * s;
}

/* optim.c's sgd_step. */
__global__ void k_sgd(float *w, float *v, const float *g, const float *ref, size_t n, float lr, float mom, float wd,
                      float mu) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float ge = g[i];
        if (wd != 0.0f) ge += wd * w[i];
        if (mu != 0.0f) ge += mu * (w[i] - ref[i]);
        if (mom != 0.0f) {
            float vi = mom * v[i] + ge;
            v[i] = vi;
            w[i] -= lr * vi;
        } else {
            w[i] -= lr * ge;
        }
    }
}

/* ---- host side --------------------------------------------------------------------------- */

extern "C" int mlp_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device/driver" error */
        return 0;
    }
    return n;
}

extern "C" void mlp_cuda_describe(char *buf, size_t n) {
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(buf, n, "no CUDA device available (%s)", cudaGetErrorString(e));
        return;
    }
    if (c == 0) {
        snprintf(buf, n, "no CUDA device available");
        return;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        snprintf(buf, n, "%d CUDA device(s)", c);
        return;
    }
    snprintf(buf, n, "%d CUDA device(s), device 0: %s (sm_%d%d)", c, p.name, p.major, p.minor);
}

static int local_rank(void) {
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                          "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

static int create(mlp_cuda *g, int cap, char *err, size_t errlen) {
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) return fail(err, errlen, "no CUDA device available");
    int lr = local_rank();
    g->device = (lr < 0 ? 0 : lr) % ndev;
    CK(cudaSetDevice(g->device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CB(cublasCreate(&g->blas));
    CB(cublasSetStream(g->blas, g->stream));
    CB(cublasSetMathMode(g->blas, CUBLAS_DEFAULT_MATH)); /* plain FP32, no TF32 */
    size_t np = g->nparams * sizeof(float);
    CK(cudaMalloc((void **)&g->params, np));
    CK(cudaMalloc((void **)&g->vel, np));
    CK(cudaMalloc((void **)&g->ref, np));
    CK(cudaMalloc((void **)&g->grad, np));
    for (int l = 0; l <= g->nlayers; l++) {
        size_t bytes = sizeof(float) * (size_t)cap * g->sizes[l];
        CK(cudaMalloc((void **)&g->act[l], bytes));
        if (l > 0) CK(cudaMalloc((void **)&g->delta[l], bytes));
    }
    CK(cudaMalloc((void **)&g->y, (size_t)cap));
    CK(cudaMalloc((void **)&g->rowloss, sizeof(double) * (size_t)cap));
    CK(cudaMalloc((void **)&g->rowhit, sizeof(int) * (size_t)cap));
    CK(cudaMalloc((void **)&g->acc_loss, sizeof(double)));
    CK(cudaMalloc((void **)&g->acc_hits, sizeof(long long)));
    CK(cudaMemsetAsync(g->acc_loss, 0, sizeof(double), g->stream));
    CK(cudaMemsetAsync(g->acc_hits, 0, sizeof(long long), g->stream));
    CK(cudaMemsetAsync(g->vel, 0, np, g->stream));
    for (int s = 0; s < NSLOTS; s++) {
        CK(cudaMallocHost((void **)&g->hx[s], sizeof(float) * (size_t)cap * g->sizes[0]));
        CK(cudaMallocHost((void **)&g->hy[s], (size_t)cap));
        CK(cudaEventCreateWithFlags(&g->slot_free[s], cudaEventDisableTiming));
        CK(cudaEventRecord(g->slot_free[s], g->stream));
    }
    CK(cudaMallocHost((void **)&g->hparams, np));
    CK(cudaMallocHost((void **)&g->hvel, np));
    CK(cudaMallocHost((void **)&g->hacc_loss, sizeof(double)));
    CK(cudaMallocHost((void **)&g->hacc_hits, sizeof(long long)));
    CK(cudaStreamSynchronize(g->stream));
    return 0;
}

extern "C" mlp_cuda *mlp_cuda_create(const mlp *m, int cap, char *err, size_t errlen) {
    if (!m || m->nlayers < 1 || m->nlayers > MLP_MAX_LAYERS || cap < 1) {
        fail(err, errlen, "bad network or batch size for the CUDA path");
        return NULL;
    }
    mlp_cuda *g = (mlp_cuda *)calloc(1, sizeof *g);
    if (!g) {
        fail(err, errlen, "out of host memory");
        return NULL;
    }
    g->nlayers = m->nlayers;
    memcpy(g->sizes, m->sizes, sizeof g->sizes);
    memcpy(g->w_off, m->w_off, sizeof g->w_off);
    memcpy(g->b_off, m->b_off, sizeof g->b_off);
    g->nparams = m->nparams;
    g->cap = cap;
    g->slot = -1;
    if (create(g, cap, err, errlen) != 0) {
        mlp_cuda_free(g);
        return NULL;
    }
    return g;
}

extern "C" void mlp_cuda_free(mlp_cuda *g) {
    if (!g) return;
    if (g->stream) cudaStreamSynchronize(g->stream);
    if (g->blas) cublasDestroy(g->blas);
    cudaFree(g->params);
    cudaFree(g->vel);
    cudaFree(g->ref);
    cudaFree(g->grad);
    for (int l = 0; l <= MLP_MAX_LAYERS; l++) {
        cudaFree(g->act[l]);
        cudaFree(g->delta[l]);
    }
    cudaFree(g->y);
    cudaFree(g->rowloss);
    cudaFree(g->rowhit);
    cudaFree(g->acc_loss);
    cudaFree(g->acc_hits);
    for (int s = 0; s < NSLOTS; s++) {
        cudaFreeHost(g->hx[s]);
        cudaFreeHost(g->hy[s]);
        if (g->slot_free[s]) cudaEventDestroy(g->slot_free[s]);
    }
    cudaFreeHost(g->hparams);
    cudaFreeHost(g->hvel);
    cudaFreeHost(g->hacc_loss);
    cudaFreeHost(g->hacc_hits);
    if (g->stream) cudaStreamDestroy(g->stream);
    cudaGetLastError();
    free(g);
}

extern "C" int mlp_cuda_fits(const mlp_cuda *g, const mlp *m, int cap) {
    if (!g || g->nlayers != m->nlayers || g->nparams != m->nparams || cap > g->cap) return 0;
    for (int l = 0; l <= m->nlayers; l++)
        if (g->sizes[l] != m->sizes[l]) return 0;
    return 1;
}

extern "C" int mlp_cuda_load(mlp_cuda *g, const float *params, const float *velocity, const float *prox_ref, char *err,
                             size_t errlen) {
    size_t np = g->nparams * sizeof(float);
    CK(cudaSetDevice(g->device));
    /* synchronous copies from pageable memory: the host arrays may change right after */
    CK(cudaStreamSynchronize(g->stream));
    CK(cudaMemcpy(g->params, params, np, cudaMemcpyHostToDevice));
    if (velocity)
        CK(cudaMemcpy(g->vel, velocity, np, cudaMemcpyHostToDevice));
    else
        CK(cudaMemset(g->vel, 0, np));
    g->have_ref = prox_ref != NULL;
    if (prox_ref) CK(cudaMemcpy(g->ref, prox_ref, np, cudaMemcpyHostToDevice));
    CK(cudaMemset(g->acc_loss, 0, sizeof(double)));
    CK(cudaMemset(g->acc_hits, 0, sizeof(long long)));
    CK(cudaDeviceSynchronize());
    return 0;
}

extern "C" int mlp_cuda_store(mlp_cuda *g, float *params, float *velocity, char *err, size_t errlen) {
    size_t np = g->nparams * sizeof(float);
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(g->hparams, g->params, np, cudaMemcpyDeviceToHost, g->stream));
    if (velocity) CK(cudaMemcpyAsync(g->hvel, g->vel, np, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    memcpy(params, g->hparams, np);
    if (velocity) memcpy(velocity, g->hvel, np);
    return 0;
}

extern "C" int mlp_cuda_stage(mlp_cuda *g, float **x, uint8_t **y, char *err, size_t errlen) {
    int s = g->next_slot;
    CK(cudaEventSynchronize(g->slot_free[s]));
    g->slot = s;
    *x = g->hx[s];
    *y = g->hy[s];
    return 0;
}

/* Uploads the staged slot and runs the forward pass; logits end in act[nlayers]. */
static int upload_forward(mlp_cuda *g, int B, int need_labels, char *err, size_t errlen) {
    if (g->slot < 0) return fail(err, errlen, "mlp_cuda: no staged batch");
    if (B < 1 || B > g->cap) return fail(err, errlen, "mlp_cuda: batch of %d rows (capacity %d)", B, g->cap);
    CK(cudaSetDevice(g->device));
    int s = g->slot;
    g->slot = -1;
    g->next_slot = (s + 1) % NSLOTS;
    CK(cudaMemcpyAsync(g->act[0], g->hx[s], sizeof(float) * (size_t)B * g->sizes[0], cudaMemcpyHostToDevice,
                       g->stream));
    if (need_labels) CK(cudaMemcpyAsync(g->y, g->hy[s], (size_t)B, cudaMemcpyHostToDevice, g->stream));
    CK(cudaEventRecord(g->slot_free[s], g->stream));
    const float one = 1.0f, zero = 0.0f;
    for (int l = 0; l < g->nlayers; l++) {
        int nin = g->sizes[l], nout = g->sizes[l + 1];
        /* out (B x nout) = in (B x nin) W (nin x nout):  out^T = W^T in^T */
        CB(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, nout, B, nin, &one, g->params + g->w_off[l], nout, g->act[l],
                       nin, &zero, g->act[l + 1], nout));
        size_t n = (size_t)B * nout;
        k_bias_act<<<blocks_for(n, 256), 256, 0, g->stream>>>(g->act[l + 1], g->params + g->b_off[l], B, nout,
                                                              l + 1 < g->nlayers);
        CKLAUNCH("bias_act");
    }
    return 0;
}

extern "C" int mlp_cuda_forward(mlp_cuda *g, int B, float *logits, char *err, size_t errlen) {
    if (upload_forward(g, B, 0, err, errlen)) return -1;
    int C = g->sizes[g->nlayers];
    CK(cudaMemcpyAsync(logits, g->act[g->nlayers], sizeof(float) * (size_t)B * C, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    return 0;
}

extern "C" int mlp_cuda_step(mlp_cuda *g, int B, const sgd_config *opt, int use_velocity, char *err, size_t errlen) {
    if (upload_forward(g, B, 1, err, errlen)) return -1;
    int L = g->nlayers, C = g->sizes[L];
    k_softmax_xent<<<(B + 127) / 128, 128, 0, g->stream>>>(g->act[L], g->y, B, C, g->delta[L], g->rowloss, g->rowhit);
    CKLAUNCH("softmax_xent");
    k_reduce_stats<<<1, RED_THREADS, 0, g->stream>>>(g->rowloss, g->rowhit, B, g->acc_loss, g->acc_hits);
    CKLAUNCH("reduce_stats");
    const float one = 1.0f, zero = 0.0f, invB = 1.0f / (float)B;
    for (int l = L - 1; l >= 0; l--) {
        int nin = g->sizes[l], nout = g->sizes[l + 1];
        const float *dl = g->delta[l + 1];
        if (l > 0) {
            /* dprev (B x nin) = dl (B x nout) W^T:  dprev^T = W dl^T */
            CB(cublasSgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, nin, B, nout, &one, g->params + g->w_off[l], nout, dl,
                           nout, &zero, g->delta[l], nin));
            size_t n = (size_t)B * nin;
            k_relu_mask<<<blocks_for(n, 256), 256, 0, g->stream>>>(g->delta[l], g->act[l], n);
            CKLAUNCH("relu_mask");
        }
        /* gW (nin x nout) = in^T dl / B:  gW^T = dl^T in / B */
        CB(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, nout, nin, B, &invB, dl, nout, g->act[l], nin, &zero,
                       g->grad + g->w_off[l], nout));
        k_colsum<<<(nout + 127) / 128, 128, 0, g->stream>>>(dl, B, nout, invB, g->grad + g->b_off[l]);
        CKLAUNCH("colsum");
    }
    float mom = use_velocity ? opt->momentum : 0.0f;
    float mu = g->have_ref ? opt->prox_mu : 0.0f;
    k_sgd<<<blocks_for(g->nparams, 256), 256, 0, g->stream>>>(g->params, g->vel, g->grad, g->ref, g->nparams, opt->lr,
                                                              mom, opt->weight_decay, mu);
    CKLAUNCH("sgd");
    return 0;
}

extern "C" int mlp_cuda_take_stats(mlp_cuda *g, double *loss, long *hits, char *err, size_t errlen) {
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(g->hacc_loss, g->acc_loss, sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(g->hacc_hits, g->acc_hits, sizeof(long long), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemsetAsync(g->acc_loss, 0, sizeof(double), g->stream));
    CK(cudaMemsetAsync(g->acc_hits, 0, sizeof(long long), g->stream));
    CK(cudaStreamSynchronize(g->stream));
    *loss = *g->hacc_loss;
    *hits = (long)*g->hacc_hits;
    return 0;
}
