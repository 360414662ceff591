/* Instancing on the host: meshes (triangle ranges in their own object space) and their
 * placements, as loaders add them; scene_prepare's part (the flatten fallback, the kernel's
 * instances) and the two-level BVH (kernel/types.h, kinstance; kernel/bvh_traverse.h,
 * trace_instances). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"
#include "util/array.h"

int scene_add_instanced_mesh(scene *s, size_t t0, size_t nt, size_t v0, size_t nv) {
    if (nt == 0 || t0 + nt > s->ntriangles || v0 + nv > s->nvertices) return -1;
    for (size_t i = 0; i < s->nmeshes; ++i) {
        const scene_mesh *m = &s->meshes[i];
        if (t0 < m->t0 + m->nt && m->t0 < t0 + nt) return -1;
    }
    if (GROW(s->meshes, s->cap_meshes, s->nmeshes + 1)) return -1;
    scene_mesh m = {t0, nt, v0, nv};
    s->meshes[s->nmeshes] = m;
    return (int)s->nmeshes++;
}

static float det3(const xform *m) {
    return m->m[0][0] * (m->m[1][1] * m->m[2][2] - m->m[1][2] * m->m[2][1]) -
           m->m[0][1] * (m->m[1][0] * m->m[2][2] - m->m[1][2] * m->m[2][0]) +
           m->m[0][2] * (m->m[1][0] * m->m[2][1] - m->m[1][1] * m->m[2][0]);
}

static int xform_is_identity(const xform *m) {
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c)
            if (m->m[r][c] != (r == c ? 1.0f : 0.0f)) return 0;
    return 1;
}

int scene_add_instance(scene *s, int mesh, xform to_world, int material, int reverse) {
    xform inv;
    if (mesh < 0 || (size_t)mesh >= s->nmeshes || material >= (int)s->nmaterials) return -1;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c)
            if (!isfinite(to_world.m[r][c])) return -1;
    if (xform_invert(&to_world, &inv) || !(det3(&to_world) != 0.0f)) return -1;
    if (GROW(s->placements, s->cap_placements, s->nplacements + 1)) return -1;
    scene_placement p;
    p.mesh = (uint32_t)mesh;
    p.to_world = to_world;
    p.material = material < 0 ? -1 : material;
    p.reverse = reverse != 0;
    s->placements[s->nplacements++] = p;
    return 0;
}

static int emissive(const scene *s, int m) { return m >= 0 && !vis_black(s->materials[m].emission); }

/* Drops the triangles of mesh i from the scene (its placements are gone) and the mesh. */
static void remove_mesh(scene *s, size_t i, int keep_triangles) {
    scene_mesh m = s->meshes[i];
    if (!keep_triangles) {
        memmove(s->triangles + m.t0, s->triangles + m.t0 + m.nt, (s->ntriangles - m.t0 - m.nt) * sizeof(triangle));
        s->ntriangles -= m.nt;
        for (size_t j = 0; j < s->nmeshes; ++j)
            if (s->meshes[j].t0 > m.t0) s->meshes[j].t0 -= m.nt;
    }
    memmove(s->meshes + i, s->meshes + i + 1, (s->nmeshes - i - 1) * sizeof(scene_mesh));
    s->nmeshes--;
    size_t k = 0;
    for (size_t j = 0; j < s->nplacements; ++j) {
        scene_placement p = s->placements[j];
        if (p.mesh == (uint32_t)i) continue;
        if (p.mesh > (uint32_t)i) p.mesh--;
        s->placements[k++] = p;
    }
    s->nplacements = k;
}

/* The triangles of mesh i copied under each of its placements (the flatten fallback); a placement
 * that leaves the mesh where it is keeps the mesh's own triangles. */
static int flatten_mesh(scene *s, size_t i) {
    int keep = 0;
    for (size_t j = 0; j < s->nplacements; ++j) {
        const scene_placement *p = &s->placements[j];
        if (p->mesh != (uint32_t)i) continue;
        const scene_mesh *m = &s->meshes[i];
        if (!keep && xform_is_identity(&p->to_world) && !p->reverse && p->material < 0) {
            keep = 1;
        } else if (scene_copy_triangles(s, m->v0, m->nv, m->t0, m->nt, p->to_world, p->material, p->reverse)) {
            return -1;
        }
        s->flattened++;
    }
    remove_mesh(s, i, keep);
    return 0;
}

