/* Preparation of a built scene for the kernel: the light table (power pmf, per-primitive light
 * index, the light tree), the environment map's sampling distribution, the BVH and the flat kscene
 * layout, and the camera from its description (scene.c builds what this prepares). */
#include "scene/scene.h"
#include "kernel/features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- preparation ----------------------------------------------------------------------------- */
static float prim_area(const scene *s, uint32_t id) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i];
        vec3 e1 = vsub(s->positions[t->v[1]], s->positions[t->v[0]]);
        vec3 e2 = vsub(s->positions[t->v[2]], s->positions[t->v[0]]);
        return 0.5f * vlen(vcross(e1, e2));
    }
    case PRIM_SPHERE: return s->spheres[i].area;
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ break;
    }
    return vlen(vcross(s->quads[i].u, s->quads[i].v));
}

/* A triangle's or quad's unit geometric normal (as surface_at computes it); a sphere has none. */
static vec3 prim_geometric_normal(const scene *s, uint32_t id) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *t = &s->triangles[i];
        return triangle_normal(s->positions[t->v[0]], s->positions[t->v[1]], s->positions[t->v[2]]);
    }
    case PRIM_SPHERE: return v3s(0.0f);
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ break;
    }
    return s->quads[i].n;
}

static int prim_material(const scene *s, uint32_t id) {
    uint32_t i = prim_id_index(id);
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: return s->triangles[i].material;
    case PRIM_SPHERE: return s->spheres[i].material;
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ break;
    }
    return s->quads[i].material;
}

static uint32_t flat_to_prim_id(const scene *s, size_t flat) {
    if (flat < s->ntriangles) return prim_id(PRIM_TRIANGLE, (uint32_t)flat);
    flat -= s->ntriangles;
    if (flat < s->nspheres) return prim_id(PRIM_SPHERE, (uint32_t)flat);
    return prim_id(PRIM_QUAD, (uint32_t)(flat - s->nspheres));
}

static int build_lights(scene *s, size_t nprims, char *err, size_t errlen) {
    free(s->lights);
    free(s->light_cdf);
    free(s->prim_light);
    s->lights = NULL;
    s->light_cdf = NULL;
    s->nlights = 0;
    s->prim_light = malloc((nprims ? nprims : 1) * sizeof(int32_t));
    if (!s->prim_light) goto oom;
    size_t n = s->npunctual;
    for (size_t f = 0; f < nprims; ++f) {
        const material *m = &s->materials[prim_material(s, flat_to_prim_id(s, f))];
        s->prim_light[f] = -1;
        if (!vis_black(m->emission) && prim_area(s, flat_to_prim_id(s, f)) > 0.0f) n++;
    }
    s->lights = calloc(n ? n : 1, sizeof(light));
    s->light_cdf = malloc((n + 1) * sizeof(float));
    if (!s->lights || !s->light_cdf) goto oom;
    double *power = malloc((n ? n : 1) * sizeof(double));
    if (!power) goto oom;
    double total = 0.0;
    size_t li = 0;
    /* choose lights by emitted power; keep a floor so dim lights are still sampled */
    for (size_t f = 0; f < nprims; ++f) {
        uint32_t id = flat_to_prim_id(s, f);
        const material *m = &s->materials[prim_material(s, id)];
        float area = prim_area(s, id);
        if (vis_black(m->emission) || !(area > 0.0f)) continue;
        /* an emission map counts with its mean colour */
        vec3 le = (m->maps & MAP_EMISSION) ? vmul(m->emission, s->textures[m->emission_tex].a) : m->emission;
        power[li] =
            3.14159265358979323846 * (double)area * (double)kmax(vluminance(le), 1e-6f) * (m->two_sided ? 2.0 : 1.0);
        s->lights[li].kind = LIGHT_AREA;
        s->lights[li].prim = id;
        /* what the samplers would otherwise recompute per sample (1 / (area / 2) = 2 / area
         * exactly: the kernel's own formula bit for bit) */
        s->lights[li].area_pdf = prim_id_kind(id) == PRIM_SPHERE ? 0.0f : 1.0f / area;
        s->lights[li].ng = prim_geometric_normal(s, id);
        s->lights[li].material = prim_material(s, id);
        if (prim_id_kind(id) == PRIM_TRIANGLE) {
            const uint32_t *v = s->triangles[prim_id_index(id)].v;
            s->lights[li].q0 = s->positions[v[0]];
            s->lights[li].q1 = s->positions[v[1]];
            s->lights[li].q2 = s->positions[v[2]];
        }
        s->prim_light[f] = (int32_t)li;
        li++;
    }
    double radius = 0.5 * (double)vlen(vsub(s->bounds_hi, s->bounds_lo));
    for (size_t i = 0; i < s->npunctual; ++i, ++li) {
        s->lights[li] = s->punctual[i];
        double lum = (double)kmax(vluminance(s->punctual[i].intensity), 1e-6f);
        const light *l = &s->punctual[i];
        power[li] = l->kind == LIGHT_POINT  ? 4.0 * 3.14159265358979323846 * lum
                    : l->kind == LIGHT_SPOT ? 2.0 * 3.14159265358979323846 * (1.0 - (double)l->cos_outer) * lum
                                            : 3.14159265358979323846 * radius * radius * lum;
    }
    for (size_t i = 0; i < n; ++i) total += power[i];
    s->nlights = n;
    s->light_cdf[0] = 0.0f;
    double acc = 0.0;
    for (size_t i = 0; i < n; ++i) {
        acc += power[i];
        s->light_cdf[i + 1] = (float)(acc / total);
    }
    if (n) s->light_cdf[n] = 1.0f;
    /* the pmf must be exactly what sampling the cdf yields */
    for (size_t i = 0; i < n; ++i) s->lights[i].pmf = s->light_cdf[i + 1] - s->light_cdf[i];
    int mode, rc = scene_light_sampler_from_env(&mode, err, errlen);
    if (!rc) rc = scene_build_light_tree(s, power, mode, err, errlen);
    free(power);
    return rc;
oom:
    snprintf(err, errlen, "out of memory building the light table");
    return -1;
}

