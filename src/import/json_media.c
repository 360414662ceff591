/* Scene JSON's participating media: the top-level "Media" section (name -> medium), and the
 * medium keys that bind them: Objects[].INTERIOR / EXTERIOR (the media inside and outside a
 * closed surface, pbrt-v4's MediumInterface: kernel/medium.h states the rule) and Camera.MEDIUM
 * (the medium around the camera: global fog). docs/scene-format.md, "Media". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "import/json_internal.h"
#include "scene/material.h"

#define MAX_SIGMA 1e7 /* per unit length: beyond this a medium is a surface */

/* a medium's keys and their other spellings (course projects, pbrt and Mitsuba names) */
static const keyalias json_medium_keys[] = {{"TYPE", "KIND", NULL, 0, 0},
                                            {"SIGMA_A", "SIGMAA|ABSORPTION|ABSORPTIONCOEFFICIENT|ABSORB", NULL, 0, 0},
                                            {"SIGMA_S", "SIGMAS|SCATTERING|SCATTERINGCOEFFICIENT|SCATTER", NULL, 0, 0},
                                            {"ALBEDO", "SINGLESCATTERINGALBEDO|RGB|COLOR|COLOUR", NULL, 0, 0},
                                            {"DENSITY", "SIGMA_T|SIGMAT|EXTINCTION|SIGMATRANSMISSION", NULL, 0, 0},
                                            {"MFP", "MEANFREEPATH|MEANFREEPATHLENGTH", NULL, 0, 0},
                                            {"SCALE", "DENSITYSCALE|SIGMASCALE", NULL, 0, 0},
                                            {"EMISSION", "EMITTANCE|LE|RADIANCE", NULL, 0, 0},
                                            {"G", "ANISOTROPY|HG|PHASEG|ASYMMETRY", NULL, 0, 0},
                                            {"FILE", "FILENAME|GRID|DENSITYFILE|DENSITY_FILE", NULL, 0, 0},
                                            {"ALBEDO_FILE", "ALBEDOFILE|ALBEDOGRID", NULL, 0, 0},
                                            {"BOX", "BOUNDS|BBOX", NULL, 0, 0},
                                            {"GRID_NAME", "GRIDNAME", NULL, 0, 0},
                                            {NULL, NULL, NULL, 0, 0}};

static const char *const json_medium_types[] = {
#define JSON_MEDIUM_TYPE_ROW(kind, stem, name) name,
    MEDIUM_KINDS(JSON_MEDIUM_TYPE_ROW)
#undef JSON_MEDIUM_TYPE_ROW
        NULL};

/* One .vol file of a grid medium (key `key` of medium jp), of `channels` channels, into the
 * scene's voxels. */
static int load_grid_file(loader *L, const cJSON *m, const char *jp, const char *key, uint32_t channels,
                          vol_header *h) {
    char p[PRM_WHERE], err[512];
    prm_jkey(p, jp, key);
    const char *file = "";
    if (json_string(L, json_get(m, key), p, &file)) return -1;
    char *path = json_resolve_path(L, file);
    if (!path) return prm_fail(&L->P, p, "out of memory");
    int rc = vol_load(L->s, path, h, err, sizeof err);
    free(path);
    if (rc) return prm_fail(&L->P, p, "%s", err);
    if (h->channels != channels) {
        L->s->nvoxels = h->offset; /* give the values back */
        return prm_fail(&L->P, p, "%s: %u channels, a %s grid has %u", file, (unsigned)h->channels,
                        channels == 1 ? "density" : "albedo", (unsigned)channels);
    }
    return 0;
}

/* A grid medium (TYPE "Grid"): FILE (a .vol density grid), ALBEDO_FILE (an optional RGB .vol
 * of the same resolution), BOX (the world box of the grid's unit cube: [[x0,y0,z0],[x1,y1,z1]],
 * by default the file's bounding box); md's coefficients are per unit density. */
