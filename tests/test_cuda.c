/* GPU-only checks (skipped, exit 77, without a CUDA device):
 *  - LBVH invariants: every primitive in exactly one leaf block lane (unused lanes last, triangle
 *    lanes with the triangle's vertex indices), every leaf block
 *    referenced once, every slot box contains its child's boxes / primitives, every node reached once, depth within the traversal stack; and the
 *    LBVH traced on the CPU finds the same closest hits as the SAH BVH;
 *  - the compressed 8-wide BVH (--gpu-bvh cwbvh) against the 4-wide one: the same closest and
 *    any hits on the GPU for random rays, and the same as the CPU traversal of the same nodes;
 *    renders through it against renders through the 4-wide tree (same samples);
 *  - the wavefront pipeline against the megakernel (same samples, same image up to float sums);
 *  - the GPU tonemap (PNG written from the GPU's 8-bit image) against image_quantize8;
 *  - AOVs (albedo, normal, depth, samples) on the GPU against the CPU: path tracing in the
 *    megakernel (one thread per pixel and sliced) and the wavefront, and bdpt. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "caustic.h"
#include "cuda/render_cuda.h"
#include "cuda_skip.h"
#include "image/image.h"
#include "kernel/kernel.h"
#include "cpu/isa.h"
#include "scene/scene.h"
#include "test_scenes.h"
#include "testing.h"

static int box_contains(const bvh4_node *n, int i, vec3 lo, vec3 hi) {
    return n->lo_x[i] <= lo.x && n->lo_y[i] <= lo.y && n->lo_z[i] <= lo.z && n->hi_x[i] >= hi.x && n->hi_y[i] >= hi.y &&
           n->hi_z[i] >= hi.z;
}

static void check_lbvh(const char *name, scene *s) {
    char err[512];
    cuda_bvh_out o;
    int rc = cuda_lbvh_build(&s->k, &o, err, sizeof err);
    CHECK(rc == 0, "%s: LBVH build: %s", name, err);
    if (rc) return;
    size_t np = s->ntriangles + s->nspheres + s->nquads;
    CHECK(o.nprims == np, "%s: %zu primitive ids for %zu primitives", name, o.nprims, np);
    vec3 *lo = malloc(np * sizeof(vec3)), *hi = malloc(np * sizeof(vec3));
    uint32_t *ids = malloc(np * sizeof(uint32_t));
    unsigned char *seen_prim = calloc(np, 1), *seen_lane = calloc(np, 1), *seen_node = calloc(o.nnodes, 1);
    unsigned char *seen_block = calloc(o.nleaf4 ? o.nleaf4 : 1, 1);
    uint32_t *stack = malloc(o.nnodes * sizeof(uint32_t));
    scene_prim_bounds(s, lo, hi, ids);
    /* prim_ids is a permutation of the scene's primitive ids (flat index = position in ids) */
    int perm_ok = 1;
    for (size_t i = 0; i < np; ++i) {
        uint32_t f = prim_flat_index(&s->k, o.prim_ids[i]);
        if (f >= np || ids[f] != o.prim_ids[i] || seen_prim[f]) {
            perm_ok = 0;
            break;
        }
        seen_prim[f] = 1;
    }
    CHECK(perm_ok, "%s: prim_ids is not a permutation of the primitives", name);
    /* walk the tree: leaf blocks hold every primitive once, boxes contain their contents */
    size_t sp = 0, reached = 0, covered = 0, blocks = 0;
    int contain_ok = 1, once_ok = 1, lanes_ok = 1;
    stack[sp++] = 0;
    while (sp > 0 && perm_ok) {
        uint32_t ni = stack[--sp];
        if (ni >= o.nnodes || seen_node[ni]) {
            once_ok = 0;
            break;
        }
        seen_node[ni] = 1;
        reached++;
        const bvh4_node *n = &o.nodes[ni];
        for (int c = 0; c < BVH4_WIDTH; ++c) {
            if (n->count[c] > BVH_MAX_LEAF_BLOCKS) once_ok = 0; /* the traversal stack's count field */
            if (n->count[c] > 0) {
                for (uint32_t k = n->child[c]; k < n->child[c] + n->count[c]; ++k) {
                    if (k >= o.nleaf4 || seen_block[k]) {
                        once_ok = 0;
                        continue;
                    }
                    seen_block[k] = 1;
                    blocks++;
                    const bvh_leaf4 *l = &o.leaves[k];
                    if (l->prim[0] == PRIM_NONE) lanes_ok = 0; /* no empty block */
                    for (int j = 0; j < BVH_LEAF_WIDTH; ++j) {
                        uint32_t id = l->prim[j];
                        if (id == PRIM_NONE) {
                            if (j + 1 < BVH_LEAF_WIDTH && l->prim[j + 1] != PRIM_NONE) lanes_ok = 0;
                            continue;
                        }
                        uint32_t f = prim_flat_index(&s->k, id);
                        if (f >= np || ids[f] != id || seen_lane[f]) {
                            once_ok = 0;
                            continue;
                        }
                        seen_lane[f] = 1;
                        covered++;
                        if (prim_id_kind(id) == PRIM_TRIANGLE) {
                            const triangle *t = &s->triangles[prim_id_index(id)];
                            if (l->v0[j] != t->v[0] || l->v1[j] != t->v[1] || l->v2[j] != t->v[2]) lanes_ok = 0;
                        }
                        if (!box_contains(n, c, lo[f], hi[f])) contain_ok = 0;
                    }
                }
            } else if (n->child[c] != 0) {
                const bvh4_node *ch = &o.nodes[n->child[c]];
                for (int d = 0; d < BVH4_WIDTH; ++d) {
                    if (ch->count[d] == 0 && ch->child[d] == 0) continue; /* empty slot */
                    vec3 clo = v3(ch->lo_x[d], ch->lo_y[d], ch->lo_z[d]),
                         chi = v3(ch->hi_x[d], ch->hi_y[d], ch->hi_z[d]);
                    if (!box_contains(n, c, clo, chi)) contain_ok = 0;
                }
                if (sp < o.nnodes)
                    stack[sp++] = n->child[c];
                else
                    once_ok = 0;
            }
        }
    }
    CHECK(once_ok, "%s: a node or primitive is referenced twice", name);
    CHECK(covered == np, "%s: leaves hold %zu of %zu primitives", name, covered, np);
    CHECK(blocks == o.nleaf4, "%s: %zu of %zu leaf blocks referenced", name, blocks, o.nleaf4);
    CHECK(lanes_ok, "%s: a leaf block's lanes are out of order or hold wrong vertex indices", name);
    CHECK(reached == o.nnodes, "%s: %zu of %zu nodes reachable", name, reached, o.nnodes);
    CHECK(contain_ok, "%s: a slot box does not contain its child", name);
    CHECK(o.max_depth >= 1 && o.max_depth <= BVH_MAX_DEPTH, "%s: depth %d", name, o.max_depth);
    /* the same closest hits as the SAH BVH, traced on the CPU through the shared traversal (this
     * file is built without AVX2, so its kernel reads the LBVH's 4-wide nodes; the SAH tree is
     * built at that width too) */
    bvh sah;
    int sah_rc = bvh_build_lanes(&sah, lo, hi, ids, np, s->triangles, s->positions, 2, BVH_LEAF_WIDTH, BVH_WIDTH);
    CHECK(sah_rc == 0, "%s: SAH build at width %d", name, BVH_WIDTH);
    if (perm_ok && once_ok && sah_rc == 0) {
        kscene ks = s->k;
        ks.nodes = sah.wnodes;
        ks.nnodes = (uint32_t)sah.nwnodes;
        ks.leaves = sah.leaves;
        ks.leaf_pos = sah.leaf_pos;
        kscene k = s->k;
        k.nodes = o.nodes;
        k.nnodes = (uint32_t)o.nnodes;
        k.leaves = o.leaves;
        /* as bvh_build: rows (and the ids) wherever there are leaf blocks */
        float *lbvh_pos = o.nleaf4 ? bvh_leaf_positions(o.leaves, o.nleaf4, s->positions) : NULL;
        k.leaf_pos = lbvh_pos;
        pcg32 rng = pcg32_seed(7u, 3u);
        vec3 c = vscale(vadd(s->bounds_lo, s->bounds_hi), 0.5f), e = vsub(s->bounds_hi, s->bounds_lo);
        int differ = 0, hits = 0;
        for (int i = 0; i < 20000; ++i) {
            vec3 org = vadd(c, v3((pcg32_float(&rng) - 0.5f) * e.x, (pcg32_float(&rng) - 0.5f) * e.y,
                                  (pcg32_float(&rng) - 0.5f) * e.z));
            vec3 d = sample_uniform_sphere(v2(pcg32_float(&rng), pcg32_float(&rng)));
            hit a, b;
            int ha = trace_closest(&ks, make_ray(org, d, K_INF), &a);
            int hb = trace_closest(&k, make_ray(org, d, K_INF), &b);
            hits += ha;
            if (ha != hb || (ha && a.t != b.t)) differ++;
            if (trace_occluded(&ks, make_ray(org, d, 0.5f * e.x)) != trace_occluded(&k, make_ray(org, d, 0.5f * e.x)))
                differ++;
        }
        /* the primitive tests are the same, but a ray that grazes a box face can be culled by one
         * tree's slab test and not by the other's (other boxes): allow 1 in 2000 */
        CHECK(differ <= 20, "%s: %d of 40000 queries differ through the LBVH (%d hits)", name, differ, hits);
        if (differ) printf("%s: %d of 40000 queries differ between LBVH and SAH\n", name, differ);
        free(lbvh_pos);
    }
    bvh_free(&sah);
    printf("%s: %zu primitives, %zu 4-wide nodes, depth %d, GPU %.3f ms, collapse %.3f ms\n", name, np, o.nnodes,
           o.max_depth, o.gpu_seconds * 1e3, o.collapse_seconds * 1e3);
    free(lo);
    free(hi);
    free(ids);
    free(seen_prim);
    free(seen_lane);
    free(seen_block);
    free(seen_node);
    free(stack);
    cuda_bvh_out_free(&o);
}

