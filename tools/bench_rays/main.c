/* caustic-bench-rays: the traversal benchmark (docs/performance-log.md), a developer tool. It drives
 * the library's internals (scene builder, BVH, the ISA-dispatched kernels, the CUDA trace kernel)
 * directly, so it lives here and not in the CLI, which uses caustic.h only. */
#include <stdio.h>

#include "bench_rays.h"
#include "caustic.h"
#include "cli/cli.h"

int main(int argc, char **argv) {
    char err[256];
    if (!caustic_cpu_isa(err, sizeof err)) {
        fprintf(stderr, "caustic-bench-rays: %s\n", err);
        return EXIT_USAGE;
    }
    return cmd_bench_rays(argc - 1, argv + 1);
}
