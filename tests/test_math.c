/* Vector math, transforms, PCG32 and hashing. */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "scene/scene.h"
#include "testing.h"

static void test_vectors(void) {
    vec3 a = v3(1, 2, 3), b = v3(-2, 0.5f, 4);
    CHECK_NEAR(vdot(a, b), 11.0, 1e-6, "dot");
    vec3 c = vcross(a, b);
    CHECK_NEAR(c.x, 6.5, 1e-6, "cross.x");
    CHECK_NEAR(c.y, -10.0, 1e-6, "cross.y");
    CHECK_NEAR(c.z, 4.5, 1e-6, "cross.z");
    CHECK_NEAR(vdot(c, a), 0.0, 1e-5, "cross orthogonal to a");
    CHECK_NEAR(vlen(vnorm(b)), 1.0, 1e-6, "normalize");
    /* orthonormal frames for many normals, including the z = -1 singularity of naive methods */
    pcg32 r = pcg32_seed(7, 1);
    for (int i = 0; i < 1000; ++i) {
        vec3 n = i == 0 ? v3(0, 0, -1)
                        : (i == 1 ? v3(0, 0, 1) : sample_uniform_sphere(v2(pcg32_float(&r), pcg32_float(&r))));
        frame f = frame_from_normal(n);
        CHECK(fabsf(vdot(f.t, f.b)) < 1e-5f && fabsf(vdot(f.t, f.n)) < 1e-5f && fabsf(vdot(f.b, f.n)) < 1e-5f,
              "frame not orthogonal for n=(%g,%g,%g)", n.x, n.y, n.z);
        CHECK(fabsf(vlen(f.t) - 1) < 1e-5f && fabsf(vlen(f.b) - 1) < 1e-5f, "frame not normalised");
        CHECK(vdot(vcross(f.t, f.b), f.n) > 0.99f, "frame not right-handed");
        vec3 v = v3(0.3f, -0.2f, 0.9f);
        vec3 back = frame_to_local(f, frame_to_world(f, v));
        CHECK(vlen(vsub(back, v)) < 1e-5f, "local/world round trip");
    }
}

static void test_transforms(void) {
    xform m = xform_trs(v3(1, 2, 3), v3(30, 45, 60), v3(2, 3, 4)), inv;
    CHECK(xform_invert(&m, &inv) == 0, "invertible");
    vec3 p = v3(0.3f, -0.7f, 1.1f);
    vec3 q = xform_point(&inv, xform_point(&m, p));
    CHECK(vlen(vsub(p, q)) < 1e-5f, "inverse round trip");
    /* CIS 5650 order: M = T * Rx * Ry * Rz * S; rotating (1,0,0) by Rz(90) gives (0,1,0) */
    xform rz = xform_trs(v3s(0), v3(0, 0, 90), v3s(1));
    vec3 x = xform_vector(&rz, v3(1, 0, 0));
    CHECK(vlen(vsub(x, v3(0, 1, 0))) < 1e-6f, "Rz(90) x = y, got (%g,%g,%g)", x.x, x.y, x.z);
    xform rxz = xform_trs(v3s(0), v3(90, 0, 90), v3s(1));
    x = xform_vector(&rxz, v3(1, 0, 0)); /* Rx(90) * Rz(90) * x = Rx(90) * y = z */
    CHECK(vlen(vsub(x, v3(0, 0, 1))) < 1e-6f, "Rx Rz order, got (%g,%g,%g)", x.x, x.y, x.z);
    xform sing = xform_trs(v3s(0), v3s(0), v3(1, 0, 1));
    CHECK(xform_invert(&sing, &inv) != 0, "singular transform rejected");
}

