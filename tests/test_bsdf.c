/* Every BSDF: chi-square of `sample` against `pdf`, and the sample weight equals eval/pdf.
 * Delta lobes: reflection/refraction probabilities follow Fresnel, directions follow Snell. */
#include <string.h>

#include "sphere_chi2.h"

#define ALPHA 1e-3

typedef struct bsdf_ctx {
    material m;
    vec3 wo;
    int weight_errors;
    float tol;
} bsdf_ctx;

static int s_bsdf(void *c, vec2 u, float u1, vec3 *d) {
    bsdf_ctx *b = c;
    bsdf_sample bs;
    if (!bsdf_sample_dir(&b->m, b->m.albedo, b->wo, u1, u, &bs)) return 0;
    /* weight must equal eval / pdf for non-delta lobes */
    vec3 f = bsdf_eval(&b->m, b->m.albedo, b->wo, bs.wi);
    float pdf = bsdf_pdf(&b->m, b->wo, bs.wi);
    if (fabsf(pdf - bs.pdf) > b->tol * bs.pdf) b->weight_errors++;
    vec3 w = vscale(f, 1.0f / pdf);
    if (vlen(vsub(w, bs.weight)) > 2.0f * b->tol * (vlen(bs.weight) + 1e-3f)) b->weight_errors++;
    *d = bs.wi;
    return 1;
}
static double p_bsdf(void *c, vec3 d) {
    bsdf_ctx *b = c;
    return bsdf_pdf(&b->m, b->wo, d);
}

static material make_material(int kind, float alpha, vec3 albedo) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.albedo_tex = -1;
    m.albedo = albedo;
    m.alpha = alpha;
    m.ior = 1.5f;
    return m;
}

static void test_lobes(void) {
    const float thetas[3] = {0.0f, 0.8f, 1.4f};
    /* very sharp lobes (alpha 0.02) cannot be resolved by the chi-square grid: they are
     * checked for eval/pdf consistency only, with a tolerance for the float precision of the
     * half vector */
    const float alphas[4] = {0.02f, 0.1f, 0.4f, 0.9f};
    for (int t = 0; t < 3; ++t) {
        vec3 wo = v3(sinf(thetas[t]) * 0.6f, sinf(thetas[t]) * 0.8f, cosf(thetas[t]));
        bsdf_ctx c;
        c.m = make_material(MAT_DIFFUSE, 0, v3(0.5f, 0.6f, 0.7f));
        c.wo = wo;
        c.weight_errors = 0;
        c.tol = 1e-3f;
        double integral;
        double p = sphere_chi2(&c, s_bsdf, p_bsdf, 200000, 100 + t, &integral);
        CHECK(p > ALPHA, "diffuse theta=%g: p = %g", thetas[t], p);
        CHECK(c.weight_errors == 0, "diffuse weight != eval/pdf (%d)", c.weight_errors);
        for (int a = 0; a < 4; ++a) {
            c.m = make_material(MAT_CONDUCTOR, alphas[a], v3(0.9f, 0.6f, 0.3f));
            c.weight_errors = 0;
            c.tol = alphas[a] < 0.05f ? 2e-2f : 1e-3f;
            g_chi2_sub = alphas[a] <= 0.1f ? 96 : 24; /* sharp lobes need finer integration */
            p = sphere_chi2(&c, s_bsdf, p_bsdf, 200000, 200 + t * 10 + a, &integral);
            if (alphas[a] >= 0.05f)
                CHECK(p > ALPHA, "GGX alpha=%g theta=%g: p = %g (pdf integral %g)", alphas[a], thetas[t], p, integral);
            CHECK(c.weight_errors == 0, "GGX alpha=%g theta=%g: weight != eval/pdf (%d)", alphas[a], thetas[t],
                  c.weight_errors);
            CHECK(integral <= 1.0 + 5e-3, "GGX pdf integrates to %g > 1", integral);
        }
        g_chi2_sub = 16;
    }
}

/* Directional albedo of a white GGX conductor two ways: the mean sample weight, and the
 * integral of eval over the hemisphere. They must agree, and not exceed 1. */
