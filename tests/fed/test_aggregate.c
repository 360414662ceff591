/* Aggregation: the mean and weighted mean of known vectors, FedAvgM arithmetic, and
 * rejection of NaN, Inf and wrong-size updates. */
#include "aggregate.h"
#include "check.h"

#include <math.h>

int main(void) {
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {3, 2, 1, 0, -1}, c[5] = {2, 2, 2, 2, 2};
    const float *u[3] = {a, b, c};
    float out[5];
    aggregate_mean(u, NULL, 3, 5, out);
    for (int i = 0; i < 5; i++) CHECK_NEAR(out[i], 2.0, 1e-6);
    double w[3] = {1, 3, 0};
    aggregate_mean(u, w, 3, 5, out);
    for (int i = 0; i < 5; i++) CHECK_NEAR(out[i], (a[i] + 3 * b[i]) / 4.0, 1e-6);

    /* large vectors exercise the blocked accumulation */
    static float big1[10000], big2[10000], bo[10000];
    for (int i = 0; i < 10000; i++) { big1[i] = (float)i; big2[i] = -(float)i + 2; }
    const float *bu[2] = {big1, big2};
    aggregate_mean(bu, NULL, 2, 10000, bo);
    int allone = 1;
    for (int i = 0; i < 10000; i++) allone &= bo[i] == 1.0f;
    CHECK(allone);

    CHECK(update_check(a, 5, 5) == NULL);
    float nan_u[5] = {1, 2, NAN, 4, 5}, inf_u[5] = {1, -INFINITY, 3, 4, 5};
    CHECK(update_check(nan_u, 5, 5) != NULL);
    CHECK(update_check(inf_u, 5, 5) != NULL);
    CHECK(update_check(a, 4, 5) != NULL);

    /* fedavg: global becomes the average; fedavgm: momentum on the pseudo-gradient */
    float g[2] = {1, 1}, avg[2] = {0, 2}, m[2] = {0, 0};
    aggregate_server_step(AGG_FEDAVG, g, avg, NULL, 0, 1, 2);
    CHECK(g[0] == 0 && g[1] == 2);
    g[0] = g[1] = 1;
    aggregate_server_step(AGG_FEDAVGM, g, avg, m, 0.5f, 1.0f, 2);
    CHECK_NEAR(m[0], 1, 1e-7);   /* delta = global - avg */
    CHECK_NEAR(g[0], 0, 1e-7);
    aggregate_server_step(AGG_FEDAVGM, g, avg, m, 0.5f, 1.0f, 2);
    /* delta = 0 - 0 = 0; m = 0.5; g = -0.5 (momentum carries on) */
    CHECK_NEAR(m[0], 0.5, 1e-7);
    CHECK_NEAR(g[0], -0.5, 1e-7);

    aggregator_kind k;
    CHECK(aggregator_parse("fedavgm", &k) == 0 && k == AGG_FEDAVGM);
    CHECK(aggregator_parse("fedsgd", &k) != 0);
    CHECK_DONE();
}
