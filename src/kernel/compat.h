/* Per-target qualifiers so that every kernel header compiles unchanged as C11 (CPU) and as
 * CUDA C++ (nvcc). Kernel code uses only the subset of C both accept: no designated
 * initialisers, no compound literals, no VLAs, no function pointers, no `restrict`. */
#ifndef CAUSTIC_KERNEL_COMPAT_H
#define CAUSTIC_KERNEL_COMPAT_H

#include <stdint.h>

#if defined(__CUDACC__)
#define KERNEL_TARGET_CUDA 1
#define KFN                __host__ __device__ static inline __attribute__((always_inline))
#include <math.h>
#else
#define KERNEL_TARGET_CPU 1
#if defined(CAUSTIC_KERNEL_NO_FORCE_INLINE)
#define KFN static inline
#else
#define KFN static inline __attribute__((always_inline))
#endif
#include <math.h>
#endif

/* The traversal's entry point (trace_ray, bvh_traverse.h). A CUDA translation unit whose kernel
 * traces from several places (the megakernel: closest hits and shadow rays) defines
 * KERNEL_TRACE_NOINLINE before including the kernel: the traversal then is one real function
 * with its own register allocation, instead of a copy inlined at every call site (the copies
 * made the megakernel's code larger and spilled its path state inside the traversal loop:
 * docs/performance-log.md). Everywhere else it is inlined. */
#if defined(__CUDACC__) && defined(KERNEL_TRACE_NOINLINE)
#define KFN_TRACE __host__ __device__ static __noinline__
#else
#define KFN_TRACE KFN
#endif

/* Rarely run code that the GPU's megakernels would otherwise inline at every call site (the
 * procedural textures' noise at each texture lookup): one real function on the GPU, inlined on the
 * CPU as KFN. */
#if defined(__CUDACC__)
#define KFN_COLD __host__ __device__ static __noinline__
#else
#define KFN_COLD KFN
#endif

/* A stage of the CPU's path loop that is a real function there and inlined on the GPU (as KFN).
 * The CPU megakernel (render_rect) inlined everything into one function, whose register
 * allocation spilled across the shading and the traversal loops alike; the shading as its own
 * function (stage_shade_with) costs a call per bounce and was 1.04-1.06x faster on the CPU
 * (docs/performance-log.md, 2026-11-28, branch `cpu11`). The camera ray's path_generate as one
 * too was slower. `unused`:
 * a translation unit that includes the kernel without calling it. */
#if defined(__CUDACC__)
#define KFN_CPU_CALL KFN
#else
#define KFN_CPU_CALL static __attribute__((noinline, unused))
#endif

/* A compile-time check in either language (C11 _Static_assert, C++ static_assert). */
#if defined(__cplusplus)
#define KSTATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define KSTATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
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
KFN int kmini(int a, int b) { return a < b ? a : b; }
KFN int kmaxi(int a, int b) { return a > b ? a : b; }
KFN float ksafe_sqrt(float x) { return sqrtf(kmax(x, 0.0f)); }
KFN int kfinite(float x) { return isfinite(x) ? 1 : 0; }

/* Index of the lowest set bit of a nonzero mask. */
KFN int kctz(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __ffs((int)x) - 1;
#else
    return __builtin_ctz(x);
#endif
}

/* Whether p holds on every active lane of the GPU warp (p itself on the CPU). */
KFN int kwarp_all(int p) {
#if defined(__CUDA_ARCH__)
    return __all_sync(__activemask(), p);
#else
    return p;
#endif
}

/* Unsigned min / max (the GPU's traversal sorts child keys with them: IMNMX, no branches). */
KFN uint32_t kminu(uint32_t a, uint32_t b) { return a < b ? a : b; }
KFN uint32_t kmaxu(uint32_t a, uint32_t b) { return a > b ? a : b; }
/* Bit pattern of a float and back (monotonic in the value for non-negative floats). */
KFN uint32_t kfloat_bits(float x) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__float_as_uint(x);
#else
    union {
        float f;
        uint32_t u;
    } v;
    v.f = x;
    return v.u;
#endif
}
KFN float kbits_float(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(x);
#else
    union {
        float f;
        uint32_t u;
    } v;
    v.u = x;
    return v.f;
#endif
}

/* a * b + c with one rounding where the target fuses it (the GPU; CPUs built with FMA), else a
 * multiply and an add (fmaf without the instruction would be a library call): the traversal's slab
 * margins cover either (bvh_traverse.h, make_bvh_ray). */
