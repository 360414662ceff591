/* The render that fuzz_checkpoint.c and tests/test_checkpoint.c resume: a 4x3 film and fixed
 * settings, so that the seed corpus (fuzz/corpus_checkpoint, written by test_checkpoint
 * --write-seeds DIR) matches the target's expectations. */
#ifndef CAUSTIC_FUZZ_CHECKPOINT_FIXTURE_H
#define CAUSTIC_FUZZ_CHECKPOINT_FIXTURE_H

#include <string.h>

#include "api/checkpoint.h"

enum { FIXTURE_W = 4, FIXTURE_H = 3, FIXTURE_SPP = 64 };

static inline void fixture_settings(ckpt_settings *s, int adaptive) {
    memset(s, 0, sizeof *s);
    s->pass.cam.width = FIXTURE_W;
    s->pass.cam.height = FIXTURE_H;
    s->pass.seed = 7;
    s->pass.max_depth = 5;
    s->pass.rr_depth = 3;
    s->pass.adaptive_threshold = adaptive ? 0.05f : 0.0f;
}

#endif
