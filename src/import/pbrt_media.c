/* The pbrt-v4 reader: MakeNamedMedium (pbrt_internal.h lists the files). "homogeneous" as caustic's
 * homogeneous medium; pbrt-v4's grid media "uniformgrid" (GridMedium) and "rgbgrid" (RGBGridMedium)
 * on caustic's dense grid medium (MEDIUM_GRID, kernel/media/grid.h), their voxels in the scene's
 * voxel array (scene_reserve_voxels / scene_commit_voxels, scene_add_grid_medium).
 *
 * The voxel convention. pbrt-v4's SampledGrid (util/containers.h) holds voxel i's value at
 * (i + 0.5) / n of the bounds [p0, p1] (after the medium's transformation, the CTM at
 * MakeNamedMedium) and interpolates trilinearly with every voxel outside the grid reading 0: the
 * field falls to half the face voxels' value at the faces. MEDIUM_GRID puts a voxel at the same cell
 * centre of its unit cube but clamps at the faces. They differ within half a voxel of each face, so
 * the grid is stored resampled onto a border of zero voxels (n + 2 along each axis), and to_grid maps
 * the bounds grown by one voxel each side onto the unit cube: inside [p0, p1] every lookup equals
 * pbrt's. Outside [p0, p1] pbrt reads nothing (it clips rays to the bounds); caustic reads, within
 * half a voxel of a face, up to half the face voxel's density. A medium bound to a shape that lies
 * inside [p0, p1] (the usual box) never looks there.
 *
 * rgbgrid: pbrt interpolates RGB sigma_a and sigma_s per voxel (absent grids read 1); MEDIUM_GRID
 * has one density and an RGB albedo a voxel. density = the largest channel of sigma_t, albedo =
 * sigma_s / density: sigma_s exact at voxel centres, sigma_t exact where the voxel's channels are
 * equal; where they differ the other channels absorb more (one warning, counted, with the largest
 * excess). Between voxel centres caustic interpolates density and albedo, pbrt sigma_s: equal where
 * the albedo is constant. Emission (Le): caustic's grid media emit one RGB Le (sigma_a(p) Le); a Le
 * that varies over the grid (pbrt's Lescale grid, rgbgrid's Le grid) is its mean (one warning), and
 * uniformgrid's "temperature" (blackbody emission) is not read (one warning). pbrt-v4 reads even
 * a constant Lescale through a one-voxel SampledGrid, so its uniformgrid emission falls to half at
 * the faces of [p0, p1] (to an eighth at the corners); caustic's is the constant. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/pbrt_internal.h"
#include "image/image.h"
#include "kernel/bidir_limits.h"
#include "scene/material.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pbrt's nx, ny, nz for `count` values of `what` (one value a voxel) */
static int grid_res(R *r, plist *pl, size_t count, const char *what, uint32_t res[3]) {
    long n[3];
    if (prm_int(&pl->l, "nx", 1, 1, 1L << 16, &n[0]) || prm_int(&pl->l, "ny", 1, 1, 1L << 16, &n[1]) ||
        prm_int(&pl->l, "nz", 1, 1, 1L << 16, &n[2]))
        return -1;
    size_t want = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    if (count != want) {
        prm_value *v = pbrt_pfind(pl, what);
        return prm_fail(&r->ctx, v ? v->where : pl->where,
                        "%s: %zu \"%s\" values; nx * ny * nz = %ld * %ld * %ld = %zu expected", pl->owner, count, what,
                        n[0], n[1], n[2], want);
    }
    for (int a = 0; a < 3; ++a) res[a] = (uint32_t)n[a];
    return 0;
}

/* the medium's place: world -> the unit cube over [p0, p1] grown by one voxel each side (res: the
 * file's voxels), through the CTM at MakeNamedMedium and the camera's mirror (before WorldBegin the
 * mirror is not known yet: pbrt_media_mirror adds it there) */
