// BSDF queries on the GPU (kernel/bsdf_probe.h), for the conformance test's CPU == GPU check.
#include <stdio.h>

#include <cuda_runtime.h>

#include "cuda/render_cuda.h"
#include "kernel/bsdf_probe.h"

__global__ void bsdf_probe_kernel(const bsdf_probe_in *in, bsdf_probe_out *out, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) bsdf_probe_one(&in[i], &out[i]);
}

extern "C" int cuda_bsdf_probe(const struct bsdf_probe_in *in, struct bsdf_probe_out *out, int n, char *err,
                               size_t errlen) {
    bsdf_probe_in *din = NULL;
    bsdf_probe_out *dout = NULL;
    cudaError_t e = cudaMalloc((void **)&din, (size_t)n * sizeof *din);
    if (e == cudaSuccess) e = cudaMalloc((void **)&dout, (size_t)n * sizeof *dout);
    if (e == cudaSuccess) e = cudaMemcpy(din, in, (size_t)n * sizeof *din, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        bsdf_probe_kernel<<<(n + 127) / 128, 128>>>(din, dout, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(out, dout, (size_t)n * sizeof *dout, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) snprintf(err, errlen, "CUDA: bsdf probe: %s", cudaGetErrorString(e));
    cudaFree(din);
    cudaFree(dout);
    return e == cudaSuccess ? 0 : -1;
}
