/* The JSON reader's textures and materials: a material's TYPE picks its kind from the dialect
 * table (json_dialect.c), whose row says which keys the kind reads. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "import/json_internal.h"
#include "scene/material.h"
#include "kernel/spectral.h"
#include "image/image.h"
#include "util/array.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- textures -------------------------------------------------------------------------------- */
/* Loads the image named by the string `f` (at JSON path `p`, relative to the scene file) as an
 * image texture: an 8-bit sRGB file (PNG, JPEG) keeps its codes, decoded on lookup; any other as
 * linear float RGB, its invalid values reported and zeroed. */
/* data: the texels are numbers, not colour (normal and height maps): 8-bit codes read linearly
 * (code / 255), not as sRGB, and the file is a texture apart from its colour use. */
static int load_image_texture_as(loader *L, const cJSON *f, const char *p, int reflectance, int data, int *out_index) {
    const char *file = "";
    if (json_string(L, f, p, &file)) return -1;
    char *full = json_resolve_path(L, file);
    if (!full) return prm_fail(&L->P, p, "out of memory");
    struct stat st;
    if (stat(full, &st) != 0) {
        int e = errno;
        prm_fail(&L->P, p, "%s: %s", full, strerror(e));
        free(full);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        prm_fail(&L->P, p, "%s: not a regular file", full);
        free(full);
        return -1;
    }
    /* the file by its canonical path: "a.png" and "./a.png" are one image */
    char *key = realpath(full, NULL);
    if (key && data) {
        size_t kl = strlen(key);
        char *k2 = realloc(key, kl + 6);
        if (!k2) {
            free(key);
            free(full);
            return prm_fail(&L->P, p, "out of memory");
        }
        key = k2;
        memcpy(key + kl, "#data", 6);
    }
    for (size_t i = 0; key && i < L->ntex; ++i)
        if (!strcmp(L->tex_path[i], key)) {
            free(key);
            free(full);
            *out_index = L->tex_index[i];
            return 0;
        }
    free(L->tex_pending);
    L->tex_pending = key ? key : strdup(full);
    if (!L->tex_pending) {
        free(full);
        return prm_fail(&L->P, p, "out of memory");
    }
    char ierr[512];
    int w = 0, h = 0, idx;
    /* 8-bit sRGB stays 8-bit (a quarter of the memory), decoded straight into the scene's store;
     * its codes are all valid values */
    int is8 = image_load_srgb8(full, scene_reserve_texels8, L->s, &w, &h, ierr, sizeof ierr);
    if (is8 < 0) {
        free(full);
        return prm_fail(&L->P, p, "%s", ierr);
    }
    if (is8) {
        free(full);
        idx = scene_add_image_texture8(L->s, w, h, data ? TEXEL8_LINEAR : TEXEL8_SRGB);
    } else {
        image img;
        if (image_load(&img, full, ierr, sizeof ierr)) {
            free(full);
            return prm_fail(&L->P, p, "%s", ierr);
        }
        /* values no light or reflectance has: said once per file, replaced by 0 (refused with --strict) */
        image_value_report vr;
        image_sanitize(&img, &vr);
        int bad = 0;
        char key[1100];
        snprintf(key, sizeof key, "invalid texels %s", full);
        if (vr.nonfinite || vr.negative)
            bad = prm_warn(&L->P, key, p, "%s: %zu non-finite and %zu negative values replaced by 0", full,
                           vr.nonfinite, vr.negative);
        if (!bad && vr.huge) {
            char msg[768];
            snprintf(msg, sizeof msg, "%s: %zu values above %g (largest %g): a broken file?", full, vr.huge,
                     (double)IMAGE_HUGE_VALUE, (double)vr.largest);
            snprintf(key, sizeof key, "huge texels %s", full);
            prm_note(&L->P, key, p, msg);
        }
        /* a reflectance (a material's texture) above 1 makes light: said once per file, an error
         * with --strict (8-bit files cannot hold such values) */
        size_t over = 0;
        float most = 0.0f;
        for (size_t i = 0; reflectance && !bad && i < (size_t)img.width * (size_t)img.height * 3u; ++i)
            if (img.rgb[i] > 1.0f) {
                over++;
                most = img.rgb[i] > most ? img.rgb[i] : most;
            }
        if (over) {
            snprintf(key, sizeof key, "reflectance above 1 %s", full);
            bad = prm_warn(&L->P, key, p,
                           "%s: %zu texel values above 1 (largest %g) in a reflectance texture: the "
                           "surface would reflect more light than it receives",
                           full, over, (double)most);
        }
        free(full);
        if (bad) {
            image_free(&img);
            return -1;
        }
        idx = scene_take_image_texture(L->s, &img);
    }
    if (idx == -2) return prm_fail(&L->P, p, "too many texels in the scene");
    if (idx < 0) return prm_fail(&L->P, p, "out of memory");
    /* one image memory budget for the scene: every texture held together within the cap */
    if (scene_textures_memory_check(L->s, L->tex_pending, ierr, sizeof ierr)) return prm_fail(&L->P, p, "%s", ierr);
    int *ti = GROW(L->tex_path, L->cap_tex, L->ntex + 1) ? NULL : realloc(L->tex_index, L->cap_tex * sizeof(int));
    if (!ti) return prm_fail(&L->P, p, "out of memory");
    L->tex_index = ti;
    L->tex_path[L->ntex] = L->tex_pending;
    L->tex_index[L->ntex++] = idx;
    L->tex_pending = NULL;
    *out_index = idx;
    return 0;
}

