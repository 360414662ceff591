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
 * measure what it gives (docs/PERFORMANCE.md). */
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
    "  h heat map of samples per pixel   i next integrator   o readout on/off\n"
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
    "  --input-script FILE    replay events from FILE (one per line: frames N, spp N, key K,\n"
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

#define MOVING_BUDGET (1.0 / 60.0) /* seconds of rendering per frame while the camera moves */
#define STILL_BUDGET  0.1          /* ... and when it is still: fewer frames, more samples */
#define STILL_AFTER   0.25         /* seconds without a change before the view counts as still */

/* ---- input scripts ------------------------------------------------------------------------------ */
typedef enum { SC_FRAMES, SC_SPP, SC_KEY, SC_HOLD, SC_DRAG, SC_CLICK, SC_WHEEL, SC_RESIZE, SC_QUIT } script_op;
typedef struct script_cmd {
    script_op op;
    int key, button, a, b, c, line;
} script_cmd;
typedef struct script {
    const char *path;
    script_cmd *cmds;
    int n, pos;
    int wait_frames, wait_spp;
    int hold_key, hold_frames; /* a held key, released after hold_frames */
    int drag_step, drag_steps, drag_dx, drag_dy, drag_button, drag_x0, drag_y0;
} script;

static int key_named(const char *s, int *key) {
    if (!strcmp(s, "escape") || !strcmp(s, "esc")) {
        *key = VIEW_KEY_ESCAPE;
        return 0;
    }
    if (!strcmp(s, "space")) {
        *key = ' ';
        return 0;
    }
    if (strlen(s) == 1 && s[0] > 32 && s[0] < 127) {
        *key = s[0] >= 'A' && s[0] <= 'Z' ? s[0] + 32 : s[0];
        return 0;
    }
    return -1;
}

static int button_named(const char *s) {
    return !strcmp(s, "left") ? 1 : !strcmp(s, "middle") ? 2 : !strcmp(s, "right") ? 3 : 0;
}

/* Reads FILE: 0, or -1 with "FILE:LINE: problem" in err. */
static int script_load(script *sc, const char *path, char *err, size_t errlen) {
    memset(sc, 0, sizeof *sc);
    sc->path = path;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the input script", path);
        return -1;
    }
    char line[512];
    int ln = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        ++ln;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char w[5][64];
        int n = sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]);
        if (n <= 0) continue;
        script_cmd c;
        memset(&c, 0, sizeof c);
        c.line = ln;
        long v1 = 0, v2 = 0, v3 = 1;
        int ok = 1;
        if (!strcmp(w[0], "frames") && n == 2) {
            c.op = SC_FRAMES;
            ok = !parse_int(w[1], 0, 1000000, &v1);
            c.a = (int)v1;
        } else if (!strcmp(w[0], "spp") && n == 2) {
            c.op = SC_SPP;
            ok = !parse_int(w[1], 1, 1 << 24, &v1);
            c.a = (int)v1;
        } else if (!strcmp(w[0], "key") && n == 2) {
            c.op = SC_KEY;
            ok = !key_named(w[1], &c.key);
        } else if (!strcmp(w[0], "hold") && n == 3) {
            c.op = SC_HOLD;
            ok = !key_named(w[1], &c.key) && !parse_int(w[2], 1, 1000000, &v1);
            c.a = (int)v1;
        } else if (!strcmp(w[0], "drag") && (n == 4 || n == 5)) {
            c.op = SC_DRAG;
            c.button = button_named(w[1]);
            ok = c.button && !parse_int(w[2], -100000, 100000, &v1) && !parse_int(w[3], -100000, 100000, &v2) &&
                 (n == 4 || !parse_int(w[4], 1, 10000, &v3));
            c.a = (int)v1;
            c.b = (int)v2;
            c.c = (int)v3;
        } else if (!strcmp(w[0], "click") && n == 3) {
            c.op = SC_CLICK;
            ok = !parse_int(w[1], 0, 65535, &v1) && !parse_int(w[2], 0, 65535, &v2);
            c.a = (int)v1;
            c.b = (int)v2;
        } else if (!strcmp(w[0], "wheel") && n == 2) {
            c.op = SC_WHEEL;
            ok = !parse_int(w[1], -1000, 1000, &v1);
            c.a = (int)v1;
        } else if (!strcmp(w[0], "resize") && n == 3) {
            c.op = SC_RESIZE;
            ok = !parse_int(w[1], 1, 16384, &v1) && !parse_int(w[2], 1, 16384, &v2);
            c.a = (int)v1;
            c.b = (int)v2;
        } else if (!strcmp(w[0], "quit") && n == 1)
            c.op = SC_QUIT;
        else
            ok = 0;
        if (!ok) {
            snprintf(err, errlen,
                     "%s:%d: expected one of: frames N, spp N, key K, hold K N, drag left|middle|right "
                     "DX DY [STEPS], click X Y, wheel N, resize W H, quit",
                     path, ln);
            fclose(f);
            free(sc->cmds);
            return -1;
        }
        if (sc->n == cap) {
            cap = cap ? 2 * cap : 32;
            script_cmd *grown = realloc(sc->cmds, (size_t)cap * sizeof *grown);
            if (!grown) {
                fclose(f);
                free(sc->cmds);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            sc->cmds = grown;
        }
        sc->cmds[sc->n++] = c;
    }
    fclose(f);
    return 0;
}

