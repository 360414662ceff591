// The megakernels of the "instances" row of KERNEL_VARIANTS (kernel/features.h): every feature of
// the "media" row and instances (a two-level BVH: kernel/bvh_traverse.h, trace_instances), so
// that a scene without instances keeps kernels without that code.
#define KERNEL_MEDIA    1
#define KERNEL_SPECTRAL 1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA | KF_DISPERSION | KF_INSTANCES)
#define MEGA_KERNELS_FN mega_kernels_KV_INSTANCES
#include "cuda/megakernel.cuh"
