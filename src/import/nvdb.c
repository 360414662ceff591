/* NanoVDB grids (.nvdb files, and OpenVDB .vdb files converted by src/import/openvdb.cpp) as grid
 * media (MEDIUM_NANOVDB, kernel/media/nanovdb.h).
 *
 * The file (NanoVDB 32.x, nanovdb/util/IO.h): segments, each a 16-byte header (magic "NanoVDB0",
 * version, grid count, codec), then per grid a 176-byte MetaData record and its name, then the
 * grids' bytes in the same order. Only uncompressed segments (codec 0) are read.
 *
 * A grid's bytes go into the scene verbatim (scene.nanovdb); the kernel reads them with PNanoVDB.h
 * without bounds checks. So the loader reads every voxel the kernel's trilinear lookup can reach
 * (the active index box grown by one voxel) through PNanoVDB with a buffer that checks every read:
 * a tree whose offsets leave the grid is refused, and the same walk builds the majorant grid (the
 * largest value of each majorant cell's support, as scene_add_grid_medium's for dense grids). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"

#if defined(CAUSTIC_HAVE_NANOVDB)
/* PNanoVDB over a bounds-checked buffer (the host's reads; the kernel's buffer is PNanoVDB's own) */
#define PNANOVDB_C
#define PNANOVDB_BUF_CUSTOM
#define PNANOVDB_ADDRESS_64
typedef struct pnanovdb_buf_t {
    const uint32_t *data;
    uint64_t words;
    int *oob; /* set by a read past the end */
} pnanovdb_buf_t;
static inline uint32_t pnanovdb_buf_read_uint32(pnanovdb_buf_t b, uint64_t off) {
    uint64_t w = off >> 2u;
    if (w >= b.words) {
        *b.oob = 1;
        return 0u;
    }
    return b.data[w];
}
/* as PNanoVDB's own: the aligned 64-bit word holding off */
static inline uint64_t pnanovdb_buf_read_uint64(pnanovdb_buf_t b, uint64_t off) {
    uint64_t w = (off >> 3u) * 2u;
    if (w + 1u >= b.words) {
        *b.oob = 1;
        return 0u;
    }
    return (uint64_t)b.data[w] | ((uint64_t)b.data[w + 1u] << 32u);
}
typedef uint32_t pnanovdb_grid_type_t;
#define PNANOVDB_GRID_TYPE_GET(t, name) pnanovdb_grid_type_constants[t].name
#include <nanovdb/PNanoVDB.h>

#define NVDB_MAGIC       0x304244566f6e614eull /* "NanoVDB0" */
#define NVDB_HEADER      16u
#define NVDB_META        176u
#define NVDB_MAX_VOXELS  (1ull << 31) /* the active box grown by one, scanned on load */
#define NVDB_GRID_HEADER 672u         /* GridData: everything up to the tree */

static uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static uint32_t rd32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

