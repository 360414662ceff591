/* Media of the Mitsuba reader: <medium> elements onto caustic's media, and the media a shape bounds.
 *
 * Mitsuba 3's media, in its own terms (heterogeneous.cpp, homogeneous.cpp, gridvolume.cpp):
 *   homogeneous:   sigma_t and albedo (colours, floats or constvolumes), times `scale`;
 *   heterogeneous: sigma_t(p) = scale * (the sigma_t volume at p), albedo(p) the albedo volume's
 *                  (a constant or a 3-channel gridvolume); sigma_s = albedo sigma_t, sigma_a =
 *                  (1 - albedo) sigma_t. A gridvolume is a .vol file over the unit cube of its
 *                  local space (to_world places it; use_grid_bbox: the file's bounding box is
 *                  mapped to that cube first), read trilinearly, the medium empty outside it.
 *                  (Mitsuba bounds the medium by the world-axis box of the placed grid and
 *                  clamps lookups: a grid that to_world rotates fills that box's corners with
 *                  its border voxels, which caustic does not: one warning. Checked by rendering
 *                  a rotated grid of ones in Mitsuba 3.9.1: a square, not a diamond.)
 * Both have a phase function (hg with g, default 0.8; isotropic, the default). A heterogeneous
 * medium is caustic's MEDIUM_GRID (kernel/media/grid.h): its density the sigma_t grid, its
 * coefficients per unit density scale * (albedo, 1 - albedo), an albedo grid (caustic keeps one
 * per density grid: same resolution and placement) making them scale * (1, 0) with the albedo
 * read per voxel. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "scene/material.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of property `name` of medium n (kind: its type, for messages): a colour, a float or a
 * constvolume's value into *out (left as it is where absent). A gridvolume is handed back in *grid
 * where grid is not NULL; otherwise it is an error. */
static int medium_value(reader *R, const mx_node *n, const char *name, const char *kind, vec3 *out,
                        const mx_node **grid) {
    if (grid) *grid = NULL;
    mx_node *p = mi_prop(n, name);
    if (!p) return 0;
    if (!strcmp(p->tag, "ref")) { /* a volume declared elsewhere (a colour is read below) */
        const mx_node *t;
        if (mi_deref(R, p, &t)) return -1;
        if (!strcmp(t->tag, "volume")) p = (mx_node *)t;
    }
    if (!strcmp(p->tag, "volume")) {
        const char *vt = mx_attr(p, "type");
        p->used = 1;
        if (vt && !strcmp(vt, "gridvolume") && grid) {
            *grid = p;
            return 0;
        }
        if (!vt || strcmp(vt, "constvolume"))
            FAIL(R, p, "\"%s\" of a %s medium: a <volume> must be a constvolume%s", name, kind,
                 grid ? " or a gridvolume" : "");
        mx_node *v = mi_prop(p, "value");
        if (!v) FAIL(R, p, "constvolume without \"value\"");
        v->used = 1;
        return mi_colour_of(R, v, out);
    }
    int tex;
    if (mi_get_colour_tex(R, n, name, *out, out, &tex)) return -1;
    if (tex >= 0) FAIL(R, p, "\"%s\" of a %s medium cannot be a texture", name, kind);
    return 0;
}

/* The phase function of medium n: hg's g (Mitsuba's default 0.8), 0 for isotropic (the default). */
static int medium_phase(reader *R, const mx_node *n, double *g) {
    *g = 0.0;
    for (int i = 0; i < n->nkids; ++i) {
        const mx_node *c = n->kids[i];
        if (strcmp(c->tag, "phase")) continue;
        ((mx_node *)c)->used = 1;
        const char *pt = mx_attr(c, "type");
        if (pt && !strcmp(pt, "hg")) {
            if (mi_get_float(R, c, "g", 0.8, g)) return -1;
            if (!(*g > -1.0 && *g < 1.0)) FAIL(R, c, "phase hg: g must be in (-1, 1), not %g", *g);
        } else if (!pt || strcmp(pt, "isotropic")) {
            mi_mark_all(c);
            if (mi_warn_at(R, c, "phase", "phase function \"%s\": caustic has Henyey-Greenstein only: isotropic",
                           pt ? pt : "?"))
                return -1;
        }
    }
    return 0;
}

/* A gridvolume's settings: its file (resolved, malloc'd), to_world and use_grid_bbox; what caustic
 * reads otherwise (nearest filtering, other wrap modes) is one warning each. */
