#include "mlp.h"

#include "rng.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int mlp_create(mlp *m, const int *sizes, int nsizes, uint64_t seed) {
    memset(m, 0, sizeof *m);
    if (nsizes < 2 || nsizes > MLP_MAX_LAYERS + 1) return -1;
    m->nlayers = nsizes - 1;
    size_t off = 0;
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] < 1 || sizes[i] > 1 << 16) return -1;
        m->sizes[i] = sizes[i];
    }
    for (int l = 0; l < m->nlayers; l++) {
        m->w_off[l] = off;
        off += (size_t)sizes[l] * sizes[l + 1];
        m->b_off[l] = off;
        off += (size_t)sizes[l + 1];
    }
    m->nparams = off;
    m->params = calloc(off, sizeof(float));
    if (!m->params) return -1;
    rng_t r;
    rng_seed(&r, rng_mix(seed, 0x317, 2));
    for (int l = 0; l < m->nlayers; l++) {
        double sd = sqrt(2.0 / sizes[l]); /* He initialisation suits ReLU */
        size_t n = (size_t)sizes[l] * sizes[l + 1];
        for (size_t i = 0; i < n; i++) m->params[m->w_off[l] + i] = (float)(sd * rng_normal(&r));
    }
    return 0;
}

void mlp_free(mlp *m) {
    free(m->params);
    m->params = NULL;
}

int mlp_parse_layers(const char *s, int *sizes, int max) {
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > MLP_MAX_WIDTH || n >= max) return -1;
        sizes[n++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return n >= 2 ? n : -1;
}

int mlp_work_create(mlp_work *w, const mlp *m, int cap) {
    memset(w, 0, sizeof *w);
    w->cap = cap;
    int widest = 0;
    for (int l = 1; l <= m->nlayers; l++) widest = m->sizes[l] > widest ? m->sizes[l] : widest;
    w->act[0] = malloc(sizeof(float) * (size_t)widest); /* bias-gradient scratch */
    if (!w->act[0]) goto fail;
    for (int l = 1; l <= m->nlayers; l++) {
        w->act[l] = malloc(sizeof(float) * (size_t)cap * m->sizes[l]);
        w->delta[l] = malloc(sizeof(float) * (size_t)cap * m->sizes[l]);
        if (!w->act[l] || !w->delta[l]) goto fail;
    }
    w->grad = malloc(sizeof(float) * m->nparams);
    if (!w->grad) goto fail;
    return 0;
fail:
    mlp_work_free(w);
    return -1;
}

void mlp_work_free(mlp_work *w) {
    for (int l = 0; l <= MLP_MAX_LAYERS; l++) {
        free(w->act[l]);
        free(w->delta[l]);
    }
    free(w->grad);
    memset(w, 0, sizeof *w);
}

void mlp_forward(const mlp *m, mlp_work *w, const float *x, int B) {
    for (int l = 0; l < m->nlayers; l++) {
        int nin = m->sizes[l], nout = m->sizes[l + 1];
        const float *in = l == 0 ? x : w->act[l];
        float *out = w->act[l + 1];
        const float *W = m->params + m->w_off[l], *b = m->params + m->b_off[l];
        for (int i = 0; i < B; i++) memcpy(out + (size_t)i * nout, b, sizeof(float) * nout);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, nout, nin, 1.0f, in, nin, W, nout, 1.0f, out, nout);
        if (l + 1 < m->nlayers) {
            size_t n = (size_t)B * nout;
            for (size_t i = 0; i < n; i++) out[i] = out[i] > 0.0f ? out[i] : 0.0f;
        }
    }
}

double softmax_xent(const float *logits, const uint8_t *y, int B, int C, float *dlogits, int *correct) {
    double loss = 0.0;
    int hits = 0;
    for (int i = 0; i < B; i++) {
        const float *z = logits + (size_t)i * C;
        int arg = 0;
        for (int k = 1; k < C; k++)
            if (z[k] > z[arg]) arg = k;
        hits += arg == y[i];
        /* subtract the max so exp never overflows; log-sum-exp in double for accuracy */
        double zmax = z[arg], sum = 0.0;
        for (int k = 0; k < C; k++) sum += exp((double)z[k] - zmax);
        double lse = zmax + log(sum);
        loss += lse - z[y[i]];
        if (dlogits) {
            float *d = dlogits + (size_t)i * C;
            for (int k = 0; k < C; k++) d[k] = (float)exp((double)z[k] - lse);
            d[y[i]] -= 1.0f;
        }
    }
    if (correct) *correct = hits;
    return loss;
}

double mlp_backward(const mlp *m, mlp_work *w, const float *x, const uint8_t *y, int B, int *correct) {
    return mlp_backward_into(m, w, x, y, B, correct, w->grad, 1.0f, 0.0f);
}

double mlp_backward_into(const mlp *m, mlp_work *w, const float *x, const uint8_t *y, int B, int *correct, float *out,
                         float scale, float beta) {
    int L = m->nlayers;
    double loss = softmax_xent(w->act[L], y, B, m->sizes[L], w->delta[L], correct);
    float alpha = scale / (float)B;
    for (int l = L - 1; l >= 0; l--) {
        int nin = m->sizes[l], nout = m->sizes[l + 1];
        const float *in = l == 0 ? x : w->act[l];
        const float *dl = w->delta[l + 1];
        if (l > 0) {
            /* gradient for the layer below, through its ReLU; computed before this layer's
             * weights are touched, so out may be the parameters themselves */
            float *dprev = w->delta[l];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, nin, nout, 1.0f, dl, nout, m->params + m->w_off[l],
                        nout, 0.0f, dprev, nin);
            const float *a = w->act[l];
            size_t n = (size_t)B * nin;
            for (size_t i = 0; i < n; i++) dprev[i] = a[i] > 0.0f ? dprev[i] : 0.0f;
        }
        float *gW = out + m->w_off[l], *gb = out + m->b_off[l];
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nin, nout, B, alpha, in, nin, dl, nout, beta, gW, nout);
        float *colsum = w->act[0]; /* scratch of nout floats, see mlp_work_create */
        for (int j = 0; j < nout; j++) colsum[j] = 0.0f;
        for (int i = 0; i < B; i++) {
            const float *row = dl + (size_t)i * nout;
            for (int j = 0; j < nout; j++) colsum[j] += row[j];
        }
        for (int j = 0; j < nout; j++) gb[j] = beta * gb[j] + alpha * colsum[j];
    }
    return loss;
}
