/* The bidirectional kernels read instanced scenes too (a two-level BVH; for a scene without
 * instances the traversal's one test of kscene.ninstances is all it costs). render_vcm_media.c
 * defines its own features (media too) before including this file. */
#ifndef KERNEL_FEATURES
#define KERNEL_FEATURES (KF_ALL | KF_INSTANCES)
#endif
#include "cpu/render_vcm.h"

#include <stdlib.h>
#include <string.h>

#include "cpu/isa.h"
#include "kernel/film.h"
#include "kernel/vcm.h"
#include "util/array.h"

/* This file is compiled twice per ISA level: as itself (KERNEL_MEDIA 0, surfaces only) and by
 * render_vcm_media.c (KERNEL_MEDIA 1: the sub-paths sample medium vertices, kernel/vcm.h's
 * "Media"), so that scenes without media keep their code. The create entry of the surface build
 * hands a scene with media to the media build's, and run follows the renderer's `media`. */
#if KERNEL_MEDIA
#define VCM_FN(name) CPU_ISA_FN(name##_media)
#else
#define VCM_FN(name) CPU_ISA_FN(name)
#endif

/* Light sub-paths are traced in fixed chunks of path indices; each chunk keeps its vertices (the
 * camera jobs read them there) and its splats are added in chunk order afterwards, so the result
 * is independent of which thread traced which chunk. */
#define CHUNK        256
#define ROWS_PER_JOB 4
#define MERGE_BLOCK  1024 /* sorted merge queries per job of the merge pass */

/* What one camera job (ROWS_PER_JOB rows) leaves for the merge pass: its merge queries in
 * camera order, with the grid bucket of each (the sort key). */
typedef struct camera_buf {
    vcm_merge_query *queries;
    size_t cap;
    uint32_t *bucket;
    size_t cap_bucket;
    uint32_t nqueries;
    uint64_t rays;
    int oom;
} camera_buf;

typedef struct chunk_buf {
    vcm_vertex *verts;
    size_t nverts, cap_verts;
    vcm_splat *splats;
    size_t nsplats, cap_splats;
    /* the vertices that merge (vcm_vertex_merges), as the grid stores them: a few of all */
    vec3 *ppos;
    size_t cap_ppos;
    vcm_photon *photons;
    size_t nphotons, cap_photons;
    uint64_t rays;
    int oom;
} chunk_buf;

struct vcm_renderer {
    const kscene *s;
    const atomic_int *cancel; /* caustic_cancel's flag during vcm_renderer_run, or NULL */
    camera cam;
    int algorithm, max_path_length;
    float radius, alpha;
    int merge_everywhere;
    uint32_t seed;
    int media; /* made by the media build (render_vcm_media.c), which runs it */
    int w, h;
    uint32_t npaths, nchunks;
    chunk_buf *chunks;
    uint32_t *path_count; /* light vertices per path */
    uint32_t *path_start; /* where each path's vertices start in its chunk's verts */
    uint32_t *cell_start;
    size_t cap_cells;
    vec3 *cell_pos;
    size_t cap_pos; /* the grid's positions and photons, bucket order */
    vcm_photon *cell_photons;
    size_t cap_photons;
    float *image;     /* this iteration's estimate */
    camera_buf *cams; /* per camera job (ROWS_PER_JOB rows) */
    unsigned ncams;
    /* deferred merging: the camera jobs' queries, sorted by grid bucket */
    vcm_merge_query *queries;
    size_t nqueries, cap_queries; /* sorted by bucket */
    uint32_t *query_pixel;
    size_t cap_query_pixel; /* pixel of each query, original order */
    uint32_t *query_order;
    size_t cap_query_order; /* original index of each sorted query */
    vec3 *query_result;
    size_t cap_query_result; /* per query, original order */
    uint32_t *bucket_count;
    size_t cap_bucket_count; /* counting sort of the queries */
    uint32_t *photon_bucket;
    size_t cap_photon_bucket; /* grid bucket of each merging vertex */
    uint32_t *cursor;
    size_t cap_cursor; /* grid scatter */
    /* per iteration */
    vcm_params params;
    vcm_grid grid;
    uint32_t iteration;
};

