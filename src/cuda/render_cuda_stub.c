/* CPU-only build: no CUDA devices. */
#include <stdio.h>

#include "cuda/render_cuda.h"

int cuda_device_count(void) { return 0; }
void cuda_describe_devices(char *buf, size_t n) {
    snprintf(buf, n, "no CUDA support in this build (nvcc was not found)\n");
}
cuda_renderer *cuda_renderer_create(const struct kscene *k, const struct bvh *tree, int width, int height,
                                    const cuda_config *cfg, char *err, size_t errlen) {
    (void)k;
    (void)tree;
    (void)width;
    (void)height;
    (void)cfg;
    snprintf(err, errlen, "this build has no CUDA backend (nvcc was not found at build time)");
    return NULL;
}
int cuda_renderer_pass(cuda_renderer *r, const struct kpass *p, cuda_pass_stats *st, char *err, size_t errlen) {
    (void)r;
    (void)p;
    (void)st;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_tile_begin(cuda_renderer *r, int slot, const struct kpass *p, double *sum, uint32_t *count,
                             double *lum2, int tw, int th, int x0, int y0, char *err, size_t errlen) {
    (void)r;
    (void)slot;
    (void)p;
    (void)sum;
    (void)count;
    (void)lum2;
    (void)tw;
    (void)th;
    (void)x0;
    (void)y0;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_tile_end(cuda_renderer *r, int slot, cuda_pass_stats *st, char *err, size_t errlen) {
    (void)r;
    (void)slot;
    (void)st;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_read(cuda_renderer *r, double *a, uint32_t *c, double *l, double *v, char *err, size_t errlen) {
    (void)r;
    (void)a;
    (void)c;
    (void)l;
    (void)v;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_write(cuda_renderer *r, const double *a, const uint32_t *c, const double *l, const double *v,
                        char *err, size_t errlen) {
    (void)r;
    (void)a;
    (void)c;
    (void)l;
    (void)v;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
void cuda_renderer_free(cuda_renderer *r) { (void)r; }
int cuda_trace_rays(cuda_renderer *r, const float *o, const float *d, const float *tmax, size_t n, unsigned width,
                    int any_hit, int runs, double *seconds, uint64_t *hits, double *tsum, char *err, size_t errlen) {
    (void)r;
    (void)o;
    (void)d;
    (void)tmax;
    (void)n;
    (void)width;
    (void)any_hit;
    (void)runs;
    (void)seconds;
    (void)hits;
    (void)tsum;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
double cuda_renderer_bvh_seconds(const cuda_renderer *r) {
    (void)r;
    return 0.0;
}
const char *cuda_renderer_kernel_variant(const cuda_renderer *r) {
    (void)r;
    return NULL;
}
void cuda_bvh_out_free(cuda_bvh_out *o) { (void)o; }
int cuda_lbvh_build(const struct kscene *k, cuda_bvh_out *out, char *err, size_t errlen) {
    (void)k;
    (void)out;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_clear(cuda_renderer *r, char *err, size_t errlen) {
    (void)r;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
int cuda_renderer_tonemap8(cuda_renderer *r, int op, float scale, unsigned char *rgb8, char *err, size_t errlen) {
    (void)r;
    (void)op;
    (void)scale;
    (void)rgb8;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
cuda_vcm *cuda_vcm_create(cuda_renderer *r, const struct camera *cam, int algorithm, int max_path_length, float radius,
                          float alpha, int merge_everywhere, uint32_t seed, char *err, size_t errlen) {
    (void)r;
    (void)cam;
    (void)algorithm;
    (void)max_path_length;
    (void)radius;
    (void)alpha;
    (void)merge_everywhere;
    (void)seed;
    snprintf(err, errlen, "no CUDA backend");
    return NULL;
}
int cuda_vcm_run(cuda_vcm *v, const struct camera *cam, uint32_t first, uint32_t count, uint64_t *rays, char *err,
                 size_t errlen) {
    (void)v;
    (void)cam;
    (void)first;
    (void)count;
    (void)rays;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
void cuda_vcm_free(cuda_vcm *v) { (void)v; }
int cuda_bsdf_probe(const struct bsdf_probe_in *in, struct bsdf_probe_out *out, int n, char *err, size_t errlen) {
    (void)in;
    (void)out;
    (void)n;
    snprintf(err, errlen, "no CUDA backend");
    return -1;
}
