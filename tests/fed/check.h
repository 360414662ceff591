/* Minimal assertions for fedtrain unit tests: print the failing line, count, exit 1 at end. */
#ifndef FED_TEST_CHECK_H
#define FED_TEST_CHECK_H
#include <stdio.h>
static int check_failures = 0;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                                                          \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g vs %s = %.9g (tol %g)\n", __FILE__, __LINE__, #a, a_, \
                    #b, b_, (double)(tol));                                                                            \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)
#define CHECK_DONE()                                                                                                   \
    do {                                                                                                               \
        if (check_failures)                                                                                            \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                                                   \
        else                                                                                                           \
            fprintf(stderr, "all checks passed\n");                                                                    \
        return check_failures ? 1 : 0;                                                                                 \
    } while (0)
#endif
