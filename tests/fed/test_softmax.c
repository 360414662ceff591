/* Softmax cross-entropy: known values, gradient rows sum to zero, no overflow for huge logits. */
#include "check.h"
#include "mlp.h"

#include <math.h>

int main(void) {
    float z[10] = {0};
    uint8_t y = 3;
    float d[10];
    int correct = -1;
    double l = softmax_xent(z, &y, 1, 10, d, &correct);
    CHECK_NEAR(l, log(10.0), 1e-9);
    CHECK_NEAR(d[3], 0.1 - 1.0, 1e-7);
    CHECK_NEAR(d[0], 0.1, 1e-7);
    /* ties: the first maximum counts as the prediction */
    CHECK(correct == 0);

    float big[2 * 10];
    uint8_t ys[2] = {1, 2};
    for (int k = 0; k < 10; k++) {
        big[k] = 1000.0f + (float)k;       /* would overflow exp() without the max shift */
        big[10 + k] = -1000.0f - (float)k; /* would underflow */
    }
    float dd[20];
    l = softmax_xent(big, ys, 2, 10, dd, &correct);
    CHECK(isfinite(l));
    /* row 0: loss = lse - z1 = 9 + log(sum exp(k-9)) - 1 */
    double s = 0;
    for (int k = 0; k < 10; k++) s += exp((double)k - 9.0);
    double l0 = 9.0 + log(s) - 1.0;
    double s1 = 0;
    for (int k = 0; k < 10; k++) s1 += exp(-(double)k);
    double l1 = log(s1) + 2.0;
    CHECK_NEAR(l, l0 + l1, 1e-3);
    for (int r = 0; r < 2; r++) {
        double sum = 0;
        for (int k = 0; k < 10; k++) {
            CHECK(isfinite(dd[r * 10 + k]));
            sum += dd[r * 10 + k];
        }
        CHECK_NEAR(sum, 0.0, 1e-6);
    }
    CHECK(correct == 0); /* argmax 9 and 0; labels 1 and 2 */
    /* confident and right: loss near 0 */
    float conf[10] = {0};
    conf[7] = 50.0f;
    uint8_t y7 = 7;
    l = softmax_xent(conf, &y7, 1, 10, NULL, &correct);
    CHECK(l < 1e-15 && l >= 0 && correct == 1);
    CHECK_DONE();
}