/* Random triangles, with a block of identical ones (equal Morton codes) and a far outlier. */
static scene *soup(size_t ntris) {
    scene *s = scene_create();
    int mat = add_grey_diffuse(s);
    vec3 *p = malloc(3 * ntris * sizeof(vec3));
    uint32_t *idx = malloc(3 * ntris * sizeof(uint32_t));
    pcg32 rng = pcg32_seed(11u, 5u);
    for (size_t t = 0; t < ntris; ++t) {
        vec3 c = v3(pcg32_float(&rng) * 10.0f, pcg32_float(&rng) * 10.0f, pcg32_float(&rng) * 10.0f);
        if (t < ntris / 10) c = v3(5, 5, 5);
        if (t == ntris - 1) c = v3(1000, -1000, 1000);
        for (int k = 0; k < 3; ++k) {
            p[3 * t + k] = vadd(c, v3(pcg32_float(&rng) * 0.2f, pcg32_float(&rng) * 0.2f, pcg32_float(&rng) * 0.2f));
            idx[3 * t + k] = (uint32_t)(3 * t + k);
        }
    }
    scene_add_mesh(s, p, NULL, NULL, 3 * ntris, idx, NULL, ntris, xform_identity(), mat);
    free(p);
    free(idx);
    char err[256];
    if (scene_prepare(s, cpu_kernels_get()->bvh_width, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    return s;
}

/* Random rays (origins in the scene's bounds, some with a finite tmax) traced on the GPU through
 * the 4-wide and the compressed 8-wide tree, closest and any hit: the same hit counts and
 * distance sums; the CPU's traversal of the compressed nodes finds the GPU's hits. */
static void check_cw8_trace(const char *name, scene *s) {
    enum { N = 40000 };
    float *o = malloc(3 * N * sizeof(float)), *d = malloc(3 * N * sizeof(float)), *tmax = malloc(N * sizeof(float));
    vec3 lo = v3s(INFINITY), hi = v3s(-INFINITY);
    for (uint32_t v = 0; v < s->k.nvertices; ++v) {
        lo = vmin(lo, s->k.positions[v]);
        hi = vmax(hi, s->k.positions[v]);
    }
    if (s->k.nvertices == 0) {
        lo = v3s(-1);
        hi = v3s(1);
    }
    pcg32 rng = pcg32_seed(17u, 3u);
    for (int i = 0; i < N; ++i) {
        vec3 u = v3(pcg32_float(&rng), pcg32_float(&rng), pcg32_float(&rng));
        vec3 p = vadd(lo, vmul(vsub(hi, lo), u));
        vec3 dir = sample_uniform_sphere(v2(pcg32_float(&rng), pcg32_float(&rng)));
        memcpy(o + 3 * i, &p, sizeof p);
        memcpy(d + 3 * i, &dir, sizeof dir);
        tmax[i] = i % 4 == 0 ? 0.3f * vlen(vsub(hi, lo)) : K_INF;
    }
    uint64_t hits[2][2];
    double tsum[2][2];
    char err[512];
    for (int layout = 0; layout < 2; ++layout) {
        cuda_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.bvh = layout ? CUDA_BVH_CW8 : CUDA_BVH_SAH;
        const bvh *tree = scene_bvh(s, layout ? BVH8_WIDTH : BVH4_WIDTH, CUDA_SAH_LANES, err, sizeof err);
        CHECK(tree != NULL, "%s: tree: %s", name, err);
        if (!tree) return;
        cuda_renderer *g = cuda_renderer_create(&s->k, tree, 8, 8, &cfg, err, sizeof err);
        CHECK(g != NULL, "%s: renderer: %s", name, err);
        if (!g) return;
        for (int any = 0; any < 2; ++any) {
            double sec;
            CHECK(cuda_trace_rays(g, o, d, tmax, N, 0, any, 1, &sec, &hits[layout][any], &tsum[layout][any], err,
                                  sizeof err) == 0,
                  "%s: trace: %s", name, err);
        }
        cuda_renderer_free(g);
        if (layout) { /* the CPU's traversal of the same compressed nodes */
            cw8_node *cw = malloc((tree->nwnodes + 1) * sizeof(cw8_node));
            CHECK(bvh_compress8(tree->wnodes, tree->nwnodes, cw, err, sizeof err) == 0, "%s: compress: %s", name, err);
            kscene k = s->k;
            k.nodes = cw;
            k.leaves = tree->leaves;
            k.leaf_pos = tree->leaf_pos;
            k.nnodes = (uint32_t)tree->nwnodes;
            k.node_layout = KNODES_CW8;
            uint64_t cpu_hits = 0;
            double cpu_tsum = 0.0;
            for (int i = 0; i < N; ++i) {
                hit h;
                if (trace_closest(&k,
                                  make_ray(v3(o[3 * i], o[3 * i + 1], o[3 * i + 2]),
                                           v3(d[3 * i], d[3 * i + 1], d[3 * i + 2]), tmax[i]),
                                  &h)) {
                    cpu_hits++;
                    cpu_tsum += h.t;
                }
            }
            CHECK(cpu_hits == hits[1][0] && fabs(cpu_tsum - tsum[1][0]) <= 1e-6 * fabs(cpu_tsum),
                  "%s: compressed BVH: CPU %llu hits (t sum %.6f), GPU %llu (%.6f)", name, (unsigned long long)cpu_hits,
                  cpu_tsum, (unsigned long long)hits[1][0], tsum[1][0]);
            free(cw);
        }
    }
    for (int any = 0; any < 2; ++any)
        CHECK(hits[0][any] == hits[1][any] && fabs(tsum[0][any] - tsum[1][any]) <= 1e-6 * fabs(tsum[0][any]),
              "%s %s: 4-wide %llu hits (t sum %.6f), compressed 8-wide %llu (%.6f)", name, any ? "any hit" : "closest",
              (unsigned long long)hits[0][any], tsum[0][any], (unsigned long long)hits[1][any], tsum[1][any]);
    printf("%s: compressed 8-wide BVH: %llu of %d rays hit, as through the 4-wide tree and on the CPU\n", name,
           (unsigned long long)hits[1][0], N);
    free(o);
    free(d);
    free(tmax);
}

static caustic_renderer *render_bvh(caustic_scene *cs, caustic_gpu_mode mode, caustic_gpu_bvh bvh, float adaptive,
                                    int spp) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 64;
    o.height = 64;
    o.spp = spp;
    o.seed = 3;
    o.device = CAUSTIC_DEVICE_CUDA;
    o.gpu_mode = mode;
    o.gpu_bvh = bvh;
    o.adaptive = adaptive;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    caustic_render(r, NULL, NULL, NULL, 0);
    return r;
}
static caustic_renderer *render(caustic_scene *cs, caustic_gpu_mode mode, float adaptive, int spp) {
    caustic_options o;
    caustic_options_init(&o);
    return render_bvh(cs, mode, o.gpu_bvh, adaptive, spp);
}

/* Renders through the 4-wide and the compressed 8-wide tree: the same samples and hits (up to
 * exact ties between two primitives), so the same image up to the order of float sums. */
static void check_cw8_render(const char *name) {
    char err[512];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, name, err, sizeof err) == 0, "load %s: %s", name, err);
    caustic_renderer *a = render_bvh(cs, CAUSTIC_GPU_MEGA, CAUSTIC_GPU_BVH_SAH, 0.0f, 64);
    caustic_renderer *b = render_bvh(cs, CAUSTIC_GPU_MEGA, CAUSTIC_GPU_BVH_CWBVH, 0.0f, 64);
    const float *ia = caustic_image(a, NULL, NULL), *ib = caustic_image(b, NULL, NULL);
    int off = 0;
    double ma = 0, mb = 0;
    for (int i = 0; i < 64 * 64 * 3; ++i) {
        ma += ia[i];
        mb += ib[i];
        if (fabsf(ia[i] - ib[i]) > 1e-3f * (fabsf(ia[i]) + 1e-2f)) off++;
    }
    CHECK(off <= 64 * 64 * 3 / 100, "%s: 4-wide vs compressed BVH: %d of %d values differ", name, off, 64 * 64 * 3);
    CHECK(fabs(ma - mb) <= 1e-3 * fabs(ma), "%s: image sums %.6f (4-wide) vs %.6f (compressed)", name, ma, mb);
    caustic_renderer_free(a);
    caustic_renderer_free(b);
    caustic_scene_free(cs);
}

