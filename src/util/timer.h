/* Monotonic wall-clock seconds. */
#ifndef CAUSTIC_UTIL_TIMER_H
#define CAUSTIC_UTIL_TIMER_H
#include <time.h>
static inline double timer_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif
