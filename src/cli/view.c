/* caustic view: renders a scene in a window as it converges, through the steerable API
 * (caustic_renderer_set_camera, caustic_render_passes, caustic_image_rgb8: on the GPU the tone map
 * runs there and 8-bit frames come back through pinned memory). Every change of the camera
 * restarts the accumulation; the frame shown after it is the new view at the first samples (never
 * an empty one: a pass runs before each frame is shown). Path tracing runs with --adaptive-depth's
 * depth schedule, so the first samples after a change trace short paths and the depth grows as
 * the image converges. The frame loop sizes its passes from the measured time per sample: a short
 * budget while the camera moves, a longer one when it is still (fewer frames, more samples).
 *
 * The readout (device, integrator, spp, samples/s, frame time, look) is drawn over the frame where
 * the window can draw text (SDL2_ttf and a font) and is always in the title. The denoiser toggle
 * restarts the renderer with albedo and normal AOVs and denoises with them as guides (OIDN's CUDA
 * device when rendering on the GPU), when the view is still and the spp has doubled.
 *
 * --input-script replays key and mouse events (tests); --bench runs the same loop without a window
 * (or, --bench-window, with one) and measures it; --no-gpu-tonemap, --one-pass-per-frame,
 * --no-adaptive-depth and CAUSTIC_CUDA_SYNC_COPY=1 each take one piece of the GPU recipe away, to
 * measure what it gives (docs/performance-log.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "args.h"
#include "cli.h"
#include "render_output.h"
#include "view.h"
#include "view_internal.h"
#include "view_window.h"

static const char *usage_view =
    "usage: caustic view [SCENE] [options]\n"
    "\n"
    "Shows SCENE (a scene file or a built-in scene; default cornell) in a window as it renders, on\n"
    "the GPU when there is one, else the CPU. Any change of the camera starts the image again.\n"
    "\n"
    "  mouse: left drag orbit, right or middle drag pan, wheel zoom, left click focus (thin lens)\n"
    "  w a s d  fly forward/left/back/right;  q e  down/up\n"
    "  [ ]      field of view narrower/wider\n"
    "  , .      aperture smaller/larger (0 = pinhole);  ; '  focus distance nearer/farther\n"
    "  - =      exposure down/up by 1/2 EV;  t  tone map (clamp, aces, agx)\n"
    "  h heat map of samples per pixel (with --adaptive)   i next integrator   o readout on/off\n"
    "  ? or F1  the keys over the frame\n"
    "  n denoiser (Open Image Denoise, guided by albedo and normal: restarts the image with them)\n"
    "  p save the image (STEM.N.png through the look, STEM.N.exr linear)\n"
    "  c print the camera as scene JSON and write it to STEM.camera.json (render --camera FILE)\n"
    "  r camera back to the start   Esc quit\n"
    "\n"
    "  --res WxH              render (and window) size (default: the scene's)\n"
    "  --device D             auto (default) | cpu | cuda\n"
    "  --integrator I         pt (default) | lt | bdpt | ppm | bpm | vcm\n"
    "  --spp N                stop refining at N samples per pixel (default 65536)\n"
    "  --max-depth D          maximum bounces (default: the scene's)\n"
    "  --no-adaptive-depth    path tracing: full depth from the first sample\n"
    "  --no-gpu-tonemap       frames come back as floats and are tone-mapped on the host\n"
    "  --one-pass-per-frame   one 1-spp pass per frame (not passes sized to the frame's time)\n"
    "  --no-readout           start with the on-screen readout off (key o)\n"
    "  --adaptive E           adaptive sampling (see caustic render; the heat map shows it)\n"
    "  --seed N  --threads N  --sampler S   as caustic render\n"
    "  --exposure EV  --tonemap T           the look (as caustic render)\n"
    "  --camera FILE          start from this camera (a scene file's Camera, e.g. from the c key)\n"
    "  -o STEM                names of saved images and cameras (default: the scene's name + .view)\n"
    "  --input-script FILE    replay events from FILE (one per line: frames N, spp N, sleep S, key K,\n"
    "                         hold K N, drag left|middle|right DX DY [STEPS], click X Y, wheel N,\n"
    "                         resize W H, quit; # comments)\n"
    "  --bench                no window: run the loop while moving (--bench-frames N, default 120,\n"
    "                         1 degree of orbit per frame) and still (--bench-seconds S, default 5),\n"
    "                         then caustic render for as long on the same camera; print the figures\n"
    "  --bench-denoise        --bench with the denoiser on; then time denoising a frame (median of 7)\n"
    "  --bench-window         --bench in a window: every frame shown, then 200 presents timed\n"
    "  --quiet                no messages on stdout\n"
    "Environment: CAUSTIC_VIEW_FONT (the readout's .ttf), CAUSTIC_CUDA_SYNC_COPY=1 (GPU frames by\n"
    "cudaMemcpy into pageable memory on the default stream, to measure the pinned/async copy).\n"
    "Without a display (and without --bench) it exits with status 2.\n";

static const char *view_prog = "caustic view"; /* in messages: "caustic view" or "caustic serve" */

