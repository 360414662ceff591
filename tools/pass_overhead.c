/* What a pass costs beside its samples: renders SCENE at WxH to SPP samples per pixel on one
 * thread in passes of PER samples each (caustic_render_passes, so the cut does not depend on the
 * machine's speed as caustic_render's passes of a set time do) and prints Msamples per CPU
 * second. Under `valgrind --tool=cachegrind` the instruction counts of two PER values give the
 * fixed cost per pixel and pass (docs/performance-log.md, "CPU path-tracing passes of a second"). Public API only.
 *
 *   build/caustic-pass-overhead cornell 1 sobol 64 64 16
 */
#define _POSIX_C_SOURCE 200809L
#include <caustic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: pass_overhead SCENE PER sobol|random|stratified W H SPP\n");
        return 2;
    }
    int per = atoi(argv[2]), w = atoi(argv[4]), h = atoi(argv[5]), spp = atoi(argv[6]);
    char err[512];
    caustic_options o;
    caustic_options_init(&o);
    if (per < 1 || w < 1 || h < 1 || spp < 1 || caustic_parse_sampler(argv[3], &o.sampler)) {
        fprintf(stderr, "pass_overhead: bad arguments\n");
        return 2;
    }
    caustic_scene *s;
    if (caustic_scene_load(&s, argv[1], err, sizeof err)) {
        fprintf(stderr, "pass_overhead: %s\n", err);
        return 1;
    }
    o.width = w;
    o.height = h;
    o.spp = spp;
    o.threads = 1;
    caustic_renderer *r = caustic_renderer_create(s, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "pass_overhead: %s\n", err);
        return 1;
    }
    double t0 = cpu_seconds();
    while (caustic_renderer_spp(r) < spp)
        if (caustic_render_passes(r, 1, per, err, sizeof err) < 0) {
            fprintf(stderr, "pass_overhead: %s\n", err);
            return 1;
        }
    double t = cpu_seconds() - t0;
    printf("per=%d sampler=%s cpu_Msamples/s=%.4f\n", per, argv[3], (double)w * h * spp / t / 1e6);
    caustic_renderer_free(r);
    caustic_scene_free(s);
    return 0;
}