static void check_wavefront(const char *name, float adaptive) {
    char err[512];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, name, err, sizeof err) == 0, "load %s: %s", name, err);
    caustic_renderer *a = render(cs, CAUSTIC_GPU_MEGA, adaptive, 64),
                     *b = render(cs, CAUSTIC_GPU_WAVEFRONT, adaptive, 64);
    caustic_render_stats sa, sb;
    caustic_render_stats_get(a, &sa);
    caustic_render_stats_get(b, &sb);
    const float *ia = caustic_image(a, NULL, NULL), *ib = caustic_image(b, NULL, NULL);
    const uint32_t *ca = caustic_sample_counts(a, NULL, NULL), *cb = caustic_sample_counts(b, NULL, NULL);
    int off = 0, counts_off = 0;
    double ma = 0, mb = 0;
    for (int i = 0; i < 64 * 64 * 3; ++i) {
        ma += ia[i];
        mb += ib[i];
        if (fabsf(ia[i] - ib[i]) > 1e-3f * (fabsf(ia[i]) + 1e-2f)) off++;
    }
    for (int i = 0; i < 64 * 64; ++i) counts_off += ca[i] != cb[i];
    /* the same samples in both; only the order of the float sums (atomics) differs, and a rare
     * path may branch differently on a last-bit difference */
    CHECK(off <= 64 * 64 * 3 / 100, "%s adaptive %g: %d of %d values differ", name, adaptive, off, 64 * 64 * 3);
    CHECK(fabs(ma - mb) <= 1e-3 * fabs(ma), "%s: image sums %.6f vs %.6f", name, ma, mb);
    CHECK(counts_off <= 64 * 64 / 100, "%s adaptive %g: %d pixels took other sample counts", name, adaptive,
          counts_off);
    CHECK(sa.samples == sb.samples || adaptive > 0, "%s: samples %llu vs %llu", name, (unsigned long long)sa.samples,
          (unsigned long long)sb.samples);
    CHECK(sa.rays > 0 && llabs((long long)sa.rays - (long long)sb.rays) <= (long long)(sa.rays / 100),
          "%s: rays %llu vs %llu", name, (unsigned long long)sa.rays, (unsigned long long)sb.rays);
    /* shadow rays are counted apart (of rays) by both pipelines, alike */
    CHECK(sa.shadow_rays > 0 && sa.shadow_rays < sa.rays &&
              llabs((long long)sa.shadow_rays - (long long)sb.shadow_rays) <= (long long)(sa.shadow_rays / 100),
          "%s: shadow rays %llu vs %llu (of %llu)", name, (unsigned long long)sa.shadow_rays,
          (unsigned long long)sb.shadow_rays, (unsigned long long)sa.rays);
    caustic_renderer_free(a);
    caustic_renderer_free(b);
    caustic_scene_free(cs);
}

