/* Checkpoint files (format 10, docs/checkpoint.md): a fixed header with CRC-32s over itself and
 * over the film that follows it. The reader trusts nothing: every field is checked against the
 * renderer that resumes, and a failed check is an error naming the file and the field. */
#ifndef CAUSTIC_API_CHECKPOINT_H
#define CAUSTIC_API_CHECKPOINT_H

#include <stdint.h>
#include <stdio.h>

#include "caustic.h"
#include "kernel/film.h"

/* The magic: CKPT_MAGIC_PREFIX, the format version in decimal, a newline, zero padding to 16
 * bytes. */
#define CKPT_MAGIC_PREFIX "CAUSTIC-CKPT-"
#define CKPT_VERSION      10
#define CKPT_MAGIC        "CAUSTIC-CKPT-10\n"

/* The prepared scene's parts a checkpoint names when they differ (ckpt_scene_hash): CRC-32s of
 * the kernel scene's arrays and values, one per part. */
enum { CKPT_SCENE_GEOMETRY, CKPT_SCENE_MATERIALS, CKPT_SCENE_LIGHTS, CKPT_SCENE_PARTS };

/* Everything that shapes the image: a checkpoint resumes only under the same settings. */
typedef struct ckpt_settings {
    uint32_t scene[CKPT_SCENE_PARTS]; /* the prepared scene: geometry, materials (with textures),
                                         lights (with the environment) */
    kpass pass;                       /* no sample range; spp_total only where it shapes the samples */
    int32_t integrator;
    float merge_radius, merge_alpha;
    int32_t merge_everywhere;
    int32_t aov_planes; /* 1: the film's AOV planes (AOV_FLOATS doubles per pixel) follow lum2 */
} ckpt_settings;

/* The render's progress as the checkpoint records it. */
typedef struct ckpt_state {
    int32_t spp_done, spp_target;
    double seconds;
    uint64_t rays, bad, samples;
} ckpt_state;

/* The header as stored (host byte order; the CRCs make another machine's file an error). */
typedef struct ckpt_header {
    char magic[16];
    uint32_t header_bytes; /* sizeof(ckpt_header): a layout guard */
    int32_t width, height;
    ckpt_settings settings; /* zero padding: written from a memset struct */
    ckpt_state state;
    uint64_t film_bytes; /* 36 bytes per pixel: sums (3 double), count (uint32), lum2 (double);
                                plus AOV_FLOATS doubles per pixel with aov_planes */
    uint32_t film_crc;   /* CRC-32 (zlib) of the film bytes */
    uint32_t header_crc; /* CRC-32 of every header byte before this field */
} ckpt_header;

/* Largest spp a checkpoint may record (the scene file's and --spp's limit). */
#define CKPT_MAX_SPP CAUSTIC_MAX_SPP

/* The CRC-32s of the prepared scene's parts (geometry, materials with their textures, lights
 * with the environment) into out; the camera and options are in ckpt_settings.pass. */
struct kscene;
void ckpt_scene_hash(const struct kscene *k, uint32_t out[CKPT_SCENE_PARTS]);

/* Writes header and film; 0, or -1 (the caller's flush names the error). */
int ckpt_write(FILE *f, const ckpt_settings *settings, const ckpt_state *state, const kfilm *film);

/* Reads a checkpoint from f (name: for messages) into film (allocated by the caller at the
 * renderer's size) and *state. `want` are the resuming renderer's settings, spp_target its
 * target. Checks, in order: magic and version, header size, header CRC, resolution, settings,
 * spp range, file length, film CRC, film values (finite sums, non-negative squared luminance,
 * counts within the recorded spp and at most spp_target: a distributed render's checkpoint may
 * hold pixels beyond its whole passes, which a lower target could never make equal). Returns 0, or -1 with a one-line message in err; on failure
 * the film is zeroed. */
int ckpt_read(FILE *f, const char *name, const ckpt_settings *want, int spp_target, kfilm *film, ckpt_state *state,
              char *err, size_t errlen);

#endif
