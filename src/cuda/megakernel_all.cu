// The megakernels of the "all" row of KERNEL_VARIANTS (kernel/features.h).
#define KERNEL_FEATURES KF_ALL
#define MEGA_KERNELS_FN mega_kernels_KV_ALL
#include "cuda/megakernel.cuh"
