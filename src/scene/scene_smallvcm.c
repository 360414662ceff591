/* SmallVCM's Cornell-box scenes (Davidovic and Georgiev's reference VCM implementation), rebuilt
 * from the numbers of its public scene definition so that images can be compared pixel for pixel
 * with that renderer: same geometry, camera (45 degrees, looking along +y with +z up), materials
 * (glossy floor = 0.1 diffuse + 0.7 Phong with exponent 90) and lights, at 512x512 with paths of
 * at most 10 segments (max depth 9 bounces). Its scene ids 0..3 are:
 *   0  small mirror and glass spheres, sun (directional) light through the open front
 *   1  large mirror sphere under a small ceiling area light
 *   2  small spheres, point light
 *   3  small spheres, constant sky-blue environment light
 * SmallVCM's diffuse surfaces are one-sided (black from behind); no back face is visible or
 * lit in these scenes, so our two-sided materials give the same images. */
#include "scene/scene.h"
#include "scene/material.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SV_FLOOR, SV_GREEN, SV_RED, SV_WHITE, SV_MIRROR, SV_GLASS, SV_BLUE, SV_LIGHT, SV_NMAT };

/* SmallVCM's materials through the host constructor. Its ior of 1 on the kinds without
 * refraction was never read; they now carry the constructor's 1.5 like every other reader's. */
static int add_mat(scene *s, const char *name, material_kind kind, vec3 albedo, vec3 spec, double exponent, double ior,
                   vec3 emission) {
    material_params p = material_params_default(kind);
    p.rgb = albedo;
    p.specular = spec;
    p.exponent = exponent;
    p.ior = ior;
    p.emission = emission;
    material m = material_from_params(kind, &p);
    return scene_add_material(s, name, m);
}

