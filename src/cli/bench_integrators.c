/* caustic bench --integrator: the light-transport algorithms side by side. Per scene and
 * integrator: iterations per second, light and camera sub-paths per second, seconds per
 * iteration per thread, and the image error (linear RMSE) against a long reference render at
 * equal time. Medians over --runs runs with different seeds. A benchmark: it judges nothing.
 *
 * Equal time is counted in CPU time by default: a calibration run gives each integrator's CPU
 * seconds per iteration, and every run then renders the whole iterations that fit in TIME
 * seconds of all threads. On a shared machine a wall-clock budget gives an integrator whatever
 * share of the cores other jobs leave it; CPU time does not, and the error of a run with a fixed
 * iteration count is reproducible from its seed. --clock wall uses wall-clock time limits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "args.h"
#include "cli.h"

static const char *usage =
    "usage: caustic bench --integrator LIST [options]\n"
    "\n"
    "  --integrator LIST    comma-separated: pt,lt,bdpt,ppm,bpm,vcm, and vcm-all (VCM merging at\n"
    "                       every non-specular vertex: render --merge-everywhere)\n"
    "  --scenes A,B,...     scenes (default: smallvcm0,smallvcm1,smallvcm2,smallvcm3)\n"
    "  --res WxH            resolution (default 256x256)\n"
    "  --time SEC           equal-time budget per run (default 5)\n"
    "  --clock cpu|wall     count budgets in CPU time of all threads (default: each run renders\n"
    "                       the iterations that fit, from a calibration run) or wall-clock time\n"
    "  --runs N             runs per integrator; medians are reported (default 5)\n"
    "  --threads N          worker threads (default: all cores)\n"
    "  --device cpu|cuda    where everything runs, the reference too (default cpu; cuda counts\n"
    "                       budgets in wall-clock time)\n"
    "  --reference-time SEC length of the reference render (vcm) when none is cached (default 120)\n"
    "  --reference-dir DIR  where references are cached as SCENE_WxH.pfm (default bench-ref)\n"
    "  --json               one JSON object per scene and integrator\n";

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct run_result {
    double seconds, cpu_seconds, iterations, rays;
    int threads;
    float *img;
} run_result;

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* An entry of --integrator: the algorithm and, for vcm-all, its merging everywhere. */
typedef struct bench_integrator {
    caustic_integrator integ;
    int merge_everywhere;
    const char *name;
    caustic_device device;
} bench_integrator;

static int run_once(caustic_scene *sc, bench_integrator integ, int w, int h, int threads, double time_limit, int spp,
                    uint32_t seed, run_result *out) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = w;
    o.height = h;
    o.threads = threads;
    o.integrator = integ.integ;
    o.seed = seed;
    o.merge_everywhere = integ.merge_everywhere;
    o.device = integ.device;
    o.time_limit = time_limit;
    o.spp = spp;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(sc, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "caustic bench: %s\n", err);
        return -1;
    }
    double c0 = cpu_now();
    caustic_render(r, NULL, NULL, NULL, 0);
    out->cpu_seconds = cpu_now() - c0;
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    out->seconds = st.seconds;
    out->iterations = st.spp;
    out->rays = (double)st.rays;
    out->threads = st.threads;
    out->img = malloc(sizeof(float) * 3 * (size_t)w * (size_t)h);
    if (out->img) memcpy(out->img, caustic_image(r, NULL, NULL), sizeof(float) * 3 * (size_t)w * (size_t)h);
    caustic_renderer_free(r);
    return out->img ? 0 : -1;
}

static double rmse(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < 3 * n; ++i) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return sqrt(s / (3.0 * (double)n));
}

/* The cached reference, or a fresh long VCM render saved for next time: DIR/STEM_WxH.pfm, where
 * STEM is a built-in scene's name or a scene file's name without its folders and .json. */