/* caustic_cancel: the jobs of an iteration that was cancelled do nothing, and the iteration is
 * dropped whole (the film keeps whole iterations: every pixel the same count). */
static int cancelled(const vcm_renderer *v) {
    return v->cancel && atomic_load_explicit(v->cancel, memory_order_relaxed);
}

static void light_job(void *ctx, unsigned chunk, int thread) {
    (void)thread;
    vcm_renderer *v = ctx;
    chunk_buf *c = &v->chunks[chunk];
    c->nverts = c->nsplats = c->nphotons = 0;
    c->rays = 0;
    c->oom = 0;
    if (cancelled(v)) return;
    int maxv = v->max_path_length + 1;
    uint32_t end = (chunk + 1) * CHUNK < v->npaths ? (chunk + 1) * CHUNK : v->npaths;
    uint64_t seed = vcm_iteration_seed(v->seed, v->iteration);
    for (uint32_t i = chunk * CHUNK; i < end; ++i) {
        if (GROW(c->verts, c->cap_verts, c->nverts + (size_t)maxv) ||
            GROW(c->splats, c->cap_splats, c->nsplats + (size_t)maxv)) {
            c->oom = 1;
            return;
        }
        pcg32 rng = vcm_light_rng(seed, i);
        v->path_start[i] = (uint32_t)c->nverts;
        int nv, ns;
        uint32_t rays = 0;
        vcm_trace_light_path(v->s, &v->params, &rng, c->verts + c->nverts, &nv, c->splats + c->nsplats, &ns, &rays);
        for (int k = 0; v->params.use_vm && k < nv; ++k) {
            const vcm_vertex *x = &c->verts[c->nverts + (size_t)k];
            if (!vcm_vertex_merges(&v->params, x)) continue;
            if (GROW(c->ppos, c->cap_ppos, c->nphotons + 1) || GROW(c->photons, c->cap_photons, c->nphotons + 1)) {
                c->oom = 1;
                return;
            }
            c->ppos[c->nphotons] = x->p;
            c->photons[c->nphotons++] = vcm_photon_of(x);
        }
        c->nverts += (size_t)nv;
        c->nsplats += (size_t)ns;
        v->path_count[i] = (uint32_t)nv;
        c->rays += rays;
    }
}

static void camera_job(void *ctx, unsigned job, int thread) {
    (void)thread;
    vcm_renderer *v = ctx;
    uint64_t seed = vcm_iteration_seed(v->seed, v->iteration);
    uint64_t rays_total = 0;
    camera_buf *cb = &v->cams[job];
    cb->nqueries = 0;
    cb->oom = 0;
    if (cancelled(v)) return;
    uint32_t nq = 0;
    int merging = v->params.use_vm && v->grid.ncells > 0;
    int y1 = (int)(job + 1) * ROWS_PER_JOB < v->h ? (int)(job + 1) * ROWS_PER_JOB : v->h;
    for (int y = (int)job * ROWS_PER_JOB; y < y1; ++y) {
        for (int x = 0; x < v->w; ++x) {
            uint32_t pix = (uint32_t)y * (uint32_t)v->w + (uint32_t)x;
            /* room for one merge query per camera vertex */
            if (merging && (GROW(cb->queries, cb->cap, (size_t)nq + (size_t)v->max_path_length + 1) ||
                            GROW(cb->bucket, cb->cap_bucket, cb->cap))) {
                cb->oom = 1;
                return;
            }
            pcg32 rng = vcm_camera_rng(seed, pix);
            uint32_t rays = 0;
            vec3 c = vcm_trace_camera_path(v->s, &v->params, &rng, x, y,
                                           v->chunks[pix / CHUNK].verts + v->path_start[pix], (int)v->path_count[pix],
                                           &v->grid, cb->queries, &nq, merging ? (uint32_t)cb->cap : 0u, &rays);
            if (vis_finite(c)) {
                float *o = v->image + 3u * pix;
                o[0] += c.x;
                o[1] += c.y;
                o[2] += c.z;
            }
            rays_total += rays;
        }
    }
    /* the sort key, here where the queries are still in cache and the work is parallel */
    for (uint32_t l = 0; l < nq; ++l) cb->bucket[l] = vcm_grid_cell_of(&v->grid, cb->queries[l].p);
    cb->nqueries = nq;
    cb->rays = rays_total;
}