static int grid_volume(reader *R, const mx_node *v, const char *name, char **path, xform *T, int *use_bbox) {
    const char *fn = mi_get_string(v, "filename", NULL);
    if (!fn)
        FAIL(R, v, "gridvolume (\"%s\") without filename%s", name,
             mi_prop(v, "grid") ? " (a grid object is Python's only)" : "");
    int raw, accel;
    if (mi_get_transform(R, v, "to_world", T) || mi_get_bool(R, v, "use_grid_bbox", 0, use_bbox) ||
        mi_get_bool(R, v, "raw", 0, &raw) || mi_get_bool(R, v, "accel", 1, &accel))
        return -1;
    const char *filter = mi_get_string(v, "filter_type", "trilinear"), *wrap = mi_get_string(v, "wrap_mode", "clamp");
    if (strcmp(filter, "trilinear") &&
        mi_warn_at(R, v, "gridvolume filter_type", "gridvolume filter_type \"%s\": caustic reads grids trilinearly",
                   filter))
        return -1;
    if (strcmp(wrap, "clamp") &&
        mi_warn_at(R, v, "gridvolume wrap_mode",
                   "gridvolume wrap_mode \"%s\": caustic's grids clamp (the medium is empty outside the grid)", wrap))
        return -1;
    /* axis-aligned: one entry per row of the linear part (a 90-degree turn permutes the axes) */
    float big = 0.0f;
    int turned = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) big = fmaxf(big, fabsf(T->m[r][c]));
    for (int r = 0; r < 3; ++r) {
        int n = 0;
        for (int c = 0; c < 3; ++c) n += fabsf(T->m[r][c]) > 1e-6f * big;
        turned |= n != 1;
    }
    if (turned && mi_warn_at(R, v, "gridvolume turned",
                             "gridvolume to_world rotates or shears the grid: Mitsuba's medium fills the "
                             "world-axis box around it (the grid's border voxels extended: wrap_mode clamp), "
                             "caustic's ends at the grid's faces"))
        return -1;
    *path = mx_resolve(&R->D, v, fn);
    if (!*path) FAIL(R, v, "out of memory");
    return 0;
}

/* A heterogeneous medium whose sigma_t is the gridvolume gst (albedo: a gridvolume gal, or the
 * constant albedo), as a MEDIUM_GRID named `name`: its index, or -1 with one message. */
static int add_grid(reader *R, const char *name, const mx_node *gst, const mx_node *gal, vec3 albedo, double scale,
                    double g) {
    char *dpath = NULL, *apath = NULL, err[1024];
    xform T, Ta;
    int bbox, bbox_a, rc = -1;
    if (grid_volume(R, gst, "sigma_t", &dpath, &T, &bbox)) return -1;
    if (gal) {
        if (grid_volume(R, gal, "albedo", &apath, &Ta, &bbox_a)) goto out;
        if (memcmp(&T, &Ta, sizeof T) != 0 || bbox != bbox_a) {
            char w[PRM_WHERE];
            mx_where(&R->P, w, gal);
            prm_fail(&R->P, w,
                     "an albedo gridvolume placed unlike the sigma_t one (to_world, use_grid_bbox): caustic keeps "
                     "one placement per grid medium");
            goto out;
        }
    }
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_GRID;
    md.g = (float)g;
    if (gal) { /* sigma_t per unit density: scale; the albedo grid splits it */
        md.sigma_s = v3s((float)scale);
    } else {
        md.sigma_s = vscale(albedo, (float)scale);
        md.sigma_a = vsub(v3s((float)scale), md.sigma_s);
    }
    if (vol_grid_medium(R->s, name, md, dpath, apath, &T, bbox, err, sizeof err)) {
        char w[PRM_WHERE];
        mx_where(&R->P, w, gal && strstr(err, apath) == err ? gal : gst);
        prm_fail(&R->P, w, "%s", err);
        goto out;
    }
    rc = (int)R->s->nmedia - 1;
out:
    free(dpath);
    free(apath);
    return rc;
}

/* A <medium> (or a <ref> to one) as a caustic medium reference, read once per node (the file's
 * comment says what each type means). Other types warn and give 0: rendered without the medium. */
