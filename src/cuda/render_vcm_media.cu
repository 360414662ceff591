// The bidirectional integrators' path kernels for scenes with participating media: the kernels
// of vcm_path_kernels.cuh compiled with the media code (KERNEL_MEDIA 1, the features of the
// "media" variant, kernel/features.h), as megakernel_media.cu is for the path tracer, so that
// render_vcm.cu's surface kernels keep their code. render_vcm.cu launches these (the _media
// launchers) for a scene whose features have KF_MEDIA; every other pass is its own.
#define KERNEL_MEDIA          1
#define KERNEL_FEATURES       (KF_ALL | KF_MEDIA)
// as render_vcm.cu: one traversal function instead of an inlined copy at each trace
#define KERNEL_TRACE_NOINLINE 1
#include "cuda/cuda_internal.h"
#include "cuda/vcm_path_kernels.cuh"
