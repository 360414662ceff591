// The megakernels of the "opaque" row of KERNEL_VARIANTS (kernel/features.h).
#define KERNEL_FEATURES KF_OPAQUE
#define MEGA_KERNELS_FN mega_kernels_KV_OPAQUE
// 8 resident blocks per SM (64 registers) rather than cuda_internal.h's default of 10 (48): fewer
// spills, and the H100 renders the Cornell box of scenes/cornell.json 41 % faster
// (docs/PERFORMANCE.md, stop 28). An -DMEGA_MIN_BLOCKS on the command line still wins.
#ifndef MEGA_MIN_BLOCKS
#define MEGA_MIN_BLOCKS 8
#endif
#include "cuda/megakernel.cuh"
