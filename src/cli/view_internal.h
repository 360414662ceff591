/* caustic view's parts, shared by its files (view.h says what each holds): the viewer's state, the
 * input script, and the functions one file calls in another. */
#ifndef CAUSTIC_CLI_VIEW_INTERNAL_H
#define CAUSTIC_CLI_VIEW_INTERNAL_H

#include <stddef.h>

#include "caustic.h"
#include "view.h"
#include "view_window.h"

#define MOVING_BUDGET (1.0 / 60.0) /* seconds of rendering per frame while the camera moves */
#define STILL_BUDGET  0.1          /* ... and when it is still: fewer frames, more samples */
#define STILL_AFTER   0.25         /* seconds without a change before the view counts as still */

/* ---- input scripts (view_input.c) ---------------------------------------------------------------- */
typedef enum {
    SC_FRAMES,
    SC_SPP,
    SC_SLEEP,
    SC_KEY,
    SC_HOLD,
    SC_DRAG,
    SC_CLICK,
    SC_WHEEL,
    SC_RESIZE,
    SC_QUIT
} script_op;
typedef struct script_cmd {
    script_op op;
    int key, button, a, b, c, line;
    double seconds; /* sleep */
} script_cmd;
typedef struct script {
    const char *path;
    script_cmd *cmds;
    int n, pos;
    int wait_frames, wait_spp;
    double wait_until;         /* sleep: frames go on until this time (cli_now), 0: none */
    int hold_key, hold_frames; /* a held key, released after hold_frames */
    int drag_step, drag_steps, drag_dx, drag_dy, drag_button, drag_x0, drag_y0;
} script;

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
    int help;         /* the key help drawn over the frame (? or F1) */
    int shown;        /* what the frame in rgb8 is: VIEW_SHOWN_* */
    char notice[192]; /* a one-line explanation shown until notice_until (cli_now); "": none */
    double notice_until;
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
    const view_window_ops *wo; /* the window, or what takes its place (caustic serve's page) */
    void *win;
    const char *prog; /* "caustic view" or "caustic serve", in messages and the title */
    /* readout */
    double frame_seconds, rate, last_title, denoise_seconds;
    caustic_render_stats st;
} viewer;

/* What the frame shown is, for an honest readout. */
enum { VIEW_SHOWN_ESTIMATE = 0, VIEW_SHOWN_HEATMAP, VIEW_SHOWN_DENOISED };
/* How long a notice stays over the frame. */
#define VIEW_NOTICE_SECONDS 6.0

/* view.c: the renderer and the frame loop */
void view_say(const viewer *v, const char *fmt, const char *a);
/* A one-line explanation: on stdout (as view_say) and over the frame for VIEW_NOTICE_SECONDS. */
void view_notice(viewer *v, const char *text);
/* 1 when the heat map shows something: adaptive sampling (path tracing's), else every pixel
 * takes the same samples and the map would be uniformly white. */
int view_heatmap_meaningful(const viewer *v);
/* The script has events left or is waiting (frames, spp, a sleep, a drag or a held key). */
int view_script_busy(const script *sc);
int view_ensure_buffers(viewer *v, char *err, size_t errlen);
int view_start_renderer(viewer *v, char *err, size_t errlen);
void view_next_integrator(viewer *v);
void view_save_image(viewer *v);
void view_write_camera(viewer *v);
void view_toggle_denoise(viewer *v);
void view_resize(viewer *v, int w, int h);
int view_frame(viewer *v, script *sc, double budget, char *err, size_t errlen);

/* view_input.c: input scripts, camera controls, keys */
int view_script_load(script *sc, const char *path, char *err, size_t errlen);
void view_script_step(viewer *v, script *sc);
void view_changed(viewer *v);
void view_orbit(viewer *v, double dx, double dy);
void view_fly(viewer *v);
void view_handle(viewer *v, const view_event *e);

/* view_readout.c: the frame shown and the figures over it */
int view_refresh_display(viewer *v, int rendered, int moving, char *err, size_t errlen);
void view_readout(viewer *v, const char *sep, char *buf, size_t n);
int view_show(viewer *v, char *err, size_t errlen);

/* view_bench.c: --bench */
int view_bench(viewer *v, int frames, double seconds, char *err, size_t errlen);

#endif
