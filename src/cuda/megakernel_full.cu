// The megakernels of the "full" row of KERNEL_VARIANTS (kernel/features.h): every surface feature.
#define KERNEL_FEATURES KF_ALL
#define MEGA_KERNELS_FN mega_kernels_KV_FULL
#include "cuda/megakernel.cuh"
