/* caustic bench: full-path throughput per scene, thread count and scheduling strategy, as the
 * median of several runs. A benchmark, not a test: it prints figures and judges nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"

static const char *usage_bench =
    "usage: caustic bench [options]\n"
    "\n"
    "  --scenes A,B,...     scenes to measure (default: cornell,rtow)\n"
    "  --runs N             runs per configuration; the median is reported (default 5)\n"
    "  --spp N              samples per pixel per run (default 8)\n"
    "  --res WxH            resolution (default 320x240)\n"
    "  --max-threads N      measure 1..N threads (default: all cores)\n"
    "  --device D           cpu (default): per thread count and schedule; cuda: the GPU\n"
    "  --gpu-mode M         cuda: mega (default) | wavefront | both (side by side)\n"
    "  --gpu-bvh B          cuda: sah (default) | lbvh | cwbvh\n"
    "  --sampler S          sobol (default) | stratified | random\n"
    "  --json               print one JSON object per configuration instead of a table\n"
    "\n"
    "Traversal alone (against Embree): the developer tool build/caustic-bench-rays MESH...\n"
    "caustic bench --integrator pt,bdpt,vcm compares light-transport algorithms at equal time\n"
    "(see caustic bench --integrator x --help).\n";

static long core_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

typedef struct result {
    double msamples, mrays, msegments, mshadow, seconds; /* rays = segments + shadow rays */
    const char *kernel;                                  /* caustic_render_stats.kernel (static), or NULL */
} result;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int measure(caustic_scene *scene, caustic_options opt, int runs, result *out) {
    double ms[64], mr[64], mg[64], mh[64], sec[64];
    char err[512];
    for (int i = 0; i < runs; ++i) {
        caustic_renderer *r = caustic_renderer_create(scene, &opt, err, sizeof err);
        if (!r) {
            fprintf(stderr, "caustic bench: %s\n", err);
            return -1;
        }
        caustic_render(r, NULL, NULL, NULL, 0);
        caustic_render_stats st;
        caustic_render_stats_get(r, &st);
        out->kernel = st.kernel;
        caustic_renderer_free(r);
        sec[i] = st.seconds;
        ms[i] = st.samples / st.seconds * 1e-6;
        mr[i] = st.rays / st.seconds * 1e-6;
        mg[i] = (double)(st.rays - st.shadow_rays) / st.seconds * 1e-6;
        mh[i] = st.shadow_rays / st.seconds * 1e-6;
    }
    qsort(ms, (size_t)runs, sizeof(double), cmp_double);
    qsort(mr, (size_t)runs, sizeof(double), cmp_double);
    qsort(mg, (size_t)runs, sizeof(double), cmp_double);
    qsort(mh, (size_t)runs, sizeof(double), cmp_double);
    qsort(sec, (size_t)runs, sizeof(double), cmp_double);
    out->msamples = ms[runs / 2];
    out->mrays = mr[runs / 2];
    out->msegments = mg[runs / 2];
    out->mshadow = mh[runs / 2];
    out->seconds = sec[runs / 2];
    return 0;
}

static void report(int json, const char *scene, const char *schedule, int threads, const caustic_options *o, int runs,
                   const result *r) {
    if (json)
        printf("{\"scene\":\"%s\",\"schedule\":\"%s\",\"threads\":%d,\"res\":\"%dx%d\",\"spp\":%d,\"runs\":%d,"
               "\"median_seconds\":%.4f,\"msamples_per_s\":%.4f,\"mrays_per_s\":%.4f,\"msegments_per_s\":%.4f,"
               "\"mshadow_per_s\":%.4f%s%s%s}\n",
               scene, schedule, threads, o->width, o->height, o->spp, runs, r->seconds, r->msamples, r->mrays,
               r->msegments, r->mshadow, r->kernel ? ",\"kernel\":\"" : "", r->kernel ? r->kernel : "",
               r->kernel ? "\"" : "");
    else
        printf("%-14s %-12s %7d %10.3f %12.3f %10.3f %12.3f %10.3f\n", scene, schedule, threads, r->seconds,
               r->msamples, r->mrays, r->msegments, r->mshadow);
}

