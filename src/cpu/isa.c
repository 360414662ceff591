/* The CPU kernels' dispatcher (src/cpu/isa.h). Compiled at the library's baseline. */
#include "cpu/isa.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(CAUSTIC_ISA_DISPATCH) && defined(CAUSTIC_ISA_AVX512)
extern const cpu_kernels cpu_kernels_sse, cpu_kernels_avx2, cpu_kernels_avx512;
static const cpu_kernels *const all[] = {&cpu_kernels_sse, &cpu_kernels_avx2, &cpu_kernels_avx512};
#elif defined(CAUSTIC_ISA_DISPATCH)
extern const cpu_kernels cpu_kernels_sse, cpu_kernels_avx2;
static const cpu_kernels *const all[] = {&cpu_kernels_sse, &cpu_kernels_avx2};
#else
extern const cpu_kernels cpu_kernels_portable;
static const cpu_kernels *const all[] = {&cpu_kernels_portable};
#endif
#define NALL ((int)(sizeof all / sizeof all[0]))

static int supported(const cpu_kernels *k) {
#if defined(CAUSTIC_ISA_DISPATCH)
    if (k == &cpu_kernels_avx2) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
#endif
#if defined(CAUSTIC_ISA_DISPATCH) && defined(CAUSTIC_ISA_AVX512)
    if (k == &cpu_kernels_avx512) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("gfni");
    }
#endif
    (void)k;
    return 1; /* the baseline: what the whole binary is compiled for */
}

const cpu_kernels *const *cpu_kernels_all(int *n) {
    *n = NALL;
    return all;
}

const cpu_kernels *cpu_kernels_find(const char *name) {
    for (int i = 0; i < NALL; ++i)
        if (!strcmp(all[i]->name, name)) return supported(all[i]) ? all[i] : NULL;
    return NULL;
}

static const cpu_kernels *chosen;
static char chosen_err[160];

static void choose(void) {
    const char *want = getenv("CAUSTIC_ISA");
    if (want && *want) {
        for (int i = 0; i < NALL; ++i)
            if (!strcmp(all[i]->name, want)) {
                if (supported(all[i]))
                    chosen = all[i];
                else
                    snprintf(chosen_err, sizeof chosen_err, "CAUSTIC_ISA=%s: this CPU lacks that level (%s)", want,
                             all[i]->desc);
                return;
            }
        snprintf(chosen_err, sizeof chosen_err, "CAUSTIC_ISA=%s: not a CPU kernel level of this build (", want);
        for (int i = 0; i < NALL; ++i) {
            size_t l = strlen(chosen_err);
            snprintf(chosen_err + l, sizeof chosen_err - l, "%s%s", i ? ", " : "", all[i]->name);
        }
        strncat(chosen_err, ")", sizeof chosen_err - strlen(chosen_err) - 1);
        return;
    }
    for (int i = NALL - 1; i >= 0 && !chosen; --i)
        if (supported(all[i])) chosen = all[i];
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

int cpu_isa_check(char *err, size_t errlen) {
    pthread_once(&once, choose);
    if (chosen) return 0;
    snprintf(err, errlen, "%s", chosen_err);
    return -1;
}

/* The public entry points refuse a bad CAUSTIC_ISA through cpu_isa_check before anything calls
 * this; an internal caller that did not ask gets the baseline level (the library never exits). */
const cpu_kernels *cpu_kernels_get(void) {
    pthread_once(&once, choose);
    return chosen ? chosen : all[0];
}