/* Evaluates one block of bucket-sorted merge queries; each result goes to the slot of the
 * query's original index. */
static void merge_job(void *ctx, unsigned block, int thread) {
    (void)thread;
    vcm_renderer *v = ctx;
    size_t k0 = (size_t)block * MERGE_BLOCK;
    size_t k1 = k0 + MERGE_BLOCK < v->nqueries ? k0 + MERGE_BLOCK : v->nqueries;
    for (size_t k = k0; k < k1; ++k)
        v->query_result[v->query_order[k]] = vcm_merge_query_eval(v->s, &v->grid, &v->params, &v->queries[k]);
}

/* Merging after the camera pass: counting-sort the queries (in camera job order) by grid bucket
 * into one array, so that queries reading the same photons run together and read their own
 * records in order; evaluate in parallel, then add the results to the pixels in the original
 * order (deterministic, independent of the thread count). */
static int merge_pass(vcm_renderer *v, cpu_pool *pool) {
    size_t total = 0;
    for (unsigned j = 0; j < v->ncams; ++j) {
        if (v->cams[j].oom) return -1;
        total += v->cams[j].nqueries;
    }
    v->nqueries = 0;
    if (total == 0) return 0;
    if (total > UINT32_MAX || GROW(v->queries, v->cap_queries, total) ||
        GROW(v->query_pixel, v->cap_query_pixel, total) || GROW(v->query_order, v->cap_query_order, total) ||
        GROW(v->query_result, v->cap_query_result, total) ||
        GROW(v->bucket_count, v->cap_bucket_count, (size_t)v->grid.ncells + 1))
        return -1;
    uint32_t ncells = v->grid.ncells;
    uint32_t *cnt = v->bucket_count;
    memset(cnt, 0, ((size_t)ncells + 1) * sizeof(uint32_t));
    size_t g = 0;
    for (unsigned j = 0; j < v->ncams; ++j) {
        const vcm_merge_query *q = v->cams[j].queries;
        const uint32_t *bucket = v->cams[j].bucket;
        for (uint32_t l = 0; l < v->cams[j].nqueries; ++l, ++g) {
            v->query_pixel[g] = q[l].pixel;
            cnt[bucket[l] + 1]++;
        }
    }
    for (uint32_t c = 0; c < ncells; ++c) cnt[c + 1] += cnt[c];
    g = 0;
    for (unsigned j = 0; j < v->ncams; ++j) {
        const vcm_merge_query *q = v->cams[j].queries;
        const uint32_t *bucket = v->cams[j].bucket;
        for (uint32_t l = 0; l < v->cams[j].nqueries; ++l, ++g) {
            uint32_t k = cnt[bucket[l]]++;
            v->queries[k] = q[l];
            v->query_order[k] = (uint32_t)g;
        }
    }
    v->nqueries = total;
    unsigned blocks = (unsigned)((total + MERGE_BLOCK - 1) / MERGE_BLOCK);
    cpu_pool_parallel_for(pool, blocks, merge_job, v);
    for (size_t i = 0; i < total; ++i) {
        vec3 c = v->query_result[i];
        float *o = v->image + 3u * v->query_pixel[i];
        o[0] += c.x;
        o[1] += c.y;
        o[2] += c.z;
    }
    return 0;
}

/* Hash grid over the light vertices that merge (the light jobs collected them per chunk): count
 * per cell, exclusive prefix sum, scatter, all in chunk order (deterministic). */
