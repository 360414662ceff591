/* Whole-renderer tests: analytic scenes (white furnace, diffuse sphere under a uniform sky)
 * for every sampler, and bit-exact determinism across threads, schedules and resumes. */
#include <string.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "image/image.h"
#include "kernel/adaptive_depth.h"
#include "test_scenes.h"

static material mat(int kind, vec3 albedo, vec3 emission) {
    material m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.albedo_tex = -1;
    m.albedo = albedo;
    m.emission = emission;
    m.alpha = 0.1f;
    m.ior = 1.5f;
    return m;
}

static float g_clamp = 0.0f;     /* firefly clamp for render_mean */
static float g_adaptive = 0.0f;  /* adaptive sampling threshold for render_mean / render_image */
static int g_adaptive_depth = 0; /* --adaptive-depth for render_mean / render_image */
static int g_max_depth = 200;    /* render_mean's depth */

static double render_mean(caustic_scene *cs, int sampler, int spp, int w, int h, const float *mask_img,
                          float **img_out) {
    caustic_options o;
    caustic_options_init(&o);
    o.clamp = g_clamp;
    o.adaptive = g_adaptive;
    o.adaptive_depth = g_adaptive_depth;
    o.width = w;
    o.height = h;
    o.spp = spp;
    o.sampler = (caustic_sampler)sampler;
    o.threads = 2;
    o.max_depth = g_max_depth;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (!r) return -1;
    caustic_render(r, NULL, NULL, NULL, 0);
    const float *img = caustic_image(r, NULL, NULL);
    double sum = 0;
    long n = 0;
    for (int i = 0; i < w * h; ++i) {
        if (mask_img && mask_img[3 * i] == 0.0f) continue;
        sum += (img[3 * i] + img[3 * i + 1] + img[3 * i + 2]) / 3.0;
        n++;
    }
    if (img_out) {
        *img_out = malloc(sizeof(float) * 3 * w * h);
        memcpy(*img_out, img, sizeof(float) * 3 * w * h);
    }
    caustic_renderer_free(r);
    return n ? sum / n : 0.0;
}

/* Inside a closed sphere with albedo a and emission Le everywhere: L = Le / (1 - a). */
static void test_furnace(void) {
    const float a = 0.5f, le = 1.0f;
    scene *s = scene_create();
    int m = scene_add_material(s, "wall", mat(MAT_DIFFUSE, v3s(a), v3s(le)));
    add_inward_sphere(s, 1.0f, m);
    s->camera.eye = v3(0, 0, 0);
    s->camera.lookat = v3(0, 0, -1);
    s->camera.fovy_deg = 90;
    caustic_scene *cs;
    char err[256];
    CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
    for (int smp = 0; smp < 3; ++smp) {
        double mean = render_mean(cs, smp, 64, 32, 32, NULL, NULL);
        CHECK(fabs(mean - le / (1 - a)) < 0.01 * le / (1 - a), "furnace sampler %d: %g, expected %g", smp, mean,
              le / (1 - a));
    }
    /* the firefly clamp bounds every sample's luminance (so the mean too), and a clamp above
     * every sample changes nothing. (1.8: most samples lie within 1.5-2.5, about one in 10^4
     * below 1.5, so a clamp at 1.5 did not reliably lower the mean.) */
    g_clamp = 1.8f;
    float *img = NULL;
    double clamped = render_mean(cs, 2, 16, 32, 32, NULL, &img);
    double maxpix = 0;
    for (int i = 0; i < 32 * 32; ++i)
        maxpix = fmax(maxpix, 0.2126 * img[3 * i] + 0.7152 * img[3 * i + 1] + 0.0722 * img[3 * i + 2]);
    free(img);
    CHECK(maxpix <= 1.8 + 1e-4 && clamped < 1.8 && clamped > 1.0, "clamped furnace: mean %g, max pixel %g", clamped,
          maxpix);
    g_clamp = 1e6f;
    double loose = render_mean(cs, 2, 16, 32, 32, NULL, NULL);
    g_clamp = 0.0f;
    double none = render_mean(cs, 2, 16, 32, 32, NULL, NULL);
    /* (equal up to float summation order: on the GPU, pass boundaries depend on timing) */
    CHECK(fabs(loose - none) <= 1e-5 * none, "a clamp above every sample is a no-op (%g vs %g)", loose, none);
    caustic_scene_free(cs);
}

