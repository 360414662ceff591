/* caustic view: the interactive viewer, one job per file: view.c the command (options, the
 * renderer, the frame loop over the steerable API), view_input.c input scripts, camera controls
 * and keys, view_readout.c the frame shown and the readout over it, view_bench.c the headless
 * benchmark (their shared state: view_internal.h); the window is behind view_window.h (SDL2 in
 * view_window_sdl.c, or view_window_none.c in builds without it). */
#ifndef CAUSTIC_CLI_VIEW_H
#define CAUSTIC_CLI_VIEW_H

#include <stddef.h>

/* One input event, from the window or from an --input-script line. */
typedef enum view_event_type {
    VIEW_EV_NONE = 0,
    VIEW_EV_KEY_DOWN, /* key: a lower-case letter or another printable ASCII character (the
                         unshifted key), or one of the VIEW_KEY_* below */
    VIEW_EV_KEY_UP,
    VIEW_EV_BUTTON_DOWN, /* button 1 left, 2 middle, 3 right; at x, y */
    VIEW_EV_BUTTON_UP,
    VIEW_EV_MOTION, /* the pointer moved to x, y */
    VIEW_EV_WHEEL,  /* dy notches (positive: away from the user, zoom in) */
    VIEW_EV_RESIZE, /* the window's drawable is now x by y pixels */
    VIEW_EV_QUIT
} view_event_type;

enum { VIEW_KEY_ESCAPE = 27, VIEW_KEY_F1 = 256, VIEW_KEY_OTHER = 0 };

typedef struct view_event {
    view_event_type type;
    int key;
    int button;
    int x, y;
    int dy;
} view_event;

/* What shows the frames and gives the input: the window (view_window.h) for caustic view, a web
 * page for caustic serve (src/serve/). `open` gets the ctx passed to view_main; the rest get what
 * open returned. text_missing: NULL when the readout can be drawn over the frame. message (may be
 * NULL): the viewer's messages (a key's effect, a refusal), which also go to stdout. */
typedef struct view_window_ops {
    void *(*open)(void *ctx, int width, int height, const char *title, char *err, size_t errlen);
    int (*poll)(void *w, view_event *ev);
    int (*present)(void *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen);
    void (*set_title)(void *w, const char *title);
    const char *(*renderer)(const void *w);
    const char *(*text_missing)(const void *w);
    int (*set_overlay)(void *w, const char *text, char *err, size_t errlen);
    void (*resize)(void *w, int width, int height);
    void (*close)(void *w);
    void (*message)(void *w, const char *text);
} view_window_ops;

int cmd_view(int argc, char **argv);
/* The viewer over the front end `wo` (prog names it in messages: "caustic view"); argv as caustic
 * view's after the command. The exit status. */
int view_main(const char *prog, int argc, char **argv, const view_window_ops *wo, void *wo_ctx);
/* caustic serve (src/serve/serve.c, or serve_none.c in builds without CivetWeb) */
int cmd_serve(int argc, char **argv);

#endif
