// Proof that the shared kernel compiles unchanged as CUDA: every kernel header is included and
// the path tracer is instantiated in a __global__ function. (The CUDA backend proper lives here
// too once it exists.)
#include "kernel/kernel.h"

__global__ void caustic_kernel_check(const kscene *s, float *out, int width, int height, uint32_t index) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    uint32_t rays = 0;
    vec3 l = path_trace_sample(s, x, y, index, 1u, SAMPLER_SOBOL, 16u, s->max_depth, &rays);
    float *p = out + 3 * (y * width + x);
    p[0] = l.x; p[1] = l.y; p[2] = l.z;
}
