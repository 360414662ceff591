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

/* ---- dispersion: the prism (scenes/prism.json) ------------------------------------------------
 * Renders the scene's screen (seen from behind) with the library's path tracer and measures each
 * channel's band: its centroid along the screen, against the one Snell's law predicts with the
 * glass's Cauchy IOR. The prediction traces the scene's own geometry (read from the file) in the
 * prism's cross-section: a parallel beam through the wall's aperture, refracted at the two faces
 * (Fresnel transmittance at each), onto the screen, for wavelengths 360..830 nm weighted by the
 * channel's response (kernel/spectral.h). Red must deviate least, blue most, each centroid within
 * PRISM_TOL of its prediction; with the dispersion off (-D ...ABBE=0) the three bands coincide. */
#include <cjson/cJSON.h>

#include "caustic.h"
#include "kernel/spectral.h"

#define PRISM_W   160
#define PRISM_H   40
#define PRISM_TOL 0.03 /* scene units along the screen (the red-blue separation is ~0.25) */

typedef struct prism_geo {
    double tri[3][2];        /* the prism's cross-section (the first three VERTICES) */
    double ya0, ya1, xwall;  /* the aperture between the two walls */
    double sc[2], su[2];     /* the screen's centre and unit direction along it (in the plane) */
    double eye[2], tan_half; /* the camera (behind the screen, looking at its centre), tan(fov_x / 2) */
    float ior, b;            /* the glass: IOR at the d line, Cauchy B */
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
                *wb = prism_object(root, "wall below"), *sc = prism_object(root, "screen");
    const cJSON *cam = cJSON_GetObjectItem(root, "Camera");
    const cJSON *glass = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "Materials"), "glass");
    int ok = pr && wa && wb && sc && cam && glass;
    if (ok) {
        const cJSON *v = cJSON_GetObjectItem(pr, "VERTICES");
        for (int i = 0; i < 3; ++i)
            for (int c = 0; c < 2; ++c) g->tri[i][c] = jnum(cJSON_GetArrayItem(v, i), c);
        const cJSON *oa = cJSON_GetObjectItem(wa, "ORIGIN"), *ob = cJSON_GetObjectItem(wb, "ORIGIN");
        g->ya1 = jnum(oa, 1);
        g->ya0 = jnum(ob, 1) + jnum(cJSON_GetObjectItem(wb, "U"), 1);
        g->xwall = jnum(oa, 0);
        const cJSON *so = cJSON_GetObjectItem(sc, "ORIGIN"), *su = cJSON_GetObjectItem(sc, "U");
        double len = hypot(jnum(su, 0), jnum(su, 1));
        for (int c = 0; c < 2; ++c) {
            g->sc[c] = jnum(so, c) + 0.5 * jnum(su, c);
            g->su[c] = jnum(su, c) / len;
            g->eye[c] = jnum(cJSON_GetObjectItem(cam, "EYE"), c);
        }
        const cJSON *res = cJSON_GetObjectItem(cam, "RES");
        g->tan_half = tan(0.5 * jnum(cJSON_GetObjectItem(cam, "FOVY"), 0) * K_PI / 180.0) * jnum(res, 0) / jnum(res, 1);
        g->ior = (float)cJSON_GetObjectItem(glass, "IOR")->valuedouble;
        g->b = cauchy_b_from_abbe(g->ior, (float)cJSON_GetObjectItem(glass, "ABBE")->valuedouble);
    }
    cJSON_Delete(root);
    return ok ? 0 : -1;
}

/* The 2D ray (o, d) through the prism of index n: where it meets the screen's line, as the
 * coordinate along it (*s), and the Fresnel transmittance of the two faces (returned; 0 if it
 * misses, is reflected totally, or leaves by a third face). */
static double prism_trace(const prism_geo *g, double o[2], double d[2], double n, double *s) {
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
        o[0] += best * d[0], o[1] += best * d[1];
        /* Snell: the normal against d, eta = n_i / n_t */
        double nx = inside ? -nrm[0] : nrm[0], ny = inside ? -nrm[1] : nrm[1], eta = inside ? n : 1.0 / n;
        double ci = -(d[0] * nx + d[1] * ny), k = 1.0 - eta * eta * (1.0 - ci * ci);
        if (k < 0.0) return 0.0;
        t_total *= 1.0 - fresnel_dielectric((float)ci, inside ? 1.0f / (float)n : (float)n);
        double ct = sqrt(k);
        d[0] = eta * d[0] + (eta * ci - ct) * nx;
        d[1] = eta * d[1] + (eta * ci - ct) * ny;
        inside = !inside;
    }
    /* onto the screen's line: o + t d = sc + s su */
    double den = d[0] * g->su[1] - d[1] * g->su[0];
    if (fabs(den) < 1e-12) return 0.0;
    double rx = g->sc[0] - o[0], ry = g->sc[1] - o[1];
    *s = (rx * d[1] - ry * d[0]) / den;
    return t_total;
}

