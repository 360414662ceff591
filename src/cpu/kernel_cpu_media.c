/* The CPU path tracer of one ISA level for scenes with participating media, instances or
 * dispersion: the shared kernel compiled with the media columns and code (KERNEL_MEDIA 1), the
 * two-level BVH's traversal (KF_INSTANCES) and the path's wavelength (KERNEL_SPECTRAL 1,
 * kernel/spectral.h): the features of the "instances" variant (kernel/features.h), so that
 * kernel_cpu.c's surface kernel keeps its code. render_cpu.c picks this one for a scene with
 * media, instances or a dispersive material. */
#define KERNEL_MEDIA    1
#define KERNEL_SPECTRAL 1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA | KF_INSTANCES | KF_DISPERSION)
#include "cpu/isa.h"

#include "kernel/kernel.h"

#include "cpu/render_rect.h"

void CPU_ISA_FN(render_rect_media)(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st) {
    render_rect(p, x0, y0, x1, y1, st);
}

#include "cpu/trace_rays.h"

size_t CPU_ISA_FN(trace_rays_instanced)(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax,
                                        size_t begin, size_t end, double *tsum, hit *out) {
    return trace_rays(k, any_hit, o, d, tmax, begin, end, tsum, out);
}
int CPU_ISA_FN(closest_surface_instanced)(const kscene *k, ray r, hit *h, surface *sf) {
    return closest_surface(k, r, h, sf);
}
