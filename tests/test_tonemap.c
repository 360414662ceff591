/* Tone mapping (kernel/tonemap.h, image/tonemap.c): the curves' shape (monotone, bounded, ends and
 * fixed points), exposure, bad values, greys staying grey, the default path equal to the plain
 * sRGB quantiser, and display vs linear files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"
#include "image/tonemap.h"
#include "testing.h"

static void grey(int op, float ev, float v, float out[3]) {
    float in[3] = {v, v, v};
    tonemap_pixel(op, exp2f(ev), in, out);
}

static void check_monotone_bounded(void) {
    for (int op = 0; op < TONEMAP_COUNT; ++op) {
        float prev = -1.0f;
        int bad = 0, outside = 0;
        for (int i = 0; i <= 4000; ++i) {
            float v = 1e-6f * powf(10.0f, 10.0f * (float)i / 4000.0f); /* 1e-6 .. 1e4 */
            float o[3];
            grey(op, 0.0f, v, o);
            if (o[1] < prev - 1e-7f) bad++;
            for (int c = 0; c < 3; ++c) outside += !(o[c] >= 0.0f && o[c] <= 1.0f);
            prev = o[1];
        }
        CHECK(bad == 0, "%s: not monotone on greys (%d decreasing steps)", tonemap_name(op), bad);
        CHECK(outside == 0, "%s: %d components outside [0, 1]", tonemap_name(op), outside);
        /* saturated colours too */
        float cols[4][3] = {{10, 0, 0}, {0, 50, 0}, {0, 0, 1000}, {3, 2, 0}};
        for (int k = 0; k < 4; ++k) {
            float o[3];
            tonemap_pixel(op, 1.0f, cols[k], o);
            for (int c = 0; c < 3; ++c)
                CHECK(o[c] >= 0.0f && o[c] <= 1.0f, "%s: colour %d channel %d -> %g", tonemap_name(op), k, c, o[c]);
        }
    }
    /* strictly increasing in the midtones for the filmic curves (no flat spots) */
    for (int op = TONEMAP_ACES; op <= TONEMAP_AGX; ++op) {
        float a[3], b[3];
        grey(op, 0.0f, 0.05f, a);
        grey(op, 0.0f, 0.06f, b);
        CHECK(b[0] > a[0], "%s: flat between 0.05 and 0.06", tonemap_name(op));
        grey(op, 0.0f, 2.0f, a);
        grey(op, 0.0f, 3.0f, b);
        CHECK(b[0] > a[0], "%s: flat between 2 and 3 (clips too early)", tonemap_name(op));
    }
}

static void check_clamp_and_exposure(void) {
    float o[3];
    grey(TONEMAP_CLAMP, 0.0f, 0.5f, o);
    CHECK_NEAR(o[0], 0.5f, 0.0f, "clamp is the identity below 1");
    grey(TONEMAP_CLAMP, 0.0f, 7.0f, o);
    CHECK_NEAR(o[0], 1.0f, 0.0f, "clamp cuts at 1");
    grey(TONEMAP_CLAMP, 1.0f, 0.2f, o);
    CHECK_NEAR(o[0], 0.4f, 1e-7, "+1 EV doubles");
    grey(TONEMAP_CLAMP, -2.0f, 0.8f, o);
    CHECK_NEAR(o[0], 0.2f, 1e-7, "-2 EV quarters");
    /* for every curve, +1 EV on v is the curve at 2v */
    for (int op = 0; op < TONEMAP_COUNT; ++op)
        for (float v = 0.001f; v < 50.0f; v *= 3.1f) {
            float a[3], b[3];
            grey(op, 1.0f, v, a);
            grey(op, 0.0f, 2.0f * v, b);
            CHECK_NEAR(a[1], b[1], 1e-6, tonemap_name(op));
        }
    /* bad values: NaN and negatives are black, +inf is white, never NaN out */
    for (int op = 0; op < TONEMAP_COUNT; ++op) {
        float in[3] = {NAN, -3.0f, INFINITY};
        tonemap_pixel(op, 1.0f, in, o);
        for (int c = 0; c < 3; ++c)
            CHECK(o[c] >= 0.0f && o[c] <= 1.0f, "%s: bad input channel %d -> %g", tonemap_name(op), c, o[c]);
        float inb[3] = {NAN, NAN, NAN};
        tonemap_pixel(op, 1.0f, inb, o);
        CHECK(o[0] <= 1e-3f && o[1] <= 1e-3f && o[2] <= 1e-3f, "%s: NaN is not black (%g)", tonemap_name(op), o[0]);
        float inf[3] = {INFINITY, INFINITY, INFINITY};
        tonemap_pixel(op, 1.0f, inf, o);
        CHECK(o[1] >= 0.99f, "%s: +inf is not white (%g)", tonemap_name(op), o[1]);
    }
}

