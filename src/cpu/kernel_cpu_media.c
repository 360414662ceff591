/* The CPU path tracer of one ISA level for scenes with participating media: the shared kernel
 * compiled with the media columns and code (KERNEL_MEDIA 1, the features of the "media" variant,
 * kernel/features.h), so that kernel_cpu.c's surface kernel keeps its code. render_cpu.c picks
 * this one for a scene whose features have KF_MEDIA, and for dispersive scenes (KF_DISPERSION:
 * the path's wavelength column, KERNEL_SPECTRAL 1, kernel/spectral.h). */
#define KERNEL_MEDIA    1
#define KERNEL_SPECTRAL 1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA | KF_DISPERSION)
#include "cpu/isa.h"

#include "kernel/kernel.h"

#include "cpu/render_rect.h"

void CPU_ISA_FN(render_rect_media)(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st) {
    render_rect(p, x0, y0, x1, y1, st);
}
