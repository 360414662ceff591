/* JSON scene reader: the CIS 5650 Project 3 format plus caustic's extensions (the full key
 * reference is docs/scene-format.md). This file walks the document (root, environment, lights,
 * objects); json_camera.c reads the camera, json_defines.c applies -D PATH=VALUE, json_dialect.c
 * holds the dialect tables, json_material.c textures and materials, json_values.c the typed
 * values. Every problem is reported as one line,
 * "SOURCE: JSON.PATH: problem" (or "SOURCE:LINE:COL: ..." for syntax errors), and a failed
 * load frees everything it built: callers get NULL, never half a scene. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/json_internal.h"
#include "caustic.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- environment ----------------------------------------------------------------------------- */
/* A constant colour (RGB x EMITTANCE), or a lat-long radiance map (FILE: .exr, .hdr, .pfm, .png)
 * scaled by EMITTANCE and tinted by RGB (default white). */

static int parse_environment(loader *L, cJSON *env) {
    const char *jp = "Environment";
    if (cJSON_IsString(env)) { /* a dialect: the map's file name alone */
        L->s->env_radiance = v3s(1.0f);
        return json_env_map(L, env, jp);
    }
    if (!cJSON_IsObject(env)) return prm_fail(&L->P, jp, "expected an object or a file name, got %s", json_type(env));
    if (json_canonicalize(L, env, jp, "Environment", json_environment_keys)) return -1;
    const cJSON *f = json_get(env, "FILE");
    if (!f && !json_get(env, "RGB")) return json_missing(L, jp, "RGB");
    vec3 rgb = v3s(f ? 1.0f : 0.0f);
    double e = 1.0;
    if (json_opt_vec3(L, env, jp, "RGB", 0.0, 0, MAX_RADIANCE, &rgb)) return -1;
    if (json_opt_number(L, env, jp, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &e)) return -1;
    L->s->env_radiance = vscale(rgb, (float)e);
    if (f) {
        char p[PRM_WHERE];
        prm_jkey(p, jp, "FILE");
        if (json_env_map(L, f, p)) return -1;
    }
    return 0;
}

/* ---- lights without geometry ----------------------------------------------------------------- */
/* {"TYPE":"point", "POSITION":[x,y,z], "RGB":[..], "EMITTANCE":e}: radiant intensity RGB*e (W/sr);
 * {"TYPE":"directional", "DIRECTION":[x,y,z], "RGB":[..], "EMITTANCE":e}: light travelling along
 * DIRECTION with irradiance RGB*e on a plane facing it;
 * {"TYPE":"spot", "POSITION", "DIRECTION", "RGB", "EMITTANCE", "INNER_ANGLE", "OUTER_ANGLE", "FALLOFF"}:
 * a point light shining along DIRECTION, full within INNER_ANGLE degrees of it (default 0) and
 * falling smoothly to nothing at OUTER_ANGLE (default 45, at most 90) along FALLOFF's curve
 * (default "gltf", glTF's spot; "smoothstep" pbrt-v4's, "linear-angle" Mitsuba's). */
