/* caustic: command-line client of libcaustic. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caustic.h"
#include "args.h"
#include "cli.h"
#include "options.h"
#include "render_output.h"
#include "view.h"

static const char *usage_info = "usage: caustic info SCENE [--dump-scene FILE]\n"
                                "\n"
                                "Prints the scene's counts, bounds, BVH statistics and memory; --dump-scene FILE also\n"
                                "writes the scene as caustic JSON (a pbrt or Mitsuba scene as caustic read it).\n";
static const char *usage_compare = "usage: caustic compare A B\n"
                                   "\n"
                                   "Compares two images of the same size (.png, .exr, .pfm) and prints\n"
                                   "AE (pixels that differ in 8-bit sRGB), PSNR (dB), RMSE (8-bit units) and SSIM.\n";

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
    char safe[1200]; /* a value from the command line, echoed on one line */
    cli_printable(safe, sizeof safe, arg, strlen(arg));
    fprintf(stderr, "caustic %s: ", cmd);
    fprintf(stderr, fmt, safe);
    fprintf(stderr, "\n(run 'caustic %s --help' for usage)\n", cmd);
    return EXIT_USAGE;
}

/* ---- render ----------------------------------------------------------------------------------- */
static void print_warning(void *user, const char *message) {
    (void)user;
    fprintf(stderr, "caustic: warning: %s\n", message);
}
/* The library's log lines (caustic_set_log) come prefixed: printed as they are. */
static void print_log(void *user, const char *message) {
    (void)user;
    fprintf(stderr, "%s\n", message);
}
/* Interrupts: the first signal ends the render after the current pass; the second cancels the
 * pass at its next safe point (caustic_cancel). Either way the image and checkpoint are written:
 * the process is never ended by these signals while it renders or writes. */
static volatile sig_atomic_t g_interrupted = 0;
static caustic_renderer *volatile g_rendering = NULL;
static volatile sig_atomic_t g_signal_quiet = 0; /* a rank other than 0 says nothing */
static void say(const char *m) {
    if (g_signal_quiet) return;
    ssize_t rc = write(STDERR_FILENO, m, strlen(m));
    (void)rc;
}
static void on_signal(int sig) {
    if (!g_interrupted) {
        g_interrupted = 1;
        if (sig == SIGINT) say("\ncaustic: finishing the current pass, press Ctrl-C again to stop now\n");
        return;
    }
    if (g_rendering) caustic_cancel(g_rendering);
    if (sig == SIGINT) say("\ncaustic: stopping now; the image and checkpoint will be written\n");
}
/* sigaction, not signal(): in strict C11/POSIX mode glibc's signal() resets the handler after the
 * first signal (System V semantics), so a second Ctrl-C killed the process with nothing written. */
static void set_handler(void (*fn)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

typedef struct render_ctx {
    progress_bar pb;
    caustic_renderer *r;
    const char *checkpoint;
    double last_checkpoint;
    render_output *out;
    int eta_said; /* the long-render note was printed (or is not wanted) */
} render_ctx;

static int on_progress(void *user, const caustic_progress *p) {
    render_ctx *c = user;
    progress_update(&c->pb, p);
    /* after the first pass: a render that will take long says so once, and how to shorten it */
    if (!c->eta_said && p->spp_done > 0 && p->fraction > 0.0) {
        c->eta_said = 1;
        double left = p->elapsed * (1.0 - p->fraction) / p->fraction;
        if (left > 120.0) {
            char t[32];
            progress_format_time(left, t, sizeof t);
            fprintf(stderr,
                    "%scaustic: this render needs about %s more (%d spp); %s or --time-limit 60 gives a quicker "
                    "image, and Ctrl-C stops it and writes the image so far\n",
                    c->pb.tty ? "\r\033[K" : "", t, p->spp_target,
                    p->spp_target > 64 ? "--spp 64 (denoised by default for PNG)" : "a smaller --res");
        }
    }
    if (c->checkpoint && cli_now() - c->last_checkpoint > 30.0) {
        char err[512];
        if (caustic_checkpoint_save(c->r, c->checkpoint, err, sizeof err)) fprintf(stderr, "\ncaustic: %s\n", err);
        c->last_checkpoint = cli_now();
    }
    render_output_preview(c->out, c->r, cli_now());
    return g_interrupted;
}

static int is_model_file(const char *path) {
    size_t n = strlen(path);
    return (n > 4 && (!strcasecmp(path + n - 4, ".obj") || !strcasecmp(path + n - 4, ".ply") ||
                      !strcasecmp(path + n - 4, ".glb"))) ||
           (n > 5 && !strcasecmp(path + n - 5, ".gltf"));
}

static void default_output(const char *scene, char *out, size_t n) {
    const char *base = strrchr(scene, '/');
    base = base ? base + 1 : scene;
    size_t len = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) len = (size_t)(dot - base); /* scene.json, model.obj, cornell.txt -> NAME.png */
    snprintf(out, n, "%.*s.png", (int)len, base);
}