static int grid_place(R *r, plist *pl, const uint32_t res[3], medium *md) {
    vec3 p0, p1;
    if (prm_vec3(&pl->l, "p0", v3s(0.0f), -1e30, 1e30, "", &p0) ||
        prm_vec3(&pl->l, "p1", v3s(1.0f), -1e30, 1e30, "", &p1))
        return -1;
    double lo[3] = {p0.x, p0.y, p0.z}, hi[3] = {p1.x, p1.y, p1.z};
    m4 b = m4_id(), inv;
    for (int a = 0; a < 3; ++a) {
        if (!(hi[a] > lo[a])) {
            prm_value *v = pbrt_pfind(pl, "p1");
            return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: p1 is not above p0 on axis %c (%g <= %g)",
                            pl->owner, "xyz"[a], hi[a], lo[a]);
        }
        double voxel = (hi[a] - lo[a]) / res[a];
        double glo = lo[a] - voxel, ghi = hi[a] + voxel;
        b.m[a][a] = 1.0 / (ghi - glo);
        b.m[a][3] = -glo / (ghi - glo);
    }
    m4 to = final_m4(r);
    if (m4_inv(&to, &inv)) return prm_fail(&r->ctx, pl->where, "%s: its transformation is singular", pl->owner);
    m4 g = m4_mul(&b, &inv);
    for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 4; ++c) md->to_grid[4 * i + c] = (float)g.m[i][c];
    for (int a = 0; a < 3; ++a) md->res[a] = res[a] + 2u;
    return 0;
}

/* the file's voxels (nch floats each, x fastest) resampled onto the grid with its border: border
 * voxels read `border` (NULL: 0; else the nearest face voxel's value, for albedo grids).
 * *offset: where they start in s->voxels. */
static int grid_store(R *r, plist *pl, const float *v, const uint32_t res[3], uint32_t nch, int clamp_border,
                      uint32_t *offset) {
    size_t nx = res[0] + 2u, ny = res[1] + 2u, nz = res[2] + 2u, n = nx * ny * nz * nch;
    float *out = scene_reserve_voxels(r->s, n);
    if (!out) return prm_fail(&r->ctx, pl->where, "%s: out of voxel memory (%zu voxels)", pl->owner, n / nch);
    *offset = (uint32_t)r->s->nvoxels;
    for (size_t z = 0; z < nz; ++z)
        for (size_t y = 0; y < ny; ++y)
            for (size_t x = 0; x < nx; ++x) {
                size_t p[3] = {x, y, z}, q[3];
                int inside = 1;
                for (int a = 0; a < 3; ++a) {
                    inside &= p[a] >= 1 && p[a] <= res[a];
                    q[a] = p[a] < 1 ? 0 : (p[a] > res[a] ? res[a] - 1u : p[a] - 1u);
                }
                float *o = out + ((z * ny + y) * nx + x) * nch;
                const float *i = v + ((q[2] * res[1] + q[1]) * res[0] + q[0]) * nch;
                for (uint32_t c = 0; c < nch; ++c) o[c] = inside || clamp_border ? i[c] : 0.0f;
            }
    scene_commit_voxels(r->s, n);
    return 0;
}

/* numbers of `name` as floats: finite and >= 0, a multiple of `per` of them (NULL, *n 0 when absent) */
static int grid_values(R *r, plist *pl, const char *name, size_t per, float **out, size_t *n) {
    *out = NULL;
    *n = 0;
    size_t k = 0;
    const double *d = pbrt_pnums(r, pl, name, &k);
    if (k == (size_t)-1) return -1;
    if (!d) return 0;
    prm_value *v = pbrt_pfind(pl, name);
    if (k == 0 || k % per)
        return prm_fail(&r->ctx, v->where, "%s: %zu \"%s\" numbers, not a positive multiple of %zu", pl->owner, k, name,
                        per);
    for (size_t i = 0; i < k; ++i)
        if (!(d[i] >= 0.0) || !isfinite(d[i]))
            return prm_fail(&r->ctx, v->where, "%s: \"%s\" value %zu is %g (values are finite and >= 0)", pl->owner,
                            name, i + 1, d[i]);
    *out = malloc(k * sizeof **out);
    if (!*out) return oom(r, v->where);
    for (size_t i = 0; i < k; ++i) (*out)[i] = (float)d[i];
    *n = k / per;
    return 0;
}

