/* Regression: the default scene rendered now matches a stored high-spp reference, judged
 * against the noise actually measured (independent seeds), block by block. With the argument
 * "cuda" the image is rendered on the GPU against the CPU-rendered reference: CPU/GPU parity
 * (skipped, exit 77, without a CUDA device); "cuda-wavefront", "cuda-lbvh" and "cuda-cwbvh" check
 * the wavefront pipeline, the GPU-built LBVH and the compressed 8-wide BVH the same way. A third argument "adaptive-depth" renders with
 * --adaptive-depth (32 spp, which reach the scene's depth 8), which must match the same
 * reference (CPU, or CPU/GPU parity with a GPU device).
 * Regenerate the reference after an intended change of the image:
 *   build/caustic render cornell --res 64x64 --spp 4096 -o tests/data/cornell_64x64_4096spp.pfm */
#include <string.h>

#include "caustic.h"
#include "image/image.h"
#include "testing.h"

#define W     64
#define B     8 /* block size */
#define SEEDS 16
#define SPP   8

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_regression reference.pfm [cpu|cuda] [adaptive-depth]\n");
        return 2;
    }
    int adaptive_depth = argc > 3 && !strcmp(argv[3], "adaptive-depth");
    caustic_device device = CAUSTIC_DEVICE_CPU;
    caustic_gpu_mode mode = CAUSTIC_GPU_MEGA;
    caustic_gpu_bvh gbvh = CAUSTIC_GPU_BVH_SAH;
    /* cuda-wavefront / cuda-lbvh: the GPU's wavefront pipeline / GPU-built LBVH */
    if (argc > 2 && !strcmp(argv[2], "cuda-wavefront")) {
        device = CAUSTIC_DEVICE_CUDA;
        mode = CAUSTIC_GPU_WAVEFRONT;
    } else if (argc > 2 && !strcmp(argv[2], "cuda-lbvh")) {
        device = CAUSTIC_DEVICE_CUDA;
        gbvh = CAUSTIC_GPU_BVH_LBVH;
    } else if (argc > 2 && !strcmp(argv[2], "cuda-cwbvh")) {
        device = CAUSTIC_DEVICE_CUDA;
        gbvh = CAUSTIC_GPU_BVH_CWBVH;
    } else if (argc > 2 && caustic_parse_device(argv[2], &device)) {
        fprintf(stderr, "bad device %s\n", argv[2]);
        return 2;
    }
    if (device == CAUSTIC_DEVICE_CUDA) {
        char buf[512];
        caustic_describe_devices(buf, sizeof buf);
        if (!strncmp(buf, "no CUDA", 7)) {
            printf("SKIP: %s", buf);
            return 77;
        }
    }
    image ref;
    char err[512];
    if (image_load(&ref, argv[1], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    CHECK(ref.width == W && ref.height == W, "reference is %dx%d", ref.width, ref.height);
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    enum { NB = (W / B) * (W / B) };
    static double bm[SEEDS][NB];
    for (int s = 0; s < SEEDS; ++s) {
        caustic_options o;
        caustic_options_init(&o);
        o.width = W;
        o.height = W;
        o.spp = adaptive_depth ? 4 * SPP : SPP;
        o.seed = 1000 + (uint32_t)s;
        o.device = device;
        o.adaptive_depth = adaptive_depth;
        o.gpu_mode = mode;
        o.gpu_bvh = gbvh;
        caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
        if (!r) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        caustic_render(r, NULL, NULL, NULL, 0);
        const float *img = caustic_image(r, NULL, NULL);
        for (int b = 0; b < NB; ++b) {
            int bx = (b % (W / B)) * B, by = (b / (W / B)) * B;
            double sum = 0;
            for (int y = by; y < by + B; ++y)
                for (int x = bx; x < bx + B; ++x)
                    for (int c = 0; c < 3; ++c) sum += img[3 * (y * W + x) + c];
            bm[s][b] = sum / (B * B * 3);
        }
        caustic_renderer_free(r);
    }
    int outliers = 0;
    double total = 0, total_ref = 0;
    for (int b = 0; b < NB; ++b) {
        int bx = (b % (W / B)) * B, by = (b / (W / B)) * B;
        double r = 0;
        for (int y = by; y < by + B; ++y)
            for (int x = bx; x < bx + B; ++x)
                for (int c = 0; c < 3; ++c) r += ref.rgb[3 * (y * W + x) + c];
        r /= B * B * 3;
        double mean = 0, var = 0;
        for (int s = 0; s < SEEDS; ++s) mean += bm[s][b];
        mean /= SEEDS;
        for (int s = 0; s < SEEDS; ++s) var += (bm[s][b] - mean) * (bm[s][b] - mean);
        double se = sqrt(var / (SEEDS - 1) / SEEDS) + 1e-4 * (fabs(r) + 1e-3); /* + reference's own noise */
        double z = (mean - r) / se;
        /* path-traced noise is heavy-tailed (rare bright paths), so a block must also be off
         * by more than 5% to count */
        if (fabs(z) > 5 && fabs(mean - r) > 0.05 * fabs(r)) {
            outliers++;
            fprintf(stderr, "block (%d,%d): %.5f vs reference %.5f (z = %.1f)\n", bx, by, mean, r, z);
        }
        total += mean;
        total_ref += r;
    }
    /* with 15 degrees of freedom P(|t| > 5) ~ 0.02%: 64 blocks rarely see one */
    CHECK(outliers <= 2, "%d of %d blocks differ from the reference beyond noise", outliers, NB);
    CHECK(fabs(total - total_ref) < 0.01 * total_ref, "image mean %.5f vs reference %.5f", total / NB, total_ref / NB);
    image_free(&ref);
    caustic_scene_free(cs);
    return test_result("test_regression");
}
