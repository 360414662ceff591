// The trace-only kernel for any scene (TRACE_VARIANTS, cuda_internal.h).
#define KERNEL_FEATURES KF_ALL
#define TRACE_KERNEL_FN trace_kernel_TV_ALL
#include "cuda/trace_kernel.cuh"
