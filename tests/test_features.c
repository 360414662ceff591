/* Megakernels by scene features (kernel/features.h): for each scene, the variant the GPU would
 * pick must cover every feature the scene uses. Checked by rendering: the shared kernel compiled
 * with that variant's features (features_variant.c, on the CPU) must give exactly the full
 * kernel's image, so a feature that kscene_features leaves out (and the variant then cannot
 * render) fails here; and the smallest variant must not give it for scenes that need more, which
 * shows that the comparison can fail. */
#include <stdlib.h>
#include <string.h>

#include "features_variant.h"
#include "kernel/bidir_limits.h"
#include "kernel/kernel.h"
#include "scene/scene.h"
#include "import/import.h"
#include "testing.h"

#define RES 24
#define SPP 4

typedef void (*render_fn)(const kscene *s, const kpass *p, double *rgb);
#define FEATURES_RENDER_ROW(NAME, name, features) features_render_##NAME,
static const render_fn render_variant[KV_COUNT] = {KERNEL_VARIANTS(FEATURES_RENDER_ROW)};

/* Loads a built-in name or a file (relative to the source tree); NULL (skipped) if a file's
 * assets are missing. */
static scene *load(const char *name, const char *root) {
    scene *s = NULL;
    char err[512], path[1024];
    int rc;
    if (strchr(name, '.')) {
        snprintf(path, sizeof path, "%s/%s", root, name);
        rc = scene_load_file(&s, path, NULL, err, sizeof err);
        if (rc) {
            printf("%s: skipped (%s)\n", name, err);
            return NULL;
        }
    } else {
        rc = scene_load_builtin(&s, name, err, sizeof err);
        CHECK(rc == 0, "%s: %s", name, err);
        if (rc) return NULL;
    }
    rc = scene_prepare(s, BVH_WIDTH, err, sizeof err);
    CHECK(rc == 0, "%s: prepare: %s", name, err);
    if (rc) {
        scene_destroy(s);
        return NULL;
    }
    return s;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    /* the selection itself: the full set needs the full kernel, every variant covers itself, and
     * a feature outside every smaller set (glass, a texture with a mirror, a point light, ...) moves a
     * scene up */
    CHECK(kernel_variant_for(KF_ALL) == KV_FULL, "all features: %s", kernel_variant_name(kernel_variant_for(KF_ALL)));
    CHECK(kernel_variant_for(KF_SURFACES) == KV_ALL, "the surface features before KF_FULL_ONLY: %s",
          kernel_variant_name(kernel_variant_for(KF_SURFACES)));
    for (int v = 0; v < KV_COUNT; ++v)
        CHECK(kernel_variant_for(kernel_variant_features(v)) == v, "variant %s", kernel_variant_name(v));
    CHECK(kernel_variant_for(KF_DIFFUSE | KF_PRIM(PRIM_SPHERE)) == KV_OPAQUE, "a sphere");
    CHECK(kernel_variant_for(KF_DIFFUSE | KF_TEXTURES) == KV_TEXTURED, "a texture");
    CHECK(kernel_variant_for(KF_DIFFUSE | KF_TEXTURES | KF_BUMP) == KV_TEXTURED, "a bump map (Sponza)");
    CHECK(kernel_variant_for(KF_DIFFUSE | KF_TEXTURES | KF_MAT(MAT_MIRROR)) == KV_ALL, "a texture and a mirror");
    const uint32_t extra[] = {KF_MAT(MAT_DIELECTRIC), KF_MAT(MAT_PBR), KF_TEXTURES,
                              KF_LIGHT(LIGHT_POINT),  KF_ENV_MAP,      KF_CUTOUTS};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; ++i)
        CHECK(kernel_variant_for(KF_OPAQUE | extra[i]) == KV_ALL, "opaque + feature 0x%x", extra[i]);
    /* the layered and thin kinds, complex IORs, the light tree, procedural textures and bump maps:
     * the full kernel only, from the opaque and "all" sets (the textured one has bump maps) */
    const uint32_t full_only[] = {KF_MAT(MAT_COATED),
                                  KF_MAT(MAT_THIN_DIELECTRIC),
                                  KF_MAT(MAT_DIFFUSE_TRANSMISSION),
                                  KF_MAT(MAT_INTERFACE),
                                  KF_COMPLEX_IOR,
                                  KF_LIGHT_TREE,
                                  KF_PROCEDURAL,
                                  KF_BUMP};
    for (size_t i = 0; i < sizeof full_only / sizeof full_only[0]; ++i) {
        CHECK((KF_FULL_ONLY & full_only[i]) != 0u, "0x%x is in KF_FULL_ONLY", full_only[i]);
        CHECK(kernel_variant_for(KF_OPAQUE | full_only[i]) == KV_FULL, "opaque + feature 0x%x", full_only[i]);
        CHECK(kernel_variant_for(KF_SURFACES | full_only[i]) == KV_FULL, "all + feature 0x%x", full_only[i]);
    }

    /* media: only the media variant has them (KF_ALL leaves KF_MEDIA out), and the bidirectional
     * integrators refuse them by their table (kernel/bidir_limits.h) */
    CHECK((KF_ALL & KF_MEDIA) == 0u, "KF_MEDIA is outside KF_ALL");
    CHECK(kernel_variant_for(KF_DIFFUSE | KF_MEDIA) == KV_MEDIA, "a diffuse scene with a medium: %s",
          kernel_variant_name(kernel_variant_for(KF_DIFFUSE | KF_MEDIA)));
    {
        camera cam;
        memset(&cam, 0, sizeof cam);
        bidir_request q = bidir_request_of(&cam, KF_DIFFUSE);
        CHECK(bidir_refusal(&q) == NULL, "a diffuse scene is refused: %s", bidir_refusal(&q));
        q.features |= KF_MEDIA;
        const char *why = bidir_refusal(&q);
        CHECK(why && strstr(why, "media"), "a scene with media: %s", why ? why : "not refused");
        q.features = 0u;
        q.clamp = 1.0f;
        why = bidir_refusal(&q);
        CHECK(why && strstr(why, "clamp"), "the clamp: %s", why ? why : "not refused");
    }

    /* scenes: the variant each picks renders it exactly as the full kernel */
    const char *names[] = {"cornell", "cornell-glass", "rtow", "smallvcm0", "smallvcm1", "smallvcm2", "smallvcm3",
                           "scenes/cornell.json", "scenes/cornell-water.json", "scenes/checker-quads.json",
                           "scenes/sky-sphere.json", "scenes/cornell-mesh.json", "scenes/sponza.json",
                           "tools/mitsuba/dragon_diffuse.json",
                           /* the full kernel's features: coated kinds and named metals (complex
                            * IOR), a procedural texture, a light tree (72 emitting triangles), a
                            * bump-mapped sphere */
                           "tests/data/materials/coated_box.json", "tests/data/materials/marble_box.json",
                           "tests/data/materials/many_lights.json", "tests/data/materials/bump_sphere.json"};
    int picked[KV_COUNT] = {0}, caught = 0;
    double *full = malloc(RES * RES * 3 * sizeof(double)), *img = malloc(RES * RES * 3 * sizeof(double));
    const size_t bytes = RES * RES * 3 * sizeof(double);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; ++n) {
        scene *s = load(names[n], root);
        if (!s) continue;
        const kscene *k = &s->k;
        uint32_t f = kscene_features(k);
        int v = kernel_variant_for(f);
        CHECK((f & ~kernel_variant_features(v)) == 0, "%s: features 0x%x, variant %s lacks 0x%x", names[n], f,
              kernel_variant_name(v), f & ~kernel_variant_features(v));
        picked[v]++;
        kpass p;
        memset(&p, 0, sizeof p);
        char err[256];
        CHECK(scene_camera(s, RES, RES, &p.cam, err, sizeof err) == 0, "%s: camera: %s", names[n], err);
        p.sampler = SAMPLER_SOBOL;
        p.seed = 7;
        p.spp_total = SPP;
        p.max_depth = 8;
        p.rr_depth = KPASS_RR_DEPTH;
        p.sample_end = SPP;
        render_variant[KV_FULL](k, &p, full);
        render_variant[v](k, &p, img);
        CHECK(memcmp(full, img, bytes) == 0, "%s picks the %s kernel, which renders it differently", names[n],
              kernel_variant_name(v));
        /* the media seam (kernel/medium.h) compiled in changes no surface image: its slot, segment
         * step, transmittance and sample block leave a scene without media as it was */
        render_variant[KV_MEDIA](k, &p, img);
        CHECK(memcmp(full, img, bytes) == 0, "%s: the kernel with the media seam (KERNEL_MEDIA) renders it differently",
              names[n]);
        /* each feature of KF_FULL_ONLY is needed: a scene that takes the full kernel would pick a
         * smaller one without them, which must render it differently (a light tree's picks, the
         * layered kinds, the noise, a bump map) */
        if (v == KV_FULL) {
            int w = kernel_variant_for(f & ~KF_FULL_ONLY);
            render_variant[w](k, &p, img);
            CHECK(w != v && memcmp(full, img, bytes) != 0, "%s: the %s kernel, without features 0x%x, renders it alike",
                  names[n], kernel_variant_name(w), f & KF_FULL_ONLY);
        }
        /* the smallest kernel on a scene that needs more must not pass for the full one */
        int differs = -1;
        if (v != 0) {
            render_variant[0](k, &p, img);
            differs = memcmp(full, img, bytes) != 0;
            caught += differs;
        }
        printf("%-34s features 0x%05x -> %-7s (%s kernel: %s)\n", names[n], f, kernel_variant_name(v),
               kernel_variant_name(0),
               differs < 0 ? "picked"
               : differs   ? "differs"
                           : "same image");
        scene_destroy(s);
    }
    free(full);
    free(img);
    CHECK(picked[KV_OPAQUE] >= 1 && picked[KV_ALL] >= 1 && picked[KV_FULL] >= 4 && caught >= 1,
          "scenes per variant: diffuse %d, textured %d, opaque %d, all %d, full %d; smallest kernel caught on %d",
          picked[KV_DIFFUSE], picked[KV_TEXTURED], picked[KV_OPAQUE], picked[KV_ALL], picked[KV_FULL], caught);
    return test_result("test_features");
}
