/* The shared kernel compiled with one megakernel variant's features only: tests/CMakeLists.txt
 * compiles this file once per row of KERNEL_VARIANTS (kernel/features.h) with KERNEL_FEATURES set
 * to the row's features and FEATURES_VARIANT to its name, as the GPU compiles each variant's
 * megakernels; test_features renders with each on the CPU. */
#include "kernel/kernel.h"

#include "features_variant.h"

#define FEATURES_PASTE2(a, b) a##b
#define FEATURES_PASTE(a, b)  FEATURES_PASTE2(a, b)

void FEATURES_PASTE(features_render_, FEATURES_VARIANT)(const kscene *s, const kpass *p, double *rgb) {
    for (int y = 0; y < p->cam.height; ++y)
        for (int x = 0; x < p->cam.width; ++x) {
            film_pixel px = {0.0, 0.0, 0.0, 0.0, 0u};
            uint32_t rays = 0, shadow = 0, bad = 0;
            film_trace_pixel(s, p, x, y, &px, NULL, &rays, &shadow, &bad, s->node_layout);
            double *o = rgb + 3 * ((size_t)y * (size_t)p->cam.width + (size_t)x);
            o[0] = px.r;
            o[1] = px.g;
            o[2] = px.b;
        }
}
