/* Argument parsing shared by the CLI's commands (cli/args.h). */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int parse_int(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int parse_size(const char *s, long lo, long hi, int *w, int *h) {
    const char *x = s ? strchr(s, 'x') : NULL;
    char first[32];
    long a, b;
    if (!x || (size_t)(x - s) >= sizeof first) return -1;
    memcpy(first, s, (size_t)(x - s));
    first[x - s] = 0;
    if (first[0] < '0' || first[0] > '9' || x[1] < '0' || x[1] > '9') return -1; /* no sign, no space */
    if (parse_int(first, lo, hi, &a) || parse_int(x + 1, lo, hi, &b)) return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

int has_image_extension(const char *path) {
    size_t n = strlen(path);
    const char *ext = n >= 4 ? path + n - 4 : "";
    return !strcasecmp(ext, ".png") || !strcasecmp(ext, ".exr") || !strcasecmp(ext, ".pfm");
}

double cli_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
