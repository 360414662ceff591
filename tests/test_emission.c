/* Two-sided emission, the CIS 5650 convention (issue 16): a diffuse sphere of albedo 0.5 inside a
 * closed box whose faces emit radiance 1 must read 0.5 (the faces' normals point out of the box,
 * so one-sided emission would leave the box dark inside). Every integrator that handles area
 * lights, each to 1 %; and a material with "TWO_SIDED": false leaves the sphere black, so the
 * test can fail. The scene is read from course-format JSON, as a user's file would be.
 * Seen from outside, a closed emitting box must light a floor the same whether its material is
 * two-sided or not: the backs of its faces look inwards (shadow rays to them once ended 0.1 % short
 * of the light and slipped past the near face at the box's edges: +0.16 %).
 *
 * Usage: test_emission [cpu|cuda]   (cuda: the GPU backends; exits 77 without a CUDA device) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "import/import.h"
#include "cuda_skip.h"
#include "image_checks.h"
#include "testing.h"

#define W 32
#define H 32

/* A box of side 4 around a sphere of radius 1 (13 % of the box's light reaches the sphere); the
 * camera sits between the sphere and a wall, with a view narrow enough that the sphere fills every
 * pixel. */
static const char *scene_json(int two_sided) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"Materials\": {"
             "  \"light\": {\"TYPE\": \"Emitting\", \"RGB\": [1, 1, 1], \"EMITTANCE\": 1%s},"
             "  \"ball\": {\"TYPE\": \"Diffuse\", \"RGB\": [0.5, 0.5, 0.5]}},"
             " \"Camera\": {\"RES\": [%d, %d], \"FOVY\": 22, \"ITERATIONS\": 16, \"DEPTH\": 16,"
             "  \"EYE\": [0, 0, 1.8], \"LOOKAT\": [0, 0, 0], \"UP\": [0, 1, 0]},"
             " \"Objects\": ["
             "  {\"TYPE\": \"cube\", \"MATERIAL\": \"light\", \"SCALE\": [4, 4, 4]},"
             "  {\"TYPE\": \"sphere\", \"MATERIAL\": \"ball\", \"SCALE\": [2, 2, 2]}]}",
             two_sided ? "" : ", \"TWO_SIDED\": false", W, H);
    return buf;
}

/* A flat emitting box over a diffuse floor, the camera outside looking down at both. */
static const char *lamp_json(int two_sided) {
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"Materials\": {"
             "  \"light\": {\"TYPE\": \"Emitting\", \"RGB\": [1, 1, 1], \"EMITTANCE\": 5%s},"
             "  \"floor\": {\"TYPE\": \"Diffuse\", \"RGB\": [0.8, 0.8, 0.8]}},"
             " \"Camera\": {\"RES\": [%d, %d], \"FOVY\": 30, \"ITERATIONS\": 16, \"DEPTH\": 4,"
             "  \"EYE\": [0, 3, 8], \"LOOKAT\": [0, 1, 0], \"UP\": [0, 1, 0]},"
             " \"Objects\": ["
             "  {\"TYPE\": \"cube\", \"MATERIAL\": \"light\", \"TRANS\": [0, 2, 0], \"SCALE\": [1.5, 0.3, 1.5]},"
             "  {\"TYPE\": \"plane\", \"MATERIAL\": \"floor\", \"ROTAT\": [-90, 0, 0], \"SCALE\": [20, 20, 1]}]}",
             two_sided ? "" : ", \"TWO_SIDED\": false", W, H);
    return buf;
}

static caustic_scene *load_text(const char *json) {
    scene *s = NULL;
    char err[512];
    if (scene_load_json_text(&s, json, "furnace.json", NULL, err, sizeof err)) {
        CHECK(0, "load: %s", err);
        return NULL;
    }
    caustic_scene *cs;
    if (api_scene_wrap(&cs, s, err, sizeof err)) {
        CHECK(0, "wrap: %s", err);
        return NULL;
    }
    return cs;
}

