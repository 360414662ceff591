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

/* Subsurface: Chiang et al. 2016's inversion (src/scene/material.h) at points worked by hand, its
 * monotonicity, and the JSON mapping (TYPE Subsurface / Skin / Wax: a dielectric or rough glass
 * around the medium; SIGMA_A/SIGMA_S as given; neither: Diffuse with a warning; an object's
 * EXTERIOR keeps the material's inside). */
static int g_warnings;
static void count_warning(void *user, const char *msg) {
    (void)user;
    (void)msg;
    g_warnings++;
}
/* The hemispherical albedo of a semi-infinite isotropic medium of single-scattering albedo `alpha`
 * behind an index-matched boundary, lit uniformly (cosine-distributed entry): the fraction of
 * n random walks (depth along z, in mean free paths) that come back out. */
static double walk_albedo(double alpha, int n, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1u;
#define U01() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (double)(x >> 11) * (1.0 / 9007199254740992.0))
    int out = 0;
    for (int i = 0; i < n; ++i) {
        double z = 0.0, dz = sqrt(U01());
        for (int step = 0; step < 100000; ++step) {
            z += dz * -log(1.0 - U01());
            if (z < 0.0) {
                out++;
                break;
            }
            if (U01() >= alpha) break;
            dz = 2.0 * U01() - 1.0;
        }
    }
#undef U01
    return (double)out / n;
}

static void test_subsurface(void) {
    /* the inversion does what it is for: a walk of alpha(A) comes back with probability A (the fit's
     * error: within 0.01 up to A 0.8; 0.90 at A 0.95) */
    const float as[] = {0.2f, 0.5f, 0.8f};
    for (int i = 0; i < 3; ++i) {
        double r = walk_albedo(material_subsurface_alpha(as[i]), 40000, 5 + (uint64_t)i);
        CHECK(fabs(r - as[i]) < 0.012, "A %g: the walk's albedo is %g", as[i], r);
    }
    CHECK_NEAR(material_subsurface_alpha(0.0f), 0.0, 1e-7, "alpha(0)");
    CHECK_NEAR(material_subsurface_alpha(1.0f), 1.0 - exp(-6.80023), 1e-5, "alpha(1)");
    CHECK_NEAR(material_subsurface_alpha(0.5f), 1.0 - exp(0.5 * (-5.09406 + 0.5 * (2.61188 - 0.5 * 4.31805))), 1e-6,
               "alpha(0.5)");
    float prev = -1.0f;
    for (int i = 0; i <= 100; ++i) {
        float a = material_subsurface_alpha((float)i / 100.0f);
        CHECK(a > prev && a < 1.0f, "alpha not increasing in (0, 1) at A = %g: %g", i / 100.0, a);
        prev = a;
    }
    vec3 sa, ss;
    /* A = 0.8: s = 1.1, so sigma_t = 1 / (1.1 d) */
    material_subsurface_medium(v3(0.8f, 0.8f, 0.8f), v3(1.0f, 2.0f, 0.5f), 0.0f, &sa, &ss);
    CHECK_NEAR(sa.x + ss.x, 1.0 / 1.1, 1e-5, "sigma_t(A 0.8, d 1)");
    CHECK_NEAR(sa.y + ss.y, 1.0 / 2.2, 1e-5, "sigma_t(A 0.8, d 2)");
    CHECK_NEAR(ss.z / (sa.z + ss.z), material_subsurface_alpha(0.8f), 1e-5, "sigma_s / sigma_t = alpha");
    vec3 sa_g, ss_g; /* with g: the reduced scattering coefficient is the isotropic one */
    material_subsurface_medium(v3(0.8f, 0.8f, 0.8f), v3(1.0f, 2.0f, 0.5f), 0.6f, &sa_g, &ss_g);
    CHECK_NEAR(ss_g.x * 0.4f, ss.x, 1e-5, "sigma_s (1 - g)");
    CHECK_NEAR(sa_g.x, sa.x, 1e-7, "sigma_a independent of g");
    vec3 ka, ks;
    CHECK(material_measured_medium("skin1", &ka, &ks) == 0 && ks.x == 0.74f && ka.z == 0.48f, "Skin1 (Jensen 2001)");
    CHECK(material_measured_medium("Skin3", &ka, &ks) < 0, "an unknown measured medium");

    const char *text =
        "{\"Materials\": {\"skin\": {\"TYPE\": \"Skin\", \"RGB\": [0.8, 0.5, 0.3], \"RADIUS\": [1, 0.5, 0.25], "
        "\"IOR\": 1.4},"
        "               \"wax\": {\"TYPE\": \"Wax\", \"SIGMA_A\": [0.1, 0.2, 0.3], \"SIGMA_S\": 2, \"ROUGHNESS\": 0.3,"
        "                       \"G\": 0.2},"
        "               \"plain\": {\"TYPE\": \"SSS\", \"RGB\": 0.5}},"
        " \"Media\": {\"air\": {\"SIGMA_S\": 0.01}},"
        " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0]},"
        " \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"skin\"},"
        "             {\"TYPE\": \"sphere\", \"MATERIAL\": \"wax\", \"EXTERIOR\": \"air\"},"
        "             {\"TYPE\": \"sphere\", \"MATERIAL\": \"plain\"}]}";
    scene *s = NULL;
    char err[512] = "";
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    o.warn = count_warning;
    g_warnings = 0;
    int rc = scene_load_json_text_opts(&s, text, "sss.json", NULL, &o, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(g_warnings == 1, "one warning (the SSS material without a medium), got %d", g_warnings);
    int skin = scene_find_medium(s, "skin"), wax = scene_find_medium(s, "wax"), air = scene_find_medium(s, "air");
    CHECK(skin >= 0 && wax >= 0 && air >= 0 && scene_find_medium(s, "plain") < 0, "media by the materials' names");
    if (skin >= 0 && wax >= 0) {
        material_subsurface_medium(v3(0.8f, 0.5f, 0.3f), v3(1.0f, 0.5f, 0.25f), 0.0f, &sa, &ss);
        CHECK(s->media[skin].sigma_a.y == sa.y && s->media[skin].sigma_s.z == ss.z, "skin: the inversion's medium");
        CHECK(s->media[wax].sigma_a.z == 0.3f && s->media[wax].sigma_s.x == 2.0f && s->media[wax].g == 0.2f,
              "wax: SIGMA_A / SIGMA_S / G as given");
        const material *m0 = &s->materials[s->spheres[0].material];
        CHECK(m0->kind == MAT_DIELECTRIC && m0->medium_inside == skin + 1 && m0->medium_outside == 0 &&
                  fabsf(m0->ior - 1.4f) < 1e-6f,
              "skin: a dielectric of IOR 1.4 around its medium (kind %d, inside %d)", m0->kind, m0->medium_inside);
        const material *m1 = &s->materials[s->spheres[1].material];
        CHECK(m1->kind == MAT_ROUGH_GLASS && m1->medium_inside == wax + 1 && m1->medium_outside == air + 1,
              "wax: rough glass, its medium inside and EXTERIOR air outside (kind %d, %d %d)", m1->kind,
              m1->medium_inside, m1->medium_outside);
        const material *m2 = &s->materials[s->spheres[2].material];
        CHECK(m2->kind == MAT_DIFFUSE, "SSS without RADIUS or SIGMA: Diffuse (kind %d)", m2->kind);
    }
    scene_destroy(s);
    /* both ways of giving the medium: one message naming the key */
    const char *bad =
        "{\"Materials\": {\"s\": {\"TYPE\": \"Subsurface\", \"RGB\": 0.5, \"RADIUS\": 1, \"SIGMA_S\": 2}},"
        " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0]},"
        " \"Objects\": [{\"TYPE\": \"sphere\", \"MATERIAL\": \"s\"}]}";
    s = NULL;
    rc = scene_load_json_text_opts(&s, bad, "bad.json", NULL, &o, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "Materials.s.RADIUS"), "RADIUS with SIGMA_S: %s", err);
    if (!rc) scene_destroy(s);
}

