/* Warps and light sampling: chi-square against their pdfs (the sample generators: test_sampler.c). */
#include <string.h>

/* the scene's BVH has the dispatched kernel's width: trace through it (src/cpu/isa.h) */
#include "cpu/isa.h"
#include "scene/scene.h"
#include "sphere_chi2.h"

/* Significance per test; with a dozen tests a correct sampler fails with probability < 1%. */
#define ALPHA 1e-3

static int s_cosine(void *c, vec2 u, float u1, vec3 *d) {
    (void)c;
    (void)u1;
    *d = sample_cosine_hemisphere(u);
    return 1;
}
static double p_cosine(void *c, vec3 d) {
    (void)c;
    return pdf_cosine_hemisphere(d.z);
}
static int s_sphere(void *c, vec2 u, float u1, vec3 *d) {
    (void)c;
    (void)u1;
    *d = sample_uniform_sphere(u);
    return 1;
}
static double p_sphere(void *c, vec3 d) {
    (void)c;
    (void)d;
    return pdf_uniform_sphere();
}
/* A deliberately wrong pdf: the test must reject it. */
static double p_wrong(void *c, vec3 d) {
    (void)c;
    return d.z > 0 ? (1.0 + 0.3 * d.z) / (K_PI * (1.0 + 0.2)) * d.z : 0.0;
}

static void test_warps(void) {
    double integral;
    double p = sphere_chi2(NULL, s_cosine, p_cosine, 200000, 1, &integral);
    CHECK(p > ALPHA, "cosine hemisphere chi-square p = %g", p);
    CHECK_NEAR(integral, 1.0, 2e-3, "cosine pdf integrates to 1");
    p = sphere_chi2(NULL, s_sphere, p_sphere, 200000, 2, &integral);
    CHECK(p > ALPHA, "uniform sphere chi-square p = %g", p);
    CHECK_NEAR(integral, 1.0, 2e-3, "sphere pdf integrates to 1");
    p = sphere_chi2(NULL, s_cosine, p_wrong, 200000, 3, NULL);
    CHECK(p < ALPHA, "chi-square must reject a wrong pdf (p = %g)", p);

    /* triangle: barycentrics uniform over the triangle -> 2D histogram of (b1, b2) */
    enum { G = 10 };
    double obs[G * G] = {0}, ex[G * G] = {0};
    pcg32 r = pcg32_seed(5, 5);
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        vec2 b = sample_triangle_barycentric(v2(pcg32_float(&r), pcg32_float(&r)));
        CHECK(b.x >= 0 && b.y >= 0 && b.x + b.y <= 1.0f + 1e-6f, "barycentrics outside");
        int x = (int)(b.x * G), y = (int)(b.y * G);
        obs[(y < G ? y : G - 1) * G + (x < G ? x : G - 1)] += 1;
    }
    for (int y = 0; y < G; ++y)
        for (int x = 0; x < G; ++x) {
            int inside = 0;
            for (int a = 0; a < 20; ++a)
                for (int c = 0; c < 20; ++c) inside += (x + (a + 0.5) / 20) + (y + (c + 0.5) / 20) <= G;
            ex[y * G + x] = n * 2.0 * inside / 400.0 / (G * G);
        }
    p = chi2_test(obs, ex, G * G, NULL);
    CHECK(p > ALPHA, "triangle sampling chi-square p = %g", p);

    /* concentric disk: uniform over area (points inside, 8 equal-area rings x 8 sectors) */
    double dob[64] = {0}, dex[64];
    for (int i = 0; i < 64; ++i) dex[i] = n / 64.0;
    for (int i = 0; i < n; ++i) {
        vec2 d = sample_disk_concentric(v2(pcg32_float(&r), pcg32_float(&r)));
        float rr = d.x * d.x + d.y * d.y;
        CHECK(rr <= 1.0f + 1e-5f, "disk point outside");
        float phi = atan2f(d.y, d.x) + K_PI;
        int ring = kmini((int)(rr * 8), 7), sec = kmini((int)(phi / (2 * K_PI) * 8), 7);
        dob[ring * 8 + sec] += 1;
    }
    p = chi2_test(dob, dex, 64, NULL);
    CHECK(p > ALPHA, "concentric disk chi-square p = %g", p);

    /* the map's quarter-range sincos, and the map itself, against double precision */
    double es = 0, ed = 0;
    for (int i = 0; i <= 4096; ++i) {
        float a = (float)(K_PI / 4 * (2.0 * i / 4096 - 1)), sa, ca;
        ksincos_pi4(a, &sa, &ca);
        es = fmax(es, fmax(fabs(sa - sin(a)), fabs(ca - cos(a))));
    }
    CHECK(es < 2.5e-7, "ksincos_pi4 off by %g", es);
    for (int i = 0; i < 100000; ++i) {
        vec2 u = v2(pcg32_float(&r), pcg32_float(&r));
        vec2 d = sample_disk_concentric(u);
        double ox = 2.0 * u.x - 1.0, oy = 2.0 * u.y - 1.0, rr, th;
        if (fabs(ox) > fabs(oy))
            rr = ox, th = K_PI / 4 * (oy / ox);
        else
            rr = oy, th = K_PI / 2 - K_PI / 4 * (ox / oy);
        ed = fmax(ed, fmax(fabs(d.x - rr * cos(th)), fabs(d.y - rr * sin(th))));
    }
    CHECK(ed < 1e-6, "concentric disk off the Shirley-Chiu map by %g", ed);
}