/* Sampling distribution of the environment map: texel luminance times sin(theta) (the lat-long
 * area element), as a marginal cdf over rows and a conditional cdf per row. A small floor keeps
 * every texel samplable, so the pdf is never zero where the map is not. */
static int build_env_distribution(scene *s, char *err, size_t errlen) {
    free(s->env_cdf_rows);
    free(s->env_cdf_cols);
    s->env_cdf_rows = s->env_cdf_cols = NULL;
    if (s->env_tex < 0) return 0;
    if (scene_env_memory_check(s, s->env_tex, "environment", err, errlen)) return -1;
    const texture *t = &s->textures[s->env_tex];
    size_t w = (size_t)t->width, h = (size_t)t->height;
    s->env_cdf_rows = malloc((h + 1) * sizeof(float));
    s->env_cdf_cols = malloc(h * (w + 1) * sizeof(float));
    double *row_sum = malloc(h * sizeof(double));
    if (!s->env_cdf_rows || !s->env_cdf_cols || !row_sum) {
        free(row_sum);
        snprintf(err, errlen, "out of memory building the environment map distribution");
        return -1;
    }
    double total = 0.0, maxlum = 0.0;
    for (size_t i = 0; i < w * h; ++i) {
        vec3 p = scene_texel(s, t, i);
        double l = 0.2126 * p.x + 0.7152 * p.y + 0.0722 * p.z;
        if (l > maxlum) maxlum = l;
    }
    double floor_lum = maxlum > 0.0 ? 1e-4 * maxlum : 1.0;
    for (size_t y = 0; y < h; ++y) {
        double st = sin(3.14159265358979323846 * ((double)y + 0.5) / (double)h);
        float *cols = s->env_cdf_cols + y * (w + 1);
        double acc = 0.0;
        cols[0] = 0.0f;
        for (size_t x = 0; x < w; ++x) {
            vec3 p = scene_texel(s, t, y * w + x);
            double l = 0.2126 * p.x + 0.7152 * p.y + 0.0722 * p.z;
            if (!(l > floor_lum)) l = floor_lum; /* also catches NaN */
            acc += l * st;
            cols[x + 1] = (float)acc;
        }
        for (size_t x = 1; x <= w; ++x) cols[x] = acc > 0.0 ? (float)(cols[x] / acc) : (float)x / (float)w;
        cols[w] = 1.0f;
        row_sum[y] = acc;
        total += acc;
    }
    s->env_cdf_rows[0] = 0.0f;
    double acc = 0.0;
    for (size_t y = 0; y < h; ++y) {
        acc += row_sum[y];
        s->env_cdf_rows[y + 1] = (float)(acc / total);
    }
    s->env_cdf_rows[h] = 1.0f;
    free(row_sum);
    return 0;
}

