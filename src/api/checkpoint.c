/* Checkpoint files: writing, and a reader that checks every byte before the render trusts it
 * (api/checkpoint.h, docs/checkpoint.md). */
#include "api/checkpoint.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <zlib.h>

#define CKPT_PIXEL_BYTES (3 * sizeof(double) + sizeof(uint32_t) + sizeof(double))
_Static_assert(CKPT_PIXEL_BYTES == 36, "docs/checkpoint.md: 36 bytes per pixel");
_Static_assert(sizeof(film_real) == sizeof(double), "the host film is double");

/* Bytes of the film that follows the header: the AOV planes only where the film has them. */
static uint64_t film_bytes(const kfilm *film, size_t n) {
    return (uint64_t)n * (CKPT_PIXEL_BYTES + (film->aov ? AOV_FLOATS * sizeof(double) : 0));
}

static uint32_t film_crc(const kfilm *film, size_t n) {
    uLong c = crc32_z(0L, Z_NULL, 0);
    c = crc32_z(c, (const Bytef *)film->sum, 3 * n * sizeof(double));
    c = crc32_z(c, (const Bytef *)film->count, n * sizeof(uint32_t));
    c = crc32_z(c, (const Bytef *)film->lum2, n * sizeof(double));
    if (film->aov) c = crc32_z(c, (const Bytef *)film->aov, AOV_FLOATS * n * sizeof(double));
    return (uint32_t)c;
}

static void film_zero(kfilm *film, size_t n) {
    memset(film->sum, 0, 3 * n * sizeof(double));
    memset(film->count, 0, n * sizeof(uint32_t));
    memset(film->lum2, 0, n * sizeof(double));
    if (film->aov) memset(film->aov, 0, AOV_FLOATS * n * sizeof(double));
}

static uint32_t header_crc(const ckpt_header *h) {
    return (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), (const Bytef *)h, offsetof(ckpt_header, header_crc));
}

void ckpt_scene_hash(const kscene *k, uint32_t out[CKPT_SCENE_PARTS]) {
    /* each array's bytes (its element count is the list's expression over k), then the part's
     * values; the elements are 4-byte fields without padding */
    uLong c[CKPT_SCENE_PARTS];
    for (int i = 0; i < CKPT_SCENE_PARTS; ++i) c[i] = crc32_z(0L, Z_NULL, 0);
#define CKPT_PART_triangles    CKPT_SCENE_GEOMETRY
#define CKPT_PART_positions    CKPT_SCENE_GEOMETRY
#define CKPT_PART_normals      CKPT_SCENE_GEOMETRY
#define CKPT_PART_uvs          CKPT_SCENE_GEOMETRY
#define CKPT_PART_tangents     CKPT_SCENE_GEOMETRY
#define CKPT_PART_spheres      CKPT_SCENE_GEOMETRY
#define CKPT_PART_quads        CKPT_SCENE_GEOMETRY
#define CKPT_PART_materials    CKPT_SCENE_MATERIALS
#define CKPT_PART_textures     CKPT_SCENE_MATERIALS
#define CKPT_PART_texels       CKPT_SCENE_MATERIALS
#define CKPT_PART_texels8      CKPT_SCENE_MATERIALS
#define CKPT_PART_texel8_lut   CKPT_SCENE_MATERIALS
#define CKPT_PART_media        CKPT_SCENE_MATERIALS
#define CKPT_PART_instances    CKPT_SCENE_GEOMETRY
#define CKPT_PART_voxels       CKPT_SCENE_MATERIALS
#define CKPT_PART_nanovdb      CKPT_SCENE_MATERIALS
#define CKPT_PART_lights       CKPT_SCENE_LIGHTS
#define CKPT_PART_light_cdf    CKPT_SCENE_LIGHTS
#define CKPT_PART_prim_light   CKPT_SCENE_LIGHTS
#define CKPT_PART_light_nodes  CKPT_SCENE_LIGHTS
#define CKPT_PART_light_trail  CKPT_SCENE_LIGHTS
#define CKPT_PART_env_cdf_rows CKPT_SCENE_LIGHTS
#define CKPT_PART_env_cdf_cols CKPT_SCENE_LIGHTS
#define CKPT_HASH_ARRAY(type, name, count)                                                                             \
    if (k->name)                                                                                                       \
        c[CKPT_PART_##name] = crc32_z(c[CKPT_PART_##name], (const Bytef *)k->name, (size_t)(count) * sizeof(type));
    KSCENE_ARRAYS(CKPT_HASH_ARRAY)
#undef CKPT_HASH_ARRAY
    const uint32_t counts[] = {k->ntriangles, k->nspheres, k->nquads, k->nvertices};
    c[CKPT_SCENE_GEOMETRY] = crc32_z(c[CKPT_SCENE_GEOMETRY], (const Bytef *)counts, sizeof counts);
    const uint64_t mcounts[] = {k->nmaterials, k->ntextures, k->ntexels, k->ntexels8};
    c[CKPT_SCENE_MATERIALS] = crc32_z(c[CKPT_SCENE_MATERIALS], (const Bytef *)mcounts, sizeof mcounts);
    const float env[] = {k->env_radiance.x, k->env_radiance.y, k->env_radiance.z,
                         (float)k->env_tex, k->env_pmf,        (float)k->nlights};
    c[CKPT_SCENE_LIGHTS] = crc32_z(c[CKPT_SCENE_LIGHTS], (const Bytef *)env, sizeof env);
    for (int i = 0; i < CKPT_SCENE_PARTS; ++i) out[i] = (uint32_t)c[i];
}

int ckpt_write(FILE *f, const ckpt_settings *settings, const ckpt_state *state, const kfilm *film) {
    size_t n = (size_t)film->width * (size_t)film->height;
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, sizeof(CKPT_MAGIC) - 1); /* 16 bytes: no NUL */
    h.header_bytes = (uint32_t)sizeof h;
    h.width = film->width;
    h.height = film->height;
    h.settings = *settings;
    h.state = *state;
    h.film_bytes = film_bytes(film, n);
    h.film_crc = film_crc(film, n);
    h.header_crc = header_crc(&h);
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(film->sum, sizeof(double), 3 * n, f) == 3 * n &&
             fwrite(film->count, sizeof(uint32_t), n, f) == n && fwrite(film->lum2, sizeof(double), n, f) == n &&
             (!film->aov || fwrite(film->aov, sizeof(double), AOV_FLOATS * n, f) == AOV_FLOATS * n);
    return ok ? 0 : -1;
}