/* A convex diffuse sphere under a uniform sky Le sees only sky: L = a * Le on the sphere.
 * The sky is a constant colour, or (sampler 3..5) a uniform environment *map*, which must give
 * the same answer through the importance-sampled map path. */
static void test_sky_sphere(void) {
    const float a = 0.6f, le = 2.0f;
    for (int run = 0; run < 6; ++run) {
        int smp = run % 3;
        scene *s = scene_create();
        int m = scene_add_material(s, "grey", mat(MAT_DIFFUSE, v3s(a), v3s(0)));
        scene_add_sphere(s, xform_trs(v3(0, 0, 0), v3s(0), v3s(2)), m);
        s->env_radiance = v3s(le);
        if (run >= 3) {
            static float texels[16 * 8 * 3];
            for (int i = 0; i < 16 * 8 * 3; ++i) texels[i] = 0.5f;
            texture t;
            memset(&t, 0, sizeof t);
            t.kind = TEX_IMAGE;
            t.width = 16;
            t.height = 8;
            s->env_tex = scene_add_texture(s, t, texels);
            s->env_radiance = v3s(2.0f * le); /* scale * texel = le */
        }
        s->camera.eye = v3(0, 0, 3);
        s->camera.lookat = v3(0, 0, 0);
        s->camera.fovy_deg = 30; /* the sphere covers the centre of the image */
        caustic_scene *cs;
        char err[256];
        CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
        /* mask: pixels whose centre ray surely hits the sphere (inner 40%) */
        enum { W = 32 };
        static float mask[W * W * 3];
        for (int y = 0; y < W; ++y)
            for (int x = 0; x < W; ++x) {
                float dx = (x + 0.5f) / W - 0.5f, dy = (y + 0.5f) / W - 0.5f;
                mask[3 * (y * W + x)] = dx * dx + dy * dy < 0.2f * 0.2f ? 1.0f : 0.0f;
            }
        double mean = render_mean(cs, smp, 128, W, W, mask, NULL);
        CHECK(fabs(mean - a * le) < 0.01 * a * le, "sky sphere sampler %d (map %d): %g, expected %g", smp, run >= 3,
              mean, a * le);
        caustic_scene_free(cs);
    }
}

/* A small scene with every primitive and material kind. */
static caustic_scene *mixed_scene(void) {
    scene *s = scene_create();
    int white = scene_add_material(s, "white", mat(MAT_DIFFUSE, v3s(0.8f), v3s(0)));
    int red = scene_add_material(s, "red", mat(MAT_DIFFUSE, v3(0.8f, 0.2f, 0.2f), v3s(0)));
    int glass = scene_add_material(s, "glass", mat(MAT_DIELECTRIC, v3s(1), v3s(0)));
    int metal = scene_add_material(s, "metal", mat(MAT_CONDUCTOR, v3(0.9f, 0.7f, 0.4f), v3s(0)));
    int mirror = scene_add_material(s, "mirror", mat(MAT_MIRROR, v3s(0.9f), v3s(0)));
    int light = scene_add_material(s, "light", mat(MAT_EMITTER, v3s(0), v3s(8)));
    scene_add_cube(s, xform_trs(v3(0, -1, 0), v3s(0), v3(6, 0.1f, 6)), white);
    scene_add_cube(s, xform_trs(v3(-1.2f, 0, 0), v3(0, 30, 0), v3s(0.8f)), red);
    scene_add_sphere(s, xform_trs(v3(0.3f, -0.3f, 0.5f), v3s(0), v3s(1)), glass);
    scene_add_sphere(s, xform_trs(v3(1.4f, -0.2f, -0.5f), v3s(0), v3(1, 1.4f, 1)), metal);
    scene_add_quad(s, v3(-3, -1, -2), v3(6, 0, 0), v3(0, 4, 0), mirror);
    scene_add_quad(s, v3(-0.5f, 2.5f, -0.5f), v3(1, 0, 0), v3(0, 0, 1), light);
    s->env_radiance = v3(0.1f, 0.12f, 0.2f);
    s->camera.eye = v3(0, 1, 5);
    s->camera.lookat = v3(0, 0, 0);
    s->camera.fovy_deg = 50;
    caustic_scene *cs;
    char err[256];
    if (api_scene_wrap(&cs, s, err, sizeof err)) {
        CHECK(0, "wrap: %s", err);
        return NULL;
    }
    return cs;
}

