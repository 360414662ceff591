/* Traversal-only benchmark. Ray-generation rules (also in docs/performance-log.md):
 *   c = centre of the mesh bounds, R = half the bounds' diagonal.
 *   primary: pinhole camera at c + R*(0, 0.5, 1.5) looking at c, up +y, vertical fov 50 deg,
 *            square image of RES x RES, one ray through each pixel centre, row-major from the top.
 *            With --inside (interiors such as Sponza): the camera is at c and looks along +x
 *            (towards c + (1, 0, 0)), and the light is at c + (0, 0.25 * extent_y, 0).
 *   diffuse: from each primary hit p with geometric normal n turned towards the camera: origin
 *            p + 1e-4*R*n, cosine-distributed direction around n from PCG32 seeded
 *            (seed 1, stream = pixel index), two draws u1, u2: r = sqrt(u1), phi = 2 pi u2.
 *   shadow:  from the same origins towards the point light c + R*(0.3, 1.5, 0.6), any hit,
 *            tmax = distance * (1 - 1e-4); only for hits whose normal faces the light.
 * Hit counts and the sum of hit distances are printed so different tracers can be compared.
 * --write-rays DIR writes each set to DIR/<mesh stem>.<set>.rays so that other tracers can trace
 * the identical rays (tools/mitsuba/trace_rays.py does with OptiX): a uint64 ray count, then per
 * ray seven float32 (origin xyz, direction xyz, tmax; primary and diffuse rays have tmax = +inf),
 * all little-endian; the set's name says the query: shadow rays are any-hit, the others closest. */
#include "bench_rays.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cpu/render_cpu.h"
#include "cuda/render_cuda.h"
#include "cpu/isa.h"
#include "kernel/kernel.h"
#include "scene/scene.h"
#include "import/import.h"
#include "util/timer.h"

#define CHUNK 4096

static const char *usage_rays =
    "usage: caustic-bench-rays MESH.obj|MESH.ply|SCENE.json [MESH ...] [options]\n"
    "\n"
    "Traversal throughput (Mrays/s) for primary, diffuse and shadow rays, single-threaded and on\n"
    "all cores, side by side with Embree when caustic was built with it.\n"
    "\n"
    "  --res N       primary rays: N x N (default 1024)\n"
    "  --runs N      runs per measurement, median reported (default 5)\n"
    "  --threads N   threads for the multi-threaded figures (default: all cores)\n"
    "  --inside      interior camera: at the bounds centre looking along +x (for Sponza)\n"
    "  --cpu-time    time single-threaded runs by the thread's CPU time instead of wall time\n"
    "                (less sensitive to other processes on a shared machine; both tracers alike)\n"
    "  --interleave  single-threaded figures: caustic and the reference take turns on each chunk\n"
    "                of 4096 rays within a run, so both see the same machine load (shared boxes)\n"
    "  --device D    cpu (default; with Embree side by side) or cuda (the same rays on the GPU)\n"
    "  --gpu-bvh B   cuda: sah (default; the host's 4-wide build), cwbvh (its 8-wide build compressed),\n"
    "                lbvh (built on the GPU), a comma-separated list of them, both (sah,lbvh) or all\n"
    "  --json        one JSON object per line instead of a table\n"
    "  --write-rays DIR  also write each ray set to DIR/<mesh stem>.<set>.rays (DIR must exist):\n"
    "                a uint64 count, then per ray origin xyz, direction xyz, tmax as float32, all\n"
    "                little-endian; shadow rays are any-hit, primary and diffuse closest-hit\n";

typedef struct job {
    const kscene *k;
    ext_tracer *ext;
    const ray_set *rs;
    atomic_size_t next;
    size_t hits;
    double tsum;
    pthread_mutex_t lock;
} job;

static size_t trace_range(job *j, size_t b, size_t e, double *tsum) {
    if (j->ext) return ext_tracer_trace(j->ext, j->rs, b, e, tsum);
    const ray_set *rs = j->rs;
    return cpu_kernels_get()->trace_rays(j->k, rs->any_hit, rs->o, rs->d, rs->tmax, b, e, tsum, NULL);
}

