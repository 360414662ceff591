/* The NanoVDB grid medium (MEDIUM_NANOVDB): the grid medium of kernel/media/grid.h whose density is
 * read from a NanoVDB float grid (kscene.nanovdb at medium.density_grid words) through NanoVDB's
 * own C reader, PNanoVDB.h (Debian's libnanovdb-dev). Kernel code (CPU and GPU). Everything but the
 * lookup is grid.h's: the majorant grid (built on the host from this grid, src/import/nvdb.c), its
 * DDA, delta/ratio tracking and spectral MIS.
 *
 * The lookup: grid point u of the unit cube is index coordinate imin - 1/2 + u * res (the unit
 * cube is the cells of the grid's active index bounding box, voxel i's value at index coordinate
 * i, NanoVDB's convention), interpolated trilinearly from the eight voxels around it as grid.h's
 * dense lookup does (the same float operations: a NanoVDB copy of a dense grid reads the same
 * values). Voxels the tree does not store read the grid's background (0 for a fog volume: the
 * loader refuses another background).
 *
 * PNanoVDB.h is C for the CPU; nvcc compiles it as C++ for the device only with its functions made
 * __host__ __device__ and its constant tables __device__: the one place that does so is below. */
#ifndef CAUSTIC_KERNEL_MEDIA_NANOVDB_H
#define CAUSTIC_KERNEL_MEDIA_NANOVDB_H

#include "grid.h"

#if defined(CAUSTIC_HAVE_NANOVDB)
#ifndef PNANOVDB_C
#define PNANOVDB_C
#endif
#if defined(__CUDACC__)
#include <math.h> /* its system headers first, outside the macros below */
#include <stdint.h>
#include <string.h>
#pragma push_macro("inline")
#pragma push_macro("static")
#define inline __host__ __device__ inline /* its functions are `static inline` */
#define static static __device__          /* ... and its tables `static const` */
#include <nanovdb/PNanoVDB.h>
#pragma pop_macro("static")
#pragma pop_macro("inline")
#else
#include <nanovdb/PNanoVDB.h>
#endif

/* NanoVDB's voxel value at index ijk (the accessor caches the nodes of the last lookup). */
KFN float nanovdb_value(pnanovdb_buf_t buf, pnanovdb_readaccessor_t *acc, int32_t x, int32_t y, int32_t z) {
    pnanovdb_coord_t ijk;
    ijk.x = x;
    ijk.y = y;
    ijk.z = z;
    return pnanovdb_read_float(buf, pnanovdb_readaccessor_get_value_address(PNANOVDB_GRID_TYPE_FLOAT, buf, acc, &ijk));
}
/* The corner voxel i0 (index space, i0 + 1 the other) and weight f of grid coordinate u along an
 * axis of n voxels from imin: grid.h's grid_axis without its clamp. */
KFN int32_t nanovdb_axis(float u, uint32_t n, int32_t imin, float *f) {
    float v = u * (float)n - 0.5f, fl = floorf(v);
    *f = v - fl;
    return (int32_t)fl + imin;
}
/* pnanovdb_buf_t of grid m (PNanoVDB's reader takes a mutable pointer; it only reads). */
KFN pnanovdb_buf_t nanovdb_buf(const kscene *s, const medium *m) {
    return pnanovdb_make_buf((uint32_t *)(uintptr_t)(s->nanovdb + m->density_grid), 0u);
}
KFN float nanovdb_density(const kscene *s, const medium *m, vec3 u) {
    pnanovdb_buf_t buf = nanovdb_buf(s, m);
    pnanovdb_grid_handle_t grid;
    grid.address = pnanovdb_address_null();
    pnanovdb_readaccessor_t acc;
    pnanovdb_readaccessor_init(&acc, pnanovdb_tree_get_root(buf, pnanovdb_grid_get_tree(buf, grid)));
    float fx, fy, fz;
    int32_t x = nanovdb_axis(u.x, m->res[0], m->index_min[0], &fx);
    int32_t y = nanovdb_axis(u.y, m->res[1], m->index_min[1], &fy);
    int32_t z = nanovdb_axis(u.z, m->res[2], m->index_min[2], &fz);
    float c00 = nanovdb_value(buf, &acc, x, y, z) * (1.0f - fx) + nanovdb_value(buf, &acc, x + 1, y, z) * fx;
    float c01 = nanovdb_value(buf, &acc, x, y + 1, z) * (1.0f - fx) + nanovdb_value(buf, &acc, x + 1, y + 1, z) * fx;
    float c10 = nanovdb_value(buf, &acc, x, y, z + 1) * (1.0f - fx) + nanovdb_value(buf, &acc, x + 1, y, z + 1) * fx;
    float c11 =
        nanovdb_value(buf, &acc, x, y + 1, z + 1) * (1.0f - fx) + nanovdb_value(buf, &acc, x + 1, y + 1, z + 1) * fx;
    float c0 = c00 * (1.0f - fy) + c01 * fy, c1 = c10 * (1.0f - fy) + c11 * fy;
    return c0 * (1.0f - fz) + c1 * fz;
}

#else
/* built without libnanovdb-dev: the loader refuses NanoVDB media (src/import/nvdb.c) */
KFN float nanovdb_density(const kscene *s, const medium *m, vec3 u) {
    (void)s;
    (void)m;
    (void)u;
    return 0.0f;
}
#endif

/* The kind's entry points (kernel/medium.h): grid.h's tracking over this lookup. */
KFN medium_segment nanovdb_sample_segment(const kscene *s, const medium *m, ray r, float tmax, vec3 beta,
                                          float u_channel, float u_dist, pcg32 *rng) {
    return grid_sample_segment(s, m, r, tmax, beta, u_channel, u_dist, rng);
}
KFN vec3 nanovdb_transmittance(const kscene *s, const medium *m, ray r, float t, pcg32 *rng) {
    return grid_transmittance(s, m, r, t, rng);
}

#endif