/* ---- dispersion: the prism (scenes/prism.json) ------------------------------------------------
 * The scene's slit light, behind a wall's aperture, seen through its prism of Cauchy glass from
 * where its receiving screen stands (the eye just in front of the screen's centre, looking back
 * along the beam: a spectrometer whose columns are directions). Rendered with the library's path
 * tracer, each channel's band has a centroid, the mean direction the slit's light of that
 * channel arrives from; the prediction traces the scene's own geometry (read from the file), the
 * same pinhole's rays through the two faces by Snell's law at wavelengths 361..829 nm (3D, Fresnel
 * transmittance at each face), counted where they pass the aperture and reach the slit, weighted
 * by the channel's response (kernel/spectral.h). Red must deviate least, blue most, each centroid
 * within PRISM_TOL pixels of the prediction; with the dispersion off (-D ...ABBE=0) the three
 * coincide and match the prediction at the d-line IOR. */
#include <cjson/cJSON.h>

#include "caustic.h"
#include "cuda_skip.h"
#include "kernel/spectral.h"

#define PRISM_W   160
#define PRISM_H   40
#define PRISM_TOL 0.5 /* pixels: a band's centroid against the prediction (red to blue: 9.5 pixels) */

typedef struct prism_geo {
    double tri[3][2];              /* the prism's cross-section (the first three VERTICES) */
    double pz;                     /* its half-length along z */
    double ya0, ya1, xwall;        /* the aperture between the two walls */
    double light[3], lu[3], lv[3]; /* the slit: ORIGIN, U, V */
    double sc[2], su[2];           /* the screen's centre and unit direction along it (in the plane) */
    double eye[2], tan_half;       /* the camera (behind the screen, looking at its centre), tan(fov_x / 2) */
    double zview;                  /* the screen's half-height the camera sees */
    float ior, b;                  /* the glass: IOR at the d line, Cauchy B */
} prism_geo;