int nvdb_find_grid(const unsigned char *data, size_t n, const char *file, const char *grid_name, size_t *off,
                   size_t *size, char *err, size_t errlen) {
    const char *want = grid_name ? grid_name : "density";
    size_t pos = 0;
    char names[256];
    size_t nl = 0;
    names[0] = '\0';
    if (n < NVDB_HEADER) {
        snprintf(err, errlen, "%s: not a NanoVDB file (%zu bytes, shorter than its header)", file, n);
        return -1;
    }
    while (pos < n) {
        if (n - pos < NVDB_HEADER) {
            snprintf(err, errlen, "%s: truncated segment header at byte %zu", file, pos);
            return -1;
        }
        const unsigned char *h = data + pos;
        if (rd64(h) != NVDB_MAGIC) {
            snprintf(err, errlen, "%s: not a NanoVDB file (bad magic at byte %zu)", file, pos);
            return -1;
        }
        uint32_t version = rd32(h + 8), major = version >> 21;
        uint16_t count, codec;
        memcpy(&count, h + 12, 2);
        memcpy(&codec, h + 14, 2);
        if (major != 32u) {
            snprintf(err, errlen, "%s: NanoVDB version %u.%u, caustic reads 32.x", file, (unsigned)major,
                     (unsigned)((version >> 10) & 2047u));
            return -1;
        }
        if (codec != 0u) {
            snprintf(err, errlen, "%s: compressed NanoVDB (codec %u); write it uncompressed", file, (unsigned)codec);
            return -1;
        }
        if (count == 0u) {
            snprintf(err, errlen, "%s: a segment with no grids at byte %zu", file, pos);
            return -1;
        }
        pos += NVDB_HEADER;
        /* the metadata records, then the grids */
        size_t mpos = pos, gpos;
        for (uint32_t i = 0; i < count; ++i) {
            if (n - mpos < NVDB_META) {
                snprintf(err, errlen, "%s: truncated grid metadata (grid %u)", file, (unsigned)i);
                return -1;
            }
            uint32_t name_size = rd32(data + mpos + 136);
            if (name_size > n - mpos - NVDB_META) {
                snprintf(err, errlen, "%s: grid %u's name runs past the end of the file", file, (unsigned)i);
                return -1;
            }
            mpos += NVDB_META + name_size;
        }
        gpos = mpos;
        for (uint32_t i = 0; i < count; ++i) {
            const unsigned char *m = data + pos;
            uint64_t gsize = rd64(m), fsize = rd64(m + 8);
            uint32_t type = rd32(m + 32), name_size = rd32(m + 136);
            uint16_t gcodec;
            memcpy(&gcodec, m + 168, 2);
            const char *name = (const char *)m + NVDB_META;
            size_t len = name_size ? strnlen(name, name_size) : 0;
            if (fsize > n - gpos) {
                snprintf(err, errlen, "%s: grid \"%.*s\" (%llu bytes) runs past the end of the file", file,
                         (int)(len > 64 ? 64 : len), name, (unsigned long long)fsize);
                return -1;
            }
            if (len == strlen(want) && memcmp(name, want, len) == 0) {
                if (type != PNANOVDB_GRID_TYPE_FLOAT) {
                    snprintf(err, errlen, "%s: grid \"%s\" holds type %u values, caustic reads float grids (type %u)",
                             file, want, (unsigned)type, (unsigned)PNANOVDB_GRID_TYPE_FLOAT);
                    return -1;
                }
                if (gcodec != 0u || gsize != fsize) {
                    snprintf(err, errlen, "%s: grid \"%s\" is compressed; write it uncompressed", file, want);
                    return -1;
                }
                if (gsize < NVDB_GRID_HEADER || (gpos & 3u)) {
                    snprintf(err, errlen, "%s: grid \"%s\" is %llu bytes, too small for a NanoVDB grid", file, want,
                             (unsigned long long)gsize);
                    return -1;
                }
                *off = gpos;
                *size = (size_t)gsize;
                return 0;
            }
            if (nl + len + 4 < sizeof names) {
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s\"%.*s\"", nl ? ", " : "", (int)len, name);
            }
            pos += NVDB_META + name_size;
            gpos += (size_t)fsize;
        }
        pos = gpos;
    }
    snprintf(err, errlen, "%s: no grid named \"%s\" (the file has %s)%s", file, want, names,
             grid_name ? "" : ": name one with GRID_NAME");
    return -1;
}

/* The voxel index range [lo, hi] a trilinear lookup (kernel/media/nanovdb.h) can read anywhere in
 * grid coordinates [a, b] of an axis of n voxels from imin (no clamp: the box grown by one). */
static void nvdb_support(double a, double b, uint32_t n, int32_t imin, int64_t *lo, int64_t *hi) {
    *lo = (int64_t)floor(a * n - 0.5) + imin;
    *hi = (int64_t)floor(b * n - 0.5) + 1 + imin;
}

