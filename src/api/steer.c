/* libcaustic: steering a renderer: its camera (public <-> internal), resolution and depth picking. */
#include "caustic.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "api/renderer.h"
#include "api/backend.h"
#include "api/checkpoint.h"
#include "api/film_host.h"
#include "cpu/isa.h"
#include "cpu/render_cpu.h"
#include "cuda/render_cuda.h"
#include "image/image.h"
#include "image/tonemap.h"
#include "kernel/adaptive_depth.h"
#include "kernel/camera.h"
#include "kernel/sampler.h"
#include "kernel/vcm.h"
#include "scene/scene.h"
#include "util/file.h"
#include "util/log.h"
#include "util/timer.h"

static void vec_of(vec3 *v, const double a[3]) { *v = v3((float)a[0], (float)a[1], (float)a[2]); }
static void array_of(double a[3], vec3 v) {
    a[0] = v.x;
    a[1] = v.y;
    a[2] = v.z;
}

void api_camera_public(const camera_desc *d, caustic_camera *c) {
    array_of(c->eye, d->eye);
    array_of(c->lookat, d->lookat);
    array_of(c->up, d->up);
    c->fov_y = d->fovy_deg;
    c->lens_radius = d->aperture_radius;
    c->focus_distance = d->focus_distance;
}

void api_camera_internal(const caustic_camera *c, camera_desc *d) {
    vec_of(&d->eye, c->eye);
    vec_of(&d->lookat, c->lookat);
    vec_of(&d->up, c->up);
    d->fovy_deg = (float)c->fov_y;
    d->aperture_radius = (float)c->lens_radius;
    d->focus_distance = (float)c->focus_distance;
}

void caustic_renderer_get_camera(const caustic_renderer *r, caustic_camera *c) { api_camera_public(&r->camera, c); }

/* A renderer with a crop window (caustic_options.crop) keeps its camera and resolution. */
static int cropped(const caustic_renderer *r, char *err, size_t errlen) {
    const int *cr = r->opt.crop;
    if (!(cr[0] || cr[1] || cr[2] || cr[3])) return 0;
    snprintf(err, errlen, "a renderer with a crop window keeps its camera and resolution");
    return 1;
}

int caustic_renderer_set_camera(caustic_renderer *r, const caustic_camera *c, char *err, size_t errlen) {
    if (cropped(r, err, errlen)) return -1;
    camera_desc d = r->camera;
    api_camera_internal(c, &d);
    camera cam;
    if (camera_from_desc(&d, r->width, r->height, &cam, err, errlen)) return -1;
    backend_desc bd;
    api_desc_of(r, &cam, &bd);
    if (r->ops->supports(&bd, err, errlen) <= 0) return -1; /* e.g. a lens for VCM */
    r->camera = d;
    r->pass.cam = cam;
    return caustic_renderer_reset(r, err, errlen);
}

int caustic_renderer_set_resolution(caustic_renderer *r, int width, int height, char *err, size_t errlen) {
    if (cropped(r, err, errlen)) return -1;
    if (width <= 0 || height <= 0 || width > 16384 || height > 16384 || (int64_t)width * height > (1 << 26)) {
        snprintf(err, errlen, "resolution %dx%d is out of range (1..16384 per side, at most 2^26 pixels)", width,
                 height);
        return -1;
    }
    if (width == r->width && height == r->height) return caustic_renderer_reset(r, err, errlen);
    camera cam;
    if (camera_from_desc(&r->camera, width, height, &cam, err, errlen)) return -1;
    api_free_film(r);
    r->width = width;
    r->height = height;
    r->pass.cam = cam;
    /* on failure the renderer has no backend: only caustic_renderer_free may follow */
    return api_start_film(r, err, errlen);
}

int caustic_renderer_pick_depth(caustic_renderer *r, int x, int y, double *depth) {
    camera cam = r->pass.cam;
    if (x < 0 || y < 0 || x >= cam.width || y >= cam.height) return -1;
    cam.lens_radius = 0.0f; /* the ray through the lens centre */
    ray ray_ = camera_ray(&cam, x, y, v2(0.5f, 0.5f), v2(0.5f, 0.5f));
    hit h;
    surface sf;
    if (!cpu_kernels_get()->closest_surface(&r->scene->s->k, ray_, &h, &sf)) return -1;
    *depth = h.t * vdot(ray_.d, cam.forward);
    return 0;
}

/* The next pass's samples where passes are cut by count: as many as the film holds (doubling:
 * few passes), at least PASS_FIRST_PIXEL_SAMPLES pixel samples and at most PASS_PIXEL_SAMPLES. A
 * function of the image size and the samples done only, so a resumed render cuts as any run from
 * there. */
