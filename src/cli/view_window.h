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
/* What draws the window (SDL's renderer: "opengl", "software", ...), for the benchmark. */
const char *view_window_renderer(const view_window *w);
/* NULL when the window can draw the readout's text, else why not (built without SDL2_ttf, no
 * font): the viewer says so once and keeps the figures in the title. */
const char *view_window_text_missing(const view_window *w);
/* The text ('\n' between lines) drawn over the frame's top-left corner from the next present on;
 * NULL or "": none. A no-op where text cannot be drawn. 0, or -1 with err. */
int view_window_set_overlay(view_window *w, const char *text, char *err, size_t errlen);
/* Asks the window system for a new size (an input script's resize); a resize event follows. */
void view_window_resize(view_window *w, int width, int height);
void view_window_close(view_window *w);

#endif
