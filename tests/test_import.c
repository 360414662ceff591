/* The import layer: the table of formats (recognition, refusal, mesh dispatch), the parameter
 * module every reader shares (params.h), the JSON material table against MATERIAL_KINDS, the
 * MATRIX transform key, and the one field-of-view convention (full vertical angle inside, the
 * course's half angle in scene JSON's FOVY). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/json_internal.h"
#include "import/params.h"
#include "scene/scene.h"
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_tmp[256];

static int contains(const char *hay, const char *needle) { return needle == NULL || strstr(hay, needle) != NULL; }

static const char *write_tmp(const char *name, const char *content) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fwrite(content, 1, strlen(content), f);
    fclose(f);
    return path;
}

typedef struct warnings {
    int n;
    char text[4096];
} warnings;

static void collect(void *user, const char *msg) {
    warnings *w = user;
    w->n++;
    size_t used = strlen(w->text);
    snprintf(w->text + used, sizeof w->text - used, "%s\n", msg);
}

/* ---- the table of formats ------------------------------------------------------------------------ */
static const char *detected(const char *path, const char *head) {
    return scene_format_detect(path, head, strlen(head))->name;
}

static void test_detect(void) {
    CHECK(!strcmp(detected("a.json", "{\"Camera\":{}}"), "caustic JSON"), "json");
    CHECK(!strcmp(detected("a", "  // c\n{\"Camera\":{}}"), "caustic JSON"), "json by content");
    CHECK(!strcmp(detected("a.json", "{\"asset\":{\"version\":\"2.0\"}}"), "glTF 2.0"), "gltf by content");
    CHECK(!strcmp(detected("a.bin", "glTF\x02"), "glTF 2.0"), "glb magic");
    CHECK(!strcmp(detected("m.OBJ", "v 0 0 0\n"), "Wavefront OBJ"), "obj extension, any case");
    CHECK(!strcmp(detected("m", "ply\nformat ascii 1.0\n"), "PLY"), "ply magic");
    CHECK(!strcmp(detected("s.txt", "MATERIAL 0\nRGB 1 1 1\n"), "CIS 565 text"), "cis text");
    CHECK(!strcmp(detected("s", "CAMERA\nRES 8 8\n"), "CIS 565 text"), "cis text before pbrt's Camera");
    CHECK(!strcmp(detected("s.pbrt", "Film \"rgb\"\n"), "pbrt"), "pbrt extension");
    CHECK(!strcmp(detected("s.pbrt.gz", "\x1f\x8b"), "pbrt"), "gzipped pbrt");
    CHECK(!strcmp(detected("s", "LookAt 0 0 5 0 0 0 0 1 0\n"), "pbrt"), "pbrt by content");
    CHECK(!strcmp(detected("s", "<?xml version=\"1.0\"?>\n<scene version=\"3.0.0\">"), "Mitsuba XML"), "mitsuba");
    CHECK(!strcmp(detected("s.xml", "<scene version=\"0.5.0\">"), "Mitsuba XML"), "mitsuba .xml");
    CHECK(!strcmp(detected("s.scn", "scene.camera.lookat = 0 0 0\n"), "LuxCore"), "luxcore");
    CHECK(!strcmp(detected("s", "what is this"), "caustic JSON"), "unknown text reads as JSON (its syntax error)");
    /* every row's extensions lead back to it, and every row can be told apart */
    for (const scene_format *f = scene_formats(); f->name; ++f) {
        char ext[32];
        size_t n = strcspn(f->extensions, "|");
        snprintf(ext, sizeof ext, "x%.*s", (int)n, f->extensions);
        CHECK(scene_format_by_extension(ext) == f, "%s: extension %s names another row", f->name, ext);
        CHECK(f->load || (f->refusal && *f->refusal), "%s: neither a reader nor a refusal", f->name);
    }
}

static void expect_refused(const char *name, const char *content, const char *n1, const char *n2) {
    const char *path = write_tmp(name, content);
    scene *s = (scene *)&s;
    char err[1024] = "";
    int rc = scene_load_file(&s, path, NULL, err, sizeof err);
    CHECK(rc == -1 && s == NULL, "%s: expected a refusal", name);
    CHECK(contains(err, name) && contains(err, n1) && contains(err, n2) && !strchr(err, '\n'), "%s: %s", name, err);
}