/* The header's own checks: what it is, that it is intact, and that it belongs to this render. */
static int check_header(const ckpt_header *h, const char *name, const ckpt_settings *want, const kfilm *film,
                        int spp_target, char *err, size_t errlen) {
    const size_t plen = sizeof(CKPT_MAGIC_PREFIX) - 1;
    if (memcmp(h->magic, CKPT_MAGIC_PREFIX, plen) != 0) {
        snprintf(err, errlen, "%s: not a caustic checkpoint", name);
        return -1;
    }
    /* the version follows the prefix: an older caustic's checkpoint says so */
    if (memcmp(h->magic, CKPT_MAGIC, sizeof(CKPT_MAGIC) - 1) != 0) {
        int v = 0, digits = 0;
        for (size_t i = plen; i < sizeof h->magic && h->magic[i] >= '0' && h->magic[i] <= '9' && digits < 4; ++i)
            v = 10 * v + (h->magic[i] - '0'), digits++;
        if (digits)
            snprintf(err, errlen, "%s: checkpoint written by another version of caustic (format %d, this one reads %d)",
                     name, v, CKPT_VERSION);
        else
            snprintf(err, errlen, "%s: checkpoint written by another version of caustic (format ?, this one reads %d)",
                     name, CKPT_VERSION);
        return -1;
    }
    if (h->header_bytes != sizeof *h) {
        snprintf(err, errlen, "%s: checkpoint header of %u bytes, expected %zu (written on another platform?)", name,
                 h->header_bytes, sizeof *h);
        return -1;
    }
    if (h->header_crc != header_crc(h)) {
        snprintf(err, errlen, "%s: checkpoint header is corrupt (CRC-32 mismatch)", name);
        return -1;
    }
    if (h->width != film->width || h->height != film->height) {
        snprintf(err, errlen, "%s: checkpoint is %dx%d, this render %dx%d", name, h->width, h->height, film->width,
                 film->height);
        return -1;
    }
    if (h->settings.aov_planes != want->aov_planes) {
        snprintf(err, errlen,
                 "%s: checkpoint was made %s AOV planes (albedo, normal, depth); resume with the same "
                 "--aov (and --denoise) as the render that wrote it",
                 name, h->settings.aov_planes ? "with" : "without");
        return -1;
    }
    if (memcmp(h->settings.scene, want->scene, sizeof want->scene) != 0) {
        static const char *const part[CKPT_SCENE_PARTS] = {"geometry", "materials", "lights"};
        char what[96] = "";
        for (int i = 0, n = 0; i < CKPT_SCENE_PARTS; ++i)
            if (h->settings.scene[i] != want->scene[i]) {
                size_t len = strlen(what);
                snprintf(what + len, sizeof what - len, "%s%s", n++ ? ", " : "", part[i]);
            }
        snprintf(err, errlen,
                 "%s: checkpoint was made from another scene (changed: %s); resume with the scene that wrote "
                 "it, or start again with --force",
                 name, what);
        return -1;
    }
    if (memcmp(&h->settings, want, sizeof *want) != 0) {
        snprintf(err, errlen,
                 "%s: checkpoint was made with other settings (%dx%d, depth %d, seed %u); "
                 "resume with the same scene and options",
                 name, h->settings.pass.cam.width, h->settings.pass.cam.height, h->settings.pass.max_depth,
                 h->settings.pass.seed);
        return -1;
    }
    const ckpt_state *s = &h->state;
    if (s->spp_target < 1 || s->spp_target > CKPT_MAX_SPP || s->spp_done < 0 || s->spp_done > s->spp_target) {
        snprintf(err, errlen, "%s: checkpoint records %d of %d spp (expected 0 <= done <= target <= %d)", name,
                 s->spp_done, s->spp_target, CKPT_MAX_SPP);
        return -1;
    }
    if (s->spp_done > spp_target) {
        snprintf(err, errlen, "%s: checkpoint holds %d spp, more than this render's target of %d (raise --spp)", name,
                 s->spp_done, spp_target);
        return -1;
    }
    if (!isfinite(s->seconds) || s->seconds < 0.0) {
        snprintf(err, errlen, "%s: checkpoint records a render time of %g s", name, s->seconds);
        return -1;
    }
    size_t n = (size_t)film->width * (size_t)film->height;
    if (h->film_bytes != film_bytes(film, n)) {
        snprintf(err, errlen, "%s: checkpoint film of %llu bytes, expected %llu for %dx%d", name,
                 (unsigned long long)h->film_bytes, (unsigned long long)film_bytes(film, n), film->width, film->height);
        return -1;
    }
    return 0;
}