/* ---- light sampling: directions from NEE vs light_pdf over the sphere -------------------------- */
typedef struct light_ctx {
    scene *s;
    vec3 ref;
} light_ctx;
static int s_light(void *c, vec2 u, float u1, vec3 *d) {
    light_ctx *lc = c;
    light_sample ls;
    if (!sample_light(&lc->s->k, lc->ref, v3s(0.0f), u1, u, &ls)) return 0;
    *d = ls.wi;
    return 1;
}
static double p_light(void *c, vec3 d) {
    light_ctx *lc = c;
    const kscene *k = &lc->s->k;
    double p = k->env_pmf > 0 ? env_pdf(k, d) : 0.0;
    hit h;
    surface sf;
    if (cpu_kernels_get()->closest_surface(k, make_ray(lc->ref, d, K_INF), &h, &sf)) {
        if (vdot(sf.ng, d) < 0) p += light_pdf(k, h.prim, lc->ref, v3s(0.0f), sf.p, sf.ng);
    }
    return p;
}

/* Area lights with smooth solid-angle pdfs (quad, triangle) are tested in direction space. */
static void test_light_sampling(int with_env) {
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_EMITTER;
    m.albedo_tex = -1;
    m.emission = v3(4, 4, 4);
    int lm = scene_add_material(s, "light", m);
    m.emission = v3(1, 2, 0.5f);
    int lm2 = scene_add_material(s, "light2", m);
    /* large, non-overlapping (as seen from the origin), facing it: one-sided emitters */
    scene_add_quad(s, v3(-1, -1, 1), v3(0, 2, 0), v3(2, 0, 0), lm);
    vec3 tri[3] = {v3(2, -1, -1), v3(2, -1, 1), v3(2, 1, 0)};
    uint32_t idx[3] = {0, 1, 2};
    scene_add_mesh(s, tri, NULL, NULL, 3, idx, NULL, 1, xform_identity(), lm2);
    if (with_env) s->env_radiance = v3(0.2f, 0.2f, 0.2f);
    char err[256];
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare: %s", err);
    CHECK(s->nlights == 2, "2 lights, got %zu", s->nlights);
    light_ctx c = {s, v3(0, 0, 0)};
    double integral;
    g_chi2_sub = 128; /* the lights' edges cut through cells */
    double p = sphere_chi2(&c, s_light, p_light, 200000, 17, &integral);
    g_chi2_sub = 16;
    CHECK(p > ALPHA, "light sampling (env=%d) chi-square p = %g", with_env, p);
    CHECK_NEAR(integral, 1.0, 5e-3, "light pdf integrates to 1");
    scene_destroy(s);
}

/* Sphere lights: their solid-angle pdf is singular at the silhouette, so test the pieces:
 * object-space points are uniform (chi-square), the accepted fraction is the visible cap
 * (1 - R/D)/2, and the pdf returned by sampling equals light_pdf used by MIS. */
