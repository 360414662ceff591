/* Built-in scenes, loadable by name with no file:
 *   cornell        the CIS 5650 stock scenes/cornell.json, embedded verbatim in content
 *   cornell-glass  the same box with a glass sphere, a mirror sphere and a rough gold box
 *   smallvcm0..3   SmallVCM's four Cornell-box scenes (scene_smallvcm.c)
 *   rtow           the final scene of "Ray Tracing in One Weekend", built through the builder
 *                  API from a fixed PCG32 seed, so it is identical on every run and machine. */
#include "scene/scene.h"
#include "import/import.h"
#include "kernel/rng.h"
#include "scene/material.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const builtin_names[] = {"cornell",   "cornell-glass", "rtow",      "smallvcm0",
                                            "smallvcm1", "smallvcm2",     "smallvcm3", NULL};

const char *const *scene_builtin_names(void) { return builtin_names; }

/* The stock box, as fragments shared by the built-ins: materials of the room, the camera (file
 * name and depth vary), and the light and five walls. */
#define CORNELL_ROOM_MATERIALS                                                                                         \
    "    \"light\": {\"TYPE\":\"Emitting\", \"RGB\":[1.0, 1.0, 1.0], \"EMITTANCE\":5.0},\n"                            \
    "    \"diffuse_white\": {\"TYPE\":\"Diffuse\", \"RGB\":[0.98, 0.98, 0.98]},\n"                                     \
    "    \"diffuse_red\": {\"TYPE\":\"Diffuse\", \"RGB\":[0.85, 0.35, 0.35]},\n"                                       \
    "    \"diffuse_green\": {\"TYPE\":\"Diffuse\", \"RGB\":[0.35, 0.85, 0.35]},\n"
#define CORNELL_CAMERA(depth, file)                                                                                    \
    "  \"Camera\": {\n"                                                                                                \
    "    \"RES\":[800,800], \"FOVY\":45.0, \"ITERATIONS\":5000, \"DEPTH\":" depth ", \"FILE\":\"" file "\",\n"         \
    "    \"EYE\":[0.0,5.0,10.5], \"LOOKAT\":[0.0,5.0,0.0], \"UP\":[0.0,1.0,0.0]\n"                                     \
    "  },\n"
#define CORNELL_ROOM_OBJECTS                                                                                           \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"light\", \"TRANS\":[0.0,10.0,0.0], \"ROTAT\":[0.0,0.0,0.0], "              \
    "\"SCALE\":[3.0,0.3,3.0]},\n"                                                                                      \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"diffuse_white\", \"TRANS\":[0.0,0.0,0.0], \"ROTAT\":[0.0,0.0,0.0], "       \
    "\"SCALE\":[10.0,0.01,10.0]},\n"                                                                                   \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"diffuse_white\", \"TRANS\":[0.0,10.0,0.0], \"ROTAT\":[0.0,0.0,90.0], "     \
    "\"SCALE\":[0.01,10.0,10.0]},\n"                                                                                   \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"diffuse_white\", \"TRANS\":[0.0,5.0,-5.0], \"ROTAT\":[0.0,90.0,0.0], "     \
    "\"SCALE\":[0.01,10.0,10.0]},\n"                                                                                   \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"diffuse_red\", \"TRANS\":[-5.0,5.0,0.0], \"ROTAT\":[0.0,0.0,0.0], "        \
    "\"SCALE\":[0.01,10.0,10.0]},\n"                                                                                   \
    "    {\"TYPE\":\"cube\", \"MATERIAL\":\"diffuse_green\", \"TRANS\":[5.0,5.0,0.0], \"ROTAT\":[0.0,0.0,0.0], "       \
    "\"SCALE\":[0.01,10.0,10.0]},\n"

/* Same content as scenes/cornell.json (tests/test_scene_load.c checks they load identically). */
static const char cornell_json[] =
    "{\n"
    "  \"Materials\": {\n" CORNELL_ROOM_MATERIALS
    "    \"specular_white\": {\"TYPE\":\"Specular\", \"RGB\":[0.98, 0.98, 0.98], \"ROUGHNESS\":1.0}\n"
    "  },\n" CORNELL_CAMERA("8",
                            "cornell") "  \"Objects\": [\n" CORNELL_ROOM_OBJECTS
                                       "    {\"TYPE\":\"sphere\", \"MATERIAL\":\"specular_white\", "
                                       "\"TRANS\":[-1.0,4.0,-1.0], \"ROTAT\":[0.0,0.0,0.0], \"SCALE\":[3.0,3.0,3.0]}\n"
                                       "  ]\n"
                                       "}\n";