/* Binned SAH build over every primitive of the scene (s->k's arrays filled). */
static int build_bvh(const scene *s, bvh *b, int width, int sah_lanes, char *err, size_t errlen) {
    if (s->ninstances) return scene_build_instanced_bvh(s, b, width, sah_lanes, err, errlen);
    size_t nprims = s->ntriangles + s->nspheres + s->nquads;
    vec3 *lo = malloc((nprims ? nprims : 1) * sizeof(vec3));
    vec3 *hi = malloc((nprims ? nprims : 1) * sizeof(vec3));
    uint32_t *ids = malloc((nprims ? nprims : 1) * sizeof(uint32_t));
    int rc = -1;
    if (lo && hi && ids) {
        kscene_prim_bounds(&s->k, lo, hi, ids);
        rc = bvh_build_lanes(b, lo, hi, ids, nprims, s->triangles, s->positions, 0, sah_lanes, width);
    }
    free(lo);
    free(hi);
    free(ids);
    if (rc) {
        bvh_free(b);
        snprintf(err, errlen, "out of memory building the BVH over %zu primitives", nprims);
    }
    return rc;
}

void scene_prim_bounds(const scene *s, vec3 *lo, vec3 *hi, uint32_t *ids) { kscene_prim_bounds(&s->k, lo, hi, ids); }

/* The BVH of `width`-wide nodes whose SAH counts leaf cost in blocks of sah_lanes primitives:
 * built once per scene and kept (scene->bvh, the kernel scene's, or the cache). */
const bvh *scene_bvh(scene *s, int width, int sah_lanes, char *err, size_t errlen) {
    if (s->bvh_built && s->bvh.width == width && s->bvh_lanes == sah_lanes) return &s->bvh;
    for (int i = 0; i < s->nbvh_cache; ++i)
        if (s->bvh_cache[i].width == width && s->bvh_cache_lanes[i] == sah_lanes) return &s->bvh_cache[i];
    if (s->nbvh_cache == SCENE_BVH_CACHE) {
        snprintf(err, errlen, "more than %d BVH layouts asked of one scene", SCENE_BVH_CACHE);
        return NULL;
    }
    bvh *b = &s->bvh_cache[s->nbvh_cache];
    if (build_bvh(s, b, width, sah_lanes, err, errlen)) return NULL;
    s->bvh_cache_lanes[s->nbvh_cache++] = sah_lanes;
    return b;
}

/* The kernel scene's arrays and counts (KSCENE_ARRAYS), from the builder's arrays of the same
 * names. */
static void fill_kscene(scene *s) {
    kscene *k = &s->k;
    memset(k, 0, sizeof(*k));
#define FILL(type, name, count) k->name = s->name;
    KSCENE_ARRAYS(FILL)
#undef FILL
    if (!s->has_normals) k->normals = NULL;
    if (!s->has_uvs) k->uvs = NULL;
    if (!s->has_tangents) k->tangents = NULL;
    for (size_t i = 0; i < s->nmaterials; ++i)
        if (s->materials[i].alpha_cutoff > 0.0f) k->has_cutouts = 1;
    for (size_t i = 0; i < s->nmaterials; ++i)
        if (material_features(&s->materials[i]) & KF_DISPERSION) k->has_dispersion = 1;
    k->ntriangles = (uint32_t)s->ntriangles;
    k->nspheres = (uint32_t)s->nspheres;
    k->nquads = (uint32_t)s->nquads;
    k->nlights = (uint32_t)s->nlights;
    k->nlight_nodes = s->nlight_nodes;
    k->ndirectional = s->ndirectional;
    k->light_tree_share = s->light_tree_share;
    k->nvertices = (uint32_t)s->nvertices;
    k->nmaterials = (uint32_t)s->nmaterials;
    k->ntextures = (uint32_t)s->ntextures;
    k->nmedia = (uint32_t)s->nmedia;
    k->ninstances = (uint32_t)s->ninstances;
    k->nvoxels = s->nvoxels;
    k->nnanovdb = s->nnanovdb;
    k->ntexels = s->ntexels;
    k->ntexels8 = s->ntexels8;
    if (s->env_tex >= 0) {
        const texture *t = &s->textures[s->env_tex];
        k->nenv_cdf_rows = (uint64_t)t->height + 1u;
        k->nenv_cdf_cols = (uint64_t)t->height * ((uint64_t)t->width + 1u);
    }
    k->env_radiance = s->env_radiance;
    k->env_tex = s->env_tex;
    /* NEE picks the environment half the time when there are also area lights */
    k->env_pmf = vis_black(s->env_radiance) ? 0.0f : (s->nlights ? 0.5f : 1.0f);
}

