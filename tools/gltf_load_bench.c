/* Loading time and peak memory of one mesh file, without the BVH build: the file is read into
 * an empty scene (glTF: scene_load_gltf, the file's materials; OBJ: scene_load_obj with one
 * material) and the program prints the seconds and the process's peak RSS. Run by
 * tools/bench_gltf_load.sh, which builds it against build/libcaustic.a. */
#define _POSIX_C_SOURCE 200809L
#include "scene/scene.h"
#include "import/import.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gltf_load_bench FILE.glb|FILE.gltf|FILE.obj\n");
        return 2;
    }
    const char *path = argv[1];
    size_t n = strlen(path);
    int obj = n > 4 && strcmp(path + n - 4, ".obj") == 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    scene *s = scene_create();
    char err[1024];
    int rc;
    if (obj) {
        material m;
        memset(&m, 0, sizeof m);
        m.kind = MAT_DIFFUSE;
        m.albedo_tex = -1;
        m.albedo = v3s(0.8f);
        scene_add_material(s, "grey", m);
        rc = scene_load_obj(s, path, xform_identity(), 0, err, sizeof err);
    } else {
        rc = scene_load_gltf(s, path, xform_identity(), -1, 0, err, sizeof err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("load_s=%.3f peak_rss_mib=%.1f triangles=%zu vertices=%zu\n",
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), ru.ru_maxrss / 1024.0,
           s->ntriangles, s->nvertices);
    scene_destroy(s);
    return 0;
}
