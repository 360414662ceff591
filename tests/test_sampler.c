/* The sample generators (kernel/sampler.h): Sobol's fast dimension 1 against its direction
 * numbers, elementary intervals (2D) and strata (1D) of every prefix of 2^m samples,
 * chi-square uniformity of a sample across pixels and independence between the dimensions of
 * one pixel (against a deliberately unshuffled sequence, which the test must reject), the
 * batched draws (sampler_camera / sampler_bounce: SIMD lanes where compiled with AVX2) against
 * the single draws bit for bit, and variance reduction of stratified and Sobol sampling.
 * Built twice: at the baseline (scalar draws) and with the avx2 kernel level's flags. */
#include <math.h>
#include <string.h>

#include "kernel/sampler.h"
#include "testing.h"

#define ALPHA 1e-3

/* Sobol dimension 1 from its direction numbers, one index bit at a time. */
static uint32_t sobol_dim1_reference(uint32_t i) {
    uint32_t r = 0u, v = 0x80000000u;
    for (; i; i >>= 1, v ^= v >> 1)
        if (i & 1u) r ^= v;
    return r;
}

static void test_sobol_dim1(void) {
    pcg32 r = pcg32_seed(1, 2);
    int bad = 0;
    for (uint32_t i = 0; i < (1u << 20); ++i) {
        uint32_t k = i < (1u << 16) ? i : pcg32_next(&r);
        bad += sobol_dim1(k) != sobol_dim1_reference(k);
    }
    CHECK(bad == 0, "sobol_dim1 differs from the direction numbers at %d indices", bad);
    CHECK(sobol_dim0(1) == 0x80000000u && sobol_dim0(3) == 0xc0000000u, "van der Corput");
}

/* Every elementary interval of volume 2^-m holds exactly one of the first 2^m points (2D), and
 * every interval of length 2^-m one of the first 2^m 1D values; also for the block of 2^m
 * samples starting at a multiple of 2^m (a pass of a progressive render). */
static void test_sobol_nets(void) {
    static int count[1024];
    for (uint32_t pixel = 0; pixel < 4; ++pixel)
        for (int m = 0; m <= 10; ++m) {
            uint32_t n = 1u << m;
            for (uint32_t first = 0; first <= n; first += n)
                for (uint32_t draw = 0; draw < 9; draw += 4) {
                    vec2 pts[1024];
                    float one[1024];
                    for (uint32_t i = 0; i < n; ++i) {
                        sampler s = sampler_start(SAMPLER_SOBOL, pixel, 7, first + i, 99, 0);
                        for (uint32_t k = 0; k < draw; ++k) sampler_2d(&s);
                        sampler t = s;
                        pts[i] = sampler_2d(&s);
                        one[i] = sampler_1d(&t);
                        CHECK(one[i] == pts[i].x, "a 1D draw is the x of the 2D draw of its dimension");
                    }
                    for (int a = 0; a <= m; ++a) {
                        uint32_t nx = 1u << a, ny = 1u << (m - a);
                        memset(count, 0, sizeof count);
                        for (uint32_t i = 0; i < n; ++i)
                            count[(uint32_t)(pts[i].y * ny) * nx + (uint32_t)(pts[i].x * nx)]++;
                        int bad = 0;
                        for (uint32_t c = 0; c < n; ++c) bad += count[c] != 1;
                        CHECK(bad == 0, "sobol pixel %u m=%d first %u draw %u: %d of %u intervals %ux%u not hit once",
                              pixel, m, first, draw, bad, n, nx, ny);
                    }
                }
        }
}

/* One sample (index, draw) over many pixels: uniform on the unit square (the scrambles are
 * random enough), 16x16 cells. */
static void test_uniform_across_pixels(void) {
    const uint32_t idxs[4] = {0, 1, 6, 1000}, draws[3] = {0, 3, 12};
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 3; ++b) {
            double obs[256] = {0}, ex[256];
            const int n = 64 * 1024;
            for (int c = 0; c < 256; ++c) ex[c] = n / 256.0;
            for (int p = 0; p < n; ++p) {
                sampler s = sampler_start(SAMPLER_SOBOL, (uint32_t)p & 255u, (uint32_t)p >> 8, idxs[a], 3, 0);
                for (uint32_t k = 0; k < draws[b]; ++k) sampler_1d(&s);
                vec2 u = sampler_2d(&s);
                obs[(int)(u.y * 16) * 16 + (int)(u.x * 16)] += 1;
            }
            double pv = chi2_test(obs, ex, 256, NULL);
            CHECK(pv > ALPHA, "sample %u draw %u across pixels: chi-square p = %g", idxs[a], draws[b], pv);
        }
}

