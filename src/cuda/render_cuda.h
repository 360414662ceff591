/* CUDA backend: the shared kernel's path tracer as a megakernel (one thread per pixel, 32x4
 * blocks), scene arrays uploaded once, accumulation kept on the GPU in float. Built when nvcc
 * exists (render_cuda.cu); otherwise render_cuda_stub.c reports no devices. */
#ifndef CAUSTIC_CUDA_RENDER_H
#define CAUSTIC_CUDA_RENDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct scene;
typedef struct cuda_renderer cuda_renderer;

/* Number of usable CUDA devices (0 without a driver/device or in a CPU-only build). */
int cuda_device_count(void);
/* One line per device into buf ("0: NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB, sm_90"). */
void cuda_describe_devices(char *buf, size_t n);

cuda_renderer *cuda_renderer_create(const struct scene *s, int width, int height, char *err, size_t errlen);
/* Adds samples [begin, end) of every pixel to the GPU accumulation buffer. */
int cuda_renderer_pass(cuda_renderer *r, int sampler, uint32_t seed, uint32_t spp_total, int max_depth, float clamp,
                       float adaptive, uint32_t adaptive_min, uint32_t begin, uint32_t end, uint64_t *rays,
                       uint64_t *bad, uint64_t *samples, char *err, size_t errlen);
/* Copies the accumulation (width*height*3 sums), the per-pixel sample counts and squared
 * luminance sums to / from the host. */
int cuda_renderer_read(cuda_renderer *r, double *accum, uint32_t *count, double *lum2, char *err, size_t errlen);
int cuda_renderer_write(cuda_renderer *r, const double *accum, const uint32_t *count, const double *lum2, char *err,
                        size_t errlen);
void cuda_renderer_free(cuda_renderer *r);

/* Traversal only: traces n rays (origins, directions, tmax as float arrays on the host) against
 * the renderer's scene, `runs` times; returns the median seconds of one trace of all rays (the
 * rays are uploaded once, before timing), the hit count and the sum of hit distances. */
int cuda_trace_rays(cuda_renderer *r, const float *o, const float *d, const float *tmax, size_t n, int any_hit,
                    int runs, double *seconds, uint64_t *hits, double *tsum, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
