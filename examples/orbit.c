/* Steering a renderer through the public API alone: a scene built in code (a box of quads, a glass
 * sphere, a diffuse sphere, a tetrahedron from arrays, an area light and a point light) or a
 * built-in scene, and a camera orbiting it, a few passes per frame, frames written as PNGs. It
 * checks what it relies on and exits 1 when something is off (CI runs it).
 *
 *   cc orbit.c $(pkg-config --cflags --libs caustic) -lm -o orbit
 *   ./orbit [OUTDIR [FRAMES [cornell]]]     -> OUTDIR/orbit.000.png ...
 */
#include <caustic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 96
#define H 72

static void print_log(void *user, const char *message) {
    (void)user;
    fprintf(stderr, "%s\n", message);
}

static int fail(const char *what, const char *err) {
    fprintf(stderr, "orbit: %s: %s\n", what, err);
    return 1;
}

static int material(caustic_scene *s, caustic_material_kind kind, float r, float g, float b, float emit, char *err,
                    size_t errlen) {
    caustic_material m;
    caustic_material_init(&m);
    m.kind = kind;
    m.color[0] = r;
    m.color[1] = g;
    m.color[2] = b;
    m.emission[0] = m.emission[1] = m.emission[2] = emit;
    return caustic_scene_add_material(s, &m, err, errlen);
}

/* A 2x2x2 box open towards +z, lit from a square in the ceiling and a point light. */
static int build_scene(caustic_scene **out, char *err, size_t errlen) {
    caustic_scene *s;
    if (caustic_scene_create(&s, err, errlen)) return -1;
    int white = material(s, CAUSTIC_MATERIAL_DIFFUSE, 0.75f, 0.75f, 0.75f, 0.0f, err, errlen);
    int red = material(s, CAUSTIC_MATERIAL_DIFFUSE, 0.75f, 0.1f, 0.1f, 0.0f, err, errlen);
    int green = material(s, CAUSTIC_MATERIAL_DIFFUSE, 0.1f, 0.75f, 0.1f, 0.0f, err, errlen);
    int glass = material(s, CAUSTIC_MATERIAL_GLASS, 1.0f, 1.0f, 1.0f, 0.0f, err, errlen);
    int light = material(s, CAUSTIC_MATERIAL_EMITTER, 0.0f, 0.0f, 0.0f, 12.0f, err, errlen);
    if (white < 0 || red < 0 || green < 0 || glass < 0 || light < 0) goto fail;
    const double floor_o[3] = {-1, -1, 1}, floor_u[3] = {2, 0, 0}, floor_v[3] = {0, 0, -2};
    const double ceil_o[3] = {-1, 1, -1}, ceil_u[3] = {2, 0, 0}, ceil_v[3] = {0, 0, 2};
    const double back_o[3] = {-1, -1, -1}, back_u[3] = {2, 0, 0}, back_v[3] = {0, 2, 0};
    const double left_o[3] = {-1, -1, 1}, left_u[3] = {0, 0, -2}, left_v[3] = {0, 2, 0};
    const double right_o[3] = {1, -1, -1}, right_u[3] = {0, 0, 2}, right_v[3] = {0, 2, 0};
    const double lamp_o[3] = {-0.3, 0.999, -0.3}, lamp_u[3] = {0.6, 0, 0}, lamp_v[3] = {0, 0, 0.6};
    const double glass_c[3] = {0.4, -0.6, 0.2}, ball_c[3] = {-0.45, -0.7, -0.4};
    if (caustic_scene_add_quad(s, floor_o, floor_u, floor_v, white, err, errlen) < 0 ||
        caustic_scene_add_quad(s, ceil_o, ceil_u, ceil_v, white, err, errlen) < 0 ||
        caustic_scene_add_quad(s, back_o, back_u, back_v, white, err, errlen) < 0 ||
        caustic_scene_add_quad(s, left_o, left_u, left_v, red, err, errlen) < 0 ||
        caustic_scene_add_quad(s, right_o, right_u, right_v, green, err, errlen) < 0 ||
        caustic_scene_add_quad(s, lamp_o, lamp_u, lamp_v, light, err, errlen) < 0 ||
        caustic_scene_add_sphere(s, glass_c, 0.4, glass, err, errlen) < 0 ||
        caustic_scene_add_sphere(s, ball_c, 0.3, white, err, errlen) < 0)
        goto fail;
    /* a tetrahedron standing on the floor at the back, from arrays */
    const float pos[] = {0.2f, -1.0f, -0.9f, 0.8f, -1.0f, -0.9f, 0.5f, -1.0f, -0.4f, 0.5f, -0.4f, -0.7f};
    const uint32_t idx[] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
    if (caustic_scene_add_mesh(s, pos, NULL, NULL, 4, idx, 4, red, err, errlen) < 0) goto fail;
    const double bulb[3] = {0.0, 0.6, 0.6}, power[3] = {0.5, 0.45, 0.4};
    if (caustic_scene_add_point_light(s, bulb, power, err, errlen) < 0) goto fail;
    caustic_camera cam;
    caustic_scene_get_camera(s, &cam);
    cam.eye[0] = 0.0;
    cam.eye[1] = 0.0;
    cam.eye[2] = 3.4;
    cam.lookat[0] = cam.lookat[1] = cam.lookat[2] = 0.0;
    cam.fov_y = 45.0;
    if (caustic_scene_set_camera(s, &cam, err, errlen)) goto fail;
    *out = s;
    return 0;
fail:
    caustic_scene_free(s);
    return -1;
}