static void test_conductor_albedo(void) {
    pcg32 r = pcg32_seed(3, 4);
    material m = make_material(MAT_CONDUCTOR, 0.3f, v3s(1.0f));
    for (int t = 0; t < 4; ++t) {
        float th = 0.4f * t;
        vec3 wo = v3(sinf(th), 0, cosf(th));
        double sum = 0, sum2 = 0;
        const int n = 200000;
        for (int i = 0; i < n; ++i) {
            bsdf_sample bs;
            double w = 0;
            if (bsdf_sample_dir(&m, m.albedo, wo, pcg32_float(&r), v2(pcg32_float(&r), pcg32_float(&r)), &bs))
                w = bs.weight.x;
            sum += w;
            sum2 += w * w;
        }
        double mean = sum / n, se = sqrt((sum2 / n - mean * mean) / n);
        double quad = 0;
        const int g = 400;
        for (int a = 0; a < g; ++a)
            for (int b = 0; b < g; ++b) {
                double c = (a + 0.5) / g, phi = 2 * K_PI * (b + 0.5) / g, s = sqrt(1 - c * c);
                vec3 wi = v3((float)(s * cos(phi)), (float)(s * sin(phi)), (float)c);
                quad += bsdf_eval(&m, m.albedo, wo, wi).x; /* eval includes the cosine */
            }
        quad *= 2 * K_PI / ((double)g * g);
        CHECK(fabs(mean - quad) < 5 * se + 2e-3, "GGX albedo at theta %g: sampled %g vs integrated %g", th, mean, quad);
        CHECK(mean <= 1.0 + 5 * se, "GGX albedo above 1: %g", mean);
    }
}

static void test_dielectric(void) {
    pcg32 r = pcg32_seed(8, 8);
    material m = make_material(MAT_DIELECTRIC, 0, v3s(1.0f));
    const float cosines[4] = {1.0f, 0.7f, 0.3f, -0.5f}; /* last: from inside */
    for (int t = 0; t < 4; ++t) {
        float c = cosines[t], s = sqrtf(1 - c * c);
        vec3 wo = v3(s, 0, c);
        float eta = c > 0 ? 1.5f : 1.0f / 1.5f;
        double fresnel = fresnel_dielectric(fabsf(c), eta);
        int n = 100000, refl = 0;
        for (int i = 0; i < n; ++i) {
            bsdf_sample bs;
            memset(&bs, 0, sizeof bs);
            CHECK(bsdf_sample_dir(&m, m.albedo, wo, pcg32_float(&r), v2(0.5f, 0.5f), &bs), "dielectric absorbed");
            CHECK(bs.delta, "dielectric lobes are delta");
            if (bs.wi.z * wo.z > 0) {
                refl++;
                CHECK(fabsf(bs.wi.x + wo.x) < 1e-6f && fabsf(bs.wi.z - wo.z) < 1e-6f, "mirror direction");
            } else {
                /* Snell: n_i sin_i = n_t sin_t, and unit length */
                float sin_t = sqrtf(bs.wi.x * bs.wi.x + bs.wi.y * bs.wi.y);
                CHECK(fabsf(s - eta * sin_t) < 1e-4f, "Snell: sin_i %g, eta %g, sin_t %g", s, eta, sin_t);
                CHECK(fabsf(vlen(bs.wi) - 1) < 1e-5f, "refracted not unit");
                CHECK(fabsf(bs.weight.x - 1.0f / (eta * eta)) < 1e-5f, "radiance scaling 1/eta^2");
            }
        }
        double f = (double)refl / n, sigma = sqrt(fresnel * (1 - fresnel) / n) + 1e-9;
        CHECK(fabs(f - fresnel) < 5 * sigma + 1e-6, "reflect fraction %g vs Fresnel %g (cos %g)", f, fresnel, c);
    }
    /* total internal reflection from inside beyond the critical angle */
    vec3 wo = v3(sinf(1.2f), 0, -cosf(1.2f));
    bsdf_sample bs;
    memset(&bs, 0, sizeof bs);
    for (int i = 0; i < 100; ++i) {
        CHECK(bsdf_sample_dir(&m, m.albedo, wo, pcg32_float(&r), v2(0.5f, 0.5f), &bs) && bs.wi.z < 0, "TIR");
    }
    CHECK_NEAR(fresnel_dielectric(1.0f, 1.5f), 0.04, 1e-6, "normal-incidence Fresnel of glass");
}

