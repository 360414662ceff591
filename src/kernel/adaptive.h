/* Adaptive sampling: a pixel stops taking samples once the relative standard error of its mean
 * luminance falls below a threshold. The test runs only every ADAPTIVE_STEP samples and uses the
 * pixel's own sums, so where a pixel stops depends on its samples alone: never on threads,
 * schedules, pass boundaries or the backend's timing. */
#ifndef CAUSTIC_KERNEL_ADAPTIVE_H
#define CAUSTIC_KERNEL_ADAPTIVE_H

#include "compat.h"

#define ADAPTIVE_STEP 8u

/* Should the pixel stop before taking sample `n` (it has n samples, with luminance sums
 * sum_lum and sum_lum2)? Never before min_spp samples; threshold <= 0 disables it. Dark pixels
 * are judged against a floor of 1e-3 so black regions converge on their absolute noise. */
KFN int adaptive_done(uint32_t n, uint32_t min_spp, float threshold, double sum_lum, double sum_lum2) {
    if (threshold <= 0.0f || n < min_spp || n < 2u || (n % ADAPTIVE_STEP) != 0u) return 0;
    double dn = (double)n, mean = sum_lum / dn;
    double var = (sum_lum2 - dn * mean * mean) / (dn - 1.0);
    if (var < 0.0) var = 0.0;
    double se = sqrt(var / dn);
    return se <= (double)threshold * (fabs(mean) + 1e-3);
}

KFN double luminance_d(double r, double g, double b) { return 0.2126 * r + 0.7152 * g + 0.0722 * b; }

#endif
