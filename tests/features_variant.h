/* Renderers over the shared kernel compiled with each megakernel variant's features
 * (tests/features_variant.c, once per row of KERNEL_VARIANTS). */
#ifndef CAUSTIC_TEST_FEATURES_VARIANT_H
#define CAUSTIC_TEST_FEATURES_VARIANT_H

#include "kernel/features.h"
#include "kernel/pass.h"

/* features_render_KV_DIFFUSE, ...: pass p's samples of every pixel of p->cam's image, their sums
 * into rgb (3 doubles a pixel). */
#define FEATURES_RENDER_DECL(NAME, name, features)                                                                     \
    void features_render_##NAME(const kscene *s, const kpass *p, double *rgb);
KERNEL_VARIANTS(FEATURES_RENDER_DECL)
#undef FEATURES_RENDER_DECL

#endif