/* A message of the viewer's (a key's effect, a refusal): on stdout, and to the front end where it
 * shows them (caustic serve's page). */
void view_say(const viewer *v, const char *fmt, const char *a) {
    char msg[2400];
    snprintf(msg, sizeof msg, fmt, a);
    if (v->win && v->wo->message) v->wo->message(v->win, msg);
    if (v->quiet) return;
    printf("%s\n", msg);
    fflush(stdout);
}

void view_notice(viewer *v, const char *text) {
    snprintf(v->notice, sizeof v->notice, "%s", text);
    v->notice_until = cli_now() + VIEW_NOTICE_SECONDS;
    v->last_title = 0.0; /* the overlay and title change at the next frame */
    view_say(v, "view: %s", text);
}

int view_heatmap_meaningful(const viewer *v) {
    return v->opt.adaptive > 0.0f && v->opt.integrator == CAUSTIC_INTEGRATOR_PT;
}

int view_script_busy(const script *sc) {
    return sc->cmds && (sc->pos < sc->n || sc->wait_frames || sc->wait_spp || sc->wait_until > 0.0 || sc->drag_steps ||
                        sc->hold_frames);
}

int view_ensure_buffers(viewer *v, char *err, size_t errlen) {
    size_t n = (size_t)v->width * (size_t)v->height;
    if (n <= v->cap) return 0;
    unsigned char *rgb8 = realloc(v->rgb8, 3 * n);
    if (rgb8) v->rgb8 = rgb8;
    float *den = realloc(v->den, 3 * n * sizeof(float));
    if (den) v->den = den;
    if (!rgb8 || !den) {
        snprintf(err, errlen, "out of memory for a %dx%d frame", v->width, v->height);
        return -1;
    }
    v->cap = n;
    return 0;
}

/* A renderer for the current integrator, at the view's size and camera. The bidirectional
 * integrators take no lens, adaptive sampling, clamp or adaptive depth (their limits): dropped
 * with a message. */
int view_start_renderer(viewer *v, char *err, size_t errlen) {
    caustic_options o = v->opt;
    o.width = v->width;
    o.height = v->height;
    int pt = o.integrator == CAUSTIC_INTEGRATOR_PT;
    o.adaptive_depth = pt && v->adaptive_depth && o.adaptive <= 0.0f;
    if (!pt) {
        if (o.adaptive > 0.0f || o.clamp > 0.0f)
            view_say(v, "view: %s: no adaptive sampling or clamp", caustic_integrator_name(o.integrator));
        o.adaptive = 0.0f;
        o.clamp = 0.0f;
        if (v->cam.lens_radius > 0.0) {
            view_say(v, "view: %s renders pinhole cameras only: aperture set to 0",
                     caustic_integrator_name(o.integrator));
            v->cam.lens_radius = 0.0;
        }
    }
    caustic_renderer *r = caustic_renderer_create(v->scene, &o, err, errlen);
    if (!r) return -1;
    if (caustic_renderer_set_camera(r, &v->cam, err, errlen)) {
        caustic_renderer_free(r);
        return -1;
    }
    caustic_renderer_free(v->r);
    v->r = r;
    v->sec_per_spp = 0.0;
    v->last_pass = 0;
    v->denoised_spp = 0;
    v->cam_dirty = 0;
    caustic_render_stats_get(r, &v->st);
    return view_ensure_buffers(v, err, errlen);
}