int cmd_bench(int argc, char **argv) {
    const char *scenes = "cornell,rtow";
    long runs = 5, spp = 8, max_threads = core_count();
    int w = 320, h = 240, json = 0;
    caustic_device device = CAUSTIC_DEVICE_CPU;
    caustic_gpu_bvh gpu_bvh = CAUSTIC_GPU_BVH_SAH;
    caustic_sampler sampler = CAUSTIC_SAMPLER_SOBOL;
    int sampler_set = 0;
    int modes[2] = {CAUSTIC_GPU_MEGA, -1};
    for (int i = 0; i < argc; ++i)
        if (!strcmp(argv[i], "--rays")) {
            fprintf(stderr, "caustic bench: --rays is the developer tool caustic-bench-rays now "
                            "(build/caustic-bench-rays MESH... [options])\n");
            return EXIT_USAGE;
        }
    for (int i = 0; i < argc; ++i)
        if (!strcmp(argv[i], "--integrator")) return cmd_bench_integrators(argc, argv);
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_bench, stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "caustic bench: unknown option or missing value: %s\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--scenes"))
            scenes = v;
        else if (!strcmp(a, "--runs")) {
            if (parse_int(v, 1, 63, &runs)) {
                fprintf(stderr, "caustic bench: --runs: '%s' is not in 1..63\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--spp")) {
            if (parse_int(v, 1, 1 << 20, &spp)) {
                fprintf(stderr, "caustic bench: --spp: '%s' is not a positive integer\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--device")) {
            if (caustic_parse_device(v, &device)) {
                fprintf(stderr, "caustic bench: --device: '%s' is not cpu or cuda\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--gpu-mode")) {
            caustic_gpu_mode m;
            if (!strcmp(v, "both")) {
                modes[0] = CAUSTIC_GPU_MEGA;
                modes[1] = CAUSTIC_GPU_WAVEFRONT;
            } else if (caustic_parse_gpu_mode(v, &m)) {
                fprintf(stderr, "caustic bench: --gpu-mode: '%s' is not mega, wavefront or both\n", v);
                return EXIT_USAGE;
            } else {
                modes[0] = (int)m;
                modes[1] = -1;
            }
        } else if (!strcmp(a, "--gpu-bvh")) {
            if (caustic_parse_gpu_bvh(v, &gpu_bvh)) {
                fprintf(stderr, "caustic bench: --gpu-bvh: '%s' is not sah, lbvh or cwbvh\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--sampler")) {
            if (caustic_parse_sampler(v, &sampler)) {
                fprintf(stderr, "caustic bench: --sampler: '%s' is not one of sobol, stratified, random\n", v);
                return EXIT_USAGE;
            }
            sampler_set = 1;
        } else if (!strcmp(a, "--max-threads")) {
            if (parse_int(v, 1, 1024, &max_threads)) {
                fprintf(stderr, "caustic bench: --max-threads: '%s' is not in 1..1024\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--res")) {
            if (parse_size(v, 1, 16384, &w, &h)) {
                fprintf(stderr, "caustic bench: --res: '%s' is not WxH\n", v);
                return EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "caustic bench: unknown option '%s'\n", a);
            return EXIT_USAGE;
        }
    }
    static const char *sched_names[4] = {"tiles", "rows", "rows-static", "pixels"};
    if (!json)
        printf("%-14s %-12s %7s %10s %12s %10s %12s %10s\n", "scene", "schedule", "threads", "median_s", "Msamples/s",
               "Mrays/s", "Msegments/s", "Mshadow/s");
    char list[1024];
    snprintf(list, sizeof list, "%s", scenes);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        char err[1024];
        caustic_scene *scene;
        if (caustic_scene_load(&scene, name, err, sizeof err)) {
            fprintf(stderr, "caustic bench: %s\n", err);
            return EXIT_USAGE;
        }
        caustic_options o;
        caustic_options_init(&o);
        o.width = w;
        o.height = h;
        o.spp = (int)spp;
        if (sampler_set) o.sampler = sampler;
        o.device = device == CAUSTIC_DEVICE_CUDA ? CAUSTIC_DEVICE_CUDA : CAUSTIC_DEVICE_CPU;
        result one = {0, 0, 0, 0, 0, NULL}, r;
        if (o.device == CAUSTIC_DEVICE_CUDA) {
            o.gpu_bvh = gpu_bvh;
            for (int mi = 0; mi < 2 && modes[mi] >= 0; ++mi) {
                o.gpu_mode = (caustic_gpu_mode)modes[mi];
                if (measure(scene, o, (int)runs, &r)) {
                    caustic_scene_free(scene);
                    return EXIT_RUNTIME;
                }
                report(json, name, o.gpu_mode == CAUSTIC_GPU_WAVEFRONT ? "cuda-wavefront" : "cuda-mega", 0, &o,
                       (int)runs, &r);
            }
            caustic_scene_free(scene);
            continue;
        }
        for (int t = 1; t <= max_threads; ++t) {
            o.threads = t;
            o.schedule = CAUSTIC_SCHEDULE_TILES;
            if (measure(scene, o, (int)runs, &r)) {
                caustic_scene_free(scene);
                return EXIT_RUNTIME;
            }
            if (t == 1) one = r;
            report(json, name, "tiles", t, &o, (int)runs, &r);
        }
        if (max_threads > 1 && !json)
            printf("%-14s speedup %ld threads vs 1: %.2fx\n", name, max_threads, r.msamples / one.msamples);
        result by_sched[4];
        o.threads = (int)max_threads;
        for (int sc = 0; sc < 4; ++sc) {
            o.schedule = (caustic_schedule)sc;
            if (measure(scene, o, (int)runs, &by_sched[sc])) {
                caustic_scene_free(scene);
                return EXIT_RUNTIME;
            }
            report(json, name, sched_names[sc], (int)max_threads, &o, (int)runs, &by_sched[sc]);
        }
        if (!json)
            printf("%-14s dynamic tiles vs static rows (%ld threads): %.2fx\n", name, max_threads,
                   by_sched[CAUSTIC_SCHEDULE_TILES].msamples / by_sched[CAUSTIC_SCHEDULE_ROWS_STATIC].msamples);
        caustic_scene_free(scene);
    }
    return 0;
}
