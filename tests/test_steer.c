/* The steerable API (include/caustic.h), through the public header alone: cameras set on a
 * renderer render what a renderer created with that camera renders, passes add up to one render,
 * resolution changes and resets start new images, 8-bit frames follow the look, click-to-focus
 * depths, cameras survive a trip through JSON, and scenes built in code check their input. */
#include <caustic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

#define EXPECT(cond) CHECK(cond, "%s", "")

static caustic_options small_options(void) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 40;
    o.height = 30;
    o.spp = 64;
    o.threads = 2;
    o.device = CAUSTIC_DEVICE_CPU;
    return o;
}

static int same_image(caustic_renderer *a, caustic_renderer *b) {
    int w, h, w2, h2;
    const float *ia = caustic_image(a, &w, &h), *ib = caustic_image(b, &w2, &h2);
    return w == w2 && h == h2 && memcmp(ia, ib, sizeof(float) * 3 * (size_t)w * (size_t)h) == 0;
}

static void moved(caustic_camera *c) {
    c->eye[0] += 2.0;
    c->eye[1] += 1.0;
    c->fov_y *= 0.8;
}

static void test_camera_and_passes(void) {
    char err[512];
    caustic_scene *s;
    EXPECT(caustic_scene_load(&s, "cornell", err, sizeof err) == 0);
    caustic_options o = small_options();
    caustic_camera c0, c;
    caustic_scene_get_camera(s, &c0);
    c = c0;
    moved(&c);

    /* a: created with the scene's camera, then moved; b: created after the scene's camera moved */
    caustic_renderer *a = caustic_renderer_create(s, &o, err, sizeof err);
    EXPECT(a != NULL);
    EXPECT(caustic_render_passes(a, 2, 3, err, sizeof err) == 6);
    EXPECT(caustic_renderer_set_camera(a, &c, err, sizeof err) == 0);
    EXPECT(caustic_renderer_spp(a) == 0);
    caustic_camera back;
    caustic_renderer_get_camera(a, &back);
    EXPECT(fabs(back.eye[0] - c.eye[0]) < 1e-5 && fabs(back.fov_y - c.fov_y) < 1e-4);
    /* 5 passes of 3 spp, then 1 of 1: 16 spp in all, as one caustic_render to 16 */
    EXPECT(caustic_render_passes(a, 5, 3, err, sizeof err) == 15);
    EXPECT(caustic_render_passes(a, 1, 1, err, sizeof err) == 1);
    EXPECT(caustic_scene_set_camera(s, &c, err, sizeof err) == 0);
    caustic_options o16 = o;
    o16.spp = 16;
    caustic_renderer *b = caustic_renderer_create(s, &o16, err, sizeof err);
    EXPECT(b != NULL);
    EXPECT(caustic_render(b, NULL, NULL, err, sizeof err) == 0);
    EXPECT(same_image(a, b));
    /* the other renderer over the scene keeps its own camera */
    caustic_renderer_get_camera(b, &back);
    EXPECT(fabs(back.eye[0] - c.eye[0]) < 1e-5);
    /* never beyond the spp target */
    EXPECT(caustic_render_passes(b, 3, 4, err, sizeof err) == 0);

    /* a reset starts again: the same samples give the same image */
    EXPECT(caustic_renderer_reset(a, err, sizeof err) == 0);
    EXPECT(caustic_renderer_spp(a) == 0);
    EXPECT(caustic_render_passes(a, 1, 16, err, sizeof err) == 16);
    EXPECT(same_image(a, b));

    /* 8-bit frames: the float image through the look */
    caustic_look look;
    caustic_look_init(&look);
    look.tonemap = CAUSTIC_TONEMAP_ACES;
    look.exposure = 1.5f;
    unsigned char *f8 = malloc(3 * 40 * 30), *g8 = malloc(3 * 40 * 30);
    EXPECT(f8 && g8);
    EXPECT(caustic_image_rgb8(a, &look, f8, err, sizeof err) == 0);
    caustic_tonemap_rgb8(&look, caustic_image(a, NULL, NULL), 40 * 30, g8);
    EXPECT(memcmp(f8, g8, 3 * 40 * 30) == 0);
    caustic_look_init(&look);
    EXPECT(caustic_image_rgb8(a, &look, g8, err, sizeof err) == 0);
    EXPECT(memcmp(f8, g8, 3 * 40 * 30) != 0); /* the look matters */

    /* a new size: a new, empty image of that size */
    EXPECT(caustic_renderer_set_resolution(a, 24, 18, err, sizeof err) == 0);
    EXPECT(caustic_renderer_spp(a) == 0);
    EXPECT(caustic_render_passes(a, 1, 4, err, sizeof err) == 4);
    int w, h;
    caustic_image(a, &w, &h);
    EXPECT(w == 24 && h == 18);
    EXPECT(caustic_renderer_set_resolution(a, 0, 18, err, sizeof err) != 0);

    /* click to focus: the back wall of the Cornell box straight ahead, the floor below it */
    caustic_renderer_set_camera(a, &c0, err, sizeof err);
    double mid, low;
    EXPECT(caustic_renderer_pick_depth(a, 12, 9, &mid) == 0);
    EXPECT(caustic_renderer_pick_depth(a, 12, 14, &low) == 0);
    EXPECT(mid > 0.0 && low > 0.0 && low < mid);
    EXPECT(caustic_renderer_pick_depth(a, -1, 9, &mid) != 0);

    /* a degenerate camera is refused and the old one kept */
    caustic_camera bad = c0;
    memcpy(bad.lookat, bad.eye, sizeof bad.eye);
    EXPECT(caustic_renderer_set_camera(a, &bad, err, sizeof err) != 0);
    EXPECT(strstr(err, "EYE") != NULL);
    caustic_renderer_get_camera(a, &back);
    EXPECT(fabs(back.lookat[2] - c0.lookat[2]) < 1e-6);
    free(f8);
    free(g8);
    caustic_renderer_free(a);
    caustic_renderer_free(b);
    caustic_scene_free(s);
}

