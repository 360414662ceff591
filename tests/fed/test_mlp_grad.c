/* Backpropagation against central finite differences on a small network, in double-checked
 * float arithmetic: every parameter of a 7-6-5-10 MLP. */
#include "check.h"
#include "mlp.h"
#include "optim.h"

#include <math.h>
#include <stdlib.h>

static double mean_loss(const mlp *m, mlp_work *w, const float *x, const uint8_t *y, int B) {
    mlp_forward(m, w, x, B);
    return softmax_xent(w->act[m->nlayers], y, B, m->sizes[m->nlayers], NULL, NULL) / B;
}

int main(void) {
    int sizes[] = {7, 6, 5, 10};
    mlp m;
    mlp_work w;
    CHECK(mlp_create(&m, sizes, 4, 3) == 0);
    CHECK(m.nparams == 7 * 6 + 6 + 6 * 5 + 5 + 5 * 10 + 10);
    CHECK(mlp_work_create(&w, &m, 8) == 0);
    /* non-zero biases so that every ReLU region is exercised */
    for (size_t i = 0; i < m.nparams; i++) m.params[i] += 0.05f * (float)sin((double)i);
    int B = 8;
    float x[8 * 7];
    uint8_t y[8];
    for (int i = 0; i < B * 7; i++) x[i] = (float)cos(0.7 * i) + 0.3f;
    for (int i = 0; i < B; i++) y[i] = (uint8_t)((i * 3) % 10);
    mlp_forward(&m, &w, x, B);
    mlp_backward(&m, &w, x, y, B, NULL);
    float *g = malloc(sizeof(float) * m.nparams);
    for (size_t i = 0; i < m.nparams; i++) g[i] = w.grad[i];
    double worst = 0;
    int bad = 0;
    for (size_t i = 0; i < m.nparams; i++) {
        float keep = m.params[i];
        const float h = 1e-2f;
        m.params[i] = keep + h;
        double lp = mean_loss(&m, &w, x, y, B);
        m.params[i] = keep - h;
        double lm = mean_loss(&m, &w, x, y, B);
        m.params[i] = keep;
        double num = (lp - lm) / (2.0 * h);
        double err = fabs(num - g[i]) / (fabs(num) + fabs(g[i]) + 1e-3);
        if (err > worst) worst = err;
        if (err > 2e-2) {
            if (bad++ < 5) fprintf(stderr, "param %zu: analytic %g numeric %g\n", i, g[i], num);
        }
    }
    fprintf(stderr, "worst relative error %.3g over %zu parameters\n", worst, m.nparams);
    CHECK(bad == 0);

    /* one SGD step along the gradient lowers the loss */
    double before = mean_loss(&m, &w, x, y, B);
    sgd_config opt = {0.1f, 0.0f, 0.0f, 0.0f};
    sgd_step(&opt, m.params, NULL, g, NULL, m.nparams);
    CHECK(mean_loss(&m, &w, x, y, B) < before);

    /* momentum / weight decay / prox arithmetic on one scalar */
    float pw = 1.0f, pv = 0.5f, pg = 0.2f, ref = 0.0f;
    sgd_config o2 = {0.1f, 0.9f, 0.01f, 0.5f};
    sgd_step(&o2, &pw, &pv, &pg, &ref, 1);
    /* g_eff = 0.2 + 0.01*1 + 0.5*(1-0) = 0.71; v = 0.45 + 0.71 = 1.16; w = 1 - 0.116 */
    CHECK_NEAR(pv, 1.16, 1e-6);
    CHECK_NEAR(pw, 0.884, 1e-6);
    /* the fused updates (momentum into the velocity, plain SGD into the weights) match the
     * separate gradient + sgd_step path */
    for (int fused_case = 0; fused_case < 2; fused_case++) {
        float mom = fused_case == 0 ? 0.9f : 0.0f;
        float *p0 = malloc(sizeof(float) * m.nparams), *v1 = calloc(m.nparams, sizeof(float)),
              *v2 = calloc(m.nparams, sizeof(float));
        for (size_t i = 0; i < m.nparams; i++) {
            p0[i] = m.params[i];
            v1[i] = v2[i] = 0.01f * (float)(i % 7);
        }
        sgd_config o = {0.05f, mom, 0.0f, 0.0f};
        mlp_forward(&m, &w, x, B);
        mlp_backward(&m, &w, x, y, B, NULL);
        sgd_step(&o, m.params, v1, w.grad, NULL, m.nparams);
        float *p1 = malloc(sizeof(float) * m.nparams);
        for (size_t i = 0; i < m.nparams; i++) {
            p1[i] = m.params[i];
            m.params[i] = p0[i];
        }
        mlp_forward(&m, &w, x, B);
        if (mom != 0.0f) {
            mlp_backward_into(&m, &w, x, y, B, NULL, v2, 1.0f, mom);
            for (size_t i = 0; i < m.nparams; i++) m.params[i] -= o.lr * v2[i];
        } else {
            mlp_backward_into(&m, &w, x, y, B, NULL, m.params, -o.lr, 1.0f);
        }
        double maxd = 0;
        for (size_t i = 0; i < m.nparams; i++) {
            double d = fabs((double)p1[i] - m.params[i]);
            if (d > maxd) maxd = d;
        }
        CHECK(maxd < 1e-6);
        free(p0);
        free(p1);
        free(v1);
        free(v2);
    }
    free(g);
    mlp_work_free(&w);
    mlp_free(&m);
    CHECK_DONE();
}
