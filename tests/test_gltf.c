/* glTF 2.0 import (src/import/gltf.cpp) on files this test writes: external, embedded (data URI)
 * and binary (.glb) buffers, node hierarchy and transforms, indexed / non-indexed / strip
 * primitives, normals, uvs and tangents, materials (metallic-roughness, emissive strength,
 * transmission + IOR, alpha mask with a texture), override of the file's materials, camera,
 * point/spot/directional lights, and bad files (one message naming the file and the element,
 * nothing left behind). Then renders: the metallic-roughness and rough-glass materials in a white
 * furnace (no energy gain, path tracing and the bidirectional integrators agree) and an alpha
 * cutout. Finally the Khronos samples of /work/shared/assets/gltf (skipped when absent).
 * Exits 77 (skipped) in builds without tinygltf. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "api/api_internal.h"
#include "image/image.h"
#include "kernel/texture.h"
#include "scene/scene.h"
#include "import/import.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int stbi_write_png(char const *filename, int w, int h, int comp, const void *data, int stride_in_bytes);

static char g_tmp[256];

static void write_bytes(const char *name, const void *data, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fwrite(data, 1, n, f);
    fclose(f);
}
static const char *tmp_path(const char *name) {
    static char path[4][512];
    static int k = 0;
    k = (k + 1) & 3;
    snprintf(path[k], sizeof path[k], "%s/%s", g_tmp, name);
    return path[k];
}

static char *base64(const unsigned char *d, size_t n) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * ((n + 2) / 3) + 1), *p = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        *p++ = t[v >> 18 & 63];
        *p++ = t[v >> 12 & 63];
        *p++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *p++ = i + 2 < n ? t[v & 63] : '=';
    }
    *p = 0;
    return o;
}

/* The test model's buffer: a unit quad in the xy plane facing +z (4 vertices), then a lone
 * triangle for a non-indexed primitive (3 vertices). Layout (bytes): positions 0 (4 x 12),
 * normals 48, uvs 96 (4 x 8), tangents 128 (4 x 16), ushort indices 192 (6 x 2), lone triangle
 * positions 204 (3 x 12) -> 240 bytes. */
#define BIN_SIZE 240
static void make_bin(unsigned char *b) {
    float pos[12] = {-0.5f, -0.5f, 0, 0.5f, -0.5f, 0, 0.5f, 0.5f, 0, -0.5f, 0.5f, 0};
    float nrm[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    float uv[8] = {0, 1, 1, 1, 1, 0, 0, 0}; /* glTF: v down the image */
    float tan[16] = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
    uint16_t idx[6] = {0, 1, 2, 0, 2, 3};
    float lone[9] = {0, 0, 1, 1, 0, 1, 0, 1, 1};
    memset(b, 0, BIN_SIZE);
    memcpy(b, pos, 48);
    memcpy(b + 48, nrm, 48);
    memcpy(b + 96, uv, 32);
    memcpy(b + 128, tan, 64);
    memcpy(b + 192, idx, 12);
    memcpy(b + 204, lone, 36);
}

/* The JSON of the test model; BUFFER is the buffers array. Node 0 (matrix: translate z -2) has
 * child node 1 (TRS: translate x 1, rotate 90 degrees about z, scale 2) holding mesh 0. */
static char *model_json(const char *buffer, const char *materials, const char *extra_nodes, const char *extra) {
    static const char fmt[] =
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0%s]}],"
        "\"nodes\":[{\"matrix\":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,-2,1],\"children\":[1]},"
        "{\"translation\":[1,0,0],\"rotation\":[0,0,0.70710678,0.70710678],\"scale\":[2,2,2],\"mesh\":0}%s],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"TEXCOORD_0\":2,\"TANGENT\":3},"
        "\"indices\":4,\"material\":0},{\"attributes\":{\"POSITION\":5},\"material\":1}]}],"
        "\"accessors\":["
        "{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"},"
        "{\"bufferView\":0,\"byteOffset\":48,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"},"
        "{\"bufferView\":0,\"byteOffset\":96,\"componentType\":5126,\"count\":4,\"type\":\"VEC2\"},"
        "{\"bufferView\":0,\"byteOffset\":128,\"componentType\":5126,\"count\":4,\"type\":\"VEC4\"},"
        "{\"bufferView\":1,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"},"
        "{\"bufferView\":2,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":192},{\"buffer\":0,\"byteOffset\":192,\"byteLength\":12},"
        "{\"buffer\":0,\"byteOffset\":204,\"byteLength\":36}],"
        "\"buffers\":[%s],\"materials\":[%s]%s}";
    size_t n = sizeof fmt + strlen(buffer) + strlen(materials) + strlen(extra_nodes) + strlen(extra) + 64;
    char *o = malloc(n);
    snprintf(o, n, fmt, extra_nodes[0] ? ",2,3,4,5" : "", extra_nodes, buffer, materials, extra);
    return o;
}
static const char *k_materials =
    "{\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.5,0.6,0.7,1],\"metallicFactor\":0.2,\"roughnessFactor\":0.4},"
    "\"emissiveFactor\":[1,0.5,0],\"extensions\":{\"KHR_materials_emissive_strength\":{\"emissiveStrength\":3}}},"
    "{\"pbrMetallicRoughness\":{\"roughnessFactor\":0.3},"
    "\"extensions\":{\"KHR_materials_transmission\":{\"transmissionFactor\":1},\"KHR_materials_ior\":{\"ior\":1.33}}}";