static void test_bidir_lens_refused(void) {
    char err[512];
    caustic_scene *s;
    EXPECT(caustic_scene_load(&s, "cornell", err, sizeof err) == 0);
    caustic_options o = small_options();
    o.integrator = CAUSTIC_INTEGRATOR_VCM;
    caustic_renderer *r = caustic_renderer_create(s, &o, err, sizeof err);
    EXPECT(r != NULL);
    caustic_camera c;
    caustic_renderer_get_camera(r, &c);
    c.lens_radius = 0.1;
    EXPECT(caustic_renderer_set_camera(r, &c, err, sizeof err) != 0);
    EXPECT(strstr(err, "pinhole") != NULL);
    c.lens_radius = 0.0;
    moved(&c);
    EXPECT(caustic_renderer_set_camera(r, &c, err, sizeof err) == 0);
    EXPECT(caustic_render_passes(r, 2, 1, err, sizeof err) == 2);
    caustic_renderer_free(r);
    caustic_scene_free(s);
}

static void test_camera_json(void) {
    char err[512], json[1024];
    caustic_scene *s;
    EXPECT(caustic_scene_load(&s, "cornell", err, sizeof err) == 0);
    caustic_camera c, back;
    caustic_scene_get_camera(s, &c);
    moved(&c);
    c.eye[2] += 0.123456789;
    c.lens_radius = 0.05;
    c.focus_distance = 7.25;
    EXPECT(caustic_camera_to_json(&c, 320, 200, json, sizeof json) > 0);
    const char *path = "test_steer_camera.json";
    FILE *f = fopen(path, "w");
    EXPECT(f && fputs(json, f) >= 0 && fclose(f) == 0);
    caustic_scene *t;
    EXPECT(caustic_scene_load(&t, "cornell", err, sizeof err) == 0);
    EXPECT(caustic_scene_load_camera(t, path, err, sizeof err) == 0);
    caustic_scene_get_camera(t, &back);
    /* exact: the camera is float inside and %.9g round-trips a float */
    for (int i = 0; i < 3; ++i)
        EXPECT((float)back.eye[i] == (float)c.eye[i] && (float)back.lookat[i] == (float)c.lookat[i]);
    EXPECT((float)back.fov_y == (float)c.fov_y && (float)back.lens_radius == (float)c.lens_radius &&
           (float)back.focus_distance == (float)c.focus_distance);
    caustic_scene_stats st;
    caustic_scene_stats_get(t, &st);
    EXPECT(st.width == 320 && st.height == 200);
    /* a file without a camera: named in the message */
    f = fopen(path, "w");
    EXPECT(f && fputs("{\"Objects\": []}", f) >= 0 && fclose(f) == 0);
    EXPECT(caustic_scene_load_camera(t, path, err, sizeof err) != 0);
    EXPECT(strstr(err, "Camera") != NULL);
    remove(path);
    caustic_scene_free(t);
    caustic_scene_free(s);
}