static int load_image_texture(loader *L, const cJSON *f, const char *p, int reflectance, int *out_index) {
    return load_image_texture_as(L, f, p, reflectance, 0, out_index);
}

/* An environment map: its texture, and the memory cap checked for the sampling tables that
 * scene_prepare builds from it, where the message can name the file. */
int json_env_map(loader *L, const cJSON *node, const char *jp) {
    if (load_image_texture(L, node, jp, 0, &L->s->env_tex)) return -1;
    char err[512];
    const char *name = cJSON_IsString(node) ? node->valuestring : "environment map";
    if (scene_env_memory_check(L->s, L->s->env_tex, name, err, sizeof err)) return prm_fail(&L->P, jp, "%s", err);
    return 0;
}

static int texture_as(loader *L, cJSON *t, const char *jpath, int data, int *out_index) {
    static const char *const keys[] = {"TYPE", "RGB1", "RGB2", "SCALE", "SPACE", "FILE", "OCTAVES", NULL};
    /* checker, image, and the Perlin-noise family (TEX_NOISE, TEX_MARBLE, TEX_WOOD) */
    static const char *const types[] = {"checker", "image", "noise", "marble", "wood", NULL};
    static const char *const spaces[] = {"world", "uv", NULL};
    char p[PRM_WHERE];
    /* course dialects give an image texture as its file name */
    if (cJSON_IsString(t)) return load_image_texture_as(L, t, jpath, !data, data, out_index);
    if (!cJSON_IsObject(t)) return prm_fail(&L->P, jpath, "expected an object or a file name, got %s", json_type(t));
    if (json_check_keys(L, t, jpath, "TEXTURE", keys)) return -1;
    const cJSON *ty = json_get(t, "TYPE");
    if (!ty) return json_missing(L, jpath, "TYPE");
    prm_jkey(p, jpath, "TYPE");
    int type = json_enum(L, ty, p, "texture TYPE", types);
    if (type < 0) return -1;

    texture tex;
    memset(&tex, 0, sizeof tex);
    if (type != 1) {
        if (json_get(t, "FILE")) {
            prm_jkey(p, jpath, "FILE");
            return prm_fail(&L->P, p, "FILE is only used by image textures");
        }
        if (type == 0 && json_get(t, "OCTAVES")) {
            prm_jkey(p, jpath, "OCTAVES");
            return prm_fail(&L->P, p, "OCTAVES is only used by noise, marble and wood textures");
        }
        static const int kinds[] = {TEX_CHECKER, TEX_IMAGE, TEX_NOISE, TEX_MARBLE, TEX_WOOD};
        tex.kind = kinds[type];
        double octaves = 6.0;
        if (json_opt_number(L, t, jpath, "OCTAVES", 1.0, 0, 16.0, &octaves)) return -1;
        tex.octaves = (int32_t)octaves;
        const char *req[] = {"RGB1", "RGB2"};
        vec3 *dst[] = {&tex.a, &tex.b};
        for (int i = 0; i < 2; ++i) {
            const cJSON *c = json_get(t, req[i]);
            if (!c) return json_missing(L, jpath, req[i]);
            prm_jkey(p, jpath, req[i]);
            if (json_vec3(L, c, p, 0.0, 0, 1.0, dst[i])) return -1;
        }
        double scale = 1.0;
        if (json_opt_number(L, t, jpath, "SCALE", 0.0, 1, 1e6, &scale)) return -1;
        tex.scale = (float)scale;
        const cJSON *sp = json_get(t, "SPACE");
        if (sp) {
            prm_jkey(p, jpath, "SPACE");
            int space = json_enum(L, sp, p, "texture SPACE", spaces);
            if (space < 0) return -1;
            tex.uv_space = space;
        }
        int idx = scene_add_texture(L->s, tex, NULL);
        if (idx < 0) return prm_fail(&L->P, jpath, "out of memory");
        *out_index = idx;
        return 0;
    }

    /* image */
    static const char *const checker_only[] = {"RGB1", "RGB2", "SCALE", "SPACE", "OCTAVES"};
    for (int i = 0; i < 5; ++i) {
        if (json_get(t, checker_only[i])) {
            prm_jkey(p, jpath, checker_only[i]);
            return prm_fail(&L->P, p, "%s is only used by checker and procedural textures", checker_only[i]);
        }
    }
    const cJSON *f = json_get(t, "FILE");
    if (!f) return json_missing(L, jpath, "FILE");
    prm_jkey(p, jpath, "FILE");
    return load_image_texture_as(L, f, p, !data, data, out_index);
}