int nvdb_grid_medium_memory(scene *s, const char *name, medium md, const unsigned char *grid_bytes, size_t size,
                            const char *file, const double *box, char *err, size_t errlen) {
    if (size < NVDB_GRID_HEADER) {
        snprintf(err, errlen, "%s: a %zu-byte grid is too small for a NanoVDB grid", file, size);
        return -1;
    }
    size_t nw = (size + 3u) / 4u, off;
    size_t mark_v = s->nvoxels, mark_n = s->nnanovdb;
    uint32_t *w = scene_reserve_nanovdb(s, nw, &off);
    if (!w) {
        snprintf(err, errlen, "%s: out of memory for a %zu-byte grid", file, size);
        return -1;
    }
    w[nw - 1] = 0u;
    memcpy(w, grid_bytes, size);
    int oob = 0;
    pnanovdb_buf_t buf = {w, nw, &oob};
    pnanovdb_grid_handle_t grid = {pnanovdb_address_null()};
    if (pnanovdb_grid_get_magic(buf, grid) != NVDB_MAGIC || pnanovdb_grid_get_grid_type(buf, grid) != 1u) {
        snprintf(err, errlen, "%s: the grid's own header is not a NanoVDB float grid's", file);
        goto fail;
    }
    pnanovdb_tree_handle_t tree = pnanovdb_grid_get_tree(buf, grid);
    pnanovdb_root_handle_t root = pnanovdb_tree_get_root(buf, tree);
    pnanovdb_coord_t bmin = pnanovdb_root_get_bbox_min(buf, root), bmax = pnanovdb_root_get_bbox_max(buf, root);
    float bg = pnanovdb_read_float(
        buf,
        pnanovdb_address_offset(root.address, PNANOVDB_GRID_TYPE_GET(PNANOVDB_GRID_TYPE_FLOAT, root_off_background)));
    /* the root's tiles (every lookup searches them: their count bounds its loop) */
    uint64_t tiles = pnanovdb_root_get_tile_count(buf, root);
    uint64_t tiles_end = root.address.byte_offset + PNANOVDB_GRID_TYPE_GET(PNANOVDB_GRID_TYPE_FLOAT, root_size) +
                         tiles * PNANOVDB_GRID_TYPE_GET(PNANOVDB_GRID_TYPE_FLOAT, root_tile_size);
    if (oob || tiles > size || tiles_end > size) {
        snprintf(err, errlen, "%s: the grid's tree lies outside its %zu bytes", file, size);
        goto fail;
    }
    if (bg != 0.0f) {
        snprintf(err, errlen, "%s: the grid's background is %g: a density grid's is 0 (a fog volume)", file, bg);
        goto fail;
    }
    int32_t lo3[3] = {bmin.x, bmin.y, bmin.z}, hi3[3] = {bmax.x, bmax.y, bmax.z};
    uint64_t nv = 1;
    for (int a = 0; a < 3; ++a) {
        if (hi3[a] < lo3[a] || hi3[a] >= INT32_MAX - 2 || lo3[a] <= INT32_MIN + 2) {
            snprintf(err, errlen, "%s: the grid has no active voxels (or an index box out of range)", file);
            goto fail;
        }
        md.res[a] = (uint32_t)((int64_t)hi3[a] - lo3[a] + 1);
        md.index_min[a] = lo3[a];
        nv *= (uint64_t)md.res[a] + 2u;
        if (nv > NVDB_MAX_VOXELS) {
            snprintf(err, errlen, "%s: the grid's active box (%d..%d on %c) is over %llu voxels", file, lo3[a], hi3[a],
                     "xyz"[a], (unsigned long long)NVDB_MAX_VOXELS);
            goto fail;
        }
    }
    /* placement: BOX, or the grid's map (index -> world, affine) */
    memset(md.to_grid, 0, sizeof md.to_grid);
    if (box) {
        for (int a = 0; a < 3; ++a) {
            md.to_grid[4 * a + a] = (float)(1.0 / (box[3 + a] - box[a]));
            md.to_grid[4 * a + 3] = (float)(-box[a] / (box[3 + a] - box[a]));
        }
    } else {
        pnanovdb_map_handle_t map = pnanovdb_grid_get_map(buf, grid);
        for (int a = 0; a < 3; ++a) {
            double c = 0.0;
            for (int j = 0; j < 3; ++j) {
                double inv = pnanovdb_map_get_invmatd(buf, map, (uint32_t)(3 * a + j));
                md.to_grid[4 * a + j] = (float)(inv / md.res[a]);
                c += inv * pnanovdb_map_get_vecd(buf, map, (uint32_t)j);
            }
            md.to_grid[4 * a + 3] = (float)((-c - (md.index_min[a] - 0.5)) / md.res[a]);
        }
        for (int i = 0; i < 12; ++i)
            if (!isfinite(md.to_grid[i])) {
                snprintf(err, errlen, "%s: the grid's index-to-world map is not invertible: give BOX", file);
                goto fail;
            }
    }
    /* the majorant grid: every voxel the kernel can read, through checked reads */
    size_t nm = scene_majorant_res(&md);
    float *mg = scene_reserve_voxels(s, nm);
    if (!mg) {
        snprintf(err, errlen, "%s: out of memory for the majorant grid", file);
        goto fail;
    }
    pnanovdb_readaccessor_t acc;
    pnanovdb_readaccessor_init(&acc, root);
    for (uint32_t cz = 0; cz < md.mres[2]; ++cz)
        for (uint32_t cy = 0; cy < md.mres[1]; ++cy)
            for (uint32_t cx = 0; cx < md.mres[0]; ++cx) {
                int64_t lo[3], hi[3];
                uint32_t c[3] = {cx, cy, cz};
                for (int a = 0; a < 3; ++a)
                    nvdb_support((double)c[a] / md.mres[a], (double)(c[a] + 1) / md.mres[a], md.res[a], md.index_min[a],
                                 &lo[a], &hi[a]);
                float mx = 0.0f;
                for (int64_t z = lo[2]; z <= hi[2]; ++z)
                    for (int64_t y = lo[1]; y <= hi[1]; ++y)
                        for (int64_t x = lo[0]; x <= hi[0]; ++x) {
                            pnanovdb_coord_t ijk = {(int32_t)x, (int32_t)y, (int32_t)z};
                            float v = pnanovdb_read_float(buf, pnanovdb_readaccessor_get_value_address(
                                                                   PNANOVDB_GRID_TYPE_FLOAT, buf, &acc, &ijk));
                            if (!(v >= 0.0f) || !isfinite(v)) {
                                snprintf(err, errlen, "%s: voxel (%d, %d, %d) holds %g: densities are finite and >= 0",
                                         file, (int)x, (int)y, (int)z, v);
                                goto fail;
                            }
                            mx = v > mx ? v : mx;
                        }
                if (oob) {
                    snprintf(err, errlen, "%s: the grid's tree points outside its %zu bytes", file, size);
                    goto fail;
                }
                mg[((size_t)cz * md.mres[1] + cy) * md.mres[0] + cx] = mx;
            }
    md.kind = MEDIUM_NANOVDB;
    md.density_grid = (uint32_t)off;
    md.albedo_grid = MEDIUM_NO_GRID;
    md.majorant_grid = (uint32_t)s->nvoxels;
    scene_commit_voxels(s, nm);
    scene_commit_nanovdb(s, off + nw);
    if (scene_add_nanovdb_medium(s, name, md) < 0) {
        snprintf(err, errlen, "%s: could not add the grid medium (out of memory)", file);
        goto fail;
    }
    return 0;
fail:
    s->nvoxels = mark_v;
    s->nnanovdb = mark_n;
    return -1;
}