static int parse_grid(loader *L, const cJSON *m, const char *name, const char *jp, medium *md) {
    char p[PRM_WHERE];
    if (!json_get(m, "FILE")) return json_missing(L, jp, "FILE");
    size_t mark = L->s->nvoxels;
    vol_header h, ha;
    if (load_grid_file(L, m, jp, "FILE", 1u, &h)) return -1;
    md->density_grid = h.offset;
    md->albedo_grid = MEDIUM_NO_GRID;
    if (json_get(m, "ALBEDO_FILE")) {
        if (load_grid_file(L, m, jp, "ALBEDO_FILE", 3u, &ha)) goto fail;
        if (memcmp(ha.res, h.res, sizeof h.res) != 0) {
            prm_jkey(p, jp, "ALBEDO_FILE");
            prm_fail(&L->P, p, "resolution %u x %u x %u, the density's (FILE) is %u x %u x %u", (unsigned)ha.res[0],
                     (unsigned)ha.res[1], (unsigned)ha.res[2], (unsigned)h.res[0], (unsigned)h.res[1],
                     (unsigned)h.res[2]);
            goto fail;
        }
        md->albedo_grid = ha.offset;
    }
    double lo[3] = {h.bbox[0], h.bbox[1], h.bbox[2]}, hi[3] = {h.bbox[3], h.bbox[4], h.bbox[5]};
    const cJSON *box = json_get(m, "BOX");
    prm_jkey(p, jp, box ? "BOX" : "FILE");
    if (box) {
        if (!cJSON_IsArray(box) || cJSON_GetArraySize(box) != 2) {
            prm_fail(&L->P, p, "expected [[xmin, ymin, zmin], [xmax, ymax, zmax]], got %s", json_type(box));
            goto fail;
        }
        vec3 a, b;
        if (json_vec3(L, cJSON_GetArrayItem(box, 0), p, -1e30, 0, 1e30, &a) ||
            json_vec3(L, cJSON_GetArrayItem(box, 1), p, -1e30, 0, 1e30, &b))
            goto fail;
        for (int i = 0; i < 3; ++i) {
            lo[i] = vcomp(a, i);
            hi[i] = vcomp(b, i);
        }
    }
    for (int i = 0; i < 3; ++i)
        if (!(hi[i] > lo[i]) || !isfinite(lo[i]) || !isfinite(hi[i])) {
            prm_fail(&L->P, p, "the grid's box is empty or not finite on axis %c (%g to %g)%s", "xyz"[i], lo[i], hi[i],
                     box ? "" : ": give BOX");
            goto fail;
        }
    memset(md->to_grid, 0, sizeof md->to_grid);
    for (int i = 0; i < 3; ++i) {
        md->to_grid[4 * i + i] = (float)(1.0 / (hi[i] - lo[i]));
        md->to_grid[4 * i + 3] = (float)(-lo[i] / (hi[i] - lo[i]));
    }
    md->res[0] = h.res[0];
    md->res[1] = h.res[1];
    md->res[2] = h.res[2];
    if (scene_add_grid_medium(L->s, name, *md) < 0) {
        prm_fail(&L->P, jp, "could not add grid medium (out of memory)");
        goto fail;
    }
    return 0;
fail:
    L->s->nvoxels = mark;
    return -1;
}

/* Does medium m's FILE name a NanoVDB (.nvdb) or OpenVDB (.vdb) file? (TYPE "Grid" reads them as
 * TYPE "NanoVDB".) */
static int nanovdb_file(const cJSON *m) {
    const cJSON *f = json_get(m, "FILE");
    if (!cJSON_IsString(f)) return 0;
    size_t n = strlen(f->valuestring);
    const char *e = f->valuestring;
    return (n > 5 && !strcmp(e + n - 5, ".nvdb")) || (n > 4 && !strcmp(e + n - 4, ".vdb"));
}

/* A NanoVDB grid medium (TYPE "NanoVDB", or "Grid" with a .nvdb/.vdb FILE): FILE (.nvdb, or .vdb
 * converted on load), GRID_NAME (the float grid, "density" by default), BOX (the world box of the
 * grid's active voxels; by default the grid's own index-to-world map places it). */