static void check_aces(void) {
    float o[3];
    /* Hill's fit at v/0.6 for greys (both matrices' rows sum to 1): values from the formula
     * evaluated in double precision outside this code */
    grey(TONEMAP_ACES, 0.0f, 0.18f, o);
    CHECK_NEAR(o[0], 0.2131054f, 2e-5, "aces(0.18)");
    grey(TONEMAP_ACES, 0.0f, 1.0f, o);
    CHECK_NEAR(o[1], 0.7633974f, 2e-5, "aces(1)");
    grey(TONEMAP_ACES, 0.0f, 0.05f, o);
    CHECK_NEAR(o[2], 0.0316811f, 2e-5, "aces(0.05)");
    grey(TONEMAP_ACES, 0.0f, 0.0f, o);
    CHECK_NEAR(o[0], 0.0f, 0.0, "aces(0) is black");
    grey(TONEMAP_ACES, 0.0f, 1e4f, o);
    CHECK_NEAR(o[0], 1.0f, 0.0, "aces(1e4) is white");
}

static void check_agx(void) {
    const float xp = 10.0f / 16.5f, yp = powf(0.18f, 1.0f / 2.4f);
    CHECK_NEAR(tonemap_agx_curve(0.0f), 0.0f, 1e-6, "agx curve(0)");
    CHECK_NEAR(tonemap_agx_curve(1.0f), 1.0f, 1e-6, "agx curve(1)");
    CHECK_NEAR(tonemap_agx_curve(xp), yp, 1e-6, "agx curve(pivot)");
    float h = 1e-3f;
    CHECK_NEAR((tonemap_agx_curve(xp + h) - tonemap_agx_curve(xp - h)) / (2 * h), 2.4f, 2e-3, "agx slope at the pivot");
    CHECK_NEAR(tonemap_agx_log(0.18f), xp, 1e-6, "agx log(middle grey)");
    CHECK_NEAR(tonemap_agx_log(0.18f * exp2f(6.5f)), 1.0f, 1e-5, "agx log(+6.5 EV)");
    CHECK_NEAR(tonemap_agx_log(0.18f * exp2f(-10.0f)), 0.0f, 1e-5, "agx log(-10 EV)");
    float o[3];
    grey(TONEMAP_AGX, 0.0f, 0.18f, o);
    CHECK_NEAR(o[1], 0.18f, 2e-3, "agx keeps middle grey");
    CHECK(fabsf(o[0] - o[1]) < 1e-3f && fabsf(o[2] - o[1]) < 1e-3f, "agx: grey not grey (%g %g %g)", o[0], o[1], o[2]);
    grey(TONEMAP_AGX, 0.0f, 0.18f * exp2f(7.0f), o);
    CHECK(o[1] > 0.995f, "agx: +7 EV is not white (%g)", o[1]);
    grey(TONEMAP_AGX, 0.0f, 0.18f * exp2f(-11.0f), o);
    CHECK(o[1] < 1e-3f, "agx: -11 EV is not black (%g)", o[1]);
    /* AgX compresses a bright saturated colour towards white instead of clipping the channel */
    float red[3] = {20.0f, 0.5f, 0.5f};
    tonemap_pixel(TONEMAP_AGX, 1.0f, red, o);
    CHECK(o[1] > 0.3f && o[0] > o[1], "agx: bright red should desaturate towards white (%g %g %g)", o[0], o[1], o[2]);
    /* ... and the curve is gentler than a clamp: scene 1.0 is below white */
    grey(TONEMAP_AGX, 0.0f, 1.0f, o);
    CHECK(o[1] > 0.5f && o[1] < 0.95f, "agx(1.0) = %g", o[1]);
}

