/* Participating media (kernel/medium.h, kernel/media/): the Henyey-Greenstein phase function's
 * sampling against its pdf (chi-square; a phase sampled with g's sign flipped must fail it), the
 * transmittance of shadow rays through a homogeneous slab bounded by an interface (exp(-sigma_t d)
 * per channel), the furnace (a medium of albedo 1, chromatic sigma_t, inside a closed emitter of
 * radiance 1 reads 1; with absorption, emission 1 and scattering in equilibrium, 1 too), and
 * absorbing glass against Beer-Lambert with the Fresnel interreflections of a slab. This TU is the
 * media kernel (KERNEL_MEDIA 1), as src/cpu/kernel_cpu_media.c. */
#define KERNEL_MEDIA    1
#define KERNEL_FEATURES (KF_ALL | KF_MEDIA)
#include "kernel/kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"
#include "scene/material.h"
#include "scene/scene.h"
#include "sphere_chi2.h"
#include "testing.h"

#define ALPHA 1e-3 /* chi-square significance */
#ifndef FURNACE_SPP
#define FURNACE_SPP 256
#endif

/* ---- HG sampling -------------------------------------------------------------------------- */
typedef struct hg_ctx {
    float g, g_sample; /* g_sample != g: a deliberately wrong sampler */
    vec3 d_in;
} hg_ctx;
static int s_hg(void *ctx, vec2 u, float u1, vec3 *dir) {
    (void)u1;
    const hg_ctx *c = ctx;
    *dir = hg_sample(c->g_sample, c->d_in, u);
    return 1;
}
static double p_hg(void *ctx, vec3 dir) {
    const hg_ctx *c = ctx;
    return hg_pdf(c->g, c->d_in, dir);
}

static void test_hg(void) {
    const float gs[] = {0.0f, 0.3f, -0.5f, 0.7f};
    const vec3 dirs[] = {v3(0.0f, 0.0f, 1.0f), vnorm(v3(0.3f, -0.5f, 0.6f))};
    g_chi2_sub = 32;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) {
            hg_ctx c = {gs[i], gs[i], dirs[j]};
            double integral = 0.0;
            double p = sphere_chi2(&c, s_hg, p_hg, 200000, 700 + 10 * (uint64_t)i + (uint64_t)j, &integral);
            CHECK(p > ALPHA, "HG g=%g dir %d: p = %g", gs[i], j, p);
            CHECK(fabs(integral - 1.0) < 2e-3, "HG g=%g: the pdf integrates to %g", gs[i], integral);
            /* the estimator weight of a phase sample, eval / pdf, is 1 */
            vec3 d = hg_sample(gs[i], dirs[j], v2(0.3f, 0.7f));
            CHECK(fabsf(vlen(d) - 1.0f) < 1e-4f, "HG sample not unit: %g", vlen(d));
            if (gs[i] != 0.0f) {
                /* a wrong sampler (g's sign flipped in sampling only) fails the same test */
                hg_ctx w = {gs[i], -gs[i], dirs[j]};
                double pw = sphere_chi2(&w, s_hg, p_hg, 200000, 800 + 10 * (uint64_t)i + (uint64_t)j, &integral);
                CHECK(pw < 1e-9, "HG g=%g sampled with -g passes the chi-square (p = %g)", gs[i], pw);
            }
        }
    g_chi2_sub = 16;
    /* forward scattering for g > 0: the mean cosine is g */
    double mean = 0.0;
    pcg32 r = pcg32_seed(5, 1);
    for (int n = 0; n < 100000; ++n) mean += hg_sample_cos(0.6f, pcg32_float(&r));
    CHECK_NEAR(mean / 100000.0, 0.6, 5e-3, "HG mean cosine");
}

/* ---- scenes ---------------------------------------------------------------------------------- */
static int add_material(scene *s, const char *name, material_kind kind, vec3 rgb, vec3 emission) {
    material_params p = material_params_default(kind);
    p.rgb = rgb;
    p.emission = emission;
    p.two_sided = 1;
    return scene_add_material(s, name, material_from_params(kind, &p));
}
static int add_medium(scene *s, const char *name, vec3 sa, vec3 ss, vec3 le, float g) {
    medium m;
    memset(&m, 0, sizeof m);
    m.kind = MEDIUM_HOMOGENEOUS;
    m.sigma_a = sa;
    m.sigma_s = ss;
    m.emission = le;
    m.g = g;
    return scene_add_medium(s, name, m);
}
static void prepare(scene *s) {
    char err[256];
    int rc = scene_prepare(s, BVH_WIDTH, err, sizeof err);
    CHECK(rc == 0, "prepare: %s", err);
}