int scene_prepare_instances(scene *s, char *err, size_t errlen) {
    free(s->instances);
    free(s->instance_mesh);
    s->instances = NULL;
    s->instance_mesh = NULL;
    s->ninstances = 0;
    if (!s->nmeshes) return 0;
    const char *env = getenv("CAUSTIC_INSTANCES");
    int flatten_all = 0;
    if (env && *env && strcmp(env, "auto")) {
        if (strcmp(env, "flatten")) {
            snprintf(err, errlen, "CAUSTIC_INSTANCES=%s: expected auto (a two-level BVH) or flatten (copies)", env);
            return -1;
        }
        flatten_all = 1;
    }
    /* lights are primitives of the world (the light tables, NEE): a mesh with an emissive material,
     * or placed with one, is copied */
    size_t nemissive = 0;
    for (size_t i = s->nmeshes; i-- > 0;) {
        const scene_mesh *m = &s->meshes[i];
        int flat = flatten_all;
        for (size_t t = m->t0; !flat && t < m->t0 + m->nt; ++t) flat = emissive(s, s->triangles[t].material);
        for (size_t j = 0; !flat && j < s->nplacements; ++j)
            flat = s->placements[j].mesh == (uint32_t)i && emissive(s, s->placements[j].material);
        if (!flat) continue;
        if (!flatten_all) nemissive++;
        size_t copies = 0;
        for (size_t j = 0; j < s->nplacements; ++j) copies += s->placements[j].mesh == (uint32_t)i;
        if (s->ntriangles + copies * m->nt > PRIM_INDEX_MASK) {
            snprintf(err, errlen,
                     "a mesh of %zu triangles placed %zu times is copied at each placement (%s), more than the %u "
                     "triangles a scene holds",
                     m->nt, copies,
                     flatten_all ? "CAUSTIC_INSTANCES=flatten" : "it emits light: lights are not instanced",
                     PRIM_INDEX_MASK);
            return -1;
        }
        if (flatten_mesh(s, i)) {
            snprintf(err, errlen, "out of memory copying the instances of a mesh");
            return -1;
        }
    }
    if (nemissive)
        scene_warn(s,
                   "instancing: %zu emissive mesh%s copied into the scene at each placement (lights are not "
                   "instanced)",
                   nemissive, nemissive == 1 ? "" : "es");
    if (!s->nmeshes) return 0;
    size_t in_meshes = 0;
    for (size_t i = 0; i < s->nmeshes; ++i) in_meshes += s->meshes[i].nt;
    size_t nworld = s->ntriangles - in_meshes + s->nspheres + s->nquads;
    size_t n = (nworld ? 1 : 0) + s->nplacements;
    if (n > PRIM_INDEX_MASK - 1) {
        snprintf(err, errlen, "scene has %zu instances, more than the %u supported", n, PRIM_INDEX_MASK - 1);
        return -1;
    }
    s->instances = calloc(n, sizeof(kinstance));
    s->instance_mesh = malloc(n * sizeof(uint32_t));
    if (!s->instances || !s->instance_mesh) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    if (nworld) {
        kinstance *w = &s->instances[k];
        w->to_world = w->to_object = xform_identity();
        w->mesh = SCENE_MESH_WORLD;
        w->material = -1;
        w->ng_sign = 1.0f;
        w->flags = KINST_IDENTITY;
        s->instance_mesh[k++] = SCENE_MESH_WORLD;
    }
    for (size_t j = 0; j < s->nplacements; ++j) {
        const scene_placement *p = &s->placements[j];
        kinstance *in = &s->instances[k];
        in->to_world = p->to_world;
        if (xform_invert(&p->to_world, &in->to_object)) {
            snprintf(err, errlen, "instance %zu: singular transform", j);
            return -1;
        }
        in->mesh = p->mesh;
        in->material = p->material;
        in->ng_sign = (det3(&p->to_world) < 0.0f) != (p->reverse != 0) ? -1.0f : 1.0f;
        in->flags = xform_is_identity(&p->to_world) && !p->reverse ? KINST_IDENTITY : 0u;
        s->instance_mesh[k++] = p->mesh;
    }
    s->ninstances = k;
    return 0;
}

/* The box of mesh `mesh`'s triangles (SCENE_MESH_WORLD: of every primitive in no mesh; marked:
 * the triangles in meshes) in its own space; empty (lo > hi) when it has none. */
static void part_box(const scene *s, uint32_t mesh, const uint8_t *marked, vec3 *lo, vec3 *hi) {
    *lo = v3s(INFINITY);
    *hi = v3s(-INFINITY);
    size_t f0 = 0, f1 = s->ntriangles + s->nspheres + s->nquads;
    if (mesh != SCENE_MESH_WORLD) {
        f0 = s->meshes[mesh].t0;
        f1 = f0 + s->meshes[mesh].nt;
    }
    for (size_t f = f0; f < f1; ++f) {
        if (mesh == SCENE_MESH_WORLD && f < s->ntriangles && marked[f]) continue;
        vec3 a, b;
        kscene_prim_bounds_of(&s->k, kscene_prim_id(&s->k, (uint32_t)f), &a, &b);
        *lo = vmin(*lo, a);
        *hi = vmax(*hi, b);
    }
}

/* The world box of box (lo, hi) under m: its eight corners transformed. */
static void xform_box(const xform *m, vec3 lo, vec3 hi, vec3 *olo, vec3 *ohi) {
    *olo = v3s(INFINITY);
    *ohi = v3s(-INFINITY);
    for (int c = 0; c < 8; ++c) {
        vec3 p = xform_point(m, v3(c & 1 ? hi.x : lo.x, c & 2 ? hi.y : lo.y, c & 4 ? hi.z : lo.z));
        *olo = vmin(*olo, p);
        *ohi = vmax(*ohi, p);
    }
}