static const cJSON *prism_object(const cJSON *root, const char *name) {
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(root, "Objects")) {
        const cJSON *n = cJSON_GetObjectItem(o, "NAME");
        if (n && cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return o;
    }
    return NULL;
}
static double jnum(const cJSON *a, int i) { return cJSON_GetArrayItem(a, i)->valuedouble; }

static int prism_read(const char *path, prism_geo *g) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *root = cJSON_Parse(buf);
    if (!root) return -1;
    const cJSON *pr = prism_object(root, "prism"), *wa = prism_object(root, "wall above"),
                *wb = prism_object(root, "wall below"), *sc = prism_object(root, "screen"),
                *sl = prism_object(root, "slit");
    const cJSON *cam = cJSON_GetObjectItem(root, "Camera");
    const cJSON *glass = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "Materials"), "glass");
    int ok = pr && wa && wb && sc && sl && cam && glass;
    if (ok) {
        const cJSON *v = cJSON_GetObjectItem(pr, "VERTICES");
        for (int i = 0; i < 3; ++i)
            for (int c = 0; c < 2; ++c) g->tri[i][c] = jnum(cJSON_GetArrayItem(v, i), c);
        g->pz = fabs(jnum(cJSON_GetArrayItem(v, 0), 2));
        const cJSON *oa = cJSON_GetObjectItem(wa, "ORIGIN"), *ob = cJSON_GetObjectItem(wb, "ORIGIN");
        g->ya1 = jnum(oa, 1);
        g->ya0 = jnum(ob, 1) + jnum(cJSON_GetObjectItem(wb, "U"), 1);
        g->xwall = jnum(oa, 0);
        for (int c = 0; c < 3; ++c) {
            g->light[c] = jnum(cJSON_GetObjectItem(sl, "ORIGIN"), c);
            g->lu[c] = jnum(cJSON_GetObjectItem(sl, "U"), c);
            g->lv[c] = jnum(cJSON_GetObjectItem(sl, "V"), c);
        }
        const cJSON *so = cJSON_GetObjectItem(sc, "ORIGIN"), *su = cJSON_GetObjectItem(sc, "U");
        double len = hypot(jnum(su, 0), jnum(su, 1));
        for (int c = 0; c < 2; ++c) {
            g->sc[c] = jnum(so, c) + 0.5 * jnum(su, c);
            g->su[c] = jnum(su, c) / len;
            g->eye[c] = jnum(cJSON_GetObjectItem(cam, "EYE"), c);
        }
        const cJSON *res = cJSON_GetObjectItem(cam, "RES");
        /* FOVY: half the vertical field of view in degrees (docs/scene-format.md, Camera) */
        double tan_v = tan(cJSON_GetObjectItem(cam, "FOVY")->valuedouble * K_PI / 180.0);
        g->tan_half = tan_v * jnum(res, 0) / jnum(res, 1);
        g->zview = hypot(g->eye[0] - g->sc[0], g->eye[1] - g->sc[1]) * tan_v;
        g->ior = (float)cJSON_GetObjectItem(glass, "IOR")->valuedouble;
        g->b = cauchy_b_from_abbe(g->ior, (float)cJSON_GetObjectItem(glass, "ABBE")->valuedouble);
    }
    cJSON_Delete(root);
    return ok ? 0 : -1;
}

/* The ray (o, d) (3D, d unit) through the prism of index n, refracted by Snell's law at two faces
 * (the cross-section's edges extruded along z): o and d become the ray that leaves it; returns the
 * Fresnel transmittance of the two faces (0 if it misses the prism, is reflected totally, or
 * leaves through an end cap). */
static double prism_trace(const prism_geo *g, double o[3], double d[3], double n) {
    double t_total = 1.0;
    int inside = 0;
    for (int bounce = 0; bounce < 2; ++bounce) {
        double best = 1e30, nrm[2] = {0, 0};
        for (int e = 0; e < 3; ++e) {
            const double *a = g->tri[e], *b = g->tri[(e + 1) % 3];
            double ex = b[0] - a[0], ey = b[1] - a[1], den = d[0] * ey - d[1] * ex;
            if (fabs(den) < 1e-12) continue;
            double rx = a[0] - o[0], ry = a[1] - o[1];
            double t = (rx * ey - ry * ex) / den, u = (rx * d[1] - ry * d[0]) / den;
            if (t > 1e-9 && t < best && u >= 0.0 && u <= 1.0) {
                best = t;
                /* the edge's outward normal (the third corner is behind it) */
                const double *c = g->tri[(e + 2) % 3];
                double nx = ey, ny = -ex, l = hypot(nx, ny);
                nx /= l, ny /= l;
                if (nx * (c[0] - a[0]) + ny * (c[1] - a[1]) > 0.0) nx = -nx, ny = -ny;
                nrm[0] = nx, nrm[1] = ny;
            }
        }
        if (best == 1e30) return 0.0;
        for (int c = 0; c < 3; ++c) o[c] += best * d[c];
        if (fabs(o[2]) > g->pz) return 0.0;
        /* Snell: the normal against d, eta = n_i / n_t */
        double nx = inside ? -nrm[0] : nrm[0], ny = inside ? -nrm[1] : nrm[1], eta = inside ? n : 1.0 / n;
        double ci = -(d[0] * nx + d[1] * ny), k = 1.0 - eta * eta * (1.0 - ci * ci);
        if (k < 0.0) return 0.0;
        t_total *= 1.0 - fresnel_dielectric((float)ci, inside ? 1.0f / (float)n : (float)n);
        double ct = sqrt(k);
        d[0] = eta * d[0] + (eta * ci - ct) * nx;
        d[1] = eta * d[1] + (eta * ci - ct) * ny;
        d[2] = eta * d[2];
        inside = !inside;
    }
    return t_total;
}

