/* Metrics against a confusion matrix worked out by hand. */
#include "check.h"
#include "metrics.h"

int main(void) {
    /* 3 classes used. truth/pred pairs:
     * class 0: 3 samples -> predicted 0,0,1
     * class 1: 2 samples -> predicted 1,1
     * class 2: 5 samples -> predicted 2,2,2,0,1 */
    uint8_t t[10] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 2};
    uint8_t p[10] = {0, 0, 1, 1, 1, 2, 2, 2, 0, 1};
    confusion c;
    confusion_build(&c, t, p, 10);
    CHECK(c.n == 10 && c.cm[0][0] == 2 && c.cm[0][1] == 1 && c.cm[2][0] == 1 && c.cm[2][1] == 1);
    class_metrics m;
    metrics_compute(&c, &m);
    CHECK_NEAR(m.accuracy, 7.0 / 10, 1e-12);
    /* class 0: tp 2, predicted 3 (2 + one from class 2), support 3 */
    CHECK_NEAR(m.precision[0], 2.0 / 3, 1e-12);
    CHECK_NEAR(m.recall[0], 2.0 / 3, 1e-12);
    CHECK_NEAR(m.f1[0], 2.0 / 3, 1e-12);
    /* class 1: tp 2, predicted 4, support 2 -> p .5 r 1 f1 2/3 */
    CHECK_NEAR(m.precision[1], 0.5, 1e-12);
    CHECK_NEAR(m.recall[1], 1.0, 1e-12);
    CHECK_NEAR(m.f1[1], 2.0 / 3, 1e-12);
    /* class 2: tp 3, predicted 3, support 5 -> p 1 r .6 f1 .75 */
    CHECK_NEAR(m.precision[2], 1.0, 1e-12);
    CHECK_NEAR(m.recall[2], 0.6, 1e-12);
    CHECK_NEAR(m.f1[2], 0.75, 1e-12);
    CHECK(m.support[0] == 3 && m.support[1] == 2 && m.support[2] == 5 && m.support[3] == 0);
    CHECK_NEAR(m.macro_f1, (2.0 / 3 + 2.0 / 3 + 0.75) / 3, 1e-12);
    CHECK_NEAR(m.macro_precision, (2.0 / 3 + 0.5 + 1.0) / 3, 1e-12);
    CHECK_NEAR(m.micro_f1, 0.7, 1e-12);
    CHECK_NEAR(m.weighted_f1, (3 * 2.0 / 3 + 2 * 2.0 / 3 + 5 * 0.75) / 10, 1e-12);
    double n[MET_CLASSES][MET_CLASSES];
    confusion_normalize(&c, n);
    CHECK_NEAR(n[2][2], 0.6, 1e-12);
    CHECK_NEAR(n[0][1], 1.0 / 3, 1e-12);
    CHECK(n[5][5] == 0.0);
    CHECK_DONE();
}
