/* AOVs on analytic scenes (CPU): the albedo of a diffuse plane is its colour, the normals of a
 * sphere are the analytic normals at the hits, a mirror shows the albedo and normal of the
 * surface it reflects, the depth of a plane at a known distance; the bidirectional integrators
 * give the same first-hit AOVs; samples and variance; the multi-layer EXR holds the named
 * channels with the AOVs' values; files beside a PFM; checkpoints keep the AOV planes and refuse
 * a render with other AOVs; a reset clears them. */
#include <string.h>
#include <unistd.h>

#include <tinyexr.h>

#include "api/api_internal.h"
#include "image/image.h"
#include "test_scenes.h"

#define ALL_AOVS (CAUSTIC_AOV_MASK(CAUSTIC_AOV_COUNT) - 1u)

static material mat(int kind, vec3 albedo) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.albedo_tex = -1;
    m.albedo = albedo;
    m.ior = 1.5f;
    return m;
}

static caustic_scene *wrap(scene *s) {
    caustic_scene *cs = NULL;
    char err[256];
    CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
    return cs;
}

static caustic_renderer *render(caustic_scene *cs, int w, int h, int spp, caustic_integrator integrator,
                                unsigned aovs) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = w;
    o.height = h;
    o.spp = spp;
    o.threads = 2;
    o.device = CAUSTIC_DEVICE_CPU;
    o.integrator = integrator;
    o.aovs = aovs;
    o.max_depth = 4;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (r) CHECK(caustic_render(r, NULL, NULL, err, sizeof err) == 0, "render: %s", err);
    return r;
}

/* A diffuse plane z = 0 of colour c seen head-on from (0, 0, dist): albedo, normal (0, 0, 1)
 * and the depth dist / cos(angle off the axis) in every pixel; with pt and bdpt. */
static void test_plane(void) {
    const vec3 c = v3(0.7f, 0.4f, 0.2f);
    const float dist = 3.0f, fovy = 30.0f;
    const int w = 33, h = 33;
    scene *s = scene_create();
    int m = scene_add_material(s, "colour", mat(MAT_DIFFUSE, c));
    scene_add_quad(s, v3(-50, -50, 0), v3(100, 0, 0), v3(0, 100, 0), m);
    scene_add_point_light(s, v3(0, 0, 2), v3s(1));
    s->camera.eye = v3(0, 0, dist);
    s->camera.lookat = v3(0, 0, 0);
    s->camera.fovy_deg = fovy;
    caustic_scene *cs = wrap(s);
    if (!cs) return;
    for (int integ = 0; integ < 2; ++integ) {
        caustic_integrator ig = integ ? CAUSTIC_INTEGRATOR_BDPT : CAUSTIC_INTEGRATOR_PT;
        caustic_renderer *r = render(cs, w, h, 8, ig, ALL_AOVS);
        if (!r) continue;
        int ch = 0;
        const float *alb = caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, &ch);
        CHECK(alb && ch == 3, "albedo AOV: %p, %d channels", (const void *)alb, ch);
        const float *nrm = caustic_aov_image(r, CAUSTIC_AOV_NORMAL, &ch);
        CHECK(nrm && ch == 3, "normal AOV");
        const float *dep = caustic_aov_image(r, CAUSTIC_AOV_DEPTH, &ch);
        CHECK(dep && ch == 1, "depth AOV");
        const float *smp = caustic_aov_image(r, CAUSTIC_AOV_SAMPLES, &ch);
        CHECK(smp && ch == 1, "samples AOV");
        const float *var = caustic_aov_image(r, CAUSTIC_AOV_VARIANCE, &ch);
        CHECK(var && ch == 1, "variance AOV");
        if (!alb || !nrm || !dep || !smp || !var) {
            caustic_renderer_free(r);
            continue;
        }
        double worst_a = 0, worst_n = 0, worst_d = 0;
        int bad_s = 0, bad_v = 0;
        float tan_half = tanf(fovy * (float)K_PI / 360.0f);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                int i = y * w + x;
                worst_a =
                    fmax(worst_a, fabs(alb[3 * i] - c.x) + fabs(alb[3 * i + 1] - c.y) + fabs(alb[3 * i + 2] - c.z));
                worst_n = fmax(worst_n, fabs(nrm[3 * i]) + fabs(nrm[3 * i + 1]) + fabs(nrm[3 * i + 2] - 1.0f));
                /* the pixel centre's ray; the jitter within the pixel changes the distance by
                 * far less than 1e-3 of it at this resolution */
                double sx = (2.0 * (x + 0.5) / w - 1.0) * tan_half, sy = (1.0 - 2.0 * (y + 0.5) / h) * tan_half;
                double expect = dist * sqrt(1.0 + sx * sx + sy * sy);
                worst_d = fmax(worst_d, fabs(dep[i] - expect) / expect);
                bad_s += smp[i] != 8.0f;
                bad_v += !(var[i] >= 0.0f) || !isfinite(var[i]);
            }
        CHECK(worst_a < 1e-5, "%s: plane albedo off its colour by %g", caustic_integrator_name(ig), worst_a);
        CHECK(worst_n < 1e-5, "%s: plane normal off (0,0,1) by %g", caustic_integrator_name(ig), worst_n);
        CHECK(worst_d < 2e-3, "%s: plane depth off by %g (relative)", caustic_integrator_name(ig), worst_d);
        CHECK(bad_s == 0, "%s: %d pixels without 8 samples", caustic_integrator_name(ig), bad_s);
        CHECK(bad_v == 0, "%s: %d pixels with a bad variance", caustic_integrator_name(ig), bad_v);
        /* the noise of a lit plane: some variance somewhere */
        double vsum = 0;
        for (int i = 0; i < w * h; ++i) vsum += var[i];
        CHECK(vsum > 0.0, "%s: variance is zero everywhere", caustic_integrator_name(ig));
        /* an AOV not asked for is not there */
        caustic_renderer_free(r);
    }
    caustic_renderer *r = render(cs, 8, 8, 2, CAUSTIC_INTEGRATOR_PT, CAUSTIC_AOV_MASK(CAUSTIC_AOV_DEPTH));
    if (r) {
        CHECK(caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL) == NULL, "albedo without asking for it");
        CHECK(caustic_aov_image(r, CAUSTIC_AOV_DEPTH, NULL) != NULL, "depth asked for");
        caustic_renderer_free(r);
    }
    caustic_scene_free(cs);
}

