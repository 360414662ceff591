/* Chi-square test of a direction sampler against its solid-angle pdf over the whole sphere,
 * binned in (cos theta, phi). The pdf is integrated per cell on a sub-grid. */
#ifndef CAUSTIC_SPHERE_CHI2_H
#define CAUSTIC_SPHERE_CHI2_H

#include "kernel/kernel.h"
#include "testing.h"

#define CHI2_THETA 16
#define CHI2_PHI   32
#define CHI2_CELLS (CHI2_THETA * CHI2_PHI + 1) /* last cell: "no sample produced" */
/* Sub-grid per cell for integrating the pdf; raise it for pdfs with edges inside cells. */
static int g_chi2_sub = 16;

typedef int (*chi2_sample_fn)(void *ctx, vec2 u, float u1, vec3 *dir); /* 0 = no sample */
typedef double (*chi2_pdf_fn)(void *ctx, vec3 dir);

static inline int chi2_cell(vec3 d) {
    float c = kclamp(d.z, -1.0f, 1.0f);
    int t = (int)((c + 1.0f) * 0.5f * CHI2_THETA);
    float phi = atan2f(d.y, d.x);
    if (phi < 0) phi += 2.0f * K_PI;
    int p = (int)(phi / (2.0f * K_PI) * CHI2_PHI);
    t = t < 0 ? 0 : (t >= CHI2_THETA ? CHI2_THETA - 1 : t);
    p = p < 0 ? 0 : (p >= CHI2_PHI ? CHI2_PHI - 1 : p);
    return t * CHI2_PHI + p;
}

/* Returns the p-value; prints the integral of the pdf when asked. */
static inline double sphere_chi2(void *ctx, chi2_sample_fn sample, chi2_pdf_fn pdf, int n, uint64_t seed,
                                 double *pdf_integral) {
    static double obs[CHI2_CELLS], expct[CHI2_CELLS];
    for (int i = 0; i < CHI2_CELLS; ++i) obs[i] = expct[i] = 0.0;
    pcg32 r = pcg32_seed(seed, 3);
    for (int i = 0; i < n; ++i) {
        vec2 u = v2(pcg32_float(&r), pcg32_float(&r));
        float u1 = pcg32_float(&r);
        vec3 d;
        if (!sample(ctx, u, u1, &d)) {
            obs[CHI2_CELLS - 1] += 1;
            continue;
        }
        obs[chi2_cell(d)] += 1;
    }
    const int sub = g_chi2_sub;
    double total = 0.0;
    for (int t = 0; t < CHI2_THETA; ++t) {
        for (int p = 0; p < CHI2_PHI; ++p) {
            double sum = 0.0;
            for (int a = 0; a < sub; ++a) {
                for (int b = 0; b < sub; ++b) {
                    double c = -1.0 + 2.0 * (t + (a + 0.5) / sub) / CHI2_THETA;
                    double phi = 2.0 * K_PI * (p + (b + 0.5) / sub) / CHI2_PHI;
                    double s = sqrt(fmax(0.0, 1.0 - c * c));
                    sum += pdf(ctx, v3((float)(s * cos(phi)), (float)(s * sin(phi)), (float)c));
                }
            }
            double cell_area = (2.0 / CHI2_THETA) * (2.0 * K_PI / CHI2_PHI);
            double integral = sum / (sub * sub) * cell_area;
            expct[t * CHI2_PHI + p] = integral * n;
            total += integral;
        }
    }
    expct[CHI2_CELLS - 1] = fmax(0.0, 1.0 - total) * n;
    /* A sampler may decline a measure-zero draw (a cosine-sampled direction exactly on the horizon,
     * whose pdf is 0): a few such refusals in n are no mismatch, where the pdf integrates to 1 and
     * the refusal cell expects nothing (chi2_test would return p = 0 for one of them). */
    if (expct[CHI2_CELLS - 1] < 1.0 && obs[CHI2_CELLS - 1] <= 1e-4 * n) obs[CHI2_CELLS - 1] = 0.0;
    if (pdf_integral) *pdf_integral = total;
    int dof;
    return chi2_test(obs, expct, CHI2_CELLS, &dof);
}

#endif