static void write_glb(const char *name, const char *json, const unsigned char *bin, size_t binlen) {
    size_t jl = strlen(json), jpad = (jl + 3) & ~(size_t)3, bpad = (binlen + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jpad + 8 + bpad;
    unsigned char *g = calloc(1, total);
    uint32_t h[3] = {0x46546C67u, 2, (uint32_t)total};
    memcpy(g, h, 12);
    uint32_t c0[2] = {(uint32_t)jpad, 0x4E4F534Au};
    memcpy(g + 12, c0, 8);
    memcpy(g + 20, json, jl);
    memset(g + 20 + jl, ' ', jpad - jl);
    uint32_t c1[2] = {(uint32_t)bpad, 0x004E4942u};
    memcpy(g + 20 + jpad, c1, 8);
    memcpy(g + 28 + jpad, bin, binlen);
    write_bytes(name, g, total);
    free(g);
}

static scene *load_ok(const char *path, int material, int flags, const char *what) {
    scene *s = scene_create();
    char err[1024] = "";
    int rc = scene_load_gltf(s, path, xform_identity(), material, flags, err, sizeof err);
    CHECK(rc == 0, "%s: expected to load, got: %s", what, err);
    if (rc) {
        scene_destroy(s);
        return NULL;
    }
    return s;
}

static int near3(vec3 a, vec3 b, float tol) {
    return fabsf(a.x - b.x) < tol && fabsf(a.y - b.y) < tol && fabsf(a.z - b.z) < tol;
}
static int has_vertex(const scene *s, vec3 p) {
    for (size_t i = 0; i < s->nvertices; ++i)
        if (near3(s->positions[i], p, 1e-5f)) return (int)i;
    return -1;
}

static void check_model(scene *s, const char *what) {
    if (!s) return;
    CHECK(s->ntriangles == 3 && s->nvertices == 7, "%s: %zu triangles, %zu vertices (want 3, 7)", what, s->ntriangles,
          s->nvertices);
    /* (0.5, 0.5, 0) -> scale 2 -> rot z 90 -> (-1, 1, 0) -> + (1,0,0) -> parent z - 2 */
    int v = has_vertex(s, v3(0, 1, -2));
    CHECK(v >= 0, "%s: node transforms: vertex (0,1,-2) missing", what);
    if (v >= 0) {
        CHECK(fabsf(s->uvs[v].x - 1) < 1e-6f && fabsf(s->uvs[v].y - 1) < 1e-6f,
              "%s: uv (1,0) should read (1,1) (v flipped)", what);
        CHECK(near3(s->normals[v], v3(0, 0, 1), 1e-5f), "%s: normal", what);
        CHECK(s->has_tangents &&
                  near3(v3(s->tangents[4 * v], s->tangents[4 * v + 1], s->tangents[4 * v + 2]), v3(0, 1, 0), 1e-5f) &&
                  s->tangents[4 * v + 3] == 1.0f,
              "%s: tangent rotated to +y, handedness +1", what);
    }
    /* the lone triangle: (1,0,1) -> scale 2 -> (2,0,2) -> rot -> (0,2,2) -> (1,2,2) -> (1,2,0) */
    CHECK(has_vertex(s, v3(1, 2, 0)) >= 0, "%s: non-indexed primitive's vertex", what);
    CHECK(s->nmaterials == 2, "%s: %zu materials", what, s->nmaterials);
    if (s->nmaterials == 2) {
        const material *a = &s->materials[0], *b = &s->materials[1];
        CHECK(a->kind == MAT_PBR && near3(a->albedo, v3(0.5f, 0.6f, 0.7f), 1e-6f) &&
                  fabsf(a->metallic - 0.2f) < 1e-6f && fabsf(a->alpha - 0.16f) < 1e-6f,
              "%s: metallic-roughness factors", what);
        CHECK(near3(a->emission, v3(3, 1.5f, 0), 1e-5f), "%s: emissive x KHR_materials_emissive_strength", what);
        CHECK(b->kind == MAT_ROUGH_GLASS && fabsf(b->ior - 1.33f) < 1e-6f && fabsf(b->alpha - 0.09f) < 1e-6f,
              "%s: transmission + ior -> rough glass", what);
        CHECK(s->triangles[0].material == 0 && s->triangles[2].material == 1, "%s: per-primitive materials", what);
    }
}

static void test_buffers(void) {
    unsigned char bin[BIN_SIZE];
    make_bin(bin);
    write_bytes("quad.bin", bin, BIN_SIZE);
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    char *j = model_json(buf, k_materials, "", "");
    write_bytes("external.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("external.gltf"), -1, 0, "external buffer");
    check_model(s, "external buffer");
    scene_destroy(s);

    char *b64 = base64(bin, BIN_SIZE);
    char *ebuf = malloc(strlen(b64) + 128);
    sprintf(ebuf, "{\"byteLength\":%d,\"uri\":\"data:application/octet-stream;base64,%s\"}", BIN_SIZE, b64);
    j = model_json(ebuf, k_materials, "", "");
    write_bytes("embedded.gltf", j, strlen(j));
    free(j);
    free(ebuf);
    free(b64);
    s = load_ok(tmp_path("embedded.gltf"), -1, 0, "embedded buffer");
    check_model(s, "embedded buffer");
    scene_destroy(s);

    snprintf(buf, sizeof buf, "{\"byteLength\":%d}", BIN_SIZE);
    j = model_json(buf, k_materials, "", "");
    write_glb("model.glb", j, bin, BIN_SIZE);
    free(j);
    s = load_ok(tmp_path("model.glb"), -1, 0, "glb");
    check_model(s, "glb");
    scene_destroy(s);

    /* overriding the file's materials, and the same file placed twice reuses its materials */
    s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    m.albedo = v3s(0.5f);
    scene_add_material(s, "mine", m);
    char err[512] = "";
    CHECK(scene_load_gltf(s, tmp_path("model.glb"), xform_identity(), 0, 0, err, sizeof err) == 0, "override: %s", err);
    CHECK(s->nmaterials == 1 && s->triangles[0].material == 0 && s->triangles[2].material == 0,
          "override: every triangle 'mine'");
    CHECK(scene_load_gltf(s, tmp_path("model.glb"), xform_identity(), -1, 0, err, sizeof err) == 0 &&
              scene_load_gltf(s, tmp_path("model.glb"), xform_trs(v3(5, 0, 0), v3s(0), v3s(1)), -1, 0, err,
                              sizeof err) == 0,
          "placed twice: %s", err);
    CHECK(s->nmaterials == 3 && s->ntriangles == 9, "placed twice: %zu materials (want 3), %zu triangles",
          s->nmaterials, s->ntriangles);
    scene_destroy(s);

    /* a triangle strip of 4 vertices is 2 triangles */
    static const char strip[] =
        "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"mesh\":0}],\"meshes\":[{\"primitives\":[{\"attributes\":{"
        "\"POSITION\":0},"
        "\"mode\":5}]}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":48}],\"buffers\":[{\"byteLength\":240,\"uri\":\"quad.bin\"}]}";
    write_bytes("strip.gltf", strip, strlen(strip));
    s = load_ok(tmp_path("strip.gltf"), -1, 0, "strip, no scene, no material");
    if (s) {
        CHECK(s->ntriangles == 2 && s->nmaterials == 1 && s->materials[0].kind == MAT_PBR &&
                  s->materials[0].metallic == 1.0f && s->materials[0].alpha == 1.0f,
              "strip: 2 triangles with glTF's default material (metallic 1, roughness 1)");
        scene_destroy(s);
    }
}

