// The trace-only kernel for scenes of triangles only (TRACE_VARIANTS, cuda_internal.h).
#define KERNEL_FEATURES KF_PRIM(PRIM_TRIANGLE)
#define TRACE_KERNEL_FN trace_kernel_TV_TRIANGLES
#include "cuda/trace_kernel.cuh"