/* a Le that varies over the grid: its mean, one warning */
static int grid_mean_le(R *r, plist *pl, const float *v, size_t n, uint32_t nch, const char *what, vec3 *mean) {
    double m[3] = {0, 0, 0};
    int varies = 0;
    for (size_t i = 0; i < n; ++i)
        for (uint32_t c = 0; c < 3; ++c) {
            float x = v[i * nch + (nch == 3 ? c : 0)];
            m[c] += x;
            varies |= x != v[nch == 3 ? c : 0];
        }
    *mean = v3((float)(m[0] / n), (float)(m[1] / n), (float)(m[2] / n));
    if (!varies) return 0;
    char key[120];
    snprintf(key, sizeof key, "grid Le %.60s", pl->owner);
    prm_value *pv = pbrt_pfind(pl, what);
    char ms[96];
    if (nch == 1)
        snprintf(ms, sizeof ms, "%g", mean->x);
    else
        snprintf(ms, sizeof ms, "%g %g %g", mean->x, mean->y, mean->z);
    return UNSUPPORTED(r, key, pv ? pv->where : pl->where,
                       "%s: \"%s\" varies over the grid; caustic's grid media emit one Le: its mean (%s) is used",
                       pl->owner, what, ms);
}

/* uniformgrid: density (nx ny nz), p0 p1, sigma_a sigma_s scale g, Le Lescale (temperature: warned) */
static int make_uniformgrid(R *r, plist *pl, medium *md) {
    float *dens = NULL, *les = NULL;
    size_t n, nle;
    uint32_t res[3];
    int rc = grid_values(r, pl, "density", 1, &dens, &n);
    if (!rc && !dens) rc = prm_fail(&r->ctx, pl->where, "%s: no \"float density\" values", pl->owner);
    if (!rc) rc = grid_res(r, pl, n, "density", res);
    prm_value *t = rc ? NULL : pbrt_pfind(pl, "temperature");
    if (t) {
        static const char *const temp[] = {"temperature", "temperatureoffset", "temperaturecutoff", "temperaturescale"};
        for (int i = 0; i < 4; ++i) {
            prm_value *v = pbrt_pfind(pl, temp[i]);
            if (v) v->used = 1;
        }
        rc = UNSUPPORTED(r, "grid temperature", t->where,
                         "%s: \"temperature\" (blackbody emission from a grid) is not read: caustic's grid media "
                         "emit one Le; rendered without that emission",
                         pl->owner);
    }
    double scale = 1, g = 0;
    vec3 le = v3s(0.0f);
    if (!rc)
        rc = pbrt_get_color(r, pl, "sigma_a", v3s(1.0f), 0, &md->sigma_a, NULL) ||
             pbrt_get_color(r, pl, "sigma_s", v3s(1.0f), 0, &md->sigma_s, NULL) ||
             pbrt_get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale) ||
             pbrt_get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) ||
             pbrt_get_color(r, pl, "Le", v3s(0.0f), 1, &le, NULL) || grid_values(r, pl, "Lescale", 1, &les, &nle);
    if (!rc && les && nle != n) {
        prm_value *v = pbrt_pfind(pl, "Lescale");
        rc = prm_fail(&r->ctx, v->where, "%s: %zu \"Lescale\" values; the density has %zu", pl->owner, nle, n);
    }
    if (!rc && les) {
        vec3 m;
        rc = grid_mean_le(r, pl, les, nle, 1, "Lescale", &m);
        le = vscale(le, m.x);
    }
    if (!rc) rc = grid_place(r, pl, res, md);
    if (!rc) rc = grid_store(r, pl, dens, res, 1, 0, &md->density_grid);
    md->albedo_grid = MEDIUM_NO_GRID;
    md->sigma_a = vscale(md->sigma_a, (float)scale);
    md->sigma_s = vscale(md->sigma_s, (float)scale);
    md->g = (float)g;
    md->emission = le;
    free(dens);
    free(les);
    return rc;
}

