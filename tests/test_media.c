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

#include <string.h>

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

int main(void) {
    test_subsurface();
    test_json();
    test_hg();
    test_slab_transmittance();
    test_furnace();
    test_absorbing_glass();
    return test_result("test_media");
}
