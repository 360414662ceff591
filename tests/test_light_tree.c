/* The light tree (kernel/light_tree.h, src/accel/light_tree.c): NEE's pick probabilities sum to one
 * from any shading point, sampling follows them (chi-square over light indices, and a pmf taken
 * at the wrong vertex must fail the same test), and path tracing, BDPT and VCM agree with path
 * tracing's power pick on a scene of many lights of every finite kind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "cpu/isa.h"
#include "kernel/vcm.h"
#include "image_checks.h"
#include "testing.h"

#define ALPHA_LT 1e-3

static material mat(int kind, vec3 albedo, vec3 emission, int two_sided) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.albedo_tex = -1;
    m.albedo = albedo;
    m.emission = emission;
    m.two_sided = two_sided;
    m.ior = 1.5f;
    return m;
}

static float rnd(pcg32 *r, float a, float b) { return a + (b - a) * pcg32_float(r); }
static vec3 rnd_dir(pcg32 *r) { return sample_uniform_sphere(v2(pcg32_float(r), pcg32_float(r))); }

/* A room (floor, back wall) under nq small quads, nt triangles, a few spheres, point and spot
 * lights of random power and orientation; with_dir adds a directional light, with_env a sky. */
static scene *many_lights(int nq, int nt, int with_dir, int with_env) {
    scene *s = scene_create();
    pcg32 r = pcg32_seed(11, 3);
    int wall = scene_add_material(s, "wall", mat(MAT_DIFFUSE, v3s(0.6f), v3s(0), 0));
    scene_add_quad(s, v3(-6, -2, -6), v3(0, 0, 12), v3(12, 0, 0), wall); /* floor, facing up */
    scene_add_quad(s, v3(-6, -2, -6), v3(12, 0, 0), v3(0, 10, 0), wall); /* back wall */
    int lm[4];
    lm[0] = scene_add_material(s, "l0", mat(MAT_EMITTER, v3s(0), v3(4, 3, 2), 0));
    lm[1] = scene_add_material(s, "l1", mat(MAT_EMITTER, v3s(0), v3(0.5f, 1, 3), 0));
    lm[2] = scene_add_material(s, "l2", mat(MAT_EMITTER, v3s(0), v3(20, 20, 20), 0));
    lm[3] = scene_add_material(s, "l3", mat(MAT_EMITTER, v3s(0), v3(2, 2, 2), 1)); /* two-sided */
    for (int i = 0; i < nq; ++i) {
        vec3 o = v3(rnd(&r, -5, 5), rnd(&r, -1.5f, 6), rnd(&r, -5, 4));
        float sz = rnd(&r, 0.05f, 0.3f);
        frame f = frame_from_normal(rnd_dir(&r));
        scene_add_quad(s, o, vscale(f.t, sz), vscale(f.b, sz), lm[i & 3]);
    }
    for (int i = 0; i < nt; ++i) {
        vec3 c = v3(rnd(&r, -5, 5), rnd(&r, -1.5f, 6), rnd(&r, -5, 4));
        vec3 tri[3];
        for (int k = 0; k < 3; ++k) tri[k] = vadd(c, vscale(rnd_dir(&r), rnd(&r, 0.05f, 0.2f)));
        uint32_t idx[3] = {0, 1, 2};
        scene_add_mesh(s, tri, NULL, NULL, 3, idx, NULL, 1, xform_identity(), lm[(i + 1) & 3]);
    }
    for (int i = 0; i < 3; ++i)
        scene_add_sphere(s, xform_trs(v3(rnd(&r, -4, 4), rnd(&r, 0, 5), rnd(&r, -4, 3)), v3s(0), v3s(0.3f)), lm[i & 1]);
    for (int i = 0; i < 4; ++i)
        scene_add_point_light(s, v3(rnd(&r, -4, 4), rnd(&r, 0, 5), rnd(&r, -4, 3)), v3s(rnd(&r, 0.5f, 3)));
    for (int i = 0; i < 3; ++i)
        scene_add_spot_light(s, v3(rnd(&r, -4, 4), rnd(&r, 2, 5), rnd(&r, -4, 3)), v3(0, -1, 0.2f), v3s(5), 20, 35,
                             SPOT_FALLOFF_GLTF);
    if (with_dir) scene_add_directional_light(s, v3(0.3f, -1, -0.2f), v3s(0.5f));
    if (with_env) s->env_radiance = v3s(0.1f);
    s->camera.eye = v3(0, 3, 10);
    s->camera.lookat = v3(0, 1, 0);
    s->camera.up = v3(0, 1, 0);
    s->camera.fovy_deg = 60;
    return s;
}

static void prepare(scene *s, const char *sampler) {
    char err[256];
    setenv("CAUSTIC_LIGHT_SAMPLER", sampler, 1);
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare: %s", err);
}

/* A random shading point in the room and, half the time, a normal (else none). */
static void rnd_ref(pcg32 *r, vec3 *p, vec3 *n) {
    *p = v3(rnd(r, -6, 6), rnd(r, -2, 7), rnd(r, -6, 5));
    *n = pcg32_float(r) < 0.5f ? rnd_dir(r) : v3s(0.0f);
}

