/* Linked into the tests that ctest runs once per CPU kernel level (CAUSTIC_ISA=sse / avx2,
 * tests/CMakeLists.txt): before main, exits 77 (skipped) when this CPU or build lacks the
 * requested level, instead of failing. Compiled at the library's baseline. */
#include <stdio.h>
#include <stdlib.h>

#include "cpu/isa.h"

__attribute__((constructor)) static void isa_guard(void) {
    const char *want = getenv("CAUSTIC_ISA");
#if defined(ISA_GUARD_REQUIRE)
    if (!want) want = ISA_GUARD_REQUIRE; /* a test binary compiled for that level */
#endif
    if (want && *want && !cpu_kernels_find(want)) {
        printf("SKIP: CPU kernel level '%s' is not available on this CPU / in this build\n", want);
        exit(77);
    }
}