void view_next_integrator(viewer *v) {
    caustic_integrator was = v->opt.integrator;
    caustic_camera cam = v->cam;
    v->opt.integrator = (caustic_integrator)(((int)was + 1) % (CAUSTIC_INTEGRATOR_VCM + 1));
    char err[512];
    if (view_start_renderer(v, err, sizeof err)) {
        view_say(v, "view: %s", err);
        v->opt.integrator = was;
        v->cam = cam;
        return;
    }
    view_say(v, "view: integrator %s", caustic_integrator_name(v->opt.integrator));
    if (v->heatmap && !view_heatmap_meaningful(v)) {
        v->heatmap = 0;
        v->display_dirty = 1;
        view_notice(v, "heat map off: it shows where --adaptive put samples, and only path tracing samples adaptively");
    }
    view_changed(v);
    v->cam_dirty = 0; /* start_renderer set the camera */
}

void view_save_image(viewer *v) {
    char png[1100], exr[1100], err[1024];
    snprintf(png, sizeof png, "%s.%03d.png", v->stem, v->saves);
    snprintf(exr, sizeof exr, "%s.%03d.exr", v->stem, v->saves);
    if (caustic_save_image_look(v->r, png, &v->look, err, sizeof err) ||
        caustic_save_image(v->r, exr, err, sizeof err)) {
        view_say(v, "view: %s", err);
        return;
    }
    v->saves++;
    char msg[2300];
    snprintf(msg, sizeof msg, "%s (%d spp) and %s", png, caustic_renderer_spp(v->r), exr);
    view_say(v, "view: saved %s", msg);
}

void view_write_camera(viewer *v) {
    char json[1024], path[1100];
    caustic_camera_to_json(&v->cam, v->width, v->height, json, sizeof json);
    snprintf(path, sizeof path, "%s.camera.json", v->stem);
    if (!v->quiet) fputs(json, stdout);
    FILE *f = fopen(path, "w");
    if (!f || fputs(json, f) < 0 || fclose(f)) {
        if (f) fclose(f);
        view_say(v, "view: cannot write %s", path);
        return;
    }
    view_say(v, "view: camera written to %s (caustic render --camera FILE renders it)", path);
}

/* The denoiser on: OIDN (on the GPU when rendering there) and a renderer that computes its
 * guides, the albedo and normal AOVs (a restart: they accumulate with the image); off: the
 * renderer without them (they cost time per sample). */
void view_toggle_denoise(viewer *v) {
    char err[1024];
    if (!v->denoise && !v->dn) {
        v->dn = denoiser_for(v->r, err, sizeof err);
        if (!v->dn) {
            view_say(v, "view: denoiser: %s", err);
            return;
        }
    }
    const unsigned guides = CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL);
    unsigned was = v->opt.aovs;
    v->opt.aovs = v->denoise ? v->opt.aovs & ~guides : v->opt.aovs | guides;
    if (view_start_renderer(v, err, sizeof err)) {
        view_say(v, "view: denoiser: %s", err);
        v->opt.aovs = was;
        return;
    }
    v->denoise = !v->denoise;
    if (v->denoise)
        view_say(v, "view: denoiser on (%s, guided by albedo and normal)", caustic_denoiser_device(v->dn));
    else
        view_say(v, "view: %s", "denoiser off");
    v->display_dirty = 1;
}

void view_resize(viewer *v, int w, int h) {
    if (w < 1 || h < 1 || (w == v->width && h == v->height)) return;
    char err[512];
    int ow = v->width, oh = v->height;
    v->width = w;
    v->height = h;
    if (view_ensure_buffers(v, err, sizeof err) || caustic_renderer_set_resolution(v->r, w, h, err, sizeof err)) {
        view_say(v, "view: resize: %s", err);
        v->width = ow;
        v->height = oh;
        /* a failed restart leaves no backend: start one at the old size */
        if (view_start_renderer(v, err, sizeof err)) {
            view_say(v, "view: %s", err);
            v->quit = 1;
        }
        return;
    }
    v->sec_per_spp = 0.0;
    v->last_pass = 0;
    v->denoised_spp = 0;
    v->last_change = cli_now();
}