static int parse_lights(loader *L, cJSON *ls) {
    static const char *const keys[] = {"TYPE",        "POSITION",    "DIRECTION", "RGB", "EMITTANCE",
                                       "INNER_ANGLE", "OUTER_ANGLE", "FALLOFF",   NULL};
    const char *const falloffs[] = {spot_falloff_name(SPOT_FALLOFF_GLTF), spot_falloff_name(SPOT_FALLOFF_SMOOTHSTEP),
                                    spot_falloff_name(SPOT_FALLOFF_LINEAR_ANGLE), NULL};
    _Static_assert(SPOT_FALLOFF_COUNT == 3, "a name per falloff in the JSON reader (kernel/types.h SPOT_FALLOFFS)");
    /* the light table's names (kernel/types.h); area lights are emissive materials */
    const char *const types[] = {light_kind_name(LIGHT_POINT), light_kind_name(LIGHT_DIRECTIONAL),
                                 light_kind_name(LIGHT_SPOT), NULL};
    if (!cJSON_IsArray(ls)) return prm_fail(&L->P, "Lights", "expected an array, got %s", json_type(ls));
    size_t i = 0;
    for (cJSON *l = ls->child; l; l = l->next, ++i) {
        char jp[PRM_WHERE], p[PRM_WHERE];
        prm_jindex(jp, "Lights", i);
        if (!cJSON_IsObject(l)) return prm_fail(&L->P, jp, "expected an object, got %s", json_type(l));
        if (json_check_keys(L, l, jp, "Lights[]", keys)) return -1;
        const cJSON *ty = json_get(l, "TYPE");
        if (!ty) return json_missing(L, jp, "TYPE");
        prm_jkey(p, jp, "TYPE");
        int type = json_enum(L, ty, p, "light TYPE", types);
        if (type < 0) return -1;
        const char *tname = types[type];
        /* point: POSITION; directional: DIRECTION; spot: both */
        int wants_pos = type != 1, wants_dir = type != 0;
        const char *forbidden = !wants_pos ? "POSITION" : !wants_dir ? "DIRECTION" : NULL;
        if (forbidden && json_get(l, forbidden)) {
            prm_jkey(p, jp, forbidden);
            return prm_fail(&L->P, p, "%s lights have no %s", tname, forbidden);
        }
        for (int k = 0; k < 3 && type != 2; ++k) {
            const char *cone = k == 2 ? "FALLOFF" : k ? "OUTER_ANGLE" : "INNER_ANGLE";
            if (json_get(l, cone)) {
                prm_jkey(p, jp, cone);
                return prm_fail(&L->P, p, "%s lights have no %s (spot lights have)", tname, cone);
            }
        }
        if (wants_pos && !json_get(l, "POSITION")) return json_missing(L, jp, "POSITION");
        if (wants_dir && !json_get(l, "DIRECTION")) return json_missing(L, jp, "DIRECTION");
        if (!json_get(l, "RGB")) return json_missing(L, jp, "RGB");
        vec3 pos = v3s(0.0f), dir = v3s(0.0f), rgb = v3s(0.0f);
        double e = 1.0, inner = 0.0, outer = 45.0;
        if (json_opt_vec3(L, l, jp, "POSITION", -1e30, 0, 1e30, &pos)) return -1;
        if (json_opt_vec3(L, l, jp, "DIRECTION", -1e30, 0, 1e30, &dir)) return -1;
        if (json_opt_vec3(L, l, jp, "RGB", 0.0, 0, MAX_RADIANCE, &rgb)) return -1;
        if (json_opt_number(L, l, jp, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &e)) return -1;
        if (json_opt_number(L, l, jp, "OUTER_ANGLE", 0.0, 1, 90.0, &outer)) return -1;
        if (json_opt_number(L, l, jp, "INNER_ANGLE", 0.0, 0, 90.0, &inner)) return -1;
        if (inner > outer) {
            prm_jkey(p, jp, "INNER_ANGLE");
            return prm_fail(&L->P, p, "INNER_ANGLE %g is wider than OUTER_ANGLE %g", inner, outer);
        }
        int falloff = SPOT_FALLOFF_GLTF;
        const cJSON *fo = json_get(l, "FALLOFF");
        if (fo) {
            prm_jkey(p, jp, "FALLOFF");
            if ((falloff = json_enum(L, fo, p, "spot FALLOFF", falloffs)) < 0) return -1;
        }
        vec3 I = vscale(rgb, (float)e);
        int rc = type == 0   ? scene_add_point_light(L->s, pos, I)
                 : type == 1 ? scene_add_directional_light(L->s, dir, I)
                             : scene_add_spot_light(L->s, pos, dir, I, (float)inner, (float)outer, falloff);
        if (rc) {
            prm_jkey(p, jp, wants_dir ? "DIRECTION" : "POSITION");
            return prm_fail(&L->P, p, wants_dir ? "DIRECTION must not be the zero vector" : "out of memory");
        }
    }
    return 0;
}

/* ---- objects --------------------------------------------------------------------------------- */
/* dialect spellings of the object types, normalised, in json_object_types order */

/* ---- inline meshes ---------------------------------------------------------------------------- */
/* A list of numbers given flat ([x,y,z, x,y,z, ...]) or as rows ([[x,y,z], ...]) of `dim` numbers
 * each (dim 0: rows of any length >= 3, the corners of polygons, fan-triangulated: indices).
 * Fills a malloc'ed array of doubles and, for polygons, the row lengths. */
static int inline_numbers(loader *L, const cJSON *v, const char *p, int dim, double lo, double hi, double **out,
                          size_t *n, size_t **rows, size_t *nrows) {
    *out = NULL;
    *n = 0;
    if (rows) *rows = NULL, *nrows = 0;
    if (!cJSON_IsArray(v)) return prm_fail(&L->P, p, "expected an array of numbers, got %s", json_type(v));
    size_t count = 0, nr = 0;
    int nested = v->child && cJSON_IsArray(v->child);
    for (const cJSON *e = v->child; e; e = e->next) {
        nr++;
        if (nested) {
            char pe[PRM_WHERE];
            prm_jindex(pe, p, nr - 1);
            if (!cJSON_IsArray(e)) return prm_fail(&L->P, pe, "expected an array, got %s", json_type(e));
            int k = cJSON_GetArraySize(e);
            if (dim ? k != dim : k < 3)
                return dim ? prm_fail(&L->P, pe, "expected %d numbers, got %d", dim, k)
                           : prm_fail(&L->P, pe, "a face needs at least 3 corners, got %d", k);
            count += (size_t)k;
        } else {
            count++;
        }
    }
    if (count == 0) return prm_fail(&L->P, p, "empty array");
    if (!nested && dim && count % (size_t)dim)
        return prm_fail(&L->P, p, "expected a multiple of %d numbers, got %zu", dim, count);
    if (!nested && !dim && count % 3) return prm_fail(&L->P, p, "expected a multiple of 3 indices, got %zu", count);
    double *a = malloc(count * sizeof *a);
    size_t *r = rows ? malloc(nr * sizeof *r) : NULL;
    if (!a || (rows && !r)) {
        free(a);
        free(r);
        return prm_fail(&L->P, p, "out of memory");
    }
    size_t i = 0, ri = 0;
    for (const cJSON *e = v->child; e; e = e->next, ++ri) {
        char pe[PRM_WHERE];
        prm_jindex(pe, p, ri);
        const cJSON *first = nested ? e->child : e;
        size_t k = 0;
        for (const cJSON *x = first; x; x = nested ? x->next : NULL, ++k) {
            char px[PRM_WHERE];
            if (nested) prm_jindex(px, pe, k);
            if (json_range(L, x, nested ? px : pe, lo, 0, hi, &a[i++])) {
                free(a);
                free(r);
                return -1;
            }
        }
        if (r) r[ri] = k;
    }
    *out = a;
    *n = count;
    if (rows) {
        if (!nested) { /* flat indices: triangles */
            for (size_t t = 0; t < count / 3; ++t) r[t] = 3;
            nr = count / 3;
        }
        *rows = r;
        *nrows = nr;
    }
    return 0;
}