/* The megakernel splits a small image's pass into slices of samples taken by different warps in
 * whatever order they come (render_cuda.cu, MEGA_FILL_ITEMS; a 64x64 image is always split) and
 * merges them in slice order: the same seed and the same passes give the same image, bit for bit.
 * Passes are sized by time, so the two renders' pass boundaries are recorded and compared too. */
typedef struct pass_log {
    int n;
    int done[64];
} pass_log;

static int log_pass(void *user, const caustic_progress *p) {
    pass_log *l = user;
    if (l->n < 64) l->done[l->n++] = p->spp_done;
    return 0;
}

static caustic_renderer *render_logged(caustic_scene *cs, pass_log *l) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 64;
    o.height = 64;
    o.spp = 64;
    o.seed = 3;
    o.device = CAUSTIC_DEVICE_CUDA;
    o.gpu_mode = CAUSTIC_GPU_MEGA;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    memset(l, 0, sizeof *l);
    caustic_render(r, log_pass, l, NULL, 0);
    return r;
}

static void check_deterministic(const char *name) {
    char err[512];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, name, err, sizeof err) == 0, "load %s: %s", name, err);
    for (int attempt = 0; attempt < 3; ++attempt) {
        pass_log la, lb;
        caustic_renderer *a = render_logged(cs, &la), *b = render_logged(cs, &lb);
        int same_passes = la.n == lb.n && memcmp(la.done, lb.done, sizeof la.done) == 0;
        if (same_passes) {
            const float *ia = caustic_image(a, NULL, NULL), *ib = caustic_image(b, NULL, NULL);
            const uint32_t *ca = caustic_sample_counts(a, NULL, NULL), *cb = caustic_sample_counts(b, NULL, NULL);
            int off = 0, counts_off = 0;
            for (int i = 0; i < 64 * 64 * 3; ++i) off += memcmp(&ia[i], &ib[i], sizeof(float)) != 0;
            for (int i = 0; i < 64 * 64; ++i) counts_off += ca[i] != 64u || cb[i] != 64u;
            CHECK(off == 0, "%s: two renders with one seed and %d passes differ in %d of %d values", name, la.n, off,
                  64 * 64 * 3);
            CHECK(counts_off == 0, "%s: %d pixels did not take 64 samples", name, counts_off);
        }
        caustic_renderer_free(a);
        caustic_renderer_free(b);
        if (same_passes) break;
        CHECK(attempt < 2, "%s: three pairs of renders split their passes differently", name);
    }
    caustic_scene_free(cs);
}