/* One frame: script events, held keys, the camera, passes for about `budget` seconds, the image
 * to show. 0, or -1 with err. */
int view_frame(viewer *v, script *sc, double budget, char *err, size_t errlen) {
    double t0 = cli_now();
    view_script_step(v, sc);
    view_fly(v);
    int moving = v->cam_dirty || t0 - v->last_change < STILL_AFTER || v->button;
    if (v->cam_dirty) {
        if (caustic_renderer_set_camera(v->r, &v->cam, err, errlen)) {
            /* refused (e.g. a lens for a bidirectional integrator): back to the camera it has */
            view_say(v, "view: %s", err);
            caustic_renderer_get_camera(v->r, &v->cam);
        }
        v->cam_dirty = 0;
        v->denoised_spp = 0; /* (the pass size carries over: the next view costs about the same) */
    }
    if (budget <= 0.0) budget = moving ? MOVING_BUDGET : STILL_BUDGET;
    /* passes sized from the time per sample, growing at most 2x a frame (the first samples after
     * a change trace short paths, so the estimate errs on the safe side) */
    int spp = v->sec_per_spp > 0.0 ? (int)(budget / v->sec_per_spp) : 1;
    if (spp > 2 * v->last_pass + 1) spp = 2 * v->last_pass + 1;
    if (spp < 1 || v->one_pass) spp = 1;
    if (spp > 4096) spp = 4096;
    double tp = cli_now();
    int added = caustic_render_passes(v->r, 1, spp, err, errlen);
    if (added < 0) return -1;
    if (added > 0) {
        double per = (cli_now() - tp) / added;
        v->sec_per_spp = v->sec_per_spp > 0.0 ? 0.5 * (v->sec_per_spp + per) : per;
        v->last_pass = added;
    }
    if (view_refresh_display(v, added > 0, moving, err, errlen)) return -1;
    v->display_dirty = 0;
    if (added > 0) { /* (a converged view's frames only redraw: the figures stay those of the last pass) */
        v->frame_seconds = cli_now() - t0;
        v->rate = (double)added * v->width * v->height / v->frame_seconds;
    }
    return 0;
}

static void print_log(void *user, const char *message) {
    (void)user;
    fprintf(stderr, "%s\n", message);
}

static int usage_fail(const char *fmt, const char *arg) {
    fprintf(stderr, "%s: ", view_prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run '%s --help' for usage)\n", view_prog);
    return EXIT_USAGE;
}

/* ---- the native window (view_window.h) as the viewer's front end ----------------------------- */
static void *native_open(void *ctx, int width, int height, const char *title, char *err, size_t errlen) {
    (void)ctx;
    return view_window_open(width, height, title, err, errlen);
}
static int native_poll(void *w, view_event *ev) { return view_window_poll(w, ev); }
static int native_present(void *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen) {
    return view_window_present(w, rgb8, width, height, err, errlen);
}
static void native_set_title(void *w, const char *title) { view_window_set_title(w, title); }
static const char *native_renderer(const void *w) { return view_window_renderer(w); }
static const char *native_text_missing(const void *w) { return view_window_text_missing(w); }
static int native_set_overlay(void *w, const char *text, char *err, size_t errlen) {
    return view_window_set_overlay(w, text, err, errlen);
}
static void native_resize(void *w, int width, int height) { view_window_resize(w, width, height); }
static void native_close(void *w) { view_window_close(w); }

static const view_window_ops native_ops = {
    native_open,         native_poll,        native_present, native_set_title, native_renderer,
    native_text_missing, native_set_overlay, native_resize,  native_close,     NULL};

int cmd_view(int argc, char **argv) { return view_main("caustic view", argc, argv, &native_ops, NULL); }