/* Every light's NEE pick from one point, the environment's included, sums to one. */
static void test_pmf_sums(int with_dir, int with_env) {
    scene *s = many_lights(200, 200, with_dir, with_env);
    prepare(s, "tree");
    const kscene *k = &s->k;
    CHECK(k->nlight_nodes == 2u * (k->nlights - k->ndirectional) - 1u, "%u nodes over %u lights", k->nlight_nodes,
          k->nlights);
    pcg32 r = pcg32_seed(5, (uint64_t)(with_dir * 2 + with_env));
    double worst = 0.0;
    for (int t = 0; t < 300; ++t) {
        vec3 p, n;
        rnd_ref(&r, &p, &n);
        double sum = k->env_pmf, tree = 0.0;
        for (uint32_t li = 0; li < k->nlights; ++li) {
            sum += light_pick_at(k, li, p, n);
            if (k->lights[li].kind != LIGHT_DIRECTIONAL) tree += light_tree_pmf(k, li, p, n);
        }
        worst = fmax(worst, fabs(sum - 1.0));
        worst = fmax(worst, fabs(tree - 1.0));
    }
    CHECK(worst < 2e-5, "dir=%d env=%d: pick probabilities sum to 1 within %g", with_dir, with_env, worst);
    scene_destroy(s);
}

/* light_pick_sample's picks from point p against a pmf: chi-square p-value; *mismatch counts
 * picks whose returned probability differs from light_pick_at's. pmf_at: the reference point the
 * expected pmf is taken at (p itself, or a wrong vertex). */
static double pick_chi2(const kscene *k, vec3 p, vec3 n, vec3 pmf_at, int nsamples, uint64_t seed, int *mismatch) {
    double *obs = calloc(k->nlights, sizeof(double)), *ex = calloc(k->nlights, sizeof(double));
    pcg32 r = pcg32_seed(seed, 1);
    int fails = 0;
    for (int i = 0; i < nsamples; ++i) {
        uint32_t li;
        float pick;
        if (!light_pick_sample(k, p, n, pcg32_float(&r), &li, &pick)) {
            fails++;
            continue;
        }
        obs[li] += 1.0;
        if (pick != light_pick_at(k, li, p, n)) (*mismatch)++;
    }
    double scale = 1.0 / (1.0 - k->env_pmf);
    for (uint32_t li = 0; li < k->nlights; ++li) ex[li] = nsamples * scale * light_pick_at(k, li, pmf_at, n);
    double pv = chi2_test(obs, ex, (int)k->nlights, NULL);
    free(obs);
    free(ex);
    return fails ? 0.0 : pv;
}

static void test_sampling_matches_pmf(void) {
    scene *s = many_lights(150, 150, 1, 0);
    prepare(s, "tree");
    const kscene *k = &s->k;
    pcg32 r = pcg32_seed(8, 8);
    int mismatch = 0, low = 0, wrong_passes = 0;
    const int points = 12;
    for (int t = 0; t < points; ++t) {
        vec3 p, n;
        rnd_ref(&r, &p, &n);
        double pv = pick_chi2(k, p, n, p, 200000, 100u + (uint64_t)t, &mismatch);
        low += pv < ALPHA_LT;
        /* a deliberately wrong pmf: the same lights' probabilities from a vertex 1.5 away (a
         * VCM weight taking the pick at the wrong end of a segment) must be rejected */
        double pw = pick_chi2(k, p, n, vadd(p, v3(1.5f, 0.0f, 0.0f)), 200000, 100u + (uint64_t)t, &mismatch);
        wrong_passes += pw >= ALPHA_LT;
    }
    /* 12 tests at 1e-3: one low p-value by chance is rare (1.2 %), two fail */
    CHECK(low <= 1, "tree sampling disagrees with its pmf at %d of %d points", low, points);
    CHECK(mismatch == 0, "%d picks returned a probability other than light_pick_at's", mismatch);
    CHECK(wrong_passes == 0, "a pmf taken at the wrong vertex passed the chi-square test at %d of %d points",
          wrong_passes, points);
    scene_destroy(s);
}

