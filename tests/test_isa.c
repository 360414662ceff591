/* The CPU kernels of every ISA level this build has and this CPU runs (src/cpu/isa.h) agree:
 * each level traces the same rays through a tree built at its own width (sse: 4-wide, avx2 and
 * avx512: 8-wide) and must find the same hits (the leaf blocks and the triangle test are the same, so
 * the same distances bit for bit; where two primitives tie at one distance either may be
 * reported), and their path-traced images of the Cornell box must agree within float noise.
 * With a single level (a CPU without AVX2, or a portable build) there is nothing to compare:
 * exits 77 (skipped). */
#include <string.h>

#include "accel/bvh.h"
#include "cpu/isa.h"
#include "kernel/rng.h"
#include "kernel/sampler.h"
#include "scene/scene.h"
#include "test_scenes.h"
#include "testing.h"

#define NRAYS 200000
#define RES   32
#define SPP   16

static int rebuild(scene *s, int width) {
    size_t np = s->ntriangles + s->nspheres + s->nquads;
    vec3 *lo = malloc(np * sizeof(vec3)), *hi = malloc(np * sizeof(vec3));
    uint32_t *ids = malloc(np * sizeof(uint32_t));
    scene_prim_bounds(s, lo, hi, ids);
    bvh_free(&s->bvh);
    int rc = bvh_build_lanes(&s->bvh, lo, hi, ids, np, s->triangles, s->positions, 2, BVH_LEAF_WIDTH, width);
    s->k.nodes = s->bvh.wnodes;
    s->k.leaves = s->bvh.leaves;
    s->k.leaf_pos = s->bvh.leaf_pos;
    s->k.nnodes = (uint32_t)s->bvh.nwnodes;
    free(lo);
    free(hi);
    free(ids);
    return rc;
}

/* A triangle soup with spheres and quads inside [-10, 10]^3, rays from inside it. */
static scene *soup(void) {
    scene *s = scene_create();
    int mat = add_grey_diffuse(s);
    pcg32 r = pcg32_seed(7, 1);
#define RND(a, b) ((a) + ((b) - (a)) * pcg32_float(&r))
    int ntris = 20000;
    vec3 *pos = malloc(sizeof(vec3) * 3 * (size_t)ntris);
    uint32_t *idx = malloc(sizeof(uint32_t) * 3 * (size_t)ntris);
    for (int t = 0; t < ntris; ++t) {
        vec3 c = v3(RND(-10, 10), RND(-10, 10), RND(-10, 10));
        for (int k = 0; k < 3; ++k) {
            pos[3 * t + k] = vadd(c, v3(RND(-0.6f, 0.6f), RND(-0.6f, 0.6f), RND(-0.6f, 0.6f)));
            idx[3 * t + k] = (uint32_t)(3 * t + k);
        }
    }
    scene_add_mesh(s, pos, NULL, NULL, 3 * (size_t)ntris, idx, NULL, (size_t)ntris, xform_identity(), mat);
    free(pos);
    free(idx);
    for (int i = 0; i < 50; ++i)
        scene_add_sphere(s, xform_trs(v3(RND(-10, 10), RND(-10, 10), RND(-10, 10)), v3(0, 0, 0), v3s(RND(0.2f, 1))),
                         mat);
    for (int i = 0; i < 50; ++i)
        scene_add_quad(s, v3(RND(-10, 10), RND(-10, 10), RND(-10, 10)), v3(RND(-2, 2), RND(-2, 2), RND(-2, 2)),
                       v3(RND(-2, 2), RND(-2, 2), RND(-2, 2)), mat);
#undef RND
    char err[256];
    if (scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err)) {
        fprintf(stderr, "prepare: %s\n", err);
        scene_destroy(s);
        return NULL;
    }
    return s;
}

typedef struct rays {
    float *o, *d, *tmax;
} rays;

