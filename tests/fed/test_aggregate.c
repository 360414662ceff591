/* Aggregation: the mean and weighted mean of known vectors, median, trimmed mean, norm
 * clipping, FedAvgM arithmetic. */
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
    for (int i = 0; i < 10000; i++) {
        big1[i] = (float)i;
        big2[i] = -(float)i + 2;
    }
    const float *bu[2] = {big1, big2};
    aggregate_mean(bu, NULL, 2, 10000, bo);
    int allone = 1;
    for (int i = 0; i < 10000; i++) allone &= bo[i] == 1.0f;
    CHECK(allone);

    /* robust combinations: one poisoned client among five cannot move the median or the
     * 20 %-trimmed mean, while it drags the plain mean */
    float r0[3] = {1, 10, -1}, r1[3] = {2, 11, -2}, r2[3] = {3, 12, -3}, r3[3] = {4, 13, -4},
          r4[3] = {1e6f, -1e6f, 1e6f};
    const float *ru[5] = {r0, r1, r2, r3, r4};
    float ro[3];
    aggregate_median(ru, 5, 3, ro);
    CHECK(ro[0] == 3 && ro[1] == 11 && ro[2] == -2);
    aggregate_median(ru, 4, 3, ro); /* even count: mean of the middle two */
    CHECK(ro[0] == 2.5f && ro[1] == 11.5f && ro[2] == -2.5f);
    aggregate_trimmed_mean(ru, 5, 3, 0.2f, ro); /* drops one at each end */
    CHECK_NEAR(ro[0], 3.0, 1e-6);
    CHECK_NEAR(ro[1], 11.0, 1e-6);
    CHECK_NEAR(ro[2], -2.0, 1e-6);
    aggregate_trimmed_mean(ru, 5, 3, 0.0f, ro); /* trim 0 = the mean */
    CHECK_NEAR(ro[0], (1 + 2 + 3 + 4 + 1e6) / 5.0, 1e-1);
    aggregate_trimmed_mean(ru, 2, 3, 0.49f, ro); /* keeps at least one value per side pair */
    CHECK_NEAR(ro[0], 1.5, 1e-6);
    robust_kind rk;
    float trim = 0;
    CHECK(robust_parse("median", &rk, &trim) == 0 && rk == ROBUST_MEDIAN);
    CHECK(robust_parse("trimmed:0.1", &rk, &trim) == 0 && rk == ROBUST_TRIMMED && trim == 0.1f);
    CHECK(robust_parse("trimmed:0.5", &rk, &trim) != 0);
    CHECK(robust_parse("trimmed:", &rk, &trim) != 0);
    CHECK(robust_parse("krum", &rk, &trim) != 0);

    /* clipping scales update - global to the norm bound and leaves smaller updates alone */
    float gl[2] = {1, 1}, up[2] = {4, 5}, small[2] = {1.3f, 1.4f};
    CHECK_NEAR(aggregate_clip(up, gl, 2, 1.0f), 5.0, 1e-6);
    CHECK_NEAR(up[0], 1.6, 1e-6);
    CHECK_NEAR(up[1], 1.8, 1e-6);
    aggregate_clip(small, gl, 2, 1.0f);
    CHECK(small[0] == 1.3f && small[1] == 1.4f);

    /* fedavg: global becomes the average; fedavgm: momentum on the pseudo-gradient */
    float g[2] = {1, 1}, avg[2] = {0, 2}, m[2] = {0, 0};
    aggregate_server_step(AGG_FEDAVG, g, avg, NULL, 0, 1, 2);
    CHECK(g[0] == 0 && g[1] == 2);
    g[0] = g[1] = 1;
    aggregate_server_step(AGG_FEDAVGM, g, avg, m, 0.5f, 1.0f, 2);
    CHECK_NEAR(m[0], 1, 1e-7); /* delta = global - avg */
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