/* The predicted centroid of each channel's band along the screen. */
static void prism_predict(const prism_geo *g, float b, double out[3]) {
    double sw[3] = {0, 0, 0}, sws[3] = {0, 0, 0};
    for (float l = SPECTRAL_LAMBDA_MIN + 0.5f; l < SPECTRAL_LAMBDA_MAX; l += 1.0f) {
        vec3 w = spectral_rgb(l);
        double n = cauchy_ior(g->ior, b, l);
        for (int i = 0; i < 64; ++i) {
            double o[2] = {g->xwall, g->ya0 + (g->ya1 - g->ya0) * (i + 0.5) / 64.0}, d[2] = {1.0, 0.0}, s = 0.0;
            double t = prism_trace(g, o, d, n, &s);
            for (int c = 0; c < 3; ++c) {
                sw[c] += t * vcomp(w, c);
                sws[c] += t * vcomp(w, c) * s;
            }
        }
    }
    for (int c = 0; c < 3; ++c) out[c] = sws[c] / sw[c];
}

/* Renders the scene (with `define`, NULL for none) and measures each channel's centroid along the
 * screen, in a window of +-win around `around`. */
static int prism_measure(const char *path, const prism_geo *g, const char *define, int spp, double around, double win,
                         double out[3]) {
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    const char *defs[1] = {define};
    lo.defines = defs;
    lo.ndefines = define ? 1 : 0;
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
    o.device = CAUSTIC_DEVICE_CPU;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "prism renderer: %s", err);
    if (!r) return -1;
    caustic_render(r, NULL, NULL, NULL, 0);
    const float *img = caustic_image(r, NULL, NULL);
    /* the camera looks at the screen's centre square on: column x sees the screen at s */
    double dist = hypot(g->eye[0] - g->sc[0], g->eye[1] - g->sc[1]), sw[3] = {0, 0, 0}, sws[3] = {0, 0, 0};
    for (int y = 0; y < PRISM_H; ++y)
        for (int x = 0; x < PRISM_W; ++x) {
            double s = dist * g->tan_half * (2.0 * (x + 0.5) / PRISM_W - 1.0);
            if (fabs(s - around) > win) continue;
            for (int c = 0; c < 3; ++c) {
                double v = img[3 * (y * PRISM_W + x) + c];
                sw[c] += v;
                sws[c] += v * s;
            }
        }
    for (int c = 0; c < 3; ++c) out[c] = sw[c] > 0.0 ? sws[c] / sw[c] : 0.0;
    caustic_renderer_free(r);
    caustic_scene_free(cs);
    return sw[0] > 0.0 && sw[1] > 0.0 && sw[2] > 0.0 ? 0 : -1;
}

static int test_prism(const char *path, int spp) {
    prism_geo g;
    if (prism_read(path, &g)) {
        CHECK(0, "%s: not the prism scene (Objects prism, wall above/below, screen; Materials.glass)", path);
        return test_result("test_prism");
    }
    double pred[3], pred0[3], meas[3], meas0[3];
    prism_predict(&g, g.b, pred);
    prism_predict(&g, 0.0f, pred0);
    printf("prism: IOR %.4f, Cauchy B %.5f um^2 (n 450 nm %.4f, 650 nm %.4f)\n", g.ior, g.b,
           cauchy_ior(g.ior, g.b, 450.0f), cauchy_ior(g.ior, g.b, 650.0f));
    const double win = 0.8;
    int rc = prism_measure(path, &g, NULL, spp, pred[1], win, meas);
    CHECK(rc == 0, "prism: no light on the screen");
    rc = prism_measure(path, &g, "Materials.glass.ABBE=0", spp, pred0[1], win, meas0);
    CHECK(rc == 0, "prism without dispersion: no light on the screen");
    /* the deviation grows along -su or +su: the sign of blue's offset from red in the prediction */
    double sgn = pred[2] > pred[0] ? 1.0 : -1.0;
    const char *ch = "RGB";
    for (int c = 0; c < 3; ++c) {
        printf("prism %c: centroid %.4f (predicted %.4f); without dispersion %.4f (predicted %.4f)\n", ch[c], meas[c],
               pred[c], meas0[c], pred0[c]);
        CHECK(fabs(meas[c] - pred[c]) < PRISM_TOL, "prism channel %c: band at %.4f, Snell's law with Cauchy's IOR says %.4f",
              ch[c], meas[c], pred[c]);
        CHECK(fabs(meas0[c] - pred0[c]) < PRISM_TOL, "prism without dispersion, channel %c: band at %.4f, predicted %.4f",
              ch[c], meas0[c], pred0[c]);
    }
    CHECK(sgn * (meas[1] - meas[0]) > 0.0 && sgn * (meas[2] - meas[1]) > 0.0,
          "prism: the bands are not ordered red (least deviated), green, blue: %.4f %.4f %.4f", meas[0], meas[1],
          meas[2]);
    CHECK(fabs(pred[2] - pred[0]) > 4.0 * PRISM_TOL, "prism: the predicted red-blue separation %.4f is too small a test",
          fabs(pred[2] - pred[0]));
    CHECK(fabs(meas0[2] - meas0[0]) < PRISM_TOL, "prism without dispersion: red and blue apart by %.4f",
          meas0[2] - meas0[0]);
    return test_result("test_prism");
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--prism") == 0) return test_prism(argv[2], argc >= 4 ? atoi(argv[3]) : 512);
    test_json();
    test_hg();
    test_slab_transmittance();
    test_furnace();
    test_absorbing_glass();
    return test_result("test_media");
}