static int stop_now(void *user, const caustic_progress *p) {
    (void)user;
    (void)p;
    return 1;
}

/* interrupt: stop after the first pass and write a checkpoint; resume_from: continue one. */
/* The checkpoint of the interrupted render: one name per process, since ctest runs this binary
 * once per ISA level in the same directory, in parallel (a shared name let one copy resume from
 * another's checkpoint, or find it removed). */
static char ckpt_path[64];

static float *render_image_ex(caustic_scene *cs, int threads, int schedule, int sampler, int spp,
                              const char *resume_from, int interrupt) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 61;
    o.height = 37;
    o.spp = spp;
    o.threads = threads;
    o.schedule = (caustic_schedule)schedule;
    o.sampler = (caustic_sampler)sampler;
    o.seed = 42;
    o.max_depth = 8;
    o.device = CAUSTIC_DEVICE_CPU; /* bit-exactness is a CPU promise (the GPU sums in float) */
    o.adaptive = g_adaptive;
    o.adaptive_depth = g_adaptive_depth;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    if (!r) return NULL;
    if (resume_from) CHECK(caustic_checkpoint_load(r, resume_from, err, sizeof err) == 0, "resume: %s", err);
    caustic_render(r, interrupt ? stop_now : NULL, NULL, NULL, 0);
    float *img = malloc(sizeof(float) * 3 * 61 * 37);
    memcpy(img, caustic_image(r, NULL, NULL), sizeof(float) * 3 * 61 * 37);
    if (interrupt) {
        caustic_render_stats st;
        caustic_render_stats_get(r, &st);
        CHECK(st.spp < spp, "interrupted render stopped early (%d spp)", st.spp);
        CHECK(caustic_checkpoint_save(r, ckpt_path, err, sizeof err) == 0, "checkpoint: %s", err);
    }
    caustic_renderer_free(r);
    return img;
}

static float *render_image(caustic_scene *cs, int threads, int schedule, int sampler, int spp,
                           const char *resume_from) {
    return render_image_ex(cs, threads, schedule, sampler, spp, resume_from, 0);
}

static void test_determinism(void) {
    caustic_scene *cs = mixed_scene();
    if (!cs) return;
    snprintf(ckpt_path, sizeof ckpt_path, "test_render_%ld.ckpt", (long)getpid());
    const size_t bytes = sizeof(float) * 3 * 61 * 37;
    for (int smp = 0; smp < 3; ++smp) {
        float *ref = render_image(cs, 1, CAUSTIC_SCHEDULE_TILES, smp, 6, NULL);
        for (int threads = 1; threads <= 3; ++threads)
            for (int sc = 0; sc < 4; ++sc) {
                float *img = render_image(cs, threads, sc, smp, 6, NULL);
                CHECK(img && memcmp(ref, img, bytes) == 0, "sampler %d, %d threads, schedule %d differs", smp, threads,
                      sc);
                free(img);
            }
        /* interrupted after one pass, checkpointed, resumed: identical to an uninterrupted render */
        free(render_image_ex(cs, 2, 0, smp, 6, NULL, 1));
        float *resumed = render_image(cs, 2, 0, smp, 6, ckpt_path);
        CHECK(resumed && memcmp(ref, resumed, bytes) == 0, "sampler %d: resumed render differs", smp);
        free(resumed);
        /* and the image is not trivially constant */
        double mn = 1e30, mx = -1e30;
        for (int i = 0; i < 3 * 61 * 37; ++i) {
            mn = fmin(mn, ref[i]);
            mx = fmax(mx, ref[i]);
        }
        CHECK(mx > mn + 0.1, "image has content");
        free(ref);
    }
    remove(ckpt_path);
    caustic_scene_free(cs);
}

/* Adaptive sampling: where each pixel stops depends only on its own samples, so images stay
 * bit-identical across threads, schedules and resumes; pixels really stop early; the furnace
 * stays unbiased within 1 %. */