/* A sphere of radius 1 at the origin seen from (0, 0, 5): where the whole pixel sees the sphere,
 * the mean normal is the analytic normal at the pixel centre's hit (to the pixel's footprint);
 * where the ray misses, the normal is zero and the depth infinite. */
static void test_sphere_normals(void) {
    const int w = 48, h = 48;
    const float fovy = 30.0f, dist = 5.0f;
    scene *s = scene_create();
    int m = scene_add_material(s, "grey", mat(MAT_DIFFUSE, v3s(0.5f)));
    scene_add_sphere(s, xform_trs(v3(0, 0, 0), v3s(0), v3s(2)), m);
    scene_add_point_light(s, v3(0, 3, 3), v3s(5));
    s->camera.eye = v3(0, 0, dist);
    s->camera.lookat = v3(0, 0, 0);
    s->camera.fovy_deg = fovy;
    caustic_scene *cs = wrap(s);
    if (!cs) return;
    caustic_renderer *r = render(cs, w, h, 16, CAUSTIC_INTEGRATOR_PT,
                                 CAUSTIC_AOV_MASK(CAUSTIC_AOV_NORMAL) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_DEPTH));
    const float *nrm = r ? caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL) : NULL;
    const float *dep = r ? caustic_aov_image(r, CAUSTIC_AOV_DEPTH, NULL) : NULL;
    CHECK(nrm && dep, "normal and depth AOVs");
    if (nrm && dep) {
        float tan_half = tanf(fovy * (float)K_PI / 360.0f);
        int inside = 0, outside = 0;
        double worst = 0, worst_d = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                /* the rays through the pixel's centre and corners: inside where they all hit a
                 * smaller sphere (away from the limb, where normals turn fastest), outside where
                 * the centre misses a larger one (no part of the pixel sees the sphere) */
                int inner = 0, outer = 0;
                vec3 n0 = v3s(0);
                double t0 = 0;
                for (int k = 0; k < 5; ++k) {
                    double fx = k == 0 ? 0.5 : (k & 1), fy = k == 0 ? 0.5 : (k >> 1 & 1);
                    vec3 d = vnorm(v3((float)((2.0 * (x + fx) / w - 1.0) * tan_half),
                                      (float)((1.0 - 2.0 * (y + fy) / h) * tan_half), -1.0f));
                    vec3 o = v3(0, 0, dist);
                    float b = vdot(o, d), cc = vdot(o, o);
                    inner += b * b - (cc - 0.81f) > 0.0f;
                    if (k == 0) {
                        outer = b * b - (cc - 1.21f) > 0.0f;
                        if (b * b - (cc - 1.0f) > 0.0f) {
                            t0 = -b - sqrtf(b * b - (cc - 1.0f));
                            n0 = vnorm(vadd(o, vscale(d, (float)t0)));
                        }
                    }
                }
                int i = y * w + x;
                if (inner == 5) {
                    inside++;
                    worst = fmax(worst,
                                 fabs(nrm[3 * i] - n0.x) + fabs(nrm[3 * i + 1] - n0.y) + fabs(nrm[3 * i + 2] - n0.z));
                    worst_d = fmax(worst_d, fabs(dep[i] - t0));
                } else if (!outer) {
                    outside++;
                    CHECK(nrm[3 * i] == 0 && nrm[3 * i + 1] == 0 && nrm[3 * i + 2] == 0 && isinf(dep[i]),
                          "pixel (%d,%d) misses the sphere: normal (%g,%g,%g), depth %g", x, y, nrm[3 * i],
                          nrm[3 * i + 1], nrm[3 * i + 2], dep[i]);
                }
            }
        CHECK(inside > 200 && outside > 200, "%d pixels on, %d off the sphere", inside, outside);
        /* the mean over a pixel's footprint against the normal at its centre */
        CHECK(worst < 0.03, "sphere normals off the analytic ones by %g (sum over xyz)", worst);
        CHECK(worst_d < 0.01, "sphere depth off by %g", worst_d);
    }
    caustic_renderer_free(r);
    caustic_scene_free(cs);
}

