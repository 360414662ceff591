/* The GPU tests skip (exit 77: ctest's SKIP_RETURN_CODE for them) where no CUDA device exists. */
#ifndef CAUSTIC_TEST_CUDA_SKIP_H
#define CAUSTIC_TEST_CUDA_SKIP_H

#include <stdio.h>
#include <stdlib.h>

#include "cuda/render_cuda.h"

static inline void skip_without_cuda(void) {
    if (cuda_device_count() > 0) return;
    char buf[256];
    cuda_describe_devices(buf, sizeof buf);
    printf("SKIP: %s", buf);
    exit(77);
}

#endif