static int build_grid(vcm_renderer *v, float radius) {
    vcm_grid *g = &v->grid;
    memset(g, 0, sizeof *g);
    if (!v->params.use_vm) return 0;
    size_t n = 0;
    for (uint32_t c = 0; c < v->nchunks; ++c) n += v->chunks[c].nphotons;
    if (n == 0) return 0;
    *g = vcm_grid_make(v->s, radius, n);
    if (GROW(v->cell_start, v->cap_cells, (size_t)g->ncells + 1) || GROW(v->cell_photons, v->cap_photons, n) ||
        GROW(v->cell_pos, v->cap_pos, n) || GROW(v->photon_bucket, v->cap_photon_bucket, n) ||
        GROW(v->cursor, v->cap_cursor, g->ncells))
        return -1;
    memset(v->cell_start, 0, ((size_t)g->ncells + 1) * sizeof(uint32_t));
    size_t k = 0;
    for (uint32_t c = 0; c < v->nchunks; ++c) { /* each vertex hashed once */
        const chunk_buf *b = &v->chunks[c];
        for (size_t i = 0; i < b->nphotons; ++i, ++k) {
            uint32_t h = vcm_grid_cell_of(g, b->ppos[i]);
            v->photon_bucket[k] = h;
            v->cell_start[h + 1]++;
        }
    }
    for (uint32_t c = 0; c < g->ncells; ++c) v->cell_start[c + 1] += v->cell_start[c];
    /* scatter with a running cursor per cell (vertex order within a bucket: deterministic) */
    uint32_t *cursor = v->cursor;
    memcpy(cursor, v->cell_start, (size_t)g->ncells * sizeof(uint32_t));
    k = 0;
    for (uint32_t c = 0; c < v->nchunks; ++c) {
        const chunk_buf *b = &v->chunks[c];
        for (size_t i = 0; i < b->nphotons; ++i, ++k) {
            uint32_t q = cursor[v->photon_bucket[k]]++;
            v->cell_pos[q] = b->ppos[i];
            v->cell_photons[q] = b->photons[i];
        }
    }
    g->cell_start = v->cell_start;
    g->photons = v->cell_photons;
    g->positions = v->cell_pos;
    return 0;
}

vcm_renderer *VCM_FN(vcm_renderer_create)(const kscene *s, const camera *cam, int algorithm, int max_path_length,
                                          float radius, float alpha, int merge_everywhere, uint32_t seed) {
#if !KERNEL_MEDIA
    if (kscene_features(s) & KF_MEDIA)
        return CPU_ISA_FN(vcm_renderer_create_media)(s, cam, algorithm, max_path_length, radius, alpha,
                                                     merge_everywhere, seed);
#endif
    vcm_renderer *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->media = KERNEL_MEDIA;
    v->s = s;
    v->cam = *cam;
    v->algorithm = algorithm;
    v->max_path_length = max_path_length;
    v->radius = radius;
    v->alpha = alpha;
    v->merge_everywhere = merge_everywhere;
    v->seed = seed;
    v->w = cam->width;
    v->h = cam->height;
    v->npaths = (uint32_t)v->w * (uint32_t)v->h;
    v->nchunks = (v->npaths + CHUNK - 1) / CHUNK;
    v->chunks = calloc(v->nchunks, sizeof(chunk_buf));
    v->path_count = calloc(v->npaths, sizeof(uint32_t));
    v->path_start = calloc(v->npaths, sizeof(uint32_t));
    v->image = calloc((size_t)v->npaths * 3u, sizeof(float));
    v->ncams = (unsigned)(v->h + ROWS_PER_JOB - 1) / ROWS_PER_JOB;
    v->cams = calloc(v->ncams, sizeof(camera_buf));
    if (!v->chunks || !v->path_count || !v->path_start || !v->image || !v->cams) {
        CPU_ISA_FN(vcm_renderer_free)(v);
        return NULL;
    }
    return v;
}

