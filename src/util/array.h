/* Growable arrays: doubles the capacity, checks the multiplications for overflow. */
#ifndef CAUSTIC_UTIL_ARRAY_H
#define CAUSTIC_UTIL_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

/* Grows *arr (elements of `size` bytes) to hold at least `need`. Returns 0 or -1. */
static inline int array_grow(void **arr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2) return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / size) return -1;
    void *p = realloc(*arr, n * size);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}
#define GROW(arr, cap, need) array_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Error messages stay one printable line, whatever a path or a file held. */
static inline void text_one_line(char *s) {
    for (; *s; ++s)
        if ((unsigned char)*s < 32 || *s == 127) *s = '?';
}

#endif