static void test_pcg32(void) {
    /* reference output of the PCG32 demo: seed 42, stream 54 */
    pcg32 r = pcg32_seed(42u, 54u);
    const uint32_t expect[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    for (int i = 0; i < 6; ++i) {
        uint32_t v = pcg32_next(&r);
        CHECK(v == expect[i], "pcg32 output %d: 0x%08x, expected 0x%08x", i, v, expect[i]);
    }
    /* floats in [0,1), bounded integers unbiased enough for a chi-square over 7 values */
    double obs[7] = {0}, exp_[7];
    for (int i = 0; i < 70000; ++i) {
        float f = pcg32_float(&r);
        CHECK(f >= 0.0f && f < 1.0f, "float out of range: %g", f);
        obs[pcg32_bounded(&r, 7)] += 1;
    }
    for (int i = 0; i < 7; ++i) exp_[i] = 10000;
    double p = chi2_test(obs, exp_, 7, NULL);
    CHECK(p > 1e-3, "pcg32_bounded chi-square p = %g", p);
    CHECK(u32_to_unit_float(0xffffffffu) < 1.0f, "largest float below 1");
}

/* intersect_quad with the (s, t) directions scene_add_quad precomputes (quad.su, quad.sv): rays
 * aimed at o + a u + b v hit it exactly where 0 <= a, b <= 1, at that (a, b) and distance. */
static void test_quad(void) {
    scene sc;
    memset(&sc, 0, sizeof sc);
    pcg32 r = pcg32_seed(5, 3);
#define RND(lo, hi) ((lo) + ((hi) - (lo)) * pcg32_float(&r))
    int wrong = 0, hits = 0;
    for (int i = 0; i < 20000; ++i) {
        vec3 o = v3(RND(-5, 5), RND(-5, 5), RND(-5, 5)), u = v3(RND(-3, 3), RND(-3, 3), RND(-3, 3)),
             v = v3(RND(-3, 3), RND(-3, 3), RND(-3, 3));
        sc.nquads = 0;
        if (scene_add_quad(&sc, o, u, v, 0)) continue;
        const quad *q = &sc.quads[0];
        if (fabsf(vdot(vnorm(u), vnorm(v))) > 0.95f) continue; /* nearly parallel edges: a sliver */
        float a = RND(-0.3f, 1.3f), b = RND(-0.3f, 1.3f);
        if (fabsf(a) < 0.01f || fabsf(a - 1) < 0.01f || fabsf(b) < 0.01f || fabsf(b - 1) < 0.01f) continue;
        vec3 p = vadd(o, vadd(vscale(u, a), vscale(v, b)));
        vec3 org = vadd(p, v3(RND(-8, 8), RND(-8, 8), RND(-8, 8)));
        vec3 d = vsub(p, org);
        if (fabsf(vdot(vnorm(d), q->n)) < 0.05f) continue; /* grazing */
        float t, sa, sb;
        int hit = intersect_quad(q, org, d, 0.0f, K_INF, &t, &sa, &sb);
        int inside = a >= 0 && a <= 1 && b >= 0 && b <= 1;
        hits += hit;
        wrong += hit != inside || (hit && (fabsf(t - 1) > 1e-3f || fabsf(sa - a) > 1e-3f || fabsf(sb - b) > 1e-3f));
    }
#undef RND
    CHECK(wrong == 0 && hits > 1000, "quad test: %d wrong of %d hits", wrong, hits);
    free(sc.quads);
}

/* A sphere's texture coordinates are computed for a material that reads a texture only. */
static void test_sphere_uv(void) {
    material m[2];
    memset(m, 0, sizeof m);
    m[0].albedo_tex = m[1].albedo_tex = -1;
    m[1].maps = MAP_EMISSION;
    kscene ks;
    memset(&ks, 0, sizeof ks);
    ks.materials = m;
    vec3 po = v3(0.3f, 0.2f, -0.1f);
    vec2 none = sphere_uv(&ks, 0, po), uv = sphere_uv(&ks, 1, po);
    vec3 dir = vnorm(po);
    CHECK(none.x == 0.0f && none.y == 0.0f, "untextured sphere: uv (%g, %g)", none.x, none.y);
    CHECK_NEAR(uv.x, 0.5 + atan2(dir.z, dir.x) * K_INV_2PI, 1e-5, "sphere u");
    CHECK_NEAR(uv.y, acos(dir.y) * K_INV_PI, 1e-5, "sphere v");
}

int main(void) {
    test_vectors();
    test_transforms();
    test_pcg32();
    test_quad();
    test_sphere_uv();
    return test_result("test_math");
}
