// The megakernels of the "all" row of KERNEL_VARIANTS (kernel/features.h): every surface feature
// but KF_FULL_ONLY's.
#define KERNEL_FEATURES KF_SURFACES
#define MEGA_KERNELS_FN mega_kernels_KV_ALL
#include "cuda/megakernel.cuh"