/* rgbgrid: sigma_a and/or sigma_s RGB grids (nx ny nz), p0 p1, scale g, Le (RGB grid) Lescale */
static int make_rgbgrid(R *r, plist *pl, medium *md) {
    float *sa = NULL, *ss = NULL, *le = NULL, *dens = NULL, *alb = NULL;
    size_t na = 0, ns = 0, nl = 0, n = 0;
    uint32_t res[3];
    double scale = 1, g = 0, lescale = 1;
    int rc = grid_values(r, pl, "sigma_a", 3, &sa, &na) || grid_values(r, pl, "sigma_s", 3, &ss, &ns) ||
             grid_values(r, pl, "Le", 3, &le, &nl);
    if (!rc && !sa && !ss)
        rc = prm_fail(&r->ctx, pl->where, "%s: an rgbgrid needs \"rgb sigma_a\" and/or \"rgb sigma_s\" values",
                      pl->owner);
    n = sa ? na : ns;
    if (!rc && sa && ss && na != ns)
        rc = prm_fail(&r->ctx, pbrt_pfind(pl, "sigma_s")->where, "%s: %zu \"sigma_s\" values; \"sigma_a\" has %zu",
                      pl->owner, ns, na);
    if (!rc && le && !sa)
        rc = prm_fail(&r->ctx, pbrt_pfind(pl, "Le")->where, "%s: \"Le\" needs \"sigma_a\" values", pl->owner);
    if (!rc && le && nl != n)
        rc =
            prm_fail(&r->ctx, pbrt_pfind(pl, "Le")->where, "%s: %zu \"Le\" values; the grid has %zu", pl->owner, nl, n);
    if (!rc) rc = grid_res(r, pl, n, sa ? "sigma_a" : "sigma_s", res);
    if (!rc)
        rc = pbrt_get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale) ||
             pbrt_get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) ||
             pbrt_get_float(r, pl, "Lescale", 1.0, 0.0, 1e30, &lescale);
    if (!rc) {
        dens = malloc(n * sizeof *dens);
        alb = malloc(3 * n * sizeof *alb);
        if (!dens || !alb) rc = oom(r, pl->where);
    }
    if (!rc) { /* density: sigma_t's largest channel; albedo sigma_s / density (absent grids read 1) */
        size_t chromatic = 0;
        double excess = 0, wsum = 0, asum[3] = {0, 0, 0};
        for (size_t i = 0; i < n; ++i) {
            float st[3], s3[3], d = 0.0f, lo = 1e30f;
            for (int c = 0; c < 3; ++c) {
                s3[c] = ss ? ss[3 * i + (size_t)c] : 1.0f;
                st[c] = (sa ? sa[3 * i + (size_t)c] : 1.0f) + s3[c];
                d = st[c] > d ? st[c] : d;
                lo = st[c] < lo ? st[c] : lo;
            }
            dens[i] = d;
            if (d > lo * (1.0f + 1e-6f)) {
                chromatic++;
                excess = fmax(excess, (d - lo) / d);
            }
            for (int c = 0; c < 3; ++c) {
                alb[3 * i + (size_t)c] = d > 0.0f ? s3[c] / d : -1.0f; /* -1: filled below */
                if (d > 0.0f) asum[c] += s3[c];
            }
            wsum += d;
        }
        /* voxels of no density: the grid's mean albedo, so that interpolating towards them keeps it */
        for (size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c)
                if (alb[3 * i + (size_t)c] < 0.0f) alb[3 * i + (size_t)c] = wsum > 0 ? (float)(asum[c] / wsum) : 0.0f;
        if (chromatic) {
            char key[120];
            snprintf(key, sizeof key, "rgbgrid chromatic %.60s", pl->owner);
            rc = UNSUPPORTED(r, key, pl->where,
                             "%s: sigma_a + sigma_s differs between RGB channels in %zu of %zu voxels: caustic's grid "
                             "has one density a voxel (its largest channel), so the other channels absorb up to "
                             "%.1f%% of it more than pbrt's",
                             pl->owner, chromatic, n, 100.0 * excess);
        }
    }
    vec3 lm = v3s(0.0f);
    if (!rc && le) rc = grid_mean_le(r, pl, le, nl, 3, "Le", &lm);
    if (!rc) rc = grid_place(r, pl, res, md);
    if (!rc) rc = grid_store(r, pl, dens, res, 1, 0, &md->density_grid);
    if (!rc) rc = grid_store(r, pl, alb, res, 3, 1, &md->albedo_grid);
    /* per unit density: sigma_t 1 in every channel (the albedo grid splits it) */
    md->sigma_a = v3s((float)(0.5 * scale));
    md->sigma_s = v3s((float)(0.5 * scale));
    md->g = (float)g;
    md->emission = vscale(lm, (float)lescale);
    free(sa);
    free(ss);
    free(le);
    free(dens);
    free(alb);
    return rc;
}