static void test_mirror(void) {
    material m = make_material(MAT_MIRROR, 0, v3(0.9f, 0.8f, 0.7f));
    vec3 wo = vnorm(v3(0.3f, -0.4f, 0.8f));
    bsdf_sample bs;
    memset(&bs, 0, sizeof bs);
    CHECK(bsdf_sample_dir(&m, m.albedo, wo, 0.5f, v2(0.1f, 0.9f), &bs), "mirror samples");
    CHECK(bs.delta && fabsf(bs.wi.x + wo.x) < 1e-6f && fabsf(bs.wi.y + wo.y) < 1e-6f && fabsf(bs.wi.z - wo.z) < 1e-6f,
          "mirror reflects");
    CHECK(bs.weight.x == 0.9f && bs.weight.z == 0.7f, "mirror weight is its colour");
    CHECK(vis_black(bsdf_eval(&m, m.albedo, wo, bs.wi)) && bsdf_pdf(&m, wo, bs.wi) == 0.0f, "delta lobes do not eval");
}

static material make_pbr(float metallic, float roughness, vec3 colour) {
    material m = make_material(MAT_PBR, roughness * roughness, colour);
    m.metallic = metallic;
    return m;
}

/* Metallic-roughness and rough glass: chi-square of sample vs pdf, weight == eval/pdf. */
static void test_new_lobes(void) {
    const float thetas[3] = {0.1f, 0.8f, 1.4f};
    const float metals[3] = {0.0f, 0.5f, 1.0f};
    const float roughs[3] = {0.3f, 0.6f, 1.0f};
    g_chi2_sub = 24;
    for (int t = 0; t < 3; ++t) {
        vec3 wo = v3(sinf(thetas[t]) * 0.6f, sinf(thetas[t]) * 0.8f, cosf(thetas[t]));
        for (int a = 0; a < 3; ++a)
            for (int r = 0; r < 3; ++r) {
                bsdf_ctx c;
                c.m = make_pbr(metals[a], roughs[r], v3(0.8f, 0.5f, 0.2f));
                c.wo = wo;
                c.weight_errors = 0;
                c.tol = 1e-3f;
                double integral;
                double p = sphere_chi2(&c, s_bsdf, p_bsdf, 200000, 300 + t * 10 + a * 3 + r, &integral);
                CHECK(p > ALPHA, "pbr metallic %g roughness %g theta %g: p = %g (pdf integral %g)", metals[a],
                      roughs[r], thetas[t], p, integral);
                CHECK(c.weight_errors == 0, "pbr metallic %g roughness %g: weight != eval/pdf (%d)", metals[a],
                      roughs[r], c.weight_errors);
                CHECK(integral <= 1.0 + 5e-3, "pbr pdf integrates to %g > 1", integral);
            }
    }
    /* rough glass, from outside and from inside (wo.z < 0), including beyond the critical angle */
    const float gthetas[4] = {0.2f, 1.2f, 2.5f, 2.0f};
    const float galphas[3] = {0.1f, 0.3f, 0.7f};
    for (int t = 0; t < 4; ++t) {
        vec3 wo = v3(sinf(gthetas[t]) * 0.6f, sinf(gthetas[t]) * 0.8f, cosf(gthetas[t]));
        for (int a = 0; a < 3; ++a) {
            bsdf_ctx c;
            c.m = make_material(MAT_ROUGH_GLASS, galphas[a], v3s(1.0f));
            c.wo = wo;
            c.weight_errors = 0;
            c.tol = 2e-3f;
            g_chi2_sub = 96;
            double integral;
            double p = sphere_chi2(&c, s_bsdf, p_bsdf, 200000, 400 + t * 10 + a, &integral);
            CHECK(p > ALPHA, "rough glass alpha %g theta %g: p = %g (pdf integral %g)", galphas[a], gthetas[t], p,
                  integral);
            CHECK(c.weight_errors == 0, "rough glass alpha %g theta %g: weight != eval/pdf (%d)", galphas[a],
                  gthetas[t], c.weight_errors);
            CHECK(integral <= 1.0 + 5e-3, "rough glass pdf integrates to %g > 1", integral);
        }
    }
    g_chi2_sub = 16;
    /* below GGX_MIN_ALPHA rough glass is smooth glass: delta lobes */
    material sm = make_material(MAT_ROUGH_GLASS, 1e-4f, v3s(1.0f));
    bsdf_sample bs;
    memset(&bs, 0, sizeof bs);
    CHECK((material_flags(&sm) & BSDF_ALL_DELTA) &&
              bsdf_sample_dir(&sm, sm.albedo, v3(0, 0, 1), 0.9f, v2(0.3f, 0.3f), &bs) && bs.delta && bs.wi.z < -0.999f,
          "smooth rough glass refracts as smooth glass");
}

