/* caustic view's input: --input-script files (read, then replayed a frame at a time as the same
 * view_events the window gives), the camera controls (orbit, pan, zoom, fly, focus) and what each
 * key does. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "view_internal.h"
#include "view_window.h"

static int key_named(const char *s, int *key) {
    if (!strcmp(s, "escape") || !strcmp(s, "esc")) {
        *key = VIEW_KEY_ESCAPE;
        return 0;
    }
    if (!strcmp(s, "space")) {
        *key = ' ';
        return 0;
    }
    if (!strcmp(s, "f1")) {
        *key = VIEW_KEY_F1;
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
int view_script_load(script *sc, const char *path, char *err, size_t errlen) {
    memset(sc, 0, sizeof *sc);
    sc->path = path;
    /* a FIFO or a device would block or never end: a regular file only (O_NONBLOCK: opening a
     * FIFO without a writer returns at once, to be refused) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = fd < 0 || fstat(fd, &st) != 0 ? strerror(errno)
                      : !S_ISREG(st.st_mode)        ? "not a regular file"
                                                    : NULL;
    int fl = why ? -1 : fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot read the input script: %s", path, why ? why : strerror(errno));
        if (fd >= 0) close(fd);
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
        } else if (!strcmp(w[0], "sleep") && n == 2) {
            c.op = SC_SLEEP;
            ok = !parse_double(w[1], 0.0, 60.0, &c.seconds);
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
                     "%s:%d: expected one of: frames N, spp N, sleep S, key K, hold K N, drag left|middle|right "
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

void view_changed(viewer *v) {
    v->cam_dirty = 1;
    v->last_change = cli_now();
}

/* Left drag: the eye turns about the look-at point, dx about the up axis, dy about the right one
 * (stopping short of the poles). */
void view_orbit(viewer *v, double dx, double dy) {
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
    view_changed(v);
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
    view_changed(v);
}

static void zoom(viewer *v, int notches) {
    caustic_camera *c = &v->cam;
    double k = pow(0.9, notches);
    if (dist3(c->eye, c->lookat) * k < 1e-4) return;
    for (int i = 0; i < 3; ++i) c->eye[i] = c->lookat[i] + (c->eye[i] - c->lookat[i]) * k;
    view_changed(v);
}

/* WASD/QE while held: a step per frame of 2 % of the distance to the look-at point. */
void view_fly(viewer *v) {
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
    view_changed(v);
}

static void focus_at(viewer *v, int x, int y) {
    double depth;
    if (caustic_renderer_pick_depth(v->r, x, y, &depth)) {
        view_say(v, "view: %s", "nothing to focus on there");
        return;
    }
    v->cam.focus_distance = depth;
    char msg[64];
    snprintf(msg, sizeof msg, "%.4g", depth);
    view_say(v, "view: focus distance %s", msg);
    view_changed(v);
}

static void key_pressed(viewer *v, int key) {
    caustic_camera *c = &v->cam;
    double d = dist3(c->eye, c->lookat);
    switch (key) {
    case VIEW_KEY_ESCAPE: v->quit = 1; break;
    case '[':
        c->fov_y = fmax(5.0, c->fov_y / 1.1);
        view_changed(v);
        break;
    case ']':
        c->fov_y = fmin(150.0, c->fov_y * 1.1);
        view_changed(v);
        break;
    case ',':
        c->lens_radius = c->lens_radius / 1.5 < 0.002 * d ? 0.0 : c->lens_radius / 1.5;
        view_changed(v);
        break;
    case '.':
        if (v->opt.integrator != CAUSTIC_INTEGRATOR_PT) {
            view_say(v, "view: %s", "a lens needs the pt integrator");
            break;
        }
        c->lens_radius = c->lens_radius > 0.0 ? c->lens_radius * 1.5 : 0.005 * d;
        view_changed(v);
        break;
    case ';':
        c->focus_distance = (c->focus_distance > 0.0 ? c->focus_distance : d) / 1.1;
        view_changed(v);
        break;
    case '\'':
        c->focus_distance = (c->focus_distance > 0.0 ? c->focus_distance : d) * 1.1;
        view_changed(v);
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
        if (!v->heatmap && !view_heatmap_meaningful(v)) {
            /* every pixel has the same samples: the map would be a white screen */
            view_notice(v, v->opt.integrator == CAUSTIC_INTEGRATOR_PT
                               ? "no heat map: it shows where --adaptive E put samples, and without it every pixel "
                                 "takes the same number"
                               : "no heat map: it shows where --adaptive put samples, and only path tracing samples "
                                 "adaptively");
            break;
        }
        v->heatmap = !v->heatmap;
        v->display_dirty = 1;
        break;
    case '?':
    case '/': /* the key '?' is on (shift: the window reports the unshifted key) */
    case VIEW_KEY_F1:
        v->help = !v->help;
        v->display_dirty = 1;
        v->last_title = 0.0; /* the overlay changes at the next frame */
        view_say(v, "view: %s", v->help ? "key help on (? or F1 hides it)" : "key help off");
        break;
    case 'n': view_toggle_denoise(v); break;
    case 'o':
        v->readout_on = !v->readout_on;
        v->display_dirty = 1;
        v->last_title = 0.0; /* the overlay changes at the next frame */
        break;
    case 'i': view_next_integrator(v); break;
    case 'p': view_save_image(v); break;
    case 'c': view_write_camera(v); break;
    case 'r':
        v->cam = v->home;
        view_changed(v);
        break;
    default: break;
    }
}

