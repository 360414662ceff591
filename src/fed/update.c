#include "update.h"

#include "mpi/msgframe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t update_frame_bytes(size_t nparams) { return cmsg_frame_bytes(sizeof(update_meta) + sizeof(float) * nparams); }

size_t update_encode(uint8_t *frame, uint32_t round, const update_meta *m, const float *params) {
    uint8_t *p = cmsg_payload(frame);
    memcpy(p, m, sizeof *m);
    memcpy(p + sizeof *m, params, sizeof(float) * m->nparams);
    return cmsg_seal(frame, FED_PROTO_VERSION, MSG_UPDATE, round, m->client,
                     sizeof *m + sizeof(float) * (uint64_t)m->nparams);
}

const char *update_accept(const uint8_t *frame, size_t bytes, const update_rules *r, float *dst, update_meta *meta,
                          int *client, int *counts) {
    static _Thread_local char why[160];
    *client = -1;
    *counts = 0;
    memset(meta, 0, sizeof *meta);
    cmsg_header h;
    cmsg_status st = cmsg_open(frame, bytes, FED_PROTO_VERSION, &h);
    /* A damaged payload under an intact header of this version still tells who sent it, so
     * that the round need not wait for that client; anything else is anonymous. */
    int damaged =
        (st == CMSG_BAD_LENGTH || st == CMSG_BAD_PAYLOAD_CRC) && cmsg_peek_header(frame, bytes, &h) == CMSG_OK;
    if (st != CMSG_OK && !damaged) return cmsg_status_str(st);
    /* Who sent it: the header's sender, which must be a client hosted by the sending rank. */
    if (h.sender >= (uint32_t)r->nclients) return "unknown client id";
    if (fed_host_rank((int)h.sender, r->ranks) != r->from_rank) {
        snprintf(why, sizeof why, "client %u is not hosted by rank %d", h.sender, r->from_rank);
        return why;
    }
    int c = (int)h.sender;
    *client = c;
    if (h.seq != r->round) {
        if (h.seq == r->answered[c] && h.seq) /* arrived after its round was closed */
            snprintf(why, sizeof why, "duplicate update (for round %u)", h.seq);
        else
            snprintf(why, sizeof why, "update for round %u, not %u (late or replayed)", h.seq, r->round);
        return why;
    }
    if (!r->selected[c]) return "client was not selected this round";
    if (r->answered[c] == r->round) return "duplicate update";
    if (h.kind != MSG_SKIP && h.kind != MSG_UPDATE) return "unexpected message kind";
    *counts = 1;
    if (damaged) return cmsg_status_str(st);
    if (h.kind == MSG_SKIP) return "client could not use the global model";
    if (h.payload_bytes < sizeof *meta) return "payload too short";
    memcpy(meta, cmsg_payload((uint8_t *)frame), sizeof *meta);
    if (meta->client != (uint32_t)c) return "unknown client id"; /* payload contradicts header */
    uint64_t pbytes = h.payload_bytes - sizeof *meta;
    if (pbytes % sizeof(float) || meta->nparams != pbytes / sizeof(float) || meta->nparams != r->nparams)
        return "wrong number of parameters";
    if (meta->n_samples != (uint32_t)r->shard_n[c]) {
        snprintf(why, sizeof why, "claims %u training samples, its shard has %d", meta->n_samples, r->shard_n[c]);
        return why;
    }
    if (!isfinite(meta->train_loss) || !isfinite(meta->train_acc) || !isfinite(meta->train_seconds) ||
        !isfinite(meta->lr))
        return "non-finite training statistics";
    memcpy(dst, cmsg_payload((uint8_t *)frame) + sizeof *meta, sizeof(float) * r->nparams);
    double norm2 = 0;
    for (size_t i = 0; i < r->nparams; i++) {
        float v = dst[i];
        if (isnan(v)) return "contains NaN";
        if (isinf(v)) return "contains Inf";
        if (fabsf(v) > r->max_abs) {
            snprintf(why, sizeof why, "parameter %zu = %g exceeds --max-param %g", i, (double)v, (double)r->max_abs);
            return why;
        }
        double d = (double)v - (double)r->global[i];
        norm2 += d * d;
    }
    if (r->max_norm > 0 && sqrt(norm2) > r->max_norm) {
        snprintf(why, sizeof why, "update norm %.4g exceeds --max-update-norm %g", sqrt(norm2), (double)r->max_norm);
        return why;
    }
    return NULL;
}