/* Joint histogram of two 1D dimensions of one pixel over n samples: 8x8 cells. The two
 * coordinates come from get(pixel, index, dim). */
typedef float (*dim_fn)(uint32_t pixel, uint32_t index, uint32_t dim);
static double pair_p(dim_fn get, uint32_t pixel, uint32_t da, uint32_t db, int n) {
    double obs[64] = {0}, ex[64];
    for (int c = 0; c < 64; ++c) ex[c] = n / 64.0;
    for (int i = 0; i < n; ++i) {
        float x = get(pixel, (uint32_t)i, da), y = get(pixel, (uint32_t)i, db);
        obs[(int)(y * 8) * 8 + (int)(x * 8)] += 1;
    }
    return chi2_test(obs, ex, 64, NULL);
}
static float dim_sobol(uint32_t pixel, uint32_t index, uint32_t dim) {
    sampler s = sampler_start(SAMPLER_SOBOL, pixel, 1, index, 5, 0);
    s.dim = dim;
    return sampler_1d(&s);
}
/* The same values without the index shuffle: every dimension an Owen scramble of the same van
 * der Corput sequence, so two dimensions are functions of each other. */
static float dim_unshuffled(uint32_t pixel, uint32_t index, uint32_t dim) {
    sampler s = sampler_start(SAMPLER_SOBOL, pixel, 1, index, 5, 0);
    return sobol_x(&s, dim, index); /* the index itself, as sobol_shuffled gives draw 0 */
}

static void test_dimensions_independent(void) {
    const uint32_t pairs[4][2] = {{0, 1}, {2, 3}, {4, 9}, {5, 6}};
    for (uint32_t pixel = 0; pixel < 3; ++pixel)
        for (int k = 0; k < 4; ++k) {
            double p = pair_p(dim_sobol, pixel, pairs[k][0], pairs[k][1], 4096);
            CHECK(p > ALPHA, "pixel %u dims %u, %u dependent: chi-square p = %g", pixel, pairs[k][0], pairs[k][1], p);
        }
    double p = pair_p(dim_unshuffled, 0, 2, 3, 4096);
    CHECK(p < ALPHA, "the test must reject unshuffled dimensions (p = %g)", p);
}

/* sampler_camera and sampler_bounce give the single draws' numbers, bit for bit: without seeds
 * kept (NULL) and with one sampler_cache shared by all the pixels and starting dimensions below
 * (its slots refilled as the pixel or the batch changes; each i is drawn twice, the second time
 * from the kept seeds). */
static void test_batches(void) {
    int differ = 0;
    sampler_cache cache;
    sampler_cache_init(&cache);
    for (int type = 0; type < 3; ++type)
        for (uint32_t i = 0; i < 6000; ++i) {
            sampler_cache *c = i % 4 == 0 ? NULL : &cache;
            sampler a = sampler_start(type, (i / 2) % 61, (i / 2) / 61, (i / 2) * 7u + 3u + i % 2, 11, 64);
            sampler b = a;
            if (i % 3 == 2) { /* a camera after other draws, a bounce first */
                a.dim = b.dim = i % 7;
            } else {
                vec2 p0, l0;
                sampler_camera(&a, c, &p0, &l0);
                vec2 p1 = sampler_2d(&b), l1 = sampler_2d(&b);
                differ += p0.x != p1.x || p0.y != p1.y || l0.x != l1.x || l0.y != l1.y;
            }
            for (int bounce = 0; bounce < 4; ++bounce) {
                bounce_samples u = sampler_bounce(&a, c);
                float pick = sampler_1d(&b);
                vec2 light = sampler_2d(&b);
                float lobe = sampler_1d(&b);
                vec2 bsdf = sampler_2d(&b);
                float rr = sampler_1d(&b);
                differ += u.light_pick != pick || u.light.x != light.x || u.light.y != light.y || u.lobe != lobe ||
                          u.bsdf.x != bsdf.x || u.bsdf.y != bsdf.y || u.rr != rr;
            }
            differ += a.dim != b.dim;
        }
    CHECK(differ == 0, "batched draws differ from single draws %d times", differ);
#if KERNEL_SIMD_AVX2
    printf("batched draws: AVX2 lanes against scalar draws\n");
#else
    printf("batched draws: scalar\n");
#endif
}