static int run_iteration(vcm_renderer *v, cpu_pool *pool, uint32_t iteration, uint64_t *rays) {
    float radius = vcm_iteration_radius(v->radius, v->alpha, iteration);
    v->params =
        vcm_make_params(v->algorithm, v->max_path_length, radius, (float)v->npaths, v->merge_everywhere, &v->cam);
    v->iteration = iteration;
    memset(v->image, 0, (size_t)v->npaths * 3u * sizeof(float));

    cpu_pool_parallel_for(pool, v->nchunks, light_job, v);
    for (uint32_t c = 0; c < v->nchunks; ++c) {
        if (v->chunks[c].oom) return -1;
        *rays += v->chunks[c].rays;
    }
    if (cancelled(v)) return 0;
    /* the camera jobs read each path's vertices where its light job left them (path_start) */
    for (uint32_t c = 0; c < v->nchunks; ++c) {
        const chunk_buf *b = &v->chunks[c];
        /* splats in path order: deterministic sums */
        for (size_t k = 0; k < b->nsplats; ++k) {
            float *o = v->image + 3u * b->splats[k].pixel;
            o[0] += b->splats[k].value.x;
            o[1] += b->splats[k].value.y;
            o[2] += b->splats[k].value.z;
        }
    }
    if (build_grid(v, radius)) return -1;

    cpu_pool_parallel_for(pool, v->ncams, camera_job, v);
    for (unsigned j = 0; j < v->ncams; ++j) *rays += v->cams[j].rays;
    if (cancelled(v)) return 0;
    return merge_pass(v, pool);
}

/* One row of an iteration into the film (rows in parallel: each pixel's sums stay in order). */
typedef struct film_job {
    vcm_renderer *v;
    const kfilm *film;
    uint32_t it;
} film_job;

static void film_row_job(void *ctx, unsigned y, int thread) {
    (void)thread;
    const film_job *j = ctx;
    const vcm_renderer *v = j->v;
    for (int x = 0; x < v->w; ++x) {
        uint32_t i = y * (uint32_t)v->w + (uint32_t)x;
        const float *c = v->image + 3u * i;
        aov_sample a;
        if (j->film->aov) a = aov_camera_sample(v->s, &v->cam, x, (int)y, j->it, v->seed);
        film_add_iteration(j->film, i, v3(c[0], c[1], c[2]), j->film->aov ? &a : NULL);
    }
}

int VCM_FN(vcm_renderer_run)(vcm_renderer *v, cpu_pool *pool, const camera *cam, uint32_t first, uint32_t count,
                             const atomic_int *cancel, const kfilm *film, uint64_t *rays) {
#if !KERNEL_MEDIA
    if (v->media) return CPU_ISA_FN(vcm_renderer_run_media)(v, pool, cam, first, count, cancel, film, rays);
#endif
    if (cam->width != v->w || cam->height != v->h) return -1;
    v->cam = *cam;
    v->cancel = cancel;
    /* an iteration (one sample of every pixel) is the safe point: a cancelled one is dropped */
    for (uint32_t it = first; it < first + count && !cancelled(v); ++it) {
        if (run_iteration(v, pool, it, rays)) return -1;
        if (cancelled(v)) break;
        film_job j = {v, film, it};
        cpu_pool_parallel_for(pool, (unsigned)v->h, film_row_job, &j);
    }
    return 0;
}

#if !KERNEL_MEDIA /* one free for both builds: the same struct and buffers */
void CPU_ISA_FN(vcm_renderer_free)(vcm_renderer *v) {
    if (!v) return;
    if (v->chunks)
        for (uint32_t c = 0; c < v->nchunks; ++c) {
            chunk_buf *b = &v->chunks[c];
            free(b->verts);
            free(b->splats);
            free(b->ppos);
            free(b->photons);
        }
    free(v->chunks);
    free(v->path_count);
    free(v->path_start);
    free(v->cell_start);
    free(v->cell_photons);
    free(v->cell_pos);
    free(v->image);
    if (v->cams)
        for (unsigned j = 0; j < v->ncams; ++j) {
            free(v->cams[j].queries);
            free(v->cams[j].bucket);
        }
    free(v->cams);
    free(v->queries);
    free(v->query_order);
    free(v->query_pixel);
    free(v->query_result);
    free(v->bucket_count);
    free(v->photon_bucket);
    free(v->cursor);
    free(v);
}
#endif
