/* The viewer's window through SDL2: a streaming RGB24 texture the size of the frame, drawn over
 * the whole window. SDL's events become view_events. */
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_window.h"

struct view_window {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *tex;
    int tex_w, tex_h;
};

static int set(const char *name) {
    const char *v = getenv(name);
    return v && *v;
}

view_window *view_window_open(int width, int height, const char *title, char *err, size_t errlen) {
    /* without a display SDL may still start a driver that draws nowhere (KMS, offscreen) and the
     * viewer would run unseen: refuse unless a display (or a driver, explicitly) is named */
    if (!set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("SDL_VIDEODRIVER")) {
        snprintf(err, errlen,
                 "no display to open a window on (DISPLAY and WAYLAND_DISPLAY are not set); "
                 "run the loop without a window with --bench");
        return NULL;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        snprintf(err, errlen,
                 "no display to open a window on (SDL: %s); set DISPLAY, or run the loop without a "
                 "window with --bench",
                 SDL_GetError());
        return NULL;
    }
    const char *driver = SDL_GetCurrentVideoDriver();
    if (!set("SDL_VIDEODRIVER") && (!driver || (strcmp(driver, "x11") && strcmp(driver, "wayland")))) {
        /* the display named could not be reached and SDL fell back to a driver that shows nothing */
        snprintf(err, errlen, "cannot connect to the display '%s'; run the loop without a window with --bench",
                 set("DISPLAY") ? getenv("DISPLAY") : getenv("WAYLAND_DISPLAY"));
        SDL_Quit();
        return NULL;
    }
    view_window *w = calloc(1, sizeof *w);
    if (!w) {
        SDL_Quit();
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->win =
        SDL_CreateWindow(title, SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, width, height, SDL_WINDOW_RESIZABLE);
    /* vsync off: the render loop sets the pace, not the display */
    if (w->win) w->ren = SDL_CreateRenderer(w->win, -1, 0);
    if (!w->ren && w->win) w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_SOFTWARE);
    if (!w->win || !w->ren) {
        snprintf(err, errlen, "cannot open a window: %s", SDL_GetError());
        view_window_close(w);
        return NULL;
    }
    return w;
}

static int key_of(SDL_Keycode k) {
    if (k == SDLK_ESCAPE) return VIEW_KEY_ESCAPE;
    if (k >= 32 && k < 127) return (int)k; /* SDL's keycodes for printable keys are their ASCII */
    return VIEW_KEY_OTHER;
}

int view_window_poll(view_window *w, view_event *ev) {
    (void)w;
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        ev->type = VIEW_EV_NONE;
        switch (e.type) {
        case SDL_QUIT: ev->type = VIEW_EV_QUIT; break;
        case SDL_KEYDOWN:
        case SDL_KEYUP:
            if (e.key.repeat) break;
            ev->type = e.type == SDL_KEYDOWN ? VIEW_EV_KEY_DOWN : VIEW_EV_KEY_UP;
            ev->key = key_of(e.key.keysym.sym);
            break;
        case SDL_MOUSEBUTTONDOWN:
        case SDL_MOUSEBUTTONUP:
            ev->type = e.type == SDL_MOUSEBUTTONDOWN ? VIEW_EV_BUTTON_DOWN : VIEW_EV_BUTTON_UP;
            ev->button = e.button.button == SDL_BUTTON_LEFT ? 1 : e.button.button == SDL_BUTTON_MIDDLE ? 2 : 3;
            ev->x = e.button.x;
            ev->y = e.button.y;
            break;
        case SDL_MOUSEMOTION:
            ev->type = VIEW_EV_MOTION;
            ev->x = e.motion.x;
            ev->y = e.motion.y;
            break;
        case SDL_MOUSEWHEEL:
            ev->type = VIEW_EV_WHEEL;
            ev->dy = e.wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e.wheel.y : e.wheel.y;
            break;
        case SDL_WINDOWEVENT:
            if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
                ev->type = VIEW_EV_RESIZE;
                ev->x = e.window.data1;
                ev->y = e.window.data2;
            }
            break;
        default: break;
        }
        if (ev->type != VIEW_EV_NONE) return 1;
    }
    return 0;
}

int view_window_present(view_window *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen) {
    if (!w->tex || w->tex_w != width || w->tex_h != height) {
        if (w->tex) SDL_DestroyTexture(w->tex);
        w->tex = SDL_CreateTexture(w->ren, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STREAMING, width, height);
        if (!w->tex) {
            snprintf(err, errlen, "SDL: %s", SDL_GetError());
            return -1;
        }
        w->tex_w = width;
        w->tex_h = height;
    }
    if (SDL_UpdateTexture(w->tex, NULL, rgb8, width * 3) || SDL_RenderClear(w->ren) ||
        SDL_RenderCopy(w->ren, w->tex, NULL, NULL)) {
        snprintf(err, errlen, "SDL: %s", SDL_GetError());
        return -1;
    }
    SDL_RenderPresent(w->ren);
    return 0;
}

void view_window_set_title(view_window *w, const char *title) { SDL_SetWindowTitle(w->win, title); }

void view_window_resize(view_window *w, int width, int height) { SDL_SetWindowSize(w->win, width, height); }

void view_window_close(view_window *w) {
    if (!w) return;
    if (w->tex) SDL_DestroyTexture(w->tex);
    if (w->ren) SDL_DestroyRenderer(w->ren);
    if (w->win) SDL_DestroyWindow(w->win);
    free(w);
    SDL_Quit();
}