static void test_refusals(void) {
    /* pbrt files are read (tests/test_pbrt.c); through the table, a bad one is its reader's message */
    expect_refused("scene.pbrt", "LookAt 0 0 5  0 0 0  0 1 0\nCamera \"perspective\"\n", "scene.pbrt", "no WorldBegin");
    /* Mitsuba XML is read (tests/test_mitsuba.c): an empty one has nothing to render */
    expect_refused("scene.xml", "<?xml version=\"1.0\"?>\n<scene version=\"3.0.0\">\n</scene>\n", "nothing caustic",
                   "can render");
    expect_refused("scene.scn", "scene.camera.lookat = 0 0 0\n", "LuxCore", "it reads caustic JSON");
    /* a mesh FILE the table has no mesh reader for */
    scene *s = scene_create();
    char err[512] = "";
    CHECK(scene_load_mesh_file(s, "/x/model.pbrt", xform_identity(), 0, err, sizeof err) == -1 &&
              contains(err, "model.pbrt") && contains(err, "unsupported mesh format") && contains(err, ".obj") &&
              contains(err, ".glb"),
          "mesh dispatch: %s", err);
    scene_destroy(s);
}

/* ---- params ------------------------------------------------------------------------------------- */
static void test_params(void) {
    char err[512];
    warnings w;
    memset(&w, 0, sizeof w);
    scene *s = scene_create();
    s->warn = collect;
    s->warn_user = &w;

    /* lenient: out of range is clamped with one warning naming FILE:LINE; unknown names get a
     * suggestion; unused ones are reported; defaults stay */
    prm_ctx c;
    prm_init(&c, "room.pbrt", 0, err, sizeof err);
    c.line_format = 1;
    prm_list l;
    prm_list_init(&l, &c, "material \"coateddiffuse\"");
    char where[PRM_WHERE];
    double one = 1.7, three[3] = {0.5, 0.5, 0.5};
    prm_line(where, 12);
    CHECK(prm_add_numbers(&l, "roughness", &one, 1, where) == 0, "add");
    prm_line(where, 13);
    CHECK(prm_add_numbers(&l, "reflectance", three, 3, where) == 0, "add");
    prm_line(where, 14);
    CHECK(prm_add_string(&l, "remaproughnes", "true", where) == 0, "add");
    prm_line(where, 15);
    CHECK(prm_add_numbers(&l, "thickness", &one, 1, where) == 0, "add");
    prm_line(where, 16);
    CHECK(prm_add_numbers(&l, "roughness", &one, 1, where) == -1 && contains(err, "room.pbrt:16:") &&
              contains(err, "given twice") && contains(err, "first at 12"),
          "duplicate: %s", err);
    double r = 0, g = 0;
    vec3 kd;
    const char *str;
    CHECK(prm_float(&l, "roughness", 0.0, 0.0, 1.0, "", &r) == 0 && r == 1.0, "clamped: %g", r);
    CHECK(prm_vec3(&l, "reflectance", v3s(0.0f), 0.0, 1.0, "", &kd) == 0 && kd.x == 0.5f, "vec3");
    CHECK(prm_float(&l, "g", 0.25, -1.0, 1.0, "", &g) == 0 && g == 0.25, "default");
    CHECK(prm_string(&l, "reflectance", "x", &str) == -1 && contains(err, "room.pbrt:13:") &&
              contains(err, "expected a string, got a number"),
          "type: %s", err);
    static const char *const known[] = {"roughness", "reflectance", "remaproughness", "thickness", "g", NULL};
    CHECK(prm_check_known(&l, known) == 0, "lenient unknown");
    CHECK(prm_report_unused(&l) == 0, "lenient unused");
    prm_flush(&c, s, 1);
    CHECK(w.n == 3, "three warnings, got %d: %s", w.n, w.text);
    CHECK(contains(w.text,
                   "room.pbrt:12: parameter \"roughness\" of material \"coateddiffuse\": 1.7 is outside [0, 1]; "
                   "clamped to 1"),
          "clamp warning: %s", w.text);
    CHECK(contains(w.text, "room.pbrt:14: unknown parameter \"remaproughnes\"") &&
              contains(w.text, "did you mean \"remaproughness\""),
          "did-you-mean: %s", w.text);
    CHECK(contains(w.text, "room.pbrt:15: parameter \"thickness\" of material \"coateddiffuse\" is not used"),
          "unused: %s", w.text);
    prm_list_free(&l);

    /* strict: the same are errors */
    prm_init(&c, "room.pbrt", 1, err, sizeof err);
    c.line_format = 1;
    prm_list_init(&l, &c, "light \"spot\"");
    double angle = 120.0;
    prm_line(where, 3);
    prm_add_numbers(&l, "coneangle", &angle, 1, where);
    double out = 0;
    CHECK(prm_float(&l, "coneangle", 30.0, 0.0, 90.0, "degrees", &out) == -1 && contains(err, "room.pbrt:3:") &&
              contains(err, "outside [0, 90] degrees") && contains(err, "--strict"),
          "strict range: %s", err);
    prm_list_free(&l);
    prm_list_init(&l, &c, "light \"spot\"");
    prm_add_numbers(&l, "conedelta", &angle, 1, where);
    CHECK(prm_report_unused(&l) == -1 && contains(err, "is not used") && contains(err, "--strict"), "strict unused: %s",
          err);
    prm_list_free(&l);
    prm_flush(&c, s, 0);

    /* JSON paths */
    prm_init(&c, "a.json", 0, err, sizeof err);
    char p[PRM_WHERE], q[PRM_WHERE];
    prm_jkey(p, "Materials", "my mat");
    prm_jkey(q, p, "RGB");
    prm_fail(&c, q, "bad");
    CHECK(!strcmp(err, "a.json: Materials[\"my mat\"].RGB: bad"), "json path: %s", err);
    CHECK(prm_enum(&c, "Lights[0].TYPE", "pointt", "light TYPE", (const char *const[]){"point", "directional", NULL}) ==
                  -1 &&
              contains(err, "did you mean \"point\""),
          "enum: %s", err);
    scene_destroy(s);
}

