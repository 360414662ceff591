/* The pbrt-v4 reader: MakeNamedMedium (pbrt_internal.h lists the files). */
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

/* MakeNamedMedium's medium: "homogeneous" (sigma_a, sigma_s, scale, g, Le, Lescale, preset) as a
 * caustic medium, *ref its reference; the grid media ("uniformgrid", "rgbgrid", "nanovdb", "cloud")
 * are not read yet: one warning, and shapes bound to them render without the medium (*ref 0). */
int pbrt_make_medium(R *r, plist *pl, const char *name, int *ref) {
    const char *type;
    *ref = 0;
    if (prm_string(&pl->l, "type", "", &type)) return -1;
    if (strcmp(type, "homogeneous") != 0) {
        for (size_t i = 0; i < pl->l.n; ++i) pl->l.v[i].used = 1;
        char key[80];
        snprintf(key, sizeof key, "medium %.60s", type);
        if (!type[0]) return prm_fail(&r->ctx, pl->where, "%s: no \"string type\"", pl->owner);
        return UNSUPPORTED(r, key, pl->where,
                           "%s of type \"%s\": caustic reads only homogeneous media from pbrt files yet; rendered "
                           "without the medium",
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