/* Directional albedo of a BSDF at wo: mean sample weight (with its standard error) and the
 * quadrature of eval over the whole sphere (n x n cells in cos theta and phi, both hemispheres). */
static double albedo_sampled(const material *m, vec3 wo, int mode, int n, uint64_t seed, double *se) {
    pcg32 r = pcg32_seed(seed, 5);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; ++i) {
        bsdf_sample bs;
        double w = 0;
        float u1 = pcg32_float(&r);
        vec2 u2 = v2(pcg32_float(&r), pcg32_float(&r));
        if (bsdf_sample_dir_mode(m, m->albedo, wo, u1, u2, mode, &bs)) w = vmaxc(bs.weight);
        sum += w;
        sum2 += w * w;
    }
    double mean = sum / n;
    *se = sqrt(fmax(0.0, sum2 / n - mean * mean) / n);
    return mean;
}
static double albedo_quadrature(const material *m, vec3 wo, int mode, int g) {
    double q = 0;
    for (int a = 0; a < g; ++a)
        for (int b = 0; b < g; ++b) {
            double c = -1.0 + 2.0 * (a + 0.5) / g, phi = 2 * K_PI * (b + 0.5) / g, s = sqrt(1 - c * c);
            vec3 wi = v3((float)(s * cos(phi)), (float)(s * sin(phi)), (float)c);
            q += vmaxc(bsdf_eval_mode(m, m->albedo, wo, wi, mode));
        }
    return q * 4 * K_PI / ((double)g * g);
}

/* The tabulated directional albedo of a white GGX reflector (kernel/ggx_albedo.h, read by the
 * multiple-scattering compensation) against a fresh estimate: the mean VNDF sample weight of a
 * white conductor (F = 1). */
static void test_albedo_table(void) {
    const float mus[5] = {0.05f, 0.2f, 0.5f, 0.8f, 1.0f};
    const float roughs[5] = {0.1f, 0.3f, 0.5f, 0.75f, 1.0f};
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
            material m = make_material(MAT_CONDUCTOR, roughs[j] * roughs[j], v3s(1.0f));
            vec3 wo = v3(sqrtf(1 - mus[i] * mus[i]), 0, mus[i]);
            double se, e = albedo_sampled(&m, wo, TRANSPORT_RADIANCE, 100000, 50 + i * 5 + j, &se);
            double t = ggx_albedo(mus[i], m.alpha);
            CHECK(fabs(e - t) < 4 * se + 0.01, "GGX albedo table at mu %g roughness %g: %g, sampled %g", mus[i],
                  roughs[j], t, e);
        }
    CHECK(ggx_albedo_avg(1.0f) > 0.4f && ggx_albedo_avg(1.0f) < 0.5f && ggx_albedo_avg(1e-4f) > 0.999f,
          "E_avg ends: %g, %g", ggx_albedo_avg(1.0f), ggx_albedo_avg(1e-4f));
}

/* White furnace: a white metallic-roughness surface reflects at most what arrives, for a sweep
 * of metallic x roughness x angle; sampled and integrated albedos agree. Rough glass (importance:
 * energy, without radiance's 1/eta^2) reflects + transmits at most 1 from either side. */
