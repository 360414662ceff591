/* glTF entry points of a build without tinygltf (CMake did not find libtinygltf-dev): each
 * says so and fails, so the rest of caustic builds and runs without it. */
#include "scene/scene.h"
#include "import/import.h"

#include <stdio.h>

#define NO_GLTF "caustic was built without glTF support (install libtinygltf-dev and rebuild)"

int scene_gltf_supported(void) { return 0; }

int scene_load_gltf(scene *s, const char *path, xform to_world, int material, int flags, char *err, size_t errlen) {
    (void)s;
    (void)to_world;
    (void)material;
    (void)flags;
    snprintf(err, errlen, "%s: %s", path, NO_GLTF);
    return -1;
}

int scene_load_gltf_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                           int flags, char *err, size_t errlen) {
    (void)s;
    (void)data;
    (void)size;
    (void)to_world;
    (void)material;
    (void)flags;
    snprintf(err, errlen, "%s: %s", name, NO_GLTF);
    return -1;
}

int scene_load_gltf_scene(scene **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    snprintf(err, errlen, "%s: %s", path, NO_GLTF);
    return -1;
}

int scene_load_gltf_scene_ex(scene **out, const char *path, int *lit, int *has_camera, char *err, size_t errlen) {
    (void)lit;
    (void)has_camera;
    return scene_load_gltf_scene(out, path, err, errlen);
}