/* A mesh object given inline: VERTICES (required), INDICES (triangles or polygons; without it,
 * every three vertices are a triangle), NORMALS and UVS (one per vertex). */
static int parse_inline_mesh(loader *L, const cJSON *o, const char *jp, xform m, int mat) {
    char p[PRM_WHERE];
    double *pos = NULL, *nrm = NULL, *uvs = NULL, *idx = NULL;
    size_t npos = 0, nn = 0, nuv = 0, nidx = 0, *rows = NULL, nrows = 0;
    vec3 *P = NULL, *N = NULL;
    vec2 *T = NULL;
    uint32_t *tri = NULL;
    int rc = -1;
    prm_jkey(p, jp, "VERTICES");
    if (inline_numbers(L, json_get(o, "VERTICES"), p, 3, -MAX_COORD, MAX_COORD, &pos, &npos, NULL, NULL)) goto done;
    size_t nv = npos / 3;
    if (nv > (size_t)1 << 30) {
        prm_fail(&L->P, p, "too many vertices");
        goto done;
    }
    const cJSON *nj = json_get(o, "NORMALS"), *tj = json_get(o, "UVS"), *ij = json_get(o, "INDICES");
    if (nj) {
        prm_jkey(p, jp, "NORMALS");
        if (inline_numbers(L, nj, p, 3, -1e30, 1e30, &nrm, &nn, NULL, NULL)) goto done;
        if (nn / 3 != nv) {
            prm_fail(&L->P, p, "%zu normals for %zu vertices (one per vertex)", nn / 3, nv);
            goto done;
        }
    }
    if (tj) {
        prm_jkey(p, jp, "UVS");
        if (inline_numbers(L, tj, p, 2, -1e30, 1e30, &uvs, &nuv, NULL, NULL)) goto done;
        if (nuv / 2 != nv) {
            prm_fail(&L->P, p, "%zu uvs for %zu vertices (one per vertex)", nuv / 2, nv);
            goto done;
        }
    }
    size_t ntri = 0;
    if (ij) {
        prm_jkey(p, jp, "INDICES");
        if (inline_numbers(L, ij, p, 0, 0.0, (double)nv - 1.0, &idx, &nidx, &rows, &nrows)) goto done;
        for (size_t r = 0; r < nrows; ++r) ntri += rows[r] - 2;
        for (size_t i = 0; i < nidx; ++i)
            if (idx[i] != floor(idx[i])) {
                char pe[PRM_WHERE];
                prm_jindex(pe, p, i);
                prm_fail(&L->P, pe, "expected an integer index, got %g", idx[i]);
                goto done;
            }
    } else {
        prm_jkey(p, jp, "VERTICES");
        if (nv % 3) {
            prm_fail(&L->P, p, "%zu vertices and no INDICES: expected a multiple of 3 (one triangle per three)", nv);
            goto done;
        }
        ntri = nv / 3;
    }
    P = malloc(nv * sizeof *P);
    N = nrm ? malloc(nv * sizeof *N) : NULL;
    T = uvs ? malloc(nv * sizeof *T) : NULL;
    tri = malloc(ntri * 3 * sizeof *tri);
    if (!P || (nrm && !N) || (uvs && !T) || !tri) {
        prm_fail(&L->P, jp, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nv; ++i) {
        P[i] = v3((float)pos[3 * i], (float)pos[3 * i + 1], (float)pos[3 * i + 2]);
        if (N) N[i] = v3((float)nrm[3 * i], (float)nrm[3 * i + 1], (float)nrm[3 * i + 2]);
        if (T) T[i] = v2((float)uvs[2 * i], (float)uvs[2 * i + 1]);
    }
    /* triangles (polygons fanned), zero-area ones skipped with one warning */
    size_t kept = 0, skipped = 0, c0 = 0;
    for (size_t r = 0; r < (ij ? nrows : ntri); ++r) {
        size_t corners = ij ? rows[r] : 3;
        for (size_t k = 1; k + 1 < corners; ++k) {
            uint32_t a = ij ? (uint32_t)idx[c0] : (uint32_t)(3 * r), b = ij ? (uint32_t)idx[c0 + k] : a + (uint32_t)k,
                     c = ij ? (uint32_t)idx[c0 + k + 1] : a + (uint32_t)k + 1;
            if (!(vlen(vcross(vsub(P[b], P[a]), vsub(P[c], P[a]))) > 0.0f)) {
                skipped++;
                continue;
            }
            tri[3 * kept] = a;
            tri[3 * kept + 1] = b;
            tri[3 * kept + 2] = c;
            kept++;
        }
        c0 += corners;
    }
    prm_jkey(p, jp, ij ? "INDICES" : "VERTICES");
    if (!kept) {
        prm_fail(&L->P, p, "the mesh has no triangle with an area");
        goto done;
    }
    if (skipped && prm_warn(&L->P, "Objects[].INDICES degenerate", p, "%zu zero-area triangles skipped", skipped))
        goto done;
    if (mat < 0) {
        if (prm_warn(&L->P, "Objects[].MATERIAL", jp, "no MATERIAL for an inline mesh: rendered grey diffuse"))
            goto done;
        mat = json_default_material(L);
        if (mat < 0) {
            prm_fail(&L->P, jp, "out of memory");
            goto done;
        }
    }
    if (scene_add_mesh(L->s, P, N, T, nv, tri, NULL, kept, m, mat)) {
        prm_fail(&L->P, jp, "could not add the mesh (out of memory)");
        goto done;
    }
    rc = 0;
done:
    free(pos);
    free(nrm);
    free(uvs);
    free(idx);
    free(rows);
    free(P);
    free(N);
    free(T);
    free(tri);
    return rc;
}

/* A mesh object's triangles (FILE or VERTICES) under m. shared: a FILE loaded before with the
 * same material is instanced (scene_instance_mesh) instead of read again, and this one is kept for
 * later objects; 0: read as it is (an object with INSTANCES). */
static int load_mesh_object(loader *L, const cJSON *o, const char *jp, xform m, int mat, int shared) {
    char p[PRM_WHERE];
    if (json_get(o, "VERTICES")) return parse_inline_mesh(L, o, jp, m, mat);
    const cJSON *f = json_get(o, "FILE");
    if (!f) return json_missing(L, jp, "FILE");
    prm_jkey(p, jp, "FILE");
    const char *file = "";
    if (json_string(L, f, p, &file)) return -1;
    int ply = prm_ends_with_ci(file, ".ply");
    if (ply && mat < 0) { /* PLY files carry no materials */
        prm_jkey(p, jp, "MATERIAL");
        if (prm_warn(&L->P, "Objects[].MATERIAL", jp, "no MATERIAL for a PLY mesh: rendered grey diffuse")) return -1;
        mat = json_default_material(L);
        if (mat < 0) return prm_fail(&L->P, jp, "out of memory");
        prm_jkey(p, jp, "FILE");
    }
    char *full = json_resolve_path(L, file);
    if (!full) return prm_fail(&L->P, p, "out of memory");
    for (size_t i = 0; shared && i < L->nmeshes; ++i) {
        loaded_mesh *lm = &L->meshes[i];
        if (lm->material != mat || strcmp(lm->path, full) != 0) continue;
        free(full);
        if (scene_instance_mesh(L->s, lm->v0, lm->nv, lm->t0, lm->nt, lm->placed, m))
            return prm_fail(&L->P, jp, "could not instance the mesh (out of memory)");
        return 0;
    }
    size_t v0 = L->s->nvertices, t0 = L->s->ntriangles, meshes0 = L->s->nmeshes;
    char merr[512];
    int rc = scene_load_mesh_file(L->s, full, m, mat, merr, sizeof merr); /* mat < 0: the file's materials */
    if (rc) {
        free(full);
        return prm_fail(&L->P, p, "%s", merr);
    }
    /* a file that instances its own meshes (glTF nodes that share one) is read again for each object */
    if (!shared || L->s->nmeshes != meshes0) {
        free(full);
        return 0;
    }
    loaded_mesh *grown = realloc(L->meshes, (L->nmeshes + 1) * sizeof(loaded_mesh));
    if (!grown) {
        free(full);
        return prm_fail(&L->P, p, "out of memory");
    }
    L->meshes = grown;
    loaded_mesh *lm = &L->meshes[L->nmeshes++];
    lm->path = full;
    lm->material = mat;
    lm->v0 = v0;
    lm->nv = L->s->nvertices - v0;
    lm->t0 = t0;
    lm->nt = L->s->ntriangles - t0;
    lm->placed = m;
    return 0;
}

/* INSTANCES (an array of placements of a mesh object, each TRANS/ROTAT/SCALE/MATRIX after the
 * object's own transform, and optionally a MATERIAL): the triangles [t0, ...) and vertices
 * [v0, ...) the object added become a mesh that only these place (true instancing). */
static int parse_instances(loader *L, const cJSON *in, const char *jp, size_t t0, size_t v0) {
    char ip[PRM_WHERE], ep[PRM_WHERE], p[PRM_WHERE];
    prm_jkey(ip, jp, "INSTANCES");
    if (!cJSON_IsArray(in)) return prm_fail(&L->P, ip, "expected an array of placements ({\"TRANS\": [x,y,z], ...})");
    if (L->s->ntriangles == t0) return 0;
    for (size_t i = 0; i < L->s->nmeshes; ++i)
        if (L->s->meshes[i].t0 >= t0)
            return prm_fail(&L->P, ip,
                            "the file places its own meshes several times (glTF nodes that share a mesh): "
                            "give each placement as an object of its own");
    int mesh = scene_add_instanced_mesh(L->s, t0, L->s->ntriangles - t0, v0, L->s->nvertices - v0);
    if (mesh < 0) return prm_fail(&L->P, ip, "out of memory");
    size_t i = 0;
    for (const cJSON *e = in->child; e; e = e->next, ++i) {
        prm_jindex(ep, ip, i);
        if (!cJSON_IsObject(e))
            return prm_fail(&L->P, ep, "expected an object with TRANS, ROTAT, SCALE, MATRIX, MATERIAL");
        static const char *const keys[] = {"TRANS", "ROTAT", "SCALE", "MATRIX", "MATERIAL", "NAME", NULL};
        for (const cJSON *k = e->child; k; k = k->next) {
            int known = 0;
            for (int j = 0; keys[j]; ++j) known |= k->string && !strcmp(k->string, keys[j]);
            if (!known) {
                prm_jkey(p, ep, k->string ? k->string : "?");
                return prm_fail(&L->P, p, "unknown key of a placement (TRANS, ROTAT, SCALE, MATRIX, MATERIAL, NAME)");
            }
        }
        vec3 t = v3s(0.0f), r = v3s(0.0f), sc = v3s(1.0f);
        if (json_opt_vec3(L, e, ep, "TRANS", -MAX_COORD, 0, MAX_COORD, &t)) return -1;
        if (json_opt_vec3(L, e, ep, "ROTAT", -MAX_ANGLE, 0, MAX_ANGLE, &r)) return -1;
        if (json_opt_vec3(L, e, ep, "SCALE", 0.0, 1, MAX_SCALE, &sc)) return -1;
        xform m = xform_trs(t, r, sc);
        if (json_get(e, "MATRIX") && json_matrix(L, json_get(e, "MATRIX"), ep, &m)) return -1;
        int mat = -1;
        const cJSON *mv = json_get(e, "MATERIAL");
        if (mv) {
            const char *name = "";
            prm_jkey(p, ep, "MATERIAL");
            if (json_string(L, mv, p, &name)) return -1;
            mat = scene_find_material(L->s, name);
            if (mat < 0) return prm_fail(&L->P, p, "no material named \"%s\" in Materials", name);
        }
        if (scene_add_instance(L->s, mesh, m, mat, 0)) {
            prm_jkey(p, ep, json_get(e, "MATRIX") ? "MATRIX" : "SCALE");
            return prm_fail(&L->P, p, "transform is singular (or out of memory)");
        }
    }
    return 0;
}

static int parse_object_shape(loader *L, cJSON *o, const char *jp) {
    char p[PRM_WHERE];
    if (!cJSON_IsObject(o)) return prm_fail(&L->P, jp, "expected an object, got %s", json_type(o));
    if (json_canonicalize(L, o, jp, "Objects[]", json_object_keys)) return -1;
    const cJSON *ty = json_get(o, "TYPE");
    int type = -1;
    if (!ty) {
        /* a dialect: objects that only name a mesh file are meshes */
        if (!json_get(o, "FILE") && !json_get(o, "MESH") && !json_get(o, "VERTICES"))
            return json_missing(L, jp, "TYPE");
        type = OT_MESH;
    } else {
        prm_jkey(p, jp, "TYPE");
        const char *tname = "";
        if (json_string(L, ty, p, &tname)) return -1;
        char tn[64];
        prm_normalise(tname, tn, sizeof tn);
        for (int i = 0; json_object_type_aliases[i] && type < 0; ++i)
            if (prm_in_list(tn, json_object_type_aliases[i])) type = i;
        if (type < 0) {
            char dk[120];
            snprintf(dk, sizeof dk, "Objects[].TYPE=%.64s", tn);
            const char *sug = prm_suggest(tname, json_object_types);
            int rc = sug ? prm_warn(&L->P, dk, p,
                                    "unknown object TYPE \"%.64s\" (did you mean \"%s\"?): object skipped", tname, sug)
                         : prm_warn(&L->P, dk, p,
                                    "unknown object TYPE \"%.64s\" (caustic has cube, sphere, mesh, quad, plane): "
                                    "object skipped",
                                    tname);
            return rc;
        }
    }

    /* MATERIAL: a name from Materials. Meshes may leave it out (an OBJ then keeps its MTL
     * materials); other objects without one, or with an empty name, get a grey diffuse. */
    cJSON *mv = cJSON_GetObjectItemCaseSensitive(o, "MATERIAL");
    prm_jkey(p, jp, "MATERIAL");
    if (mv && cJSON_IsArray(mv)) {
        /* a per-primitive list (glTF dialects): the first entry, or the mesh's own materials */
        cJSON *first = mv->child;
        if (prm_warn(&L->P, "Objects[].MATERIAL[]", p, "a list of materials is not supported: %s",
                     type == OT_MESH ? "the mesh keeps its own materials" : "using the first"))
            return -1;
        mv = type == OT_MESH ? NULL : first;
    }
    const char *mname = "";
    if (mv && json_string(L, mv, p, &mname)) return -1;
    int mat = -1;
    if (mv && mname[0]) {
        mat = scene_find_material(L->s, mname);
        if (mat < 0) {
            /* a name Materials does not define (the course's loader silently takes material 0):
             * meshes keep their own materials, other objects are grey */
            const char *sug = NULL;
            if (L->s->nmaterials <= 4096) { /* suggestions cost O(materials); skip for huge scenes */
                int best = 3;
                for (size_t i = 0; i < L->s->nmaterials; ++i) {
                    int d = prm_edit_distance(mname, L->s->material_names[i]);
                    if (d < best) {
                        best = d;
                        sug = L->s->material_names[i];
                    }
                }
            }
            char dk[120];
            snprintf(dk, sizeof dk, "Objects[].MATERIAL=%.64s", mname);
            const char *instead = type == OT_MESH ? "the mesh keeps its own materials" : "rendered grey diffuse";
            int rc = sug ? prm_warn(&L->P, dk, p, "unknown material \"%.64s\" (did you mean \"%.64s\"?): %s", mname,
                                    sug, instead)
                         : prm_warn(&L->P, dk, p, "unknown material \"%.64s\" (not defined in Materials): %s", mname,
                                    instead);
            if (rc) return -1;
            if (type != OT_MESH) {
                mat = json_default_material(L);
                if (mat < 0) return prm_fail(&L->P, jp, "out of memory");
            }
        }
    } else if (type != OT_MESH) {
        /* no MATERIAL, or "": a mesh keeps its own materials, anything else is grey */
        if (prm_warn(&L->P, "Objects[].MATERIAL", mv ? p : jp,
                     mv ? "empty material name: rendered grey diffuse" : "no MATERIAL: rendered grey diffuse"))
            return -1;
        mat = json_default_material(L);
        if (mat < 0) return prm_fail(&L->P, jp, "out of memory");
    }

    /* MESH: a name in the top-level "Meshes" table, instead of FILE */
    const cJSON *meshref = json_get(o, "MESH");
    if (meshref) {
        prm_jkey(p, jp, "MESH");
        if (json_get(o, "FILE")) return prm_fail(&L->P, p, "give either FILE or MESH, not both");
        const char *ref = "";
        if (json_string(L, meshref, p, &ref)) return -1;
        const cJSON *f = L->mesh_table ? cJSON_GetObjectItemCaseSensitive(L->mesh_table, ref) : NULL;
        if (!f) return prm_fail(&L->P, p, "mesh \"%.64s\" is not in the Meshes table", ref);
        if (!cJSON_IsString(f))
            return prm_fail(&L->P, p, "Meshes.%.64s: expected a file name, got %s", ref, json_type(f));
        cJSON *copy = cJSON_CreateString(f->valuestring);
        if (!copy || !cJSON_AddItemToObject(o, "FILE", copy)) {
            cJSON_Delete(copy);
            return prm_fail(&L->P, p, "out of memory");
        }
    }

    int is_quad = type == OT_QUAD || type == OT_PLANE;
    const char *quad_keys[] = {"ORIGIN", "U", "V"};
    int nquad = 0;
    for (int i = 0; i < 3; ++i) nquad += json_get(o, quad_keys[i]) != NULL;
    if (nquad && !is_quad) {
        for (int i = 0; i < 3; ++i)
            if (json_get(o, quad_keys[i])) {
                prm_jkey(p, jp, quad_keys[i]);
                break;
            }
        return prm_fail(&L->P, p, "ORIGIN/U/V are only used by quad and plane objects");
    }
    if (json_get(o, "FILE") && type != OT_MESH) {
        prm_jkey(p, jp, "FILE");
        return prm_fail(&L->P, p, "FILE is only used by mesh objects");
    }
    static const char *const inline_keys[] = {"VERTICES", "INDICES", "NORMALS", "UVS"};
    for (int i = 0; i < 4; ++i)
        if (json_get(o, inline_keys[i]) && (type != OT_MESH || !json_get(o, "VERTICES") || json_get(o, "FILE"))) {
            prm_jkey(p, jp, inline_keys[i]);
            if (type != OT_MESH) return prm_fail(&L->P, p, "%s is only used by mesh objects", inline_keys[i]);
            if (json_get(o, "VERTICES")) return prm_fail(&L->P, p, "give either FILE (or MESH) or VERTICES, not both");
            return prm_fail(&L->P, p, "%s needs VERTICES (an inline mesh)", inline_keys[i]);
        }

    if (is_quad && nquad) {
        /* explicit parallelogram: exclusive with the transform form */
        const char *trs[] = {"TRANS", "ROTAT", "SCALE", "MATRIX"};
        for (int i = 0; i < 4; ++i) {
            if (json_get(o, trs[i])) {
                prm_jkey(p, jp, trs[i]);
                return prm_fail(&L->P, p, "give either ORIGIN/U/V or TRANS/ROTAT/SCALE/MATRIX for a quad, not both");
            }
        }
        vec3 q[3];
        for (int i = 0; i < 3; ++i) {
            const cJSON *v = json_get(o, quad_keys[i]);
            if (!v) return json_missing(L, jp, quad_keys[i]);
            prm_jkey(p, jp, quad_keys[i]);
            if (json_vec3(L, v, p, -MAX_COORD, 0, MAX_COORD, &q[i])) return -1;
        }
        if (!(vlen(vcross(q[1], q[2])) > 0.0f)) {
            prm_jkey(p, jp, "V");
            return prm_fail(&L->P, p, "U and V are zero or parallel: the quad has no area");
        }
        if (scene_add_quad(L->s, q[0], q[1], q[2], mat))
            return prm_fail(&L->P, jp, "could not add quad (out of memory)");
        return 0;
    }

    vec3 t = v3s(0.0f), r = v3s(0.0f), sc = v3s(1.0f);
    if (json_opt_vec3(L, o, jp, "TRANS", -MAX_COORD, 0, MAX_COORD, &t)) return -1;
    if (json_opt_vec3(L, o, jp, "ROTAT", -MAX_ANGLE, 0, MAX_ANGLE, &r)) return -1;
    if (json_opt_vec3(L, o, jp, "SCALE", 0.0, 1, MAX_SCALE, &sc)) return -1;
    xform m = xform_trs(t, r, sc);
    if (json_get(o, "MATRIX") && json_matrix(L, json_get(o, "MATRIX"), jp, &m)) return -1;
    xform inv;
    if (xform_invert(&m, &inv)) {
        int by_matrix = json_get(o, "MATRIX") != NULL;
        prm_jkey(p, jp, by_matrix ? "MATRIX" : "SCALE");
        return prm_fail(&L->P, p,
                        by_matrix ? "transform is singular (the matrix has no inverse)"
                                  : "transform is singular (scale too small)");
    }

    switch (type) {
    case OT_CUBE:
        if (scene_add_cube(L->s, m, mat)) return prm_fail(&L->P, jp, "could not add cube (out of memory)");
        return 0;
    case OT_SPHERE:
        if (scene_add_sphere(L->s, m, mat)) return prm_fail(&L->P, jp, "could not add sphere (out of memory)");
        return 0;
    case OT_MESH: {
        const cJSON *in = json_get(o, "INSTANCES");
        if (!in) return load_mesh_object(L, o, jp, m, mat, 1);
        size_t t0 = L->s->ntriangles, v0 = L->s->nvertices;
        if (load_mesh_object(L, o, jp, m, mat, 0)) return -1;
        return parse_instances(L, in, jp, t0, v0);
    }
    case OT_QUAD:
    case OT_PLANE: {
        /* unit square [-0.5,0.5]^2 in the xy plane facing +z, under M */
        vec3 o0 = xform_point(&m, v3(-0.5f, -0.5f, 0.0f));
        vec3 u = xform_vector(&m, v3(1.0f, 0.0f, 0.0f)), v = xform_vector(&m, v3(0.0f, 1.0f, 0.0f));
        if (scene_add_quad(L->s, o0, u, v, mat)) return prm_fail(&L->P, jp, "quad has no area or out of memory");
        return 0;
    }
    }
    return prm_fail(&L->P, jp, "object type %d has no builder (json_object_types)", type);
}

/* An object, and the media its surface bounds (INTERIOR / EXTERIOR, json_media.c). */
static int parse_object(loader *L, cJSON *o, const char *jp) {
    scene *s = L->s;
    size_t t0 = s->ntriangles, s0 = s->nspheres, q0 = s->nquads, nmeshes = L->nmeshes;
    if (parse_object_shape(L, o, jp)) return -1;
    if (!cJSON_IsObject(o)) return 0;
    int inside = 0, outside = 0;
    if (json_medium_ref(L, o, jp, "INTERIOR", &inside) || json_medium_ref(L, o, jp, "EXTERIOR", &outside)) return -1;
    if (!inside && !outside) return 0;
    /* no INTERIOR key: the material's own inside stays (a Subsurface or Fog material's medium) */
    if (!json_get(o, "INTERIOR")) inside = -1;
    if (scene_bind_media(s, t0, s0, q0, inside, outside)) return prm_fail(&L->P, jp, "out of memory");
    /* a mesh loaded for this object now carries its media: later objects do not instance it */
    if (L->nmeshes > nmeshes) L->meshes[L->nmeshes - 1].material = INT_MIN;
    return 0;
}

static int parse_objects(loader *L, cJSON *objs) {
    if (!cJSON_IsArray(objs)) return prm_fail(&L->P, "Objects", "expected an array, got %s", json_type(objs));
    size_t i = 0;
    for (cJSON *o = objs->child; o; o = o->next, ++i) {
        char p[PRM_WHERE];
        prm_jindex(p, "Objects", i);
        if (parse_object(L, o, p)) return -1;
    }
    return 0;
}

static int parse_root(loader *L, cJSON *root) {
    if (!cJSON_IsObject(root))
        return prm_fail(&L->P, NULL, "the top level must be a JSON object, got %s", json_type(root));
    /* the file's own top-level keys, for the message when it is not a course scene at all */
    char keys_seen[200] = "";
    size_t used = 0;
    for (const cJSON *c = root->child; c && used + 70 < sizeof keys_seen; c = c->next)
        used += (size_t)snprintf(keys_seen + used, sizeof keys_seen - used, "%s%.60s", used ? ", " : "",
                                 c->string ? c->string : "");
    text_one_line(keys_seen);
    if (json_canonicalize(L, root, "", "", json_root_keys)) return -1;
    cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "Materials"),
          *cam = cJSON_GetObjectItemCaseSensitive(root, "Camera");
    cJSON *objs = cJSON_GetObjectItemCaseSensitive(root, "Objects"),
          *env = cJSON_GetObjectItemCaseSensitive(root, "Environment");
    cJSON *meshes = cJSON_GetObjectItemCaseSensitive(root, "Meshes"),
          *imports = cJSON_GetObjectItemCaseSensitive(root, "Imports");
    if (meshes && !cJSON_IsObject(meshes))
        return prm_fail(&L->P, "Meshes", "expected an object (name -> file), got %s", json_type(meshes));
    L->mesh_table = meshes;
    if (!cam && L->camera_only) return prm_fail(&L->P, NULL, "missing required key \"Camera\"");
    if (!cam) {
        if (!objs && !ms)
            return prm_fail(&L->P, NULL, "missing required key \"Camera\": not a CIS 5650 scene (top-level keys: %s)",
                            keys_seen);
        return prm_fail(&L->P, NULL, "missing required key \"Camera\"");
    }
    /* media and materials first: the camera and objects refer to them by name, wherever they
     * appear in the file */
    cJSON *media = cJSON_GetObjectItemCaseSensitive(root, "Media");
    if (media && !L->camera_only && json_media(L, media)) return -1;
    if (ms && !L->camera_only && json_materials(L, ms)) return -1;
    if (json_parse_camera(L, cam)) return -1;
    if (!L->camera_only && json_medium_ref(L, cam, "Camera", "MEDIUM", &L->s->camera.medium)) return -1;
    if (L->camera_only) return 0;
    if (env && parse_environment(L, env)) return -1;
    cJSON *lights = cJSON_GetObjectItemCaseSensitive(root, "Lights");
    if (lights && parse_lights(L, lights)) return -1;
    if (!objs && !imports) return prm_fail(&L->P, NULL, "missing required key \"Objects\"");
    if (objs && parse_objects(L, objs)) return -1;
    if (imports) {
        /* a dialect: placed model files in their own list, meshes with their own materials */
        if (!cJSON_IsArray(imports)) return prm_fail(&L->P, "Imports", "expected an array, got %s", json_type(imports));
        size_t i = 0;
        for (cJSON *o = imports->child; o; o = o->next, ++i) {
            char p[PRM_WHERE];
            prm_jindex(p, "Imports", i);
            if (cJSON_IsObject(o) && !cJSON_GetObjectItem(o, "TYPE") && !cJSON_AddStringToObject(o, "TYPE", "mesh"))
                return prm_fail(&L->P, p, "out of memory");
            if (parse_object(L, o, p)) return -1;
        }
    }
    return 0;
}