/* The stock box (walls and light unchanged) showing off the extension materials: a smooth
 * glass sphere, an ideal mirror sphere and a rough GGX gold box. Objects rest 5 mm above the
 * floor slab. */
static const char cornell_glass_json[] =
    "{\n"
    "  \"Materials\": {\n" CORNELL_ROOM_MATERIALS
    "    \"glass\": {\"TYPE\":\"Dielectric\", \"RGB\":[1.0, 1.0, 1.0], \"IOR\":1.5},\n"
    "    \"mirror\": {\"TYPE\":\"Specular\", \"RGB\":[0.95, 0.95, 0.95]},\n"
    "    \"rough_gold\": {\"TYPE\":\"Conductor\", \"RGB\":[1.0, 0.78, 0.34], \"ROUGHNESS\":0.35}\n"
    "  },\n" CORNELL_CAMERA(
        "12", "cornell-glass") "  \"Objects\": [\n" CORNELL_ROOM_OBJECTS
                               "    {\"TYPE\":\"sphere\", \"MATERIAL\":\"glass\", \"TRANS\":[0.3,1.305,1.8], "
                               "\"SCALE\":[2.6,2.6,2.6]},\n"
                               "    {\"TYPE\":\"sphere\", \"MATERIAL\":\"mirror\", \"TRANS\":[2.4,1.505,-1.5], "
                               "\"SCALE\":[3.0,3.0,3.0]},\n"
                               "    {\"TYPE\":\"cube\", \"MATERIAL\":\"rough_gold\", \"TRANS\":[-2.2,2.005,-2.2], "
                               "\"ROTAT\":[0.0,30.0,0.0], \"SCALE\":[2.2,4.0,2.2]}\n"
                               "  ]\n"
                               "}\n";

/* ---- Ray Tracing in One Weekend, final scene ---------------------------------------------------
 * Same construction and random-draw order as the book (Shirley, v3/v4): a 22x22 grid of
 * radius-0.2 spheres with material probabilities 0.8 diffuse / 0.15 metal / 0.05 glass. The
 * book's metal "fuzz" in [0, 0.5) becomes our GGX ROUGHNESS (alpha = fuzz^2). The book's sky is
 * a white-to-blue gradient; ours is constant, so we use its average-ish colour (0.7, 0.8, 1.0). */
#define RTOW_SEED 20201207u

static int add_named(scene *s, const char *name, material m, char *err, size_t errlen) {
    int id = scene_add_material(s, name, m);
    if (id < 0) snprintf(err, errlen, "builtin:rtow: out of memory");
    return id;
}

/* rtow's materials through the host constructor: roughness is the book's fuzz (GGX alpha =
 * fuzz^2; a float product is exact in double, so it rounds as the float product did). */
static material make_mat(material_kind kind, vec3 albedo, float roughness) {
    material_params p = material_params_default(kind);
    p.rgb = albedo;
    p.roughness = roughness;
    return material_from_params(kind, &p);
}

static int add_ball(scene *s, vec3 center, float radius, int mat, char *err, size_t errlen) {
    /* spheres have diameter 1 before the transform */
    if (scene_add_sphere(s, xform_trs(center, v3s(0.0f), v3s(2.0f * radius)), mat)) {
        snprintf(err, errlen, "builtin:rtow: out of memory");
        return -1;
    }
    return 0;
}

