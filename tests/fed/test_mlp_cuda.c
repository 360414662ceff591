/* The cuBLAS training path (mlp_cuda.h) against the CPU path: forward logits, one
 * forward+backward+update step under several optimiser settings (plain SGD, momentum,
 * weight decay + FedProx), and a short train_epochs run routed with train_use_cuda.
 * Exits 77 (skipped) when no CUDA device is usable. */
#include "check.h"
#include "mlp.h"
#include "mlp_cuda.h"
#include "optim.h"
#include "rng.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst)) worst = d; /* NaN propagates */
    }
    return worst;
}

static int stage(mlp_cuda *g, const float *x, const uint8_t *y, int B, int dim) {
    float *hx;
    uint8_t *hy;
    char err[256];
    if (mlp_cuda_stage(g, &hx, &hy, err, sizeof err)) {
        fprintf(stderr, "stage: %s\n", err);
        return -1;
    }
    memcpy(hx, x, sizeof(float) * (size_t)B * dim);
    memcpy(hy, y, (size_t)B);
    return 0;
}

int main(void) {
    char err[256];
    if (mlp_cuda_device_count() < 1) {
        mlp_cuda_describe(err, sizeof err);
        fprintf(stderr, "skipped: %s\n", err);
        return 77;
    }
    mlp_cuda_describe(err, sizeof err);
    fprintf(stderr, "%s\n", err);

    int sizes[] = {37, 29, 17, 10};
    const int D = 37, B = 12;
    mlp m;
    mlp_work w;
    CHECK(mlp_create(&m, sizes, 4, 11) == 0);
    CHECK(mlp_work_create(&w, &m, B) == 0);
    for (size_t i = 0; i < m.nparams; i++) m.params[i] += 0.05f * (float)sin(0.37 * (double)i);
    size_t np = m.nparams;
    float *x = malloc(sizeof(float) * (size_t)B * D);
    uint8_t y[12];
    rng_t r;
    rng_seed(&r, 5);
    for (int i = 0; i < B * D; i++) x[i] = (float)rng_normal(&r);
    for (int i = 0; i < B; i++) y[i] = (uint8_t)((i * 7 + 3) % 10);

    mlp_cuda *g = mlp_cuda_create(&m, B, err, sizeof err);
    if (!g) {
        fprintf(stderr, "mlp_cuda_create: %s\n", err);
        return 1;
    }

    /* forward */
    {
        float logits[12 * 10];
        CHECK(mlp_cuda_load(g, m.params, NULL, NULL, err, sizeof err) == 0);
        CHECK(stage(g, x, y, B, D) == 0);
        CHECK(mlp_cuda_forward(g, B, logits, err, sizeof err) == 0);
        mlp_forward(&m, &w, x, B);
        double d = max_abs_diff(logits, w.act[3], (size_t)B * 10);
        fprintf(stderr, "forward: max |logit diff| = %.3g\n", d);
        CHECK(d < 1e-4);
    }

    /* one step under several optimiser settings */
    sgd_config cfgs[] = {
        {0.05f, 0.0f, 0.0f, 0.0f},  /* plain SGD */
        {0.05f, 0.9f, 0.0f, 0.0f},  /* momentum, non-zero starting velocity */
        {0.05f, 0.9f, 0.01f, 0.3f}, /* weight decay + FedProx */
        {0.05f, 0.0f, 0.02f, 0.5f}, /* weight decay + FedProx without momentum */
    };
    float *p_cpu = malloc(sizeof(float) * np), *v_cpu = malloc(sizeof(float) * np);
    float *p_gpu = malloc(sizeof(float) * np), *v_gpu = malloc(sizeof(float) * np);
    float *ref = malloc(sizeof(float) * np), *v0 = malloc(sizeof(float) * np);
    for (size_t i = 0; i < np; i++) {
        ref[i] = m.params[i] + 0.1f * (float)cos(0.11 * (double)i);
        v0[i] = 0.01f * (float)sin(0.05 * (double)i);
    }
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        const sgd_config *o = &cfgs[k];
        int use_v = o->momentum != 0.0f;
        const float *pref = o->prox_mu != 0.0f ? ref : NULL;
        /* CPU reference */
        mlp cm = m;
        cm.params = p_cpu;
        memcpy(p_cpu, m.params, sizeof(float) * np);
        memcpy(v_cpu, v0, sizeof(float) * np);
        mlp_forward(&cm, &w, x, B);
        int hits_cpu = 0;
        double loss_cpu = mlp_backward(&cm, &w, x, y, B, &hits_cpu);
        sgd_step(o, p_cpu, use_v ? v_cpu : NULL, w.grad, pref, np);
        /* GPU */
        double loss_gpu = 0.0;
        long hits_gpu = -1;
        CHECK(mlp_cuda_load(g, m.params, use_v ? v0 : NULL, pref, err, sizeof err) == 0);
        CHECK(stage(g, x, y, B, D) == 0);
        CHECK(mlp_cuda_step(g, B, o, use_v, err, sizeof err) == 0);
        CHECK(mlp_cuda_take_stats(g, &loss_gpu, &hits_gpu, err, sizeof err) == 0);
        CHECK(mlp_cuda_store(g, p_gpu, use_v ? v_gpu : NULL, err, sizeof err) == 0);
        double dp = max_abs_diff(p_cpu, p_gpu, np);
        fprintf(stderr, "step %zu: loss cpu %.7f gpu %.7f, hits %d/%ld, max |param diff| %.3g\n", k, loss_cpu, loss_gpu,
                hits_cpu, hits_gpu, dp);
        CHECK_NEAR(loss_cpu, loss_gpu, 1e-4 * (1.0 + fabs(loss_cpu)));
        CHECK(hits_cpu == hits_gpu);
        CHECK(dp < 1e-5);
        if (use_v) CHECK(max_abs_diff(v_cpu, v_gpu, np) < 1e-4);
    }
    mlp_cuda_free(g);

    /* a short training run through train_epochs, CPU and then routed to the GPU */
    {
        dataset d = {0};
        d.n = 203; /* last batch partial */
        d.rows = 1;
        d.cols = D;
        d.dim = D;
        d.x = malloc(sizeof(float) * (size_t)d.n * D);
        d.y = malloc((size_t)d.n);
        for (int i = 0; i < d.n; i++) {
            d.y[i] = (uint8_t)(rng_next(&r) % 10);
            for (int j = 0; j < D; j++)
                d.x[(size_t)i * D + j] = (float)rng_normal(&r) * 0.5f + (j % 10 == d.y[i] ? 1.0f : 0.0f);
        }
        sgd_config o = {0.03f, 0.9f, 0.001f, 0.05f};
        mlp_work w16;
        CHECK(mlp_work_create(&w16, &m, 16) == 0);
        mlp cm = m, gm = m;
        cm.params = p_cpu;
        gm.params = p_gpu;
        memcpy(p_cpu, m.params, sizeof(float) * np);
        memcpy(p_gpu, m.params, sizeof(float) * np);
        memset(v_cpu, 0, sizeof(float) * np);
        memset(v_gpu, 0, sizeof(float) * np);
        train_stats sc, sg;
        CHECK(train_epochs(&cm, &w16, &d, 3, 16, &o, v_cpu, m.params, 99, &sc) == 0);
        CHECK(train_use_cuda(1, err, sizeof err) == 0);
        CHECK(train_epochs(&gm, &w16, &d, 3, 16, &o, v_gpu, m.params, 99, &sg) == 0);
        CHECK(train_use_cuda(0, err, sizeof err) == 0);
        double dp = max_abs_diff(p_cpu, p_gpu, np);
        double pmax = 0.0;
        for (size_t i = 0; i < np; i++) pmax = fmax(pmax, fabs(p_cpu[i]));
        fprintf(stderr,
                "train 3 epochs: loss cpu %.6f gpu %.6f, acc cpu %.4f gpu %.4f, "
                "max |param diff| %.3g (max |param| %.3g)\n",
                sc.loss, sg.loss, sc.acc, sg.acc, dp, pmax);
        CHECK(sc.samples == sg.samples);
        CHECK_NEAR(sc.loss, sg.loss, 1e-3 * (1.0 + sc.loss));
        CHECK_NEAR(sc.acc, sg.acc, 0.02);
        CHECK(dp < 1e-3 * (1.0 + pmax));
        CHECK(sg.loss < log(10.0)); /* it learned something */
        mlp_work_free(&w16);
        free(d.x);
        free(d.y);
    }

    free(p_cpu);
    free(v_cpu);
    free(p_gpu);
    free(v_gpu);
    free(ref);
    free(v0);
    free(x);
    mlp_work_free(&w);
    mlp_free(&m);
    CHECK_DONE();
}