static void *worker(void *arg) {
    job *j = arg;
    size_t hits = 0;
    double tsum = 0;
    for (;;) {
        size_t b = atomic_fetch_add(&j->next, CHUNK);
        if (b >= j->rs->n) break;
        size_t e = b + CHUNK < j->rs->n ? b + CHUNK : j->rs->n;
        hits += trace_range(j, b, e, &tsum);
    }
    pthread_mutex_lock(&j->lock);
    j->hits += hits;
    j->tsum += tsum;
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

static int use_cpu_time, interleave;

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Returns seconds; fills hits and the distance checksum. */
static double run_once(const kscene *k, ext_tracer *ext, const ray_set *rs, int threads, size_t *hits, double *tsum) {
    job j;
    j.k = k;
    j.ext = ext;
    j.rs = rs;
    j.hits = 0;
    j.tsum = 0;
    atomic_init(&j.next, 0);
    pthread_mutex_init(&j.lock, NULL);
    pthread_t th[256];
    double t0 = timer_now(), c0 = thread_seconds();
    if (threads <= 1)
        worker(&j);
    else {
        for (int i = 0; i < threads; ++i) pthread_create(&th[i], NULL, worker, &j);
        for (int i = 0; i < threads; ++i) pthread_join(th[i], NULL);
    }
    double dt = use_cpu_time && threads <= 1 ? thread_seconds() - c0 : timer_now() - t0;
    pthread_mutex_destroy(&j.lock);
    *hits = j.hits;
    *tsum = j.tsum;
    return dt;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_mrays(const kscene *k, ext_tracer *ext, const ray_set *rs, int threads, int runs, size_t *hits,
                           double *tsum) {
    double t[64];
    for (int i = 0; i < runs; ++i) t[i] = run_once(k, ext, rs, threads, hits, tsum);
    qsort(t, (size_t)runs, sizeof(double), cmpd);
    return rs->n / t[runs / 2] * 1e-6;
}

/* Single-threaded, caustic and the reference alternating chunk by chunk (which one goes first
 * alternates too); medians over runs of each one's summed time. */
static void interleaved_1t(const kscene *k, ext_tracer *ext, const ray_set *rs, int runs, double *mr, double *me,
                           size_t *hits, double *tsum, size_t *ehits, double *etsum) {
    double tc[64], te[64];
    for (int run = 0; run < runs; ++run) {
        job jc, je;
        memset(&jc, 0, sizeof jc);
        memset(&je, 0, sizeof je);
        jc.k = k;
        jc.rs = rs;
        je.k = k;
        je.ext = ext;
        je.rs = rs;
        double sc = 0, se = 0, sumc = 0, sume = 0;
        size_t hc = 0, he = 0;
        for (size_t b = 0, c = 0; b < rs->n; b += CHUNK, ++c) {
            size_t e = b + CHUNK < rs->n ? b + CHUNK : rs->n;
            for (int w = 0; w < 2; ++w) {
                int caustic_turn = (int)((c + (size_t)w) & 1);
                double t0 = use_cpu_time ? thread_seconds() : timer_now();
                if (caustic_turn)
                    hc += trace_range(&jc, b, e, &sumc);
                else
                    he += trace_range(&je, b, e, &sume);
                double dt = (use_cpu_time ? thread_seconds() : timer_now()) - t0;
                if (caustic_turn)
                    sc += dt;
                else
                    se += dt;
            }
        }
        tc[run] = sc;
        te[run] = se;
        *hits = hc;
        *tsum = sumc;
        *ehits = he;
        *etsum = sume;
    }
    qsort(tc, (size_t)runs, sizeof(double), cmpd);
    qsort(te, (size_t)runs, sizeof(double), cmpd);
    *mr = rs->n / tc[runs / 2] * 1e-6;
    *me = rs->n / te[runs / 2] * 1e-6;
}

static int alloc_set(ray_set *rs, const char *name, int any, size_t n) {
    rs->name = name;
    rs->any_hit = any;
    rs->n = 0;
    rs->o = malloc(n * 3 * sizeof(float));
    rs->d = malloc(n * 3 * sizeof(float));
    rs->tmax = malloc(n * sizeof(float));
    return rs->o && rs->d && rs->tmax ? 0 : -1;
}
static void push(ray_set *rs, vec3 o, vec3 d, float tmax) {
    size_t i = rs->n++;
    rs->o[3 * i] = o.x;
    rs->o[3 * i + 1] = o.y;
    rs->o[3 * i + 2] = o.z;
    rs->d[3 * i] = d.x;
    rs->d[3 * i + 1] = d.y;
    rs->d[3 * i + 2] = d.z;
    rs->tmax[i] = tmax;
}
static void free_set(ray_set *rs) {
    free(rs->o);
    free(rs->d);
    free(rs->tmax);
}

static int make_sets(const scene *s, int res, int inside, ray_set sets[3]) {
    const kscene *k = &s->k;
    vec3 c = vscale(vadd(s->bounds_lo, s->bounds_hi), 0.5f);
    float R = 0.5f * vlen(vsub(s->bounds_hi, s->bounds_lo));
    vec3 eye = vadd(c, vscale(v3(0, 0.5f, 1.5f), R));
    vec3 lightp = vadd(c, vscale(v3(0.3f, 1.5f, 0.6f), R));
    vec3 target = c;
    if (inside) {
        eye = c;
        target = vadd(c, v3(1, 0, 0));
        lightp = vadd(c, v3(0, 0.25f * (s->bounds_hi.y - s->bounds_lo.y), 0));
    }
    vec3 fwd = vnorm(vsub(target, eye)), right = vnorm(vcross(fwd, v3(0, 1, 0))), up = vcross(right, fwd);
    float th = tanf(25.0f * K_PI / 180.0f);
    size_t n = (size_t)res * (size_t)res;
    if (alloc_set(&sets[0], "primary", 0, n) || alloc_set(&sets[1], "diffuse", 0, n) ||
        alloc_set(&sets[2], "shadow", 1, n))
        return -1;
    for (int y = 0; y < res; ++y)
        for (int x = 0; x < res; ++x) {
            float sx = (2.0f * (x + 0.5f) / res - 1.0f) * th, sy = (1.0f - 2.0f * (y + 0.5f) / res) * th;
            vec3 d = vnorm(vadd(fwd, vadd(vscale(right, sx), vscale(up, sy))));
            push(&sets[0], eye, d, K_INF);
            hit h;
            surface sf;
            if (!cpu_kernels_get()->closest_surface(k, make_ray(eye, d, K_INF), &h, &sf)) continue;
            vec3 ng = vdot(sf.ng, d) > 0 ? vneg(sf.ng) : sf.ng;
            vec3 o = vmadd(sf.p, ng, 1e-4f * R);
            pcg32 rng = pcg32_seed(1u, (uint64_t)y * res + x);
            float u1 = pcg32_float(&rng), u2 = pcg32_float(&rng);
            float r = sqrtf(u1), phi = 2.0f * K_PI * u2;
            frame f = frame_from_normal(ng);
            push(&sets[1], o, frame_to_world(f, v3(r * cosf(phi), r * sinf(phi), ksafe_sqrt(1.0f - u1))), K_INF);
            vec3 tl = vsub(lightp, o);
            float dist = vlen(tl);
            if (vdot(tl, ng) > 0) push(&sets[2], o, vscale(tl, 1.0f / dist), dist * (1.0f - 1e-4f));
        }
    return 0;
}

/* Little-endian whatever the host, so the files mean the same everywhere. */
static void put_le(unsigned char *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b[i] = (unsigned char)(v >> (8 * i));
}

/* DIR/<stem of mesh>.<set>.rays, the format in the header comment. */
static int write_set(const char *dir, const char *mesh, const ray_set *rs, int quiet) {
    const char *base = strrchr(mesh, '/');
    base = base ? base + 1 : mesh;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%.*s.%s.rays", dir, stem, base, rs->name) >= (int)sizeof path) return -1;
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "caustic-bench-rays: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    unsigned char b[28];
    put_le(b, (uint64_t)rs->n, 8);
    int ok = fwrite(b, 8, 1, f) == 1;
    for (size_t i = 0; ok && i < rs->n; ++i) {
        float v[7] = {rs->o[3 * i],     rs->o[3 * i + 1], rs->o[3 * i + 2], rs->d[3 * i],
                      rs->d[3 * i + 1], rs->d[3 * i + 2], rs->tmax[i]};
        for (int c = 0; c < 7; ++c) {
            uint32_t u;
            memcpy(&u, &v[c], sizeof u);
            put_le(b + 4 * c, u, 4);
        }
        ok = fwrite(b, sizeof b, 1, f) == 1;
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) { /* no partial file left behind */
        fprintf(stderr, "caustic-bench-rays: writing '%s' failed\n", path);
        remove(path);
        return -1;
    }
    if (!quiet) printf("# wrote %s (%zu %s rays)\n", path, rs->n, rs->name);
    return 0;
}

static int load_mesh(scene **out, const char *path, char *err, size_t errlen) {
    size_t len = strlen(path);
    if (len > 5 && !strcasecmp(path + len - 5, ".json")) { /* a whole scene (the large instanced ones) */
        if (scene_load_file(out, path, NULL, err, errlen)) return -1;
        if (scene_prepare(*out, cpu_kernels_get()->bvh_width, err, errlen)) {
            scene_destroy(*out);
            return -1;
        }
        return 0;
    }
    scene *s = scene_create();
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo_tex = -1;
    m.albedo = v3s(0.5f);
    int mat = scene_add_material(s, "default", m);
    int rc;
    if (len > 4 && !strcasecmp(path + len - 4, ".ply"))
        rc = scene_load_ply(s, path, xform_identity(), mat, err, errlen);
    else
        rc = scene_load_obj(s, path, xform_identity(), mat, err, errlen);
    if (rc || scene_prepare(s, cpu_kernels_get()->bvh_width, err, errlen)) {
        scene_destroy(s);
        return -1;
    }
    *out = s;
    return 0;
}

int cmd_bench_rays(int argc, char **argv) {
    long res = 1024, runs = 5, threads = cpu_core_count();
    int json = 0, inside = 0, gpu = 0;
    const char *write_dir = NULL;
    unsigned bvh_set = 1u << CUDA_BVH_SAH; /* the GPU layouts to measure, one bit per CUDA_BVH_* */
    const char *meshes[64];
    int nmeshes = 0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_rays, stdout);
            return 0;
        }
        if (!strcmp(a, "--rays")) continue;
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!strcmp(a, "--inside")) {
            inside = 1;
            continue;
        }
        if (!strcmp(a, "--write-rays")) {
            if (!v) {
                fprintf(stderr, "caustic-bench-rays: --write-rays needs a directory\n");
                return EXIT_USAGE;
            }
            write_dir = v;
            i++;
            continue;
        }
        if (!strcmp(a, "--cpu-time")) {
            use_cpu_time = 1;
            continue;
        }
        if (!strcmp(a, "--interleave")) {
            interleave = 1;
            continue;
        }
        if (!strcmp(a, "--device")) {
            if (!v || (strcmp(v, "cpu") && strcmp(v, "cuda"))) {
                fprintf(stderr, "caustic-bench-rays: --device: expected cpu or cuda\n");
                return EXIT_USAGE;
            }
            gpu = !strcmp(v, "cuda");
            i++;
            continue;
        }
        if (!strcmp(a, "--gpu-bvh")) {
            bvh_set = 0;
            for (const char *t = v; t && *t; t += strcspn(t, ",") + (t[strcspn(t, ",")] == ',')) {
                size_t l = strcspn(t, ",");
                unsigned bit = l == 3 && !strncmp(t, "sah", 3)     ? 1u << CUDA_BVH_SAH
                               : l == 4 && !strncmp(t, "lbvh", 4)  ? 1u << CUDA_BVH_LBVH
                               : l == 5 && !strncmp(t, "cwbvh", 5) ? 1u << CUDA_BVH_CW8
                               : l == 3 && !strncmp(t, "all", 3)   ? 7u
                               : l == 4 && !strncmp(t, "both", 4)  ? 1u << CUDA_BVH_SAH | 1u << CUDA_BVH_LBVH
                                                                   : 0u;
                if (!bit) {
                    bvh_set = 0;
                    break;
                }
                bvh_set |= bit;
            }
            if (!bvh_set) {
                fprintf(stderr, "caustic-bench-rays: --gpu-bvh: expected a list of sah, lbvh, cwbvh, both or all\n");
                return EXIT_USAGE;
            }
            i++;
            continue;
        }
        if (a[0] == '-') {
            long *dst = !strcmp(a, "--res")       ? &res
                        : !strcmp(a, "--runs")    ? &runs
                        : !strcmp(a, "--threads") ? &threads
                                                  : NULL;
            long hi = dst == &res ? 8192 : dst == &runs ? 63 : 256;
            if (!dst) {
                fprintf(stderr, "caustic-bench-rays: unknown option '%s'\n", a);
                return EXIT_USAGE;
            }
            if (parse_int(v, 1, hi, dst)) {
                fprintf(stderr, "caustic-bench-rays: %s: '%s' is not in 1..%ld\n", a, v ? v : "", hi);
                return EXIT_USAGE;
            }
            i++;
            continue;
        }
        if (nmeshes < 64) meshes[nmeshes++] = a;
    }
    if (nmeshes == 0) {
        fprintf(stderr, "caustic-bench-rays: give at least one mesh (.obj or .ply)\n");
        return EXIT_USAGE;
    }
    if (!json && !gpu) {
        const cpu_kernels *ck = cpu_kernels_get();
        printf("# CPU kernel ISA: %s (%s)\n", ck->name, ck->desc);
    }
    if (!json && !gpu)
        printf("%-18s %-8s %9s %9s %16s %10s %10s | %-14s %9s %10s %10s %7s %7s\n", "mesh", "rays", "count", "hits",
               "t_checksum", "1T_Mray/s", "NT_Mray/s", "reference", "hits", "1T_Mray/s", "NT_Mray/s", "ratio1",
               "ratioN");
    for (int m = 0; m < nmeshes; ++m) {
        char err[1024];
        scene *s;
        double t0 = timer_now();
        if (load_mesh(&s, meshes[m], err, sizeof err)) {
            fprintf(stderr, "caustic: %s\n", err);
            return EXIT_USAGE;
        }
        double load_s = timer_now() - t0;
        ray_set sets[3];
        if (make_sets(s, (int)res, inside, sets)) {
            fprintf(stderr, "caustic-bench-rays: out of memory\n");
            scene_destroy(s);
            return EXIT_RUNTIME;
        }
        for (int k = 0; write_dir && k < 3; ++k)
            if (write_set(write_dir, meshes[m], &sets[k], json)) {
                for (int j = 0; j < 3; ++j) free_set(&sets[j]);
                scene_destroy(s);
                return EXIT_RUNTIME;
            }
        if (gpu) {
            char gerr[512];
            static const int order[3] = {CUDA_BVH_SAH, CUDA_BVH_CW8, CUDA_BVH_LBVH};
            static const char *const bvh_name[3] = {"sah", "lbvh", "cwbvh"};
            for (int oi = 0; oi < 3; ++oi) {
                int bv = order[oi];
                if (!(bvh_set >> bv & 1u)) continue;
                cuda_config cfg;
                memset(&cfg, 0, sizeof cfg);
                cfg.bvh = bv;
                int width = bv == CUDA_BVH_CW8 ? BVH8_WIDTH : BVH4_WIDTH;
                const bvh *tree = bv != CUDA_BVH_LBVH ? scene_bvh(s, width, CUDA_SAH_LANES, gerr, sizeof gerr) : NULL;
                cuda_renderer *g = bv != CUDA_BVH_LBVH && !tree
                                       ? NULL
                                       : cuda_renderer_create(&s->k, tree, 8, 8, &cfg, gerr, sizeof gerr);
                if (!g) {
                    fprintf(stderr, "caustic: %s\n", gerr);
                    scene_destroy(s);
                    return EXIT_USAGE;
                }
                if (bv == CUDA_BVH_LBVH)
                    printf("# %s: LBVH built on the GPU in %.2f ms (bounds upload to nodes on the GPU; SAH on the "
                           "host: %.2f ms)\n",
                           meshes[m], cuda_renderer_bvh_seconds(g) * 1e3, s->bvh.build_seconds * 1e3);
                else {
                    /* the GPU's copy: its node layout and the leaf blocks */
                    double node_bytes =
                        (double)tree->nwnodes * (bv == CUDA_BVH_CW8 ? sizeof(cw8_node) : sizeof(bvh4_node));
                    double leaf_bytes = (double)tree->nleaf4 * sizeof(bvh_leaf4);
                    printf("# %s: %s: %zu nodes (%.1f MB) + %zu leaf blocks (%.1f MB) = %.1f bytes per triangle "
                           "(%zu triangles)\n",
                           meshes[m], bvh_name[bv], tree->nwnodes, node_bytes * 1e-6, tree->nleaf4, leaf_bytes * 1e-6,
                           (node_bytes + leaf_bytes) / (double)(s->ntriangles ? s->ntriangles : 1), s->ntriangles);
                }
                for (int k = 0; k < 3; ++k) {
                    double sec, tsum;
                    uint64_t hits;
                    /* the primary rays are a row-major image (the GPU's warps take them as 8x4 tiles) */
                    if (cuda_trace_rays(g, sets[k].o, sets[k].d, sets[k].tmax, sets[k].n, k == 0 ? (unsigned)res : 0u,
                                        sets[k].any_hit, (int)runs, &sec, &hits, &tsum, gerr, sizeof gerr)) {
                        fprintf(stderr, "caustic: %s\n", gerr);
                        break;
                    }
                    printf("%-18s %-8s %9zu %9llu %16.4f  GPU %-5s %10.1f Mrays/s (median of %ld, kernel time)\n",
                           meshes[m], sets[k].name, sets[k].n, (unsigned long long)hits, tsum, bvh_name[bv],
                           sets[k].n / sec * 1e-6, runs);
                }
                cuda_renderer_free(g);
            }
            for (int k = 0; k < 3; ++k) free_set(&sets[k]);
            scene_destroy(s);
            continue;
        }
        char ext_name[64];
        /* triangles are {v0,v1,v2,material}: give the reference a packed index buffer */
        uint32_t *idx = malloc(3 * s->ntriangles * sizeof(uint32_t));
        for (size_t t = 0; t < s->ntriangles; ++t)
            for (int c = 0; c < 3; ++c) idx[3 * t + c] = s->triangles[t].v[c];
        ext_tracer *ext = ext_tracer_create(s->positions, s->nvertices, idx, s->ntriangles, ext_name, sizeof ext_name);
        free(idx);
        const char *base = strrchr(meshes[m], '/');
        base = base ? base + 1 : meshes[m];
        if (!json)
            fprintf(
                stdout,
                "# %s: %zu triangles, load %.2f s, BVH %zu %d-wide nodes built in %.3f s, SAH %.1f (binary %.1f), "
                "%zu leaf blocks, %.1f bytes/tri (nodes + leaf blocks and their positions + triangles + positions)\n",
                base, s->ntriangles, load_s, s->bvh.nwnodes, s->bvh.width, s->bvh.build_seconds, s->bvh.wide_sah_cost,
                s->bvh.sah_cost, s->bvh.nleaf4,
                (double)(s->bvh.nwnodes * bvh_wnode_size(s->bvh.width) +
                         s->bvh.nleaf4 *
                             (sizeof(bvh_leaf4) + (s->bvh.leaf_pos ? BVH_LEAF_POS_FLOATS * sizeof(float) : 0)) +
                         s->ntriangles * sizeof(triangle) + s->nvertices * sizeof(vec3)) /
                    (double)s->ntriangles);
        for (int k = 0; k < 3; ++k) {
            size_t hits, ehits = 0;
            double tsum, etsum = 0, e1 = 0, en = 0;
            double r1 = 0;
            if (interleave && ext)
                interleaved_1t(&s->k, ext, &sets[k], (int)runs, &r1, &e1, &hits, &tsum, &ehits, &etsum);
            else
                r1 = median_mrays(&s->k, NULL, &sets[k], 1, (int)runs, &hits, &tsum);
            double rn = median_mrays(&s->k, NULL, &sets[k], (int)threads, (int)runs, &hits, &tsum);
            if (ext) {
                if (!interleave) e1 = median_mrays(&s->k, ext, &sets[k], 1, (int)runs, &ehits, &etsum);
                en = median_mrays(&s->k, ext, &sets[k], (int)threads, (int)runs, &ehits, &etsum);
            }
            if (json)
                printf("{\"mesh\":\"%s\",\"isa\":\"%s\",\"triangles\":%zu,\"rays\":\"%s\",\"count\":%zu,\"hits\":%zu,"
                       "\"t_checksum\":%.6f,"
                       "\"mrays_1t\":%.3f,\"mrays_nt\":%.3f,\"threads\":%ld,\"reference\":\"%s\",\"ref_hits\":%zu,"
                       "\"ref_t_checksum\":%.6f,\"ref_mrays_1t\":%.3f,\"ref_mrays_nt\":%.3f}\n",
                       base, cpu_kernels_get()->name, s->ntriangles, sets[k].name, sets[k].n, hits, tsum, r1, rn,
                       threads, ext_name, ehits, etsum, e1, en);
            else
                printf("%-18s %-8s %9zu %9zu %16.4f %10.2f %10.2f | %-14s %9zu %10.2f %10.2f %7.2f %7.2f\n", base,
                       sets[k].name, sets[k].n, hits, tsum, r1, rn, ext_name, ehits, e1, en, e1 > 0 ? r1 / e1 : 0.0,
                       en > 0 ? rn / en : 0.0);
            fflush(stdout);
        }
        ext_tracer_free(ext);
        for (int k = 0; k < 3; ++k) free_set(&sets[k]);
        scene_destroy(s);
    }
    return 0;
}
