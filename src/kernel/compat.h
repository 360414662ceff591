/* Per-target qualifiers so that every kernel header compiles unchanged as C11 (CPU) and as
 * CUDA C++ (nvcc). Kernel code uses only the subset of C both accept: no designated
 * initialisers, no compound literals, no VLAs, no function pointers, no `restrict`. */
#ifndef CAUSTIC_KERNEL_COMPAT_H
#define CAUSTIC_KERNEL_COMPAT_H

#include <stdint.h>

#if defined(__CUDACC__)
#  define KERNEL_TARGET_CUDA 1
#  define KFN __host__ __device__ static inline __attribute__((always_inline))
#  define KCONST __constant__
#  include <math.h>
#else
#  define KERNEL_TARGET_CPU 1
#  define KFN static inline __attribute__((always_inline))
#  define KCONST static const
#  include <math.h>
#endif

#define K_PI      3.14159265358979323846f
#define K_INV_PI  0.31830988618379067154f
#define K_INV_2PI 0.15915494309189533577f
#define K_INV_4PI 0.07957747154594766788f
#define K_INF     INFINITY
/* Offset used to step off a surface along its normal, relative to the hit point's magnitude. */
#define K_RAY_EPS 5e-5f

KFN float kmin(float a, float b) { return a < b ? a : b; }
KFN float kmax(float a, float b) { return a > b ? a : b; }
KFN float kclamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
KFN int   kmini(int a, int b) { return a < b ? a : b; }
KFN int   kmaxi(int a, int b) { return a > b ? a : b; }
KFN float ksqr(float x) { return x * x; }
KFN float ksafe_sqrt(float x) { return sqrtf(kmax(x, 0.0f)); }
KFN int   kfinite(float x) { return isfinite(x) ? 1 : 0; }

/* Index of the lowest set bit of a nonzero mask. */
KFN int kctz(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __ffs((int)x) - 1;
#else
    return __builtin_ctz(x);
#endif
}

/* SIMD helpers of the CPU (Cycles style: the traversal loop is one, a few helpers in
 * bvh_traverse.h have an SSE body here and a scalar body on the GPU). SSE2 is part of x86-64, so
 * every x86-64 build has it; define CAUSTIC_NO_SIMD to test the scalar bodies on the CPU. */
#if defined(KERNEL_TARGET_CPU) && defined(__SSE2__) && !defined(CAUSTIC_NO_SIMD)
#  define KERNEL_SIMD_SSE 1
#  include <emmintrin.h>
#endif

#endif
