/* --adaptive-depth: the first samples of a pixel trace short paths and the depth limit grows
 * with the sample index, so the first progressive passes are fast; the limit is
 * ADAPTIVE_DEPTH_START for sample 0 and one more for each doubling of the sample count (samples
 * 1-2: +1, 3-6: +2, 7-14: +3, ...) until it reaches the maximum depth. The limit depends on the
 * sample index alone, so images stay independent of threads, passes and backend.
 *
 * Truncated samples alone would make the image darker. Instead every contribution is weighted
 * by its path length ("band" b: the depth of the vertex whose emission it adds; next-event
 * estimation at depth d belongs to band d + 1): with N the spp target and N_b the number of
 * sample indices in [0, N) whose limit reaches b, a contribution of band b counts N / N_b. Each
 * band is then averaged over exactly the samples that trace it, and the mean over N samples is
 * an unbiased estimate of the full-depth image (for the bands that some sample below N
 * reaches). Before N samples (an unfinished render, a checkpoint, a time limit) the image is
 * darker than the full-depth one but never brighter: the limit grows with the index, so the
 * first M samples hold at most a fraction N_b / N of band b's samples. */
#ifndef CAUSTIC_KERNEL_ADAPTIVE_DEPTH_H
#define CAUSTIC_KERNEL_ADAPTIVE_DEPTH_H

#include "compat.h"

#define ADAPTIVE_DEPTH_START 4

/* floor(log2(x)) of x > 0 */
KFN int klog2u(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return 31 - __clz((int)x);
#else
    return 31 - __builtin_clz(x);
#endif
}

/* Depth limit of sample `index`; start = 0 (adaptive depth off) gives max_depth. */
KFN int adaptive_depth_limit(uint32_t index, int start, int max_depth) {
    if (start <= 0 || start >= max_depth) return max_depth;
    int d = start + (index == 0xffffffffu ? 31 : klog2u(index + 1u));
    return d < max_depth ? d : max_depth;
}

/* Weight N / N_b of a contribution of band b (see above); 1 with adaptive depth off. Samples
 * reach band b > start from index 2^(b - start) - 1 on. */
KFN float adaptive_depth_weight(int band, int start, uint32_t spp) {
    if (start <= 0 || band <= start || band - start >= 32) return 1.0f;
    uint32_t first = (1u << (band - start)) - 1u;
    return first < spp ? (float)spp / (float)(spp - first) : 1.0f;
}

#endif