static void test_camera_lights(void) {
    static const char nodes[] = ",{\"camera\":0,\"translation\":[0,0,5]},{\"translation\":[1,2,3],\"extensions\":{"
                                "\"KHR_lights_punctual\":{\"light\":0}}},"
                                "{\"translation\":[0,4,0],\"rotation\":[-0.70710678,0,0,0.70710678],\"extensions\":{"
                                "\"KHR_lights_punctual\":{\"light\":1}}},"
                                "{\"extensions\":{\"KHR_lights_punctual\":{\"light\":2}}}";
    static const char extra[] =
        ",\"cameras\":[{\"type\":\"perspective\",\"perspective\":{\"yfov\":0.5,\"aspectRatio\":2,\"znear\":0.1}}],"
        "\"extensionsUsed\":[\"KHR_lights_punctual\"],\"extensions\":{\"KHR_lights_punctual\":{\"lights\":["
        "{\"type\":\"point\",\"color\":[1,0.5,0.25],\"intensity\":10},"
        "{\"type\":\"spot\",\"intensity\":20,\"spot\":{\"innerConeAngle\":0.2,\"outerConeAngle\":0.5}},"
        "{\"type\":\"directional\",\"intensity\":3}]}}";
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    char *j = model_json(buf, k_materials, nodes, extra);
    write_bytes("lights.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("lights.gltf"), -1, GLTF_CAMERA | GLTF_LIGHTS, "camera and lights");
    if (!s) return;
    const camera_desc *c = &s->camera;
    CHECK(near3(c->eye, v3(0, 0, 5), 1e-5f) && near3(c->lookat, v3(0, 0, 4), 1e-5f) &&
              fabsf(c->fovy_deg - 28.6479f) < 1e-3f && c->width == 800 && c->height == 400,
          "camera: eye (%g %g %g) fovy %g %dx%d", c->eye.x, c->eye.y, c->eye.z, c->fovy_deg, c->width, c->height);
    CHECK(s->npunctual == 3, "%zu lights", s->npunctual);
    if (s->npunctual == 3) {
        const light *p = &s->punctual[0], *sp = &s->punctual[1], *d = &s->punctual[2];
        CHECK(p->kind == LIGHT_POINT && near3(p->p, v3(1, 2, 3), 1e-5f) && near3(p->intensity, v3(10, 5, 2.5f), 1e-5f),
              "point light");
        /* rotated -90 degrees about x: -z turns to -y; pointing down from (0,4,0) */
        CHECK(sp->kind == LIGHT_SPOT && near3(sp->p, v3(0, 4, 0), 1e-5f) && near3(sp->axis, v3(0, -1, 0), 1e-5f) &&
                  fabsf(sp->cos_inner - cosf(0.2f)) < 1e-5f && fabsf(sp->cos_outer - cosf(0.5f)) < 1e-5f,
              "spot light");
        CHECK(d->kind == LIGHT_DIRECTIONAL && near3(d->p, v3(0, 0, -1), 1e-5f) && near3(d->intensity, v3s(3), 1e-5f),
              "directional light");
    }
    scene_destroy(s);
    /* the whole-scene loader uses the camera and lights, and adds no environment */
    scene *w = NULL;
    char err[512] = "";
    CHECK(scene_load_gltf_scene(&w, tmp_path("lights.gltf"), err, sizeof err) == 0 && w, "whole scene: %s", err);
    if (w) {
        CHECK(w->npunctual == 3 && vis_black(w->env_radiance) && w->camera.height == 400,
              "whole scene keeps camera and lights");
        scene_destroy(w);
    }
    CHECK(scene_load_gltf_scene(&w, tmp_path("external.gltf"), err, sizeof err) == 0 && w, "whole scene: %s", err);
    if (w) {
        CHECK(w->env_radiance.x == 1.0f && w->camera.width == 800 && vlen(vsub(w->camera.eye, w->camera.lookat)) > 1.0f,
              "whole scene without lights or camera: white sky and a framing camera");
        scene_destroy(w);
    }
}

static void expect_fail(const char *name, const char *content, size_t len, const char *n1, const char *n2) {
    write_bytes(name, content, len);
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    scene_add_material(s, "keep", m);
    scene_add_cube(s, xform_identity(), 0);
    char err[1024];
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = 0;
    int rc = scene_load_gltf(s, tmp_path(name), xform_identity(), -1, GLTF_CAMERA | GLTF_LIGHTS, err, sizeof err);
    CHECK(rc == -1, "%s: expected failure", name);
    CHECK(strncmp(err, tmp_path(name), strlen(tmp_path(name))) == 0 && !strchr(err, '\n'),
          "%s: message '%s' should start with the path", name, err);
    CHECK(strstr(err, n1) && (!n2 || strstr(err, n2)), "%s: message '%s' should name '%s'%s%s", name, err, n1,
          n2 ? " and " : "", n2 ? n2 : "");
    CHECK(s->ntriangles == 12 && s->nvertices == 8 && s->nmaterials == 1 && s->ntextures == 0 && s->npunctual == 0,
          "%s: nothing may be left behind", name);
    scene_destroy(s);
}

static void test_bad(void) {
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    char *j = model_json(buf, k_materials, "", "");
    const char *cases[][4] = {
        {"count.gltf", "\"count\":4,\"type\":\"VEC3\"}", "\"count\":40,\"type\":\"VEC3\"}", "accessors[0]"},
        {"index.gltf", "\"material\":0}", "\"material\":7}", "material 7"},
        {"buffer.gltf", "quad.bin", "nothere.bin", "nothere.bin"},
        {"view.gltf", "\"byteOffset\":204,\"byteLength\":36", "\"byteOffset\":204,\"byteLength\":3600",
         "bufferViews[2]"},
        {"mode.gltf", "\"indices\":4,", "\"indices\":0,", "indices"},
        {"cycle.gltf", "\"mesh\":0}", "\"mesh\":0,\"children\":[0]}", "cycle"},
        {"required.gltf", "\"scene\":0,", "\"scene\":0,\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],",
         "KHR_draco"},
        {"quat.gltf", "[0,0,0.70710678,0.70710678]", "[0,0,0,0]", "rotation"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *at = strstr(j, cases[i][1]);
        CHECK(at != NULL, "case %s: pattern not in the model", cases[i][0]);
        if (!at) continue;
        size_t n = strlen(j) + strlen(cases[i][2]) + 1;
        char *b = malloc(n);
        memcpy(b, j, (size_t)(at - j));
        strcpy(b + (at - j), cases[i][2]);
        strcat(b, at + strlen(cases[i][1]));
        expect_fail(cases[i][0], b, strlen(b), cases[i][3], NULL);
        free(b);
    }
    /* issue 41, fault 2: a singular transform is named as such, not as "out of memory"; node
     * instancing is held to a triangle budget that names the copies; the bytes handed to
     * buffers[] are held to a budget (each entry naming a file gets its own copy; the file
     * itself is read once) */
    {
        const char *from = "[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,-2,1]", *at = strstr(j, from);
        char *b = malloc(strlen(j) + 64);
        memcpy(b, j, (size_t)(at - j));
        strcpy(b + (at - j), "[1,0,0,0, 2,0,0,0, 0,0,1,0, 0,0,-2,1]");
        strcat(b, at + strlen(from));
        expect_fail("singular.gltf", b, strlen(b), "singular node transform", NULL);
        free(b);
        from = "\"children\":[1]}";
        at = strstr(j, from);
        b = malloc(strlen(j) + 64);
        memcpy(b, j, (size_t)(at - j));
        strcpy(b + (at - j), "\"children\":[1,1]}");
        strcat(b, at + strlen(from));
        /* a node placed twice is one mesh placed twice (true instancing): the budget counts the 3
         * triangles held, so 5 lets it load and 2 does not */
        setenv("CAUSTIC_GLTF_MAX_TRIANGLES", "5", 1);
        write_bytes("instanced.gltf", b, strlen(b));
        scene *si = load_ok(tmp_path("instanced.gltf"), -1, 0, "instanced.gltf");
        if (si) {
            /* each of the node's primitives a mesh, placed twice */
            CHECK(si->ntriangles == 3 && si->nmeshes >= 1 && si->nplacements == 2 * si->nmeshes,
                  "instanced.gltf: %zu triangles held, %zu meshes, %zu placements", si->ntriangles, si->nmeshes,
                  si->nplacements);
            scene_destroy(si);
        }
        setenv("CAUSTIC_GLTF_MAX_TRIANGLES", "2", 1);
        expect_fail("instanced.gltf", b, strlen(b), "budget: 3 triangles held", "set CAUSTIC_GLTF_MAX_TRIANGLES");
        unsetenv("CAUSTIC_GLTF_MAX_TRIANGLES");
        free(b);
        char two[256];
        snprintf(two, sizeof two, "{\"byteLength\":%d,\"uri\":\"quad.bin\"},{\"byteLength\":%d,\"uri\":\"quad.bin\"}",
                 BIN_SIZE, BIN_SIZE);
        b = model_json(two, k_materials, "", "");
        char limit[32];
        snprintf(limit, sizeof limit, "%d", BIN_SIZE + BIN_SIZE / 2);
        setenv("CAUSTIC_GLTF_MAX_BUFFER_BYTES", limit, 1);
        expect_fail("twobuffers.gltf", b, strlen(b), "budget: ", "set CAUSTIC_GLTF_MAX_BUFFER_BYTES");
        unsetenv("CAUSTIC_GLTF_MAX_BUFFER_BYTES");
        free(b);
    }
    free(j);
    expect_fail("broken.gltf", "{\"asset\":{\"version\":\"2.0\"},", 28, "glTF", NULL);
    expect_fail("nul.gltf", "{\"asset\"\0}", 10, "NUL", NULL);
    expect_fail("notbin.glb", "{\"asset\":{}}", 12, "magic", NULL);
    expect_fail("empty.gltf", "{\"asset\":{\"version\":\"2.0\"}}", 27, "no triangles", NULL);
    static const char glb_short[] = "glTF\2\0\0\0\x40\0\0\0";
    expect_fail("short.glb", glb_short, 12, "glTF", NULL);
    char err[256];
    scene *s = scene_create();
    CHECK(scene_load_gltf(s, tmp_path("absent.gltf"), xform_identity(), -1, 0, err, sizeof err) == -1 &&
              strstr(err, "absent.gltf"),
          "a missing file: %s", err);
    scene_destroy(s);
}

/* KHR_materials_clearcoat: a coated PBR material (coat weight, roughness, KHR_materials_ior); a
 * material without it stays PBR. */
static void test_clearcoat(void) {
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    static const char mats[] =
        "{\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.5,0.2,0.1,1],\"metallicFactor\":0.25,"
        "\"roughnessFactor\":0.6},\"extensions\":{\"KHR_materials_clearcoat\":{\"clearcoatFactor\":0.75,"
        "\"clearcoatRoughnessFactor\":0.2},\"KHR_materials_ior\":{\"ior\":1.4}}},"
        "{\"pbrMetallicRoughness\":{\"metallicFactor\":0}}";
    char *j = model_json(buf, mats, "", "");
    write_bytes("clearcoat.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("clearcoat.gltf"), -1, 0, "clearcoat");
    if (!s) return;
    const material *m = &s->materials[0];
    CHECK(s->nmaterials == 2 && m->kind == MAT_COATED && m->coat_base == COAT_BASE_PBR && m->coat_weight == 0.75f &&
              fabsf(m->coat_alpha - 0.04f) < 1e-6f && fabsf(m->ior - 1.4f) < 1e-6f && m->metallic == 0.25f &&
              fabsf(m->alpha - 0.36f) < 1e-6f,
          "clearcoat: kind %d base %d weight %g coat alpha %g ior %g", m->kind, m->coat_base, m->coat_weight,
          m->coat_alpha, m->ior);
    CHECK(s->materials[1].kind == MAT_PBR, "no clearcoat: PBR");
    scene_destroy(s);
}

/* KHR_materials_sheen and KHR_materials_specular: PBR's layers; KHR_materials_dispersion on a
 * transmissive material: a Cauchy glass (B from the Abbe number 20 / dispersion). */
static void test_sheen_specular_dispersion(void) {
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    static const char mats[] =
        "{\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.5,0.2,0.1,1],\"metallicFactor\":0,"
        "\"roughnessFactor\":0.6},\"extensions\":{\"KHR_materials_sheen\":{\"sheenColorFactor\":[1,0.5,0.25],"
        "\"sheenRoughnessFactor\":0.5},\"KHR_materials_specular\":{\"specularFactor\":0.5,"
        "\"specularColorFactor\":[2,1,0.5]}}},"
        "{\"pbrMetallicRoughness\":{\"metallicFactor\":0,\"roughnessFactor\":0},\"extensions\":{"
        "\"KHR_materials_transmission\":{\"transmissionFactor\":1},\"KHR_materials_ior\":{\"ior\":1.5168},"
        "\"KHR_materials_dispersion\":{\"dispersion\":0.311672}}}";
    char *j = model_json(buf, mats, "", "");
    write_bytes("layers.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("layers.gltf"), -1, 0, "layers");
    if (!s) return;
    const material *m = &s->materials[0], *g = &s->materials[1];
    CHECK(s->nmaterials == 2 && m->kind == MAT_PBR && m->pbr_layers && fabsf(m->spec_f0.x - 0.04f) < 1e-6f &&
              fabsf(m->spec_f0.z - 0.01f) < 1e-6f && m->spec_f90 == 0.5f && fabsf(m->sheen_alpha - 0.25f) < 1e-6f &&
              m->sheen.x > 0.0f && m->sheen.z < m->sheen.x,
          "sheen/specular: kind %d layers %d f0 %g %g f90 %g sheen alpha %g", m->kind, m->pbr_layers, m->spec_f0.x,
          m->spec_f0.z, m->spec_f90, m->sheen_alpha);
    CHECK(g->kind == MAT_ROUGH_GLASS && fabsf(g->ior - 1.5168f) < 1e-6f && fabsf(g->dispersion - 0.004218f) < 2e-6f,
          "KHR_materials_dispersion: kind %d ior %g Cauchy B %g", g->kind, g->ior, g->dispersion);
    scene_destroy(s);
}

/* KHR_materials_volume on a solid transmissive material: an absorbing medium inside it,
 * sigma_a = -ln(attenuationColor) / attenuationDistance; thicknessFactor 0 (thin-walled) and an
 * infinite distance bind none. */
static void test_volume(void) {
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    static const char mats[] = "{\"extensions\":{\"KHR_materials_transmission\":{\"transmissionFactor\":1},"
                               "\"KHR_materials_volume\":{\"thicknessFactor\":1,\"attenuationDistance\":2,"
                               "\"attenuationColor\":[0.5,0.25,1]}}},"
                               "{\"extensions\":{\"KHR_materials_transmission\":{\"transmissionFactor\":1},"
                               "\"KHR_materials_volume\":{\"thicknessFactor\":0,\"attenuationDistance\":2,"
                               "\"attenuationColor\":[0.5,0.25,1]}}}";
    char *j = model_json(buf, mats, "", "");
    write_bytes("volume.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("volume.gltf"), -1, 0, "volume");
    if (!s) return;
    const material *m = &s->materials[0];
    CHECK(s->nmedia == 1 && m->kind == MAT_ROUGH_GLASS && m->medium_inside == 1 && m->medium_outside == 0,
          "volume: %zu media, kind %d, inside %d", s->nmedia, m->kind, m->medium_inside);
    if (s->nmedia == 1)
        CHECK(near3(s->media[0].sigma_a, v3(logf(2.0f) / 2, logf(4.0f) / 2, 0), 1e-6f) &&
                  vmaxc(s->media[0].sigma_s) == 0.0f,
              "volume: sigma_a = -ln(colour) / distance");
    CHECK(s->materials[1].kind == MAT_THIN_DIELECTRIC && s->materials[1].medium_inside == 0, "thin-walled: no medium");
    scene_destroy(s);
}

/* A missing texture file warns and leaves the factor; an RGBA texture's alpha cuts the surface
 * out (MASK) where it is below alphaCutoff. */
static void test_textures_and_cutout(void) {
    /* 2x1 RGBA: the left texel transparent, the right one opaque; black so the quad is dark */
    unsigned char px[8] = {0, 0, 0, 0, 0, 0, 0, 255};
    CHECK(stbi_write_png(tmp_path("mask.png"), 2, 1, 4, px, 8) != 0, "writing mask.png");
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    static const char mats[] =
        "{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0,\"roughnessFactor\":1},"
        "\"alphaMode\":\"MASK\",\"alphaCutoff\":0.5},"
        "{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":1}}}";
    static const char extra[] = ",\"textures\":[{\"source\":0,\"sampler\":0},{\"source\":1}],\"images\":[{\"uri\":"
                                "\"mask.png\"},{\"uri\":\"missing.png\"}],"
                                "\"samplers\":[{\"wrapS\":33071,\"wrapT\":33648}]";
    char *j = model_json(buf, mats, "", extra);
    write_bytes("mask.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("mask.gltf"), -1, 0, "textures");
    if (!s) return;
    CHECK(s->nmaterials == 2 && s->materials[0].albedo_tex >= 0 && (s->materials[0].maps & MAP_OPACITY) &&
              s->materials[0].alpha_cutoff == 0.5f,
          "mask material");
    CHECK(s->materials[1].albedo_tex == -1, "a missing image leaves the factor");
    if (s->materials[0].albedo_tex >= 0) {
        const texture *t = &s->textures[s->materials[0].albedo_tex];
        CHECK(t->width == 2 && t->height == 1 && t->wrap_u == TEX_WRAP_CLAMP && t->wrap_v == TEX_WRAP_MIRROR,
              "texture and sampler");
    }
    /* look at the quad (world: centre (1,0,-2), 2 units wide, facing +z; its uv u runs along +y)
     * from between it and the lone (glass) triangle at z = 0, in front of a white sky: where
     * u < 0.5 the sky shows through */
    s->env_radiance = v3s(1.0f);
    s->camera.eye = v3(1, 0, -1);
    s->camera.lookat = v3(1, 0, -3);
    s->camera.up = v3(1, 0, 0);
    s->camera.fovy_deg = 40.0f;
    caustic_scene *cs;
    char err[512];
    CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
    caustic_options o;
    caustic_options_init(&o);
    o.width = 8;
    o.height = 8;
    o.spp = 16;
    o.threads = 2;
    o.max_depth = 8;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (r) {
        caustic_render(r, NULL, NULL, NULL, 0);
        const float *img = caustic_image(r, NULL, NULL);
        /* image x runs along the camera's right = -y... compare the two halves */
        double a = 0, b = 0;
        for (int y = 2; y < 6; ++y)
            for (int x = 0; x < 4; ++x) {
                a += img[3 * (y * 8 + x)];
                b += img[3 * (y * 8 + 7 - x)];
            }
        double lo = fmin(a, b) / 16, hi = fmax(a, b) / 16;
        CHECK(hi > 0.95 && lo < 0.3, "cutout: one half shows the sky (%g), the other the dark quad (%g)", hi, lo);
        caustic_renderer_free(r);
    }
    caustic_scene_free(cs);
}

/* Textures stay at the source's 8-bit precision (3 bytes a texel, a quarter of the floats they
 * replace): base colour and emission decoded as sRGB through image_srgb8_table (what PNG and JPEG
 * textures of JSON and OBJ scenes give), metallic-roughness, normal and alpha maps as code / 255.
 * The kernel's lookups (texture_eval, bilinear, wrap modes) are bit-identical to float textures
 * holding those values; the linear ones to the float conversion the importer used before, the
 * sRGB ones within 2 ulp of its own pow() table. */
static float old_srgb(int code) { /* the importer's float path before 8-bit textures */
    double c = code / 255.0;
    return (float)(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
}
static void test_texture_precision(void) {
    enum { W = 16, H = 16 }; /* every code in every channel */
    unsigned char px[W * H * 4];
    for (int i = 0; i < W * H; ++i) {
        px[4 * i] = (unsigned char)i;
        px[4 * i + 1] = (unsigned char)(255 - i);
        px[4 * i + 2] = (unsigned char)(i * 7);
        px[4 * i + 3] = (unsigned char)(i * 13);
    }
    CHECK(stbi_write_png(tmp_path("codes.png"), W, H, 4, px, W * 4) != 0, "writing codes.png");
    char buf[128];
    snprintf(buf, sizeof buf, "{\"byteLength\":%d,\"uri\":\"quad.bin\"}", BIN_SIZE);
    static const char mats[] =
        "{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0},\"metallicRoughnessTexture\":{\"index\":0}},"
        "\"normalTexture\":{\"index\":0},\"emissiveTexture\":{\"index\":0},\"emissiveFactor\":[1,1,1],"
        "\"alphaMode\":\"MASK\",\"alphaCutoff\":0.5},{}";
    static const char extra[] = ",\"textures\":[{\"source\":0}],\"images\":[{\"uri\":\"codes.png\"}]";
    char *j = model_json(buf, mats, "", extra);
    write_bytes("codes.gltf", j, strlen(j));
    free(j);
    scene *s = load_ok(tmp_path("codes.gltf"), -1, 0, "8-bit textures");
    if (!s) return;
    const material *m = &s->materials[0];
    int tex[4] = {m->albedo_tex, m->mr_tex, m->normal_tex, m->alpha_tex}; /* emission shares albedo's */
    int enc[4] = {TEXEL8_SRGB, TEXEL8_LINEAR, TEXEL8_LINEAR, TEXEL8_LINEAR};
    int ok = s->ntextures == 3 && m->emission_tex == m->albedo_tex && m->normal_tex == m->mr_tex;
    for (int k = 0; k < 4 && ok; ++k) ok = tex[k] >= 0 && s->textures[tex[k]].texel8 == enc[k];
    CHECK(ok, "8-bit textures: 3 (sRGB colour, linear data, alpha), %zu made", s->ntextures);
    /* memory: 3 bytes a texel, nothing in the float store (before: 12 bytes a texel there) */
    CHECK(s->ntexels == 0 && s->ntexels8 == 3u * 3u * W * H, "texel stores: %zu floats, %zu bytes", s->ntexels,
          s->ntexels8);
    if (!ok) {
        scene_destroy(s);
        return;
    }
    /* float references added after them: the values each usage decodes to */
    const float *srgb = image_srgb8_table();
    float *ref = malloc(sizeof(float) * 3 * W * H);
    int ref_index[3], srcs[3] = {m->albedo_tex, m->mr_tex, m->alpha_tex};
    int max_ulp = 0;
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < W * H; ++i)
            for (int c = 0; c < 3; ++c) {
                int code = px[4 * i + (k == 2 ? 3 : c)];
                ref[3 * i + c] = k == 0 ? srgb[code] : (float)code / 255.0f;
                if (k == 0) {
                    float o = old_srgb(code);
                    int32_t a, b;
                    memcpy(&a, &ref[3 * i + c], 4);
                    memcpy(&b, &o, 4);
                    if (abs(a - b) > max_ulp) max_ulp = abs(a - b);
                }
            }
        ref_index[k] = scene_add_image_texture(s, W, H, ref);
    }
    free(ref);
    CHECK(max_ulp <= 2, "sRGB decode: %d ulp from the importer's former table", max_ulp);
    for (int k = 0; k < 3; ++k) {
        s->textures[ref_index[k]].wrap_u = s->textures[srcs[k]].wrap_u;
        s->textures[ref_index[k]].wrap_v = s->textures[srcs[k]].wrap_v;
    }
    char err[256];
    CHECK(scene_prepare(s, 4, err, sizeof err) == 0, "prepare: %s", err);
    const kscene *ks = &s->k;
    for (int k = 0; k < 3; ++k) {
        int same = 1;
        for (int i = 0; i < 2000 && same; ++i) {
            vec2 uv = {(float)((i * 7919) % 1000) / 373.0f - 0.5f, (float)((i * 104729) % 1000) / 419.0f - 0.7f};
            vec3 a = texture_eval(ks, srcs[k], uv, v3(0, 0, 0)), b = texture_eval(ks, ref_index[k], uv, v3(0, 0, 0));
            same = memcmp(&a, &b, sizeof a) == 0;
        }
        CHECK(same, "texture %d: 8-bit and float lookups differ", k);
    }
    scene_destroy(s);
    /* the image memory cap covers glTF images: stb's RGBA, tinygltf's copy, the 8-bit texture */
    setenv("CAUSTIC_IMAGE_MEMORY", "2K", 1);
    s = scene_create();
    char msg[1024] = "";
    int rc = scene_load_gltf(s, tmp_path("codes.gltf"), xform_identity(), -1, 0, msg, sizeof msg);
    CHECK(rc != 0 && strstr(msg, "images[0]: a 16x16 image needs 3 KiB to decode, over the limit of 2 KiB") &&
              s->ntextures == 0 && s->ntexels8 == 0,
          "a glTF image over the cap: rc %d, '%s'", rc, msg);
    scene_destroy(s);
    /* ... and one budget per scene: a 40x40 texture already there (4800 bytes) and this file's
     * first (768) are over 5 KiB although each decode fits */
    setenv("CAUSTIC_IMAGE_MEMORY", "5K", 1);
    s = scene_create();
    unsigned char *pre = scene_reserve_texels8(s, 40, 40);
    CHECK(pre != NULL, "reserve");
    if (pre) {
        memset(pre, 128, 40 * 40 * 3);
        CHECK(scene_add_image_texture8(s, 40, 40, TEXEL8_SRGB) == 0, "texture already in the scene");
    }
    msg[0] = 0;
    rc = scene_load_gltf(s, tmp_path("codes.gltf"), xform_identity(), -1, 0, msg, sizeof msg);
    CHECK(rc != 0 &&
              strstr(msg, "images[0]: the scene's textures with this one needs 6 KiB in all, over the limit of 5 KiB"),
          "the scene's textures over the cap: rc %d, '%s'", rc, msg);
    scene_destroy(s);
    unsetenv("CAUSTIC_IMAGE_MEMORY");
}

/* A sphere of a white material in a white sky: every pixel is the directional albedo seen there,
 * never above 1; PT, BDPT and VCM agree. */
static double furnace_mean(caustic_scene *cs, caustic_integrator integ, int spp) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 16;
    o.height = 16;
    o.spp = spp;
    o.threads = 2;
    o.max_depth = 64;
    o.integrator = integ;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (!r) return -1;
    caustic_render(r, NULL, NULL, NULL, 0);
    const float *img = caustic_image(r, NULL, NULL);
    double sum = 0;
    for (int i = 0; i < 16 * 16; ++i) sum += (img[3 * i] + img[3 * i + 1] + img[3 * i + 2]) / 3.0;
    caustic_renderer_free(r);
    return sum / (16 * 16);
}
static void test_render_furnace(void) {
    const float metals[3] = {0.0f, 0.5f, 1.0f}, roughs[3] = {0.05f, 0.5f, 1.0f};
    for (int k = 0; k < 10; ++k) {
        scene *s = scene_create();
        material m;
        memset(&m, 0, sizeof m);
        m.albedo_tex = -1;
        m.albedo = v3s(1.0f);
        m.ior = 1.5f;
        m.opacity = 1.0f;
        if (k < 9) {
            m.kind = MAT_PBR;
            m.metallic = metals[k / 3];
            m.alpha = roughs[k % 3] * roughs[k % 3];
        } else {
            m.kind = MAT_ROUGH_GLASS;
            m.alpha = 0.25f;
        }
        scene_add_material(s, "white", m);
        scene_add_sphere(s, xform_trs(v3s(0), v3s(0), v3s(2.0f)), 0);
        s->env_radiance = v3s(1.0f);
        s->camera.eye = v3(0, 0, 4);
        s->camera.lookat = v3(0, 0, 0);
        s->camera.fovy_deg = 20.0f; /* the sphere fills the view */
        caustic_scene *cs;
        char err[256];
        CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
        double pt = furnace_mean(cs, CAUSTIC_INTEGRATOR_PT, 256);
        double bd = furnace_mean(cs, CAUSTIC_INTEGRATOR_BDPT, 256);
        double vc = furnace_mean(cs, CAUSTIC_INTEGRATOR_VCM, 256);
        const char *what = k < 9 ? "pbr" : "rough glass";
        CHECK(pt <= 1.0 + 0.01 && pt > 0.3, "%s furnace %d: pt %g should be in (0.3, 1]", what, k, pt);
        CHECK(fabs(bd - pt) < 0.02 * pt + 0.005 && fabs(vc - pt) < 0.02 * pt + 0.005,
              "%s furnace %d: pt %g, bdpt %g, vcm %g disagree", what, k, pt, bd, vc);
        printf("furnace %-11s metallic %.2f roughness %.2f: pt %.4f bdpt %.4f vcm %.4f\n", what,
               k < 9 ? metals[k / 3] : 0.0, k < 9 ? roughs[k % 3] : 0.5, pt, bd, vc);
        caustic_scene_free(cs);
    }
}

/* The Khronos samples: they load (with a warning for their missing textures), carry their
 * textures, and render finite, non-black images. */
static void test_samples(void) {
    const char *dir = "/work/shared/assets/gltf";
    struct stat st;
    if (stat(dir, &st) != 0) {
        printf("test_gltf: %s absent, samples skipped\n", dir);
        return;
    }
    const char *names[3] = {"Suzanne", "BoomBox", "Lantern"};
    for (int i = 0; i < 3; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s/%s.gltf", dir, names[i], names[i]);
        if (stat(path, &st) != 0) {
            printf("test_gltf: %s absent, skipped\n", path);
            continue;
        }
        caustic_scene *cs = NULL;
        char err[512] = "";
        CHECK(caustic_scene_load(&cs, path, err, sizeof err) == 0, "%s: %s", names[i], err);
        if (!cs) continue;
        caustic_scene_stats stt;
        caustic_scene_stats_get(cs, &stt);
        CHECK(stt.triangles > 1000 && stt.textures >= 2, "%s: %llu triangles, %d textures", names[i],
              (unsigned long long)stt.triangles, (int)stt.textures);
        caustic_options o;
        caustic_options_init(&o);
        o.width = 24;
        o.height = 24;
        o.spp = 4;
        o.threads = 2;
        caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
        CHECK(r != NULL, "%s renderer: %s", names[i], err);
        if (r) {
            caustic_render(r, NULL, NULL, NULL, 0);
            const float *img = caustic_image(r, NULL, NULL);
            double sum = 0;
            int finite = 1;
            for (int k = 0; k < 24 * 24 * 3; ++k) {
                sum += img[k];
                finite &= isfinite(img[k]) != 0;
            }
            CHECK(finite && sum > 0, "%s: image finite and not black (sum %g)", names[i], sum);
            caustic_renderer_free(r);
        }
        caustic_scene_free(cs);
    }
}

int main(void) {
    if (!scene_gltf_supported()) {
        printf("test_gltf: built without tinygltf, skipped\n");
        return 77;
    }
    snprintf(g_tmp, sizeof g_tmp, "/tmp/test_gltf_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    test_buffers();
    test_camera_lights();
    test_bad();
    test_clearcoat();
    test_sheen_specular_dispersion();
    test_volume();
    test_textures_and_cutout();
    test_texture_precision();
    test_render_furnace();
    test_samples();
    if (!g_failures) {
        const char *files[] = {"quad.bin",    "external.gltf", "embedded.gltf", "model.glb",   "strip.gltf",
                               "lights.gltf", "count.gltf",    "index.gltf",    "buffer.gltf", "view.gltf",
                               "mode.gltf",   "cycle.gltf",    "required.gltf", "quat.gltf",   "broken.gltf",
                               "nul.gltf",    "notbin.glb",    "empty.gltf",    "short.glb",   "mask.png",
                               "mask.gltf",   "codes.png",     "codes.gltf"};
        for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) unlink(tmp_path(files[i]));
        rmdir(g_tmp);
    }
    return test_result("test_gltf");
}
