/* Geometry shared by the whole-renderer tests. */
#ifndef CAUSTIC_TEST_SCENES_H
#define CAUSTIC_TEST_SCENES_H

#include <string.h>

#include "scene/scene.h"
#include "testing.h"

/* Adds a grey (0.5) diffuse material, the one the geometry tests give every primitive. */
static inline int add_grey_diffuse(scene *s) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    m.albedo = v3s(0.5f);
    return scene_add_material(s, "m", m);
}

/* A closed UV sphere of radius r with triangles facing inwards (emitters are one-sided). */
static inline void add_inward_sphere(scene *s, float radius, int material) {
    enum { NT = 24, NP = 48 };
    vec3 pos[(NT + 1) * NP];
    uint32_t idx[NT * NP * 6];
    size_t nv = 0, ni = 0;
    for (int t = 0; t <= NT; ++t)
        for (int p = 0; p < NP; ++p) {
            float th = K_PI * t / NT, ph = 2 * K_PI * p / NP;
            pos[nv++] = v3(radius * sinf(th) * cosf(ph), radius * cosf(th), radius * sinf(th) * sinf(ph));
        }
    for (int t = 0; t < NT; ++t)
        for (int p = 0; p < NP; ++p) {
            uint32_t a = (uint32_t)(t * NP + p), b = (uint32_t)(t * NP + (p + 1) % NP);
            uint32_t c = a + NP, d = b + NP;
            /* wound so that normals point to the centre; degenerate pole triangles skipped */
            if (t > 0) {
                idx[ni++] = a;
                idx[ni++] = c;
                idx[ni++] = b;
            }
            if (t < NT - 1) {
                idx[ni++] = b;
                idx[ni++] = c;
                idx[ni++] = d;
            }
        }
    scene_add_mesh(s, pos, NULL, NULL, nv, idx, NULL, ni / 3, xform_identity(), material);
}

#endif