/* ---- entry points ---------------------------------------------------------------------------- */
int scene_load_json_text(scene **out, const char *text, const char *source_name, const char *base_dir, char *err,
                         size_t errlen) {
    return scene_load_json_text_opts(out, text, source_name, base_dir, NULL, err, errlen);
}

int scene_load_json_text_opts(scene **out, const char *text, const char *source_name, const char *base_dir,
                              const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    if (err && errlen) err[0] = '\0';
    loader L;
    memset(&L, 0, sizeof L);
    prm_init(&L.P, source_name, opts ? opts->strict : 1, err, errlen);
    L.base_dir = base_dir;
    L.default_material = -1;
    if (!text) return prm_fail(&L.P, NULL, "no scene text");

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        /* cJSON reports a byte offset: turn it into line:column like a compiler would */
        if (!end || end < text) end = text;
        size_t line = 1, col = 1;
        for (const char *c = text; c < end && *c; ++c) {
            if (*c == '\n') {
                ++line;
                col = 1;
            } else
                ++col;
        }
        char near[40];
        size_t j = 0;
        for (const char *c = end; *c && j < 24; ++c)
            near[j++] = (*c == '\n' || *c == '\r' || *c == '\t') ? ' ' : (isprint((unsigned char)*c) ? *c : '?');
        near[j] = '\0';
        if (err && errlen) {
            if (j)
                snprintf(err, errlen, "%s:%zu:%zu: malformed JSON near \"%s\"", L.P.src, line, col, near);
            else
                snprintf(err, errlen, "%s:%zu:%zu: malformed JSON: unexpected end of input", L.P.src, line, col);
        }
        return -1;
    }
    L.s = scene_create();
    if (!L.s) {
        cJSON_Delete(root);
        return prm_fail(&L.P, NULL, "out of memory");
    }
    if (opts) {
        L.s->warn = opts->warn;
        L.s->warn_user = opts->warn_user;
        L.camera_only = opts->camera_only;
        L.P.defines = opts->defines;
        L.P.ndefines = opts->ndefines;
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < L.P.ndefines; ++i) rc = json_apply_define(&L, root, L.P.defines[i]);
    if (rc == 0 && L.P.ndefines > 0 && opts->json_out) {
        *opts->json_out = cJSON_Print(root); /* --dump-scene writes the overridden scene */
        if (!*opts->json_out) rc = prm_fail(&L.P, NULL, "out of memory");
    }
    if (rc == 0) rc = parse_root(&L, root);
    cJSON_Delete(root);
    for (size_t i = 0; i < L.nmeshes; ++i) free(L.meshes[i].path);
    free(L.meshes);
    for (size_t i = 0; i < L.ntex; ++i) free(L.tex_path[i]);
    free(L.tex_path);
    free(L.tex_index);
    free(L.tex_pending);
    prm_flush(&L.P, L.s, rc == 0);
    if (rc) {
        scene_destroy(L.s);
        return -1;
    }
    L.s->warn = NULL; /* the sink belongs to this load */
    L.s->warn_user = NULL;
    *out = L.s;
    return 0;
}

int scene_load_json_file(scene **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    size_t size;
    char why[256];
    char *text = file_read_all(path, MAX_SCENE_FILE, &size, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    /* cJSON would stop at a NUL and silently ignore the rest */
    const char *nul = memchr(text, '\0', size);
    if (nul) {
        file_error(err, errlen, path, text_line_at(text, nul), "file contains a NUL byte (not a text file?)");
        free(text);
        return -1;
    }
    /* mesh and texture FILE keys are relative to the scene file's directory */
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(n + 1);
        if (!dir) {
            free(text);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int rc = scene_load_json_text(out, text, path, dir, err, errlen);
    free(dir);
    free(text);
    return rc;
}