static int parse_nanovdb(loader *L, const cJSON *m, const char *name, const char *jp, medium *md) {
    char p[PRM_WHERE], err[512];
    if (!json_get(m, "FILE")) return json_missing(L, jp, "FILE");
    if (json_get(m, "ALBEDO_FILE")) {
        prm_jkey(p, jp, "ALBEDO_FILE");
        return prm_fail(&L->P, p, "a NanoVDB medium has no albedo grid: give ALBEDO (constant)");
    }
    const char *file = "", *grid = NULL;
    prm_jkey(p, jp, "FILE");
    if (json_string(L, json_get(m, "FILE"), p, &file)) return -1;
    const cJSON *gn = json_get(m, "GRID_NAME");
    if (gn) {
        prm_jkey(p, jp, "GRID_NAME");
        if (json_string(L, gn, p, &grid)) return -1;
    }
    double b[6], *box = NULL;
    const cJSON *bx = json_get(m, "BOX");
    if (bx) {
        prm_jkey(p, jp, "BOX");
        vec3 a, c;
        if (!cJSON_IsArray(bx) || cJSON_GetArraySize(bx) != 2)
            return prm_fail(&L->P, p, "expected [[xmin, ymin, zmin], [xmax, ymax, zmax]], got %s", json_type(bx));
        if (json_vec3(L, cJSON_GetArrayItem(bx, 0), p, -1e30, 0, 1e30, &a) ||
            json_vec3(L, cJSON_GetArrayItem(bx, 1), p, -1e30, 0, 1e30, &c))
            return -1;
        for (int i = 0; i < 3; ++i) {
            b[i] = vcomp(a, i);
            b[3 + i] = vcomp(c, i);
            if (!(b[3 + i] > b[i]))
                return prm_fail(&L->P, p, "the grid's box is empty on axis %c (%g to %g)", "xyz"[i], b[i], b[3 + i]);
        }
        box = b;
    }
    char *path = json_resolve_path(L, file);
    if (!path) return prm_fail(&L->P, jp, "out of memory");
    md->kind = MEDIUM_NANOVDB;
    int rc = nvdb_grid_medium(L->s, name, *md, path, grid, box, err, sizeof err);
    free(path);
    prm_jkey(p, jp, "FILE");
    if (rc) return prm_fail(&L->P, p, "%s", err);
    return 0;
}

static int parse_medium(loader *L, cJSON *m, const char *name, const char *jp) {
    char p[PRM_WHERE];
    if (!cJSON_IsObject(m)) return prm_fail(&L->P, jp, "expected an object (a medium's keys), got %s", json_type(m));
    if (json_canonicalize(L, m, jp, "Media.*", json_medium_keys)) return -1;
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    const cJSON *ty = json_get(m, "TYPE");
    if (ty) {
        prm_jkey(p, jp, "TYPE");
        int k = json_enum(L, ty, p, "medium TYPE", json_medium_types);
        if (k < 0) return -1;
        md.kind = k;
    }
    const cJSON *sa = json_get(m, "SIGMA_A"), *ss = json_get(m, "SIGMA_S"), *al = json_get(m, "ALBEDO"),
                *de = json_get(m, "DENSITY"), *mfp = json_get(m, "MFP");
    if (al || de || mfp) {
        /* albedo with density (sigma_t) or mean free path (1 / sigma_t) */
        if (sa || ss) {
            prm_jkey(p, jp, sa ? "SIGMA_A" : "SIGMA_S");
            return prm_fail(&L->P, p, "give SIGMA_A/SIGMA_S, or ALBEDO with DENSITY or MFP, not both");
        }
        if (de && mfp) {
            prm_jkey(p, jp, "MFP");
            return prm_fail(&L->P, p, "DENSITY and MFP both set sigma_t: give only one");
        }
        if (!de && !mfp && md.kind == MEDIUM_HOMOGENEOUS) return json_missing(L, jp, "DENSITY");
        vec3 albedo = v3s(1.0f), st;
        if (al) {
            prm_jkey(p, jp, "ALBEDO");
            if (json_colour(L, al, p, 1.0, &albedo)) return -1;
        }
        prm_jkey(p, jp, de ? "DENSITY" : "MFP");
        if (!de && !mfp) {
            st = v3s(1.0f); /* a grid's coefficients are per unit density: its density is the grid's */
        } else if (de) {
            if (json_colour(L, de, p, MAX_SIGMA, &st)) return -1;
        } else {
            vec3 len;
            if (cJSON_IsNumber(mfp)) {
                double x;
                if (json_range(L, mfp, p, 0.0, 1, 1e30, &x)) return -1;
                len = v3s((float)x);
            } else if (json_vec3(L, mfp, p, 0.0, 1, 1e30, &len))
                return -1;
            st = v3(1.0f / len.x, 1.0f / len.y, 1.0f / len.z);
        }
        md.sigma_s = vmul(albedo, st);
        md.sigma_a = vsub(st, md.sigma_s);
    } else if (!sa && !ss && md.kind != MEDIUM_HOMOGENEOUS) {
        md.sigma_s = v3s(1.0f); /* a grid without coefficients: albedo 1, sigma_t = density */
    } else {
        if (sa) {
            prm_jkey(p, jp, "SIGMA_A");
            if (json_colour(L, sa, p, MAX_SIGMA, &md.sigma_a)) return -1;
        }
        if (ss) {
            prm_jkey(p, jp, "SIGMA_S");
            if (json_colour(L, ss, p, MAX_SIGMA, &md.sigma_s)) return -1;
        }
    }
    const cJSON *sc = json_get(m, "SCALE");
    if (sc) {
        double x;
        prm_jkey(p, jp, "SCALE");
        if (json_range(L, sc, p, 0.0, 0, MAX_SIGMA, &x)) return -1;
        md.sigma_a = vscale(md.sigma_a, (float)x);
        md.sigma_s = vscale(md.sigma_s, (float)x);
    }
    const cJSON *em = json_get(m, "EMISSION");
    if (em) {
        prm_jkey(p, jp, "EMISSION");
        if (json_colour(L, em, p, MAX_RADIANCE, &md.emission)) return -1;
    }
    double g = 0.0;
    if (json_opt_number(L, m, jp, "G", -0.999, 0, 0.999, &g)) return -1;
    md.g = (float)g;
    if (!vis_black(md.emission) && vis_black(md.sigma_a)) {
        prm_jkey(p, jp, "EMISSION");
        if (prm_warn(&L->P, "Media.*.EMISSION", p,
                     "a medium emits sigma_a * EMISSION per unit length: with SIGMA_A 0 it emits nothing"))
            return -1;
    }
    if (md.kind == MEDIUM_GRID && !nanovdb_file(m)) return parse_grid(L, m, name, jp, &md);
    if (md.kind != MEDIUM_HOMOGENEOUS) return parse_nanovdb(L, m, name, jp, &md);
    const char *gk[] = {"FILE", "ALBEDO_FILE", "BOX", "GRID_NAME"};
    for (int i = 0; i < 4; ++i)
        if (json_get(m, gk[i])) {
            prm_jkey(p, jp, gk[i]);
            return prm_fail(&L->P, p, "a grid medium's key: add \"TYPE\": \"Grid\"");
        }
    if (scene_add_medium(L->s, name, md) < 0) return prm_fail(&L->P, jp, "could not add medium (out of memory)");
    return 0;
}

