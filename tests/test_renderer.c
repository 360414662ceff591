/* The renderer over a shared scene: the scene is prepared once at load (one BVH build per layout,
 * counted), several renderers with different cameras and resolutions render from one scene
 * without disturbing each other, and the backend table picks a backend whose limits fit. */
#include "caustic.h"

#include <string.h>

#include "accel/bvh.h"
#include "api/api_internal.h"
#include "api/backend.h"
#include "cuda/render_cuda.h"
#include "testing.h"

static caustic_renderer *make(caustic_scene *cs, int w, int h, int spp, caustic_device dev) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = w;
    o.height = h;
    o.spp = spp;
    o.seed = 5;
    o.threads = 2;
    o.device = dev;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer %dx%d: %s", w, h, err);
    return r;
}

/* Bitwise equality of two renderers' images. */
static int same_image(caustic_renderer *a, caustic_renderer *b) {
    int wa, ha, wb, hb;
    const float *ia = caustic_image(a, &wa, &ha), *ib = caustic_image(b, &wb, &hb);
    return wa == wb && ha == hb && memcmp(ia, ib, (size_t)wa * (size_t)ha * 3 * sizeof(float)) == 0;
}

static double image_sum(caustic_renderer *r) {
    int w, h;
    const float *im = caustic_image(r, &w, &h);
    double s = 0;
    for (int i = 0; i < w * h * 3; ++i) s += im[i];
    return s;
}

/* One scene file, one load: the CPU's BVH is built once, however many renderers use it; a GPU
 * renderer adds its own tree once (when there is a GPU). */
static void builds_once(void) {
    char err[512];
    caustic_scene *cs;
    size_t b0 = bvh_build_count();
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    CHECK(bvh_build_count() - b0 == 1, "loading built %zu BVHs, not 1", bvh_build_count() - b0);
    caustic_renderer *a = make(cs, 16, 16, 2, CAUSTIC_DEVICE_CPU), *b = make(cs, 24, 8, 2, CAUSTIC_DEVICE_CPU);
    if (a && b) {
        CHECK(caustic_render(a, NULL, NULL, NULL, 0) == 0 && caustic_render(b, NULL, NULL, NULL, 0) == 0, "render");
        CHECK(bvh_build_count() - b0 == 1, "two CPU renderers: %zu BVH builds, not 1", bvh_build_count() - b0);
    }
    if (cuda_device_count() > 0) {
        caustic_renderer *g1 = make(cs, 16, 16, 2, CAUSTIC_DEVICE_CUDA), *g2 = make(cs, 8, 8, 2, CAUSTIC_DEVICE_CUDA);
        CHECK(bvh_build_count() - b0 == 2, "two GPU renderers: %zu BVH builds in all, not 2 (CPU's + GPU's)",
              bvh_build_count() - b0);
        caustic_renderer_free(g1);
        caustic_renderer_free(g2);
    }
    caustic_renderer_free(a);
    caustic_renderer_free(b);
    caustic_scene_free(cs);
}

