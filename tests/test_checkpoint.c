/* The checkpoint reader against every corruption class: each is refused with its own message,
 * the film left zeroed; an intact checkpoint round-trips exactly. With --write-seeds DIR it also
 * writes these files as the seed corpus of fuzz/fuzz_checkpoint.c (first byte: the mode), and with
 * --check-seeds DIR checks that DIR holds exactly those (ctest: checkpoint_seeds_current). */
#define _GNU_SOURCE /* open_memstream, fmemopen */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "checkpoint_fixture.h"
#include "testing.h"

enum { N = FIXTURE_W * FIXTURE_H, SPP_DONE = 53 };

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

/* A checkpoint of 53 spp of a 64-spp render, every pixel holding plausible sums. */
static blob make_checkpoint(int adaptive) {
    double sum[3 * N], lum2[N];
    uint32_t count[N];
    for (int i = 0; i < N; ++i) {
        count[i] = adaptive && i % 2 ? 20 : SPP_DONE;
        for (int c = 0; c < 3; ++c) sum[3 * i + c] = 0.25 * (i + c) * count[i];
        lum2[i] = 0.01 * i * count[i];
    }
    kfilm film = {.sum = sum, .count = count, .lum2 = lum2, .width = FIXTURE_W, .height = FIXTURE_H};
    ckpt_settings st;
    fixture_settings(&st, adaptive);
    ckpt_state state = {SPP_DONE, FIXTURE_SPP, 12.5, 1000, 2, 53 * N};
    blob b = {NULL, 0};
    char *buf = NULL;
    FILE *f = open_memstream(&buf, &b.size);
    if (!f || ckpt_write(f, &st, &state, &film)) abort();
    fclose(f);
    b.data = (uint8_t *)buf;
    return b;
}

static blob copy_of(blob b) {
    blob c = {malloc(b.size + 64), b.size};
    if (!c.data) abort();
    memcpy(c.data, b.data, b.size);
    return c;
}

static void reseal(blob *b) {
    ckpt_header h;
    memcpy(&h, b->data, sizeof h);
    h.film_crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), b->data + sizeof h, b->size - sizeof h);
    h.header_crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), (const Bytef *)&h, offsetof(ckpt_header, header_crc));
    memcpy(b->data, &h, sizeof h);
}

static ckpt_header *header_of(blob *b) { return (ckpt_header *)b->data; }
static double *film_sum(blob *b) { return (double *)(b->data + sizeof(ckpt_header)); }

static const char *seed_dir = NULL;
static int seed_check; /* --check-seeds: compare with seed_dir's files instead of writing them */

/* Reads b as the fixture's render would (target spp_target); expect: NULL = accepted, else a
 * fragment of the message. Writes the case as a seed when asked. */
static void expect(const char *name, blob b, int adaptive, int spp_target, int resealed, const char *want) {
    double sum[3 * N], lum2[N];
    uint32_t count[N];
    memset(count, 0xab, sizeof count);
    kfilm film = {.sum = sum, .count = count, .lum2 = lum2, .width = FIXTURE_W, .height = FIXTURE_H};
    ckpt_settings st;
    fixture_settings(&st, adaptive);
    ckpt_state state;
    char err[512] = "";
    FILE *f = b.size ? fmemopen(b.data, b.size, "rb") : fopen("/dev/null", "rb");
    int rc = ckpt_read(f, "t.ckpt", &st, spp_target, &film, &state, err, sizeof err);
    fclose(f);
    if (!want) {
        CHECK(rc == 0, "%s: refused: %s", name, err);
        if (rc == 0) {
            CHECK(state.spp_done == SPP_DONE && state.seconds == 12.5 && state.samples == 53 * N, "%s: state", name);
            CHECK(sum[3 * 5 + 1] == 0.25 * 6 * count[5] && count[0] == SPP_DONE, "%s: film", name);
        }
    } else {
        CHECK(rc == -1 && strstr(err, want) && !strchr(err, '\n') && !strncmp(err, "t.ckpt: ", 8),
              "%s: rc %d, message '%s', expected '%s'", name, rc, err, want);
        int untouched = count[0] == 0xabababab, zeroed = count[0] == 0 && count[N - 1] == 0;
        CHECK(untouched || zeroed, "%s: a refused film is left half-loaded", name);
    }
    if (seed_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", seed_dir, name);
        uint8_t mode = (uint8_t)((adaptive ? 1 : 0) | (spp_target == FIXTURE_SPP ? 2 : 0) | (resealed ? 4 : 0));
        if (seed_check) { /* a seed of an older format stops the fuzzer at the header checks */
            FILE *s = fopen(path, "rb");
            int same = s && fgetc(s) == mode;
            for (size_t i = 0; same && i < b.size; ++i) same = fgetc(s) == b.data[i];
            same = same && fgetc(s) == EOF;
            if (s) fclose(s);
            CHECK(same, "%s is not the current format's seed: run test_checkpoint --write-seeds %s", path, seed_dir);
        } else {
            FILE *s = fopen(path, "wb");
            if (!s) {
                perror(path);
                exit(1);
            }
            fputc(mode, s);
            fwrite(b.data, 1, b.size, s);
            fclose(s);
        }
    }
    free(b.data);
}

