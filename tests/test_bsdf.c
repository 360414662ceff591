/* Every BSDF: chi-square of `sample` against `pdf`, and the sample weight equals eval/pdf.
 * Delta lobes: reflection/refraction probabilities follow Fresnel, directions follow Snell. */
#include <string.h>

#include "sphere_chi2.h"

#define ALPHA 1e-3

typedef struct bsdf_ctx { material m; vec3 wo; int weight_errors; float tol; } bsdf_ctx;

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
static double p_bsdf(void *c, vec3 d) { bsdf_ctx *b = c; return bsdf_pdf(&b->m, b->wo, d); }

static material make_material(int kind, float alpha, vec3 albedo) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = kind; m.albedo_tex = -1; m.albedo = albedo; m.alpha = alpha; m.ior = 1.5f;
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
            CHECK(c.weight_errors == 0, "GGX alpha=%g theta=%g: weight != eval/pdf (%d)", alphas[a], thetas[t], c.weight_errors);
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
                quad += bsdf_eval(&m, m.albedo, wo, wi).x;   /* eval includes the cosine */
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

int main(void) {
    test_lobes();
    test_conductor_albedo();
    test_dielectric();
    test_mirror();
    return test_result("test_bsdf");
}