static void test_adaptive(void) {
    g_adaptive = 0.2f;
    test_determinism();
    caustic_scene *cs = mixed_scene();
    caustic_options o;
    caustic_options_init(&o);
    o.width = 61;
    o.height = 37;
    o.spp = 256;
    o.adaptive = 0.2f;
    o.device = CAUSTIC_DEVICE_CPU;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    caustic_render(r, NULL, NULL, NULL, 0);
    caustic_render_stats st;
    caustic_render_stats_get(r, &st);
    const uint32_t *count = caustic_sample_counts(r, NULL, NULL);
    uint64_t sum = 0;
    uint32_t mn = UINT32_MAX, mx = 0;
    for (int i = 0; i < 61 * 37; ++i) {
        sum += count[i];
        mn = count[i] < mn ? count[i] : mn;
        mx = count[i] > mx ? count[i] : mx;
    }
    CHECK(sum == st.samples, "stats count the samples taken (%llu vs %llu)", (unsigned long long)sum,
          (unsigned long long)st.samples);
    CHECK(mn >= 16 && mx == 256 && sum < (uint64_t)256 * 61 * 37 * 3 / 4, "adaptive: %u..%u spp, %llu samples", mn, mx,
          (unsigned long long)sum);
    caustic_renderer_free(r);
    caustic_scene_free(cs);
    test_furnace(); /* with g_adaptive set: the furnace must still be right within 1 % */
    g_adaptive = 0.0f;
}

/* --adaptive-depth: the depth schedule; the weights count each band once per sample; in the
 * furnace (albedo a, emission Le: the image at depth d is Le (1 - a^(d+1)) / (1 - a)) the image
 * at the spp target is unbiased for the deepest depth the schedule reaches, where unweighted
 * truncated samples would be 7 % darker; images stay bit-identical across threads, schedules
 * and resumes; the option is refused where it does not apply. */
static void test_adaptive_depth(void) {
    static const int limit[16] = {4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 8};
    for (uint32_t i = 0; i < 16; ++i)
        CHECK(adaptive_depth_limit(i, 4, 100) == limit[i], "sample %u: depth limit %d, expected %d", i,
              adaptive_depth_limit(i, 4, 100), limit[i]);
    CHECK(adaptive_depth_limit(1000, 4, 8) == 8 && adaptive_depth_limit(0, 4, 3) == 3 &&
              adaptive_depth_limit(0, 0, 9) == 9 && adaptive_depth_limit(0xffffffffu, 4, 1000) == 35,
          "depth limits are capped by the maximum depth; start 0 is off");
    static const uint32_t spps[] = {1, 2, 7, 16, 100, 1000};
    for (int k = 0; k < 6; ++k)
        for (int band = 0; band <= 20; ++band) {
            uint32_t reach = 0;
            for (uint32_t i = 0; i < spps[k]; ++i) reach += adaptive_depth_limit(i, 4, 20) >= band;
            double total = reach * (double)adaptive_depth_weight(band, 4, spps[k]);
            CHECK(reach == 0 || fabs(total - spps[k]) < 1e-5 * spps[k], "spp %u, band %d: %u samples x weight = %g",
                  spps[k], band, reach, total);
        }

    const float a = 0.8f, le = 1.0f;
    scene *s = scene_create();
    int m = scene_add_material(s, "wall", mat(MAT_DIFFUSE, v3s(a), v3s(le)));
    add_inward_sphere(s, 1.0f, m);
    s->camera.eye = v3(0, 0, 0);
    s->camera.lookat = v3(0, 0, -1);
    s->camera.fovy_deg = 90;
    caustic_scene *cs;
    char err[256];
    CHECK(api_scene_wrap(&cs, s, err, sizeof err) == 0, "wrap: %s", err);
    double at8 = le * (1 - pow(a, 9)) / (1 - a), truncated = 0;
    for (uint32_t i = 0; i < 16; ++i) truncated += le * (1 - pow(a, limit[i] + 1)) / (1 - a) / 16;
    g_adaptive_depth = 1;
    for (int maxd = 8; maxd <= 20; maxd += 12) { /* 16 spp reach depth 8 in both */
        g_max_depth = maxd;
        double mean = render_mean(cs, 2, 16, 32, 32, NULL, NULL);
        CHECK(fabs(mean - at8) < 0.01 * at8, "adaptive depth, max %d, 16 spp: %g, expected %g (truncated: %g)", maxd,
              mean, at8, truncated);
    }
    g_adaptive_depth = 0;
    g_max_depth = 8;
    double plain = render_mean(cs, 2, 16, 32, 32, NULL, NULL);
    CHECK(fabs(plain - at8) < 0.01 * at8, "furnace at depth 8: %g, expected %g", plain, at8);
    g_max_depth = 200;
    caustic_scene_free(cs);

    g_adaptive_depth = 1;
    test_determinism();
    g_adaptive_depth = 0;

    cs = mixed_scene();
    caustic_options o;
    caustic_options_init(&o);
    o.width = 8;
    o.height = 8;
    o.adaptive_depth = 1;
    o.adaptive = 0.1f;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(!r && strstr(err, "--adaptive-depth"), "--adaptive-depth with --adaptive refused: %s", r ? "created" : err);
    caustic_renderer_free(r);
    o.adaptive = 0.0f;
    o.integrator = CAUSTIC_INTEGRATOR_BDPT;
    r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(!r && strstr(err, "--adaptive-depth"), "--adaptive-depth with bdpt refused: %s", r ? "created" : err);
    caustic_renderer_free(r);
    caustic_scene_free(cs);
}