static void check_host_module(void) {
    int op = -1;
    CHECK(tonemap_parse("agx", &op) == 0 && op == TONEMAP_AGX, "parse agx");
    CHECK(tonemap_parse("aces", &op) == 0 && op == TONEMAP_ACES, "parse aces");
    CHECK(tonemap_parse("clamp", &op) == 0 && op == TONEMAP_CLAMP, "parse clamp");
    CHECK(tonemap_parse("filmic", &op) != 0, "parse rejects filmic");
    CHECK(strcmp(tonemap_name(TONEMAP_AGX), "agx") == 0, "name");
    tonemap_settings s;
    tonemap_settings_init(&s);
    CHECK(tonemap_is_identity(&s), "default is the identity");
    /* the default equals the plain quantiser, byte for byte */
    enum { N = 4096 };
    float *rgb = malloc(sizeof(float) * 3 * N);
    unsigned char *b8 = malloc(3 * N);
    for (int i = 0; i < 3 * N; ++i) rgb[i] = (float)i / (3 * N) * 1.5f - 0.1f;
    tonemap_to_rgb8(&s, rgb, N, b8);
    int differ = 0;
    for (int i = 0; i < 3 * N; ++i) differ += b8[i] != image_quantize8(rgb[i]);
    CHECK(differ == 0, "clamp at 0 EV differs from image_quantize8 in %d bytes", differ);

    /* files: a PNG gets the curve, an EXR stays linear (no exposure either) */
    image img;
    CHECK(image_init(&img, 8, 4) == 0, "image_init");
    for (int i = 0; i < 8 * 4 * 3; ++i) img.rgb[i] = 0.05f * (float)(i % 24);
    s.op = TONEMAP_AGX;
    s.exposure = 1.0f;
    char dir[] = "/tmp/caustic_tonemapXXXXXX", png[256], exr[256], err[512];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(png, sizeof png, "%s/t.png", dir);
    snprintf(exr, sizeof exr, "%s/t.exr", dir);
    CHECK(tonemap_save(&img, png, &s, err, sizeof err) == 0, "save png: %s", err);
    CHECK(tonemap_save(&img, exr, &s, err, sizeof err) == 0, "save exr: %s", err);
    image back;
    if (image_load(&back, png, err, sizeof err) == 0) {
        float d[3];
        int worst = 0;
        for (int i = 0; i < 8 * 4; ++i) {
            tonemap_pixel(TONEMAP_AGX, 2.0f, img.rgb + 3 * i, d);
            for (int c = 0; c < 3; ++c) {
                int want = image_quantize8(d[c]);
                int got = (int)lrintf(image_srgb_encode(back.rgb[3 * i + c]) * 255.0f);
                worst = abs(want - got) > worst ? abs(want - got) : worst;
            }
        }
        CHECK(worst == 0, "PNG bytes differ from the tone map by %d codes", worst);
        image_free(&back);
    } else
        CHECK(0, "load png: %s", err);
    if (image_load(&back, exr, err, sizeof err) == 0) {
        double maxerr = 0;
        for (int i = 0; i < 8 * 4 * 3; ++i)
            maxerr = fmax(maxerr, fabs(back.rgb[i] - img.rgb[i]) / fmax(img.rgb[i], 1e-3));
        CHECK(maxerr < 1e-3, "EXR is not the linear image (relative error %g)", maxerr);
        image_free(&back);
    } else
        CHECK(0, "load exr: %s", err);
    unlink(png);
    unlink(exr);
    rmdir(dir);
    image_free(&img);
    free(rgb);
    free(b8);
}

int main(void) {
    check_monotone_bounded();
    check_clamp_and_exposure();
    check_aces();
    check_agx();
    check_host_module();
    return test_result("test_tonemap");
}