static int build_rtow(scene *s, char *err, size_t errlen) {
    s->camera.eye = v3(13.0f, 2.0f, 3.0f);
    s->camera.lookat = v3(0.0f, 0.0f, 0.0f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 20.0f;        /* the book's vfov is the full vertical angle */
    s->camera.aperture_radius = 0.05f; /* book: aperture 0.1 = lens diameter */
    s->camera.focus_distance = 10.0f;
    s->camera.width = 600; /* the book's 3:2 frame at half its 1200 width */
    s->camera.height = 400;
    s->spp = 256;
    s->max_depth = 50;
    s->env_radiance = v3(0.7f, 0.8f, 1.0f);
    const char *fname = "rtow";
    s->output_name = malloc(strlen(fname) + 1);
    if (!s->output_name) {
        snprintf(err, errlen, "builtin:rtow: out of memory");
        return -1;
    }
    memcpy(s->output_name, fname, strlen(fname) + 1);

    int ground = add_named(s, "ground", make_mat(MAT_DIFFUSE, v3s(0.5f), 0.0f), err, errlen);
    int glass = add_named(s, "glass", make_mat(MAT_DIELECTRIC, v3s(1.0f), 0.0f), err, errlen);
    if (ground < 0 || glass < 0) return -1;
    if (add_ball(s, v3(0.0f, -1000.0f, 0.0f), 1000.0f, ground, err, errlen)) return -1;

    pcg32 rng = pcg32_seed(RTOW_SEED, 0);
    int n = 0;
    for (int a = -11; a < 11; ++a) {
        for (int b = -11; b < 11; ++b) {
            float choose = pcg32_float(&rng);
            float cx = (float)a + 0.9f * pcg32_float(&rng);
            float cz = (float)b + 0.9f * pcg32_float(&rng);
            vec3 center = v3(cx, 0.2f, cz);
            if (!(vlen(vsub(center, v3(4.0f, 0.2f, 0.0f))) > 0.9f)) continue;
            int mat;
            char name[32];
            if (choose < 0.8f) {
                /* random() * random() per channel, as in the book */
                float c[6];
                for (int i = 0; i < 6; ++i) c[i] = pcg32_float(&rng);
                snprintf(name, sizeof name, "diffuse_%d", n);
                mat = add_named(s, name, make_mat(MAT_DIFFUSE, v3(c[0] * c[3], c[1] * c[4], c[2] * c[5]), 0.0f), err,
                                errlen);
            } else if (choose < 0.95f) {
                float c[3];
                for (int i = 0; i < 3; ++i) c[i] = 0.5f + 0.5f * pcg32_float(&rng);
                float fuzz = 0.5f * pcg32_float(&rng);
                snprintf(name, sizeof name, "metal_%d", n);
                mat = add_named(s, name, make_mat(MAT_CONDUCTOR, v3(c[0], c[1], c[2]), fuzz), err, errlen);
            } else {
                mat = glass;
            }
            if (mat < 0 || add_ball(s, center, 0.2f, mat, err, errlen)) return -1;
            ++n;
        }
    }
    int brown = add_named(s, "big_diffuse", make_mat(MAT_DIFFUSE, v3(0.4f, 0.2f, 0.1f), 0.0f), err, errlen);
    int metal = add_named(s, "big_metal", make_mat(MAT_MIRROR, v3(0.7f, 0.6f, 0.5f), 0.0f), err, errlen);
    if (brown < 0 || metal < 0) return -1;
    if (add_ball(s, v3(0.0f, 1.0f, 0.0f), 1.0f, glass, err, errlen)) return -1;
    if (add_ball(s, v3(-4.0f, 1.0f, 0.0f), 1.0f, brown, err, errlen)) return -1;
    if (add_ball(s, v3(4.0f, 1.0f, 0.0f), 1.0f, metal, err, errlen)) return -1; /* fuzz 0: mirror */
    return 0;
}

const char *scene_builtin_json(const char *name) {
    if (strcmp(name, "cornell") == 0) return cornell_json;
    if (strcmp(name, "cornell-glass") == 0) return cornell_glass_json;
    return NULL;
}

int scene_load_builtin(scene **out, const char *name, char *err, size_t errlen) {
    *out = NULL;
    if (!name) name = "";
    if (strcmp(name, "cornell") == 0)
        return scene_load_json_text(out, cornell_json, "builtin:cornell", NULL, err, errlen);
    if (strcmp(name, "cornell-glass") == 0)
        return scene_load_json_text(out, cornell_glass_json, "builtin:cornell-glass", NULL, err, errlen);
    if (strcmp(name, "rtow") == 0) {
        scene *s = scene_create();
        if (!s) {
            snprintf(err, errlen, "builtin:rtow: out of memory");
            return -1;
        }
        if (build_rtow(s, err, errlen)) {
            scene_destroy(s);
            return -1;
        }
        *out = s;
        return 0;
    }
    if (strncmp(name, "smallvcm", 8) == 0 && name[8] >= '0' && name[8] <= '3' && name[9] == 0) {
        scene *s = scene_create();
        if (!s) {
            snprintf(err, errlen, "builtin:%s: out of memory", name);
            return -1;
        }
        if (scene_build_smallvcm(s, name[8] - '0', err, errlen)) {
            scene_destroy(s);
            return -1;
        }
        *out = s;
        return 0;
    }
    snprintf(err, errlen, "%s: no such built-in scene (built-ins: cornell, cornell-glass, rtow, smallvcm0-3)", name);
    return -1;
}
