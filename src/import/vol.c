/* Mitsuba's binary volume grids (.vol, the gridvolume plugin of Mitsuba 0.6 and 3): a 48-byte
 * little-endian header, the bytes 'V' 'O' 'L' and version 3, encoding 1 (float32), the x, y, z
 * resolutions, the channel count (1, 3 or 6) and a bounding box (xmin ymin zmin xmax ymax zmax,
 * float32), then res_x * res_y * res_z * channels floats, x fastest:
 * data[((z * res_y + y) * res_x + x) * channels + c]. The voxels are read straight into the
 * scene's voxel array (kscene.voxels); every failure is one message naming the file and what is
 * wrong, and leaves the scene's voxels as they were. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "scene/scene.h"

#define VOL_HEADER_BYTES 48

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float lef32(const unsigned char *p) {
    uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The header of `name` from its first bytes (have of them) and the byte count that follows them
 * (payload): -1 with a message where it is not a grid caustic reads. */
static int vol_parse_header(const unsigned char *b, size_t have, uint64_t payload, const char *name, vol_header *h,
                            char *err, size_t errlen) {
    if (have < VOL_HEADER_BYTES) {
        snprintf(err, errlen, "%s: %zu bytes: a .vol grid has a 48-byte header", name, have);
        return -1;
    }
    if (memcmp(b, "VOL", 3) != 0) {
        snprintf(err, errlen, "%s: not a Mitsuba .vol grid (its first bytes are not \"VOL\")", name);
        return -1;
    }
    if (b[3] != 3) {
        snprintf(err, errlen, "%s: .vol version %u: caustic reads version 3", name, (unsigned)b[3]);
        return -1;
    }
    uint32_t enc = le32(b + 4);
    if (enc != 1) {
        snprintf(err, errlen, "%s: .vol encoding %u: caustic reads encoding 1 (float32)", name, (unsigned)enc);
        return -1;
    }
    uint64_t n = 1;
    for (int a = 0; a < 3; ++a) {
        h->res[a] = le32(b + 8 + 4 * a);
        if (h->res[a] == 0 || h->res[a] > (1u << 20)) {
            snprintf(err, errlen, "%s: resolution %u x %u x %u: each must be 1 to %u", name, (unsigned)le32(b + 8),
                     (unsigned)le32(b + 12), (unsigned)le32(b + 16), 1u << 20);
            return -1;
        }
        n *= h->res[a];
    }
    h->channels = le32(b + 20);
    if (h->channels != 1 && h->channels != 3 && h->channels != 6) {
        snprintf(err, errlen, "%s: %u channels: a .vol grid has 1, 3 or 6", name, (unsigned)h->channels);
        return -1;
    }
    for (int i = 0; i < 6; ++i) h->bbox[i] = lef32(b + 24 + 4 * i);
    n *= h->channels;
    if (n > (uint64_t)UINT32_MAX) {
        snprintf(err, errlen, "%s: %llu values: more than the 2^32 caustic's grids address", name,
                 (unsigned long long)n);
        return -1;
    }
    h->nvalues = (size_t)n;
    if (payload != 4u * n) {
        snprintf(err, errlen,
                 "%s: %u x %u x %u x %u channels needs %llu bytes of voxels after the header, the file has %llu", name,
                 (unsigned)h->res[0], (unsigned)h->res[1], (unsigned)h->res[2], (unsigned)h->channels,
                 (unsigned long long)(4u * n), (unsigned long long)payload);
        return -1;
    }
    return 0;
}

/* Checks (and on big-endian hosts byte-swaps) the n values just read into v. */
static int vol_check_values(float *v, size_t n, const vol_header *h, const char *name, char *err, size_t errlen) {
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    for (size_t i = 0; i < n; ++i) {
        if (!first) { /* big-endian host: the file is little-endian */
            unsigned char b[4];
            memcpy(b, &v[i], 4);
            v[i] = lef32(b);
        }
        if (!isfinite(v[i]) || v[i] < 0.0f) {
            size_t c = i % h->channels, vox = i / h->channels;
            size_t x = vox % h->res[0], y = vox / h->res[0] % h->res[1], z = vox / h->res[0] / h->res[1];
            snprintf(err, errlen, "%s: voxel (%zu, %zu, %zu) channel %zu is %g: values must be finite and >= 0", name,
                     x, y, z, c, (double)v[i]);
            return -1;
        }
    }
    return 0;
}

int vol_load_memory(scene *s, const void *data, size_t size, const char *name, vol_header *h, char *err,
                    size_t errlen) {
    const unsigned char *b = (const unsigned char *)data;
    if (vol_parse_header(b, size, size >= VOL_HEADER_BYTES ? size - VOL_HEADER_BYTES : 0, name, h, err, errlen))
        return -1;
    float *v = scene_reserve_voxels(s, h->nvalues);
    if (!v) {
        snprintf(err, errlen, "%s: out of memory for %zu voxel values (or past 2^32 in all)", name, h->nvalues);
        return -1;
    }
    memcpy(v, b + VOL_HEADER_BYTES, 4u * h->nvalues);
    if (vol_check_values(v, h->nvalues, h, name, err, errlen)) return -1;
    h->offset = (uint32_t)s->nvoxels;
    scene_commit_voxels(s, h->nvalues);
    return 0;
}

