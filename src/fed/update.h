/* fedtrain's wire protocol on top of src/fed/mpi/msgframe.h: message kinds, tags, the layout of
 * a client update, and the server's acceptance rules for one received update frame.
 *
 * UPDATE payload (little-endian): update_meta (32 bytes) | f32 params[nparams]. */
#ifndef FED_UPDATE_H
#define FED_UPDATE_H

#include <stddef.h>
#include <stdint.h>

enum { FED_PROTO_VERSION = 2 }; /* 2: global model sent point to point, round deadlines */
enum { MSG_GLOBAL = 1, MSG_UPDATE = 2, MSG_SKIP = 3, MSG_STOP = 4 };
enum { TAG_GLOBAL = 16, TAG_UPDATE = 17 };

typedef struct {
    uint32_t client, n_samples, nparams, reserved;
    float train_loss, train_acc, train_seconds, lr;
} update_meta;

/* Frame size of an update carrying nparams parameters. */
size_t update_frame_bytes(size_t nparams);
/* Writes and seals an update frame (frame must hold update_frame_bytes(m->nparams)). */
size_t update_encode(uint8_t *frame, uint32_t round, const update_meta *m, const float *params);

/* What the server knows when a frame arrives. */
typedef struct {
    uint32_t round;      /* the round being gathered */
    int nclients, ranks; /* client c lives on rank host_rank(c, ranks) */
    int from_rank;       /* MPI source of the frame (0 in single-process mode) */
    size_t nparams;
    const int *shard_n;       /* samples the server assigned to each client */
    const uint8_t *selected;  /* per client: selected this round */
    const uint32_t *answered; /* per client: last round whose answer was taken (0 = none) */
    const float *global;      /* the global model the round started from */
    float max_abs;            /* bound on |parameter| (> 0) */
    float max_norm;           /* bound on ||update - global||_2, 0 = none */
} update_rules;

/* Checks one frame against the rules. Returns NULL if it is accepted (params copied to dst,
 * nparams floats, meta filled) or why it is refused. *client is the client the frame names
 * when that could be established (-1 otherwise, for messages); *counts is 1 when the frame is
 * this client's answer for this round (accepted, or refused for its content), 0 when it must
 * not touch the client's slot (unknown sender, another round, duplicate, not selected). */
const char *update_accept(const uint8_t *frame, size_t bytes, const update_rules *r, float *dst, update_meta *meta,
                          int *client, int *counts);

/* Rank hosting client c: clients are spread round-robin over ranks 1.., or all on rank 0. */
static inline int fed_host_rank(int client, int ranks) { return ranks == 1 ? 0 : 1 + client % (ranks - 1); }

#endif