/* Samples per pixel as a grey image, normalised to the largest count. */
static int write_heatmap(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    int w, h;
    const uint32_t *count = caustic_sample_counts(r, &w, &h);
    caustic_rgb_image img;
    if (caustic_image_init(&img, w, h, err, errlen)) return -1;
    uint32_t mx = 1;
    for (int i = 0; i < w * h; ++i) mx = count[i] > mx ? count[i] : mx;
    for (int i = 0; i < w * h; ++i)
        img.rgb[3 * i] = img.rgb[3 * i + 1] = img.rgb[3 * i + 2] = (float)count[i] / (float)mx;
    int rc = caustic_image_save(&img, path, NULL, 0, err, errlen);
    caustic_image_free(&img);
    return rc;
}

void frames_default_output(const char *scene, char *out, size_t n) { default_output(scene, out, n); }

/* --crop X0,Y0,X1,Y1: integers (pixels) or, where any has a '.', fractions in [0, 1]. */
static int parse_crop(const char *v, double c[4], int *fractions) {
    char buf[128];
    size_t len = strlen(v);
    if (len >= sizeof buf || !len || v[0] == ',' || v[len - 1] == ',' || strstr(v, ",,")) return -1;
    strcpy(buf, v);
    *fractions = strchr(buf, '.') != NULL;
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    for (int i = 0; i < 4; ++i, tok = strtok_r(NULL, ",", &save)) {
        long n;
        if (!tok) return -1;
        if (*fractions ? parse_double(tok, 0.0, 1.0, &c[i]) : parse_int(tok, 0, 16384, &n)) return -1;
        if (!*fractions) c[i] = (double)n;
    }
    if (tok || !(c[0] < c[2]) || !(c[1] < c[3])) return -1;
    return 0;
}

static int is_8bit_output(const char *path) {
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".png");
}

/* A PNG mostly white is a lost image that exits 0: say so when more than 5 % of the pixels clip
 * under the clamp tone map (the others roll highlights off), and what keeps them. */
static void warn_clipping(caustic_renderer *r, const caustic_look *look, const char *output) {
    if (look->tonemap != CAUSTIC_TONEMAP_CLAMP) return;
    int w, h;
    const float *img = caustic_image(r, &w, &h);
    if (!img || w <= 0 || h <= 0) return;
    float scale = exp2f(look->exposure);
    size_t clipped = 0, n = (size_t)w * (size_t)h;
    for (size_t i = 0; i < n; ++i) {
        float m = fmaxf(img[3 * i], fmaxf(img[3 * i + 1], img[3 * i + 2])) * scale;
        clipped += m > 1.0f;
    }
    double frac = (double)clipped / (double)n;
    if (frac > 0.05)
        fprintf(stderr,
                "caustic: warning: %.0f %% of the pixels of %s clip to white under --tonemap clamp; --tonemap agx "
                "(or --exposure -1) keeps their detail\n",
                100.0 * frac, output);
}

static int in_frame_job = 0; /* a frame of render_frames: one process, no distributed layer */
static int cmd_render(int argc, char **argv);
static int render_one_frame(int argc, char **argv) {
    in_frame_job = 1;
    int rc = cmd_render(argc, argv);
    in_frame_job = 0;
    return rc;
}

