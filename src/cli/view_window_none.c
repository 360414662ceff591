/* Builds without SDL2: no window (caustic view --bench still runs). */
#include <stdio.h>

#include "view_window.h"

view_window *view_window_open(int width, int height, const char *title, char *err, size_t errlen) {
    (void)width;
    (void)height;
    (void)title;
    snprintf(err, errlen,
             "this caustic was built without SDL2 (Debian: libsdl2-dev), so it has no window; "
             "--bench runs the viewer's loop without one");
    return NULL;
}
int view_window_poll(view_window *w, view_event *ev) {
    (void)w;
    (void)ev;
    return 0;
}
int view_window_present(view_window *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen) {
    (void)w;
    (void)rgb8;
    (void)width;
    (void)height;
    (void)err;
    (void)errlen;
    return -1;
}
void view_window_set_title(view_window *w, const char *title) {
    (void)w;
    (void)title;
}
const char *view_window_renderer(const view_window *w) {
    (void)w;
    return "none";
}
const char *view_window_text_missing(const view_window *w) {
    (void)w;
    return "no window";
}
int view_window_set_overlay(view_window *w, const char *text, char *err, size_t errlen) {
    (void)w;
    (void)text;
    (void)err;
    (void)errlen;
    return 0;
}
void view_window_resize(view_window *w, int width, int height) {
    (void)w;
    (void)width;
    (void)height;
}
void view_window_close(view_window *w) { (void)w; }
