/* Vector math, transforms, PCG32 and hashing. */
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

int main(void) {
    test_vectors();
    test_transforms();
    test_pcg32();
    return test_result("test_math");
}