int view_main(const char *prog, int argc, char **argv, const view_window_ops *wo, void *wo_ctx) {
    view_prog = prog;
    viewer v;
    memset(&v, 0, sizeof v);
    v.wo = wo;
    v.prog = prog;
    caustic_options_init(&v.opt);
    v.opt.spp = 65536;
    v.adaptive_depth = 1;
    v.gpu_tonemap = 1;
    v.readout_on = 1;
    caustic_look_init(&v.look);
    const char *scene_path = "cornell", *script_path = NULL, *camera_path = NULL, *stem = NULL;
    int run_bench = 0, bench_frames = 120, bench_denoise_on = 0, bench_window = 0;
    double bench_seconds = 5.0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double d;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_view, stdout);
            return 0;
        } else if (!strcmp(a, "--bench"))
            run_bench = 1;
        else if (!strcmp(a, "--bench-denoise"))
            run_bench = bench_denoise_on = 1;
        else if (!strcmp(a, "--bench-window"))
            run_bench = bench_window = 1;
        else if (!strcmp(a, "--no-gpu-tonemap"))
            v.gpu_tonemap = 0;
        else if (!strcmp(a, "--one-pass-per-frame"))
            v.one_pass = 1;
        else if (!strcmp(a, "--no-readout"))
            v.readout_on = 0;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            v.quiet = 1;
        else if (!strcmp(a, "--no-adaptive-depth"))
            v.adaptive_depth = 0;
        else if (a[0] == '-' && a[1]) {
            if (!val) return usage_fail("option %s needs a value", a);
            i++;
            if (!strcmp(a, "--res")) {
                int w, h;
                if (parse_size(val, 1, 16384, &w, &h))
                    return usage_fail("--res: '%s' is not WxH with 1..16384 per side", val);
                v.opt.width = w;
                v.opt.height = h;
            } else if (!strcmp(a, "--device")) {
                if (caustic_parse_device(val, &v.opt.device))
                    return usage_fail("--device: '%s' is not one of auto, cpu, cuda", val);
            } else if (!strcmp(a, "--integrator")) {
                if (caustic_parse_integrator(val, &v.opt.integrator))
                    return usage_fail("--integrator: '%s' is not one of pt, lt, bdpt, ppm, bpm, vcm", val);
            } else if (!strcmp(a, "--spp")) {
                if (parse_int(val, 1, 1 << 24, &n))
                    return usage_fail("--spp: '%s' is not an integer in 1..16777216", val);
                v.opt.spp = (int)n;
            } else if (!strcmp(a, "--max-depth")) {
                if (parse_int(val, 0, 1000, &n))
                    return usage_fail("--max-depth: '%s' is not an integer in 0..1000", val);
                v.opt.max_depth = (int)n;
            } else if (!strcmp(a, "--seed")) {
                if (parse_int(val, 0, 4294967295L, &n))
                    return usage_fail("--seed: '%s' is not an integer in 0..4294967295", val);
                v.opt.seed = (uint32_t)n;
            } else if (!strcmp(a, "--threads")) {
                if (parse_int(val, 1, 1024, &n)) return usage_fail("--threads: '%s' is not an integer in 1..1024", val);
                v.opt.threads = (int)n;
            } else if (!strcmp(a, "--sampler")) {
                if (caustic_parse_sampler(val, &v.opt.sampler))
                    return usage_fail("--sampler: '%s' is not one of sobol, stratified, random", val);
            } else if (!strcmp(a, "--adaptive")) {
                if (parse_double(val, 1e-6, 10.0, &d))
                    return usage_fail("--adaptive: '%s' is not a relative error in (0, 10]", val);
                v.opt.adaptive = (float)d;
            } else if (!strcmp(a, "--exposure")) {
                if (parse_double(val, -64.0, 64.0, &d))
                    return usage_fail("--exposure: '%s' is not a number of stops in -64..64", val);
                v.look.exposure = (float)d;
            } else if (!strcmp(a, "--tonemap")) {
                if (caustic_parse_tonemap(val, &v.look.tonemap))
                    return usage_fail("--tonemap: '%s' is not one of clamp, aces, agx", val);
            } else if (!strcmp(a, "--camera"))
                camera_path = val;
            else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
                stem = val;
            else if (!strcmp(a, "--input-script"))
                script_path = val;
            else if (!strcmp(a, "--bench-frames")) {
                if (parse_int(val, 0, 1000000, &n))
                    return usage_fail("--bench-frames: '%s' is not an integer in 0..1000000", val);
                bench_frames = (int)n;
            } else if (!strcmp(a, "--bench-seconds")) {
                if (parse_double(val, 0.0, 3600.0, &d))
                    return usage_fail("--bench-seconds: '%s' is not a number of seconds in 0..3600", val);
                bench_seconds = d;
            } else
                return usage_fail("unknown option '%s'", a);
        } else
            scene_path = a;
    }
    char err[1024];
    script sc;
    memset(&sc, 0, sizeof sc);
    if (script_path && view_script_load(&sc, script_path, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", view_prog, err);
        return EXIT_USAGE;
    }
    char stem_buf[1024];
    if (!stem) {
        frames_default_output(scene_path, stem_buf, sizeof stem_buf); /* NAME.png */
        char *dot = strrchr(stem_buf, '.');
        if (dot) snprintf(dot, sizeof stem_buf - (size_t)(dot - stem_buf), ".view");
        stem = stem_buf;
    }
    v.stem = stem;
    caustic_set_log(print_log, NULL);
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    int rc = EXIT_USAGE;
    if (caustic_scene_load_ex(&v.scene, scene_path, &lo, err, sizeof err) ||
        (camera_path && caustic_scene_load_camera(v.scene, camera_path, err, sizeof err))) {
        fprintf(stderr, "%s: %s\n", view_prog, err);
        goto out;
    }
    caustic_scene_stats ss;
    caustic_scene_stats_get(v.scene, &ss);
    v.width = v.opt.width > 0 ? v.opt.width : ss.width;
    v.height = v.opt.height > 0 ? v.opt.height : ss.height;
    caustic_scene_get_camera(v.scene, &v.cam);
    v.home = v.cam;
    if (!run_bench || bench_window) {
        v.win = wo->open(wo_ctx, v.width, v.height, view_prog, err, sizeof err);
        if (!v.win) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        }
        if (v.wo->text_missing(v.win))
            fprintf(stderr, "%s: no on-screen readout (%s); the window title shows the figures\n", view_prog,
                    v.wo->text_missing(v.win));
    }
    if (view_start_renderer(&v, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", view_prog, err);
        goto out;
    }
    rc = EXIT_RUNTIME;
    if (bench_denoise_on) {
        view_toggle_denoise(&v);
        if (!v.denoise) {
            fprintf(stderr, "%s: --bench-denoise: no denoiser (see above)\n", view_prog);
            goto out;
        }
    }
    v.last_change = cli_now();
    if (run_bench) {
        /* an input script runs first (to set the view up), then the measurement */
        while (!v.quit && view_script_busy(&sc))
            if (view_frame(&v, &sc, 0.0, err, sizeof err)) {
                fprintf(stderr, "%s: %s\n", view_prog, err);
                goto out;
            }
        if (view_bench(&v, bench_frames, bench_seconds, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        }
        rc = 0;
        goto out;
    }
    while (!v.quit) {
        view_event e;
        while (v.wo->poll(v.win, &e)) view_handle(&v, &e);
        if (v.quit) break;
        int at_target = caustic_renderer_spp(v.r) >= v.opt.spp && !v.cam_dirty && !v.display_dirty;
        int script_busy = view_script_busy(&sc);
        if (at_target && !script_busy && !v.held['w'] && !v.held['a'] && !v.held['s'] && !v.held['d'] && !v.held['q'] &&
            !v.held['e']) {
            /* converged: nothing to render, so wait for input rather than spin */
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        } else if (view_frame(&v, &sc, 0.0, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        } else if (view_show(&v, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        }
    }
    rc = 0;
out:
    if (v.r && !v.quiet && !run_bench) {
        char line[512];
        view_readout(&v, " | ", line, sizeof line);
        printf("%s | %s\n", view_prog, line);
    }
    caustic_renderer_free(v.r);
    caustic_denoiser_free(v.dn);
    v.wo->close(v.win);
    caustic_scene_free(v.scene);
    free(v.rgb8);
    free(v.den);
    free(sc.cmds);
    return rc;
}