int json_texture(loader *L, cJSON *t, const char *jpath, int *out_index) {
    return texture_as(L, t, jpath, 0, out_index);
}

/* Materials that objects use without defining one: a neutral grey diffuse. */
int json_default_material(loader *L) {
    if (L->default_material >= 0) return L->default_material;
    material_params p = material_params_default(MAT_DIFFUSE);
    p.rgb = v3s(0.7f);
    p.two_sided = 1;
    material m = material_from_params(MAT_DIFFUSE, &p);
    L->default_material = scene_add_material(L->s, "(default grey)", m);
    return L->default_material;
}

static int parse_material(loader *L, const char *name, cJSON *m, const char *jpath) {
    char p[PRM_WHERE];
    if (!cJSON_IsObject(m)) return prm_fail(&L->P, jpath, "expected an object, got %s", json_type(m));
    if (json_canonicalize(L, m, jpath, "Materials.*", json_material_keys)) return -1;
    const cJSON *ty = json_get(m, "TYPE");
    if (!ty) return json_missing(L, jpath, "TYPE");
    prm_jkey(p, jpath, "TYPE");
    const char *tname = "";
    if (json_string(L, ty, p, &tname)) return -1;
    char tnorm[64];
    prm_normalise(tname, tnorm, sizeof tnorm);
    const json_material_row *row = NULL;
    const char *why = NULL;
    int kind = json_material_kind(tnorm, &row, &why), fallback = 0;
    char dk[120];
    snprintf(dk, sizeof dk, "Materials.*.TYPE=%.64s", tnorm);
    if (kind == JM_KIND_UNKNOWN) {
        const char *sug = prm_suggest(tname, json_material_type_names);
        int rc =
            sug ? prm_warn(&L->P, dk, p,
                           "unknown material TYPE \"%.64s\" (did you mean \"%s\"?): rendered as Diffuse with its RGB",
                           tname, sug)
                : prm_warn(&L->P, dk, p, "unknown material TYPE \"%.64s\": rendered as Diffuse with its RGB", tname);
        if (rc) return -1;
        fallback = 1;
    } else if (kind == JM_KIND_MEDIUM) {
        return json_volume_material(L, name, m, jpath);
    } else if (kind == JM_KIND_SUBSURFACE) {
        int rc = json_subsurface_material(L, name, m, jpath);
        if (rc <= 0) return rc;
        /* neither RADIUS nor SIGMA_A / SIGMA_S: no medium to fill it with */
        if (prm_warn(&L->P, dk, p,
                     "material TYPE \"%.64s\" without RADIUS or SIGMA_A/SIGMA_S (its medium): rendered as Diffuse "
                     "with its base colour",
                     tname))
            return -1;
        fallback = 1;
    } else if (kind == JM_KIND_FALLBACK) {
        if (prm_warn(&L->P, dk, p, "material TYPE \"%.64s\": caustic %s; rendered as Diffuse with its base colour",
                     tname, why))
            return -1;
        fallback = 1;
    }
    /* Marble, Wood, Noise: Diffuse with a procedural texture (below) */
    int procedural = kind == JM_KIND_PROCEDURAL;
    if (fallback || procedural) kind = json_material_named("Diffuse", &row);

    const cJSON *refl_v = json_get(m, "REFLECTIVE"), *refr_v = json_get(m, "REFRACTIVE");
    double emittance = row && (row->reads & JM_EMITS) ? 1.0 : 0.0;
    if (json_opt_number(L, m, jpath, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &emittance)) return -1;
    int reflective = 0, refractive = 0;
    if (refl_v) {
        prm_jkey(p, jpath, "REFLECTIVE");
        if (json_flag(L, refl_v, p, &reflective)) return -1;
    }
    if (refr_v) {
        prm_jkey(p, jpath, "REFRACTIVE");
        if (json_flag(L, refr_v, p, &refractive)) return -1;
    }
    if (kind == JM_KIND_INFER) /* the reference shader's order: light, then mirror/glass flags */
        kind = json_material_named(emittance > 0.0 ? "Emitter"
                                   : refractive    ? "Dielectric"
                                   : reflective    ? "Mirror"
                                                   : "Diffuse",
                                   &row);
    /* REFRACTIVE/REFLECTIVE flags on a Specular material (a dialect's one "Specular" type for both) */
    if (row && strcmp(row->kind_name, "Mirror") == 0 && refractive) kind = json_material_named("Dielectric", &row);
    if (kind < 0 || !row) return prm_fail(&L->P, p, "material table: no kind for TYPE \"%.64s\"", tname);
    const int reads = row->reads;

    material mat;
    memset(&mat, 0, sizeof mat);
    mat.albedo_tex = -1;
    mat.ior = 1.5f;
    mat.two_sided = 1; /* the course's shader emits whichever side a ray hits */

    cJSON *tex = cJSON_GetObjectItemCaseSensitive(m, "TEXTURE");
    if (tex && (reads & JM_EMITS)) {
        prm_jkey(p, jpath, "TEXTURE");
        return prm_fail(&L->P, p, "Emitting materials cannot have a TEXTURE");
    }
    /* RGB is radiance colour for emitters (any size), reflectance otherwise: above 1 would create
     * energy. With a TEXTURE it multiplies the texture and defaults to white. */
    vec3 rgb = v3s(1.0f);
    const cJSON *c = json_get(m, "RGB");
    if (c) {
        prm_jkey(p, jpath, "RGB");
        if (json_colour(L, c, p, (reads & JM_EMITS) ? MAX_RADIANCE : 1.0, &rgb)) return -1;
    } else if (!tex && (reads & (JM_METAL_NAME | JM_ETA_K)) &&
               (cJSON_IsString(json_get(m, "METALLIC")) || json_get(m, "K"))) {
        rgb = v3s(1.0f); /* a complex IOR sets the colour */
    } else if (!tex && !(reads & JM_NO_COLOUR)) {
        if ((fallback || procedural) && (json_get(m, "RGB1") || json_get(m, "LIGHT_RGB")))
            rgb = v3s(procedural ? 1.0f : 0.5f);
        else
            return json_missing(L, jpath, "RGB");
    }
    double roughness = 0.0, ior = 1.5, metallic = (reads & JM_METAL_DEFAULT) ? 1.0 : 0.0;
    /* soft ranges: course sweeps go past the ends (a roughness of -0.5); clamped with a warning */
    if (json_opt_soft(L, m, jpath, "ROUGHNESS", 0.0, 1.0, &roughness)) return -1;
    /* a named conductor: METAL "Au" (METAL is METALLIC's spelling; a string names the metal) */
    const cJSON *mv = json_get(m, "METALLIC");
    int complex_ior = 0;
    vec3 eta = v3s(1.0f), kk = v3s(0.0f);
    if (mv && cJSON_IsString(mv) && (reads & JM_METAL_NAME)) {
        prm_jkey(p, jpath, "METALLIC");
        if (material_metal_lookup(mv->valuestring, &eta, &kk, NULL)) {
            const char *names[128];
            int n = 0;
            while (n < 127 && (names[n] = material_metal_name(n)) != NULL) ++n;
            names[n] = NULL;
            const char *sug = prm_suggest(mv->valuestring, names);
            return prm_fail(&L->P, p, "unknown metal \"%.40s\"%s%s%s (Mitsuba 3's names: Au, Ag, Cu, Al, Cr, W, ...)",
                            mv->valuestring, sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : "");
        }
        complex_ior = 1;
        metallic = 1.0;
    } else if (json_opt_soft(L, m, jpath, "METALLIC", 0.0, 1.0, &metallic)) {
        return -1;
    }
    const cJSON *iv = json_get(m, "IOR");
    vec3 ior3 = v3s(1.5f);
    int ior_given = 0, ior_rgb = 0;
    if (iv) {
        prm_jkey(p, jpath, "IOR");
        ior_given = 1;
        if (cJSON_IsArray(iv) && cJSON_GetArraySize(iv) == 3) { /* per-channel IOR: dispersion */
            double a[3];
            if (json_array(L, iv, p, 3, 0.0, 1, 10.0, a)) return -1;
            ior = a[1];
            ior3 = v3((float)a[0], (float)a[1], (float)a[2]);
            ior_rgb = (reads & JM_IOR) && !(reads & JM_ETA_K);
            snprintf(dk, sizeof dk, "Materials.*.IOR[]");
            if (ior_rgb && !(a[2] >= a[1] && a[1] >= a[0]) &&
                prm_warn(&L->P, dk, p,
                         "per-channel IOR [R, G, B] must not decrease from red to blue (normal dispersion): using "
                         "the middle value %g for all wavelengths",
                         ior))
                return -1;
        } else if (reads & JM_IOR) {
            /* the course's text format writes 0 for "not set" */
            if (cJSON_IsNumber(iv) && iv->valuedouble == 0.0) {
                if (prm_warn(&L->P, "Materials.*.IOR=0", p,
                             "IOR 0 is not an index of refraction (must be > 0): using 1.5"))
                    return -1;
            } else if (json_range(L, iv, p, 0.0, 1, 10.0, &ior)) {
                return -1;
            }
        } else if (json_range(L, iv, p, -1e30, 0, 1e30, &ior)) {
            return -1; /* IOR does not apply to this type: any number is accepted, as the course does */
        } else {
            ior3 = v3s((float)ior);
        }
    }
    /* a conductor's explicit complex IOR: IOR (eta, a number or RGB) with K */
    const cJSON *kv = json_get(m, "K");
    if (kv && (reads & JM_ETA_K)) {
        prm_jkey(p, jpath, "K");
        if (json_colour(L, kv, p, 100.0, &kk)) return -1;
        if (!ior_given) return json_missing(L, jpath, "IOR");
        if (!(ior3.x > 0.0f && ior3.y > 0.0f && ior3.z > 0.0f) || ior3.x > 100.0f || ior3.y > 100.0f ||
            ior3.z > 100.0f) {
            prm_jkey(p, jpath, "IOR");
            return prm_fail(&L->P, p, "a conductor's IOR (eta, with K) must be in (0, 100]");
        }
        eta = ior3;
        complex_ior = 1;
    }
    /* coated: the base, the coat's roughness and absorption */
    int coat_base = COAT_BASE_DIFFUSE;
    double coat_roughness = 0.0;
    vec3 coat_tint = v3s(1.0f);
    if (reads & JM_COAT) {
        const cJSON *bv = json_get(m, "BASE");
        if (bv) {
            prm_jkey(p, jpath, "BASE");
            const char *bn = "";
            if (json_string(L, bv, p, &bn)) return -1;
            char bnorm[32];
            prm_normalise(bn, bnorm, sizeof bnorm);
            if (prm_in_list(bnorm, "DIFFUSE|LAMBERT|LAMBERTIAN|MATTE"))
                coat_base = COAT_BASE_DIFFUSE;
            else if (prm_in_list(bnorm, "CONDUCTOR|METAL|METALLIC"))
                coat_base = COAT_BASE_CONDUCTOR;
            else if (prm_in_list(bnorm, "PBR|METALLICROUGHNESS|GGX"))
                coat_base = COAT_BASE_PBR;
            else
                return prm_fail(&L->P, p, "BASE \"%.40s\" is not a coated base (Diffuse, Conductor or PBR)", bn);
        } else if (complex_ior || prm_in_list(tnorm, "COATEDCONDUCTOR|COATEDMETAL")) {
            coat_base = COAT_BASE_CONDUCTOR;
        } else if (metallic > 0.0) {
            coat_base = COAT_BASE_PBR;
        }
        if (complex_ior && coat_base != COAT_BASE_CONDUCTOR) {
            prm_jkey(p, jpath, "METALLIC");
            return prm_fail(&L->P, p, "a named METAL needs BASE \"Conductor\"");
        }
        /* over a diffuse base ROUGHNESS is the coat's (Mitsuba's roughplastic alpha), unless
         * COAT_ROUGHNESS says it; over the others ROUGHNESS is the base's and the coat is smooth */
        coat_roughness = coat_base == COAT_BASE_DIFFUSE ? roughness : 0.0;
        if (json_opt_soft(L, m, jpath, "COAT_ROUGHNESS", 0.0, 1.0, &coat_roughness)) return -1;
        const cJSON *tv = json_get(m, "COAT_RGB");
        if (tv) {
            prm_jkey(p, jpath, "COAT_RGB");
            if (json_colour(L, tv, p, 1.0, &coat_tint)) return -1;
        }
        const cJSON *av = json_get(m, "COAT_ABSORPTION");
        if (av) {
            vec3 sigma;
            double thick = 1.0;
            prm_jkey(p, jpath, "COAT_ABSORPTION");
            if (json_colour(L, av, p, 1e6, &sigma)) return -1;
            if (json_opt_number(L, m, jpath, "COAT_THICKNESS", 0.0, 0, 1e6, &thick)) return -1;
            /* Beer-Lambert there and back at normal incidence */
            coat_tint = vmul(coat_tint, v3(expf(-2.0f * sigma.x * (float)thick), expf(-2.0f * sigma.y * (float)thick),
                                           expf(-2.0f * sigma.z * (float)thick)));
        } else if (json_get(m, "COAT_THICKNESS")) {
            prm_jkey(p, jpath, "COAT_THICKNESS");
            if (prm_warn(&L->P, "Materials.*.COAT_THICKNESS", p, "COAT_THICKNESS without COAT_ABSORPTION: ignored"))
                return -1;
        }
    }
    /* Phong: RGB is the diffuse part, SPECRGB the lobe's reflectance; together at most 1 */
    vec3 spec = v3s(0.0f);
    double exponent = 1.0;
    if (reads & JM_PHONG_LOBE) {
        if (!json_get(m, "SPECRGB")) return json_missing(L, jpath, "SPECRGB");
        if (!json_get(m, "EXPONENT")) return json_missing(L, jpath, "EXPONENT");
        prm_jkey(p, jpath, "SPECRGB");
        if (json_colour(L, json_get(m, "SPECRGB"), p, 1.0, &spec)) return -1;
        if (json_opt_number(L, m, jpath, "EXPONENT", 0.0, 0, 1e6, &exponent)) return -1;
        float total = vmaxc(vadd(rgb, spec));
        if (total > 1.0f) {
            snprintf(dk, sizeof dk, "Materials.*.SPECRGB>1");
            if (prm_warn(&L->P, dk, p,
                         "RGB + SPECRGB exceeds 1 (the material would create energy): both scaled by %.3g",
                         1.0 / total))
                return -1;
            rgb = vscale(rgb, 1.0f / total);
            spec = vscale(spec, 1.0f / total);
        }
    } else {
        /* keys that do not apply to the type are accepted and ignored, as the course does; their
         * values must still be well-formed */
        const cJSON *sr = json_get(m, "SPECRGB");
        vec3 unused;
        if (sr) {
            prm_jkey(p, jpath, "SPECRGB");
            if (json_colour(L, sr, p, 1e30, &unused)) return -1;
        }
        if (json_opt_number(L, m, jpath, "EXPONENT", 0.0, 0, 1e30, &exponent)) return -1;
    }
    /* DiffuseTransmission: RGB reflects, TRANSMIT_RGB transmits (without it, half of RGB each);
     * together at most 1 */
    vec3 trans = v3s(0.0f);
    const cJSON *tr = json_get(m, "TRANSMIT_RGB");
    if (tr) {
        prm_jkey(p, jpath, "TRANSMIT_RGB");
        if (json_colour(L, tr, p, (reads & JM_TRANSMIT) ? 1.0 : 1e30, &trans)) return -1;
    }
    if (reads & JM_TRANSMIT) {
        if (!tr) {
            rgb = vscale(rgb, 0.5f);
            trans = rgb;
        }
        float total = vmaxc(vadd(rgb, trans));
        if (total > 1.0f) {
            snprintf(dk, sizeof dk, "Materials.*.TRANSMIT_RGB>1");
            if (prm_warn(&L->P, dk, p,
                         "RGB + TRANSMIT_RGB exceeds 1 (the material would create energy): both scaled by %.3g",
                         1.0 / total))
                return -1;
            rgb = vscale(rgb, 1.0f / total);
            trans = vscale(trans, 1.0f / total);
        }
    }
    /* PBR: sheen (KHR_materials_sheen) and the dielectric's specular (KHR_materials_specular) */
    vec3 sheen = v3s(0.0f), spec_tint = v3s(1.0f);
    double sheen_roughness = 0.0, spec_weight = 1.0;
    if (reads & JM_PBR_LAYERS) {
        const cJSON *sv = json_get(m, "SHEEN_RGB"), *tv = json_get(m, "SPECULAR_TINT");
        if (sv) {
            prm_jkey(p, jpath, "SHEEN_RGB");
            if (json_colour(L, sv, p, 1.0, &sheen)) return -1;
        }
        if (json_opt_soft(L, m, jpath, "SHEEN_ROUGHNESS", 0.0, 1.0, &sheen_roughness)) return -1;
        if (json_opt_soft(L, m, jpath, "SPECULAR_WEIGHT", 0.0, 1.0, &spec_weight)) return -1;
        if (tv) {
            prm_jkey(p, jpath, "SPECULAR_TINT");
            if (json_colour(L, tv, p, 1e3, &spec_tint)) return -1;
        }
    }
    const cJSON *ts = json_get(m, "TWO_SIDED");
    if (ts) {
        prm_jkey(p, jpath, "TWO_SIDED");
        if (json_flag(L, ts, p, &mat.two_sided)) return -1;
    }

    /* dispersion: one of DISPERSION (KHR_materials_dispersion: 20 / V_d), ABBE (V_d) or CAUCHY_B
     * (um^2), or a per-channel IOR [R, G, B] (a Cauchy fit through red 650 nm and blue 450 nm) */
    double cauchy_b = 0.0;
    {
        const char *keys[3] = {"DISPERSION", "ABBE", "CAUCHY_B"};
        const char *given = NULL;
        for (int i = 0; i < 3; ++i) {
            if (!json_get(m, keys[i])) continue;
            if (given) {
                prm_jkey(p, jpath, keys[i]);
                return prm_fail(&L->P, p, "give one of DISPERSION, ABBE and CAUCHY_B (%s is given too)", given);
            }
            given = keys[i];
            double v = 0.0;
            if (json_opt_number(L, m, jpath, keys[i], 0.0, 0, i == 1 ? 1e4 : 1.0, &v)) return -1;
            if (i == 1 && v > 0.0 && v < 1.0) {
                prm_jkey(p, jpath, keys[i]);
                return prm_fail(&L->P, p, "ABBE %g is not an Abbe number (glasses have 15 to 100; 0: no dispersion)",
                                v);
            }
            if (i == 0 && v > 0.0) cauchy_b = material_cauchy_b(ior, 20.0 / v);
            if (i == 1 && v > 0.0) cauchy_b = material_cauchy_b(ior, v);
            if (i == 2) cauchy_b = v;
        }
        if (given && ior_rgb) {
            snprintf(dk, sizeof dk, "Materials.*.IOR[]+%s", given);
            prm_jkey(p, jpath, given);
            if (prm_warn(
                    &L->P, dk, p,
                    "a per-channel IOR and %s both state the dispersion: %s is used, with the IOR's middle value %g",
                    given, given, ior))
                return -1;
        }
        if (!given && ior_rgb && ior3.z > ior3.x && ior3.y >= ior3.x && ior3.z >= ior3.y) {
            const float lr = 0.65f, lg = 0.55f, lb = 0.45f;
            cauchy_b = (ior3.z - ior3.x) / (1.0f / (lb * lb) - 1.0f / (lr * lr));
            /* the d-line IOR of the Cauchy glass through the middle value at 550 nm */
            ior = ior3.y + cauchy_b * (1.0 / (SPECTRAL_LAMBDA_D_UM * SPECTRAL_LAMBDA_D_UM) - 1.0 / (lg * lg));
            given = "IOR";
        }
        int glass = kind == MAT_DIELECTRIC || kind == MAT_ROUGH_GLASS;
        if (given && cauchy_b > 0.0 && !glass) {
            snprintf(dk, sizeof dk, "Materials.*.%s", given);
            prm_jkey(p, jpath, given);
            if (prm_warn(&L->P, dk, p,
                         "%s (dispersion) applies to Dielectric and RoughGlass only: this material has one IOR", given))
                return -1;
            cauchy_b = 0.0;
        }
    }

    /* the kind takes the parameters it uses (its <stem>_from_params, kernel/materials/) */
    material_params mp = material_params_default((material_kind)kind);
    mp.dispersion = cauchy_b;
    mp.sheen = sheen;
    mp.sheen_roughness = sheen_roughness;
    mp.spec_weight = spec_weight;
    mp.spec_tint = spec_tint;
    mp.rgb = rgb;
    mp.emission = vscale(rgb, (float)emittance);
    const cJSON *erv = json_get(m, "EMISSION_RGB");
    if (erv) { /* its own emitted colour, scaled by EMITTANCE where given */
        vec3 e;
        prm_jkey(p, jpath, "EMISSION_RGB");
        if (json_colour(L, erv, p, MAX_RADIANCE, &e)) return -1;
        mp.emission = vscale(e, json_get(m, "EMITTANCE") ? (float)emittance : 1.0f);
    }
    mp.roughness = roughness;
    mp.ior = ior;
    mp.metallic = metallic;
    mp.specular = spec;
    mp.transmittance = trans;
    mp.exponent = exponent;
    mp.two_sided = mat.two_sided;
    mp.complex_ior = complex_ior;
    mp.eta = eta;
    mp.k = kk;
    mp.coat_base = coat_base;
    mp.coat_roughness = coat_roughness;
    mp.coat_tint = coat_tint;
    mat = material_from_params((material_kind)kind, &mp);
    if (procedural) {
        /* the Perlin-noise family: a texture blending the two colours (white and black without
         * them), tinted by RGB; a TEXTURE given as well wins */
        texture pt;
        memset(&pt, 0, sizeof pt);
        pt.kind = strstr(tnorm, "MARBLE") ? TEX_MARBLE : strstr(tnorm, "WOOD") ? TEX_WOOD : TEX_NOISE;
        pt.a = v3s(1.0f);
        pt.b = v3s(0.0f);
        const char *pairs[2][2] = {{"RGB1", "RGB2"}, {"LIGHT_RGB", "DARK_RGB"}};
        for (int i = 0; i < 2; ++i) {
            const cJSON *va = json_get(m, pairs[i][0]), *vb = json_get(m, pairs[i][1]);
            if (va || vb) {
                if (!va || !vb) return json_missing(L, jpath, va ? pairs[i][1] : pairs[i][0]);
                char pa[PRM_WHERE], pb[PRM_WHERE];
                prm_jkey(pa, jpath, pairs[i][0]);
                prm_jkey(pb, jpath, pairs[i][1]);
                if (json_vec3(L, va, pa, 0.0, 0, 1.0, &pt.a) || json_vec3(L, vb, pb, 0.0, 0, 1.0, &pt.b)) return -1;
                break;
            }
        }
        double octaves = 6.0, freq = 1.0;
        if (json_opt_number(L, m, jpath, "OCTAVES", 1.0, 0, 16.0, &octaves)) return -1;
        if (json_opt_number(L, m, jpath, "FREQUENCY", 0.0, 1, 1e6, &freq)) return -1;
        pt.octaves = (int32_t)octaves;
        pt.scale = (float)freq;
        if (!tex) {
            mat.albedo_tex = scene_add_texture(L->s, pt, NULL);
            if (mat.albedo_tex < 0) return prm_fail(&L->P, jpath, "out of memory");
        }
    } else if (fallback) {
        /* procedural two-colour materials: the mean of their colours, tinted by RGB */
        const char *pairs[2][2] = {{"RGB1", "RGB2"}, {"LIGHT_RGB", "DARK_RGB"}};
        for (int i = 0; i < 2; ++i) {
            vec3 a, b;
            const cJSON *va = json_get(m, pairs[i][0]), *vb = json_get(m, pairs[i][1]);
            if (va && vb && cJSON_IsArray(va) && cJSON_IsArray(vb)) {
                char pa[PRM_WHERE], pb[PRM_WHERE];
                prm_jkey(pa, jpath, pairs[i][0]);
                prm_jkey(pb, jpath, pairs[i][1]);
                if (json_vec3(L, va, pa, 0.0, 0, 1.0, &a) || json_vec3(L, vb, pb, 0.0, 0, 1.0, &b)) return -1;
                mat.albedo = vmul(mat.albedo, vscale(vadd(a, b), 0.5f));
                break;
            }
        }
    }
    if (tex) {
        prm_jkey(p, jpath, "TEXTURE");
        if (json_texture(L, tex, p, &mat.albedo_tex)) return -1;
    }
    /* NORMAL_MAP (tangent space, glTF's convention) or BUMP_MAP (a height map): one of them */
    cJSON *nmap = cJSON_GetObjectItemCaseSensitive(m, "NORMAL_MAP"),
          *bmap = cJSON_GetObjectItemCaseSensitive(m, "BUMP_MAP");
    static const char *const scale_of[2][2] = {{"NORMAL_SCALE", "NORMAL_MAP"}, {"BUMP_SCALE", "BUMP_MAP"}};
    for (int i = 0; i < 2; ++i)
        if (json_get(m, scale_of[i][0]) && !json_get(m, scale_of[i][1])) {
            prm_jkey(p, jpath, scale_of[i][0]);
            return prm_fail(&L->P, p, "%s without %s", scale_of[i][0], scale_of[i][1]);
        }
    if (nmap && bmap) {
        prm_jkey(p, jpath, "BUMP_MAP");
        return prm_fail(&L->P, p, "give either NORMAL_MAP or BUMP_MAP, not both");
    }
    if (nmap || bmap) {
        if (reads & JM_EMITS) {
            prm_jkey(p, jpath, nmap ? "NORMAL_MAP" : "BUMP_MAP");
            return prm_fail(&L->P, p, "Emitting materials cannot have a %s", nmap ? "NORMAL_MAP" : "BUMP_MAP");
        }
        double scale = 1.0;
        if (json_opt_number(L, m, jpath, nmap ? "NORMAL_SCALE" : "BUMP_SCALE", -1e6, 0, 1e6, &scale)) return -1;
        int ti = -1;
        prm_jkey(p, jpath, nmap ? "NORMAL_MAP" : "BUMP_MAP");
        if (texture_as(L, nmap ? nmap : bmap, p, 1, &ti)) return -1;
        mat.normal_tex = ti;
        mat.normal_scale = (float)scale;
        mat.maps |= nmap ? MAP_NORMAL : MAP_BUMP;
    }
    /* a cut-out: where OPACITY times the map's R is below ALPHA_CUTOFF there is no surface */
    cJSON *omap = cJSON_GetObjectItemCaseSensitive(m, "OPACITY_MAP");
    if (!omap && (json_get(m, "OPACITY") || json_get(m, "ALPHA_CUTOFF"))) {
        prm_jkey(p, jpath, json_get(m, "OPACITY") ? "OPACITY" : "ALPHA_CUTOFF");
        return prm_fail(&L->P, p, "%s without OPACITY_MAP", json_get(m, "OPACITY") ? "OPACITY" : "ALPHA_CUTOFF");
    }
    if (omap) {
        double op = 1.0, cut = 0.5;
        if (json_opt_number(L, m, jpath, "OPACITY", 0.0, 0, 1.0, &op) ||
            json_opt_number(L, m, jpath, "ALPHA_CUTOFF", 0.0, 1, 1.0, &cut))
            return -1;
        int ti = -1;
        prm_jkey(p, jpath, "OPACITY_MAP");
        if (texture_as(L, omap, p, 1, &ti)) return -1;
        mat.alpha_tex = ti;
        mat.opacity = (float)op;
        mat.alpha_cutoff = (float)cut;
        mat.maps |= MAP_OPACITY;
    }
    if (scene_add_material(L->s, name, mat) < 0) {
        if (scene_find_material(L->s, name) >= 0) return prm_fail(&L->P, jpath, "duplicate material name");
        return prm_fail(&L->P, jpath, "out of memory");
    }
    return 0;
}

int json_materials(loader *L, cJSON *ms) {
    if (!cJSON_IsObject(ms))
        return prm_fail(&L->P, "Materials", "expected an object (name -> material), got %s", json_type(ms));
    for (cJSON *m = ms->child; m; m = m->next) {
        const char *name = m->string ? m->string : "";
        char p[PRM_WHERE];
        prm_jkey(p, "Materials", name);
        if (parse_material(L, name, m, p)) return -1;
    }
    return 0;
}