/* The test's view: the eye just in front of the screen's centre, looking back at the prism along
 * the beam (a spectrometer: each column a direction, the slit seen through the prism where
 * Snell's law puts it at each wavelength). */
typedef struct prism_view {
    double eye[3], fwd[3], right[3], up[3];
    double tan_h, tan_v;
} prism_view;
#define PRISM_FOVY 1.5 /* degrees, half the vertical field of view */
static prism_view prism_view_of(const prism_geo *g) {
    prism_view v;
    /* the beam reaches the screen along d0 = (su.y, -su.x) */
    double d0[2] = {g->su[1], -g->su[0]};
    v.eye[0] = g->sc[0] - 0.1 * d0[0], v.eye[1] = g->sc[1] - 0.1 * d0[1], v.eye[2] = 0.0;
    v.fwd[0] = -d0[0], v.fwd[1] = -d0[1], v.fwd[2] = 0.0;
    /* right = forward x up, up = z (scene.c's camera frame) */
    v.up[0] = 0.0, v.up[1] = 0.0, v.up[2] = 1.0;
    v.right[0] = v.fwd[1], v.right[1] = -v.fwd[0], v.right[2] = 0.0;
    v.tan_v = tan(PRISM_FOVY * K_PI / 180.0);
    v.tan_h = v.tan_v * PRISM_W / PRISM_H;
    return v;
}
/* Does the ray (o, d), leaving the prism, pass the wall's aperture and reach the slit? */
static int prism_sees_slit(const prism_geo *g, const double o[3], const double d[3]) {
    if (!(d[0] < 0.0)) return 0;
    double t = (g->xwall - o[0]) / d[0], y = o[1] + t * d[1];
    if (y < g->ya0 || y > g->ya1) return 0;
    t = (g->light[0] - o[0]) / d[0];
    double ly = o[1] + t * d[1] - g->light[1], lz = o[2] + t * d[2] - g->light[2];
    return ly >= 0.0 && ly <= g->lu[1] && lz >= 0.0 && lz <= g->lv[2];
}
/* The predicted centroid of each channel's band, in the view's horizontal tangent: every column
 * (4 x 4 points a pixel, every fourth row) traced through the prism at wavelengths 361..829 nm,
 * counted where it reaches the slit, weighted by the faces' Fresnel transmittance and the
 * channel's response (kernel/spectral.h). */
static void prism_predict(const prism_geo *g, const prism_view *v, float b, double out[3]) {
    double sw[3] = {0, 0, 0}, sws[3] = {0, 0, 0};
    for (int x = 0; x < PRISM_W; ++x)
        for (int y = 0; y < PRISM_H; y += 4)
            for (int j = 0; j < 16; ++j) {
                double tx = (2.0 * (x + (j % 4 + 0.5) / 4.0) / PRISM_W - 1.0) * v->tan_h;
                double ty = (1.0 - 2.0 * (y + (j / 4 + 0.5) / 4.0) / PRISM_H) * v->tan_v;
                for (float l = SPECTRAL_LAMBDA_MIN + 1.0f; l < SPECTRAL_LAMBDA_MAX; l += 2.0f) {
                    double o[3], d[3], len = 0.0;
                    for (int c = 0; c < 3; ++c) {
                        o[c] = v->eye[c];
                        d[c] = v->fwd[c] + tx * v->right[c] + ty * v->up[c];
                        len += d[c] * d[c];
                    }
                    for (int c = 0; c < 3; ++c) d[c] /= sqrt(len);
                    double t = prism_trace(g, o, d, cauchy_ior(g->ior, b, l));
                    if (!(t > 0.0) || !prism_sees_slit(g, o, d)) continue;
                    vec3 w = spectral_rgb(l);
                    for (int c = 0; c < 3; ++c) {
                        sw[c] += t * vcomp(w, c);
                        sws[c] += t * vcomp(w, c) * tx;
                    }
                }
            }
    for (int c = 0; c < 3; ++c) out[c] = sw[c] > 0.0 ? sws[c] / sw[c] : 1e30;
}