/* Integrate f(x,y) = x*y*exp(x) over the unit square with 64 samples per "pixel"; the
 * stratified and Sobol estimators must have far lower variance than independent sampling. */
static double estimator_variance(int type) {
    const double truth = 0.5 * 1.0; /* int x e^x dx = 1, int y dy = 1/2 */
    double var = 0.0;
    const int pixels = 400, spp = 64;
    for (int p = 0; p < pixels; ++p) {
        double sum = 0.0;
        for (int i = 0; i < spp; ++i) {
            sampler s = sampler_start(type, (uint32_t)p, 3, (uint32_t)i, 11, spp);
            sampler_2d(&s); /* skip a pair, like the camera does */
            vec2 u = sampler_2d(&s);
            sum += u.x * u.y * exp(u.x);
        }
        double e = sum / spp - truth;
        var += e * e;
    }
    return var / pixels;
}

static void test_sampler_variance(void) {
    double vr = estimator_variance(SAMPLER_RANDOM);
    double vs = estimator_variance(SAMPLER_STRATIFIED);
    double vq = estimator_variance(SAMPLER_SOBOL);
    CHECK(vs < vr / 8, "stratified variance %g not << random %g", vs, vr);
    CHECK(vq < vr / 8, "sobol variance %g not << random %g", vq, vr);
    /* and every sampler stays in [0,1) */
    for (int type = 0; type < 3; ++type)
        for (uint32_t i = 0; i < 4096; ++i) {
            sampler s = sampler_start(type, i % 37, i / 37, i, 5, 64);
            for (int d = 0; d < 12; ++d) {
                vec2 u = sampler_2d(&s);
                float v = sampler_1d(&s);
                CHECK(u.x >= 0 && u.x < 1 && u.y >= 0 && u.y < 1 && v >= 0 && v < 1, "sampler %d out of range", type);
            }
        }
}

/* The media block (sampler_medium_*): drawing from it leaves every surface draw as it was (the
 * sampler is not advanced, nor is its stream), its values lie in [0,1) with mean 1/2, and its
 * dimensions are not the surface ones (a draw equal to every pixel's surface draw of the same
 * sample would show a block that aliases them). */
static void test_media_block(void) {
    int moved = 0, same = 0, n = 0;
    double sum = 0.0;
    for (int type = 0; type < 3; ++type)
        for (uint32_t i = 0; i < 2000; ++i) {
            sampler a = sampler_start(type, i % 41, i / 41, i, 9, 64), b = a;
            vec2 p0, l0, p1, l1;
            sampler_camera(&a, NULL, &p0, &l0);
            sampler_camera(&b, NULL, &p1, &l1);
            for (uint32_t depth = 0; depth < 3; ++depth) {
                float m = sampler_medium_1d(&a, depth, 0);
                vec2 m2 = sampler_medium_2d(&a, depth, 1);
                pcg32 st = sampler_medium_stream(&a, depth);
                float t = pcg32_float(&st);
                CHECK(m >= 0 && m < 1 && m2.x >= 0 && m2.x < 1 && m2.y >= 0 && m2.y < 1 && t >= 0 && t < 1,
                      "media draw out of range (sampler %d)", type);
                sum += m + m2.x + m2.y + t;
                n += 4;
                bounce_samples u = sampler_bounce(&a, NULL), v = sampler_bounce(&b, NULL);
                moved += memcmp(&u, &v, sizeof u) != 0 || a.dim != b.dim;
                same += m == u.light_pick || m == u.lobe || m == u.rr;
            }
            moved += memcmp(&a.rng, &b.rng, sizeof a.rng) != 0;
        }
    CHECK(moved == 0, "media draws moved the surface draws %d times", moved);
    CHECK(same < 5, "media draws equal surface draws %d times", same);
    CHECK(fabs(sum / n - 0.5) < 0.01, "media draws' mean %g", sum / n);
    CHECK(SAMPLE_DIM_MEDIA_BASE > SAMPLE_DIMS_CAMERA + SAMPLE_DIMS_BOUNCE * 1024u, "the media block overlaps bounces");
}

int main(void) {
    test_media_block();
    test_sobol_dim1();
    test_sobol_nets();
    test_uniform_across_pixels();
    test_dimensions_independent();
    test_batches();
    test_sampler_variance();
    return test_result("test_sampler");
}