/* m's world -> grid map after the affine map x (world' = x world first): to_grid = to_grid x. */
static void to_grid_after(medium *m, const m4 *x) {
    float g[12];
    for (int row = 0; row < 3; ++row)
        for (int c = 0; c < 4; ++c) {
            double v = c == 3 ? m->to_grid[4 * row + 3] : 0.0;
            for (int k = 0; k < 3; ++k) v += m->to_grid[4 * row + k] * x->m[k][c];
            g[4 * row + c] = (float)v;
        }
    memcpy(m->to_grid, g, sizeof g);
}

/* nanovdb: pbrt-v4's NanoVDBMedium reads the float grid "gridname" (default "density") of
 * "filename" at the medium-space point's index coordinate (the grid's own index-to-world map, voxel
 * values at integer index coordinates, trilinear), medium space placed by the CTM at
 * MakeNamedMedium; sigma_a and sigma_s (default 1) times "scale" per unit density, HG "g". caustic's
 * NanoVDB medium (kernel/media/nanovdb.h) reads the same lookup through the grid's map (nvdb.c)
 * and the CTM (and the camera's mirror) composed on its world -> grid map. A temperature grid's
 * blackbody emission (Lescale, temperature*) is not rendered: one warning where one is asked for. */
static int make_nanovdb(R *r, plist *pl, const pbrt_token *at, const char *name, int *ref) {
    const char *file, *gridname;
    double scale, g;
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_NANOVDB;
    if (prm_string(&pl->l, "filename", "", &file) || prm_string(&pl->l, "gridname", "density", &gridname) ||
        prm_float(&pl->l, "scale", 1.0, 0.0, 1e30, "", &scale) || prm_float(&pl->l, "g", 0.0, -0.999, 0.999, "", &g) ||
        pbrt_get_color(r, pl, "sigma_a", v3s(1.0f), 0, &md.sigma_a, NULL) ||
        pbrt_get_color(r, pl, "sigma_s", v3s(1.0f), 0, &md.sigma_s, NULL))
        return -1;
    if (!file[0]) return prm_fail(&r->ctx, pl->where, "%s: a \"nanovdb\" medium needs \"string filename\"", pl->owner);
#if !defined(CAUSTIC_HAVE_NANOVDB)
    for (size_t i = 0; i < pl->l.n; ++i) pl->l.v[i].used = 1;
    (void)at, (void)name, (void)ref;
    return UNSUPPORTED(r, "medium nanovdb", pl->where,
                       "%s of type \"nanovdb\" (\"%s\"): caustic was built without NanoVDB (libnanovdb-dev); "
                       "rendered without the medium",
                       pl->owner, file);
#endif
    static const char *const emission[] = {"Lescale", "temperaturename", "temperatureoffset", "temperaturecutoff",
                                           "temperaturescale"};
    prm_value *asked = NULL;
    for (size_t i = 0; i < sizeof emission / sizeof *emission; ++i) {
        prm_value *v = pbrt_pfind(pl, emission[i]);
        if (v) v->used = 1;
        if (v && !asked) asked = v;
    }
    if (asked && UNSUPPORTED(r, "nanovdb temperature", asked->where,
                             "%s: a temperature grid's blackbody emission is not rendered (the density is)", pl->owner))
        return -1;
    md.sigma_a = vscale(md.sigma_a, (float)scale);
    md.sigma_s = vscale(md.sigma_s, (float)scale);
    md.g = (float)g;
    m4 to = final_m4(r), inv;
    if (m4_inv(&to, &inv)) return prm_fail(&r->ctx, pl->where, "%s: its transformation is singular", pl->owner);
    char *path = pbrt_resolve(&r->lx, at, file);
    if (!path) return prm_fail(&r->ctx, pl->where, "out of memory");
    char err[512];
    size_t n0 = r->s->nmedia;
    int rc = nvdb_grid_medium(r->s, name, md, path, gridname, NULL, err, sizeof err);
    free(path);
    if (rc) {
        prm_value *v = pbrt_pfind(pl, "filename");
        return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: %s", pl->owner, err);
    }
    /* the grid's map gives grid space from medium space: world -> medium by the CTM's inverse first */
    medium *m = &r->s->media[n0];
    to_grid_after(m, &inv);
    *ref = (int)n0 + 1;
    return 0;
}

