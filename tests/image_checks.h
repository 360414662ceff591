/* Image measures the integrator tests compare renders with (linear RGB float images). */
#ifndef CAUSTIC_TEST_IMAGE_CHECKS_H
#define CAUSTIC_TEST_IMAGE_CHECKS_H

#include <math.h>

/* Mean over the n pixels' channels. */
static inline double image_mean(const float *img, int n) {
    double s = 0;
    for (int i = 0; i < 3 * n; ++i) s += img[i];
    return s / (3.0 * n);
}
/* Sum of |a - b| over 4x4 pixel blocks, relative to the sum of b: noise averages out, bias not. */
static inline double block_error(const float *a, const float *b, int w, int h) {
    double num = 0, den = 0;
    for (int by = 0; by < h; by += 4)
        for (int bx = 0; bx < w; bx += 4)
            for (int c = 0; c < 3; ++c) {
                double sa = 0, sb = 0;
                for (int y = by; y < by + 4; ++y)
                    for (int x = bx; x < bx + 4; ++x) {
                        sa += a[3 * (y * w + x) + c];
                        sb += b[3 * (y * w + x) + c];
                    }
                num += fabs(sa - sb);
                den += sb;
            }
    return num / den;
}

#endif
