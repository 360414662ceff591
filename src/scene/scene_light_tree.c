/* Which lights NEE picks through a light tree, and the tree's input: each light's bounds, power
 * and emission cone (the builder: src/accel/light_tree.c; the traversal: kernel/light_tree.h).
 *
 * CAUSTIC_LIGHT_SAMPLER=auto|power|tree chooses (auto when unset): `power` picks every light by
 * power (light_cdf), `tree` builds a tree whenever there are two finite lights or more, `auto`
 * does where there are at least LIGHT_TREE_AUTO_MIN. Below that the power pick costs less per
 * sample than a walk of a few levels and scenes keep the images they had
 * (docs/PERFORMANCE.md, "Light tree"). */
#include "scene/scene.h"
#include "accel/light_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIGHT_TREE_AUTO_MIN 64

int scene_light_sampler_from_env(int *mode, char *err, size_t errlen) {
    const char *v = getenv("CAUSTIC_LIGHT_SAMPLER");
    *mode = SCENE_LIGHTS_AUTO;
    if (!v || !*v || !strcmp(v, "auto")) return 0;
    if (!strcmp(v, "power")) {
        *mode = SCENE_LIGHTS_POWER;
        return 0;
    }
    if (!strcmp(v, "tree")) {
        *mode = SCENE_LIGHTS_TREE;
        return 0;
    }
    snprintf(err, errlen, "CAUSTIC_LIGHT_SAMPLER='%s' is not one of auto, power, tree", v);
    return -1;
}

/* The emission bounds of light l. */
static light_bounds bounds_of(const scene *s, const kscene *view, const light *l, double power) {
    light_bounds b;
    memset(&b, 0, sizeof b);
    b.phi = power > 0.0 ? power : 1e-30;
    b.w = v3(0.0f, 0.0f, 1.0f);
    b.cos_o = -1.0f; /* every direction */
    b.cos_e = 0.0f;
    switch ((light_kind)l->kind) {
    case LIGHT_POINT: b.lo = b.hi = l->p; return b;
    case LIGHT_SPOT: {
        b.lo = b.hi = l->p;
        b.w = l->axis;
        double to = acos(fmax(-1.0, fmin(1.0, (double)l->cos_inner)));
        double tout = acos(fmax(-1.0, fmin(1.0, (double)l->cos_outer)));
        if (to > tout) to = tout;
        double te = fmax(tout - to, 1e-3); /* a cone of no width would allow no direction */
        b.cos_o = (float)cos(to);
        b.cos_e = (float)cos(fmin(te, 3.14159265358979323846));
        return b;
    }
    case LIGHT_DIRECTIONAL:
        b.phi = 0.0; /* outside the tree */
        return b;
    case LIGHT_AREA: break; /* its primitive's bounds, below */
    case LIGHT_KIND_COUNT: break;
    }
    kscene_prim_bounds_of(view, l->prim, &b.lo, &b.hi);
    const material *m = &s->materials[l->material];
    b.two_sided = m->two_sided != 0;
    uint32_t kind = prim_id_kind(l->prim);
    if (kind == PRIM_SPHERE) return b; /* every direction */
    b.w = l->ng;
    b.cos_o = 1.0f;
    if (kind == PRIM_TRIANGLE && s->has_normals) {
        /* authored normals choose the emitting side per point (light_sample_point_uv): a side
         * the three corners agree on, else both */
        const uint32_t *v = s->triangles[prim_id_index(l->prim)].v;
        int front = 0, back = 0;
        for (int c = 0; c < 3; ++c) {
            float d = vdot(s->normals[v[c]], l->ng);
            front += d >= 0.0f;
            back += d < 0.0f;
        }
        if (back == 3)
            b.w = vneg(l->ng);
        else if (back)
            b.two_sided = 1;
    }
    return b;
}

int scene_build_light_tree(scene *s, const double *power, int mode, char *err, size_t errlen) {
    free(s->light_nodes);
    free(s->light_trail);
    s->light_nodes = NULL;
    s->light_trail = NULL;
    s->nlight_nodes = 0;
    s->ndirectional = 0;
    s->light_tree_share = 1.0f;
    size_t nfinite = 0;
    for (size_t i = 0; i < s->nlights; ++i) {
        if (s->lights[i].kind == LIGHT_DIRECTIONAL)
            s->ndirectional++;
        else
            nfinite++;
    }
    if (mode == SCENE_LIGHTS_POWER || nfinite < 2 || (mode == SCENE_LIGHTS_AUTO && nfinite < LIGHT_TREE_AUTO_MIN))
        return 0;
    if (2u * (uint64_t)s->nlights > LIGHT_NODE_INDEX) return 0; /* beyond a node's index bits: by power */
    kscene view;                                                /* what kscene_prim_bounds_of reads */
    memset(&view, 0, sizeof view);
    view.triangles = s->triangles;
    view.positions = s->positions;
    view.spheres = s->spheres;
    view.quads = s->quads;
    light_bounds *lb = malloc(s->nlights * sizeof(light_bounds));
    if (!lb) goto oom;
    for (size_t i = 0; i < s->nlights; ++i) lb[i] = bounds_of(s, &view, &s->lights[i], power[i]);
    uint32_t nn = 0;
    int rc = light_tree_build(lb, s->nlights, &s->light_nodes, &nn, &s->light_trail);
    free(lb);
    if (rc) goto oom;
    s->nlight_nodes = nn;
    /* the tree gets what the power cdf gives the lights in it */
    if (s->ndirectional) {
        double share = 0.0;
        for (size_t i = 0; i < s->nlights; ++i)
            if (s->lights[i].kind != LIGHT_DIRECTIONAL) share += (double)s->lights[i].pmf;
        s->light_tree_share = (float)share;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory building the light tree over %zu lights", s->nlights);
    return -1;
}