static void check_tonemap(void) {
    char err[512], path[256];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, "cornell", err, sizeof err) == 0, "load: %s", err);
    caustic_renderer *r = render(cs, CAUSTIC_GPU_MEGA, 0.0f, 16);
    snprintf(path, sizeof path, "/tmp/caustic_test_cuda_%ld.png", (long)getpid());
    CHECK(caustic_save_image(r, path, err, sizeof err) == 0, "save: %s", err);
    image png;
    CHECK(image_load(&png, path, err, sizeof err) == 0, "load png: %s", err);
    const float *img = caustic_image(r, NULL, NULL);
    int differ = 0, worst = 0;
    for (int i = 0; i < 64 * 64 * 3; ++i) {
        int a = image_quantize8(png.rgb[i]), b = image_quantize8(img[i]);
        if (a != b) differ++;
        if (abs(a - b) > worst) worst = abs(a - b);
    }
    CHECK(differ == 0, "GPU tonemap: %d of %d bytes differ from image_quantize8 (worst %d)", differ, 64 * 64 * 3,
          worst);
    image_free(&png);
    remove(path);
    caustic_renderer_free(r);
    caustic_scene_free(cs);
}

/* Renders with every AOV on the device; NULL on failure (a CHECK says why). */
static caustic_renderer *render_aovs(caustic_scene *cs, caustic_device dev, caustic_gpu_mode mode,
                                     caustic_integrator integ, float adaptive) {
    caustic_options o;
    caustic_options_init(&o);
    o.width = 64;
    o.height = 48;
    o.spp = 16;
    o.seed = 5;
    o.threads = 2;
    o.device = dev;
    o.gpu_mode = mode;
    o.integrator = integ;
    o.adaptive = adaptive;
    o.adaptive_min_spp = 4;
    o.aovs = CAUSTIC_AOV_MASK(CAUSTIC_AOV_COUNT) - 1u;
    char err[512];
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (r && caustic_render(r, NULL, NULL, err, sizeof err)) {
        CHECK(0, "render: %s", err);
        caustic_renderer_free(r);
        r = NULL;
    }
    return r;
}