/* Values a render can produce: finite sums, non-negative squared luminance, and counts between
 * the whole passes done (every pixel takes each pass's samples unless adaptive sampling stopped
 * it) and the target (a distributed render saves finished work units beyond its last pass). */
static int check_film(const kfilm *film, const ckpt_header *h, const char *name, int spp_target, char *err,
                      size_t errlen) {
    size_t n = (size_t)film->width * (size_t)film->height;
    uint32_t lo = h->settings.pass.adaptive_threshold > 0.0f ? 0u : (uint32_t)h->state.spp_done;
    uint32_t hi = (uint32_t)h->state.spp_target, most = 0;
    for (size_t i = 0; i < n; ++i) {
        const double *s = film->sum + 3 * i;
        int x = (int)(i % (size_t)film->width), y = (int)(i / (size_t)film->width);
        if (!isfinite(s[0]) || !isfinite(s[1]) || !isfinite(s[2]) || !isfinite(film->lum2[i]) || film->lum2[i] < 0.0) {
            snprintf(err, errlen, "%s: checkpoint film holds a non-finite or negative value at pixel (%d, %d)", name, x,
                     y);
            return -1;
        }
        if (film->count[i] < lo || film->count[i] > hi) {
            snprintf(err, errlen, "%s: checkpoint pixel (%d, %d) holds %u samples, expected %u..%u", name, x, y,
                     film->count[i], lo, hi);
            return -1;
        }
        most = film->count[i] > most ? film->count[i] : most;
        for (int k = 0; film->aov && k < AOV_FLOATS; ++k)
            if (!isfinite(film->aov[AOV_FLOATS * i + (size_t)k])) {
                snprintf(err, errlen, "%s: checkpoint AOV planes hold a non-finite value at pixel (%d, %d)", name, x,
                         y);
                return -1;
            }
    }
    if (most > (uint32_t)spp_target) {
        /* a distributed render saves finished work units beyond its last whole pass: resumed at
         * a lower target those pixels would keep more samples than the rest for good */
        snprintf(err, errlen,
                 "%s: checkpoint pixels hold up to %u samples, more than this render's target of %d (resume with "
                 "--spp %u or more)",
                 name, most, spp_target, most);
        return -1;
    }
    return 0;
}

static int read_film(FILE *f, const ckpt_header *h, const char *name, int spp_target, kfilm *film, char *err,
                     size_t errlen) {
    size_t n = (size_t)film->width * (size_t)film->height;
    if (fread(film->sum, sizeof(double), 3 * n, f) != 3 * n || fread(film->count, sizeof(uint32_t), n, f) != n ||
        fread(film->lum2, sizeof(double), n, f) != n ||
        (film->aov && fread(film->aov, sizeof(double), AOV_FLOATS * n, f) != AOV_FLOATS * n)) {
        snprintf(err, errlen, "%s: checkpoint is truncated", name);
        return -1;
    }
    if (fgetc(f) != EOF) {
        snprintf(err, errlen, "%s: checkpoint has data after its film", name);
        return -1;
    }
    if (film_crc(film, n) != h->film_crc) {
        snprintf(err, errlen, "%s: checkpoint film is corrupt (CRC-32 mismatch)", name);
        return -1;
    }
    return check_film(film, h, name, spp_target, err, errlen);
}

int ckpt_read(FILE *f, const char *name, const ckpt_settings *want, int spp_target, kfilm *film, ckpt_state *state,
              char *err, size_t errlen) {
    ckpt_header h;
    size_t got = fread(&h, 1, sizeof h, f);
    if (got < sizeof h) {
        int ours = got >= sizeof(CKPT_MAGIC_PREFIX) - 1 &&
                   memcmp(h.magic, CKPT_MAGIC_PREFIX, sizeof(CKPT_MAGIC_PREFIX) - 1) == 0;
        snprintf(err, errlen, ours ? "%s: checkpoint is truncated (in its header)" : "%s: not a caustic checkpoint",
                 name);
        return -1;
    }
    if (check_header(&h, name, want, film, spp_target, err, errlen)) return -1;
    if (read_film(f, &h, name, spp_target, film, err, errlen)) {
        film_zero(film, (size_t)film->width * (size_t)film->height);
        return -1;
    }
    *state = h.state;
    return 0;
}