/* Different seeds give different (independent) images; the same seed the same. */
static void test_seed(void) {
    caustic_scene *cs = mixed_scene();
    float *a = render_image(cs, 2, 0, 2, 2, NULL);
    caustic_options o;
    caustic_options_init(&o);
    o.width = 61;
    o.height = 37;
    o.spp = 2;
    o.seed = 43;
    o.max_depth = 8;
    char err[256];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    caustic_render(r, NULL, NULL, NULL, 0);
    CHECK(memcmp(a, caustic_image(r, NULL, NULL), sizeof(float) * 3 * 61 * 37) != 0, "seed changes the image");
    caustic_renderer_free(r);
    free(a);
    caustic_scene_free(cs);
}

/* Bump maps (MAP_BUMP, kernel/intersect.h): a plane (a quad) and a triangle-mesh plane under a
 * light, rendered flat, with a constant height map and with a height map of stripes. A constant
 * map must render bit for bit as flat (its gradient is 0), the stripes must not; and the
 * stripes' relief must show on both primitive kinds. */
static float *render_bump_scene(const char *dir, const char *tag, const char *mat_extra, const char *obj) {
    char path[512], json[2048];
    snprintf(path, sizeof path, "%s/bump_%s.json", dir, tag);
    snprintf(json, sizeof json,
             "{\"Materials\":{\"light\":{\"TYPE\":\"Emitter\",\"RGB\":[1,1,1],\"EMITTANCE\":5},"
             "\"floor\":{\"TYPE\":\"Diffuse\",\"RGB\":[0.8,0.8,0.8]%s}},"
             "\"Camera\":{\"RES\":[32,32],\"FOVY\":40,\"EYE\":[0,3,0.01],\"LOOKAT\":[0,0,0],\"ITERATIONS\":8,"
             "\"DEPTH\":3},\"Objects\":[%s,"
             "{\"TYPE\":\"quad\",\"MATERIAL\":\"light\",\"ORIGIN\":[2,2,-1],\"U\":[0,0,2],\"V\":[0,1,0]}]}",
             mat_extra, obj);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return NULL;
    fputs(json, f);
    fclose(f);
    caustic_scene *cs = NULL;
    char err[512] = "";
    CHECK(caustic_scene_load(&cs, path, err, sizeof err) == 0, "%s: %s", tag, err);
    if (!cs) return NULL;
    float *img = NULL;
    render_mean(cs, CAUSTIC_SAMPLER_SOBOL, 8, 32, 32, NULL, &img);
    caustic_scene_free(cs);
    return img;
}