static double mean_byte(const unsigned char *p, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += p[i];
    return s / (double)n;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    int frames = argc > 2 ? atoi(argv[2]) : 4;
    int builtin = argc > 3 && !strcmp(argv[3], "cornell");
    if (frames < 2 || frames > 360) return fail("usage", "orbit [OUTDIR [FRAMES 2..360 [cornell]]]");
    char err[512];
    caustic_set_log(print_log, NULL);
    caustic_scene *scene;
    if (builtin ? caustic_scene_load(&scene, "cornell", err, sizeof err) : build_scene(&scene, err, sizeof err))
        return fail("scene", err);

    caustic_options opt;
    caustic_options_init(&opt);
    opt.width = W / 2; /* changed below with caustic_renderer_set_resolution */
    opt.height = H / 2;
    opt.spp = 1 << 20; /* no target in sight: the frames decide how many samples */
    opt.max_depth = 6;
    opt.device = CAUSTIC_DEVICE_CPU;
    caustic_renderer *r = caustic_renderer_create(scene, &opt, err, sizeof err);
    if (!r) {
        caustic_scene_free(scene);
        return fail("renderer", err);
    }
    int rc = 0;
    if (caustic_renderer_set_resolution(r, W, H, err, sizeof err)) {
        rc = fail("resolution", err);
        goto done;
    }

    caustic_camera start;
    caustic_renderer_get_camera(r, &start);
    caustic_look look;
    caustic_look_init(&look);
    look.tonemap = CAUSTIC_TONEMAP_AGX;
    look.exposure = 0.5f;
    unsigned char *rgb8 = malloc((size_t)W * H * 3), *first = malloc((size_t)W * H * 3);
    if (!rgb8 || !first) {
        rc = fail("memory", "out of memory");
        goto done_buffers;
    }
    for (int f = 0; f < frames; ++f) {
        /* turn the eye about the up axis (y here) around the look-at point: +-20 degrees */
        double a = (f - (frames - 1) * 0.5) / (frames - 1) * (40.0 * 3.14159265358979 / 180.0);
        caustic_camera c = start;
        double dx = start.eye[0] - start.lookat[0], dz = start.eye[2] - start.lookat[2];
        c.eye[0] = start.lookat[0] + dx * cos(a) + dz * sin(a);
        c.eye[2] = start.lookat[2] - dx * sin(a) + dz * cos(a);
        if (caustic_renderer_set_camera(r, &c, err, sizeof err)) {
            rc = fail("camera", err);
            break;
        }
        if (caustic_renderer_spp(r) != 0) {
            rc = fail("camera", "moving the camera did not restart the image");
            break;
        }
        /* 4 passes of 2 spp: the call returns after them with 8 spp taken */
        int added = caustic_render_passes(r, 4, 2, err, sizeof err);
        if (added < 0) {
            rc = fail("render", err);
            break;
        }
        if (added != 8 || caustic_renderer_spp(r) != 8) {
            rc = fail("render", "4 passes of 2 spp did not give 8 spp");
            break;
        }
        if (caustic_image_rgb8(r, &look, rgb8, err, sizeof err)) {
            rc = fail("image", err);
            break;
        }
        double m = mean_byte(rgb8, (size_t)W * H * 3);
        if (m < 5.0) {
            rc = fail("image", "the frame is black");
            break;
        }
        if (f == 0)
            memcpy(first, rgb8, (size_t)W * H * 3);
        else if (!memcmp(first, rgb8, (size_t)W * H * 3)) {
            rc = fail("image", "the camera moved but the frame did not");
            break;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/orbit.%03d.png", dir, f);
        if (caustic_image_save_rgb8(rgb8, W, H, path, err, sizeof err)) {
            rc = fail("save", err);
            break;
        }
        printf("%s: %dx%d, %d spp, mean %.1f/255\n", path, W, H, caustic_renderer_spp(r), m);
    }
    /* the same camera again after a reset renders the same pixels: one seed, one image */
    if (rc == 0 && !caustic_renderer_reset(r, err, sizeof err) &&
        caustic_render_passes(r, 1, 8, err, sizeof err) == 8 && !caustic_image_rgb8(r, &look, first, err, sizeof err) &&
        memcmp(first, rgb8, (size_t)W * H * 3))
        rc = fail("reset", "the image after a reset differs from the first render of the same camera");
done_buffers:
    free(rgb8);
    free(first);
done:
    caustic_renderer_free(r);
    caustic_scene_free(scene);
    return rc;
}