int json_media(loader *L, cJSON *ms) {
    if (!cJSON_IsObject(ms))
        return prm_fail(&L->P, "Media", "expected an object (medium name -> its keys), got %s", json_type(ms));
    for (cJSON *m = ms->child; m; m = m->next) {
        char jp[PRM_WHERE];
        prm_jkey(jp, "Media", m->string);
        if (!m->string[0]) return prm_fail(&L->P, jp, "a medium needs a name");
        if (scene_find_medium(L->s, m->string) >= 0) return prm_fail(&L->P, jp, "medium defined twice");
        if (parse_medium(L, m, m->string, jp)) return -1;
    }
    return 0;
}

int json_volume_material(loader *L, const char *name, const cJSON *m, const char *jpath) {
    if (scene_find_medium(L->s, name) >= 0)
        return prm_fail(&L->P, jpath, "a medium of this name is in Media already: rename one of them");
    cJSON *o = cJSON_CreateObject();
    if (!o) return prm_fail(&L->P, jpath, "out of memory");
    const char *keys[] = {"SIGMA_A", "SIGMA_S", "G"};
    int rc = 0;
    for (int i = 0; i < 3 && !rc; ++i) {
        const cJSON *v = json_get(m, keys[i]);
        cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;
        if (v && (!c || !cJSON_AddItemToObject(o, keys[i], c))) {
            cJSON_Delete(c);
            rc = prm_fail(&L->P, jpath, "out of memory");
        }
    }
    if (!rc && !json_get(m, "SIGMA_A") && !json_get(m, "SIGMA_S")) rc = json_missing(L, jpath, "SIGMA_S");
    if (!rc) rc = parse_medium(L, o, name, jpath);
    cJSON_Delete(o);
    if (rc) return -1;
    material_params p = material_params_default(MAT_INTERFACE);
    material mat = material_from_params(MAT_INTERFACE, &p);
    mat.medium_inside = (int32_t)L->s->nmedia; /* the medium just added, as a reference */
    if (scene_add_material(L->s, name, mat) < 0) return prm_fail(&L->P, jpath, "could not add material");
    return 0;
}