static void test_bump_maps(void) {
    char dir[] = "/tmp/caustic_test_bump_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    /* height maps: 16x16, stripes along u (a sine), and a constant grey */
    image img;
    char err[512] = "", path[600];
    for (int which = 0; which < 2; ++which) {
        CHECK(image_init(&img, 16, 16) == 0, "image_init");
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 16; ++x)
                for (int c = 0; c < 3; ++c)
                    img.rgb[3 * (y * 16 + x) + c] = which ? 0.5f : 0.5f + 0.5f * sinf(6.2831853f * (float)x / 8.0f);
        snprintf(path, sizeof path, "%s/%s.pfm", dir, which ? "flat" : "stripes");
        CHECK(image_save(&img, path, 0, err, sizeof err) == 0, "save %s: %s", path, err);
        image_free(&img);
    }
    static const char *const objs[2] = {
        "{\"TYPE\":\"quad\",\"MATERIAL\":\"floor\",\"ORIGIN\":[-1,0,1],\"U\":[2,0,0],\"V\":[0,0,-2]}",
        "{\"TYPE\":\"mesh\",\"MATERIAL\":\"floor\",\"VERTICES\":[[-1,0,1],[1,0,1],[1,0,-1],[-1,0,-1]],"
        "\"UVS\":[[0,0],[1,0],[1,1],[0,1]],\"INDICES\":[[0,1,2,3]]}"};
    for (int o = 0; o < 2; ++o) {
        const char *kind = o ? "mesh" : "quad";
        char tag[64];
        snprintf(tag, sizeof tag, "%s_flat", kind);
        float *flat = render_bump_scene(dir, tag, "", objs[o]);
        snprintf(tag, sizeof tag, "%s_const", kind);
        float *cst = render_bump_scene(dir, tag, ",\"BUMP_MAP\":\"flat.pfm\",\"BUMP_SCALE\":0.2", objs[o]);
        snprintf(tag, sizeof tag, "%s_stripes", kind);
        float *str = render_bump_scene(dir, tag, ",\"BUMP_MAP\":\"stripes.pfm\",\"BUMP_SCALE\":0.2", objs[o]);
        if (flat && cst && str) {
            CHECK(memcmp(flat, cst, sizeof(float) * 3 * 32 * 32) == 0, "%s: a constant height map changed the image",
                  kind);
            double diff = 0.0, sum = 0.0;
            for (int i = 0; i < 3 * 32 * 32; ++i) {
                diff += fabs((double)str[i] - (double)flat[i]);
                sum += flat[i];
            }
            CHECK(diff > 0.05 * sum, "%s: the bump map changed the image by only %g of %g", kind, diff, sum);
        }
        free(flat);
        free(cst);
        free(str);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

/* True instancing (docs/scene-format.md, "Instancing"): an inline mesh (an octahedron with
 * smooth normals) placed by INSTANCES under rotations, non-uniform scales, a mirror (MATRIX) and a
 * material override renders as the same scene flattened (CAUSTIC_INSTANCES=flatten: the triangles
 * copied under each placement, one BVH level) up to float rounding: the same sampler and seed give
 * the same paths wherever the two traversals agree, so the images differ only where a path's hits
 * round differently. Returns the relative RMSE (tests/README: the figure shown to fail with a
 * wrong normal transform). */
static double test_instances(void) {
    char dir[] = "/tmp/caustic_test_inst_XXXXXX", path[512];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/instances.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return -1.0;
    fputs("{\"Materials\":{\"light\":{\"TYPE\":\"Emitter\",\"RGB\":[1,1,1],\"EMITTANCE\":6},"
          "\"floor\":{\"TYPE\":\"Diffuse\",\"RGB\":[0.8,0.8,0.8]},"
          "\"gem\":{\"TYPE\":\"Diffuse\",\"RGB\":[0.9,0.6,0.3]},"
          "\"blue\":{\"TYPE\":\"Specular\",\"RGB\":[0.3,0.4,0.9],\"ROUGHNESS\":0.4}},"
          "\"Camera\":{\"RES\":[61,37],\"FOVY\":40,\"EYE\":[0,3,7],\"LOOKAT\":[0,0.8,0],\"ITERATIONS\":8,"
          "\"DEPTH\":4},\"Objects\":["
          "{\"TYPE\":\"plane\",\"MATERIAL\":\"floor\",\"ROTAT\":[-90,0,0],\"SCALE\":[20,20,1]},"
          "{\"TYPE\":\"quad\",\"MATERIAL\":\"light\",\"ORIGIN\":[-1,5,-1],\"U\":[2,0,0],\"V\":[0,0,2]},"
          "{\"TYPE\":\"mesh\",\"MATERIAL\":\"gem\",\"VERTICES\":[1,0,0,-1,0,0,0,1,0,0,-1,0,0,0,1,0,0,-1],"
          "\"NORMALS\":[1,0,0,-1,0,0,0,1,0,0,-1,0,0,0,1,0,0,-1],"
          "\"INDICES\":[0,2,4,2,1,4,1,3,4,3,0,4,2,0,5,1,2,5,3,1,5,0,3,5],\"SCALE\":[1,1.5,1],"
          "\"INSTANCES\":[{\"TRANS\":[-2,1,0],\"ROTAT\":[20,30,40],\"SCALE\":[0.5,1,0.7]},"
          "{\"TRANS\":[0,1,0.5],\"ROTAT\":[0,70,0],\"SCALE\":[1.2,0.6,0.4],\"MATERIAL\":\"blue\"},"
          "{\"TRANS\":[2,1.2,-0.5],\"ROTAT\":[-35,10,80],\"SCALE\":[0.8,0.8,0.3],"
          "\"MATRIX\":[-1,0,0,4, 0,1,0,0, 0,0,1,0, 0,0,0,1]},"
          "{\"TRANS\":[0,2.5,-1.5],\"ROTAT\":[90,0,0],\"SCALE\":[0.6,0.6,0.6]}]}]}",
          f);
    fclose(f);
    caustic_scene *ci = NULL, *cf = NULL;
    char err[512] = "";
    CHECK(caustic_scene_load(&ci, path, err, sizeof err) == 0, "instanced: %s", err);
    setenv("CAUSTIC_INSTANCES", "flatten", 1);
    CHECK(caustic_scene_load(&cf, path, err, sizeof err) == 0, "flattened: %s", err);
    unsetenv("CAUSTIC_INSTANCES");
    double rel = -1.0;
    if (ci && cf) {
        caustic_scene_stats si, sf;
        caustic_scene_stats_get(ci, &si);
        caustic_scene_stats_get(cf, &sf);
        CHECK(si.instances == 5 && si.triangles == 8 && si.placed_primitives == 2 + 4 * 8,
              "instanced: %zu instances, %zu triangles held, %zu placed", si.instances, si.triangles,
              si.placed_primitives);
        CHECK(sf.instances == 0 && sf.triangles == 4 * 8, "flattened: %zu instances, %zu triangles", sf.instances,
              sf.triangles);
        float *a = render_image(ci, 2, CAUSTIC_SCHEDULE_TILES, CAUSTIC_SAMPLER_SOBOL, 32, NULL);
        float *b = render_image(cf, 2, CAUSTIC_SCHEDULE_TILES, CAUSTIC_SAMPLER_SOBOL, 32, NULL);
        CHECK(a && b, "renders");
        if (a && b) {
            const size_t n = 3 * 61 * 37;
            double sa = 0, sb = 0, se = 0;
            size_t off = 0;
            for (size_t i = 0; i < n; ++i) {
                sa += a[i];
                sb += b[i];
                se += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
                off += fabs((double)a[i] - b[i]) > 1e-3 * (1.0 + fabs((double)b[i]));
            }
            rel = sqrt(se / (double)n) / (sb / (double)n);
            printf(
                "instances: mean %.6f instanced, %.6f flattened; relative RMSE %.3e; %zu of %zu values off by > 1e-3\n",
                sa / (double)n, sb / (double)n, rel, off, n);
            CHECK(fabs(sa - sb) <= 2e-3 * sb, "means %.6f and %.6f", sa / (double)n, sb / (double)n);
            CHECK(rel < 0.01 && off <= n / 100, "relative RMSE %.3e, %zu values off", rel, off);
        }
        free(a);
        free(b);
    }
    caustic_scene_free(ci);
    caustic_scene_free(cf);
    unlink(path);
    rmdir(dir);
    return rel;
}

int main(void) {
    test_instances();
    test_bump_maps();
    test_furnace();
    test_sky_sphere();
    test_determinism();
    test_seed();
    test_adaptive();
    test_adaptive_depth();
    return test_result("test_render");
}
