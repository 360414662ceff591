#include "api/film_host.h"

#include <stdlib.h>
#include <string.h>

static size_t pixels(const kfilm *f) { return (size_t)f->width * (size_t)f->height; }

int film_host_alloc(kfilm *f, int width, int height, int aov) {
    size_t n = (size_t)width * (size_t)height;
    *f = (kfilm){
        .sum = calloc(3 * n, sizeof(double)),
        .count = calloc(n, sizeof(uint32_t)),
        .lum2 = calloc(n, sizeof(double)),
        .aov = aov ? calloc(AOV_FLOATS * n, sizeof(double)) : NULL,
        .width = width,
        .height = height,
    };
    if (f->sum && f->count && f->lum2 && (!aov || f->aov)) return 0;
    film_host_free(f);
    return -1;
}

void film_host_free(kfilm *f) {
    free(f->sum);
    free(f->count);
    free(f->lum2);
    free(f->aov);
    *f = (kfilm){.sum = NULL};
}

void film_host_copy(const kfilm *dst, const kfilm *src) {
    size_t n = pixels(dst);
    memcpy(dst->sum, src->sum, 3 * n * sizeof(double));
    memcpy(dst->count, src->count, n * sizeof(uint32_t));
    memcpy(dst->lum2, src->lum2, n * sizeof(double));
    if (dst->aov && src->aov) memcpy(dst->aov, src->aov, AOV_FLOATS * n * sizeof(double));
}

void film_host_clear(const kfilm *f) {
    size_t n = pixels(f);
    memset(f->sum, 0, 3 * n * sizeof(double));
    memset(f->count, 0, n * sizeof(uint32_t));
    memset(f->lum2, 0, n * sizeof(double));
    if (f->aov) memset(f->aov, 0, AOV_FLOATS * n * sizeof(double));
}
