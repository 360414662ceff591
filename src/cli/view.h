/* caustic view: the interactive viewer, one job per file: view.c the command (options, the
 * renderer, the frame loop over the steerable API), view_input.c input scripts, camera controls
 * and keys, view_readout.c the frame shown and the readout over it, view_bench.c the headless
 * benchmark (their shared state: view_internal.h); the window is behind view_window.h (SDL2 in
 * view_window_sdl.c, or view_window_none.c in builds without it). */
#ifndef CAUSTIC_CLI_VIEW_H
#define CAUSTIC_CLI_VIEW_H

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

int cmd_view(int argc, char **argv);

#endif