/* ---- the viewer ----------------------------------------------------------------------------- */
typedef struct viewer {
    caustic_scene *scene;
    caustic_options opt; /* the renderer's options (the integrator changes) */
    int adaptive_depth;  /* wanted for path tracing */
    caustic_renderer *r;
    caustic_camera cam, home;
    int width, height;
    caustic_look look;
    int heatmap, denoise;
    int readout_on;  /* the readout drawn over the frame (key o) */
    int gpu_tonemap; /* frames through caustic_image_rgb8 (0: caustic_image + a host tone map) */
    int one_pass;    /* one 1-spp pass per frame */
    caustic_denoiser *dn;
    int denoised_spp; /* spp of the image in `den` (0: none for this view) */
    float *den;
    unsigned char *rgb8;
    size_t cap; /* pixels the buffers hold */
    int cam_dirty, display_dirty, quit;
    double last_change;
    int held[128];
    int button, press_x, press_y, last_x, last_y, dragged;
    const char *stem;
    int saves;
    double sec_per_spp; /* measured, for sizing passes */
    int last_pass;
    int quiet;
    const view_window_ops *wo; /* the window, or what takes its place (caustic serve) */
    void *win;
    /* readout */
    double frame_seconds, rate, last_title, denoise_seconds;
    caustic_render_stats st;
} viewer;

static const char *view_prog = "caustic view"; /* in messages: "caustic view" or "caustic serve" */

/* A message of the viewer's (a key's effect, a refusal): on stdout, and to the front end where it
 * shows them (caustic serve's page). */
static void say(const viewer *v, const char *fmt, const char *a) {
    char msg[2400];
    snprintf(msg, sizeof msg, fmt, a);
    if (v->win && v->wo->message) v->wo->message(v->win, msg);
    if (v->quiet) return;
    printf("%s\n", msg);
    fflush(stdout);
}

static double dist3(const double a[3], const double b[3]) {
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static void normalize3(double v[3]) {
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0.0) {
        v[0] /= l;
        v[1] /= l;
        v[2] /= l;
    }
}

