#include "cpu/render_cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/isa.h"

#define TILE 32

struct cpu_pool {
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    uint64_t generation; /* bumped for every pass */
    int pending;         /* workers still busy with the current pass */
    int quit;
    const cpu_pass *pass; /* a render pass, or */
    cpu_job_fn job;       /* a parallel-for over job_n items */
    void *job_ctx;
    unsigned job_n;
    atomic_uint next_item; /* dynamic schedules: next work item */
    cpu_pass_stats sum;    /* summed under lock */
};

typedef struct worker_arg {
    cpu_pool *pool;
    int index;
} worker_arg;

int cpu_core_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void run_worker(cpu_pool *pool, int index) {
    if (pool->job) {
        for (unsigned i; (i = atomic_fetch_add(&pool->next_item, 1u)) < pool->job_n;)
            pool->job(pool->job_ctx, i, index);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->lock);
        return;
    }
    const cpu_pass *p = pool->pass;
    /* the kernel with media columns, instances and the path's wavelength only for a scene that has
     * them (kernel/features.h, KF_MEDIA, KF_INSTANCES, KF_DISPERSION) */
    void (*const render_rect)(const cpu_pass *, int, int, int, int, cpu_pass_stats *) =
        p->scene->nmedia || p->scene->ninstances || p->scene->has_dispersion ? cpu_kernels_get()->render_rect_media
                                                                             : cpu_kernels_get()->render_rect;
    cpu_pass_stats st = {0, 0, 0, 0};
    /* the film's pixels [ox, ox + w) x [oy, oy + h) of the image */
    int w = p->film.width, h = p->film.height, ox = p->x0, oy = p->y0;
    /* caustic_cancel: checked before every work item, so a cancelled pass leaves whole pixels */
#define CANCELLED (p->cancel && atomic_load_explicit(p->cancel, memory_order_relaxed))
    switch (p->schedule) {
    case CPU_ROWS_STATIC: {
        int y0 = (int)((int64_t)h * index / pool->nthreads), y1 = (int)((int64_t)h * (index + 1) / pool->nthreads);
        for (int y = y0; y < y1 && !CANCELLED; ++y) render_rect(p, ox, oy + y, ox + w, oy + y + 1, &st);
        break;
    }
    case CPU_ROWS:
        for (unsigned y; !CANCELLED && (y = atomic_fetch_add(&pool->next_item, 1u)) < (unsigned)h;)
            render_rect(p, ox, oy + (int)y, ox + w, oy + (int)y + 1, &st);
        break;
    case CPU_PIXELS:
        for (unsigned i; !CANCELLED && (i = atomic_fetch_add(&pool->next_item, 1u)) < (unsigned)(w * h);)
            render_rect(p, ox + (int)(i % (unsigned)w), oy + (int)(i / (unsigned)w), ox + (int)(i % (unsigned)w) + 1,
                        oy + (int)(i / (unsigned)w) + 1, &st);
        break;
    default: {
        unsigned tx = (unsigned)(w + TILE - 1) / TILE, ty = (unsigned)(h + TILE - 1) / TILE;
        for (unsigned t; !CANCELLED && (t = atomic_fetch_add(&pool->next_item, 1u)) < tx * ty;) {
            int x0 = (int)(t % tx) * TILE, y0 = (int)(t / tx) * TILE;
            render_rect(p, ox + x0, oy + y0, ox + (x0 + TILE < w ? x0 + TILE : w), oy + (y0 + TILE < h ? y0 + TILE : h),
                        &st);
        }
        break;
    }
    }
#undef CANCELLED
    pthread_mutex_lock(&pool->lock);
    pool->sum.rays += st.rays;
    pool->sum.shadow_rays += st.shadow_rays;
    pool->sum.bad_samples += st.bad_samples;
    pool->sum.samples += st.samples;
    if (--pool->pending == 0) pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->lock);
}

static void *worker_main(void *arg) {
    worker_arg a = *(worker_arg *)arg;
    free(arg);
    cpu_pool *pool = a.pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (!pool->quit && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->quit) {
            pthread_mutex_unlock(&pool->lock);
            return NULL;
        }
        seen = pool->generation;
        pthread_mutex_unlock(&pool->lock);
        run_worker(pool, a.index);
    }
}

cpu_pool *cpu_pool_create(int threads) {
    cpu_pool *pool = calloc(1, sizeof(*pool));
    if (!pool) return NULL;
    pool->nthreads = threads > 0 ? threads : cpu_core_count();
    pool->threads = calloc((size_t)pool->nthreads, sizeof(pthread_t));
    if (!pool->threads) {
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (int i = 0; i < pool->nthreads; ++i) {
        worker_arg *a = malloc(sizeof(*a));
        if (a) {
            a->pool = pool;
            a->index = i;
        }
        if (!a || pthread_create(&pool->threads[i], NULL, worker_main, a) != 0) {
            free(a);
            pool->nthreads = i;
            cpu_pool_destroy(pool);
            return NULL;
        }
    }
    return pool;
}

int cpu_pool_threads(const cpu_pool *p) { return p->nthreads; }

void cpu_pool_run(cpu_pool *pool, const cpu_pass *pass, cpu_pass_stats *stats) {
    pthread_mutex_lock(&pool->lock);
    pool->pass = pass;
    pool->job = NULL;
    memset(&pool->sum, 0, sizeof pool->sum);
    atomic_store(&pool->next_item, 0u);
    pool->pending = pool->nthreads;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
    *stats = pool->sum;
    pthread_mutex_unlock(&pool->lock);
}

void cpu_pool_parallel_for(cpu_pool *pool, unsigned n, cpu_job_fn fn, void *ctx) {
    pthread_mutex_lock(&pool->lock);
    pool->job = fn;
    pool->job_ctx = ctx;
    pool->job_n = n;
    atomic_store(&pool->next_item, 0u);
    pool->pending = pool->nthreads;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pool->job = NULL;
    pthread_mutex_unlock(&pool->lock);
}

void cpu_pool_destroy(cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nthreads; ++i) pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    free(pool->threads);
    free(pool);
}
