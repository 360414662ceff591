/* Scenes built in code (caustic_scene_create and the adds) and the scene's camera, through
 * src/scene's builder; the scene is prepared (BVH, light tables) by its first renderer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "import/import.h"
#include "caustic.h"
#include "scene/material.h"
#include "util/file.h"
#include "util/log.h"

/* caustic_material_kind is the kind table's order (kernel/types.h: MATERIAL_KINDS, whose PUBLIC
 * column names each kind's enumerator). A kind added to the list without its
 * CAUSTIC_MATERIAL_<PUBLIC> in include/caustic.h stops the build here: add it there, in row order. */
#define MATERIAL_PUBLIC_CHECK(K, stem, name, PUBLIC)                                                                   \
    _Static_assert((int)CAUSTIC_MATERIAL_##PUBLIC == (int)K, "include/caustic.h: CAUSTIC_MATERIAL_" #PUBLIC            \
                                                             " must equal " #K " (the row order of MATERIAL_KINDS)");
MATERIAL_KINDS(MATERIAL_PUBLIC_CHECK)
#undef MATERIAL_PUBLIC_CHECK
_Static_assert((int)CAUSTIC_MATERIAL_KIND_COUNT == (int)MAT_KIND_COUNT,
               "include/caustic.h: caustic_material_kind lists every row of MATERIAL_KINDS (kernel/types.h)");

void caustic_scene_get_camera(const caustic_scene *cs, caustic_camera *c) {
    api_camera_public(&api_scene_internal((caustic_scene *)cs)->camera, c);
}

int caustic_scene_set_camera(caustic_scene *cs, const caustic_camera *c, char *err, size_t errlen) {
    scene *s = api_scene_internal(cs);
    camera_desc d = s->camera;
    api_camera_internal(c, &d);
    camera check;
    if (camera_from_desc(&d, d.width, d.height, &check, err, errlen)) return -1;
    s->camera = d;
    return 0;
}

int caustic_scene_load_camera(caustic_scene *cs, const char *path, char *err, size_t errlen) {
    size_t size;
    char why[256];
    char *text = file_read_all(path, 1 << 20, &size, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    void *log_user = NULL;
    lib_log_fn log_fn = lib_log_get(&log_user);
    scene_load_opts so;
    memset(&so, 0, sizeof so);
    so.warn = log_fn;
    so.warn_user = log_user;
    so.camera_only = 1;
    scene *cam = NULL;
    int rc = memchr(text, 0, size) ? -1 : scene_load_json_text_opts(&cam, text, path, NULL, &so, err, errlen);
    if (rc && memchr(text, 0, size)) snprintf(err, errlen, "%s: not a text file", path);
    free(text);
    if (rc) return -1;
    api_scene_internal(cs)->camera = cam->camera;
    scene_destroy(cam);
    return 0;
}

/* %.9g: a float survives the trip through text exactly */
int caustic_camera_to_json(const caustic_camera *c, int width, int height, char *buf, size_t n) {
    camera_desc d;
    memset(&d, 0, sizeof d);
    api_camera_internal(c, &d);
    int len = snprintf(buf, n,
                       "{\"Camera\": {\"RES\": [%d, %d], \"FOVY\": %.9g, \"EYE\": [%.9g, %.9g, %.9g], "
                       "\"LOOKAT\": [%.9g, %.9g, %.9g], \"UP\": [%.9g, %.9g, %.9g]",
                       width, height, json_fovy_from_full(d.fovy_deg), d.eye.x, d.eye.y, d.eye.z, d.lookat.x,
                       d.lookat.y, d.lookat.z, d.up.x, d.up.y, d.up.z);
    if (len >= 0 && d.aperture_radius > 0.0f)
        len += snprintf(buf + ((size_t)len < n ? (size_t)len : n), (size_t)len < n ? n - (size_t)len : 0,
                        ", \"APERTURE\": %.9g", d.aperture_radius);
    if (len >= 0 && d.focus_distance > 0.0f)
        len += snprintf(buf + ((size_t)len < n ? (size_t)len : n), (size_t)len < n ? n - (size_t)len : 0,
                        ", \"FOCUS_DISTANCE\": %.9g", d.focus_distance);
    if (len >= 0)
        len += snprintf(buf + ((size_t)len < n ? (size_t)len : n), (size_t)len < n ? n - (size_t)len : 0, "}}\n");
    return len;
}

int caustic_scene_create(caustic_scene **out, char *err, size_t errlen) {
    *out = NULL;
    scene *s = scene_create();
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->spp = 64; /* a scene file's ITERATIONS default is for offline renders: keep first images quick */
    return api_scene_wrap_unprepared(out, s, err, errlen);
}

/* 0, or -1 with why the scene takes no more items (a renderer prepared it). */
static int open_for_adds(const scene *s, char *err, size_t errlen) {
    if (!s->prepared) return 0;
    snprintf(err, errlen, "the scene is in use by a renderer: add shapes, materials and lights before creating one");
    return -1;
}

static int negative3(vec3 v) { return v.x < 0.0f || v.y < 0.0f || v.z < 0.0f; }
static int finite3(const double a[3]) { return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }
static vec3 vec_of(const double a[3]) { return v3((float)a[0], (float)a[1], (float)a[2]); }
static vec3 vec_of_f(const float a[3]) { return v3(a[0], a[1], a[2]); }

_Static_assert((int)CAUSTIC_COAT_BASE_DIFFUSE == (int)COAT_BASE_DIFFUSE &&
                   (int)CAUSTIC_COAT_BASE_CONDUCTOR == (int)COAT_BASE_CONDUCTOR &&
                   (int)CAUSTIC_COAT_BASE_PBR == (int)COAT_BASE_PBR,
               "include/caustic.h: CAUSTIC_COAT_BASE_* must match enum coat_base (kernel/types.h)");

void caustic_material_init(caustic_material *m) {
    memset(m, 0, sizeof *m);
    m->kind = CAUSTIC_MATERIAL_DIFFUSE;
    m->color[0] = m->color[1] = m->color[2] = 0.8f;
    m->roughness = 0.5f;
    m->ior = 1.5f;
    m->eta[0] = m->eta[1] = m->eta[2] = 1.0f;
    m->coat_tint[0] = m->coat_tint[1] = m->coat_tint[2] = 1.0f;
}

int caustic_scene_add_material(caustic_scene *cs, const caustic_material *cm, char *err, size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen)) return -1;
    if ((int)cm->kind < 0 || (int)cm->kind >= MAT_KIND_COUNT) {
        snprintf(err, errlen, "material: unknown kind %d", (int)cm->kind);
        return -1;
    }
    vec3 col = vec_of_f(cm->color), em = vec_of_f(cm->emission), spec = vec_of_f(cm->specular);
    if (!vis_finite(col) || !vis_finite(em) || !vis_finite(spec) || negative3(col) || negative3(em) ||
        negative3(spec) || !(cm->roughness >= 0.0f && cm->roughness <= 1.0f) || !(cm->ior > 0.0f) ||
        !(cm->metallic >= 0.0f && cm->metallic <= 1.0f) || !(cm->exponent >= 0.0f)) {
        snprintf(err, errlen, "material: colours must be finite and >= 0, roughness and metallic in [0, 1], ior > 0");
        return -1;
    }
    material_params mp = material_params_default((material_kind)cm->kind);
    mp.rgb = col;
    mp.emission = em;
    mp.roughness = cm->roughness; /* perceptual roughness, as the scene format's ROUGHNESS */
    mp.ior = cm->ior;
    mp.metallic = cm->metallic;
    mp.specular = spec;
    mp.transmittance = spec;
    mp.exponent = cm->exponent;
    mp.two_sided = cm->two_sided != 0;
    vec3 eta = vec_of_f(cm->eta), k = vec_of_f(cm->k), tint = vec_of_f(cm->coat_tint);
    if (cm->metal) {
        if (material_metal_lookup(cm->metal, &mp.eta, &mp.k, NULL)) {
            snprintf(err, errlen, "material: unknown metal \"%.40s\" (Mitsuba 3's names: Au, Ag, Cu, Al, Cr, W, ...)",
                     cm->metal);
            return -1;
        }
        mp.complex_ior = 1;
    } else if (cm->use_eta_k) {
        if (!vis_finite(eta) || !vis_finite(k) || negative3(eta) || negative3(k)) {
            snprintf(err, errlen, "material: eta and k must be finite and >= 0");
            return -1;
        }
        mp.complex_ior = 1, mp.eta = eta, mp.k = k;
    }
    if (cm->coat_base < CAUSTIC_COAT_BASE_DIFFUSE || cm->coat_base > CAUSTIC_COAT_BASE_PBR ||
        !(cm->coat_roughness >= 0.0f && cm->coat_roughness <= 1.0f) || !vis_finite(tint) || negative3(tint)) {
        snprintf(err, errlen,
                 "material: coat_base must be a CAUSTIC_COAT_BASE_*, coat_roughness in [0, 1], "
                 "coat_tint finite and >= 0");
        return -1;
    }
    mp.coat_base = cm->coat_base;
    mp.coat_roughness = cm->coat_roughness;
    mp.coat_tint = tint;
    material m = material_from_params((material_kind)cm->kind, &mp);
    char name[32];
    snprintf(name, sizeof name, "material#%zu", s->nmaterials);
    int id = scene_add_material(s, name, m);
    if (id < 0) snprintf(err, errlen, "out of memory");
    return id;
}