static void cross3(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* v turned by angle (radians) about unit axis k (Rodrigues) */
static void rotate3(double v[3], const double k[3], double angle) {
    double c = cos(angle), s = sin(angle), kv[3], d = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
    cross3(k, v, kv);
    for (int i = 0; i < 3; ++i) v[i] = v[i] * c + kv[i] * s + k[i] * d * (1.0 - c);
}

/* The view frame: forward (unit), right (unit), up (unit). */
static void frame_of(const caustic_camera *c, double f[3], double r[3], double u[3]) {
    for (int i = 0; i < 3; ++i) f[i] = c->lookat[i] - c->eye[i];
    normalize3(f);
    cross3(f, c->up, r);
    normalize3(r);
    cross3(r, f, u);
}

static void changed(viewer *v) {
    v->cam_dirty = 1;
    v->last_change = cli_now();
}

/* Left drag: the eye turns about the look-at point, dx about the up axis, dy about the right one
 * (stopping short of the poles). */
static void orbit(viewer *v, double dx, double dy) {
    caustic_camera *c = &v->cam;
    double f[3], r[3], u[3], off[3], up[3] = {c->up[0], c->up[1], c->up[2]};
    frame_of(c, f, r, u);
    normalize3(up);
    for (int i = 0; i < 3; ++i) off[i] = c->eye[i] - c->lookat[i];
    rotate3(off, up, -dx * 0.005);
    double pitch = -dy * 0.005, cosang = -(f[0] * up[0] + f[1] * up[1] + f[2] * up[2]);
    double elev = asin(fmax(-1.0, fmin(1.0, cosang))); /* the eye's elevation above the horizon */
    if (elev + pitch > 1.5) pitch = 1.5 - elev;
    if (elev + pitch < -1.5) pitch = -1.5 - elev;
    double rr[3];
    double fo[3] = {-off[0], -off[1], -off[2]};
    normalize3(fo);
    cross3(fo, up, rr);
    normalize3(rr);
    rotate3(off, rr, pitch);
    for (int i = 0; i < 3; ++i) c->eye[i] = c->lookat[i] + off[i];
    changed(v);
}

/* Right/middle drag: eye and look-at move in the image plane, the scene following the pointer. */
static void pan(viewer *v, double dx, double dy) {
    caustic_camera *c = &v->cam;
    double f[3], r[3], u[3];
    frame_of(c, f, r, u);
    double scale = 2.0 * dist3(c->eye, c->lookat) * tan(c->fov_y * 0.5 * 3.14159265358979 / 180.0) / v->height;
    for (int i = 0; i < 3; ++i) {
        double d = (-dx * r[i] + dy * u[i]) * scale;
        c->eye[i] += d;
        c->lookat[i] += d;
    }
    changed(v);
}

static void zoom(viewer *v, int notches) {
    caustic_camera *c = &v->cam;
    double k = pow(0.9, notches);
    if (dist3(c->eye, c->lookat) * k < 1e-4) return;
    for (int i = 0; i < 3; ++i) c->eye[i] = c->lookat[i] + (c->eye[i] - c->lookat[i]) * k;
    changed(v);
}

/* WASD/QE while held: a step per frame of 2 % of the distance to the look-at point. */
static void fly(viewer *v) {
    int fwd = v->held['w'] - v->held['s'], side = v->held['d'] - v->held['a'], rise = v->held['e'] - v->held['q'];
    if (!fwd && !side && !rise) return;
    caustic_camera *c = &v->cam;
    double f[3], r[3], u[3];
    frame_of(c, f, r, u);
    double step = 0.02 * dist3(c->eye, c->lookat);
    for (int i = 0; i < 3; ++i) {
        double d = step * (fwd * f[i] + side * r[i] + rise * u[i]);
        c->eye[i] += d;
        c->lookat[i] += d;
    }
    changed(v);
}

static int ensure_buffers(viewer *v, char *err, size_t errlen) {
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
static int start_renderer(viewer *v, char *err, size_t errlen) {
    caustic_options o = v->opt;
    o.width = v->width;
    o.height = v->height;
    int pt = o.integrator == CAUSTIC_INTEGRATOR_PT;
    o.adaptive_depth = pt && v->adaptive_depth && o.adaptive <= 0.0f;
    if (!pt) {
        if (o.adaptive > 0.0f || o.clamp > 0.0f)
            say(v, "view: %s: no adaptive sampling or clamp", caustic_integrator_name(o.integrator));
        o.adaptive = 0.0f;
        o.clamp = 0.0f;
        if (v->cam.lens_radius > 0.0) {
            say(v, "view: %s renders pinhole cameras only: aperture set to 0", caustic_integrator_name(o.integrator));
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
    return ensure_buffers(v, err, errlen);
}

static void next_integrator(viewer *v) {
    caustic_integrator was = v->opt.integrator;
    caustic_camera cam = v->cam;
    v->opt.integrator = (caustic_integrator)(((int)was + 1) % (CAUSTIC_INTEGRATOR_VCM + 1));
    char err[512];
    if (start_renderer(v, err, sizeof err)) {
        say(v, "view: %s", err);
        v->opt.integrator = was;
        v->cam = cam;
        return;
    }
    say(v, "view: integrator %s", caustic_integrator_name(v->opt.integrator));
    changed(v);
    v->cam_dirty = 0; /* start_renderer set the camera */
}

static void save_image(viewer *v) {
    char png[1100], exr[1100], err[1024];
    snprintf(png, sizeof png, "%s.%03d.png", v->stem, v->saves);
    snprintf(exr, sizeof exr, "%s.%03d.exr", v->stem, v->saves);
    if (caustic_save_image_look(v->r, png, &v->look, err, sizeof err) ||
        caustic_save_image(v->r, exr, err, sizeof err)) {
        say(v, "view: %s", err);
        return;
    }
    v->saves++;
    char msg[2300];
    snprintf(msg, sizeof msg, "%s (%d spp) and %s", png, caustic_renderer_spp(v->r), exr);
    say(v, "view: saved %s", msg);
}

static void write_camera(viewer *v) {
    char json[1024], path[1100];
    caustic_camera_to_json(&v->cam, v->width, v->height, json, sizeof json);
    snprintf(path, sizeof path, "%s.camera.json", v->stem);
    if (!v->quiet) fputs(json, stdout);
    FILE *f = fopen(path, "w");
    if (!f || fputs(json, f) < 0 || fclose(f)) {
        if (f) fclose(f);
        say(v, "view: cannot write %s", path);
        return;
    }
    say(v, "view: camera written to %s (caustic render --camera FILE renders it)", path);
}

/* The denoiser on: OIDN (on the GPU when rendering there) and a renderer that computes its
 * guides, the albedo and normal AOVs (a restart: they accumulate with the image); off: the
 * renderer without them (they cost time per sample). */
static void toggle_denoise(viewer *v) {
    char err[1024];
    if (!v->denoise && !v->dn) {
        v->dn = denoiser_for(v->r, err, sizeof err);
        if (!v->dn) {
            say(v, "view: denoiser: %s", err);
            return;
        }
    }
    const unsigned guides = CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL);
    unsigned was = v->opt.aovs;
    v->opt.aovs = v->denoise ? v->opt.aovs & ~guides : v->opt.aovs | guides;
    if (start_renderer(v, err, sizeof err)) {
        say(v, "view: denoiser: %s", err);
        v->opt.aovs = was;
        return;
    }
    v->denoise = !v->denoise;
    if (v->denoise)
        say(v, "view: denoiser on (%s, guided by albedo and normal)", caustic_denoiser_device(v->dn));
    else
        say(v, "view: %s", "denoiser off");
    v->display_dirty = 1;
}

static void focus_at(viewer *v, int x, int y) {
    double depth;
    if (caustic_renderer_pick_depth(v->r, x, y, &depth)) {
        say(v, "view: %s", "nothing to focus on there");
        return;
    }
    v->cam.focus_distance = depth;
    char msg[64];
    snprintf(msg, sizeof msg, "%.4g", depth);
    say(v, "view: focus distance %s", msg);
    changed(v);
}

static void key_pressed(viewer *v, int key) {
    caustic_camera *c = &v->cam;
    double d = dist3(c->eye, c->lookat);
    switch (key) {
    case VIEW_KEY_ESCAPE: v->quit = 1; break;
    case '[':
        c->fov_y = fmax(5.0, c->fov_y / 1.1);
        changed(v);
        break;
    case ']':
        c->fov_y = fmin(150.0, c->fov_y * 1.1);
        changed(v);
        break;
    case ',':
        c->lens_radius = c->lens_radius / 1.5 < 0.002 * d ? 0.0 : c->lens_radius / 1.5;
        changed(v);
        break;
    case '.':
        if (v->opt.integrator != CAUSTIC_INTEGRATOR_PT) {
            say(v, "view: %s", "a lens needs the pt integrator");
            break;
        }
        c->lens_radius = c->lens_radius > 0.0 ? c->lens_radius * 1.5 : 0.005 * d;
        changed(v);
        break;
    case ';':
        c->focus_distance = (c->focus_distance > 0.0 ? c->focus_distance : d) / 1.1;
        changed(v);
        break;
    case '\'':
        c->focus_distance = (c->focus_distance > 0.0 ? c->focus_distance : d) * 1.1;
        changed(v);
        break;
    case '-':
        v->look.exposure -= 0.5f;
        v->display_dirty = 1;
        break;
    case '=':
        v->look.exposure += 0.5f;
        v->display_dirty = 1;
        break;
    case 't':
        v->look.tonemap = (caustic_tonemap)(((int)v->look.tonemap + 1) % 3);
        v->display_dirty = 1;
        break;
    case 'h':
        v->heatmap = !v->heatmap;
        v->display_dirty = 1;
        break;
    case 'n': toggle_denoise(v); break;
    case 'o':
        v->readout_on = !v->readout_on;
        v->display_dirty = 1;
        v->last_title = 0.0; /* the overlay changes at the next frame */
        break;
    case 'i': next_integrator(v); break;
    case 'p': save_image(v); break;
    case 'c': write_camera(v); break;
    case 'r':
        v->cam = v->home;
        changed(v);
        break;
    default: break;
    }
}

static void resize(viewer *v, int w, int h) {
    if (w < 1 || h < 1 || (w == v->width && h == v->height)) return;
    char err[512];
    int ow = v->width, oh = v->height;
    v->width = w;
    v->height = h;
    if (ensure_buffers(v, err, sizeof err) || caustic_renderer_set_resolution(v->r, w, h, err, sizeof err)) {
        say(v, "view: resize: %s", err);
        v->width = ow;
        v->height = oh;
        /* a failed restart leaves no backend: start one at the old size */
        if (start_renderer(v, err, sizeof err)) {
            say(v, "view: %s", err);
            v->quit = 1;
        }
        return;
    }
    v->sec_per_spp = 0.0;
    v->last_pass = 0;
    v->denoised_spp = 0;
    v->last_change = cli_now();
}

static void handle(viewer *v, const view_event *e) {
    switch (e->type) {
    case VIEW_EV_QUIT: v->quit = 1; break;
    case VIEW_EV_KEY_DOWN:
        if (e->key > 0 && e->key < 128) v->held[e->key] = 1;
        key_pressed(v, e->key);
        break;
    case VIEW_EV_KEY_UP:
        if (e->key > 0 && e->key < 128) v->held[e->key] = 0;
        break;
    case VIEW_EV_BUTTON_DOWN:
        v->button = e->button;
        v->press_x = v->last_x = e->x;
        v->press_y = v->last_y = e->y;
        v->dragged = 0;
        break;
    case VIEW_EV_BUTTON_UP:
        if (v->button == 1 && !v->dragged) focus_at(v, e->x, e->y);
        v->button = 0;
        break;
    case VIEW_EV_MOTION:
        if (v->button) {
            int dx = e->x - v->last_x, dy = e->y - v->last_y;
            if (abs(e->x - v->press_x) + abs(e->y - v->press_y) > 2) v->dragged = 1;
            if (v->dragged && (dx || dy)) {
                if (v->button == 1)
                    orbit(v, dx, dy);
                else
                    pan(v, dx, dy);
            }
        }
        v->last_x = e->x;
        v->last_y = e->y;
        break;
    case VIEW_EV_WHEEL: zoom(v, e->dy); break;
    case VIEW_EV_RESIZE: resize(v, e->x, e->y); break;
    default: break;
    }
}

/* The script's events for this frame; 1 while it waits or has more to say. */
static void script_step(viewer *v, script *sc) {
    if (!sc || !sc->cmds) return;
    if (sc->wait_frames > 0) {
        sc->wait_frames--;
        return;
    }
    if (sc->wait_spp) {
        if (caustic_renderer_spp(v->r) < sc->wait_spp && caustic_renderer_spp(v->r) < v->opt.spp) return;
        sc->wait_spp = 0;
    }
    if (sc->hold_frames > 0) {
        if (--sc->hold_frames > 0) return;
        view_event e = {VIEW_EV_KEY_UP, sc->hold_key, 0, 0, 0, 0};
        handle(v, &e);
    }
    if (sc->drag_steps) {
        ++sc->drag_step;
        view_event e = {VIEW_EV_MOTION,
                        0,
                        0,
                        sc->drag_x0 + sc->drag_dx * sc->drag_step / sc->drag_steps,
                        sc->drag_y0 + sc->drag_dy * sc->drag_step / sc->drag_steps,
                        0};
        handle(v, &e);
        if (sc->drag_step < sc->drag_steps) return;
        e.type = VIEW_EV_BUTTON_UP;
        e.button = sc->drag_button;
        handle(v, &e);
        sc->drag_steps = 0;
    }
    while (sc->pos < sc->n && !v->quit) {
        const script_cmd *c = &sc->cmds[sc->pos++];
        view_event e;
        memset(&e, 0, sizeof e);
        switch (c->op) {
        case SC_FRAMES:
            sc->wait_frames = c->a;
            if (c->a) {
                sc->wait_frames--;
                return;
            }
            break;
        case SC_SPP: sc->wait_spp = c->a; return;
        case SC_KEY:
            e.type = VIEW_EV_KEY_DOWN;
            e.key = c->key;
            handle(v, &e);
            e.type = VIEW_EV_KEY_UP;
            handle(v, &e);
            break;
        case SC_HOLD:
            e.type = VIEW_EV_KEY_DOWN;
            e.key = c->key;
            handle(v, &e);
            sc->hold_key = c->key;
            sc->hold_frames = c->a;
            return;
        case SC_DRAG:
            sc->drag_x0 = v->width / 2;
            sc->drag_y0 = v->height / 2;
            sc->drag_dx = c->a;
            sc->drag_dy = c->b;
            sc->drag_steps = c->c;
            sc->drag_step = 0;
            sc->drag_button = c->button;
            e.type = VIEW_EV_BUTTON_DOWN;
            e.button = c->button;
            e.x = sc->drag_x0;
            e.y = sc->drag_y0;
            handle(v, &e);
            return;
        case SC_CLICK:
            e.type = VIEW_EV_BUTTON_DOWN;
            e.button = 1;
            e.x = c->a;
            e.y = c->b;
            handle(v, &e);
            e.type = VIEW_EV_BUTTON_UP;
            handle(v, &e);
            break;
        case SC_WHEEL:
            e.type = VIEW_EV_WHEEL;
            e.dy = c->a;
            handle(v, &e);
            break;
        case SC_RESIZE:
            if (v->win) v->wo->resize(v->win, c->a, c->b);
            resize(v, c->a, c->b);
            break;
        case SC_QUIT: v->quit = 1; return;
        }
    }
}

/* The frame shown: the heat map, the denoised image (refreshed when still and the spp doubled),
 * or the estimate through the look (on the GPU when rendering there). */
static int refresh_display(viewer *v, int rendered, int moving, char *err, size_t errlen) {
    size_t n = (size_t)v->width * (size_t)v->height;
    if (v->heatmap) {
        const uint32_t *count = caustic_sample_counts(v->r, NULL, NULL);
        uint32_t mx = 1;
        for (size_t i = 0; i < n; ++i) mx = count[i] > mx ? count[i] : mx;
        for (size_t i = 0; i < n; ++i)
            v->rgb8[3 * i] = v->rgb8[3 * i + 1] = v->rgb8[3 * i + 2] = (unsigned char)(255.0 * count[i] / mx + 0.5);
        return 0;
    }
    if (v->denoise && v->dn && !moving) {
        int spp = caustic_renderer_spp(v->r);
        if (v->denoised_spp == 0 || spp >= 2 * v->denoised_spp) {
            double t0 = cli_now();
            if (denoise_render(v->dn, v->r, 1, v->den, err, errlen)) return -1;
            v->denoise_seconds = cli_now() - t0;
            v->denoised_spp = spp;
            v->display_dirty = 1;
        }
        if (v->display_dirty) caustic_tonemap_rgb8(&v->look, v->den, n, v->rgb8);
        return 0;
    }
    if (!rendered && !v->display_dirty) return 0;
    if (!v->gpu_tonemap) {
        caustic_tonemap_rgb8(&v->look, caustic_image(v->r, NULL, NULL), n, v->rgb8);
        return 0;
    }
    return caustic_image_rgb8(v->r, &v->look, v->rgb8, err, errlen);
}

/* One frame: script events, held keys, the camera, passes for about `budget` seconds, the image
 * to show. 0, or -1 with err. */
static int frame(viewer *v, script *sc, double budget, char *err, size_t errlen) {
    double t0 = cli_now();
    script_step(v, sc);
    fly(v);
    int moving = v->cam_dirty || t0 - v->last_change < STILL_AFTER || v->button;
    if (v->cam_dirty) {
        if (caustic_renderer_set_camera(v->r, &v->cam, err, errlen)) {
            /* refused (e.g. a lens for a bidirectional integrator): back to the camera it has */
            say(v, "view: %s", err);
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
    if (refresh_display(v, added > 0, moving, err, errlen)) return -1;
    v->display_dirty = 0;
    if (added > 0) { /* (a converged view's frames only redraw: the figures stay those of the last pass) */
        v->frame_seconds = cli_now() - t0;
        v->rate = (double)added * v->width * v->height / v->frame_seconds;
    }
    return 0;
}

/* The figures in two parts joined by sep: "\n" for the overlay's two lines, " | " for the title
 * and the summary. */
static void readout(viewer *v, const char *sep, char *buf, size_t n) {
    caustic_render_stats_get(v->r, &v->st);
    char dn[64] = "";
    if (v->denoise) snprintf(dn, sizeof dn, " | denoised (%.0f ms)", v->denoise_seconds * 1e3);
    snprintf(buf, n, "%s %s | %d spp | %.1f Msamples/s | %.1f ms%sEV %+.1f %s%s%s", v->st.device,
             caustic_integrator_name(v->opt.integrator), v->st.spp, v->rate * 1e-6, v->frame_seconds * 1e3, sep,
             v->look.exposure, caustic_tonemap_name(v->look.tonemap), v->heatmap ? " | heat map" : "", dn);
}

/* The frame in the window, and every 0.25 s (and at the target spp, the last frame rendered) the
 * readout in the title and (when on) over the frame. 0, or -1 with err. */
static int show(viewer *v, char *err, size_t errlen) {
    double now = cli_now();
    if (now - v->last_title > 0.25 || caustic_renderer_spp(v->r) >= v->opt.spp) {
        char text[512], title[540];
        readout(v, "\n", text, sizeof text);
        if (v->wo->set_overlay(v->win, v->readout_on ? text : NULL, err, errlen)) return -1;
        readout(v, " | ", text, sizeof text);
        snprintf(title, sizeof title, "%s | %s", view_prog, text);
        v->wo->set_title(v->win, title);
        v->last_title = now;
    }
    return v->wo->present(v->win, v->rgb8, v->width, v->height, err, errlen);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n ? (n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2])) : 0.0;
}

#define BENCH_DENOISE_RUNS 7
#define BENCH_PRESENTS     200

/* --bench-denoise: the time to denoise the current frame as the viewer does (read back the image
 * and its guides, filter), median of BENCH_DENOISE_RUNS after one untimed call (the filter's
 * set-up, if the still frames did not already pay it). */
static int bench_denoise(viewer *v, double *med, char *err, size_t errlen) {
    double t[BENCH_DENOISE_RUNS];
    for (int i = -1; i < BENCH_DENOISE_RUNS; ++i) {
        double t0 = cli_now();
        if (denoise_render(v->dn, v->r, 1, v->den, err, errlen)) return -1;
        if (i >= 0) t[i] = cli_now() - t0;
    }
    *med = median(t, BENCH_DENOISE_RUNS);
    return 0;
}

/* --bench-window: BENCH_PRESENTS presents of the current frame (texture upload, copy, readout,
 * present), each timed: the median (seconds) and the presents per second. */
static int bench_presents(viewer *v, double *med, double *per_second, char *err, size_t errlen) {
    double t[BENCH_PRESENTS], t0 = cli_now();
    for (int i = 0; i < BENCH_PRESENTS; ++i) {
        double ti = cli_now();
        view_event e;
        while (v->wo->poll(v->win, &e)) {}
        if (show(v, err, errlen)) return -1;
        t[i] = cli_now() - ti;
    }
    *per_second = BENCH_PRESENTS / (cli_now() - t0);
    *med = median(t, BENCH_PRESENTS);
    return 0;
}

/* --bench: the loop (in a window with --bench-window: every frame shown), moving (an orbit of 1
 * degree per frame) then still at the starting camera, and caustic_render over a fresh renderer
 * on that camera for as long. */
static int bench(viewer *v, int frames, double seconds, char *err, size_t errlen) {
    double t0 = cli_now();
    long long spp_moving = 0;
    for (int f = 0; f < frames; ++f) {
        orbit(v, 3.49, 0.0); /* 0.005 rad per pixel of drag: ~1 degree */
        if (frame(v, NULL, MOVING_BUDGET, err, errlen) || (v->win && show(v, err, errlen))) return -1;
        spp_moving += caustic_renderer_spp(v->r); /* each frame starts a new image */
    }
    double moving_s = cli_now() - t0;
    /* still: back at the starting camera (the one caustic render sees without --camera), frames
     * keep coming with the still budget */
    v->cam = v->home;
    changed(v);
    if (frame(v, NULL, MOVING_BUDGET, err, errlen)) return -1;
    v->last_change = cli_now() - 1.0;
    int spp0 = caustic_renderer_spp(v->r), nframes = 0;
    double t1 = cli_now();
    while (cli_now() - t1 < seconds && caustic_renderer_spp(v->r) < v->opt.spp) {
        if (frame(v, NULL, STILL_BUDGET, err, errlen) || (v->win && show(v, err, errlen))) return -1;
        nframes++;
    }
    double still_s = cli_now() - t1;
    double px = (double)v->width * v->height;
    double view_rate = still_s > 0.0 ? (caustic_renderer_spp(v->r) - spp0) * px / still_s : 0.0;
    /* caustic render's loop on the same camera, options and device (time_limit 0 would be none) */
    if (seconds <= 0.0) seconds = 1e-3;
    caustic_options o = v->opt;
    o.width = v->width;
    o.height = v->height;
    o.time_limit = seconds;
    o.adaptive_depth = 0;
    caustic_renderer *r = caustic_renderer_create(v->scene, &o, err, errlen);
    if (!r) return -1;
    int rc = caustic_renderer_set_camera(r, &v->cam, err, errlen) || caustic_render(r, NULL, NULL, err, errlen);
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    caustic_renderer_free(r);
    if (rc) return -1;
    double render_rate = st.seconds > 0.0 ? (double)st.spp * px / st.seconds : 0.0;
    caustic_render_stats_get(v->r, &v->st);
    const char *sync = getenv("CAUSTIC_CUDA_SYNC_COPY");
    printf("view-bench: device=%s integrator=%s res=%dx%d gpu_tonemap=%d sync_copy=%d passes_sized=%d "
           "adaptive_depth=%d window=%d moving_frames=%d moving_fps=%.1f moving_spp_per_frame=%.2f "
           "still_frames=%d still_fps=%.1f still_Msamples/s=%.2f render_Msamples/s=%.2f still/render=%.3f",
           v->st.device, caustic_integrator_name(v->opt.integrator), v->width, v->height, v->gpu_tonemap,
           sync && *sync && strcmp(sync, "0"), !v->one_pass, v->adaptive_depth, v->win != NULL, frames,
           moving_s > 0.0 ? frames / moving_s : 0.0, frames ? (double)spp_moving / frames : 0.0, nframes,
           still_s > 0.0 ? nframes / still_s : 0.0, view_rate * 1e-6, render_rate * 1e-6,
           render_rate > 0.0 ? view_rate / render_rate : 0.0);
    if (v->denoise) {
        double med;
        if (bench_denoise(v, &med, err, errlen)) return -1;
        printf(" denoise_device=%s denoise_ms=%.1f", caustic_denoiser_device(v->dn), med * 1e3);
    }
    if (v->win) {
        double med, per_second;
        if (bench_presents(v, &med, &per_second, err, errlen)) return -1;
        printf(" present_ms=%.2f presents/s=%.1f sdl_renderer=%s", med * 1e3, per_second, v->wo->renderer(v->win));
    }
    printf("\n");
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
    if (script_path && script_load(&sc, script_path, err, sizeof err)) {
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
    if (start_renderer(&v, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", view_prog, err);
        goto out;
    }
    rc = EXIT_RUNTIME;
    if (bench_denoise_on) {
        toggle_denoise(&v);
        if (!v.denoise) {
            fprintf(stderr, "%s: --bench-denoise: no denoiser (see above)\n", view_prog);
            goto out;
        }
    }
    v.last_change = cli_now();
    if (run_bench) {
        /* an input script runs first (to set the view up), then the measurement */
        while (!v.quit && sc.cmds &&
               (sc.pos < sc.n || sc.wait_frames || sc.wait_spp || sc.drag_steps || sc.hold_frames))
            if (frame(&v, &sc, 0.0, err, sizeof err)) {
                fprintf(stderr, "%s: %s\n", view_prog, err);
                goto out;
            }
        if (bench(&v, bench_frames, bench_seconds, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        }
        rc = 0;
        goto out;
    }
    while (!v.quit) {
        view_event e;
        while (v.wo->poll(v.win, &e)) handle(&v, &e);
        if (v.quit) break;
        int at_target = caustic_renderer_spp(v.r) >= v.opt.spp && !v.cam_dirty && !v.display_dirty;
        int script_busy =
            sc.cmds && (sc.pos < sc.n || sc.wait_frames || sc.wait_spp || sc.drag_steps || sc.hold_frames);
        if (at_target && !script_busy && !v.held['w'] && !v.held['a'] && !v.held['s'] && !v.held['d'] && !v.held['q'] &&
            !v.held['e']) {
            /* converged: nothing to render, so wait for input rather than spin */
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        } else if (frame(&v, &sc, 0.0, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        } else if (show(&v, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", view_prog, err);
            goto out;
        }
    }
    rc = 0;
out:
    if (v.r && !v.quiet && !run_bench) {
        char line[512];
        readout(&v, " | ", line, sizeof line);
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