/* A white mirror at z = -1 facing the camera at the origin; behind the camera a diffuse wall of
 * colour c at z = 3 facing it. The AOVs show the wall (its albedo, its normal (0, 0, -1)) and
 * the depth of the mirror (1 at the centre). */
static void test_mirror(void) {
    const vec3 c = v3(0.2f, 0.6f, 0.3f);
    scene *s = scene_create();
    int mirror = scene_add_material(s, "mirror", mat(MAT_MIRROR, v3s(1.0f)));
    int wall = scene_add_material(s, "wall", mat(MAT_DIFFUSE, c));
    scene_add_quad(s, v3(-20, -20, -1), v3(40, 0, 0), v3(0, 40, 0), mirror);
    scene_add_quad(s, v3(-100, -100, 3), v3(0, 200, 0), v3(200, 0, 0), wall);
    scene_add_point_light(s, v3(0, 0, 1), v3s(1));
    s->camera.eye = v3(0, 0, 0);
    s->camera.lookat = v3(0, 0, -1);
    s->camera.fovy_deg = 40;
    caustic_scene *cs = wrap(s);
    if (!cs) return;
    for (int integ = 0; integ < 2; ++integ) {
        caustic_integrator ig = integ ? CAUSTIC_INTEGRATOR_VCM : CAUSTIC_INTEGRATOR_PT;
        caustic_renderer *r = render(cs, 16, 16, 4, ig, ALL_AOVS);
        const float *alb = r ? caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL) : NULL;
        const float *nrm = r ? caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL) : NULL;
        const float *dep = r ? caustic_aov_image(r, CAUSTIC_AOV_DEPTH, NULL) : NULL;
        CHECK(alb && nrm && dep, "AOVs");
        if (alb && nrm && dep) {
            double worst_a = 0, worst_n = 0, dmin = 1e9;
            for (int i = 0; i < 16 * 16; ++i) {
                worst_a =
                    fmax(worst_a, fabs(alb[3 * i] - c.x) + fabs(alb[3 * i + 1] - c.y) + fabs(alb[3 * i + 2] - c.z));
                worst_n = fmax(worst_n, fabs(nrm[3 * i]) + fabs(nrm[3 * i + 1]) + fabs(nrm[3 * i + 2] + 1.0f));
                dmin = fmin(dmin, dep[i]);
            }
            CHECK(worst_a < 1e-5, "%s: albedo through the mirror off the wall's by %g", caustic_integrator_name(ig),
                  worst_a);
            CHECK(worst_n < 1e-5, "%s: normal through the mirror off the wall's by %g", caustic_integrator_name(ig),
                  worst_n);
            CHECK(dmin > 0.999 && dmin < 1.01, "%s: nearest depth %g, the mirror is at 1", caustic_integrator_name(ig),
                  dmin);
        }
        caustic_renderer_free(r);
    }
    caustic_scene_free(cs);
}