/* The grid media made before WorldBegin, placed without the mirror the camera then decides: their
 * world -> grid maps take it (world' = mirror world, and the mirror is its own inverse). */
void pbrt_media_mirror(R *r) {
    for (size_t i = 0; i < r->s->nmedia; ++i) {
        medium *m = &r->s->media[i];
        if (m->kind != MEDIUM_GRID && m->kind != MEDIUM_NANOVDB) continue;
        to_grid_after(m, &r->mirror);
    }
}

/* MakeNamedMedium's medium as a caustic medium, *ref its reference: "homogeneous" (sigma_a, sigma_s,
 * scale, g, Le, Lescale, preset), "uniformgrid", "rgbgrid" and "nanovdb" (above); "cloud" is not
 * read: one warning, and shapes bound to it render without the medium (*ref 0). */
int pbrt_make_medium(R *r, plist *pl, const pbrt_token *at, const char *name, int *ref) {
    const char *type;
    *ref = 0;
    if (prm_string(&pl->l, "type", "", &type)) return -1;
    if (!strcmp(type, "uniformgrid") || !strcmp(type, "rgbgrid")) {
        medium md;
        memset(&md, 0, sizeof md);
        md.kind = MEDIUM_GRID;
        size_t mark = r->s->nvoxels;
        if (!strcmp(type, "uniformgrid") ? make_uniformgrid(r, pl, &md) : make_rgbgrid(r, pl, &md)) {
            r->s->nvoxels = mark;
            return -1;
        }
        int idx = scene_add_grid_medium(r->s, name, md);
        if (idx < 0) {
            r->s->nvoxels = mark;
            return prm_fail(&r->ctx, pl->where, "%s: not a medium (negative or non-finite coefficients?)", pl->owner);
        }
        *ref = idx + 1;
        return 0;
    }
    if (!strcmp(type, "nanovdb")) return make_nanovdb(r, pl, at, name, ref);
    if (strcmp(type, "homogeneous") != 0) {
        for (size_t i = 0; i < pl->l.n; ++i) pl->l.v[i].used = 1;
        char key[80];
        snprintf(key, sizeof key, "medium %.60s", type);
        if (!type[0]) return prm_fail(&r->ctx, pl->where, "%s: no \"string type\"", pl->owner);
        return UNSUPPORTED(
            r, key, pl->where,
            "%s of type \"%s\": caustic reads homogeneous, uniformgrid, rgbgrid and nanovdb media from pbrt "
            "files; rendered without the medium",
            pl->owner, type);
    }
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    const char *preset;
    if (prm_string(&pl->l, "preset", "", &preset)) return -1;
    if (preset[0]) {
        if (material_measured_medium(preset, &md.sigma_a, &md.sigma_s)) {
            prm_value *v = pbrt_pfind(pl, "preset");
            return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: unknown preset \"%s\" (Skin1, Ketchup, ...)",
                            pl->owner, preset);
        }
        /* pbrt-v4 reads sigma_a / sigma_s only without a preset */
        prm_value *v;
        if ((v = pbrt_pfind(pl, "sigma_a")) != NULL) v->used = 1;
        if ((v = pbrt_pfind(pl, "sigma_s")) != NULL) v->used = 1;
    } else if (pbrt_get_color(r, pl, "sigma_a", v3s(1.0f), 0, &md.sigma_a, NULL) ||
               pbrt_get_color(r, pl, "sigma_s", v3s(1.0f), 0, &md.sigma_s, NULL)) {
        return -1;
    }
    double scale, g, lescale;
    vec3 le;
    if (pbrt_get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale) || pbrt_get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) ||
        pbrt_get_color(r, pl, "Le", v3s(0.0f), 1, &le, NULL) ||
        pbrt_get_float(r, pl, "Lescale", 1.0, 0.0, 1e30, &lescale))
        return -1;
    md.sigma_a = vscale(md.sigma_a, (float)scale);
    md.sigma_s = vscale(md.sigma_s, (float)scale);
    md.g = (float)g;
    md.emission = vscale(le, (float)lescale);
    int idx = scene_add_medium(r->s, name, md);
    if (idx < 0)
        return prm_fail(&r->ctx, pl->where, "%s: not a medium (negative or non-finite coefficients?)", pl->owner);
    *ref = idx + 1;
    return 0;
}
