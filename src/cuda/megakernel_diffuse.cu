// The megakernels of the "diffuse" row of KERNEL_VARIANTS (kernel/features.h).
#define KERNEL_FEATURES KF_DIFFUSE
#define MEGA_KERNELS_FN mega_kernels_KV_DIFFUSE
#include "cuda/megakernel.cuh"