/* The EXR written with AOVs has the colour and every AOV's channels, holding its values. */
static void test_exr_layers(void) {
    scene *s = scene_create();
    int m = scene_add_material(s, "grey", mat(MAT_DIFFUSE, v3(0.3f, 0.5f, 0.7f)));
    scene_add_sphere(s, xform_trs(v3(0, 0, 0), v3s(0), v3s(2)), m);
    scene_add_point_light(s, v3(0, 3, 3), v3s(5));
    s->camera.eye = v3(0, 0, 4);
    s->camera.lookat = v3(0, 0, 0);
    s->camera.fovy_deg = 40;
    caustic_scene *cs = wrap(s);
    if (!cs) return;
    const int w = 20, h = 12;
    caustic_renderer *r = render(cs, w, h, 4, CAUSTIC_INTEGRATOR_PT, ALL_AOVS);
    char path[64], pfm[64], err[512];
    snprintf(path, sizeof path, "/tmp/test_aov_%d.exr", (int)getpid());
    snprintf(pfm, sizeof pfm, "/tmp/test_aov_%d.pfm", (int)getpid());
    CHECK(r && caustic_save_image(r, path, err, sizeof err) == 0, "save exr: %s", err);
    EXRVersion version;
    EXRHeader hdr;
    InitEXRHeader(&hdr);
    const char *xerr = NULL;
    int ok = ParseEXRVersionFromFile(&version, path) == TINYEXR_SUCCESS &&
             ParseEXRHeaderFromFile(&hdr, &version, path, &xerr) == TINYEXR_SUCCESS;
    CHECK(ok, "parse %s: %s", path, xerr ? xerr : "?");
    static const char *const want[] = {"B",       "G",        "R",        "albedo.B", "albedo.G",  "albedo.R",
                                       "depth.Z", "normal.X", "normal.Y", "normal.Z", "samples.Y", "variance.Y"};
    const int nwant = (int)(sizeof want / sizeof want[0]);
    if (ok) {
        CHECK(hdr.num_channels == nwant, "%d channels, expected %d", hdr.num_channels, nwant);
        for (int k = 0; k < nwant && k < hdr.num_channels; ++k)
            CHECK(!strcmp(hdr.channels[k].name, want[k]), "channel %d is '%s', expected '%s'", k, hdr.channels[k].name,
                  want[k]);
        for (int k = 0; k < hdr.num_channels; ++k)
            if (hdr.pixel_types[k] == TINYEXR_PIXELTYPE_HALF) hdr.requested_pixel_types[k] = TINYEXR_PIXELTYPE_FLOAT;
        EXRImage ex;
        InitEXRImage(&ex);
        int loaded = LoadEXRImageFromFile(&ex, &hdr, path, &xerr) == TINYEXR_SUCCESS;
        CHECK(loaded, "load %s: %s", path, xerr ? xerr : "?");
        if (loaded && r && hdr.num_channels == nwant) {
            const float *alb = caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL);
            const float *nrm = caustic_aov_image(r, CAUSTIC_AOV_NORMAL, NULL);
            const float *dep = caustic_aov_image(r, CAUSTIC_AOV_DEPTH, NULL);
            const float *smp = caustic_aov_image(r, CAUSTIC_AOV_SAMPLES, NULL);
            int same = 1;
            for (int i = 0; i < w * h; ++i) {
                const float *const *pl = (const float *const *)ex.images;
                same &= pl[5][i] == alb[3 * i] && pl[4][i] == alb[3 * i + 1] && pl[3][i] == alb[3 * i + 2];
                same &= pl[7][i] == nrm[3 * i] && pl[8][i] == nrm[3 * i + 1] && pl[9][i] == nrm[3 * i + 2];
                same &= (pl[6][i] == dep[i] || (isinf(pl[6][i]) && isinf(dep[i]))) && pl[10][i] == smp[i];
            }
            CHECK(same, "the EXR's AOV channels differ from caustic_aov_image");
        }
        if (loaded) FreeEXRImage(&ex);
        FreeEXRHeader(&hdr);
    }
    if (xerr) FreeEXRErrorMessage(xerr);
    unlink(path);
    /* one image per file: the AOVs asked for beside it */
    CHECK(r && caustic_save_aovs(r, pfm, CAUSTIC_AOV_MASK(CAUSTIC_AOV_ALBEDO) | CAUSTIC_AOV_MASK(CAUSTIC_AOV_DEPTH),
                                 err, sizeof err) == 0,
          "save aovs: %s", err);
    char name[96];
    snprintf(name, sizeof name, "/tmp/test_aov_%d.albedo.pfm", (int)getpid());
    image img;
    CHECK(image_load(&img, name, err, sizeof err) == 0, "load %s: %s", name, err);
    if (img.rgb && r) {
        const float *alb = caustic_aov_image(r, CAUSTIC_AOV_ALBEDO, NULL);
        CHECK(img.width == w && img.height == h && !memcmp(img.rgb, alb, sizeof(float) * 3 * w * h),
              "%s differs from the albedo AOV", name);
        image_free(&img);
    }
    unlink(name);
    snprintf(name, sizeof name, "/tmp/test_aov_%d.depth.pfm", (int)getpid());
    CHECK(access(name, F_OK) == 0, "%s missing", name);
    unlink(name);
    snprintf(name, sizeof name, "/tmp/test_aov_%d.normal.pfm", (int)getpid());
    CHECK(access(name, F_OK) != 0, "%s written without being asked for", name);
    unsigned mask = 0;
    CHECK(caustic_parse_aovs("albedo,normal,depth,samples,variance", &mask) == 0 && mask == ALL_AOVS, "parse all");
    CHECK(caustic_parse_aovs("albedo,colour", &mask) != 0, "an unknown AOV name is refused");
    CHECK(caustic_parse_aovs("albedo,", &mask) != 0, "an empty AOV name is refused");
    caustic_renderer_free(r);
    caustic_scene_free(cs);
}

