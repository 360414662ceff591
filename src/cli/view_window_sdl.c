/* The viewer's window through SDL2: a streaming RGB24 texture the size of the frame, drawn over
 * the whole window, and the readout's text over its top-left corner (SDL2_ttf, where built with
 * it). SDL's events become view_events. */
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CAUSTIC_HAVE_SDL2_TTF
#include <SDL_ttf.h>

#include "view_font.h"
#endif
#include "view_window.h"

#define OVERLAY_POINTS 13 /* the readout's font size */
#define OVERLAY_MARGIN 4  /* pixels between the window's corner, the box and the text */

struct view_window {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *tex;
    int tex_w, tex_h;
    char text_missing[1600]; /* why there is no readout ("" when there is one) */
#ifdef CAUSTIC_HAVE_SDL2_TTF
    TTF_Font *font;
    SDL_Texture *overlay; /* the readout's text, rendered when it changes; NULL: none shown */
    int overlay_w, overlay_h;
    char overlay_text[2048];
#endif
};

/* The readout's font: SDL2_ttf and a monospace TrueType font, or the reason in text_missing. */
static void open_font(view_window *w) {
#ifdef CAUSTIC_HAVE_SDL2_TTF
    char path[1024], why[512];
    if (view_font_find(path, sizeof path, why, sizeof why)) {
        snprintf(w->text_missing, sizeof w->text_missing, "%s", why);
        return;
    }
    if (TTF_Init() != 0) {
        snprintf(w->text_missing, sizeof w->text_missing, "SDL2_ttf: %s", TTF_GetError());
        return;
    }
    w->font = TTF_OpenFont(path, OVERLAY_POINTS);
    if (!w->font) {
        snprintf(w->text_missing, sizeof w->text_missing, "%s: %s", path, TTF_GetError());
        TTF_Quit();
    }
#else
    snprintf(w->text_missing, sizeof w->text_missing,
             "this caustic was built without SDL2_ttf (Debian: libsdl2-ttf-dev)");
#endif
}

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
    open_font(w);
    return w;
}

const char *view_window_renderer(const view_window *w) {
    SDL_RendererInfo info;
    return SDL_GetRendererInfo(w->ren, &info) == 0 && info.name ? info.name : "?";
}

const char *view_window_text_missing(const view_window *w) { return w->text_missing[0] ? w->text_missing : NULL; }

int view_window_set_overlay(view_window *w, const char *text, char *err, size_t errlen) {
#ifdef CAUSTIC_HAVE_SDL2_TTF
    if (!w->font || (text && w->overlay && !strcmp(text, w->overlay_text))) return 0;
    if (w->overlay) SDL_DestroyTexture(w->overlay);
    w->overlay = NULL;
    if (!text || !*text) return 0;
    SDL_Color white = {255, 255, 255, 255};
    SDL_Surface *s = TTF_RenderUTF8_Blended_Wrapped(w->font, text, white, 0); /* lines at '\n' */
    if (s) {
        w->overlay = SDL_CreateTextureFromSurface(w->ren, s);
        w->overlay_w = s->w;
        w->overlay_h = s->h;
        SDL_FreeSurface(s);
    }
    if (!w->overlay) {
        snprintf(err, errlen, "SDL2_ttf: %s", s ? SDL_GetError() : TTF_GetError());
        return -1;
    }
    snprintf(w->overlay_text, sizeof w->overlay_text, "%s", text);
#else
    (void)w;
    (void)text;
    (void)err;
    (void)errlen;
#endif
    return 0;
}

/* The readout over a translucent dark box in the top-left corner (window pixels, not scaled with
 * the frame). */
static int draw_overlay(view_window *w) {
#ifdef CAUSTIC_HAVE_SDL2_TTF
    if (!w->overlay) return 0;
    SDL_Rect box = {OVERLAY_MARGIN, OVERLAY_MARGIN, w->overlay_w + 2 * OVERLAY_MARGIN,
                    w->overlay_h + 2 * OVERLAY_MARGIN};
    SDL_Rect text = {2 * OVERLAY_MARGIN, 2 * OVERLAY_MARGIN, w->overlay_w, w->overlay_h};
    if (SDL_SetRenderDrawBlendMode(w->ren, SDL_BLENDMODE_BLEND) || SDL_SetRenderDrawColor(w->ren, 0, 0, 0, 160) ||
        SDL_RenderFillRect(w->ren, &box) || SDL_SetRenderDrawColor(w->ren, 0, 0, 0, 255) ||
        SDL_RenderCopy(w->ren, w->overlay, NULL, &text))
        return -1;
#else
    (void)w;
#endif
    return 0;
}

static int key_of(SDL_Keycode k) {
    if (k == SDLK_ESCAPE) return VIEW_KEY_ESCAPE;
    if (k == SDLK_F1) return VIEW_KEY_F1;
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
        SDL_RenderCopy(w->ren, w->tex, NULL, NULL) || draw_overlay(w)) {
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
#ifdef CAUSTIC_HAVE_SDL2_TTF
    if (w->overlay) SDL_DestroyTexture(w->overlay);
    if (w->font) {
        TTF_CloseFont(w->font);
        TTF_Quit();
    }
#endif
    if (w->tex) SDL_DestroyTexture(w->tex);
    if (w->ren) SDL_DestroyRenderer(w->ren);
    if (w->win) SDL_DestroyWindow(w->win);
    free(w);
    SDL_Quit();
}