static int check_material(const scene *s, int material, char *err, size_t errlen) {
    if (material >= 0 && (size_t)material < s->nmaterials) return 0;
    snprintf(err, errlen, "material %d does not exist (the scene has %zu)", material, s->nmaterials);
    return -1;
}

int caustic_scene_add_sphere(caustic_scene *cs, const double center[3], double radius, int material, char *err,
                             size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen) || check_material(s, material, err, errlen)) return -1;
    if (!finite3(center) || !(radius > 0.0 && radius < 1e30)) {
        snprintf(err, errlen, "sphere: the centre must be finite and the radius > 0");
        return -1;
    }
    size_t id = s->nspheres;
    if (scene_add_sphere(s, xform_trs(vec_of(center), v3s(0.0f), v3s((float)(2.0 * radius))), material)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return (int)id;
}

int caustic_scene_add_quad(caustic_scene *cs, const double corner[3], const double u[3], const double v[3],
                           int material, char *err, size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen) || check_material(s, material, err, errlen)) return -1;
    size_t id = s->nquads;
    if (!finite3(corner) || !finite3(u) || !finite3(v) ||
        scene_add_quad(s, vec_of(corner), vec_of(u), vec_of(v), material)) {
        snprintf(err, errlen, "quad: corner and edges must be finite and the edges not parallel");
        return -1;
    }
    return (int)id;
}