static float *reference(caustic_scene *sc, const char *name, int w, int h, int threads, double seconds,
                        caustic_device device, const char *dir) {
    char path[1024], err[512];
    const char *stem = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    size_t len = strlen(stem);
    if (len > 5 && !strcmp(stem + len - 5, ".json")) len -= 5;
    snprintf(path, sizeof path, "%s/%.*s_%dx%d.pfm", dir, (int)len, stem, w, h);
    caustic_rgb_image img;
    if (caustic_image_load(&img, path, err, sizeof err) == 0) {
        if (img.width == w && img.height == h) {
            fprintf(stderr, "caustic bench: reference %s\n", path);
            return img.rgb;
        }
        caustic_image_free(&img);
    }
    fprintf(stderr, "caustic bench: rendering the reference %s (vcm, %.0f s)\n", path, seconds);
    run_result r;
    bench_integrator vcm = {CAUSTIC_INTEGRATOR_VCM, 0, "vcm", device};
    if (run_once(sc, vcm, w, h, threads, seconds, 1 << 24, 0x5eedu, &r)) return NULL;
    mkdir(dir, 0777);
    img.width = w;
    img.height = h;
    img.rgb = r.img;
    if (caustic_image_save(&img, path, NULL, 1, err, sizeof err))
        fprintf(stderr, "caustic bench: %s (reference not cached)\n", err);
    return r.img;
}

