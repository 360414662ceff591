/* caustic_build_features: what this build was compiled with (caustic --version). CMake defines
 * CAUSTIC_BUILD_CUDA (the architectures) and CAUSTIC_BUILD_MPI for this file alone. */
#include <stdio.h>

#include "caustic.h"
#include "cpu/isa.h"
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "scene/scene.h"

void caustic_build_features(char *buf, size_t n) {
    if (!n) return;
    size_t used = 0;
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        if (used < n) used += (size_t)snprintf(buf + used, n - used, __VA_ARGS__);                                     \
    } while (0)
#ifdef CAUSTIC_BUILD_CUDA
    ADD("cuda: yes (%s)\n", CAUSTIC_BUILD_CUDA);
#else
    ADD("cuda: no (built without nvcc)\n");
#endif
#ifdef CAUSTIC_BUILD_MPI
    ADD("mpi: yes (mpirun -np N caustic render ...)\n");
#else
    ADD("mpi: no (single-process rendering only)\n");
#endif
    ADD("gltf: %s\n", scene_gltf_supported() ? "yes" : "no (built without libtinygltf-dev)");
    ADD("mitsuba: %s\n", mx_available() ? "yes" : "no (built without libexpat1-dev)");
    int nk;
    const cpu_kernels *const *all = cpu_kernels_all(&nk);
    ADD("cpu kernels:");
    for (int i = 0; i < nk; ++i) ADD("%s %s", i ? "," : "", all[i]->name);
    char err[160];
    const char *in_use = caustic_cpu_isa(err, sizeof err);
    ADD(" (in use: %s)", in_use ? in_use : err);
#undef ADD
}
