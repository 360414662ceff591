/* Small shared helpers: growable arrays (capacity doubling with overflow checks) and the text
 * handling of loader messages. */
#ifndef CAUSTIC_UTIL_ARRAY_H
#define CAUSTIC_UTIL_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Line-oriented text formats (OBJ, MTL): blanks are space, tab, CR, FF, VT. */
static inline int text_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static inline char *text_skip_space(char *p) {
    while (text_is_space(*p)) ++p;
    return p;
}
static inline void text_rtrim(char *p) { /* trailing blanks, in place */
    size_t n = strlen(p);
    while (n && text_is_space(p[n - 1])) p[--n] = '\0';
}
static inline char *text_dup(const char *s) {
    size_t n = strlen(s);
    char *d = (char *)malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* Error messages stay one printable line, whatever a path or a file held. */
static inline void text_one_line(char *s) {
    for (; *s; ++s)
        if ((unsigned char)*s < 32 || *s == 127) *s = '?';
}

/* Adds keyword kw[0..n) (printable, at most 24 chars) to the space-separated set `list` of
 * capacity `cap`, unless it is already there or the set is full: for "ignored: a b c" warnings. */
static inline void text_keyword_set_add(char *list, size_t cap, const char *kw, size_t n) {
    if (n > 24) n = 24;
    const char *h = list;
    while (*h) {
        const char *e = strchr(h, ' ');
        size_t m = e ? (size_t)(e - h) : strlen(h);
        if (m == n && memcmp(h, kw, n) == 0) return;
        h = e ? e + 1 : h + m;
    }
    size_t used = strlen(list);
    if (used + n + 2 >= cap) return;
    if (used) list[used++] = ' ';
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)kw[i];
        list[used++] = (c < 33 || c > 126) ? '?' : (char)c;
    }
    list[used] = '\0';
}

#endif