int scene_prepare(scene *s, int bvh_width, char *err, size_t errlen) {
    /* instances first: the flatten fallback changes the triangles */
    if (scene_prepare_instances(s, err, errlen)) return -1;
    size_t nprims = s->ntriangles + s->nspheres + s->nquads;
    if (nprims > PRIM_INDEX_MASK) {
        snprintf(err, errlen, "scene has %zu primitives, more than the %u supported", nprims, PRIM_INDEX_MASK);
        return -1;
    }
    if (s->nmaterials == 0) {
        snprintf(err, errlen, "scene has no materials");
        return -1;
    }
    /* the camera of the file, checked here so that a bad one is reported at load */
    camera cam;
    if (scene_camera(s, s->camera.width, s->camera.height, &cam, err, errlen)) return -1;
    if (build_lights(s, nprims, err, errlen)) return -1;
    if (build_env_distribution(s, err, errlen)) return -1;
    fill_kscene(s);
    s->bounds_lo = v3s(INFINITY);
    s->bounds_hi = v3s(-INFINITY);
    if (s->ninstances) scene_instances_bounds(s, &s->bounds_lo, &s->bounds_hi);
    for (size_t f = 0; f < nprims && !s->ninstances; ++f) {
        vec3 lo, hi;
        kscene_prim_bounds_of(&s->k, kscene_prim_id(&s->k, (uint32_t)f), &lo, &hi);
        s->bounds_lo = vmin(s->bounds_lo, lo);
        s->bounds_hi = vmax(s->bounds_hi, hi);
    }
    if (nprims) {
        s->k.scene_center = vscale(vadd(s->bounds_lo, s->bounds_hi), 0.5f);
        s->k.scene_radius = 0.5f * vlen(vsub(s->bounds_hi, s->bounds_lo));
    }
    bvh_free(&s->bvh);
    for (int i = 0; i < s->nbvh_cache; ++i) bvh_free(&s->bvh_cache[i]);
    s->nbvh_cache = 0;
    s->bvh_built = 0;
    if (build_bvh(s, &s->bvh, bvh_width, BVH_LEAF_WIDTH, err, errlen)) return -1;
    s->bvh_built = 1;
    s->bvh_lanes = BVH_LEAF_WIDTH;
    s->k.nodes = s->bvh.wnodes;
    s->k.nnodes = (uint32_t)s->bvh.nwnodes;
    s->k.leaves = s->bvh.leaves;
    s->k.leaf_pos = s->bvh.leaf_pos;
    s->k.nleaf4 = (uint32_t)s->bvh.nleaf4;
    s->prepared = 1;
    return 0;
}

int scene_camera(const scene *s, int width, int height, camera *c, char *err, size_t errlen) {
    return camera_from_desc(&s->camera, width, height, c, err, errlen);
}

int camera_from_desc(const camera_desc *cd, int width, int height, camera *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    if (!(cd->fovy_deg > 0.0f && cd->fovy_deg < 180.0f) || !(cd->aperture_radius >= 0.0f) ||
        !(cd->focus_distance >= 0.0f) || !vis_finite(cd->eye) || !vis_finite(cd->lookat) || !vis_finite(cd->up)) {
        snprintf(err, errlen,
                 "camera: the full vertical field of view must be in (0, 180) degrees (scene JSON's FOVY, half "
                 "of it, in (0, 90)), APERTURE and FOCUS_DISTANCE >= 0, "
                 "positions finite");
        return -1;
    }
    c->width = width;
    c->height = height;
    c->pos = cd->eye;
    vec3 fwd = vsub(cd->lookat, cd->eye);
    if (!(vlen(fwd) > 0.0f)) {
        snprintf(err, errlen, "camera: EYE and LOOKAT are the same point");
        return -1;
    }
    c->forward = vnorm(fwd);
    vec3 right = vcross(c->forward, cd->up);
    if (!(vlen(right) > 1e-6f)) {
        snprintf(err, errlen, "camera: UP is parallel to the viewing direction");
        return -1;
    }
    c->right = vnorm(right);
    c->up = vcross(c->right, c->forward);
    c->tan_half_fovy = tanf(cd->fovy_deg * 0.5f * (K_PI / 180.0f));
    c->aspect = (float)width / (float)height;
    c->lens_radius = cd->aperture_radius;
    c->focus_distance = cd->focus_distance > 0.0f ? cd->focus_distance : vlen(fwd);
    c->medium = cd->medium;
    return 0;
}