static caustic_scene *load(int two_sided) { return load_text(scene_json(two_sided)); }

static double render_mean(caustic_scene *cs, caustic_integrator integ, int spp, caustic_device dev) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = W;
    o.height = H;
    o.spp = spp;
    o.integrator = integ;
    o.device = dev;
    o.seed = 11;
    /* photons: with a few light paths per iteration reaching the sphere, the default radius
     * (0.3 % of the scene) gathers almost none; a sphere's area within distance r of a point on it
     * is exactly pi r^2, so a large radius costs no bias here */
    o.merge_radius = 0.05f;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer %s: %s", caustic_integrator_name(integ), err);
    if (!r) return -1.0;
    caustic_render(r, NULL, NULL, NULL, 0);
    double mean = image_mean(caustic_image(r, NULL, NULL), W * H);
    caustic_renderer_free(r);
    return mean;
}

int main(int argc, char **argv) {
    int cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
    if (cuda) skip_without_cuda();
    caustic_device dev = cuda ? CAUSTIC_DEVICE_CUDA : CAUSTIC_DEVICE_CPU;
    caustic_scene *two = load(1), *one = load(0);
    if (!two || !one) return test_result("test_emission");
    /* iterations: light tracing and photon mapping see the sphere only through the light paths
     * that reach the part of it in view, so they need many more than path tracing */
    static const struct {
        caustic_integrator i;
        int spp;
    } runs[] = {{CAUSTIC_INTEGRATOR_PT, 64},    {CAUSTIC_INTEGRATOR_LT, 3000},  {CAUSTIC_INTEGRATOR_BDPT, 256},
                {CAUSTIC_INTEGRATOR_PPM, 3000}, {CAUSTIC_INTEGRATOR_BPM, 3000}, {CAUSTIC_INTEGRATOR_VCM, 256}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
        double m = render_mean(two, runs[k].i, runs[k].spp, dev);
        printf("%-4s %s two-sided: %.5f (expected 0.5)\n", caustic_integrator_name(runs[k].i), cuda ? "cuda" : "cpu",
               m);
        CHECK(fabs(m - 0.5) < 0.005, "%s: sphere in a two-sided emitting box reads %.5f, expected 0.5 +- 1 %%",
              caustic_integrator_name(runs[k].i), m);
    }
    /* one-sided: the box's faces emit outwards, nothing reaches the sphere */
    double m = render_mean(one, CAUSTIC_INTEGRATOR_PT, 16, dev);
    CHECK(m < 1e-6, "TWO_SIDED false: %.6f, expected black", m);
    m = render_mean(one, CAUSTIC_INTEGRATOR_LT, 64, dev);
    CHECK(m < 1e-6, "TWO_SIDED false, light tracing: %.6f, expected black", m);
    caustic_scene_free(two);
    caustic_scene_free(one);

    /* the same samples either way: only a shadow ray that reached a face's back could differ */
    caustic_scene *lamp2 = load_text(lamp_json(1)), *lamp1 = load_text(lamp_json(0));
    if (!lamp2 || !lamp1) return test_result("test_emission");
    double m2 = render_mean(lamp2, CAUSTIC_INTEGRATOR_PT, 256, dev),
           m1 = render_mean(lamp1, CAUSTIC_INTEGRATOR_PT, 256, dev);
    printf("pt   %s closed lamp seen from outside: two-sided %.6f, one-sided %.6f\n", cuda ? "cuda" : "cpu", m2, m1);
    CHECK(m1 > 0.0 && fabs(m2 - m1) <= 1e-4 * m1,
          "a closed two-sided lamp lights the floor %.6f, one-sided %.6f: light leaks through its faces", m2, m1);
    caustic_scene_free(lamp2);
    caustic_scene_free(lamp1);
    return test_result("test_emission");
}
