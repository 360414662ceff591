#include "checkpoint.h"

#include "mpi/msgframe.h"
#include "fileio.h"

#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_MAGIC "FEDCKPT1"
#define CKPT_FIXED (8 + 4 * 4 + 4 * (MLP_MAX_LAYERS + 1) + 8 + 4 + 8)

/* The machines this runs on are little-endian; memcpy keeps the code simple and the
 * format is documented as little-endian. */
static uint8_t *put(uint8_t *p, const void *v, size_t n) {
    memcpy(p, v, n);
    return p + n;
}

int ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen) {
    size_t pbytes = sizeof(float) * c->nparams;
    size_t total = CKPT_FIXED + pbytes * (c->state ? 2 : 1) + 4;
    uint8_t *buf = malloc(total), *p = buf;
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    uint32_t u;
    p = put(p, CKPT_MAGIC, 8);
    p = put(p, &c->kind, 4);
    p = put(p, &c->steps_done, 4);
    p = put(p, &c->config_crc, 4);
    u = (uint32_t)c->nlayers;
    p = put(p, &u, 4);
    for (int i = 0; i <= MLP_MAX_LAYERS; i++) {
        u = i <= c->nlayers ? (uint32_t)c->sizes[i] : 0;
        p = put(p, &u, 4);
    }
    uint64_t np = c->nparams;
    p = put(p, &np, 8);
    u = c->state != NULL;
    p = put(p, &u, 4);
    p = put(p, &c->elapsed, 8);
    p = put(p, c->params, pbytes);
    if (c->state) p = put(p, c->state, pbytes);
    u = cmsg_crc32(buf, (size_t)(p - buf));
    p = put(p, &u, 4);
    int rc = write_file_atomic(path, buf, (size_t)(p - buf), err, errlen);
    free(buf);
    return rc;
}

/* Every field is range-checked and the size is compared without overflow: a CRC only proves
 * that the bytes are what some writer wrote, not that a writer of this program wrote them. */
int ckpt_parse(const uint8_t *buf, size_t n, const char *path, checkpoint *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    const uint8_t *p = buf;
    uint32_t u, has_state, crc;
    uint64_t np;
    if (n < CKPT_FIXED + 4 || memcmp(p, CKPT_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: not a fedtrain checkpoint", path);
        return -1;
    }
    memcpy(&crc, buf + n - 4, 4);
    if (crc != cmsg_crc32(buf, n - 4)) {
        snprintf(err, errlen, "%s: checkpoint checksum mismatch (corrupt file)", path);
        return -1;
    }
    p += 8;
    memcpy(&c->kind, p, 4);
    p += 4;
    memcpy(&c->steps_done, p, 4);
    p += 4;
    memcpy(&c->config_crc, p, 4);
    p += 4;
    memcpy(&u, p, 4);
    p += 4;
    uint32_t nlayers = u;
    uint32_t sizes[MLP_MAX_LAYERS + 1];
    for (int i = 0; i <= MLP_MAX_LAYERS; i++) {
        memcpy(&sizes[i], p, 4);
        p += 4;
    }
    memcpy(&np, p, 8);
    p += 8;
    memcpy(&has_state, p, 4);
    p += 4;
    memcpy(&c->elapsed, p, 8);
    p += 8;
    const char *why = NULL;
    uint64_t expect_np = 0;
    if (c->kind != CKPT_CENTRAL && c->kind != CKPT_FEDERATED && c->kind != CKPT_MODEL)
        why = "unknown kind";
    else if (c->steps_done > CKPT_MAX_STEPS)
        why = "rounds/epochs done out of range";
    else if (nlayers < 1 || nlayers > MLP_MAX_LAYERS)
        why = "layer count out of range";
    else if (has_state > 1)
        why = "bad state flag";
    else if (!(c->elapsed >= 0.0 && c->elapsed <= CKPT_MAX_SECONDS))
        why = "elapsed time out of range";
    else {
        for (uint32_t i = 0; i <= MLP_MAX_LAYERS && !why; i++) {
            if (i <= nlayers ? sizes[i] < 1 || sizes[i] > MLP_MAX_WIDTH : sizes[i] != 0)
                why = "layer size out of range";
            else if (i < nlayers)
                expect_np += (uint64_t)sizes[i] * sizes[i + 1] + sizes[i + 1];
        }
        /* sizes are <= 65536, so expect_np < 2^36: the products below cannot overflow */
        if (!why && np != expect_np)
            why = "parameter count does not match the layer sizes";
        else if (!why && (n - CKPT_FIXED - 4) != (uint64_t)sizeof(float) * np * (has_state ? 2 : 1))
            why = "file size does not match the parameter count";
    }
    if (why) {
        snprintf(err, errlen, "%s: inconsistent checkpoint header: %s", path, why);
        return -1;
    }
    c->nlayers = (int)nlayers;
    for (int i = 0; i <= MLP_MAX_LAYERS; i++) c->sizes[i] = (int)sizes[i];
    c->nparams = (size_t)np;
    c->params = malloc(sizeof(float) * c->nparams);
    c->state = has_state ? malloc(sizeof(float) * c->nparams) : NULL;
    if (!c->params || (has_state && !c->state)) {
        snprintf(err, errlen, "%s: out of memory", path);
        ckpt_free(c);
        return -1;
    }
    memcpy(c->params, p, sizeof(float) * c->nparams);
    p += sizeof(float) * c->nparams;
    if (has_state) memcpy(c->state, p, sizeof(float) * c->nparams);
    for (size_t i = 0; i < c->nparams * (has_state ? 2 : 1); i++) {
        float v = i < c->nparams ? c->params[i] : c->state[i - c->nparams];
        if (!isfinite(v)) {
            snprintf(err, errlen, "%s: checkpoint holds a non-finite %s value", path,
                     i < c->nparams ? "parameter" : "optimizer state");
            ckpt_free(c);
            return -1;
        }
    }
    return 0;
}

int ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    size_t n = 0;
    uint8_t *buf = (uint8_t *)read_file(path, &n);
    if (!buf) {
        snprintf(err, errlen, "%s: cannot read checkpoint: %s", path,
                 errno == EINVAL  ? "not a regular file"
                 : errno == EFBIG ? "larger than 256 MiB"
                                  : strerror(errno));
        return -1;
    }
    int rc = ckpt_parse(buf, n, path, c, err, errlen);
    free(buf);
    return rc;
}

void ckpt_free(checkpoint *c) {
    free(c->params);
    free(c->state);
    c->params = c->state = NULL;
}