static int g_prism_device = CAUSTIC_DEVICE_CPU; /* test_media --prism FILE SPP cuda: the GPU megakernel's */
/* Renders the scene from the view (with `define` as well, NULL for none) and measures each
 * channel's centroid in the view's horizontal tangent. */
static int prism_measure(const char *path, const prism_view *v, const char *define, int spp, double out[3]) {
    char eye[96], look[96], fovy[32];
    snprintf(eye, sizeof eye, "Camera.EYE=[%.9g,%.9g,%.9g]", v->eye[0], v->eye[1], v->eye[2]);
    snprintf(look, sizeof look, "Camera.LOOKAT=[%.9g,%.9g,%.9g]", v->eye[0] + v->fwd[0], v->eye[1] + v->fwd[1],
             v->eye[2] + v->fwd[2]);
    snprintf(fovy, sizeof fovy, "Camera.FOVY=%.9g", PRISM_FOVY);
    const char *defs[4] = {eye, look, fovy, define};
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    lo.defines = defs;
    lo.ndefines = define ? 4 : 3;
    char err[512];
    caustic_scene *cs = NULL;
    if (caustic_scene_load_ex(&cs, path, &lo, err, sizeof err)) {
        CHECK(0, "prism: %s", err);
        return -1;
    }
    caustic_options o;
    caustic_options_init(&o);
    o.width = PRISM_W;
    o.height = PRISM_H;
    o.spp = spp;
    o.threads = 2;
    o.seed = 7;
    o.max_depth = 8;
    o.device = (caustic_device)g_prism_device;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "prism renderer: %s", err);
    if (!r) {
        caustic_scene_free(cs);
        return -1;
    }
    caustic_render(r, NULL, NULL, NULL, 0);
    const float *img = caustic_image(r, NULL, NULL);
    double sw[3] = {0, 0, 0}, sws[3] = {0, 0, 0};
    for (int y = 0; y < PRISM_H; ++y)
        for (int x = 0; x < PRISM_W; ++x) {
            double tx = (2.0 * (x + 0.5) / PRISM_W - 1.0) * v->tan_h;
            for (int c = 0; c < 3; ++c) {
                double val = img[3 * (y * PRISM_W + x) + c];
                sw[c] += val;
                sws[c] += val * tx;
            }
        }
    for (int c = 0; c < 3; ++c) out[c] = sw[c] > 0.0 ? sws[c] / sw[c] : 1e30;
    caustic_renderer_free(r);
    caustic_scene_free(cs);
    return sw[0] > 0.0 && sw[1] > 0.0 && sw[2] > 0.0 ? 0 : -1;
}

