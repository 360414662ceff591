/* Media of the Mitsuba reader: <medium> elements onto caustic's media, and the media a shape bounds. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "image/image.h"
#include "kernel/environment.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A <medium> (or a <ref> to one) as a caustic medium reference, read once per node: Mitsuba 3's
 * homogeneous medium (sigma_t and albedo, colours or floats or a constvolume, times scale; sigma_s
 * = albedo sigma_t, sigma_a = (1 - albedo) sigma_t; phase hg (g) or isotropic). Other media
 * (heterogeneous grids) warn and give 0: rendered without the medium. */
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
    if (!strcmp(type, "homogeneous")) {
        vec3 st = v3s(1.0f), albedo = v3s(0.75f);
        const char *names[2] = {"sigma_t", "albedo"};
        vec3 *dst[2] = {&st, &albedo};
        for (int k = 0; k < 2; ++k) {
            mx_node *p = mi_prop(n, names[k]);
            if (!p) continue;
            if (!strcmp(p->tag, "volume")) { /* constvolume: its value */
                const char *vt = mx_attr(p, "type");
                if (!vt || strcmp(vt, "constvolume"))
                    FAIL(R, p, "\"%s\" of a homogeneous medium: a <volume> must be a constvolume", names[k]);
                p->used = 1;
                mx_node *v = mi_prop(p, "value");
                if (!v) FAIL(R, p, "constvolume without \"value\"");
                v->used = 1;
                if (mi_colour_of(R, v, dst[k])) return -1;
                continue;
            }
            int tex;
            if (mi_get_colour_tex(R, n, names[k], *dst[k], dst[k], &tex)) return -1;
            if (tex >= 0) FAIL(R, p, "\"%s\" of a homogeneous medium cannot be a texture", names[k]);
        }
        double scale, g = 0.0;
        if (mi_get_float(R, n, "scale", 1.0, &scale)) return -1;
        int unused;
        if (mi_get_bool(R, n, "sample_emitters", 1, &unused) ||
            mi_get_bool(R, n, "has_spectral_extinction", 1, &unused))
            return -1;
        for (int i = 0; i < n->nkids; ++i) {
            const mx_node *c = n->kids[i];
            if (strcmp(c->tag, "phase")) continue;
            ((mx_node *)c)->used = 1;
            const char *pt = mx_attr(c, "type");
            if (pt && !strcmp(pt, "hg")) {
                if (mi_get_float(R, c, "g", 0.8, &g)) return -1;
                if (!(g > -1.0 && g < 1.0)) FAIL(R, c, "phase hg: g must be in (-1, 1), not %g", g);
            } else if (!pt || strcmp(pt, "isotropic")) {
                mi_mark_all(c);
                if (mi_warn_at(R, c, "phase", "phase function \"%s\": caustic has Henyey-Greenstein only: isotropic",
                               pt ? pt : "?"))
                    return -1;
            }
        }
        if (!(scale >= 0.0)) FAIL(R, n, "homogeneous medium: scale must be >= 0");
        if (albedo.x > 1.0f || albedo.y > 1.0f || albedo.z > 1.0f)
            FAIL(R, n, "homogeneous medium: albedo above 1 (%g %g %g)", albedo.x, albedo.y, albedo.z);
        medium md;
        memset(&md, 0, sizeof md);
        md.kind = MEDIUM_HOMOGENEOUS;
        st = vscale(st, (float)scale);
        md.sigma_s = vmul(albedo, st);
        md.sigma_a = vsub(st, md.sigma_s);
        md.g = (float)g;
        char name[64];
        const char *id = mx_attr(n, "id");
        snprintf(name, sizeof name, "%.40s#%zu", id ? id : "medium", R->nmed);
        int idx = scene_add_medium(R->s, name, md);
        if (idx < 0) FAIL(R, n, "homogeneous medium: not a medium (negative or non-finite coefficients?)");
        *ref = idx + 1;
    } else {
        mi_mark_all(n);
        if (mi_warn_at(R, n, "medium",
                       "medium \"%s\": caustic reads only homogeneous media from Mitsuba files yet; "
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