static void test_scene_in_code(void) {
    char err[512];
    caustic_scene *s;
    EXPECT(caustic_scene_create(&s, err, sizeof err) == 0);
    caustic_material m;
    caustic_material_init(&m);
    int grey = caustic_scene_add_material(s, &m, err, sizeof err);
    m.kind = CAUSTIC_MATERIAL_EMITTER;
    m.emission[0] = m.emission[1] = m.emission[2] = 5.0f;
    int lamp = caustic_scene_add_material(s, &m, err, sizeof err);
    EXPECT(grey == 0 && lamp == 1);
    m.roughness = 2.0f;
    EXPECT(caustic_scene_add_material(s, &m, err, sizeof err) < 0);
    const double c[3] = {0, 0, 0}, o[3] = {-1, 2, -1}, u[3] = {2, 0, 0}, v[3] = {0, 0, 2};
    EXPECT(caustic_scene_add_sphere(s, c, 1.0, grey, err, sizeof err) == 0);
    EXPECT(caustic_scene_add_sphere(s, c, -1.0, grey, err, sizeof err) < 0);
    EXPECT(caustic_scene_add_sphere(s, c, 1.0, 7, err, sizeof err) < 0);
    EXPECT(strstr(err, "material 7") != NULL);
    EXPECT(caustic_scene_add_quad(s, o, u, v, lamp, err, sizeof err) == 0); /* faces down: u x v = -y */
    EXPECT(caustic_scene_add_quad(s, o, u, u, lamp, err, sizeof err) < 0);
    const float pos[] = {-3, -1, -3, 3, -1, -3, 3, -1, 3, -3, -1, 3};
    const uint32_t idx[] = {0, 2, 1, 0, 3, 2}, bad_idx[] = {0, 2, 9};
    EXPECT(caustic_scene_add_mesh(s, pos, NULL, NULL, 4, idx, 2, grey, err, sizeof err) >= 0);
    EXPECT(caustic_scene_add_mesh(s, pos, NULL, NULL, 4, bad_idx, 1, grey, err, sizeof err) < 0);
    const double bulb[3] = {0, 3, 3}, power[3] = {2, 2, 2};
    EXPECT(caustic_scene_add_point_light(s, bulb, power, err, sizeof err) == 0);
    EXPECT(caustic_scene_set_render_defaults(s, 32, 24, 8, 4, err, sizeof err) == 0);
    caustic_scene_stats st;
    caustic_scene_stats_get(s, &st);
    EXPECT(st.spheres == 1 && st.quads == 1 && st.triangles == 2 && st.materials == 2);
    caustic_options opt;
    caustic_options_init(&opt);
    opt.device = CAUSTIC_DEVICE_CPU;
    opt.threads = 2;
    caustic_renderer *r = caustic_renderer_create(s, &opt, err, sizeof err);
    EXPECT(r != NULL);
    EXPECT(caustic_render(r, NULL, NULL, err, sizeof err) == 0);
    int w, h;
    const float *img = caustic_image(r, &w, &h);
    EXPECT(w == 32 && h == 24);
    /* the sphere's top, lit from above, is bright; the image is finite */
    double top = 0.0;
    for (int i = 0; i < 3; ++i) top += img[3 * (7 * 32 + 16) + i];
    EXPECT(top > 0.05);
    for (int i = 0; i < 3 * w * h; ++i) EXPECT(isfinite(img[i]));
    /* the scene is in use: no more adds */
    EXPECT(caustic_scene_add_sphere(s, c, 0.5, grey, err, sizeof err) < 0);
    EXPECT(strstr(err, "in use") != NULL);
    caustic_renderer_free(r);
    caustic_scene_free(s);
}