static uint8_t *mark_mesh_triangles(const scene *s) {
    uint8_t *marked = calloc(s->ntriangles ? s->ntriangles : 1, 1);
    if (!marked) return NULL;
    for (size_t i = 0; i < s->nmeshes; ++i) memset(marked + s->meshes[i].t0, 1, s->meshes[i].nt);
    return marked;
}

void scene_instances_bounds(const scene *s, vec3 *lo, vec3 *hi) {
    *lo = v3s(INFINITY);
    *hi = v3s(-INFINITY);
    uint8_t *marked = mark_mesh_triangles(s);
    if (!marked) return;
    size_t nparts = s->nmeshes + 1;
    vec3 *plo = malloc(nparts * sizeof(vec3)), *phi = malloc(nparts * sizeof(vec3));
    if (plo && phi) {
        for (size_t i = 0; i < s->nmeshes; ++i) part_box(s, (uint32_t)i, marked, &plo[i], &phi[i]);
        part_box(s, SCENE_MESH_WORLD, marked, &plo[s->nmeshes], &phi[s->nmeshes]);
        for (size_t i = 0; i < s->ninstances; ++i) {
            uint32_t m = s->instance_mesh[i];
            size_t p = m == SCENE_MESH_WORLD ? s->nmeshes : m;
            vec3 a, b;
            xform_box(&s->instances[i].to_world, plo[p], phi[p], &a, &b);
            *lo = vmin(*lo, a);
            *hi = vmax(*hi, b);
        }
    }
    free(plo);
    free(phi);
    free(marked);
}

/* The BVH over the primitives ids[0..n) (bounds from the prepared kscene). */
static int build_part(const scene *s, bvh *b, uint32_t *ids, size_t n, int width, int sah_lanes) {
    vec3 *lo = malloc(n * sizeof(vec3)), *hi = malloc(n * sizeof(vec3));
    int rc = -1;
    if (lo && hi) {
        for (size_t i = 0; i < n; ++i) kscene_prim_bounds_of(&s->k, ids[i], &lo[i], &hi[i]);
        rc = bvh_build_lanes(b, lo, hi, ids, n, s->triangles, s->positions, 0, sah_lanes, width);
    }
    free(lo);
    free(hi);
    return rc;
}

int scene_build_instanced_bvh(const scene *s, bvh *out, int width, int sah_lanes, char *err, size_t errlen) {
    size_t nparts = s->nmeshes + 1, nprims = s->ntriangles + s->nspheres + s->nquads;
    bvh *parts = calloc(nparts, sizeof(bvh));
    bvh top;
    memset(&top, 0, sizeof top);
    uint8_t *marked = mark_mesh_triangles(s);
    uint32_t *ids = malloc((nprims > s->ninstances ? nprims : s->ninstances) * sizeof(uint32_t) + 4);
    uint32_t *lane_part = malloc(s->ninstances * sizeof(uint32_t) + 4);
    vec3 *lo = malloc(s->ninstances * sizeof(vec3) + 4), *hi = malloc(s->ninstances * sizeof(vec3) + 4);
    int rc = -1;
    if (!parts || !marked || !ids || !lane_part || !lo || !hi) goto done;
    for (size_t i = 0; i < s->nmeshes; ++i) {
        const scene_mesh *m = &s->meshes[i];
        for (size_t t = 0; t < m->nt; ++t) ids[t] = prim_id(PRIM_TRIANGLE, (uint32_t)(m->t0 + t));
        if (build_part(s, &parts[i], ids, m->nt, width, sah_lanes)) goto done;
    }
    size_t nworld = 0;
    for (size_t f = 0; f < nprims; ++f)
        if (f >= s->ntriangles || !marked[f]) ids[nworld++] = kscene_prim_id(&s->k, (uint32_t)f);
    parts[s->nmeshes].width = width; /* an empty world: no nodes */
    if (nworld && build_part(s, &parts[s->nmeshes], ids, nworld, width, sah_lanes)) goto done;
    for (size_t i = 0; i < s->ninstances; ++i) {
        uint32_t m = s->instance_mesh[i];
        size_t p = m == SCENE_MESH_WORLD ? s->nmeshes : m;
        lane_part[i] = (uint32_t)p;
        /* the part's root box (its binary tree's), in the world */
        xform_box(&s->instances[i].to_world, parts[p].nodes[0].lo, parts[p].nodes[0].hi, &lo[i], &hi[i]);
        ids[i] = prim_instance_lane((uint32_t)i);
    }
    if (bvh_build_lanes(&top, lo, hi, ids, s->ninstances, NULL, NULL, 0, sah_lanes, width)) goto done;
    rc = bvh_combine(out, &top, parts, nparts, lane_part);
done:
    if (parts)
        for (size_t i = 0; i < nparts; ++i) bvh_free(&parts[i]);
    free(parts);
    bvh_free(&top);
    free(marked);
    free(ids);
    free(lane_part);
    free(lo);
    free(hi);
    if (rc) snprintf(err, errlen, "out of memory building the two-level BVH over %zu instances", s->ninstances);
    return rc;
}
