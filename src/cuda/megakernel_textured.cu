// The megakernels of the "textured" row of KERNEL_VARIANTS (kernel/features.h).
#define KERNEL_FEATURES KF_TEXTURED
#define MEGA_KERNELS_FN mega_kernels_KV_TEXTURED
#include "cuda/megakernel.cuh"