/* On the GPU (skipped without one): 8-bit frames tone-mapped there agree with the host's tone map
 * of the GPU's float image (within one code: float mean and CUDA's powf/log2f), a reset empties
 * the GPU's film, and moving the camera renders what a renderer created there renders. */
static void test_gpu(void) {
    char err[512];
    caustic_scene *s;
    EXPECT(caustic_scene_load(&s, "cornell", err, sizeof err) == 0);
    caustic_options o = small_options();
    o.device = CAUSTIC_DEVICE_CUDA;
    caustic_renderer *r = caustic_renderer_create(s, &o, err, sizeof err);
    if (!r) {
        printf("test_steer: no GPU (%s): GPU checks skipped\n", err);
        caustic_scene_free(s);
        return;
    }
    caustic_camera c;
    caustic_renderer_get_camera(r, &c);
    moved(&c);
    EXPECT(caustic_render_passes(r, 1, 8, err, sizeof err) == 8);
    EXPECT(caustic_renderer_set_camera(r, &c, err, sizeof err) == 0);
    EXPECT(caustic_render_passes(r, 1, 8, err, sizeof err) == 8);
    caustic_options o8 = o;
    o8.spp = 8;
    EXPECT(caustic_scene_set_camera(s, &c, err, sizeof err) == 0);
    caustic_renderer *b = caustic_renderer_create(s, &o8, err, sizeof err);
    EXPECT(b && caustic_render_passes(b, 1, 8, err, sizeof err) == 8);
    EXPECT(b && same_image(r, b));
    for (int t = 0; t < 3; ++t) {
        caustic_look look;
        look.tonemap = (caustic_tonemap)t;
        look.exposure = 0.75f * (float)t;
        unsigned char *gpu = malloc(3 * 40 * 30), *host = malloc(3 * 40 * 30);
        EXPECT(gpu && host && caustic_image_rgb8(r, &look, gpu, err, sizeof err) == 0);
        caustic_tonemap_rgb8(&look, caustic_image(r, NULL, NULL), 40 * 30, host);
        int worst = 0, differ = 0;
        for (int i = 0; i < 3 * 40 * 30; ++i) {
            int d = abs((int)gpu[i] - (int)host[i]);
            worst = d > worst ? d : worst;
            differ += d != 0;
        }
        CHECK(worst <= 1 && differ < 40, "tone map %d: GPU vs host: %d values differ, by up to %d", t, differ, worst);
        free(gpu);
        free(host);
    }
    /* the reset empties the GPU's film: the same pass again gives the same image (one pass of 8:
     * the GPU keeps float sums between passes, so another split rounds differently) */
    EXPECT(caustic_renderer_reset(r, err, sizeof err) == 0);
    EXPECT(caustic_render_passes(r, 1, 8, err, sizeof err) == 8);
    EXPECT(b && same_image(r, b));
    caustic_renderer_free(b);
    caustic_renderer_free(r);
    caustic_scene_free(s);
}

int main(void) {
    test_gpu();
    test_camera_and_passes();
    test_bidir_lens_refused();
    test_camera_json();
    test_scene_in_code();
    return test_result("test_steer");
}