/* ---- the JSON material table follows MATERIAL_KINDS -------------------------------------------------- */
static void test_material_table(void) {
    char err[256] = "";
    CHECK(json_material_table_check(err, sizeof err) == 0, "%s", err);
    for (int k = 0; k < MAT_KIND_COUNT; ++k) {
        /* a material of every kind, by the kind's own name, loads as that kind */
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"Materials\":{\"m\":{\"TYPE\":\"%s\",\"RGB\":[0.5,0.5,0.5],\"SPECRGB\":[0.2,0.2,0.2],"
                 "\"EXPONENT\":10}},\"Camera\":{\"RES\":[8,8],\"FOVY\":30,\"EYE\":[0,0,5],\"LOOKAT\":[0,0,0]},"
                 "\"Objects\":[{\"TYPE\":\"sphere\",\"MATERIAL\":\"m\"}]}",
                 material_kind_name(k));
        scene *s = NULL;
        char e[512] = "";
        int rc = scene_load_json_text(&s, json, "kinds.json", NULL, e, sizeof e);
        CHECK(rc == 0 && s && s->materials[scene_find_material(s, "m")].kind == k, "kind %s: %s", material_kind_name(k),
              e);
        if (s) scene_destroy(s);
    }
}

/* ---- MATRIX ------------------------------------------------------------------------------------------ */
#define CAM "\"Camera\":{\"RES\":[8,8],\"FOVY\":30,\"EYE\":[0,0,5],\"LOOKAT\":[0,0,0]}"
#define MAT "\"Materials\":{\"w\":{\"TYPE\":\"Diffuse\",\"RGB\":[0.5,0.5,0.5]}}"

static scene *load_objects(const char *objects, char *err, size_t errlen) {
    char json[2048];
    snprintf(json, sizeof json, "{" MAT "," CAM ",\"Objects\":[%s]}", objects);
    scene *s = NULL;
    if (scene_load_json_text(&s, json, "m.json", NULL, err, errlen)) return NULL;
    return s;
}

static int xform_near(const xform *a, const xform *b, float tol) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
            if (fabsf(a->m[i][j] - b->m[i][j]) > tol) return 0;
    return 1;
}