int main(int argc, char **argv) {
    if (argc == 3 && (!strcmp(argv[1], "--write-seeds") || !strcmp(argv[1], "--check-seeds"))) {
        seed_dir = argv[2];
        seed_check = argv[1][2] == 'c';
    }
    blob good = make_checkpoint(0);
    const size_t H = sizeof(ckpt_header);
    CHECK(good.size == H + 36 * N, "file size %zu", good.size);

    expect("intact", copy_of(good), 0, FIXTURE_SPP, 0, NULL);
    expect("intact-adaptive", make_checkpoint(1), 1, FIXTURE_SPP, 0, NULL);
    /* resumed with a lower target that the samples do not exceed: fine */
    expect("intact-lower-target", copy_of(good), 0, SPP_DONE, 0, NULL);
    expect("adaptive-as-plain", make_checkpoint(1), 0, FIXTURE_SPP, 0, "other settings");

    blob b = copy_of(good);
    b.size = 0;
    expect("empty", b, 0, FIXTURE_SPP, 0, "not a caustic checkpoint");
    b = copy_of(good);
    b.size = H / 2;
    expect("truncated-header", b, 0, FIXTURE_SPP, 0, "truncated");
    b = copy_of(good);
    b.size -= 5;
    expect("truncated-film", b, 0, FIXTURE_SPP, 0, "truncated");
    b = copy_of(good);
    b.data[b.size] = 0;
    b.size += 1;
    expect("trailing-data", b, 0, FIXTURE_SPP, 0, "data after its film");

    b = copy_of(good);
    memcpy(b.data, "GARBAGE-GARBAGE", 15);
    expect("not-a-checkpoint", b, 0, FIXTURE_SPP, 0, "not a caustic checkpoint");
    b = copy_of(good);
    memcpy(b.data, "CAUSTIC-CKPT-9\n\0", 16); /* format 9's magic */
    expect("old-version", b, 0, FIXTURE_SPP, 0, "another version of caustic (format 9, this one reads 10)");

    /* a flipped bit anywhere in the header or the film: the CRCs */
    b = copy_of(good);
    b.data[offsetof(ckpt_header, state) + offsetof(ckpt_state, seconds) + 3] ^= 0x10;
    expect("flipped-bit-header", b, 0, FIXTURE_SPP, 0, "header is corrupt");
    b = copy_of(good);
    b.data[H + 8 * 7 + 6] ^= 0x01;
    expect("flipped-bit-film", b, 0, FIXTURE_SPP, 0, "film is corrupt");
    b = copy_of(good);
    header_of(&b)->state.spp_done = 255;
    expect("spp-done-changed", b, 0, FIXTURE_SPP, 0, "header is corrupt");
    b = copy_of(good);
    film_sum(&b)[4] = NAN;
    expect("nan-in-film", b, 0, FIXTURE_SPP, 0, "film is corrupt");

    /* the same edits with both CRCs made right again (a crafted file): the field checks */
    b = copy_of(good);
    header_of(&b)->state.spp_done = 60;
    reseal(&b);
    expect("spp-done-changed-resealed", b, 0, FIXTURE_SPP, 1, "holds 53 samples, expected 60..64");
    b = copy_of(good);
    header_of(&b)->state.spp_done = 255;
    reseal(&b);
    expect("spp-done-over-target-resealed", b, 0, FIXTURE_SPP, 1, "records 255 of 64 spp");
    b = copy_of(good);
    header_of(&b)->state.spp_done = header_of(&b)->state.spp_target = 2147483647;
    reseal(&b);
    expect("spp-done-int-max-resealed", b, 0, FIXTURE_SPP, 1, "records 2147483647 of 2147483647 spp");
    b = copy_of(good);
    header_of(&b)->state.spp_done = -1;
    reseal(&b);
    expect("spp-done-negative-resealed", b, 0, FIXTURE_SPP, 1, "records -1 of 64 spp");
    b = copy_of(good);
    expect("spp-done-over-resume-target", b, 0, 32, 0, "more than this render's target of 32");
    b = copy_of(good);
    film_sum(&b)[4] = NAN;
    reseal(&b);
    expect("nan-in-film-resealed", b, 0, FIXTURE_SPP, 1, "non-finite or negative value at pixel (1, 0)");
    b = copy_of(good);
    ((uint32_t *)(film_sum(&b) + 3 * N))[2] = 1000;
    reseal(&b);
    expect("count-over-target-resealed", b, 0, FIXTURE_SPP, 1, "pixel (2, 0) holds 1000 samples");
    b = copy_of(good);
    ((double *)(b.data + H + 28 * N))[3] = -1.0;
    reseal(&b);
    expect("negative-lum2-resealed", b, 0, FIXTURE_SPP, 1, "non-finite or negative value at pixel (3, 0)");
    b = copy_of(good);
    header_of(&b)->state.seconds = INFINITY;
    reseal(&b);
    expect("infinite-seconds-resealed", b, 0, FIXTURE_SPP, 1, "render time of inf");
    b = copy_of(good);
    header_of(&b)->header_bytes = 4;
    reseal(&b);
    expect("header-size-resealed", b, 0, FIXTURE_SPP, 1, "header of 4 bytes");
    b = copy_of(good);
    header_of(&b)->width = 3;
    reseal(&b);
    expect("resolution-resealed", b, 0, FIXTURE_SPP, 1, "checkpoint is 3x3, this render 4x3");
    b = copy_of(good);
    header_of(&b)->settings.pass.seed = 8;
    reseal(&b);
    expect("other-seed-resealed", b, 0, FIXTURE_SPP, 1, "other settings");
    b = copy_of(good);
    header_of(&b)->film_bytes = 1ull << 62;
    reseal(&b);
    expect("film-bytes-resealed", b, 0, FIXTURE_SPP, 1, "checkpoint film of 4611686018427387904 bytes");
    /* a distributed render's checkpoint holds finished units beyond its whole passes: resumed
     * at a target below them, those pixels would keep more samples than the rest for good (and
     * the checkpoint saved then could never be extended: "holds 245 samples, expected 200..200") */
    b = copy_of(good);
    ((uint32_t *)(film_sum(&b) + 3 * N))[7] = 60;
    reseal(&b);
    expect("count-over-resume-target-resealed", b, 0, 56, 1,
           "pixels hold up to 60 samples, more than this render's target of 56 (resume with --spp 60 or more)");
    /* another scene: each part that differs is named */
    b = copy_of(good);
    header_of(&b)->settings.scene[CKPT_SCENE_MATERIALS] ^= 1;
    reseal(&b);
    expect("other-materials-resealed", b, 0, FIXTURE_SPP, 1, "made from another scene (changed: materials)");
    b = copy_of(good);
    header_of(&b)->settings.scene[CKPT_SCENE_MATERIALS] ^= 1;
    header_of(&b)->settings.scene[CKPT_SCENE_LIGHTS] ^= 1;
    reseal(&b);
    expect("other-materials-lights-resealed", b, 0, FIXTURE_SPP, 1,
           "made from another scene (changed: materials, lights)");
    free(good.data);
    return test_result("test_checkpoint");
}