/* A unit cube of interface material around the origin, scaled to (sx, sy, sz), medium inside. */
static void test_slab_transmittance(void) {
    scene *s = scene_create();
    int iface = add_material(s, "iface", MAT_INTERFACE, v3s(1.0f), v3s(0.0f));
    int wall = add_material(s, "wall", MAT_DIFFUSE, v3s(0.5f), v3s(0.0f));
    vec3 sa = v3(0.2f, 0.5f, 1.0f), ss = v3(0.3f, 0.1f, 0.0f), st = vadd(sa, ss);
    int m = add_medium(s, "slab", sa, ss, v3s(0.0f), 0.0f);
    CHECK(m == 0, "medium index %d", m);
    size_t t0 = s->ntriangles;
    scene_add_cube(s, xform_trs(v3s(0.0f), v3s(0.0f), v3(2.0f, 10.0f, 10.0f)), iface); /* x in [-1, 1] */
    CHECK(scene_bind_media(s, t0, 0, 0, m + 1, 0) == 0, "bind");
    /* an opaque wall at x = 5 */
    scene_add_quad(s, v3(5.0f, -1.0f, -1.0f), v3(0.0f, 2.0f, 0.0f), v3(0.0f, 0.0f, 2.0f), wall);
    s->camera.eye = v3(-4.0f, 0.0f, 0.0f);
    s->camera.lookat = v3s(0.0f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 40.0f;
    s->camera.width = s->camera.height = 8;
    prepare(s);
    const kscene *k = &s->k;
    /* through the whole slab (2 units), from the vacuum */
    vec3 tr = trace_transmittance(k, make_ray(v3(-3.0f, 0.1f, 0.2f), v3(1.0f, 0.0f, 0.0f), 6.0f), MEDIUM_NONE, 1u,
                                  k->node_layout);
    for (int c = 0; c < 3; ++c) CHECK_NEAR(vcomp(tr, c), expf(-2.0f * vcomp(st, c)), 1e-4, "slab transmittance");
    /* slanted: the path inside is 2 / cos */
    vec3 d = vnorm(v3(1.0f, 0.5f, 0.0f));
    tr = trace_transmittance(k, make_ray(v3(-3.0f, 0.0f, 0.0f), d, 5.0f), MEDIUM_NONE, 1u, k->node_layout);
    for (int c = 0; c < 3; ++c)
        CHECK_NEAR(vcomp(tr, c), expf(-2.0f / d.x * vcomp(st, c)), 1e-4, "slanted slab transmittance");
    /* starting inside the medium, ending inside: 0.5 units */
    tr = trace_transmittance(k, make_ray(v3(0.0f, 0.0f, 0.0f), v3(1.0f, 0.0f, 0.0f), 0.5f), m, 1u, k->node_layout);
    for (int c = 0; c < 3; ++c) CHECK_NEAR(vcomp(tr, c), expf(-0.5f * vcomp(st, c)), 1e-4, "inside transmittance");
    /* an opaque surface blocks */
    tr = trace_transmittance(k, make_ray(v3(-3.0f, 0.0f, 0.0f), v3(1.0f, 0.0f, 0.0f), 20.0f), MEDIUM_NONE, 1u,
                             k->node_layout);
    CHECK(vis_black(tr), "the wall lets (%g %g %g) through", tr.x, tr.y, tr.z);
    scene_destroy(s);
}

/* The mean of p's samples over every pixel of p->cam's image, per channel, and its standard
 * error (*err, from the spread of the pixels' means: every pixel takes the same samples). */
static vec3 render_mean(const kscene *k, const kpass *p, vec3 *err) {
    double sum[3] = {0.0, 0.0, 0.0}, sum2[3] = {0.0, 0.0, 0.0}, n = 0.0;
    for (int y = 0; y < p->cam.height; ++y)
        for (int x = 0; x < p->cam.width; ++x) {
            film_pixel px = {0.0, 0.0, 0.0, 0.0, 0u};
            uint32_t rays = 0, shadow = 0, bad = 0;
            film_trace_pixel(k, p, x, y, &px, NULL, &rays, &shadow, &bad, k->node_layout);
            double v[3] = {px.r / px.n, px.g / px.n, px.b / px.n};
            for (int c = 0; c < 3; ++c) {
                sum[c] += v[c];
                sum2[c] += v[c] * v[c];
            }
            n += 1.0;
        }
    double e[3];
    for (int c = 0; c < 3; ++c) e[c] = sqrt(fmax(0.0, sum2[c] / n - (sum[c] / n) * (sum[c] / n)) / (n - 1.0));
    if (err) *err = v3((float)e[0], (float)e[1], (float)e[2]);
    return v3((float)(sum[0] / n), (float)(sum[1] / n), (float)(sum[2] / n));
}
static kpass make_pass(const scene *s, int spp, int max_depth) {
    kpass p;
    memset(&p, 0, sizeof p);
    char err[256];
    CHECK(scene_camera(s, s->camera.width, s->camera.height, &p.cam, err, sizeof err) == 0, "camera: %s", err);
    p.sampler = SAMPLER_SOBOL;
    p.seed = 3;
    p.spp_total = (uint32_t)spp;
    p.max_depth = max_depth;
    p.rr_depth = KPASS_RR_DEPTH;
    p.sample_end = (uint32_t)spp;
    return p;
}

/* A sphere of radius 2 emitting radiance 1 on both sides, filled with medium m, the camera inside
 * it (and in the medium). */
static scene *furnace(vec3 sa, vec3 ss, vec3 le, float g) {
    scene *s = scene_create();
    int wall = add_material(s, "wall", MAT_EMITTER, v3s(1.0f), v3s(1.0f));
    int m = add_medium(s, "m", sa, ss, le, g);
    scene_add_sphere(s, xform_trs(v3s(0.0f), v3s(0.0f), v3s(4.0f)), wall);
    CHECK(scene_bind_media(s, 0, 0, 0, m + 1, 0) == 0, "bind");
    s->camera.eye = v3(0.3f, -0.2f, 0.1f);
    s->camera.lookat = v3(1.0f, 0.0f, 0.4f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 90.0f;
    s->camera.width = s->camera.height = 16;
    s->camera.medium = m + 1;
    prepare(s);
    return s;
}

static void test_furnace(void) {
    /* albedo 1, chromatic sigma_t: spectral MIS must keep every channel at 1 */
    scene *s = furnace(v3s(0.0f), v3(0.5f, 1.0f, 2.0f), v3s(0.0f), 0.5f);
    CHECK(kscene_features(&s->k) & KF_MEDIA, "a scene with a medium has KF_MEDIA");
    kpass p = make_pass(s, FURNACE_SPP, 1000);
    vec3 e, l = render_mean(&s->k, &p, &e);
    printf("furnace, albedo 1: %.5f %.5f %.5f (standard error %.5f %.5f %.5f)\n", l.x, l.y, l.z, e.x, e.y, e.z);
    for (int c = 0; c < 3; ++c) CHECK_NEAR(vcomp(l, c), 1.0, 4.0 * vcomp(e, c) + 1e-4, "albedo-1 furnace");
    scene_destroy(s);
    /* absorbing, emitting (Le 1) and scattering inside walls of radiance 1: equilibrium, 1 */
    s = furnace(v3(0.3f, 1.0f, 0.05f), v3(1.0f, 0.2f, 0.6f), v3s(1.0f), -0.3f);
    p = make_pass(s, FURNACE_SPP, 1000);
    l = render_mean(&s->k, &p, &e);
    printf("furnace, emitting medium: %.5f %.5f %.5f (standard error %.5f %.5f %.5f)\n", l.x, l.y, l.z, e.x, e.y, e.z);
    for (int c = 0; c < 3; ++c) CHECK_NEAR(vcomp(l, c), 1.0, 4.0 * vcomp(e, c) + 1e-4, "emitting furnace");
    scene_destroy(s);
    /* a wrong transport fails it: the same scene without the medium's emission reads less */
    s = furnace(v3(0.3f, 1.0f, 0.05f), v3(1.0f, 0.2f, 0.6f), v3s(0.0f), -0.3f);
    p = make_pass(s, FURNACE_SPP, 1000);
    l = render_mean(&s->k, &p, NULL);
    CHECK(vcomp(l, 1) < 0.9f, "absorbing furnace without emission reads %g", l.y);
    scene_destroy(s);
}

/* A glass slab (IOR 1.5, thickness 1, absorbing inside) between the camera and an emitter of
 * radiance 1, seen at normal incidence: (1-F)^2 T / (1 - F^2 T^2), T = exp(-sigma_a), F = 0.04. */
static void test_absorbing_glass(void) {
    scene *s = scene_create();
    int glass = add_material(s, "glass", MAT_DIELECTRIC, v3s(1.0f), v3s(0.0f));
    int light = add_material(s, "light", MAT_EMITTER, v3s(1.0f), v3s(1.0f));
    vec3 sa = v3(0.1f, 0.7f, 2.0f);
    int m = add_medium(s, "ink", sa, v3s(0.0f), v3s(0.0f), 0.0f);
    scene_add_cube(s, xform_trs(v3s(0.0f), v3s(0.0f), v3(1.0f, 40.0f, 40.0f)), glass);
    CHECK(scene_bind_media(s, 0, 0, 0, m + 1, 0) == 0, "bind");
    scene_add_quad(s, v3(3.0f, -30.0f, -30.0f), v3(0.0f, 0.0f, 60.0f), v3(0.0f, 60.0f, 0.0f), light);
    s->camera.eye = v3(-5.0f, 0.0f, 0.0f);
    s->camera.lookat = v3s(0.0f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 1.0f;
    s->camera.width = s->camera.height = 4;
    prepare(s);
    kpass p = make_pass(s, 256, 64);
    vec3 l = render_mean(&s->k, &p, NULL);
    const double f = 0.04;
    for (int c = 0; c < 3; ++c) {
        double t = exp(-(double)vcomp(sa, c));
        double want = (1 - f) * (1 - f) * t / (1 - f * f * t * t);
        printf("absorbing glass channel %d: %.5f (Beer-Lambert with Fresnel: %.5f)\n", c, vcomp(l, c), want);
        CHECK_NEAR(vcomp(l, c), want, 0.01 * want + 1e-4, "absorbing glass");
    }
    scene_destroy(s);
}

/* Scene JSON: the Media section, INTERIOR / EXTERIOR, Camera.MEDIUM, the course's Fog material,
 * and one clear message for a medium name that is not defined. */
static void test_json(void) {
    const char *text =
        "{\"Media\": {\"smoke\": {\"ALBEDO\": [0.9, 0.8, 0.7], \"DENSITY\": 2, \"G\": 0.4},"
        "           \"air\": {\"SIGMA_A\": 0.01, \"SIGMA_S\": [0.02, 0.03, 0.04]}},"
        " \"Materials\": {\"b\": {\"TYPE\": \"Interface\"}, \"w\": {\"TYPE\": \"Diffuse\", \"RGB\": 0.5},"
        "               \"fog\": {\"TYPE\": \"Fog\", \"SIGMA_A\": 0.1, \"SIGMA_S\": 0.5}},"
        " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0], \"UP\": [0, 1, 0],"
        "            \"MEDIUM\": \"air\"},"
        " \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"b\", \"INTERIOR\": \"smoke\", \"EXTERIOR\": \"air\"},"
        "             {\"TYPE\": \"cube\", \"MATERIAL\": \"w\", \"TRANS\": [3, 0, 0]},"
        "             {\"TYPE\": \"cube\", \"MATERIAL\": \"fog\", \"TRANS\": [-3, 0, 0]}]}";
    scene *s = NULL;
    char err[512] = "";
    int rc = scene_load_json_text(&s, text, "media.json", NULL, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(s->nmedia == 3, "%zu media", s->nmedia);
    int smoke = scene_find_medium(s, "smoke"), air = scene_find_medium(s, "air");
    CHECK(smoke >= 0 && air >= 0, "media by name");
    if (smoke >= 0) {
        CHECK_NEAR(s->media[smoke].sigma_s.x, 1.8, 1e-5, "ALBEDO * DENSITY");
        CHECK_NEAR(s->media[smoke].sigma_a.z, 0.6, 1e-5, "DENSITY - sigma_s");
        CHECK_NEAR(s->media[smoke].g, 0.4, 1e-6, "G");
    }
    CHECK(s->camera.medium == air + 1, "camera medium %d", s->camera.medium);
    const material *ms = &s->materials[s->spheres[0].material];
    CHECK(ms->kind == MAT_INTERFACE && ms->medium_inside == smoke + 1 && ms->medium_outside == air + 1,
          "the sphere's interface binds smoke inside, air outside (%d %d)", ms->medium_inside, ms->medium_outside);
    const material *mw = &s->materials[s->triangles[0].material];
    CHECK(mw->medium_inside == 0 && mw->medium_outside == 0, "an object without media keys binds none");
    const material *mf = &s->materials[s->triangles[12].material];
    CHECK(mf->kind == MAT_INTERFACE && mf->medium_inside > 0 && s->media[mf->medium_inside - 1].sigma_s.y == 0.5f,
          "a Fog material is an interface filled with its medium");
    scene_destroy(s);
    /* an undefined medium: one message naming the key */
    const char *bad = "{\"Media\": {\"smoke\": {\"SIGMA_S\": 1}}, \"Materials\": {\"b\": {\"TYPE\": \"Interface\"}},"
                      " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0]},"
                      " \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"b\", \"INTERIOR\": \"smoek\"}]}";
    s = NULL;
    rc = scene_load_json_text(&s, bad, "bad.json", NULL, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "Objects[0].INTERIOR") && strstr(err, "smoek"), "undefined medium: %s", err);
    if (!rc) scene_destroy(s);
}


/* ---- grid media (kernel/media/grid.h) -------------------------------------------------------------- */
/* A grid medium named `name` of res voxels (density d, x fastest) over world box [lo, hi], sigma
 * per unit density; majorant_scale multiplies its majorant grid after it is built (1: as built;
 * > 1 a looser bound, still valid; < 1 a deliberately wrong one). */
static int add_grid(scene *s, const char *name, const uint32_t res[3], const float *d, vec3 lo, vec3 hi, vec3 sa,
                    vec3 ss, vec3 le, float g, float majorant_scale) {
    size_t n = (size_t)res[0] * res[1] * res[2];
    float *v = scene_reserve_voxels(s, n);
    CHECK(v != NULL, "voxels");
    if (!v) return -1;
    memcpy(v, d, n * sizeof *d);
    medium m;
    memset(&m, 0, sizeof m);
    m.kind = MEDIUM_GRID;
    m.sigma_a = sa;
    m.sigma_s = ss;
    m.emission = le;
    m.g = g;
    m.density_grid = (uint32_t)s->nvoxels;
    m.albedo_grid = MEDIUM_NO_GRID;
    scene_commit_voxels(s, n);
    for (int a = 0; a < 3; ++a) {
        m.res[a] = res[a];
        m.to_grid[4 * a + a] = 1.0f / (vcomp(hi, a) - vcomp(lo, a));
        m.to_grid[4 * a + 3] = -vcomp(lo, a) / (vcomp(hi, a) - vcomp(lo, a));
    }
    int i = scene_add_grid_medium(s, name, m);
    CHECK(i >= 0, "grid medium");
    if (i < 0) return -1;
    const medium *gm = &s->media[i];
    size_t nm = (size_t)gm->mres[0] * gm->mres[1] * gm->mres[2];
    for (size_t k = 0; k < nm; ++k) s->voxels[gm->majorant_grid + k] *= majorant_scale;
    return i;
}

/* The ramp of the slab tests: 8 x 1 x 1 voxels, density 0.25 + 0.5 i, over x in [-1, 1]. */
#define RAMP_N 8
static float ramp_density(int i) { return 0.25f + 0.5f * (float)i; }
/* The trilinear density of the ramp at world x (clamped at the half voxels of the ends). */
static double ramp_at(double x) {
    double v = (x + 1.0) / 2.0 * RAMP_N - 0.5;
    if (v <= 0.0) return ramp_density(0);
    if (v >= RAMP_N - 1) return ramp_density(RAMP_N - 1);
    int i = (int)floor(v);
    double f = v - i;
    return ramp_density(i) * (1.0 - f) + ramp_density(i + 1) * f;
}
/* The integral of the ramp over world x in [a, b] (inside [-1, 1]): midpoint rule, fine enough. */
static double ramp_integral(double a, double b) {
    const int n = 200000;
    double h = (b - a) / n, sum = 0.0;
    for (int i = 0; i < n; ++i) sum += ramp_at(a + (i + 0.5) * h);
    return sum * h;
}
static scene *ramp_scene(vec3 sa, vec3 ss, float majorant_scale) {
    scene *s = scene_create();
    uint32_t res[3] = {RAMP_N, 1, 1};
    float d[RAMP_N];
    for (int i = 0; i < RAMP_N; ++i) d[i] = ramp_density(i);
    add_material(s, "wall", MAT_DIFFUSE, v3s(0.5f), v3s(0.0f));
    add_grid(s, "ramp", res, d, v3(-1.0f, -5.0f, -5.0f), v3(1.0f, 5.0f, 5.0f), sa, ss, v3s(0.0f), 0.0f,
             majorant_scale);
    scene_add_quad(s, v3(50.0f, -1.0f, -1.0f), v3(0.0f, 2.0f, 0.0f), v3(0.0f, 0.0f, 2.0f), 0);
    prepare(s);
    return s;
}

/* Ratio tracking through the ramp against exp(-sigma_t * integral of the density), per channel
 * (chromatic sigma_t: one majorant for all three), through the whole slab and from inside it. */
static void test_grid_transmittance(void) {
    vec3 sa = v3(0.2f, 0.5f, 1.0f), ss = v3(0.3f, 0.1f, 0.0f), st = vadd(sa, ss);
    scene *s = ramp_scene(sa, ss, 1.0f);
    const kscene *k = &s->k;
    CHECK(k->media[0].mres[0] == 1 && k->voxels[k->media[0].majorant_grid] == ramp_density(RAMP_N - 1),
          "one majorant cell for 8 voxels, the largest density");
    struct {
        vec3 o;
        float len;
        double a, b;
    } cases[2] = {{{-3.0f, 0.1f, 0.2f}, 6.0f, -1.0, 1.0}, {{-0.6f, 0.3f, -0.2f}, 1.1f, -0.6, 0.5}};
    const int n = 20000;
    for (int ci = 0; ci < 2; ++ci) {
        double want_tau = ramp_integral(cases[ci].a, cases[ci].b);
        double sum[3] = {0, 0, 0}, sum2[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
            pcg32 rng = pcg32_seed((uint64_t)i * 7919u + (uint64_t)ci, 17u);
            vec3 tr = medium_transmittance(k, &k->media[0], make_ray(cases[ci].o, v3(1.0f, 0.0f, 0.0f), cases[ci].len),
                                           cases[ci].len, &rng);
            for (int c = 0; c < 3; ++c) {
                sum[c] += vcomp(tr, c);
                sum2[c] += vcomp(tr, c) * vcomp(tr, c);
            }
        }
        for (int c = 0; c < 3; ++c) {
            double mean = sum[c] / n, se = sqrt(fmax(0.0, sum2[c] / n - mean * mean) / n);
            double want = exp(-vcomp(st, c) * want_tau);
            printf("grid ratio tracking, case %d channel %d: %.5f +- %.5f (exp(-integral): %.5f)\n", ci, c, mean, se,
                   want);
            CHECK_NEAR(mean, want, 4.0 * se + 1e-4, "ratio tracking through the ramp");
        }
    }
    scene_destroy(s);
}

/* Delta tracking's estimators over one segment through the ramp, for a chromatic path throughput
 * (so that the channels' probabilities differ) and a majorant looser than the grid's: the
 * expected weight of passing is the transmittance T, and the expected weight of scattering the
 * integral of T sigma_s (per channel). Returns the largest |error| / standard error. */
static double delta_tracking_error(float majorant_scale, int verbose) {
    vec3 sa = v3(0.4f, 0.1f, 1.2f), ss = v3(0.6f, 0.2f, 0.4f), st = vadd(sa, ss);
    scene *s = ramp_scene(sa, ss, majorant_scale);
    const kscene *k = &s->k;
    const char *env = getenv("CAUSTIC_TEST_GRID_SAMPLES"); /* a longer check by hand */
    const int n = env && atoi(env) > 0 ? atoi(env) : 40000;
    vec3 beta = v3(1.0f, 0.6f, 0.3f);
    double pass[3] = {0, 0, 0}, pass2[3] = {0, 0, 0}, scat[3] = {0, 0, 0}, scat2[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
        pcg32 rng = pcg32_seed((uint64_t)i, 5u);
        float uc = pcg32_float(&rng), ud = pcg32_float(&rng);
        medium_segment seg = medium_sample_segment(k, &k->media[0], make_ray(v3(-3.0f, 0.0f, 0.0f), v3(1.0f, 0.0f, 0.0f), 6.0f),
                                                   6.0f, beta, uc, ud, &rng);
        for (int c = 0; c < 3; ++c) {
            double w = vcomp(seg.weight, c);
            double *sm = seg.scattered ? scat : pass, *sm2 = seg.scattered ? scat2 : pass2;
            sm[c] += w;
            sm2[c] += w * w;
        }
    }
    /* the expected scattering weight: integral over the slab of sigma_s d(x) exp(-sigma_t tau(x)) */
    double worst = 0.0;
    for (int c = 0; c < 3; ++c) {
        double tau = ramp_integral(-1.0, 1.0), want_pass = exp(-vcomp(st, c) * tau), want_scat = 0.0;
        const int m = 4000;
        double acc = 0.0, h = 2.0 / m;
        for (int j = 0; j < m; ++j) {
            double x = -1.0 + (j + 0.5) * h, dx = ramp_at(x);
            double tau_x = acc + dx * h * 0.5;
            want_scat += vcomp(ss, c) * dx * exp(-vcomp(st, c) * tau_x) * h;
            acc += dx * h;
        }
        double mp = pass[c] / n, sp = sqrt(fmax(0.0, pass2[c] / n - mp * mp) / n);
        double ms = scat[c] / n, sse = sqrt(fmax(0.0, scat2[c] / n - ms * ms) / n);
        if (verbose)
            printf("grid delta tracking channel %d: pass %.5f +- %.5f (T %.5f), scatter %.5f +- %.5f (%.5f)\n", c, mp,
                   sp, want_pass, ms, sse, want_scat);
        worst = fmax(worst, fabs(mp - want_pass) / (sp + 1e-4));
        worst = fmax(worst, fabs(ms - want_scat) / (sse + 1e-4));
    }
    scene_destroy(s);
    return worst;
}
static void test_grid_delta_tracking(void) {
    double e = delta_tracking_error(1.0f, 1);
    CHECK(e < 4.0, "delta tracking with the built majorant: %.2f standard errors off", e);
    e = delta_tracking_error(3.0f, 1);
    CHECK(e < 4.0, "delta tracking with a 3x looser majorant (null collisions): %.2f standard errors off", e);
    /* the test can fail: a majorant below the density (half the built one) biases delta tracking */
    e = delta_tracking_error(0.5f, 1);
    printf("grid delta tracking with a deliberately wrong majorant (0.5x): %.1f standard errors off\n", e);
    CHECK(e > 8.0, "a majorant below the density must fail the check (%.2f standard errors)", e);
}

/* A cube of constant-density grid equals the homogeneous medium of the same coefficients: the
 * mean of an image (light through and scattered by the medium, NEE with a point light) within
 * noise, the grid's majorant loosened so that its null collisions and spectral MIS are used. */
static scene *cube_scene(int grid, float majorant_scale) {
    scene *s = scene_create();
    int iface = add_material(s, "iface", MAT_INTERFACE, v3s(1.0f), v3s(0.0f));
    int light = add_material(s, "light", MAT_EMITTER, v3s(1.0f), v3s(1.0f));
    vec3 sa = v3(0.2f, 0.5f, 0.1f), ss = v3(1.2f, 0.6f, 0.3f);
    int m;
    if (grid) {
        uint32_t res[3] = {4, 4, 4};
        float d[64];
        for (int i = 0; i < 64; ++i) d[i] = 0.5f;
        m = add_grid(s, "m", res, d, v3s(-1.0f), v3s(1.0f), vscale(sa, 2.0f), vscale(ss, 2.0f), v3s(0.0f), 0.3f,
                     majorant_scale);
    } else {
        m = add_medium(s, "m", sa, ss, v3s(0.0f), 0.3f);
    }
    size_t t0 = s->ntriangles;
    scene_add_cube(s, xform_trs(v3s(0.0f), v3s(0.0f), v3s(2.0f)), iface);
    CHECK(scene_bind_media(s, t0, 0, 0, m + 1, 0) == 0, "bind");
    scene_add_quad(s, v3(3.0f, -2.0f, -2.0f), v3(0.0f, 0.0f, 4.0f), v3(0.0f, 4.0f, 0.0f), light);
    s->camera.eye = v3(-4.0f, 0.5f, 0.3f);
    s->camera.lookat = v3s(0.0f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 35.0f;
    s->camera.width = s->camera.height = 12;
    prepare(s);
    return s;
}
/* Pixel p of a render of k (p's samples), channel c: out[3 * p + c]. */
static void render_pixels(const kscene *k, const kpass *p, double *out) {
    for (int y = 0; y < p->cam.height; ++y)
        for (int x = 0; x < p->cam.width; ++x) {
            film_pixel px = {0.0, 0.0, 0.0, 0.0, 0u};
            uint32_t rays = 0, shadow = 0, bad = 0;
            film_trace_pixel(k, p, x, y, &px, NULL, &rays, &shadow, &bad, k->node_layout);
            double *o = out + 3 * (y * p->cam.width + x);
            o[0] = px.r / px.n;
            o[1] = px.g / px.n;
            o[2] = px.b / px.n;
        }
}
static void test_grid_constant(void) {
    scene *h = cube_scene(0, 1.0f), *g = cube_scene(1, 2.5f);
    kpass ph = make_pass(h, 128, 64), pg = make_pass(g, 128, 64);
    pg.seed = 11; /* independent of the homogeneous render */
    int n = ph.cam.width * ph.cam.height;
    double *ih = malloc(3 * sizeof(double) * (size_t)n), *ig = malloc(3 * sizeof(double) * (size_t)n);
    CHECK(ih && ig, "memory");
    if (ih && ig) {
        render_pixels(&h->k, &ph, ih);
        render_pixels(&g->k, &pg, ig);
        /* the per-pixel differences: the image's content cancels, their spread is the noise */
        for (int c = 0; c < 3; ++c) {
            double sh = 0.0, sd = 0.0, sd2 = 0.0;
            for (int i = 0; i < n; ++i) {
                double d = ig[3 * i + c] - ih[3 * i + c];
                sh += ih[3 * i + c];
                sd += d;
                sd2 += d * d;
            }
            double md = sd / n, se = sqrt(fmax(0.0, sd2 / n - md * md) / (n - 1.0));
            printf("constant grid channel %d: mean %.5f, homogeneous %.5f: difference %.5f +- %.5f\n", c,
                   sh / n + md, sh / n, md, se);
            CHECK_NEAR(md, 0.0, 4.0 * se + 1e-4, "a constant-density grid equals the homogeneous medium");
        }
    }
    free(ih);
    free(ig);
    scene_destroy(h);
    scene_destroy(g);
}

/* The furnace of test_furnace with an emitting, absorbing and scattering grid (constant density
 * over a box around the sphere, the majorant loosened 2x: null collisions add emission too): 1. */
static void test_grid_furnace(void) {
    scene *s = scene_create();
    int wall = add_material(s, "wall", MAT_EMITTER, v3s(1.0f), v3s(1.0f));
    uint32_t res[3] = {2, 2, 2};
    float d[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    int m = add_grid(s, "m", res, d, v3s(-2.5f), v3s(2.5f), v3(0.15f, 0.5f, 0.025f), v3(0.5f, 0.1f, 0.3f), v3s(1.0f),
                     -0.3f, 2.0f);
    scene_add_sphere(s, xform_trs(v3s(0.0f), v3s(0.0f), v3s(4.0f)), wall);
    CHECK(scene_bind_media(s, 0, 0, 0, m + 1, 0) == 0, "bind");
    s->camera.eye = v3(0.3f, -0.2f, 0.1f);
    s->camera.lookat = v3(1.0f, 0.0f, 0.4f);
    s->camera.up = v3(0.0f, 1.0f, 0.0f);
    s->camera.fovy_deg = 90.0f;
    s->camera.width = s->camera.height = 16;
    s->camera.medium = m + 1;
    prepare(s);
    kpass p = make_pass(s, FURNACE_SPP, 1000);
    vec3 e, l = render_mean(&s->k, &p, &e);
    printf("grid furnace, emitting medium: %.5f %.5f %.5f (standard error %.5f %.5f %.5f)\n", l.x, l.y, l.z, e.x, e.y,
           e.z);
    for (int c = 0; c < 3; ++c) CHECK_NEAR(vcomp(l, c), 1.0, 4.0 * vcomp(e, c) + 1e-4, "emitting grid furnace");
    scene_destroy(s);
}

/* .vol: a written grid reads back the same; malformed files fail with one message naming the
 * file and the fault, and leave the scene's voxels as they were. */
static void put32(unsigned char *b, uint32_t v) {
    for (int k = 0; k < 4; ++k) b[k] = (unsigned char)(v >> (8 * k));
}
static void test_vol(void) {
    char path[] = "/tmp/caustic_test_vol_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) return;
    close(fd);
    uint32_t res[3] = {3, 2, 2};
    float bbox[6] = {-1.0f, 0.0f, 2.0f, 1.0f, 4.0f, 3.5f}, v[36];
    for (int i = 0; i < 36; ++i) v[i] = 0.1f * (float)i;
    char err[512] = "";
    CHECK(vol_write(path, res, 3, bbox, v, err, sizeof err) == 0, "write: %s", err);
    scene *s = scene_create();
    vol_header h;
    int rc = vol_load(s, path, &h, err, sizeof err);
    CHECK(rc == 0, "read: %s", err);
    if (!rc) {
        CHECK(h.res[0] == 3 && h.res[1] == 2 && h.res[2] == 2 && h.channels == 3 && h.nvalues == 36 && h.offset == 0,
              "header");
        CHECK(memcmp(h.bbox, bbox, sizeof bbox) == 0, "bbox");
        CHECK(s->nvoxels == 36 && memcmp(s->voxels, v, sizeof v) == 0, "values");
    }
    /* malformed: each a buffer from the good file's bytes */
    unsigned char good[48 + 4 * 36];
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(good, 1, sizeof good, f) == sizeof good, "read back the bytes");
    if (f) fclose(f);
    remove(path);
    struct {
        int at;       /* byte to change (-1: none) */
        uint32_t val; /* its new 32-bit value (at 3: the version byte) */
        size_t size;  /* bytes given */
        const char *want;
    } bad[] = {{0, 0x4c4f5657u, sizeof good, "not a Mitsuba .vol grid"},
               {3, 2u, sizeof good, "version 2"},
               {4, 2u, sizeof good, "encoding 2"},
               {8, 0u, sizeof good, "resolution 0 x 2 x 2"},
               {20, 2u, sizeof good, "2 channels"},
               {-1, 0u, sizeof good - 4, "needs 144 bytes of voxels after the header, the file has 140"},
               {-1, 0u, 20, "48-byte header"},
               {48 + 4 * 7, 0x7fc00000u, sizeof good, "voxel (2, 0, 0) channel 1 is nan"},
               {48 + 4 * 35, 0xbf800000u, sizeof good, "voxel (2, 1, 1) channel 2 is -1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        unsigned char b[sizeof good];
        memcpy(b, good, sizeof good);
        if (bad[i].at == 3)
            b[3] = (unsigned char)bad[i].val;
        else if (bad[i].at >= 0)
            put32(b + bad[i].at, bad[i].val);
        size_t before = s->nvoxels;
        err[0] = '\0';
        rc = vol_load_memory(s, b, bad[i].size, "bad.vol", &h, err, sizeof err);
        CHECK(rc != 0 && strncmp(err, "bad.vol: ", 9) == 0 && strstr(err, bad[i].want) && !strchr(err, '\n'),
              "malformed .vol %zu: \"%s\" (want \"%s\")", i, err, bad[i].want);
        CHECK(s->nvoxels == before, "a failed read keeps the voxels");
    }
    scene_destroy(s);
}

/* Scene JSON's grid medium: FILE, BOX, the coefficients per unit density, and messages naming
 * the key. */
static void test_grid_json(void) {
    char dir[] = "/tmp/caustic_test_grid_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char dpath[256], apath[256], err[512] = "";
    snprintf(dpath, sizeof dpath, "%s/d.vol", dir);
    snprintf(apath, sizeof apath, "%s/a.vol", dir);
    uint32_t res[3] = {2, 2, 2};
    float bbox[6] = {0, 0, 0, 1, 1, 1}, d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, a[24];
    for (int i = 0; i < 24; ++i) a[i] = 0.5f;
    CHECK(vol_write(dpath, res, 1, bbox, d, err, sizeof err) == 0, "write: %s", err);
    CHECK(vol_write(apath, res, 3, bbox, a, err, sizeof err) == 0, "write: %s", err);
    const char *fmt = "{\"Media\": {\"cloud\": {\"TYPE\": \"Grid\", \"FILE\": \"%s\", %s}},"
                      " \"Materials\": {\"b\": {\"TYPE\": \"Interface\"}},"
                      " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0]},"
                      " \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"b\", \"INTERIOR\": \"cloud\"}]}";
    char text[2048];
    snprintf(text, sizeof text, fmt, "d.vol",
             "\"ALBEDO\": 0.8, \"DENSITY\": 2, \"SCALE\": 3, \"ALBEDO_FILE\": \"a.vol\", \"BOX\": [[-1,-1,-1],[1,1,1]]");
    scene *s = NULL;
    int rc = scene_load_json_text(&s, text, "grid.json", dir, err, sizeof err);
    CHECK(rc == 0, "grid JSON: %s", err);
    if (!rc) {
        const medium *m = &s->media[0];
        CHECK(m->kind == MEDIUM_GRID && m->res[0] == 2 && m->albedo_grid != MEDIUM_NO_GRID, "a grid medium");
        CHECK_NEAR(vcomp(vadd(m->sigma_a, m->sigma_s), 0), 6.0, 1e-5, "sigma_t per unit density: DENSITY * SCALE");
        CHECK_NEAR(m->majorant, 48.0, 1e-4, "majorant: the largest density times sigma_t");
        CHECK_NEAR(m->to_grid[0], 0.5, 1e-6, "BOX maps to the unit cube");
        scene_destroy(s);
    }
    struct {
        const char *file, *keys, *want;
    } bad[] = {{"d.vol", "\"ALBEDO_FILE\": \"d.vol\"", "Media.cloud.ALBEDO_FILE"},
               {"nope.vol", "\"G\": 0", "Media.cloud.FILE"},
               {"d.vol", "\"BOX\": [[0,0,0],[1,0,1]]", "Media.cloud.BOX"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(text, sizeof text, fmt, bad[i].file, bad[i].keys);
        s = NULL;
        rc = scene_load_json_text(&s, text, "grid.json", dir, err, sizeof err);
        CHECK(rc != 0 && strstr(err, bad[i].want), "bad grid JSON %zu: %s", i, err);
        if (!rc) scene_destroy(s);
    }
    remove(dpath);
    remove(apath);
    rmdir(dir);
}

int main(void) {
    test_vol();
    test_grid_json();
    test_grid_transmittance();
    test_grid_delta_tracking();
    test_grid_constant();
    test_grid_furnace();
    test_json();
    test_hg();
    test_slab_transmittance();
    test_furnace();
    test_absorbing_glass();
    return test_result("test_media");
}