int cmd_bench_integrators(int argc, char **argv) {
    const char *list = NULL, *scenes = "smallvcm0,smallvcm1,smallvcm2,smallvcm3", *dir = "bench-ref";
    long runs = 5, threads = 0;
    double tbudget = 5.0, tref = 120.0;
    int w = 256, h = 256, json = 0, wall = 0;
    caustic_device device = CAUSTIC_DEVICE_CPU;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "caustic bench: option %s needs a value\n", a);
            return EXIT_USAGE;
        }
        i++;
        if (!strcmp(a, "--integrator"))
            list = v;
        else if (!strcmp(a, "--scenes"))
            scenes = v;
        else if (!strcmp(a, "--reference-dir"))
            dir = v;
        else if (!strcmp(a, "--device")) {
            if (caustic_parse_device(v, &device) || device == CAUSTIC_DEVICE_AUTO) {
                fprintf(stderr, "caustic bench: --device: '%s' is not cpu or cuda\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--clock")) {
            if (strcmp(v, "cpu") && strcmp(v, "wall")) {
                fprintf(stderr, "caustic bench: --clock: '%s' is not cpu or wall\n", v);
                return EXIT_USAGE;
            }
            wall = !strcmp(v, "wall");
        } else if (!strcmp(a, "--runs")) {
            if (parse_int(v, 1, 63, &runs)) {
                fprintf(stderr, "caustic bench: --runs: '%s' is not in 1..63\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--threads")) {
            if (parse_int(v, 1, 1024, &threads)) {
                fprintf(stderr, "caustic bench: --threads: '%s' is not in 1..1024\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--time")) {
            if (parse_double(v, 0.01, 1e6, &tbudget)) {
                fprintf(stderr, "caustic bench: --time: '%s' is not a positive number of seconds\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--reference-time")) {
            if (parse_double(v, 0.01, 1e7, &tref)) {
                fprintf(stderr, "caustic bench: --reference-time: '%s' is not a positive number of seconds\n", v);
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
    bench_integrator integ[8];
    int ninteg = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *save = NULL, *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        bench_integrator *b = &integ[ninteg];
        b->merge_everywhere = !strcmp(n, "vcm-all");
        if (ninteg == 8 || (b->merge_everywhere ? caustic_parse_integrator("vcm", &b->integ)
                                                : caustic_parse_integrator(n, &b->integ))) {
            fprintf(stderr, "caustic bench: --integrator: '%s' is not a list of pt, lt, bdpt, ppm, bpm, vcm, vcm-all\n",
                    list);
            return EXIT_USAGE;
        }
        b->name = b->merge_everywhere ? "vcm-all" : caustic_integrator_name(b->integ);
        b->device = device;
        ninteg++;
    }
    if (device == CAUSTIC_DEVICE_CUDA) wall = 1; /* the host's CPU time says nothing of the GPU's */
    if (!ninteg) {
        fprintf(stderr, "caustic bench: --integrator needs a list\n");
        return EXIT_USAGE;
    }

    if (!json)
        printf("%-10s %-7s %5s %9s %9s %12s %12s %10s %11s %9s\n", "scene", "integ", "runs", "iter/s", "s/iter/thr",
               "lightpath/s", "camerapath/s", "Mrays/s", "rmse", "rmse/pt");
    char slist[1024];
    snprintf(slist, sizeof slist, "%s", scenes);
    for (char *save = NULL, *name = strtok_r(slist, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        char err[1024];
        caustic_scene *sc;
        if (caustic_scene_load(&sc, name, err, sizeof err)) {
            fprintf(stderr, "caustic bench: %s\n", err);
            return EXIT_USAGE;
        }
        int nthreads = threads > 0 ? (int)threads : 0;
        float *ref = reference(sc, name, w, h, nthreads, tref, device, dir);
        if (!ref) {
            caustic_scene_free(sc);
            return EXIT_RUNTIME;
        }
        double pt_rmse = 0.0;
        for (int k = 0; k < ninteg; ++k) {
            double ips[64], rm[64], mr[64];
            int nt = 1, iters = 1 << 24;
            double limit = tbudget;
            if (!wall) {
                /* calibration: CPU seconds per iteration over three iterations */
                run_result r;
                if (run_once(sc, integ[k], w, h, nthreads, 0.0, 3, 999u, &r)) {
                    free(ref);
                    caustic_scene_free(sc);
                    return EXIT_RUNTIME;
                }
                free(r.img);
                double cpu_per_iter = r.cpu_seconds / r.iterations;
                iters = (int)(tbudget * r.threads / cpu_per_iter + 0.5);
                if (iters < 1) iters = 1;
                limit = 0.0;
            }
            for (int i = 0; i < runs; ++i) {
                run_result r;
                if (run_once(sc, integ[k], w, h, nthreads, limit, iters, (uint32_t)(1000 + i), &r)) {
                    free(ref);
                    caustic_scene_free(sc);
                    return EXIT_RUNTIME;
                }
                /* rates per second of the clock the budget is counted in (CPU: of all threads) */
                double secs = wall ? r.seconds : r.cpu_seconds / r.threads;
                ips[i] = r.iterations / secs;
                mr[i] = r.rays / secs * 1e-6;
                rm[i] = rmse(r.img, ref, (size_t)w * (size_t)h);
                nt = device == CAUSTIC_DEVICE_CUDA ? 1 : r.threads; /* s/iter/thr: per GPU */
                free(r.img);
            }
            double it_s = median(ips, (int)runs), e = median(rm, (int)runs), mrays = median(mr, (int)runs);
            if (integ[k].integ == CAUSTIC_INTEGRATOR_PT) pt_rmse = e;
            double px = (double)w * h;
            double light_ps = integ[k].integ == CAUSTIC_INTEGRATOR_PT ? 0.0 : it_s * px;
            double cam_ps = it_s * px;
            double ratio = pt_rmse > 0.0 ? e / pt_rmse : NAN;
            const char *in = integ[k].name;
            if (json)
                printf("{\"scene\":\"%s\",\"integrator\":\"%s\",\"res\":\"%dx%d\",\"threads\":%d,\"runs\":%ld,"
                       "\"time_budget_s\":%.3f,\"clock\":\"%s\",\"iterations_per_s\":%.4f,\"seconds_per_iteration_per_"
                       "thread\":%.4f,"
                       "\"light_paths_per_s\":%.0f,\"camera_paths_per_s\":%.0f,\"mrays_per_s\":%.3f,\"rmse\":%.6g,"
                       "\"rmse_vs_pt\":%.4g}\n",
                       name, in, w, h, nt, runs, tbudget, wall ? "wall" : "cpu", it_s, nt / it_s, light_ps, cam_ps,
                       mrays, e, ratio);
            else
                printf("%-10s %-7s %5ld %9.3f %9.3f %12.0f %12.0f %10.3f %11.5f %9.3f\n", name, in, runs, it_s,
                       nt / it_s, light_ps, cam_ps, mrays, e, ratio);
            fflush(stdout);
        }
        free(ref);
        caustic_scene_free(sc);
    }
    return 0;
}