int mi_medium_of(reader *R, const mx_node *n, int *ref) {
    *ref = 0;
    if (!strcmp(n->tag, "ref")) {
        const mx_node *t;
        ((mx_node *)n)->used = 1;
        if (mi_deref(R, n, &t)) return -1;
        if (strcmp(t->tag, "medium")) FAIL(R, n, "a medium reference names a <%s>, not a <medium>", t->tag);
        n = t;
    }
    for (size_t i = 0; i < R->nmed; ++i)
        if (R->med_nodes[i] == n) {
            *ref = R->med_refs[i];
            return 0;
        }
    ((mx_node *)n)->used = 1;
    const char *type = mx_attr(n, "type");
    if (!type) FAIL(R, n, "<medium> without type");
    int hetero = !strcmp(type, "heterogeneous");
    if (hetero || !strcmp(type, "homogeneous")) {
        vec3 st = v3s(1.0f), albedo = v3s(0.75f);
        const mx_node *gst = NULL, *gal = NULL;
        if (medium_value(R, n, "sigma_t", type, &st, hetero ? &gst : NULL) ||
            medium_value(R, n, "albedo", type, &albedo, hetero ? &gal : NULL))
            return -1;
        double scale, g;
        if (mi_get_float(R, n, "scale", 1.0, &scale)) return -1;
        int unused;
        if (mi_get_bool(R, n, "sample_emitters", 1, &unused) ||
            mi_get_bool(R, n, "has_spectral_extinction", 1, &unused))
            return -1;
        if (medium_phase(R, n, &g)) return -1;
        if (!(scale >= 0.0)) FAIL(R, n, "%s medium: scale must be >= 0", type);
        if (albedo.x > 1.0f || albedo.y > 1.0f || albedo.z > 1.0f)
            FAIL(R, n, "%s medium: albedo above 1 (%g %g %g)", type, albedo.x, albedo.y, albedo.z);
        char name[64];
        const char *id = mx_attr(n, "id");
        snprintf(name, sizeof name, "%.40s#%zu", id ? id : "medium", R->nmed);
        int idx;
        if (gst) {
            idx = add_grid(R, name, gst, gal, albedo, scale, g);
            if (idx < 0) return -1;
        } else {
            if (gal)
                FAIL(R, gal,
                     "an albedo gridvolume over a constant sigma_t: caustic's albedo grids go with "
                     "a density grid (make sigma_t a gridvolume)");
            if (hetero && mi_warn_at(R, n, "heterogeneous constant",
                                     "heterogeneous medium with a constant sigma_t: rendered as a homogeneous "
                                     "medium filling its shape"))
                return -1;
            medium md;
            memset(&md, 0, sizeof md);
            md.kind = MEDIUM_HOMOGENEOUS;
            st = vscale(st, (float)scale);
            md.sigma_s = vmul(albedo, st);
            md.sigma_a = vsub(st, md.sigma_s);
            md.g = (float)g;
            idx = scene_add_medium(R->s, name, md);
            if (idx < 0) FAIL(R, n, "%s medium: not a medium (negative or non-finite coefficients?)", type);
        }
        *ref = idx + 1;
    } else {
        mi_mark_all(n);
        if (mi_warn_at(R, n, "medium",
                       "medium \"%s\": caustic reads homogeneous and heterogeneous media from Mitsuba files; "
                       "rendered without the medium",
                       type))
            return -1;
    }
    const mx_node **gn = realloc(R->med_nodes, (R->nmed + 1) * sizeof *gn);
    if (gn) R->med_nodes = gn;
    int *gr = gn ? realloc(R->med_refs, (R->nmed + 1) * sizeof *gr) : NULL;
    if (!gr) FAIL(R, n, "out of memory");
    R->med_refs = gr;
    R->med_nodes[R->nmed] = n;
    R->med_refs[R->nmed++] = *ref;
    return 0;
}

/* A shape's media: its <medium name="interior"> / "exterior" children (or refs so named); 0 the
 * vacuum. */
int mi_shape_media(reader *R, const mx_node *sh, int *in, int *out) {
    *in = *out = 0;
    for (int i = 0; i < sh->nkids; ++i) {
        const mx_node *c = sh->kids[i];
        const mx_node *t = c;
        if (!strcmp(c->tag, "ref")) {
            if (mi_deref(R, c, &t)) return -1;
            if (strcmp(t->tag, "medium")) continue;
        } else if (strcmp(c->tag, "medium")) {
            continue;
        }
        const char *nm = mx_attr(c, "name");
        int ref;
        if (mi_medium_of(R, c, &ref)) return -1;
        if (nm && !strcmp(nm, "interior"))
            *in = ref;
        else if (nm && !strcmp(nm, "exterior"))
            *out = ref;
        else
            FAIL(R, c, "a shape's medium must be named \"interior\" or \"exterior\", not \"%s\"", nm ? nm : "");
    }
    return 0;
}