/* The same camera rays and glass choices on both devices: the AOVs agree to float rounding,
 * apart from the rare sample whose hit or choice a rounding difference flips. */
static void check_aov_agreement(const char *name, caustic_gpu_mode mode, caustic_integrator integ, float adaptive) {
    char err[512];
    caustic_scene *cs;
    CHECK(caustic_scene_load(&cs, name, err, sizeof err) == 0, "load %s: %s", name, err);
    if (!cs) return;
    caustic_renderer *cpu = render_aovs(cs, CAUSTIC_DEVICE_CPU, mode, integ, adaptive);
    caustic_renderer *gpu = render_aovs(cs, CAUSTIC_DEVICE_CUDA, mode, integ, adaptive);
    if (cpu && gpu) {
        caustic_render_stats st;
        caustic_render_stats_get(gpu, &st);
        CHECK(!strcmp(st.device, "cuda"), "%s rendered on %s", name, st.device);
        const caustic_aov aovs[] = {CAUSTIC_AOV_ALBEDO, CAUSTIC_AOV_NORMAL, CAUSTIC_AOV_DEPTH, CAUSTIC_AOV_SAMPLES};
        for (int k = 0; k < 4; ++k) {
            int ch = 0;
            const float *a = caustic_aov_image(cpu, aovs[k], &ch), *b = caustic_aov_image(gpu, aovs[k], NULL);
            CHECK(a && b, "%s: no %s AOV", name, caustic_aov_name(aovs[k]));
            if (!a || !b) continue;
            size_t n = (size_t)64 * 48 * (size_t)ch, off = 0;
            double sum = 0.0;
            for (size_t i = 0; i < n; ++i) {
                double d = isinf(a[i]) && isinf(b[i]) ? 0.0 : fabs(a[i] - b[i]);
                if (aovs[k] == CAUSTIC_AOV_DEPTH && isfinite(a[i])) d /= fmax(1.0, fabs(a[i]));
                if (!(d <= 1e-3)) off++;
                sum += isfinite(d) ? d : 1.0;
            }
            /* adaptive sampling stops on float vs double sums: a few pixels take other counts */
            double allowed = adaptive > 0.0f ? 0.05 : 0.01;
            CHECK((double)off <= allowed * (double)n, "%s %s %s: %zu of %zu values differ by more than 1e-3", name,
                  caustic_integrator_name(integ), caustic_aov_name(aovs[k]), off, n);
            CHECK(sum / (double)n < 2e-3, "%s %s %s: mean difference %g", name, caustic_integrator_name(integ),
                  caustic_aov_name(aovs[k]), sum / (double)n);
        }
    }
    caustic_renderer_free(cpu);
    caustic_renderer_free(gpu);
    caustic_scene_free(cs);
}