static void test_furnace(void) {
    const float metals[5] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f};
    const float roughs[6] = {0.0f, 0.1f, 0.3f, 0.5f, 0.75f, 1.0f};
    const float thetas[4] = {0.0f, 0.6f, 1.1f, 1.5f};
    double worst = 0, worst_m = 0, worst_r = 0;
    for (int a = 0; a < 5; ++a)
        for (int r = 0; r < 6; ++r)
            for (int t = 0; t < 4; ++t) {
                material m = make_pbr(metals[a], roughs[r], v3s(1.0f));
                vec3 wo = v3(sinf(thetas[t]), 0, cosf(thetas[t]));
                double se, e = albedo_sampled(&m, wo, TRANSPORT_RADIANCE, 100000, 900 + a * 100 + r * 10 + t, &se);
                CHECK(e <= 1.0 + 4 * se + 1e-4, "furnace: metallic %g roughness %g theta %g reflects %g > 1 (se %g)",
                      metals[a], roughs[r], thetas[t], e, se);
                if (roughs[r] >= 0.5f && thetas[t] < 1.2f) { /* what a 400 x 400 quadrature resolves */
                    double q = albedo_quadrature(&m, wo, TRANSPORT_RADIANCE, 400);
                    CHECK(fabs(q - e) < 5 * se + 5e-3,
                          "furnace: metallic %g roughness %g theta %g: sampled %g vs integrated %g", metals[a],
                          roughs[r], thetas[t], e, q);
                }
                /* with the multiple-scattering compensation a white metal loses nothing */
                if (metals[a] == 1.0f)
                    CHECK(fabs(e - 1.0) < 0.02 + 4 * se,
                          "furnace: white metal roughness %g theta %g reflects %g, not 1", roughs[r], thetas[t], e);
                if (e > worst) {
                    worst = e;
                    worst_m = metals[a];
                    worst_r = roughs[r];
                }
            }
    printf("furnace: largest white metallic-roughness albedo %.4f (metallic %g, roughness %g)\n", worst, worst_m,
           worst_r);
    /* the test can fail: a plain sum of the specular lobe and the Lambertian (no Fresnel weights
     * on the diffuse part) gains energy, and the quadrature sees it */
    {
        material spec = make_pbr(1.0f, 0.3f, v3s(PBR_DIELECTRIC_F0)); /* a 0.04 specular alone */
        vec3 wo = v3(sinf(1.1f), 0, cosf(1.1f));
        double naive = albedo_quadrature(&spec, wo, TRANSPORT_RADIANCE, 400) + 1.0; /* + white Lambertian */
        CHECK(naive > 1.0 + 0.02, "the naive sum should gain energy (%g)", naive);
    }
    const float galphas[3] = {0.05f, 0.3f, 0.8f};
    const float gthetas[5] = {0.0f, 1.0f, 1.5f, 2.6f, 2.0f};
    for (int a = 0; a < 3; ++a)
        for (int t = 0; t < 5; ++t) {
            material m = make_material(MAT_ROUGH_GLASS, galphas[a], v3s(1.0f));
            vec3 wo = v3(sinf(gthetas[t]), 0, cosf(gthetas[t]));
            double se, e = albedo_sampled(&m, wo, TRANSPORT_IMPORTANCE, 100000, 1900 + a * 10 + t, &se);
            CHECK(e <= 1.0 + 4 * se + 1e-4, "furnace: rough glass alpha %g theta %g passes %g > 1", galphas[a],
                  gthetas[t], e);
            if (galphas[a] >= 0.5f) {
                double q = albedo_quadrature(&m, wo, TRANSPORT_IMPORTANCE, 500);
                CHECK(fabs(q - e) < 5 * se + 1e-2, "rough glass alpha %g theta %g: sampled %g vs integrated %g",
                      galphas[a], gthetas[t], e, q);
            }
        }
}

int main(void) {
    test_new_lobes();
    test_furnace();
    test_albedo_table();
    test_lobes();
    test_conductor_albedo();
    test_dielectric();
    test_mirror();
    return test_result("test_bsdf");
}