static int cmd_render(int argc, char **argv) {
    caustic_options opt;
    int integrator_given = 0; /* else the scene file's integrator, where it names one (pbrt) */
    caustic_options_init(&opt);
    const char *scene_path = NULL, *output = NULL, *checkpoint = NULL, *heatmap = NULL, *dump = NULL, *camera = NULL;
    int quiet = 0, resume = 0, force = 0, strict = 0, denoise = 0, denoise_guides = 1;
    unsigned aovs = 0;
    caustic_look look;
    caustic_look_init(&look);
    double preview_every = 0.0, orbit = 0.0;
    const char *scenes[64];
    int nscenes = 0, frames = 1, orbit_given = 0, look_given = 0;
    const char *defines[64];
    int ndefines = 0, cropping = 0, crop_fractions = 0;
    double crop[4];
    for (int i = 0; i < argc;) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_print_render_help(stdout, 80);
            return 0;
        }
        const cli_option *o;
        const char *v;
        char perr[512];
        int kind = cli_next(cli_render_options, argc, argv, &i, &o, &v, perr, sizeof perr);
        if (kind < 0) return usage_error("render", "%s", perr);
        long n;
        double d;
        if (kind == 0) {
            if (nscenes >= 64) return usage_error("render", "too many scenes ('%s': at most 64)", v);
            scenes[nscenes++] = scene_path = v;
            continue;
        }
        const char *a = o->name;
        if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--resume"))
            resume = 1;
        else if (!strcmp(a, "--force"))
            force = 1;
        else if (!strcmp(a, "--strict"))
            strict = 1;
        else if (!strcmp(a, "--adaptive-depth"))
            opt.adaptive_depth = 1;
        else if (!strcmp(a, "--merge-everywhere"))
            opt.merge_everywhere = 1;
        else if (!strcmp(a, "--denoise"))
            denoise = 1;
        else if (!strcmp(a, "--no-denoise"))
            denoise = -1;
        else {
            if (!strcmp(a, "--output"))
                output = v;
            else if (!strcmp(a, "--crop")) {
                if (parse_crop(v, crop, &crop_fractions))
                    return usage_error("render",
                                       "--crop: '%s' is not X0,Y0,X1,Y1 in pixels (0,0,320,240) or fractions "
                                       "(0.25,0.25,0.75,0.75) with X0 < X1 and Y0 < Y1",
                                       v);
                cropping = 1;
            } else if (!strcmp(a, "-D")) {
                if (ndefines >= 64) return usage_error("render", "too many -D overrides ('%s': at most 64)", v);
                if (!strchr(v, '=') || v[0] == '=')
                    return usage_error("render", "-D '%s': expected PATH=VALUE, e.g. -D 'Camera.RES=[320,240]'", v);
                defines[ndefines++] = v;
            } else if (!strcmp(a, "--frames")) {
                if (parse_int(v, 1, 100000, &n))
                    return usage_error("render", "--frames: '%s' is not an integer in 1..100000", v);
                frames = (int)n;
            } else if (!strcmp(a, "--orbit")) {
                if (parse_double(v, -1e6, 1e6, &d))
                    return usage_error("render", "--orbit: '%s' is not a number of degrees", v);
                orbit = d;
                orbit_given = 1;
            } else if (!strcmp(a, "--checkpoint"))
                checkpoint = v;
            else if (!strcmp(a, "--dump-scene"))
                dump = v;
            else if (!strcmp(a, "--camera"))
                camera = v;
            else if (!strcmp(a, "--spp")) {
                if (parse_int(v, 1, CAUSTIC_MAX_SPP, &n))
                    return usage_error("render", "--spp: '%s' is not an integer in 1..1073741824", v);
                opt.spp = (int)n;
            } else if (!strcmp(a, "--time-limit")) {
                if (parse_double(v, 1e-3, 1e7, &d))
                    return usage_error("render", "--time-limit: '%s' is not a positive number of seconds", v);
                opt.time_limit = d;
            } else if (!strcmp(a, "--threads")) {
                if (parse_int(v, 1, 1024, &n))
                    return usage_error("render", "--threads: '%s' is not an integer in 1..1024", v);
                opt.threads = (int)n;
                long cores = sysconf(_SC_NPROCESSORS_ONLN);
                if (cores > 0 && n > cores)
                    fprintf(stderr, "caustic: warning: --threads %ld is more than the %ld cores of this machine\n", n,
                            cores);
            } else if (!strcmp(a, "--seed")) {
                if (parse_int(v, 0, 4294967295L, &n))
                    return usage_error("render", "--seed: '%s' is not an integer in 0..4294967295", v);
                opt.seed = (uint32_t)n;
            } else if (!strcmp(a, "--max-depth")) {
                if (parse_int(v, 0, 1000, &n))
                    return usage_error("render", "--max-depth: '%s' is not an integer in 0..1000", v);
                opt.max_depth = (int)n;
            } else if (!strcmp(a, "--res")) {
                int w, h;
                if (parse_size(v, 1, 16384, &w, &h) || (long long)w * h > (1LL << 26))
                    return usage_error("render", "--res: '%s' is not WxH with 1..16384 per side (at most 2^26 pixels)",
                                       v);
                opt.width = w;
                opt.height = h;
            } else if (!strcmp(a, "--schedule")) {
                if (caustic_parse_schedule(v, &opt.schedule))
                    return usage_error("render", "--schedule: '%s' is not one of tiles, rows, rows-static, pixels", v);
            } else if (!strcmp(a, "--adaptive")) {
                if (parse_double(v, 1e-6, 10.0, &d))
                    return usage_error("render", "--adaptive: '%s' is not a relative error in (0, 10]", v);
                opt.adaptive = (float)d;
            } else if (!strcmp(a, "--adaptive-min")) {
                if (parse_int(v, 2, CAUSTIC_MAX_SPP, &n))
                    return usage_error("render", "--adaptive-min: '%s' is not an integer in 2..1073741824", v);
                opt.adaptive_min_spp = (int)n;
            } else if (!strcmp(a, "--exposure")) {
                if (parse_double(v, -64.0, 64.0, &d))
                    return usage_error("render", "--exposure: '%s' is not a number of stops in -64..64", v);
                look.exposure = (float)d;
                look_given = 1;
            } else if (!strcmp(a, "--tonemap")) {
                if (caustic_parse_tonemap(v, &look.tonemap))
                    return usage_error("render", "--tonemap: '%s' is not one of clamp, aces, agx", v);
                look_given = 1;
            } else if (!strcmp(a, "--preview-every")) {
                if (parse_double(v, 0.01, 1e7, &d))
                    return usage_error("render", "--preview-every: '%s' is not a number of seconds >= 0.01", v);
                preview_every = d;
            } else if (!strcmp(a, "--heatmap")) {
                heatmap = v;
            } else if (!strcmp(a, "--clamp")) {
                if (parse_double(v, 1e-6, 1e30, &d))
                    return usage_error("render", "--clamp: '%s' is not a positive luminance", v);
                opt.clamp = (float)d;
            } else if (!strcmp(a, "--device")) {
                if (caustic_options_set_device(&opt, v))
                    return usage_error("render", "--device: '%s' is not one of auto, cpu, cuda, cuda:I,J,...", v);
            } else if (!strcmp(a, "--gpu-mode")) {
                if (caustic_parse_gpu_mode(v, &opt.gpu_mode))
                    return usage_error("render", "--gpu-mode: '%s' is not one of mega, wavefront", v);
            } else if (!strcmp(a, "--gpu-bvh")) {
                if (caustic_parse_gpu_bvh(v, &opt.gpu_bvh))
                    return usage_error("render", "--gpu-bvh: '%s' is not one of sah, lbvh, cwbvh", v);
            } else if (!strcmp(a, "--light-sampler")) {
                /* the scene's light table is built at load (scene_prepare), which reads it */
                if (strcmp(v, "auto") && strcmp(v, "power") && strcmp(v, "tree"))
                    return usage_error("render", "--light-sampler: '%s' is not one of auto, power, tree", v);
                setenv("CAUSTIC_LIGHT_SAMPLER", v, 1);
            } else if (!strcmp(a, "--integrator")) {
                integrator_given = 1;
                if (caustic_parse_integrator(v, &opt.integrator))
                    return usage_error("render", "--integrator: '%s' is not one of pt, lt, bdpt, ppm, bpm, vcm", v);
            } else if (!strcmp(a, "--radius")) {
                if (parse_double(v, 1e-7, 1.0, &d))
                    return usage_error("render", "--radius: '%s' is not a fraction in (0, 1]", v);
                opt.merge_radius = (float)d;
            } else if (!strcmp(a, "--alpha")) {
                if (parse_double(v, 1e-3, 1.0, &d)) return usage_error("render", "--alpha: '%s' is not in (0, 1]", v);
                opt.merge_alpha = (float)d;
            } else if (!strcmp(a, "--aov")) {
                if (caustic_parse_aovs(v, &aovs))
                    return usage_error(
                        "render",
                        "--aov: '%s' is not a comma-separated list of albedo, normal, depth, samples, variance", v);
            } else if (!strcmp(a, "--denoise-guides")) {
                if (strcmp(v, "on") && strcmp(v, "off"))
                    return usage_error("render", "--denoise-guides: '%s' is not on or off", v);
                denoise_guides = !strcmp(v, "on");
            } else if (!strcmp(a, "--sampler")) {
                if (caustic_parse_sampler(v, &opt.sampler))
                    return usage_error("render", "--sampler: '%s' is not one of sobol, stratified, random", v);
            } else /* in the table, not handled here: a bug that test_cli's table walk catches */
                return usage_error("render", "option %s is not implemented", a);
        }
    }
    if (nscenes > 1 || frames > 1) {
        if (in_frame_job) return usage_error("render", "%s", "a frame of --frames renders one scene");
        if (nscenes == 0) scenes[nscenes++] = "cornell";
        return render_frames(argc, argv, scenes, nscenes, frames, output, orbit_given ? orbit : 360.0,
                             render_one_frame);
    }
    if (resume && !checkpoint) return usage_error("render", "%s needs --checkpoint FILE", "--resume");
    if (heatmap && !has_image_extension(heatmap))
        return usage_error("render", "heatmap '%s' must end in .png, .exr or .pfm", heatmap);
    int no_scene = !scene_path;
    if (!scene_path) scene_path = "cornell";
    char default_out[1024];
    if (!output) {
        default_output(scene_path, default_out, sizeof default_out);
        output = default_out;
    }
    {
        /* validate the output name before spending time rendering */
        size_t len = strlen(output);
        const char *ext = len >= 4 ? output + len - 4 : "";
        if (strcasecmp(ext, ".png") && strcasecmp(ext, ".exr") && strcasecmp(ext, ".pfm"))
            return usage_error("render", "output '%s' must end in .png, .exr or .pfm", output);
    }
    {
        /* everything to be written is checked before the render spends its time */
        char werr[1200];
        if (caustic_check_writable(output, "cannot write image", werr, sizeof werr) ||
            (heatmap && caustic_check_writable(heatmap, "cannot write heat map", werr, sizeof werr)) ||
            (checkpoint && caustic_check_writable(checkpoint, "cannot write checkpoint", werr, sizeof werr)))
            return usage_error("render", "%s", werr);
        struct stat cst;
        if (checkpoint && !resume && !force && stat(checkpoint, &cst) == 0)
            return usage_error(
                "render", "checkpoint '%s' exists: continue it with --resume, or replace it with --force", checkpoint);
    }
    render_output out;
    render_output_init(&out, output);
    out.look = look;
    out.preview_every = preview_every;
    out.aovs = aovs;
    out.denoise_guides = denoise_guides;
    opt.aovs = aovs;
    int eight_bit = is_8bit_output(output);
    if (look_given && !eight_bit && !in_frame_job)
        fprintf(stderr,
                "caustic: warning: --tonemap and --exposure shape 8-bit outputs only; %s stays linear (apply them "
                "later with 'caustic tonemap %s OUT.png')\n",
                output, output);
    /* a clean first image: denoised by default where it is shown as it is (8-bit) and Open Image
     * Denoise is there; --no-denoise opts out, and where it is missing nothing is said. Not with
     * --checkpoint: the guides' AOV planes are part of a checkpoint, which would then resume only
     * where Open Image Denoise is installed too (--denoise asks for them explicitly). */
    if (denoise == 0 && eight_bit && !checkpoint) {
        char why[256];
        denoise = caustic_denoise_load(why, sizeof why) == 0;
    }
    if (denoise > 0 && render_output_set_denoise(&out, &opt))
        return usage_error("render", "output name '%s' is too long", output);

    char err[1024];
    /* under mpirun: every rank runs this command; rank 0 coordinates and writes, the others render */
    int rank = 0, nranks = 1;
    int dist_rc = in_frame_job ? 0 : caustic_dist_start(&rank, &nranks, &g_interrupted, err, sizeof err);
    if (dist_rc == -2) {
        /* MPI_Init is stuck on another thread: exit()'s handlers may touch it */
        fprintf(stderr, "caustic: %s\n", err);
        fflush(stderr);
        _exit(EXIT_RUNTIME);
    }
    if (dist_rc) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    if (rank != 0) {
        quiet = 1;
        g_signal_quiet = 1;
        checkpoint = NULL;
        resume = 0;
        heatmap = NULL;
        dump = NULL;
    }
    if (nranks > 1 && opt.aovs != aovs) {
        /* the guides --denoise added: work units do not carry AOV planes yet */
        opt.aovs = aovs;
        out.denoise_guides = 0;
        if (rank == 0)
            fprintf(stderr,
                    "caustic: --denoise: no AOV guides in distributed renders yet; denoising the image alone\n");
    }
    caustic_scene *scene;
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    lo.strict = strict;
    lo.warning = print_warning;
    lo.dump_scene = dump;
    lo.defines = defines;
    lo.ndefines = ndefines;
    if (no_scene && !quiet && rank == 0)
        fprintf(stderr,
                "caustic: no scene given: rendering the built-in cornell box to %s ('caustic render --help' for "
                "scenes and options)\n",
                output);
    /* reading and BVH building can take a while (millions of triangles): said on a terminal */
    int load_tty = !quiet && rank == 0 && isatty(STDERR_FILENO);
    if (load_tty) fprintf(stderr, "caustic: reading %s and building its BVH ...", scene_path);
    double load_t0 = cli_now();
    int load_failed = caustic_scene_load_ex(&scene, scene_path, &lo, err, sizeof err) != 0;
    double load_s = cli_now() - load_t0;
    if (load_tty) fprintf(stderr, "\r\033[K");
    if (load_failed) {
        if (rank == 0) fprintf(stderr, "caustic: %s\n", err);
        caustic_dist_stop(1);
        return EXIT_USAGE;
    }
    if (dump && !quiet) fprintf(stderr, "caustic: wrote the scene as JSON to %s\n", dump);
    caustic_scene_stats sst;
    caustic_scene_stats_get(scene, &sst);
    if (!integrator_given && !resume && sst.integrator >= 0 && sst.integrator != (int)opt.integrator) {
        opt.integrator = (caustic_integrator)sst.integrator;
        if (!quiet && rank == 0)
            fprintf(stderr, "caustic: %s names its integrator: rendering with %s (--integrator overrides)\n",
                    scene_path, caustic_integrator_name(opt.integrator));
    }
    double bvh_s = sst.bvh_build_seconds;
    load_s = load_s > bvh_s ? load_s - bvh_s : 0.0; /* the BVH is built inside the load */
    if (load_tty && load_s + bvh_s > 1.0)
        fprintf(stderr, "caustic: read %s in %.1f s, BVH over %zu primitives in %.1f s\n", scene_path, load_s,
                sst.primitives, bvh_s);
    if (sst.lights == 0 && rank == 0)
        fprintf(
            stderr,
            "caustic: warning: %s has no light (no emitting surface, light or environment): the image will be black\n",
            scene_path);
    if (!dump && !quiet && rank == 0 && is_model_file(scene_path))
        fprintf(stderr, "caustic: quick look at %s: add --dump-scene scene.json to get this scene as editable JSON\n",
                scene_path);
    if ((camera && caustic_scene_load_camera(scene, camera, err, sizeof err)) ||
        (orbit != 0.0 && caustic_scene_orbit(scene, orbit, err, sizeof err))) {
        fprintf(stderr, "caustic: %s\n", err);
        caustic_scene_free(scene);
        caustic_dist_stop(1);
        return EXIT_USAGE;
    }
    if (cropping) {
        /* fractions of the resolution the render will have: --res, else the scene's */
        int w = opt.width > 0 ? opt.width : sst.width, h = opt.height > 0 ? opt.height : sst.height;
        double sx = crop_fractions ? w : 1.0, sy = crop_fractions ? h : 1.0;
        opt.crop[0] = (int)ceil(crop[0] * sx); /* pbrt's rounding of --cropwindow */
        opt.crop[1] = (int)ceil(crop[1] * sy);
        opt.crop[2] = (int)ceil(crop[2] * sx);
        opt.crop[3] = (int)ceil(crop[3] * sy);
    }
    caustic_renderer *r = caustic_renderer_create(scene, &opt, err, sizeof err);
    if (!r) {
        fprintf(stderr, "caustic: %s\n", err);
        caustic_scene_free(scene);
        caustic_dist_stop(1);
        return EXIT_USAGE;
    }
    if (resume) {
        struct stat st;
        if (stat(checkpoint, &st) == 0) {
            if (caustic_checkpoint_load(r, checkpoint, err, sizeof err)) {
                fprintf(stderr, "caustic: %s\n", err);
                caustic_renderer_free(r);
                caustic_scene_free(scene);
                caustic_dist_stop(1);
                return EXIT_USAGE;
            }
            caustic_render_stats st2;
            caustic_render_stats_get(r, &st2);
            if (!quiet) fprintf(stderr, "caustic: resuming %s at %d spp\n", checkpoint, st2.spp);
        }
    }
    render_ctx ctx;
    progress_init(&ctx.pb, "render", quiet);
    ctx.r = r;
    ctx.checkpoint = checkpoint;
    ctx.last_checkpoint = cli_now();
    ctx.out = &out;
    ctx.eta_said = quiet || rank != 0;
    if (preview_every > 0.0 && !quiet)
        fprintf(stderr, "caustic: a preview goes to %s every %g s\n", output, preview_every);
    out.last_preview = cli_now();
    g_rendering = r;
    set_handler(on_signal);
    int failed = caustic_render(r, on_progress, &ctx, err, sizeof err) != 0;
    if (failed) fprintf(stderr, "caustic: %s\n", err);
    progress_finish(&ctx.pb);

    int status = failed ? EXIT_RUNTIME : 0;
    if (rank != 0) {
        /* a rank that renders for rank 0 writes nothing */
        caustic_renderer_free(r);
        caustic_scene_free(scene);
        caustic_dist_stop(failed);
        return failed ? EXIT_RUNTIME : g_interrupted ? EXIT_INTERRUPTED : 0;
    }
    char partial[1100];
    if (failed) {
        /* what was finished goes under a name that says so (out.png -> out.partial.png), never
         * under the name asked for, which a script would take for the finished image */
        const char *dot = strrchr(output, '.');
        snprintf(partial, sizeof partial, "%.*s.partial%s", (int)(dot - output), output, dot);
        output = partial;
        out.path = partial;
        out.denoise = 0;
        fprintf(stderr, "caustic: the render failed; %s, and the image of what was finished goes to %s\n",
                checkpoint ? "the checkpoint keeps every finished work unit (continue with --resume)"
                           : "nothing is kept to continue from",
                partial);
    }
    if (checkpoint && caustic_checkpoint_save(r, checkpoint, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        status = EXIT_RUNTIME;
    }
    int written = 1;
    if (render_output_save(&out, r, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        status = EXIT_RUNTIME;
        written = 0;
    }
    if (heatmap && write_heatmap(r, heatmap, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        status = EXIT_RUNTIME;
    }
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    if (g_interrupted && !failed) {
        fprintf(stderr, "caustic: interrupted at %d spp; %s%s\n", st.spp,
                checkpoint ? "continue with --resume --checkpoint " : "partial image saved",
                checkpoint ? checkpoint : "");
        if (!status) status = EXIT_INTERRUPTED;
    }
    if (written && eight_bit && !quiet) warn_clipping(r, &look, output);
    if (written && out.denoised && !quiet)
        fprintf(stderr, "caustic: wrote %s (denoised) and %s (noisy)\n", out.denoised_path, output);
    char extra[1200];
    render_output_summary(&out, extra, sizeof extra);
    /* output= names only a file that was written */
    double per_s = st.seconds > 0 ? 1e-6 / st.seconds : 0.0;
    printf("time=%.3fs spp=%d Msamples/s=%.3f Mrays/s=%.3f Msegments/s=%.3f Mshadow/s=%.3f bad_samples=%llu device=%s "
           "threads=%d res=%dx%d%s%s%s",
           st.seconds, st.spp, st.samples * per_s, st.rays * per_s, (double)(st.rays - st.shadow_rays) * per_s,
           st.shadow_rays * per_s, (unsigned long long)st.bad_samples, st.device, st.threads, st.width, st.height,
           written ? " output=" : "", written ? output : "", extra);
    printf(" load_s=%.3f bvh_s=%.3f", load_s, bvh_s);
    if (nranks > 1) printf(" ranks=%d", nranks);
    if (st.kernel) printf(" kernel=%s", st.kernel);
    if (failed) printf(" status=failed");
    printf("\n");
    fflush(stdout);
    /* only now: a later signal (a second Ctrl-C, mpirun repeating SIGTERM when a rank died) must
     * not end the process before the checkpoint, the image and the summary are out */
    set_handler(SIG_DFL);
    g_rendering = NULL;
    caustic_renderer_free(r);
    caustic_scene_free(scene);
    caustic_dist_stop(failed);
    return status;
}

/* ---- info ------------------------------------------------------------------------------------ */
static int cmd_info(int argc, char **argv) {
    if (argc >= 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(usage_info, stdout);
        return 0;
    }
    const char *path = NULL, *dump = NULL;
    for (int i = 0; i < argc; ++i) {
        if (!strcmp(argv[i], "--dump-scene") || !strncmp(argv[i], "--dump-scene=", 13)) {
            const char *v = argv[i][12] == '=' ? argv[i] + 13 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v) return usage_error("info", "%s", "--dump-scene needs a FILE");
            dump = v;
        } else if (argv[i][0] == '-') {
            return usage_error("info", "unknown option '%s'", argv[i]);
        } else if (path) {
            return usage_error("info", "%s", "too many arguments");
        } else {
            path = argv[i];
        }
    }
    if (!path) return usage_error("info", "%s", "missing SCENE");
    char err[1024];
    caustic_scene *scene;
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    lo.warning = print_warning;
    lo.dump_scene = dump;
    if (caustic_scene_load_ex(&scene, path, &lo, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    if (dump) fprintf(stderr, "caustic: wrote the scene as JSON to %s\n", dump);
    caustic_scene_stats s;
    caustic_scene_stats_get(scene, &s);
    printf("scene:       %s\n", path);
    printf("resolution:  %dx%d, %d spp, max depth %d\n", s.width, s.height, s.spp, s.max_depth);
    printf("primitives:  %zu (%zu triangles, %zu spheres, %zu quads), %zu vertices\n", s.primitives, s.triangles,
           s.spheres, s.quads, s.vertices);
    printf("materials:   %zu, textures: %zu\n", s.materials, s.textures);
    printf("lights:      %zu\n", s.lights);
    if (s.media)
        printf("media:       %zu homogeneous, %zu grid%s%s%s (path tracing only)\n", s.media - s.grid_media,
               s.grid_media, s.camera_medium ? ", the camera in \"" : "", s.camera_medium ? s.camera_medium : "",
               s.camera_medium ? "\"" : "");
    if (s.instances)
        printf("instances:   %zu placements of %zu meshes: %zu primitives placed, %zu held (two-level BVH)\n",
               s.instances, s.instanced_meshes, s.placed_primitives, s.primitives);
    if (s.grid_media)
        printf("voxels:      %.2f MiB (density, albedo, NanoVDB and majorant grids)\n", s.voxel_bytes / 1048576.0);
    printf("bounds:      (%g, %g, %g) - (%g, %g, %g)\n", s.bounds_lo[0], s.bounds_lo[1], s.bounds_lo[2], s.bounds_hi[0],
           s.bounds_hi[1], s.bounds_hi[2]);
    printf("cpu kernel:  %s\n", caustic_cpu_isa(err, sizeof err));
    printf("bvh:         %zu %d-wide nodes, %zu leaves, depth %d, max leaf %d, SAH cost %.2f (binary %.2f), built in "
           "%.3f ms\n",
           s.bvh_nodes, s.bvh_width, s.bvh_leaves, s.bvh_max_depth, s.bvh_max_leaf, s.bvh_wide_sah_cost, s.bvh_sah_cost,
           s.bvh_build_seconds * 1e3);
    printf("memory:      %.2f MiB (%.1f bytes/primitive)\n", s.memory_bytes / 1048576.0,
           s.primitives ? (double)s.memory_bytes / s.primitives : 0.0);
    caustic_scene_free(scene);
    return 0;
}

/* ---- compare --------------------------------------------------------------------------------- */
static int cmd_compare(int argc, char **argv) {
    if (argc >= 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(usage_compare, stdout);
        return 0;
    }
    if (argc != 2) return usage_error("compare", "%s", "needs exactly two images");
    caustic_rgb_image a, b;
    char err[1024];
    if (caustic_image_load(&a, argv[0], err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    if (caustic_image_load(&b, argv[1], err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        caustic_image_free(&a);
        return EXIT_USAGE;
    }
    caustic_image_metrics m;
    int rc = caustic_image_compare(&a, &b, &m, err, sizeof err);
    caustic_image_free(&a);
    caustic_image_free(&b);
    if (rc) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    printf("AE=%.0f PSNR=", m.ae);
    if (isinf(m.psnr))
        printf("inf");
    else
        printf("%.3f", m.psnr);
    printf(" RMSE=%.4f SSIM=%.5f\n", m.rmse, m.ssim);
    return 0;
}

/* --version: the version and what this build can do (compiled in, and found at run time). */
static void print_version(void) {
    char feat[1024], why[512];
    caustic_build_features(feat, sizeof feat);
    printf("caustic %s\n%s\n", caustic_version(), feat);
    int oidn = caustic_denoise_load(why, sizeof why) == 0;
    printf("oidn: %s\n", oidn ? "yes (--denoise)" : why);
#ifdef CAUSTIC_HAVE_SDL2_WINDOW
    printf("sdl: yes (caustic view has a window)\n");
#else
    printf("sdl: no (caustic view runs headless only)\n");
#endif
}

int main(int argc, char **argv) {
    if (argc < 2) {
        cli_print_main_help(stderr, 80);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        /* the generated documents (CMake writes caustic.1 and the completion through these) */
        if (argc == 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "--man")) {
            cli_print_man(stdout, caustic_version());
            return 0;
        }
        if (argc == 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "--bash-completion")) {
            cli_print_bash_completion(stdout);
            return 0;
        }
        cli_print_main_help(stdout, 80);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        print_version();
        return 0;
    }
    caustic_set_log(print_log, NULL);
    char isa_err[256];
    if (!caustic_cpu_isa(isa_err, sizeof isa_err)) {
        fprintf(stderr, "caustic: %s\n", isa_err);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "render")) return cmd_render(argc - 2, argv + 2);
    /* the other commands parse "--opt value" themselves: "--opt=value" is split for them */
    char **args = malloc(((size_t)argc * 2 + 1) * sizeof *args);
    if (!args) {
        fprintf(stderr, "caustic: out of memory\n");
        return EXIT_RUNTIME;
    }
    int nargs = 0;
    for (int i = 2; i < argc; ++i) {
        char *eq = argv[i][0] == '-' && argv[i][1] == '-' ? strchr(argv[i], '=') : NULL;
        if (eq && eq > argv[i] + 2) {
            *eq = 0; /* argv's strings are the program's to modify (C11 5.1.2.2.1) */
            args[nargs++] = argv[i];
            args[nargs++] = eq + 1;
        } else
            args[nargs++] = argv[i];
    }
    args[nargs] = NULL;
    int rc = -1;
    if (!strcmp(argv[1], "view")) rc = cmd_view(nargs, args);
    if (!strcmp(argv[1], "serve")) rc = cmd_serve(nargs, args);
    if (!strcmp(argv[1], "info")) rc = cmd_info(nargs, args);
    if (!strcmp(argv[1], "compare")) rc = cmd_compare(nargs, args);
    if (!strcmp(argv[1], "tonemap")) rc = cmd_tonemap(nargs, args);
    if (!strcmp(argv[1], "bench")) rc = cmd_bench(nargs, args);
    free(args);
    if (rc >= 0) return rc;
    if (!strcmp(argv[1], "devices")) {
        char buf[4096];
        caustic_describe_devices(buf, sizeof buf);
        char isa_err2[256];
        printf("CPU kernels: %s\n", caustic_cpu_isa(isa_err2, sizeof isa_err2));
        fputs(buf, stdout);
        return 0;
    }
    const char *names[32];
    int n = 0;
    for (const cli_command *c = cli_commands; c->name && n < 30; ++c) names[n++] = c->name;
    names[n] = NULL;
    /* "caustic cornell", "caustic scene.json": a scene where the command belongs */
    const char *const *builtins = caustic_builtin_scenes();
    int scene_like = strchr(argv[1], '.') != NULL;
    for (int i = 0; builtins[i]; ++i) scene_like |= !strcmp(builtins[i], argv[1]);
    fprintf(stderr, "caustic: unknown command '%s'%s\n", argv[1],
            scene_like ? " (did you mean 'caustic render ...'?)" : cli_did_you_mean(argv[1], names));
    fprintf(stderr, "(run 'caustic --help' for the commands)\n");
    return EXIT_USAGE;
}
