/* Minimal test harness: CHECK records a failure and continues; main returns test_result(). */
#ifndef CAUSTIC_TESTING_H
#define CAUSTIC_TESTING_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int g_failures = 0, g_checks = 0;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        g_checks++;                                                                                                    \
        if (!(cond)) {                                                                                                 \
            g_failures++;                                                                                              \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond);                                         \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol, what)                                                                                    \
    CHECK(fabs((double)(a) - (double)(b)) <= (tol), "%s: %.9g vs %.9g (tol %.3g)", what, (double)(a), (double)(b),     \
          (double)(tol))

static inline int test_result(const char *name) {
    printf("%s: %d checks, %d failed\n", name, g_checks, g_failures);
    return g_failures ? 1 : 0;
}

/* ---- chi-square goodness of fit ------------------------------------------------------------ */
/* Regularised upper incomplete gamma Q(a, x): series for x < a+1, continued fraction beyond. */
static inline double gamma_q(double a, double x) {
    if (x <= 0.0) return 1.0;
    double gln = lgamma(a);
    if (x < a + 1.0) {
        double sum = 1.0 / a, term = sum, ap = a;
        for (int n = 0; n < 10000; ++n) {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if (fabs(term) < fabs(sum) * 1e-15) break;
        }
        return 1.0 - sum * exp(-x + a * log(x) - gln);
    }
    double b = x + 1.0 - a, c = 1e300, d = 1.0 / b, h = d;
    for (int i = 1; i < 10000; ++i) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-15) break;
    }
    return exp(-x + a * log(x) - gln) * h;
}

/* Pearson's test of observed vs expected counts. Cells with expected < 5 are pooled (Mitsuba
 * style); returns the p-value, and 0 if a cell with no expected mass received samples. */
static inline double chi2_test(const double *observed, const double *expected, int n, int *dof_out) {
    double chi2 = 0.0, pool_obs = 0.0, pool_exp = 0.0;
    int dof = 0;
    for (int i = 0; i < n; ++i) {
        if (expected[i] <= 0.0) {
            if (observed[i] > 0.0) {
                if (dof_out) *dof_out = -1;
                return 0.0;
            }
            continue;
        }
        if (expected[i] < 5.0) {
            pool_obs += observed[i];
            pool_exp += expected[i];
            continue;
        }
        chi2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
        dof++;
    }
    if (pool_exp > 0.0) {
        chi2 += (pool_obs - pool_exp) * (pool_obs - pool_exp) / pool_exp;
        dof++;
    }
    dof -= 1;
    if (dof_out) *dof_out = dof;
    if (dof < 1) return 1.0;
    return gamma_q(0.5 * dof, 0.5 * chi2);
}

#endif
