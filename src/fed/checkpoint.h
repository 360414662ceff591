/* Binary checkpoints and model files: the parameters, the optimizer state that must survive
 * a restart (server momentum / central velocity), the number of finished rounds or epochs,
 * and a fingerprint of the configuration so --resume refuses a different run.
 * Layout (little-endian): "FEDCKPT1" | u32 kind | u32 steps_done | u32 config_crc |
 * u32 nlayers | u32 sizes[MLP_MAX_LAYERS+1] | u64 nparams | u32 has_state | f64 elapsed |
 * f32 params[nparams] | f32 state[nparams] if has_state | u32 crc32 of all the above. */
#ifndef FED_CHECKPOINT_H
#define FED_CHECKPOINT_H

#include "mlp.h"

#include <stddef.h>
#include <stdint.h>

enum { CKPT_CENTRAL = 1, CKPT_FEDERATED = 2, CKPT_MODEL = 3 };

typedef struct {
    uint32_t kind;
    uint32_t steps_done;
    uint32_t config_crc;
    int nlayers;
    int sizes[MLP_MAX_LAYERS + 1];
    size_t nparams;
    float *params; /* nparams */
    float *state;  /* nparams or NULL */
    double elapsed;
} checkpoint;

/* Reader limits: --rounds/--epochs allow at most 100000; layer widths as --layers. */
#define CKPT_MAX_STEPS   100000u
#define CKPT_MAX_SECONDS 1e9

int ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen);
/* Allocates params/state; free with ckpt_free. Refuses (with a message naming path) a bad
 * magic or CRC, any field out of range, a size that does not match, non-finite values. */
int ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen);
/* The same on a file image in memory. */
int ckpt_parse(const uint8_t *buf, size_t n, const char *path, checkpoint *c, char *err, size_t errlen);
void ckpt_free(checkpoint *c);

#endif
