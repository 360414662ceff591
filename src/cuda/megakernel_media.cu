// The megakernels of the "media" row of KERNEL_VARIANTS (kernel/features.h): every surface
// feature and participating media (the path state's medium columns, kernel/medium.h), and
// dispersion (the path's wavelength, kernel/spectral.h).
#define KERNEL_MEDIA    1
#define KERNEL_SPECTRAL 1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA | KF_DISPERSION)
#define MEGA_KERNELS_FN mega_kernels_KV_MEDIA
#include "cuda/megakernel.cuh"