KFN float kmuladd(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#elif defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}
/* Three-operand signed integer min / max (the scalar node visitor's slab tests on float bits):
 * one DPX instruction each on Hopper (sm_90 and later); plain compares elsewhere, the same
 * results. kimax3_relu(a, b, c) = max(a, b, c, 0); kiaddmin(a, b, c) = min(a + b, c). */
KFN int32_t kimax3_relu(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return __vimax3_s32_relu(a, b, c);
#else
    int32_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > 0 ? m : 0;
#endif
}
KFN int32_t kimin3(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return __vimin3_s32(a, b, c);
#else
    int32_t m = a < b ? a : b;
    return m < c ? m : c;
#endif
}
KFN int32_t kiaddmin(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return __viaddmin_s32(a, b, c);
#else
    int32_t s = (int32_t)((uint32_t)a + (uint32_t)b); /* wraps as the instruction does */
    return s < c ? s : c;
#endif
}

/* Four floats / uints at a 16-byte aligned address (a row of a bvh4_node, of a bvh_leaf4): one
 * 128-bit load through the read-only cache on the GPU, four plain loads elsewhere. Kernels index
 * .v only with constants (KUNROLL loops), so the copies stay in registers. */
typedef struct kf4 {
    float v[4];
} kf4;
typedef struct ku4 {
    uint32_t v[4];
} ku4;
KFN kf4 kload_f4(const float *p) {
    kf4 r;
#if defined(__CUDA_ARCH__)
    float4 q = __ldg((const float4 *)p);
    r.v[0] = q.x;
    r.v[1] = q.y;
    r.v[2] = q.z;
    r.v[3] = q.w;
#else
    r.v[0] = p[0];
    r.v[1] = p[1];
    r.v[2] = p[2];
    r.v[3] = p[3];
#endif
    return r;
}
KFN ku4 kload_u4(const uint32_t *p) {
    ku4 r;
#if defined(__CUDA_ARCH__)
    uint4 q = __ldg((const uint4 *)p);
    r.v[0] = q.x;
    r.v[1] = q.y;
    r.v[2] = q.z;
    r.v[3] = q.w;
#else
    r.v[0] = p[0];
    r.v[1] = p[1];
    r.v[2] = p[2];
    r.v[3] = p[3];
#endif
    return r;
}
/* Full unrolling of a short constant-trip loop (so that array indices become constants). */
#if defined(__CUDA_ARCH__)
#define KUNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define KUNROLL /* nvcc's host pass */
#elif defined(__clang__)
#define KUNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define KUNROLL _Pragma("GCC unroll 4")
#else
#define KUNROLL
#endif

/* SIMD helpers of the CPU (Cycles style: the traversal loop is one, a few helpers in
 * bvh_traverse.h have an SSE body here and a scalar body on the GPU). SSE2 is part of x86-64, so
 * every x86-64 build has it; define CAUSTIC_NO_SIMD to test the scalar bodies on the CPU. */
#if defined(KERNEL_TARGET_CPU) && defined(__SSE2__) && !defined(CAUSTIC_NO_SIMD)
#define KERNEL_SIMD_SSE 1
#include <emmintrin.h>
#endif
/* AVX2 (the avx2 CPU kernel level, compiled with -mavx2 -mfma and chosen at run time:
 * src/cpu/isa.h): the traversal uses 8-wide nodes and tests them with 256-bit slabs (types.h:
 * BVH_WIDTH). CAUSTIC_NO_AVX2 keeps the SSE 4-wide path (the sse level defines it; so do
 * test_bvh_sse and test_cuda). */
#if defined(KERNEL_SIMD_SSE) && defined(__AVX2__) && !defined(CAUSTIC_NO_AVX2)
#define KERNEL_SIMD_AVX2 1
#include <immintrin.h>
#endif
/* AVX-512 (the avx512 level: AVX-512 F/VL/BW/DQ + GFNI, src/cpu/isa.h): the same 8-wide nodes and
 * 256-bit vectors as AVX2, with mask registers, compress and GFNI where they win (bvh_visit's
 * pushes, the sampler's bit reversal). CAUSTIC_NO_AVX512 keeps the AVX2 bodies. */
#if defined(KERNEL_SIMD_AVX2) && defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) &&             \
    defined(__AVX512DQ__) && defined(__GFNI__) && !defined(CAUSTIC_NO_AVX512)
#define KERNEL_SIMD_AVX512 1
#endif

#endif