int caustic_scene_add_mesh(caustic_scene *cs, const float *positions, const float *normals, const float *uvs,
                           size_t nvertices, const uint32_t *indices, size_t ntriangles, int material, char *err,
                           size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen) || check_material(s, material, err, errlen)) return -1;
    if (!positions || !indices || nvertices == 0 || ntriangles == 0 || nvertices > UINT32_MAX ||
        ntriangles > UINT32_MAX / 3) {
        snprintf(err, errlen, "mesh: needs positions and indices (%zu vertices, %zu triangles)", nvertices, ntriangles);
        return -1;
    }
    for (size_t i = 0; i < 3 * ntriangles; ++i)
        if (indices[i] >= nvertices) {
            snprintf(err, errlen, "mesh: index %zu is %u, past the %zu vertices", i, indices[i], nvertices);
            return -1;
        }
    for (size_t i = 0; i < 3 * nvertices; ++i)
        if (!isfinite(positions[i]) || (normals && !isfinite(normals[i]))) {
            snprintf(err, errlen, "mesh: vertex %zu is not finite", i / 3);
            return -1;
        }
    /* vec3 and vec2 are plain float triples and pairs: the arrays are copied into the builder's */
    vec3 *pos = malloc(nvertices * sizeof *pos), *nrm = normals ? malloc(nvertices * sizeof *nrm) : NULL;
    vec2 *uv = uvs ? malloc(nvertices * sizeof *uv) : NULL;
    int rc = -1;
    if (pos && (!normals || nrm) && (!uvs || uv)) {
        for (size_t i = 0; i < nvertices; ++i) {
            pos[i] = v3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]);
            if (nrm) nrm[i] = v3(normals[3 * i], normals[3 * i + 1], normals[3 * i + 2]);
            if (uv) uv[i] = v2(uvs[2 * i], uvs[2 * i + 1]);
        }
        size_t id = s->ntriangles;
        if (scene_add_mesh(s, pos, nrm, uv, nvertices, indices, NULL, ntriangles, xform_identity(), material) == 0)
            rc = (int)(id > (size_t)0x7fffffff ? 0x7fffffff : id);
    }
    if (rc < 0) snprintf(err, errlen, "out of memory for a mesh of %zu triangles", ntriangles);
    free(pos);
    free(nrm);
    free(uv);
    return rc;
}

int caustic_scene_add_point_light(caustic_scene *cs, const double position[3], const double intensity[3], char *err,
                                  size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen)) return -1;
    size_t id = s->npunctual;
    if (!finite3(position) || !finite3(intensity) || scene_add_point_light(s, vec_of(position), vec_of(intensity))) {
        snprintf(err, errlen, "point light: position and intensity must be finite, intensity >= 0");
        return -1;
    }
    return (int)id;
}

int caustic_scene_set_environment(caustic_scene *cs, const double radiance[3], char *err, size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (open_for_adds(s, err, errlen)) return -1;
    if (!finite3(radiance) || radiance[0] < 0.0 || radiance[1] < 0.0 || radiance[2] < 0.0) {
        snprintf(err, errlen, "environment: radiance must be finite and >= 0");
        return -1;
    }
    s->env_radiance = vec_of(radiance);
    s->env_tex = -1;
    return 0;
}

int caustic_scene_set_render_defaults(caustic_scene *cs, int width, int height, int spp, int max_depth, char *err,
                                      size_t errlen) {
    scene *s = api_scene_internal(cs);
    if (width < 1 || height < 1 || width > 16384 || height > 16384 || spp < 1 || max_depth < 0 || max_depth > 1000) {
        snprintf(err, errlen, "render defaults: %dx%d, %d spp, depth %d out of range", width, height, spp, max_depth);
        return -1;
    }
    s->camera.width = width;
    s->camera.height = height;
    s->spp = spp;
    s->max_depth = max_depth;
    return 0;
}
