// The megakernels of the "opaque" row of KERNEL_VARIANTS (kernel/features.h).
#define KERNEL_FEATURES KF_OPAQUE
#define MEGA_KERNELS_FN mega_kernels_KV_OPAQUE
#include "cuda/megakernel.cuh"