static void compare_hits(const char *what, const hit *a, const hit *b, const char *na, const char *nb) {
    size_t differ = 0, ties = 0;
    for (size_t i = 0; i < NRAYS; ++i) {
        int ha = a[i].prim != PRIM_NONE, hb = b[i].prim != PRIM_NONE;
        if (ha != hb || (ha && kfloat_bits(a[i].t) != kfloat_bits(b[i].t))) {
            if (differ++ < 5)
                fprintf(stderr, "%s ray %zu: %s %u t=%.9g, %s %u t=%.9g\n", what, i, na, a[i].prim, a[i].t, nb,
                        b[i].prim, b[i].t);
        } else if (ha && a[i].prim != b[i].prim) {
            ties++;
        }
    }
    CHECK(differ == 0, "%s: %zu of %d rays hit differently under %s and %s", what, differ, NRAYS, na, nb);
    CHECK(ties <= NRAYS / 10000, "%s: %zu ties", what, ties);
    printf("%s: %s vs %s: %d rays, %zu differ, %zu ties at equal distance\n", what, na, nb, NRAYS, differ, ties);
}

static void trace_all(const cpu_kernels *k, scene *s, const rays *r, hit *closest, hit *shadow) {
    CHECK(rebuild(s, k->bvh_width) == 0 && s->bvh.width == k->bvh_width, "%s: build at width %d", k->name,
          k->bvh_width);
    double tsum = 0;
    k->trace_rays(&s->k, 0, r->o, r->d, r->tmax, 0, NRAYS, &tsum, closest);
    for (size_t i = 0; i < NRAYS; ++i) r->tmax[i] = 4.0f; /* shadow rays of length 4 */
    k->trace_rays(&s->k, 1, r->o, r->d, r->tmax, 0, NRAYS, &tsum, shadow);
    for (size_t i = 0; i < NRAYS; ++i) r->tmax[i] = K_INF;
}

static void render(const cpu_kernels *k, scene *s, int sampler, double *accum) {
    CHECK(rebuild(s, k->bvh_width) == 0, "%s: cornell build", k->name);
    uint32_t *count = calloc(RES * RES, sizeof(uint32_t));
    double *lum2 = calloc(RES * RES, sizeof(double));
    memset(accum, 0, RES * RES * 3 * sizeof(double));
    cpu_pass p;
    memset(&p, 0, sizeof p);
    char err[256];
    CHECK(scene_camera(s, RES, RES, &p.pass.cam, err, sizeof err) == 0, "camera: %s", err);
    p.scene = &s->k;
    p.pass.sampler = sampler;
    p.pass.seed = 3;
    p.pass.spp_total = SPP;
    p.pass.max_depth = 8;
    p.pass.rr_depth = KPASS_RR_DEPTH;
    p.pass.sample_begin = 0;
    p.pass.sample_end = SPP;
    p.film.width = RES;
    p.film.height = RES;
    p.film.sum = accum;
    p.film.count = count;
    p.film.lum2 = lum2;
    cpu_pass_stats st = {0, 0, 0, 0};
    k->render_rect(&p, 0, 0, RES, RES, &st);
    CHECK(st.bad_samples == 0 && st.samples == RES * RES * SPP, "%s: %llu samples, %llu bad", k->name,
          (unsigned long long)st.samples, (unsigned long long)st.bad_samples);
    /* every sample traces its camera ray; shadow rays are some of the rays, and the Cornell box's
     * diffuse walls take one at nearly every bounce */
    CHECK(st.rays >= st.samples && st.shadow_rays > 0 && st.shadow_rays < st.rays, "%s: %llu rays, %llu shadow rays",
          k->name, (unsigned long long)st.rays, (unsigned long long)st.shadow_rays);
    free(count);
    free(lum2);
}

