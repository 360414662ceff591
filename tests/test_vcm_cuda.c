/* The bidirectional integrators on the GPU (src/cuda/render_vcm.cu) against the CPU driver
 * (skipped, exit 77, without a CUDA device). Both run the shared kernel/vcm.h with the same
 * random numbers per sub-path, so they trace nearly the same paths (only float rounding differs:
 * FMA contraction, the math libraries, the order of atomic sums): on the H100 the 4x4 block
 * error between them was at most 3e-5, against 0.015-0.07 between two CPU seeds. The test asks
 * for under 0.005, and as estimates also for the looser checks below. Checked on
 * SmallVCM's sun (smallvcm0) and point-light (smallvcm2) boxes with lt, bdpt, bpm and vcm: mean
 * within 1 %, 4x4 block error within the thresholds test_vcm uses against path tracing, and
 * not much above the error between two CPU renders of other seeds (a GPU bias would show there
 * first); and the fog of scenes/cornell-fog.json (media: render_vcm_media.cu). Also: the renderer reports the GPU, a GPU render split by a checkpoint matches an
 * unsplit one, and two GPU runs agree (atomics reorder sums only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caustic.h"
#include "cuda/render_cuda.h"
#include "cuda_skip.h"
#include "image_checks.h"
#include "testing.h"

enum { W = 64, H = 64 };

static float *render(caustic_scene *cs, int integrator, int spp, caustic_device device, const char *ckpt_in,
                     const char *ckpt_out, uint32_t seed) {
    caustic_options o;
    caustic_options_init(&o);
    o.merge_radius = 0.03f; /* few light paths per iteration at 64x64: a larger radius (test_vcm) */
    o.width = W;
    o.height = H;
    o.spp = spp;
    o.threads = 0;
    o.max_depth = 9;
    o.integrator = (caustic_integrator)integrator;
    o.device = device;
    o.seed = seed;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (!r) return NULL;
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    CHECK(!strcmp(st.device, device == CAUSTIC_DEVICE_CPU ? "cpu" : "cuda"), "device %s", st.device);
    if (ckpt_in) CHECK(caustic_checkpoint_load(r, ckpt_in, err, sizeof err) == 0, "resume: %s", err);
    CHECK(caustic_render(r, NULL, NULL, NULL, 0) == 0, "render failed");
    if (ckpt_out) CHECK(caustic_checkpoint_save(r, ckpt_out, err, sizeof err) == 0, "checkpoint: %s", err);
    float *img = malloc(sizeof(float) * 3 * W * H);
    memcpy(img, caustic_image(r, NULL, NULL), sizeof(float) * 3 * W * H);
    caustic_renderer_free(r);
    return img;
}

static void test_agreement(const char *scene_name) {
    caustic_scene *cs = NULL;
    char err[512];
    CHECK(caustic_scene_load(&cs, scene_name, err, sizeof err) == 0, "%s: %s", scene_name, err);
    if (!cs) return;
    const int integ[4] = {1, 2, 4, 5};
    for (int k = 0; k < 4; ++k) {
        int i = integ[k];
        const char *in = caustic_integrator_name((caustic_integrator)i);
        /* light tracing and photon mapping alone are noisier */
        int spp = i == 1 || i == 4 ? 256 : 64;
        float *cpu = render(cs, i, spp, CAUSTIC_DEVICE_CPU, NULL, NULL, 7);
        float *cpu2 = render(cs, i, spp, CAUSTIC_DEVICE_CPU, NULL, NULL, 8);
        float *gpu = render(cs, i, spp, CAUSTIC_DEVICE_CUDA, NULL, NULL, 7);
        if (cpu && cpu2 && gpu) {
            double e = block_error(gpu, cpu, W, H), rm = image_mean(gpu, W * H) / image_mean(cpu, W * H);
            double e_cpu = block_error(cpu2, cpu, W, H), rm_cpu = image_mean(cpu2, W * H) / image_mean(cpu, W * H);
            double limit = i == 1 ? 0.08 : 0.06;
            printf("%s %-4s gpu vs cpu: mean ratio %.5f, block error %.5f (cpu seed 8 vs 7: %.5f, %.5f)\n", scene_name,
                   in, rm, e, rm_cpu, e_cpu);
            CHECK(e < limit && fabs(rm - 1.0) < 0.01, "%s %s gpu vs cpu: block error %.4f, mean ratio %.4f", scene_name,
                  in, e, rm);
            CHECK(e < 1.25 * e_cpu, "%s %s gpu vs cpu: block error %.4f, two cpu seeds %.4f", scene_name, in, e, e_cpu);
            CHECK(e < 0.005, "%s %s: gpu and cpu trace the same paths, yet block error %.5f", scene_name, in, e);
            CHECK(image_mean(cpu, W * H) > 0.0, "%s %s: black image", scene_name, in);
        }
        free(cpu);
        free(cpu2);
        free(gpu);
    }
    caustic_scene_free(cs);
}

/* A GPU render split by a checkpoint (32 iterations, resume to 64) against one of 64: the same
 * iterations, so the same image up to the order of float sums. Two unsplit runs: likewise. */
static void test_checkpoint(void) {
    caustic_scene *cs = NULL;
    char err[512];
    CHECK(caustic_scene_load(&cs, "smallvcm2", err, sizeof err) == 0, "smallvcm2: %s", err);
    if (!cs) return;
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_vcm_cuda_%ld.ckpt", (long)getpid());
    float *half = render(cs, 5, 32, CAUSTIC_DEVICE_CUDA, NULL, path, 7);
    float *resumed = render(cs, 5, 64, CAUSTIC_DEVICE_CUDA, path, NULL, 7);
    float *whole = render(cs, 5, 64, CAUSTIC_DEVICE_CUDA, NULL, NULL, 7);
    float *again = render(cs, 5, 64, CAUSTIC_DEVICE_CUDA, NULL, NULL, 7);
    if (half && resumed && whole && again) {
        double e = block_error(resumed, whole, W, H), e2 = block_error(again, whole, W, H);
        printf("vcm checkpoint split vs whole: block error %.6f; two runs: %.6f\n", e, e2);
        CHECK(e < 0.01 && fabs(image_mean(resumed, W * H) / image_mean(whole, W * H) - 1.0) < 1e-3,
              "resumed vs whole: block error %.5f", e);
        CHECK(e2 < 0.01, "two GPU runs: block error %.5f", e2);
        CHECK(block_error(half, whole, W, H) > e, "the resumed render must have added iterations");
    }
    remove(path);
    free(half);
    free(resumed);
    free(whole);
    free(again);
    caustic_scene_free(cs);
}

int main(int argc, char **argv) {
    skip_without_cuda();
    test_agreement("smallvcm0");
    test_agreement("smallvcm2");
    /* participating media (render_vcm_media.cu's kernels): fog around everything, the source
     * tree's scenes/cornell-fog.json (its path from the first argument) */
    if (argc > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/scenes/cornell-fog.json", argv[1]);
        test_agreement(path);
    }
    test_checkpoint();
    return test_result("test_vcm_cuda");
}
