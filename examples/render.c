/* The smallest program against the installed library: load a built-in scene, render it, save a
 * PNG. Build it with pkg-config:
 *
 *   cc render.c $(pkg-config --cflags --libs caustic) -o render && ./render out.png
 */
#include <caustic.h>
#include <stdio.h>

static void print_log(void *user, const char *message) {
    (void)user;
    fprintf(stderr, "%s\n", message);
}

int main(int argc, char **argv) {
    const char *out = argc > 1 ? argv[1] : "render.png";
    char err[512];
    caustic_set_log(print_log, NULL);
    caustic_scene *scene;
    if (caustic_scene_load(&scene, "cornell", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    caustic_options opt;
    caustic_options_init(&opt);
    opt.width = opt.height = 64;
    opt.spp = 4;
    opt.device = CAUSTIC_DEVICE_CPU;
    caustic_renderer *r = caustic_renderer_create(scene, &opt, err, sizeof err);
    int rc = !r || caustic_render(r, NULL, NULL, err, sizeof err) || caustic_save_image(r, out, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    else
        printf("%s: 64x64, 4 spp (caustic %s)\n", out, caustic_version());
    if (r) caustic_renderer_free(r);
    caustic_scene_free(scene);
    return rc;
}