static void test_sphere_light(void) {
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_EMITTER;
    m.albedo_tex = -1;
    m.emission = v3(1, 1, 1);
    int lm = scene_add_material(s, "light", m);
    scene_add_sphere(s, xform_trs(v3(0, 0, -4), v3s(0), v3s(2)), lm);             /* R = 1, D = 4 */
    scene_add_sphere(s, xform_trs(v3(5, 0, 0), v3(30, 10, 50), v3(1, 2, 3)), lm); /* ellipsoid */
    char err[256];
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare: %s", err);
    const kscene *k = &s->k;
    vec3 ref = v3(0, 0, 0);
    double obs[CHI2_CELLS] = {0}, ex[CHI2_CELLS];
    int n = 0, accepted = 0, total_round = 0, picked_round = 0;
    pcg32 r = pcg32_seed(9, 9);
    for (int i = 0; i < 200000; ++i) {
        vec2 u = v2(pcg32_float(&r), pcg32_float(&r));
        float us = pcg32_float(&r);
        uint32_t li = cdf_find(k->light_cdf, k->nlights, us);
        uint32_t id = k->lights[li].prim;
        int first = prim_id_index(id) == 0;
        total_round += first;
        picked_round += first;
        vec3 pt, nn;
        light_sample_point(k, &k->lights[li], u, &pt, &nn);
        vec3 po = xform_point(&k->spheres[prim_id_index(id)].to_object, pt);
        if (!first) {
            obs[chi2_cell(vnorm(po))] += 1;
            n++;
        }
        light_sample ls;
        if (!sample_light(k, ref, v3s(0.0f), us, u, &ls)) continue;
        accepted += first;
        hit h;
        /* a ray towards a point on the silhouette may graze past the surface: skip those */
        surface sf;
        if (!cpu_kernels_get()->closest_surface(k, make_ray(ref, ls.wi, K_INF), &h, &sf)) continue;
        double pm = light_pdf(k, h.prim, ref, v3s(0.0f), sf.p, sf.ng);
        /* near the silhouette the pdf (d^2/cos) is ill-conditioned: compare elsewhere */
        int grazing = fabsf(vdot(sf.ng, ls.wi)) < 0.2f;
        if (!grazing && fabs(pm - ls.pdf) > 1e-3 * ls.pdf) {
            CHECK(0, "sample pdf %g != light_pdf %g", ls.pdf, pm);
            break;
        }
    }
    for (int c = 0; c < CHI2_CELLS - 1; ++c) ex[c] = n / (double)(CHI2_CELLS - 1);
    ex[CHI2_CELLS - 1] = 0;
    double p = chi2_test(obs, ex, CHI2_CELLS, NULL);
    CHECK(p > ALPHA, "ellipsoid points not uniform in object space: p = %g", p);
    double f = (double)accepted / total_round, expect = (1.0 - 1.0 / 4.0) / 2.0;
    double sigma = sqrt(expect * (1 - expect) / total_round);
    CHECK(fabs(f - expect) < 5 * sigma, "visible-cap fraction %g, expected %g", f, expect);
    /* light selection by power: area pi*1^2*4 vs the ellipsoid's */
    double pmf0 = k->lights[0].pmf, e = (double)picked_round / 200000;
    CHECK(fabs(e - pmf0) < 5 * sqrt(pmf0 * (1 - pmf0) / 200000), "light selection %g vs pmf %g", e, pmf0);
    scene_destroy(s);
}

/* ---- environment map importance sampling ---------------------------------------------------- */
static int s_env(void *c, vec2 u, float u1, vec3 *d) {
    (void)u1;
    *d = env_sample_dir(&((scene *)c)->k, u);
    return 1;
}
static double p_env(void *c, vec3 d) { return env_dir_pdf(&((scene *)c)->k, d); }

static void test_env_map(void) {
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    scene_add_material(s, "m", m);
    enum { EW = 64, EH = 32 };
    static float texels[EW * EH * 3];
    for (int y = 0; y < EH; ++y)
        for (int x = 0; x < EW; ++x) {
            float v = 0.2f + (float)x / EW;                     /* gradient */
            if (abs(x - 40) < 3 && abs(y - 10) < 2) v = 200.0f; /* a sun */
            if (y > EH - 4) v = 0.0f;                           /* black ground band */
            for (int c = 0; c < 3; ++c) texels[3 * (y * EW + x) + c] = v * (c == 0 ? 1.0f : 0.8f);
        }
    texture t;
    memset(&t, 0, sizeof t);
    t.kind = TEX_IMAGE;
    t.width = EW;
    t.height = EH;
    s->env_tex = scene_add_texture(s, t, texels);
    s->env_radiance = v3s(1.0f);
    char err[256];
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare: %s", err);
    double integral;
    g_chi2_sub = 32;
    double p = sphere_chi2(s, s_env, p_env, 300000, 23, &integral);
    g_chi2_sub = 16;
    CHECK(p > ALPHA, "environment map sampling chi-square p = %g", p);
    CHECK_NEAR(integral, 1.0, 5e-3, "environment pdf integrates to 1");
    /* uv <-> direction round trip and the lookup convention: u = 0.5 looks down -z, v = 0 is up */
    vec2 uv = env_dir_to_uv(v3(0, 0, -1));
    CHECK(fabsf(uv.x - 0.5f) < 1e-6f && fabsf(uv.y - 0.5f) < 1e-6f, "-z maps to the image centre");
    CHECK(env_dir_to_uv(v3(0, 1, 0)).y < 1e-6f, "zenith is row 0");
    vec3 d = env_uv_to_dir(v2(0.3f, 0.7f));
    vec2 back = env_dir_to_uv(d);
    CHECK(fabsf(back.x - 0.3f) < 1e-5f && fabsf(back.y - 0.7f) < 1e-5f, "uv round trip");
    scene_destroy(s);
}

int main(void) {
    test_warps();
    test_light_sampling(0);
    test_light_sampling(1);
    test_sphere_light();
    test_env_map();
    return test_result("test_sampling");
}
