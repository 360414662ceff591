/* The bidirectional integrators' CPU driver for scenes with participating media: render_vcm.c
 * compiled with the media columns and code (KERNEL_MEDIA 1, the features of the "media" variant,
 * kernel/features.h), as kernel_cpu_media.c is for the path tracer, so that render_vcm.c's
 * surface build keeps its code. Its entry points carry the suffix _media; render_vcm.c's create
 * hands scenes with KF_MEDIA here. */
#define KERNEL_MEDIA    1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA | KF_INSTANCES)

#include "render_vcm.c"