int vol_load(scene *s, const char *path, vol_header *h, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the .vol grid", path);
        return -1;
    }
    unsigned char b[VOL_HEADER_BYTES];
    size_t have = fread(b, 1, sizeof b, f);
    long long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = (long long)ftell(f);
    if (size < 0 || fseek(f, VOL_HEADER_BYTES, SEEK_SET) != 0) {
        fclose(f);
        snprintf(err, errlen, "%s: cannot read the .vol grid (not a regular file?)", path);
        return -1;
    }
    uint64_t payload = (uint64_t)size > VOL_HEADER_BYTES ? (uint64_t)size - VOL_HEADER_BYTES : 0;
    if (vol_parse_header(b, have, payload, path, h, err, errlen)) {
        fclose(f);
        return -1;
    }
    float *v = scene_reserve_voxels(s, h->nvalues);
    if (!v) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory for %zu voxel values (or past 2^32 in all)", path, h->nvalues);
        return -1;
    }
    size_t got = fread(v, 4, h->nvalues, f);
    fclose(f);
    if (got != h->nvalues) {
        snprintf(err, errlen, "%s: read %zu of %zu voxel values", path, got, h->nvalues);
        return -1;
    }
    if (vol_check_values(v, h->nvalues, h, path, err, errlen)) return -1;
    h->offset = (uint32_t)s->nvoxels;
    scene_commit_voxels(s, h->nvalues);
    return 0;
}

int vol_write(const char *path, const uint32_t res[3], uint32_t channels, const float bbox[6], const float *v,
              char *err, size_t errlen) {
    unsigned char b[VOL_HEADER_BYTES] = {'V', 'O', 'L', 3};
    uint32_t w[6] = {1u, res[0], res[1], res[2], channels, 0u};
    for (int i = 0; i < 5; ++i)
        for (int k = 0; k < 4; ++k) b[4 + 4 * i + k] = (unsigned char)(w[i] >> (8 * k));
    for (int i = 0; i < 6; ++i) {
        uint32_t u;
        memcpy(&u, &bbox[i], 4);
        for (int k = 0; k < 4; ++k) b[24 + 4 * i + k] = (unsigned char)(u >> (8 * k));
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write", path);
        return -1;
    }
    size_t n = (size_t)res[0] * res[1] * res[2] * channels;
    int ok = fwrite(b, 1, sizeof b, f) == sizeof b;
    for (size_t i = 0; ok && i < n; ++i) {
        uint32_t u;
        unsigned char q[4];
        memcpy(&u, &v[i], 4);
        for (int k = 0; k < 4; ++k) q[k] = (unsigned char)(u >> (8 * k));
        ok = fwrite(q, 1, 4, f) == 4;
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

int vol_grid_medium(scene *s, const char *name, medium md, const char *density_path, const char *albedo_path,
                    const xform *to_world, int use_grid_bbox, char *err, size_t errlen) {
    size_t mark = s->nvoxels;
    vol_header h, ha;
    if (vol_load(s, density_path, &h, err, errlen)) return -1;
    if (h.channels != 1) {
        snprintf(err, errlen, "%s: %u channels: a density grid has 1", density_path, (unsigned)h.channels);
        goto fail;
    }
    md.kind = MEDIUM_GRID;
    md.density_grid = h.offset;
    md.albedo_grid = MEDIUM_NO_GRID;
    memcpy(md.res, h.res, sizeof md.res);
    if (albedo_path) {
        if (vol_load(s, albedo_path, &ha, err, errlen)) goto fail;
        if (ha.channels != 3 || memcmp(ha.res, h.res, sizeof h.res) != 0) {
            snprintf(err, errlen, "%s: %u x %u x %u, %u channels: an albedo grid has 3, at the density's %u x %u x %u",
                     albedo_path, (unsigned)ha.res[0], (unsigned)ha.res[1], (unsigned)ha.res[2], (unsigned)ha.channels,
                     (unsigned)h.res[0], (unsigned)h.res[1], (unsigned)h.res[2]);
            goto fail;
        }
        md.albedo_grid = ha.offset;
    }
    /* world -> the grid's local space (inverse to_world) -> the unit cube (the file's bbox) */
    xform inv = xform_identity(), b = xform_identity();
    if (to_world && xform_invert(to_world, &inv)) {
        snprintf(err, errlen, "%s: its to_world transform is singular", density_path);
        goto fail;
    }
    if (use_grid_bbox)
        for (int a = 0; a < 3; ++a) {
            double lo = h.bbox[a], hi = h.bbox[3 + a];
            if (!(hi > lo) || !isfinite(lo) || !isfinite(hi)) {
                snprintf(err, errlen, "%s: its bounding box is empty or not finite on axis %c", density_path, "xyz"[a]);
                goto fail;
            }
            b.m[a][a] = (float)(1.0 / (hi - lo));
            b.m[a][3] = (float)(-lo / (hi - lo));
        }
    xform g = xform_mul(&b, &inv);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) md.to_grid[4 * r + c] = g.m[r][c];
    if (scene_add_grid_medium(s, name, md) < 0) {
        snprintf(err, errlen,
                 "%s: not a medium (a name used twice, coefficients negative or not finite, or out of memory)",
                 density_path);
        goto fail;
    }
    return 0;
fail:
    s->nvoxels = mark;
    return -1;
}