int main(void) {
    int nall;
    const cpu_kernels *const *all = cpu_kernels_all(&nall);
    const cpu_kernels *lv[4];
    int n = 0;
    for (int i = 0; i < nall && n < 4; ++i)
        if (cpu_kernels_find(all[i]->name)) lv[n++] = all[i];
    printf("CPU kernel levels run here:");
    for (int i = 0; i < n; ++i) printf(" %s (%s)", lv[i]->name, lv[i]->desc);
    printf("\n");
    if (n < 2) {
        printf("SKIP: only one CPU kernel level on this CPU / build\n");
        return 77;
    }

    scene *s = soup();
    CHECK(s != NULL, "soup scene");
    if (!s) return test_result("test_isa");
    rays r = {malloc(NRAYS * 3 * sizeof(float)), malloc(NRAYS * 3 * sizeof(float)), malloc(NRAYS * sizeof(float))};
    pcg32 g = pcg32_seed(11, 2);
    for (size_t i = 0; i < NRAYS; ++i) {
        vec3 o = v3(-12 + 24 * pcg32_float(&g), -12 + 24 * pcg32_float(&g), -12 + 24 * pcg32_float(&g));
        vec3 d = vnorm(v3(pcg32_float(&g) - 0.5f, pcg32_float(&g) - 0.5f, pcg32_float(&g) - 0.5f));
        memcpy(r.o + 3 * i, &o, 3 * sizeof(float));
        memcpy(r.d + 3 * i, &d, 3 * sizeof(float));
        r.tmax[i] = K_INF;
    }
    hit *c[4], *sh[4];
    for (int i = 0; i < n; ++i) {
        c[i] = malloc(NRAYS * sizeof(hit));
        sh[i] = malloc(NRAYS * sizeof(hit));
        trace_all(lv[i], s, &r, c[i], sh[i]);
    }
    for (int i = 1; i < n; ++i) {
        compare_hits("closest", c[0], c[i], lv[0]->name, lv[i]->name);
        /* shadow rays: occluded or not (any hit ends the search, so which one may differ) */
        size_t differ = 0;
        for (size_t j = 0; j < NRAYS; ++j) differ += (sh[0][j].prim != PRIM_NONE) != (sh[i][j].prim != PRIM_NONE);
        CHECK(differ == 0, "shadow: %zu rays disagree between %s and %s", differ, lv[0]->name, lv[i]->name);
    }
    for (int i = 0; i < n; ++i) {
        free(c[i]);
        free(sh[i]);
    }
    free(r.o);
    free(r.d);
    free(r.tmax);
    scene_destroy(s);

    char err[256];
    CHECK(scene_load_builtin(&s, "cornell", err, sizeof err) == 0, "cornell: %s", err);
    CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err) == 0, "prepare: %s", err);
    /* the random sampler, and Sobol, whose draws run over SIMD lanes at the avx2 and avx512 levels */
    for (int smp = SAMPLER_RANDOM; smp <= SAMPLER_SOBOL; smp += SAMPLER_SOBOL) {
        double *img[4];
        for (int i = 0; i < n; ++i) {
            img[i] = malloc(RES * RES * 3 * sizeof(double));
            render(lv[i], s, smp, img[i]);
        }
        for (int i = 1; i < n; ++i) {
            double maxd = 0, sum = 0;
            for (int j = 0; j < RES * RES * 3; ++j) {
                double d = fabs(img[i][j] - img[0][j]) / (1.0 + fabs(img[0][j]));
                maxd = d > maxd ? d : maxd;
                sum += img[0][j];
            }
            printf("cornell %dx%d, %d spp, %s sampler: %s vs %s: max relative difference %.3g (mean %.6g)\n", RES, RES,
                   SPP, smp == SAMPLER_SOBOL ? "sobol" : "random", lv[0]->name, lv[i]->name, maxd,
                   sum / (RES * RES * 3 * SPP));
            CHECK(maxd < 1e-4, "images of %s and %s differ by %.3g", lv[0]->name, lv[i]->name, maxd);
        }
        for (int i = 0; i < n; ++i) free(img[i]);
    }
    scene_destroy(s);
    return test_result("test_isa");
}