int json_subsurface_material(loader *L, const char *name, const cJSON *m, const char *jpath) {
    char p[PRM_WHERE];
    const cJSON *sa = json_get(m, "SIGMA_A"), *ss = json_get(m, "SIGMA_S"), *rad = json_get(m, "RADIUS");
    if (!sa && !ss && !rad) return 1;
    if (scene_find_medium(L->s, name) >= 0)
        return prm_fail(&L->P, jpath, "a medium of this name is in Media already: rename one of them");
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    double g = 0.0;
    if (json_opt_number(L, m, jpath, "G", -0.999, 0, 0.999, &g)) return -1;
    md.g = (float)g;
    if (rad) {
        if (sa || ss) {
            prm_jkey(p, jpath, "RADIUS");
            return prm_fail(&L->P, p, "give RGB with RADIUS, or SIGMA_A/SIGMA_S, not both");
        }
        vec3 albedo = v3s(0.8f), len;
        const cJSON *c = json_get(m, "RGB");
        if (c) {
            prm_jkey(p, jpath, "RGB");
            if (json_colour(L, c, p, 1.0, &albedo)) return -1;
        }
        prm_jkey(p, jpath, "RADIUS");
        if (cJSON_IsNumber(rad)) {
            double x;
            if (json_range(L, rad, p, 0.0, 1, 1e30, &x)) return -1;
            len = v3s((float)x);
        } else if (json_vec3(L, rad, p, 0.0, 1, 1e30, &len)) {
            return -1;
        }
        material_subsurface_medium(albedo, len, md.g, &md.sigma_a, &md.sigma_s);
    } else {
        if (sa) {
            prm_jkey(p, jpath, "SIGMA_A");
            if (json_colour(L, sa, p, MAX_SIGMA, &md.sigma_a)) return -1;
        }
        if (ss) {
            prm_jkey(p, jpath, "SIGMA_S");
            if (json_colour(L, ss, p, MAX_SIGMA, &md.sigma_s)) return -1;
        }
        if (vis_black(md.sigma_s)) {
            prm_jkey(p, jpath, sa ? "SIGMA_A" : "SIGMA_S");
            if (prm_warn(&L->P, "Materials.*.SIGMA_S=0", p,
                         "a subsurface material without scattering (SIGMA_S 0): its inside only absorbs, a "
                         "clear coloured glass; give SIGMA_S, or RGB with RADIUS"))
                return -1;
        }
    }
    double ior = 1.5, roughness = 0.0;
    if (json_opt_number(L, m, jpath, "IOR", 1.0, 0, 10.0, &ior)) return -1;
    if (json_opt_soft(L, m, jpath, "ROUGHNESS", 0.0, 1.0, &roughness)) return -1;
    if (scene_add_medium(L->s, name, md) < 0) return prm_fail(&L->P, jpath, "could not add medium (out of memory)");
    /* the boundary: a clear (rough) dielectric; what colours the object is its medium */
    material_kind kind = roughness > 0.0 ? MAT_ROUGH_GLASS : MAT_DIELECTRIC;
    material_params mp = material_params_default(kind);
    mp.rgb = v3s(1.0f);
    mp.ior = ior;
    mp.roughness = roughness;
    material mat = material_from_params(kind, &mp);
    mat.medium_inside = (int32_t)L->s->nmedia; /* the medium just added, as a reference */
    if (scene_add_material(L->s, name, mat) < 0) {
        if (scene_find_material(L->s, name) >= 0) return prm_fail(&L->P, jpath, "duplicate material name");
        return prm_fail(&L->P, jpath, "could not add material");
    }
    return 0;
}

int json_medium_ref(loader *L, const cJSON *obj, const char *jpath, const char *key, int *ref) {
    *ref = 0;
    const cJSON *v = json_get(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    char p[PRM_WHERE];
    prm_jkey(p, jpath, key);
    const char *name = "";
    if (json_string(L, v, p, &name)) return -1;
    if (!name[0]) return 0; /* "": the vacuum */
    int i = scene_find_medium(L->s, name);
    if (i < 0) {
        if (!L->s->nmedia) return prm_fail(&L->P, p, "unknown medium \"%.64s\": the scene has no Media section", name);
        return prm_fail(&L->P, p, "unknown medium \"%.64s\" (not defined in Media)", name);
    }
    *ref = i + 1;
    return 0;
}