/* A render resumed from a checkpoint has the AOVs of an uninterrupted one; a checkpoint with
 * AOV planes is refused by a renderer without them (and the other way round). */
static void test_checkpoint(void) {
    caustic_scene *cs = NULL;
    char err[512], path[64];
    snprintf(path, sizeof path, "/tmp/test_aov_%d.ckpt", (int)getpid());
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "cornell: %s", err);
    if (!cs) return;
    caustic_options o;
    caustic_options_init(&o);
    o.width = 24;
    o.height = 24;
    o.spp = 8;
    o.threads = 2;
    o.device = CAUSTIC_DEVICE_CPU;
    o.aovs = ALL_AOVS;
    caustic_renderer *full = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(full && caustic_render(full, NULL, NULL, err, sizeof err) == 0, "full: %s", err);
    o.spp = 4;
    caustic_renderer *half = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(half && caustic_render(half, NULL, NULL, err, sizeof err) == 0, "half: %s", err);
    CHECK(half && caustic_checkpoint_save(half, path, err, sizeof err) == 0, "save: %s", err);
    o.spp = 8;
    caustic_renderer *resumed = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(resumed && caustic_checkpoint_load(resumed, path, err, sizeof err) == 0, "load: %s", err);
    CHECK(resumed && caustic_render(resumed, NULL, NULL, err, sizeof err) == 0, "resume: %s", err);
    if (full && resumed) {
        for (int a = 0; a < CAUSTIC_AOV_COUNT; ++a) {
            int ch = 0;
            const float *x = caustic_aov_image(full, (caustic_aov)a, &ch);
            const float *y = caustic_aov_image(resumed, (caustic_aov)a, NULL);
            CHECK(x && y && !memcmp(x, y, sizeof(float) * (size_t)ch * 24 * 24), "%s differs after resuming",
                  caustic_aov_name((caustic_aov)a));
        }
    }
    /* a reset (the viewer's restart) clears the AOV planes with the image */
    CHECK(resumed && caustic_renderer_reset(resumed, err, sizeof err) == 0, "reset: %s", err);
    CHECK(resumed && caustic_render(resumed, NULL, NULL, err, sizeof err) == 0, "render after reset: %s", err);
    if (full && resumed) {
        const float *x = caustic_aov_image(full, CAUSTIC_AOV_ALBEDO, NULL);
        const float *y = caustic_aov_image(resumed, CAUSTIC_AOV_ALBEDO, NULL);
        CHECK(x && y && !memcmp(x, y, sizeof(float) * 3 * 24 * 24), "albedo differs after a reset");
    }
    o.aovs = CAUSTIC_AOV_MASK(CAUSTIC_AOV_SAMPLES); /* no AOV planes */
    caustic_renderer *other = caustic_renderer_create(cs, &o, err, sizeof err);
    err[0] = 0;
    CHECK(other && caustic_checkpoint_load(other, path, err, sizeof err) != 0 && strstr(err, "AOV"),
          "a checkpoint with AOV planes loaded without them: '%s'", err);
    caustic_renderer_free(other);
    caustic_renderer_free(full);
    caustic_renderer_free(half);
    caustic_renderer_free(resumed);
    caustic_scene_free(cs);
    unlink(path);
}

int main(void) {
    test_plane();
    test_sphere_normals();
    test_mirror();
    test_exr_layers();
    test_checkpoint();
    return test_result("test_aov");
}
