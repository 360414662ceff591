/* The viewer's window: opens, shows 8-bit RGB frames, turns window-system input into view_events.
 * One implementation per build: SDL2 (view_window_sdl.c) or none (view_window_none.c). */
#ifndef CAUSTIC_CLI_VIEW_WINDOW_H
#define CAUSTIC_CLI_VIEW_WINDOW_H

#include <stddef.h>

#include "view.h"

typedef struct view_window view_window;

/* NULL with the reason in err (no display, built without SDL2). */
view_window *view_window_open(int width, int height, const char *title, char *err, size_t errlen);
/* The next pending event (1), or 0 when there is none. */
int view_window_poll(view_window *w, view_event *ev);
/* Shows a width x height frame of 3 bytes per pixel, scaled to the window. 0, or -1 with err. */
int view_window_present(view_window *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen);
void view_window_set_title(view_window *w, const char *title);
/* Asks the window system for a new size (an input script's resize); a resize event follows. */
void view_window_resize(view_window *w, int width, int height);
void view_window_close(view_window *w);

#endif