/* The MIS pdf of an area light hit by a BSDF ray is NEE's pdf of the same sample (same pick). */
static void test_light_pdf_matches(void) {
    scene *s = many_lights(100, 100, 0, 1);
    prepare(s, "tree");
    const kscene *k = &s->k;
    pcg32 r = pcg32_seed(21, 2);
    int checked = 0, bad = 0, wrong_agrees = 0, with_normal = 0;
    for (int i = 0; i < 20000; ++i) {
        vec3 p, n;
        rnd_ref(&r, &p, &n);
        light_sample ls;
        if (!sample_light(k, p, n, pcg32_float(&r), v2(pcg32_float(&r), pcg32_float(&r)), &ls)) continue;
        if (ls.delta || !ls.finite) continue;
        hit h;
        surface sf;
        if (!cpu_kernels_get()->closest_surface(k, make_ray(p, ls.wi, K_INF), &h, &sf)) continue;
        if (fabsf(h.t - ls.dist) > 1e-3f * ls.dist || fabsf(vdot(sf.ng, ls.wi)) < 0.2f) continue; /* occluded/grazing */
        float pm = light_pdf(k, h.prim, p, n, sf.p, sf.ng);
        checked++;
        bad += fabsf(pm - ls.pdf) > 1e-3f * ls.pdf;
        /* the same comparison must notice a deliberately wrong MIS pdf: the previous vertex's
         * normal forgotten (what a path state without prev_n would give) */
        if (n.x != 0.0f || n.y != 0.0f || n.z != 0.0f) {
            with_normal++;
            float pw = light_pdf(k, h.prim, p, v3s(0.0f), sf.p, sf.ng);
            wrong_agrees += fabsf(pw - ls.pdf) <= 1e-3f * ls.pdf;
        }
    }
    CHECK(checked > 1000 && bad == 0, "light_pdf vs sample_light: %d of %d differ", bad, checked);
    CHECK(wrong_agrees < with_normal / 10, "a pdf without the normal agreed with sampling at %d of %d samples",
          wrong_agrees, with_normal);
    scene_destroy(s);
}

static float *render(caustic_scene *cs, int integrator, int spp, int w, int h) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = w;
    o.height = h;
    o.spp = spp;
    o.threads = 2;
    o.max_depth = 4;
    o.integrator = (caustic_integrator)integrator;
    o.device = CAUSTIC_DEVICE_CPU;
    o.seed = 3;
    o.merge_everywhere = integrator == CAUSTIC_INTEGRATOR_VCM; /* every merge strategy weighed */
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (!r) return NULL;
    caustic_render(r, NULL, NULL, NULL, 0);
    float *img = malloc(sizeof(float) * 3 * (size_t)w * (size_t)h);
    memcpy(img, caustic_image(r, NULL, NULL), sizeof(float) * 3 * (size_t)w * (size_t)h);
    caustic_renderer_free(r);
    return img;
}

/* PT, BDPT and VCM through the tree agree with PT's power pick (means within 2 %). */
static void test_integrators_agree(void) {
    enum { W = 24, H = 24 };
    const char *samplers[2] = {"power", "tree"};
    float *img[2][3] = {{NULL}};
    const int algs[3] = {CAUSTIC_INTEGRATOR_PT, CAUSTIC_INTEGRATOR_BDPT, CAUSTIC_INTEGRATOR_VCM};
    const char *names[3] = {"pt", "bdpt", "vcm"};
    for (int m = 0; m < 2; ++m) {
        scene *s = many_lights(60, 60, 0, 1);
        prepare(s, samplers[m]);
        CHECK((s->k.nlight_nodes > 0) == (m == 1), "%s: tree %u nodes", samplers[m], s->k.nlight_nodes);
        caustic_scene *cs;
        char err[256];
        CHECK(api_scene_wrap_unprepared(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
        for (int a = 0; a < 3; ++a) img[m][a] = render(cs, algs[a], a == 0 && m == 0 ? 1024 : 256, W, H);
        caustic_scene_free(cs);
    }
    double ref = img[0][0] ? image_mean(img[0][0], W * H) : 1.0;
    for (int m = 0; m < 2; ++m)
        for (int a = 0; a < 3; ++a) {
            if (!img[m][a] || (m == 0 && a == 0)) continue;
            double mean = image_mean(img[m][a], W * H);
            CHECK(fabs(mean / ref - 1.0) < 0.02, "%s %s mean %g vs pt power %g", samplers[m], names[a], mean, ref);
            printf("%s %s: mean %g (pt power %g)\n", samplers[m], names[a], mean, ref);
        }
    for (int m = 0; m < 2; ++m)
        for (int a = 0; a < 3; ++a) free(img[m][a]);
}

/* auto builds a tree only over many lights; a bad CAUSTIC_LIGHT_SAMPLER is refused by name. */
static void test_selection(void) {
    scene *s = many_lights(10, 10, 0, 0);
    prepare(s, "auto");
    CHECK(s->k.nlight_nodes == 0, "auto: no tree over %u lights", s->k.nlights);
    scene_destroy(s);
    s = many_lights(200, 0, 0, 0);
    prepare(s, "auto");
    CHECK(s->k.nlight_nodes > 0, "auto: a tree over %u lights", s->k.nlights);
    scene_destroy(s);
    s = many_lights(1, 0, 0, 0);
    char err[256] = "";
    setenv("CAUSTIC_LIGHT_SAMPLER", "bvh", 1);
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) != 0 && strstr(err, "CAUSTIC_LIGHT_SAMPLER"),
          "bad sampler refused: '%s'", err);
    scene_destroy(s);
}

int main(void) {
    test_selection();
    test_pmf_sums(0, 0);
    test_pmf_sums(1, 1);
    test_sampling_matches_pmf();
    test_light_pdf_matches();
    test_integrators_agree();
    return test_result("test_light_tree");
}