static void test_matrix(void) {
    char err[512] = "";
    /* a translation as MATRIX is TRANS; MATRIX composes after TRANS/ROTAT/SCALE */
    scene *s = load_objects("{\"TYPE\":\"sphere\",\"MATERIAL\":\"w\",\"TRANS\":[1,2,3],\"ROTAT\":[0,90,0]},"
                            "{\"TYPE\":\"sphere\",\"MATERIAL\":\"w\",\"ROTAT\":[0,90,0],"
                            "\"MATRIX\":[1,0,0,1, 0,1,0,2, 0,0,1,3, 0,0,0,1]},"
                            "{\"TYPE\":\"sphere\",\"MATERIAL\":\"w\",\"SCALE\":[2,2,2],"
                            "\"TRANSFORM\":[0,-1,0,0, 1,0,0,0, 0,0,1,5, 0,0,0,1]}",
                            err, sizeof err);
    CHECK(s && s->nspheres == 3, "matrix scene: %s", err);
    if (s && s->nspheres == 3) {
        CHECK(xform_near(&s->spheres[0].to_world, &s->spheres[1].to_world, 1e-6f), "MATRIX translation == TRANS");
        /* (x, y, z) -> scale 2 -> rotate 90 degrees about z -> +5 z: (1,0,0) goes to (0,2,5) */
        vec3 p = xform_point(&s->spheres[2].to_world, v3(1, 0, 0));
        CHECK(fabsf(p.x) < 1e-6f && fabsf(p.y - 2.0f) < 1e-6f && fabsf(p.z - 5.0f) < 1e-6f,
              "MATRIX after SCALE: (%g %g %g)", p.x, p.y, p.z);
        scene_destroy(s);
    }
    struct {
        const char *obj, *n1, *n2;
    } bad[] = {
        {"{\"TYPE\":\"cube\",\"MATERIAL\":\"w\",\"MATRIX\":[1,0,0,0, 0,1,0,0, 0,0,1,0]}", "Objects[0].MATRIX",
         "expected 16 numbers, got 12"},
        {"{\"TYPE\":\"cube\",\"MATERIAL\":\"w\",\"MATRIX\":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,1,1]}", "Objects[0].MATRIX",
         "last row must be [0, 0, 0, 1]"},
        {"{\"TYPE\":\"cube\",\"MATERIAL\":\"w\",\"MATRIX\":[1,0,0,0, 0,1,0,0, 0,0,0,0, 0,0,0,1]}", "Objects[0].MATRIX",
         "singular"},
        {"{\"TYPE\":\"cube\",\"MATERIAL\":\"w\",\"MATRIX\":[1,0,0,0, 0,1,0,0, 0,0,1,\"x\", 0,0,0,1]}",
         "Objects[0].MATRIX[11]", "expected a number"},
        {"{\"TYPE\":\"quad\",\"MATERIAL\":\"w\",\"ORIGIN\":[0,0,0],\"U\":[1,0,0],\"V\":[0,1,0],"
         "\"MATRIX\":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]}",
         "Objects[0].MATRIX", "not both"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        err[0] = '\0';
        s = load_objects(bad[i].obj, err, sizeof err);
        CHECK(!s && contains(err, "m.json: ") && contains(err, bad[i].n1) && contains(err, bad[i].n2), "bad %zu: %s", i,
              err);
        if (s) scene_destroy(s);
    }
}

/* ---- one field-of-view convention -------------------------------------------------------------------- */
static void test_fov(void) {
    /* JSON FOVY 30 (the course's half angle) is a 60 degree view to the library and the kernel */
    const char *path = write_tmp("cam.json", "{" CAM "}");
    caustic_scene *cs = NULL;
    char err[512] = "";
    CHECK(caustic_scene_create(&cs, err, sizeof err) == 0, "%s", err);
    if (!cs) return;
    CHECK(caustic_scene_load_camera(cs, path, err, sizeof err) == 0, "%s", err);
    caustic_camera c;
    caustic_scene_get_camera(cs, &c);
    CHECK(fabs(c.fov_y - 60.0) < 1e-9, "JSON FOVY 30 -> fov_y %g, expected the full angle 60", c.fov_y);
    /* and what the library writes reads back as the same view */
    c.fov_y = 47.5;
    char json[1024];
    CHECK(caustic_camera_to_json(&c, 64, 32, json, sizeof json) > 0 && contains(json, "\"FOVY\": 23.75"),
          "written FOVY is the half angle: %s", json);
    path = write_tmp("cam2.json", json);
    CHECK(caustic_scene_load_camera(cs, path, err, sizeof err) == 0, "%s", err);
    caustic_camera back;
    caustic_scene_get_camera(cs, &back);
    CHECK(back.fov_y == 47.5, "round trip: %g", back.fov_y);
    /* the kernel's camera: tan_half_fovy = tan(full / 2) */
    scene *s = scene_create();
    s->camera.fovy_deg = 60.0f;
    camera k;
    CHECK(scene_camera(s, 8, 8, &k, err, sizeof err) == 0 &&
              fabsf(k.tan_half_fovy - tanf(30.0f * 3.14159265f / 180.0f)) < 1e-6f,
          "kernel camera");
    s->camera.fovy_deg = 180.0f;
    CHECK(scene_camera(s, 8, 8, &k, err, sizeof err) == -1 && contains(err, "full vertical field of view") &&
              contains(err, "FOVY, half"),
          "the message names the convention: %s", err);
    scene_destroy(s);
    caustic_scene_free(cs);
}

int main(void) {
    snprintf(g_tmp, sizeof g_tmp, "/tmp/caustic_test_import_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    test_detect();
    test_refusals();
    test_params();
    test_material_table();
    test_matrix();
    test_fov();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return test_result("test_import");
}