/* The image of a renderer made alone over a freshly loaded scene (the eye moved by `dz`). */
static caustic_renderer *alone(caustic_scene **cs, int w, int h, float dz, int spp) {
    char err[512];
    CHECK(caustic_scene_load(cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    api_scene_internal(*cs)->camera.eye.z += dz;
    caustic_renderer *r = make(*cs, w, h, spp, CAUSTIC_DEVICE_CPU);
    if (r) caustic_render(r, NULL, NULL, NULL, 0);
    return r;
}

/* Two renderers over one scene with different cameras (eye and resolution), rendering in
 * turns, give the images each gives alone. */
static void two_cameras(void) {
    char err[512];
    caustic_scene *cs, *ca, *cb;
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    scene *s = api_scene_internal(cs);
    caustic_renderer *a = make(cs, 32, 32, 8, CAUSTIC_DEVICE_CPU);
    s->camera.eye.z += 3.0f; /* the second renderer's camera: further back (a = the file's) */
    caustic_renderer *b = make(cs, 48, 24, 8, CAUSTIC_DEVICE_CPU);
    caustic_renderer *ra = alone(&ca, 32, 32, 0.0f, 8), *rb = alone(&cb, 48, 24, 3.0f, 8);
    if (a && b && ra && rb) {
        /* b renders before a's first pass: it must not change a's camera */
        CHECK(caustic_render(b, NULL, NULL, NULL, 0) == 0 && caustic_render(a, NULL, NULL, NULL, 0) == 0, "render");
        CHECK(same_image(a, ra), "the first camera's image changed when a second renderer shared the scene");
        CHECK(same_image(b, rb), "the second camera's image differs from its own render");
        CHECK(image_sum(a) > 0.0 && image_sum(b) > 0.0, "a black image");
        /* and the cameras differ: the images are not the same picture */
        caustic_renderer *b_as_a = make(ca, 48, 24, 8, CAUSTIC_DEVICE_CPU);
        if (b_as_a) {
            caustic_render(b_as_a, NULL, NULL, NULL, 0);
            CHECK(!same_image(b, b_as_a), "moving the eye changed nothing: the test could not fail");
            caustic_renderer_free(b_as_a);
        }
    }
    caustic_renderer_free(a);
    caustic_renderer_free(b);
    caustic_renderer_free(ra);
    caustic_renderer_free(rb);
    caustic_scene_free(cs);
    caustic_scene_free(ca);
    caustic_scene_free(cb);
}

/* Every backend states its limits: the bidirectional ones refuse depth of field (on any device),
 * path tracing takes it. */
static void limits(void) {
    char err[512];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    api_scene_internal(cs)->camera.aperture_radius = 0.1f;
    caustic_options o;
    caustic_options_init(&o);
    o.width = o.height = 8;
    o.spp = 1;
    o.integrator = CAUSTIC_INTEGRATOR_VCM;
    for (int dev = CAUSTIC_DEVICE_AUTO; dev <= CAUSTIC_DEVICE_CUDA; ++dev) {
        o.device = (caustic_device)dev;
        err[0] = 0;
        caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
        CHECK(r == NULL && strstr(err, "pinhole"), "vcm with an aperture on device %d: '%s'", dev, err);
        caustic_renderer_free(r);
    }
    o.integrator = CAUSTIC_INTEGRATOR_PT;
    o.device = CAUSTIC_DEVICE_CPU;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "pt with an aperture: %s", err);
    caustic_renderer_free(r);
    /* every entry of the table is complete (a layer over the others, the distributed one, has no
     * device of its own and serves on the ranks that do not coordinate) */
    int n = 0;
    for (int i = 0; backend_table[i]; ++i) {
        const backend_ops *b = backend_table[i];
        CHECK(b->name && (b->device || b->serve) && b->supports && b->create && b->pass && b->read_film &&
                  b->write_film && b->threads && b->free,
              "backend %d (%s) lacks an operation", i, b->name ? b->name : "?");
        n += b->device != NULL;
    }
    CHECK(n == 5, "%d device backends, expected cpu/cuda x pt/bidir and several GPUs", n);
    /* --device's lists: malformed ones refused; several GPUs where there are none: the reason */
    CHECK(caustic_options_set_device(&o, "cuda:1,x") != 0 && caustic_options_set_device(&o, "cuda:") != 0 &&
              caustic_options_set_device(&o, "cuda:-1") != 0,
          "malformed device lists are refused");
    CHECK(caustic_options_set_device(&o, "cuda:0,2,0") == 0 && o.device == CAUSTIC_DEVICE_CUDA && o.ngpus == 3 &&
              o.gpus[1] == 2 && o.gpus[2] == 0,
          "cuda:0,2,0 is three devices");
    CHECK(caustic_options_set_device(&o, "cpu") == 0 && o.device == CAUSTIC_DEVICE_CPU && o.ngpus == 0, "cpu");
    caustic_scene_free(cs);
}

int main(void) {
    builds_once();
    two_cameras();
    limits();
    return test_result("test_renderer");
}