int scene_build_smallvcm(scene *s, int id, char *err, size_t errlen) {
    const int ceiling = id == 1, sun = id == 0, point = id == 2, sky = id == 3;
    const int light_box = !point; /* SmallVCM drops the light box with the point light */
    int mat[SV_NMAT];
    mat[SV_FLOOR] = add_mat(s, "glossy_floor", MAT_PHONG, v3s(0.1f), v3s(0.7f), 90.0f, 1.0f, v3s(0.0f));
    mat[SV_GREEN] =
        add_mat(s, "green", MAT_DIFFUSE, v3(0.156863f, 0.803922f, 0.172549f), v3s(0.0f), 0.0f, 1.0f, v3s(0.0f));
    mat[SV_RED] = add_mat(s, "red", MAT_DIFFUSE, v3(0.803922f, 0.152941f, 0.152941f), v3s(0.0f), 0.0f, 1.0f, v3s(0.0f));
    mat[SV_WHITE] = add_mat(s, "white", MAT_DIFFUSE, v3s(0.803922f), v3s(0.0f), 0.0f, 1.0f, v3s(0.0f));
    mat[SV_MIRROR] = add_mat(s, "mirror", MAT_MIRROR, v3s(1.0f), v3s(0.0f), 0.0f, 1.0f, v3s(0.0f));
    mat[SV_GLASS] = add_mat(s, "glass", MAT_DIELECTRIC, v3s(1.0f), v3s(0.0f), 0.0f, 1.6f, v3s(0.0f));
    mat[SV_BLUE] =
        add_mat(s, "blue", MAT_DIFFUSE, v3(0.156863f, 0.172549f, 0.803922f), v3s(0.0f), 0.0f, 1.0f, v3s(0.0f));
    mat[SV_LIGHT] = add_mat(s, "light", MAT_EMITTER, v3s(0.0f), v3s(0.0f), 0.0f, 1.0f, v3s(25.03329895614464f));
    for (int i = 0; i < SV_NMAT; ++i)
        if (mat[i] < 0) goto oom;

    /* the room: x from -1.27 to 1.29 (left to right), y from -1.26 (open front) to 1.30 (back),
     * z from -1.28 (floor) to 1.28 (ceiling) */
    const vec3 cb[8] = {{-1.27029f, 1.30455f, -1.28002f},  {1.28975f, 1.30455f, -1.28002f},
                        {1.28975f, 1.30455f, 1.28002f},    {-1.27029f, 1.30455f, 1.28002f},
                        {-1.27029f, -1.25549f, -1.28002f}, {1.28975f, -1.25549f, -1.28002f},
                        {1.28975f, -1.25549f, 1.28002f},   {-1.27029f, -1.25549f, 1.28002f}};
    /* the light box hanging from the ceiling; its open top touches the ceiling */
    const vec3 lb[8] = {{-0.25f, 0.25f, 1.26002f}, {0.25f, 0.25f, 1.26002f},   {0.25f, 0.25f, 1.28002f},
                        {-0.25f, 0.25f, 1.28002f}, {-0.25f, -0.25f, 1.26002f}, {0.25f, -0.25f, 1.26002f},
                        {0.25f, -0.25f, 1.28002f}, {-0.25f, -0.25f, 1.28002f}};
    /* triangles as (a, b, c, material); winding gives the front (emitting) side */
    struct {
        const vec3 *v;
        int a, b, c, m;
    } tris[32];
    int nt = 0;
#define TRI(arr, A, B, C, M)                                                                                           \
    (tris[nt].v = (arr), tris[nt].a = (A), tris[nt].b = (B), tris[nt].c = (C), tris[nt].m = (M), nt++)
    TRI(cb, 0, 4, 5, SV_FLOOR);
    TRI(cb, 5, 1, 0, SV_FLOOR); /* floor */
    TRI(cb, 0, 1, 2, SV_BLUE);
    TRI(cb, 2, 3, 0, SV_BLUE); /* back wall */
    TRI(cb, 2, 6, 7, SV_WHITE);
    TRI(cb, 7, 3, 2, SV_WHITE); /* ceiling */
    TRI(cb, 3, 7, 4, SV_GREEN);
    TRI(cb, 4, 0, 3, SV_GREEN); /* left wall */
    TRI(cb, 1, 5, 6, SV_RED);
    TRI(cb, 6, 2, 1, SV_RED); /* right wall */
    if (light_box) {
        TRI(lb, 0, 2, 1, SV_WHITE);
        TRI(lb, 2, 0, 3, SV_WHITE); /* back */
        TRI(lb, 3, 4, 7, SV_WHITE);
        TRI(lb, 4, 3, 0, SV_WHITE); /* left */
        TRI(lb, 1, 6, 5, SV_WHITE);
        TRI(lb, 6, 1, 2, SV_WHITE); /* right */
        TRI(lb, 4, 5, 6, SV_WHITE);
        TRI(lb, 6, 7, 4, SV_WHITE);                      /* front */
        TRI(lb, 0, 5, 4, ceiling ? SV_LIGHT : SV_WHITE); /* bottom: the emitter */
        TRI(lb, 5, 0, 1, ceiling ? SV_LIGHT : SV_WHITE);
    }
#undef TRI
    vec3 pos[96];
    uint32_t idx[96];
    int tmat[32];
    for (int t = 0; t < nt; ++t) {
        pos[3 * t] = tris[t].v[tris[t].a];
        pos[3 * t + 1] = tris[t].v[tris[t].b];
        pos[3 * t + 2] = tris[t].v[tris[t].c];
        for (int k = 0; k < 3; ++k) idx[3 * t + k] = (uint32_t)(3 * t + k);
        tmat[t] = mat[tris[t].m];
    }
    if (scene_add_mesh(s, pos, NULL, NULL, (size_t)(3 * nt), idx, tmat, (size_t)nt, xform_identity(), mat[SV_WHITE]))
        goto oom;

    /* spheres stand on the floor: the large one in the middle, the small ones 2/7 of the width
     * in from the side walls (mirror left, glass right) */
    vec3 floor_mid = vscale(vadd(vadd(cb[0], cb[1]), vadd(cb[4], cb[5])), 0.25f);
    if (id == 1) {
        const float r = 0.8f;
        if (scene_add_sphere(s, xform_trs(vadd(floor_mid, v3(0, 0, r)), v3s(0.0f), v3s(2.0f * r)), mat[SV_MIRROR]))
            goto oom;
    } else {
        const float r = 0.5f;
        vec3 lwc = vadd(vscale(vadd(cb[0], cb[4]), 0.5f), v3(0, 0, r));
        vec3 rwc = vadd(vscale(vadd(cb[1], cb[5]), 0.5f), v3(0, 0, r));
        float xlen = rwc.x - lwc.x;
        vec3 left = vadd(lwc, v3(2.0f * xlen / 7.0f, 0, 0)), right = vsub(rwc, v3(2.0f * xlen / 7.0f, 0, 0));
        if (scene_add_sphere(s, xform_trs(left, v3s(0.0f), v3s(2.0f * r)), mat[SV_MIRROR])) goto oom;
        if (scene_add_sphere(s, xform_trs(right, v3s(0.0f), v3s(2.0f * r)), mat[SV_GLASS])) goto oom;
    }
    if (sun && scene_add_directional_light(s, v3(-1.0f, 1.5f, -1.0f), vscale(v3(0.5f, 0.2f, 0.0f), 20.0f))) goto oom;
    if (point && scene_add_point_light(s, v3(0.0f, -0.5f, 1.0f), v3s(70.0f * 0.25f * (float)K_INV_PI))) goto oom;
    if (sky) s->env_radiance = v3(135.0f / 255.0f, 206.0f / 255.0f, 250.0f / 255.0f);

    s->camera.eye = v3(-0.0439815f, -4.12529f, 0.222539f);
    s->camera.lookat = vadd(s->camera.eye, v3(0.00688625f, 0.998505f, -0.0542161f));
    s->camera.up = v3(3.73896e-4f, 0.0542148f, 0.998529f);
    s->camera.fovy_deg = 45.0f;
    s->camera.width = s->camera.height = 512;
    s->spp = 64;
    s->max_depth = 9; /* paths of at most 10 segments */
    char name[16];
    snprintf(name, sizeof name, "smallvcm%d", id);
    s->output_name = malloc(strlen(name) + 1);
    if (!s->output_name) goto oom;
    memcpy(s->output_name, name, strlen(name) + 1);
    return 0;
oom:
    snprintf(err, errlen, "builtin:smallvcm%d: out of memory", id);
    return -1;
}