int main(void) {
    skip_without_cuda();
    /* AOVs: megakernel sliced (small image), one thread per pixel (adaptive), wavefront, bdpt */
    check_aov_agreement("cornell-glass", CAUSTIC_GPU_MEGA, CAUSTIC_INTEGRATOR_PT, 0.0f);
    check_aov_agreement("cornell-glass", CAUSTIC_GPU_MEGA, CAUSTIC_INTEGRATOR_PT, 0.05f);
    check_aov_agreement("cornell-glass", CAUSTIC_GPU_WAVEFRONT, CAUSTIC_INTEGRATOR_PT, 0.0f);
    check_aov_agreement("cornell-glass", CAUSTIC_GPU_MEGA, CAUSTIC_INTEGRATOR_BDPT, 0.0f);
    const char *names[] = {"cornell", "rtow", "cornell-glass"};
    for (int i = 0; i < 3; ++i) {
        caustic_scene *cs;
        char err[512];
        CHECK(caustic_scene_load(&cs, names[i], err, sizeof err) == 0, "load %s: %s", names[i], err);
        check_lbvh(names[i], api_scene_internal(cs));
        check_cw8_trace(names[i], api_scene_internal(cs));
        check_cw8_render(names[i]);
        caustic_scene_free(cs);
    }
    scene *s = soup(50000);
    check_lbvh("soup50k", s);
    check_cw8_trace("soup50k", s);
    scene_destroy(s);
    s = soup(1);
    check_lbvh("one triangle", s);
    scene_destroy(s);
    check_wavefront("cornell", 0.0f);
    check_wavefront("cornell-glass", 0.0f);
    check_wavefront("cornell", 0.1f);
    check_deterministic("cornell");
    check_deterministic("cornell-glass");
    check_tonemap();
    return test_result("test_cuda");
}