static int test_prism(const char *path, int spp) {
    prism_geo g;
    if (prism_read(path, &g)) {
        CHECK(0, "%s: not the prism scene (Objects prism, slit, wall above/below, screen; Materials.glass)", path);
        return test_result("test_prism");
    }
    prism_view v = prism_view_of(&g);
    double pred[3], pred0[3], meas[3], meas0[3];
    prism_predict(&g, &v, g.b, pred);
    prism_predict(&g, &v, 0.0f, pred0);
    printf("prism: IOR %.4f, Cauchy B %.5f um^2 (n 450 nm %.4f, 650 nm %.4f)\n", g.ior, g.b,
           cauchy_ior(g.ior, g.b, 450.0f), cauchy_ior(g.ior, g.b, 650.0f));
    CHECK(prism_measure(path, &v, NULL, spp, meas) == 0, "prism: the slit is not seen through the prism");
    CHECK(prism_measure(path, &v, "Materials.glass.ABBE=0", spp, meas0) == 0,
          "prism without dispersion: the slit is not seen through the prism");
    const double px = 2.0 * v.tan_h / PRISM_W; /* a pixel, in the tangent */
    const char *ch = "RGB";
    for (int c = 0; c < 3; ++c) {
        printf("prism %c: band at %+.4f deg (Snell's law with the Cauchy IOR: %+.4f deg); without dispersion %+.4f "
               "(%+.4f)\n",
               ch[c], atan(meas[c]) * 180.0 / K_PI, atan(pred[c]) * 180.0 / K_PI, atan(meas0[c]) * 180.0 / K_PI,
               atan(pred0[c]) * 180.0 / K_PI);
        CHECK(fabs(meas[c] - pred[c]) < PRISM_TOL * px,
              "prism channel %c: band at %.5f, Snell's law with Cauchy's IOR says %.5f (%.2f pixels off)", ch[c],
              meas[c], pred[c], (meas[c] - pred[c]) / px);
        CHECK(fabs(meas0[c] - pred0[c]) < PRISM_TOL * px, "prism without dispersion, channel %c: %.5f, predicted %.5f",
              ch[c], meas0[c], pred0[c]);
    }
    /* the deviation grows towards blue's side of red in the prediction */
    double sgn = pred[2] > pred[0] ? 1.0 : -1.0;
    CHECK(sgn * (meas[1] - meas[0]) > 0.0 && sgn * (meas[2] - meas[1]) > 0.0,
          "prism: the bands are not ordered red (least deviated), green, blue: %.5f %.5f %.5f", meas[0], meas[1],
          meas[2]);
    CHECK(fabs(pred[2] - pred[0]) > 10.0 * PRISM_TOL * px,
          "prism: the predicted red-blue separation %.2f pixels is too small a test", fabs(pred[2] - pred[0]) / px);
    CHECK(fabs(meas0[2] - meas0[0]) < 0.05 * px, "prism without dispersion: red and blue apart by %.3f pixels",
          (meas0[2] - meas0[0]) / px);
    return test_result("test_prism");
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
    add_grid(s, "ramp", res, d, v3(-1.0f, -5.0f, -5.0f), v3(1.0f, 5.0f, 5.0f), sa, ss, v3s(0.0f), 0.0f, majorant_scale);
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
        medium_segment seg = medium_sample_segment(
            k, &k->media[0], make_ray(v3(-3.0f, 0.0f, 0.0f), v3(1.0f, 0.0f, 0.0f), 6.0f), 6.0f, beta, uc, ud, &rng);
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
            printf("constant grid channel %d: mean %.5f, homogeneous %.5f: difference %.5f +- %.5f\n", c, sh / n + md,
                   sh / n, md, se);
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
    snprintf(
        text, sizeof text, fmt, "d.vol",
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

/* ---- NanoVDB grid media (kernel/media/nanovdb.h, src/import/nvdb.c) ------------------------------
 * tests/data/media/cloud24.{vol,nvdb,vdb}: one 24^3 cloud (tools/make_cloud_vol.py --res 24 --seed
 * 5, converted by caustic_vol_to_nvdb with every voxel active), const8.nvdb: 8^3 voxels of density
 * 2 over the unit cube (caustic_vol_to_nvdb --constant 8 2). */
#ifndef CAUSTIC_SOURCE_DIR
#define CAUSTIC_SOURCE_DIR "."
#endif
static int nvdb_medium(scene *s, const char *name, const char *file, const char *grid, vec3 sa, vec3 ss, char *err,
                       size_t errlen) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/media/%s", CAUSTIC_SOURCE_DIR, file);
    medium md;
    memset(&md, 0, sizeof md);
    md.sigma_a = sa;
    md.sigma_s = ss;
    return nvdb_grid_medium(s, name, md, path, grid, NULL, err, errlen);
}
static void test_nanovdb(void) {
#if !defined(CAUSTIC_HAVE_NANOVDB)
    printf("test_nanovdb: SKIP (built without libnanovdb-dev)\n");
#else
    char err[512] = "", path[512];
    scene *s = scene_create();
    /* the dense .vol and its NanoVDB copy: the same unit cube, lookups and majorants */
    snprintf(path, sizeof path, "%s/tests/data/media/cloud24.vol", CAUSTIC_SOURCE_DIR);
    medium md;
    memset(&md, 0, sizeof md);
    md.sigma_a = v3(1.0f, 2.0f, 3.0f);
    md.sigma_s = v3(2.0f, 1.0f, 0.5f);
    int rc = vol_grid_medium(s, "dense", md, path, NULL, NULL, 1, err, sizeof err);
    CHECK(rc == 0, "cloud24.vol: %s", err);
    rc = nvdb_medium(s, "nano", "cloud24.nvdb", NULL, md.sigma_a, md.sigma_s, err, sizeof err);
    CHECK(rc == 0, "cloud24.nvdb: %s", err);
    int has_vdb = nvdb_medium(s, "vdb", "cloud24.vdb", "density", md.sigma_a, md.sigma_s, err, sizeof err) == 0;
    if (!has_vdb) {
        CHECK(strstr(err, "without OpenVDB") != NULL, "cloud24.vdb: %s", err);
        printf("test_nanovdb: .vdb part skipped: %s\n", err);
    }
    rc = nvdb_medium(s, "const", "const8.nvdb", NULL, v3(0.5f, 1.0f, 0.25f), v3(0.5f, 0.0f, 0.25f), err, sizeof err);
    CHECK(rc == 0, "const8.nvdb: %s", err);
    if (rc) {
        scene_destroy(s);
        return;
    }
    /* a wall far away: scene_prepare wants a surface */
    scene_add_quad(s, v3(50.0f, -1.0f, -1.0f), v3(0.0f, 2.0f, 0.0f), v3(0.0f, 0.0f, 2.0f),
                   add_material(s, "wall", MAT_DIFFUSE, v3s(0.5f), v3s(0.0f)));
    prepare(s);
    const kscene *k = &s->k;
    const medium *d = &k->media[0], *n = &k->media[1], *c = &k->media[has_vdb ? 3 : 2];
    CHECK(n->kind == MEDIUM_NANOVDB && n->res[0] == 24 && n->res[1] == 24 && n->res[2] == 24, "nvdb: 24^3 active box");
    for (int i = 0; i < 12; ++i) CHECK_NEAR(n->to_grid[i], d->to_grid[i], 1e-5, "the grid's map places it as the .vol");
    CHECK_NEAR(n->majorant, d->majorant, 1e-6, "the same majorant");
    int same = 1;
    for (uint32_t i = 0; i < d->mres[0] * d->mres[1] * d->mres[2]; ++i)
        same &= k->voxels[d->majorant_grid + i] == k->voxels[n->majorant_grid + i];
    CHECK(same && n->mres[0] == d->mres[0], "the same majorant grid");
    pcg32 rng = pcg32_seed(7u, 1u);
    int differ = 0;
    for (int i = 0; i < 4000; ++i) {
        /* inside the voxel centres' box (the dense lookup clamps beyond it, NanoVDB reads 0) */
        vec3 u = v3((0.5f + 23.0f * pcg32_float(&rng)) / 24.0f, (0.5f + 23.0f * pcg32_float(&rng)) / 24.0f,
                    (0.5f + 23.0f * pcg32_float(&rng)) / 24.0f);
        float a = grid_density(k, d, u), b = grid_density(k, n, u);
        if (a != b && differ++ < 3) printf("nvdb lookup at (%g %g %g): %.9g, dense %.9g\n", u.x, u.y, u.z, b, a);
        if (has_vdb && grid_density(k, &k->media[2], u) != a) ++differ;
    }
    CHECK(differ == 0, "NanoVDB lookups equal the dense trilinear ones (%d of 4000 differ)", differ);
    /* so the tracking is the same estimator, draw for draw */
    for (int i = 0; i < 16; ++i) {
        vec3 o = v3(-2.0f, pcg32_float(&rng) - 0.5f, pcg32_float(&rng) - 0.5f), dir = vnorm(v3(1.0f, 0.2f, -0.1f));
        pcg32 r1 = pcg32_seed((uint64_t)i, 3u), r2 = r1;
        vec3 t1 = medium_transmittance(k, d, make_ray(o, dir, 10.0f), 10.0f, &r1);
        vec3 t2 = medium_transmittance(k, n, make_ray(o, dir, 10.0f), 10.0f, &r2);
        CHECK(t1.x == t2.x && t1.y == t2.y && t1.z == t2.z, "ray %d: NanoVDB transmittance %g, dense %g", i, t2.x,
              t1.x);
    }
    /* a constant density 2 over the unit cube: exp(-2 sigma_t L) per channel, along x and slanted,
     * over segments of length L = 0.6 inside it (within half a voxel of a face the lookup blends
     * with the background 0, NanoVDB's trilinear: not a slab there) */
    vec3 st = vadd(c->sigma_a, c->sigma_s);
    vec3 dirs[2] = {v3(1.0f, 0.0f, 0.0f), vnorm(v3(1.0f, 0.4f, 0.0f))};
    for (int j = 0; j < 2; ++j) {
        const int N = 20000;
        double sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
        for (int i = 0; i < N; ++i) {
            pcg32 r = pcg32_seed((uint64_t)i, 11u + (uint64_t)j);
            vec3 t = medium_transmittance(k, c, make_ray(v3(0.2f, 0.3f, 0.5f), dirs[j], 0.6f), 0.6f, &r);
            for (int ch = 0; ch < 3; ++ch) {
                sum[ch] += vcomp(t, ch);
                sq[ch] += vcomp(t, ch) * vcomp(t, ch);
            }
        }
        for (int ch = 0; ch < 3; ++ch) {
            double mean = sum[ch] / N, se = sqrt(fmax(sq[ch] / N - mean * mean, 1e-12) / N);
            double want = exp(-2.0 * vcomp(st, ch) * 0.6);
            printf("constant NanoVDB slab, ray %d channel %d: %.5f +- %.5f (exp: %.5f)\n", j, ch, mean, se, want);
            CHECK_NEAR(mean, want, 4.0 * se + 1e-4, "constant NanoVDB grid: closed-form slab transmittance");
        }
    }
    scene_destroy(s);

    /* bad files: one message naming the file, nothing kept */
    s = scene_create();
    rc = nvdb_medium(s, "x", "cloud24.nvdb", "smoke", md.sigma_a, md.sigma_s, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "cloud24.nvdb: no grid named \"smoke\" (the file has \"density\")"), "%s", err);
    rc = nvdb_medium(s, "x", "nope.nvdb", NULL, md.sigma_a, md.sigma_s, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "nope.nvdb: cannot open"), "%s", err);
    rc = nvdb_medium(s, "x", "cloud24.vol", NULL, md.sigma_a, md.sigma_s, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "cloud24.vol: not a NanoVDB file"), "%s", err);
    FILE *f = fopen(path, "rb"); /* cloud24.vol's path: reuse the buffer for the .nvdb's bytes */
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/tests/data/media/cloud24.nvdb", CAUSTIC_SOURCE_DIR);
    f = fopen(path, "rb");
    CHECK(f != NULL, "open %s", path);
    unsigned char *b = malloc(1 << 20);
    size_t nb = f ? fread(b, 1, 1 << 20, f) : 0;
    if (f) fclose(f);
    size_t off = 0, size = 0;
    CHECK(nvdb_find_grid(b, nb, "t.nvdb", NULL, &off, &size, err, sizeof err) == 0, "find: %s", err);
    CHECK(nvdb_find_grid(b, nb / 2, "t.nvdb", NULL, &off, &size, err, sizeof err) != 0 &&
              strstr(err, "t.nvdb: grid \"density\""),
          "truncated: %s", err);
    CHECK(nvdb_find_grid(b, 10, "t.nvdb", NULL, &off, &size, err, sizeof err) != 0 && strstr(err, "t.nvdb: not a"),
          "short: %s", err);
    /* the grid's tree offsets pointing past its end (the root's first tile's child) */
    unsigned char *g = malloc(size);
    uint64_t tree_root, bad = 1ull << 40;
    memcpy(g, b + off, size);
    memcpy(&tree_root, g + 672 + 24, 8); /* TreeData: node offsets leaf, lower, upper, root */
    memcpy(g + 672 + 24, &bad, 8);
    rc = nvdb_grid_medium_memory(s, "x", md, g, size, "t.nvdb", NULL, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "t.nvdb: the grid's tree"), "root offset out of range: %s", err);
    memcpy(g + 672 + 24, &tree_root, 8);
    /* the root's first tile's child (an upper node) */
    size_t tile = 672 + (size_t)tree_root + pnanovdb_grid_type_constants[PNANOVDB_GRID_TYPE_FLOAT].root_size +
                  PNANOVDB_ROOT_TILE_OFF_CHILD;
    CHECK(tile + 8 <= size, "the root has a tile");
    if (tile + 8 <= size) memcpy(g + tile, &bad, 8);
    rc = nvdb_grid_medium_memory(s, "x", md, g, size, "t.nvdb", NULL, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "t.nvdb: the grid's tree"), "a tile's child out of range: %s", err);
    CHECK(s->nmedia == 0 && s->nvoxels == 0 && s->nnanovdb == 0, "nothing kept on failure");
    free(g);
    free(b);
    scene_destroy(s);

    /* scene JSON: TYPE NanoVDB (and Grid with a .nvdb FILE), GRID_NAME, messages naming the key */
    const char *fmt = "{\"Media\": {\"cloud\": {\"TYPE\": \"%s\", \"FILE\": \"%s\", \"SIGMA_S\": 2%s}},"
                      " \"Materials\": {\"b\": {\"TYPE\": \"Interface\"}},"
                      " \"Camera\": {\"RES\": [8, 8], \"FOVY\": 20, \"EYE\": [0, 0, 5], \"LOOKAT\": [0, 0, 0]},"
                      " \"Objects\": [{\"TYPE\": \"cube\", \"MATERIAL\": \"b\", \"INTERIOR\": \"cloud\"}]}";
    char text[2048], dir[512];
    snprintf(dir, sizeof dir, "%s/tests/data/media", CAUSTIC_SOURCE_DIR);
    struct {
        const char *type, *file, *keys, *want;
    } js[] = {{"NanoVDB", "cloud24.nvdb", ", \"GRID_NAME\": \"density\"", NULL},
              {"Grid", "const8.nvdb", "", NULL},
              {"NanoVDB", "cloud24.nvdb", ", \"GRID_NAME\": \"smoke\"", "Media.cloud.FILE"},
              {"NanoVDB", "cloud24.nvdb", ", \"ALBEDO_FILE\": \"a.vol\"", "Media.cloud.ALBEDO_FILE"},
              {"NanoVDB", "cloud24.nvdb", ", \"BOX\": [[0,0,0],[1,0,1]]", "Media.cloud.BOX"}};
    for (size_t i = 0; i < sizeof js / sizeof js[0]; ++i) {
        snprintf(text, sizeof text, fmt, js[i].type, js[i].file, js[i].keys);
        s = NULL;
        rc = scene_load_json_text(&s, text, "nvdb.json", dir, err, sizeof err);
        if (!js[i].want) {
            CHECK(rc == 0 && s->media[0].kind == MEDIUM_NANOVDB, "NanoVDB JSON %zu: %s", i, err);
            if (!rc) CHECK_NEAR(s->media[0].sigma_s.x, 2.0, 1e-6, "SIGMA_S per unit density");
        } else {
            CHECK(rc != 0 && strstr(err, js[i].want), "bad NanoVDB JSON %zu: %s", i, err);
        }
        if (!rc) scene_destroy(s);
    }
#endif
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--prism") == 0) {
        if (argc >= 5 && strcmp(argv[4], "cuda") == 0) {
            skip_without_cuda();
            g_prism_device = CAUSTIC_DEVICE_CUDA;
        }
        return test_prism(argv[2], argc >= 4 ? atoi(argv[3]) : 256);
    }
    test_subsurface();
    test_vol();
    test_nanovdb();
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