/* The whole file (at most 4 GiB) in memory, or NULL with a message. */
static unsigned char *nvdb_read_file(const char *path, size_t *n, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return NULL;
    }
    unsigned char *d = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0 || (unsigned long long)len > (4ull << 30)) {
        snprintf(err, errlen, "%s: cannot read (or over 4 GiB)", path);
    } else if (!(d = malloc(len ? (size_t)len : 1u))) {
        snprintf(err, errlen, "%s: out of memory (%ld bytes)", path, len);
    } else if (fread(d, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, errlen, "%s: read error", path);
        free(d);
        d = NULL;
    }
    fclose(f);
    *n = (size_t)(len < 0 ? 0 : len);
    return d;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    if (a < b) return 0;
    for (size_t i = 0; i < b; ++i)
        if ((s[a - b + i] | 0x20) != (suffix[i] | 0x20)) return 0;
    return 1;
}

int nvdb_grid_medium(scene *s, const char *name, medium md, const char *path, const char *grid_name, const double *box,
                     char *err, size_t errlen) {
    unsigned char *data = NULL;
    size_t n = 0, off = 0, size = 0;
    int rc = -1;
    if (ends_with(path, ".vdb")) {
        if (openvdb_to_nanovdb(path, grid_name ? grid_name : "density", &data, &n, err, errlen)) return -1;
        off = 0;
        size = n;
        rc = 0;
    } else {
        data = nvdb_read_file(path, &n, err, errlen);
        if (!data) return -1;
        rc = nvdb_find_grid(data, n, path, grid_name, &off, &size, err, errlen);
    }
    if (rc == 0) rc = nvdb_grid_medium_memory(s, name, md, data + off, size, path, box, err, errlen);
    free(data);
    return rc;
}
#else
int nvdb_find_grid(const unsigned char *data, size_t n, const char *file, const char *grid_name, size_t *off,
                   size_t *size, char *err, size_t errlen) {
    (void)data, (void)n, (void)grid_name, (void)off, (void)size;
    snprintf(err, errlen, "%s: caustic was built without NanoVDB (libnanovdb-dev)", file);
    return -1;
}
int nvdb_grid_medium_memory(scene *s, const char *name, medium md, const unsigned char *grid_bytes, size_t size,
                            const char *file, const double *box, char *err, size_t errlen) {
    (void)s, (void)name, (void)md, (void)grid_bytes, (void)size, (void)box;
    snprintf(err, errlen, "%s: caustic was built without NanoVDB (libnanovdb-dev)", file);
    return -1;
}
int nvdb_grid_medium(scene *s, const char *name, medium md, const char *path, const char *grid_name, const double *box,
                     char *err, size_t errlen) {
    (void)grid_name;
    return nvdb_grid_medium_memory(s, name, md, NULL, 0, path, box, err, errlen);
}
#endif