void view_handle(viewer *v, const view_event *e) {
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
                    view_orbit(v, dx, dy);
                else
                    pan(v, dx, dy);
            }
        }
        v->last_x = e->x;
        v->last_y = e->y;
        break;
    case VIEW_EV_WHEEL: zoom(v, e->dy); break;
    case VIEW_EV_RESIZE: view_resize(v, e->x, e->y); break;
    default: break;
    }
}

/* The script's events for this frame; 1 while it waits or has more to say. */
void view_script_step(viewer *v, script *sc) {
    if (!sc || !sc->cmds) return;
    if (sc->wait_frames > 0) {
        sc->wait_frames--;
        return;
    }
    if (sc->wait_until > 0.0) {
        if (cli_now() < sc->wait_until) return;
        sc->wait_until = 0.0;
    }
    if (sc->wait_spp) {
        if (caustic_renderer_spp(v->r) < sc->wait_spp && caustic_renderer_spp(v->r) < v->opt.spp) return;
        sc->wait_spp = 0;
    }
    if (sc->hold_frames > 0) {
        if (--sc->hold_frames > 0) return;
        view_event e = {VIEW_EV_KEY_UP, sc->hold_key, 0, 0, 0, 0};
        view_handle(v, &e);
    }
    if (sc->drag_steps) {
        ++sc->drag_step;
        view_event e = {VIEW_EV_MOTION,
                        0,
                        0,
                        sc->drag_x0 + sc->drag_dx * sc->drag_step / sc->drag_steps,
                        sc->drag_y0 + sc->drag_dy * sc->drag_step / sc->drag_steps,
                        0};
        view_handle(v, &e);
        if (sc->drag_step < sc->drag_steps) return;
        e.type = VIEW_EV_BUTTON_UP;
        e.button = sc->drag_button;
        view_handle(v, &e);
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
        case SC_SLEEP: sc->wait_until = cli_now() + c->seconds; return;
        case SC_KEY:
            e.type = VIEW_EV_KEY_DOWN;
            e.key = c->key;
            view_handle(v, &e);
            e.type = VIEW_EV_KEY_UP;
            view_handle(v, &e);
            break;
        case SC_HOLD:
            e.type = VIEW_EV_KEY_DOWN;
            e.key = c->key;
            view_handle(v, &e);
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
            view_handle(v, &e);
            return;
        case SC_CLICK:
            e.type = VIEW_EV_BUTTON_DOWN;
            e.button = 1;
            e.x = c->a;
            e.y = c->b;
            view_handle(v, &e);
            e.type = VIEW_EV_BUTTON_UP;
            view_handle(v, &e);
            break;
        case SC_WHEEL:
            e.type = VIEW_EV_WHEEL;
            e.dy = c->a;
            view_handle(v, &e);
            break;
        case SC_RESIZE:
            if (v->win) v->wo->resize(v->win, c->a, c->b);
            view_resize(v, c->a, c->b);
            break;
        case SC_QUIT: v->quit = 1; return;
        }
    }
}
