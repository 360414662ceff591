/* JSON scene loader: the CIS 5650 Project 3 format plus caustic's extensions (the full key
 * reference is docs/scene-format.md). Every problem is reported as one line,
 * "SOURCE: JSON.PATH: problem" (or "SOURCE:LINE:COL: ..." for syntax errors), and a failed
 * load frees everything it built: callers get NULL, never half a scene. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "util/array.h"
#include "image/image.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Limits that turn absurd input into clear errors instead of overflow or huge allocations. */
#define MAX_RES_SIDE 16384
#define MAX_RES_PIXELS (1L << 26)
#define MAX_COORD 1e7        /* |TRANS|, |EYE|, quad corners: beyond this float precision is gone */
#define MAX_SCALE 1e7
#define MAX_ANGLE 1e6
#define MAX_RADIANCE 1e7
#define MAX_SPP (1 << 30)
#define MAX_DEPTH 1024
#define MAX_SCENE_FILE (256L << 20)
#define SENSOR_HEIGHT_MM 36.0 /* FOCAL_LENGTH -> field of view convention (docs) */
#define MM_PER_UNIT 1000.0    /* FSTOP/FOCAL_LENGTH: one scene unit is one metre */

#define JPATH 256             /* JSON paths longer than this are truncated in messages */

/* A mesh file already loaded by this scene: later objects with the same FILE and MATERIAL are
 * instances of it (its vertices are transformed again, the file is not re-read). */
typedef struct loaded_mesh {
    char *path;
    int material;
    size_t v0, nv, t0, nt;
    xform placed;
} loaded_mesh;

typedef struct loader {
    scene *s;
    loaded_mesh *meshes;
    size_t nmeshes;
    const char *src;      /* file name (or built-in name) for messages */
    const char *base_dir; /* relative FILE keys resolve against this; NULL = current dir */
    char *err;
    size_t errlen;
} loader;

static int fail(loader *L, const char *jpath, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->err && L->errlen) {
        if (jpath && *jpath) snprintf(L->err, L->errlen, "%s: %s: %s", L->src, jpath, msg);
        else snprintf(L->err, L->errlen, "%s: %s", L->src, msg);
        /* names and paths come from the file: keep the message one printable line */
        text_one_line(L->err);
    }
    return -1;
}

/* ---- JSON paths ----------------------------------------------------------------------------- */
static int is_ident(const char *k) {
    if (!*k) return 0;
    for (; *k; ++k)
        if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-') return 0;
    return 1;
}

/* parent.key, or parent["odd key"] when the key would not read as one path element. */
static void jkey(char *out, const char *parent, const char *key) {
    if (is_ident(key)) {
        snprintf(out, JPATH, "%.180s%s%.64s", parent, *parent ? "." : "", key);
        return;
    }
    char q[72];
    size_t j = 0;
    for (const char *k = key; *k && j < 64; ++k) {
        unsigned char c = (unsigned char)*k;
        q[j++] = (c < 32 || c == 127 || c == '"' || c == '\\') ? '?' : (char)c;
    }
    q[j] = '\0';
    snprintf(out, JPATH, "%.180s[\"%.64s%s\"]", parent, q, key[j] ? "..." : "");
}
static void jindex(char *out, const char *parent, size_t i) { snprintf(out, JPATH, "%.180s[%zu]", parent, i); }

static const char *jtype(const cJSON *v) {
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

/* ---- key checking with suggestions ------------------------------------------------------------ */
static int ci_equal(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return 0;
    return *a == *b;
}

/* Case-insensitive edit distance (insert/delete/substitute/transpose), short strings only. */
static int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40) return 99;
    int d[41][41];
    for (size_t i = 0; i <= n; ++i) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; ++j) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
            int cost = toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

/* The closest candidate within a typo's reach (one edit for short words, two otherwise), or NULL. */
static const char *suggest(const char *word, const char *const *cands) {
    const char *best = NULL;
    int limit = strlen(word) <= 3 ? 1 : 2, bestd = limit + 1;
    for (int i = 0; cands[i]; ++i) {
        if (ci_equal(word, cands[i])) return cands[i];
        int dd = edit_distance(word, cands[i]);
        if (dd < bestd) {
            best = cands[i];
            bestd = dd;
        }
    }
    return best;
}

static void join_names(char *out, size_t n, const char *const *names) {
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; names[i] && used + 1 < n; ++i) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* Rejects keys outside `allowed` (naming the closest one) and repeated keys. Linear in the number
 * of keys: duplicates are tracked per allowed slot, so hostile input cannot make this quadratic. */
static int check_keys(loader *L, const cJSON *obj, const char *jpath, const char *const *allowed) {
    unsigned seen = 0;
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        char p[JPATH];
        jkey(p, jpath, k);
        int slot = -1;
        for (int i = 0; allowed[i]; ++i)
            if (strcmp(allowed[i], k) == 0) slot = i;
        if (slot < 0) {
            const char *sug = suggest(k, allowed);
            if (sug) return fail(L, p, "unknown key (did you mean \"%s\"?)", sug);
            char list[512];
            join_names(list, sizeof list, allowed);
            return fail(L, p, "unknown key (expected one of: %s)", list);
        }
        if (seen & (1u << slot)) return fail(L, p, "duplicate key");
        seen |= 1u << slot;
    }
    return 0;
}

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* ---- typed values ---------------------------------------------------------------------------- */
/* A finite number with lo < x (lo_open) or lo <= x, and x <= hi. */
static int read_range(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, double *out) {
    if (!cJSON_IsNumber(v)) return fail(L, p, "expected a number, got %s", jtype(v));
    double x = v->valuedouble;
    if (!isfinite(x)) return fail(L, p, "number is not finite");
    if (lo_open ? !(x > lo) : !(x >= lo)) return fail(L, p, "%g is out of range: must be %s %g", x, lo_open ? ">" : ">=", lo);
    if (!(x <= hi)) return fail(L, p, "%g is out of range: must be <= %g", x, hi);
    *out = x;
    return 0;
}

static int read_int(loader *L, const cJSON *v, const char *p, long lo, long hi, long *out) {
    if (!cJSON_IsNumber(v)) return fail(L, p, "expected an integer, got %s", jtype(v));
    double x = v->valuedouble;
    if (!isfinite(x) || x != floor(x)) return fail(L, p, "expected an integer, got %g", x);
    if (x < (double)lo || x > (double)hi) return fail(L, p, "%g is out of range: must be between %ld and %ld", x, lo, hi);
    *out = (long)x;
    return 0;
}

/* Fixed-length numeric array, every element range-checked (errors name the element). */
static int read_array(loader *L, const cJSON *v, const char *p, int n, double lo, int lo_open, double hi, double *out) {
    if (!cJSON_IsArray(v)) return fail(L, p, "expected an array of %d numbers, got %s", n, jtype(v));
    int count = 0;
    for (const cJSON *e = v->child; e; e = e->next) {
        if (count >= n) return fail(L, p, "expected %d numbers, got more", n);
        char pe[JPATH];
        jindex(pe, p, (size_t)count);
        if (read_range(L, e, pe, lo, lo_open, hi, &out[count])) return -1;
        ++count;
    }
    if (count != n) return fail(L, p, "expected %d numbers, got %d", n, count);
    return 0;
}

static int read_vec3(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, vec3 *out) {
    double a[3];
    if (read_array(L, v, p, 3, lo, lo_open, hi, a)) return -1;
    *out = v3((float)a[0], (float)a[1], (float)a[2]);
    return 0;
}

/* Optional vec3 member: leaves *out (the default) alone when absent. */
static int opt_vec3(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open,
                    double hi, vec3 *out) {
    const cJSON *v = get(obj, key);
    if (!v) return 0;
    char p[JPATH];
    jkey(p, jpath, key);
    return read_vec3(L, v, p, lo, lo_open, hi, out);
}

static int opt_number(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open,
                      double hi, double *out) {
    const cJSON *v = get(obj, key);
    if (!v) return 0;
    char p[JPATH];
    jkey(p, jpath, key);
    return read_range(L, v, p, lo, lo_open, hi, out);
}

static int read_string(loader *L, const cJSON *v, const char *p, const char **out) {
    if (!cJSON_IsString(v) || !v->valuestring) return fail(L, p, "expected a string, got %s", jtype(v));
    *out = v->valuestring;
    return 0;
}

static int missing(loader *L, const char *jpath, const char *key) {
    return fail(L, jpath, "missing required key \"%s\"", key);
}

/* Picks `word` from `names` (case-insensitive); -1 with a "did you mean" error otherwise. */
static int read_enum(loader *L, const cJSON *v, const char *p, const char *what, const char *const *names) {
    const char *w = "";
    if (read_string(L, v, p, &w)) return -1;
    for (int i = 0; names[i]; ++i)
        if (ci_equal(w, names[i])) return i;
    char list[512];
    join_names(list, sizeof list, names);
    const char *sug = suggest(w, names);
    if (sug) return fail(L, p, "unknown %s \"%.64s\" (did you mean \"%s\"?)", what, w, sug);
    return fail(L, p, "unknown %s \"%.64s\" (expected one of: %s)", what, w, list);
}

/* FILE keys are relative to the scene file's directory. Caller frees. */
static char *resolve_path(const loader *L, const char *file) {
    size_t nf = strlen(file);
    int rel = file[0] != '/' && L->base_dir && L->base_dir[0];
    size_t nb = rel ? strlen(L->base_dir) : 0;
    char *out = malloc(nb + nf + 2);
    if (!out) return NULL;
    if (rel) {
        memcpy(out, L->base_dir, nb);
        out[nb++] = '/';
    }
    memcpy(out + nb, file, nf + 1);
    return out;
}

static int ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && ci_equal(s + n - m, suffix);
}

/* ---- textures -------------------------------------------------------------------------------- */
/* Loads the image named by the string `f` (at JSON path `p`, relative to the scene file) as an
 * image texture: linear RGB texels (image_load decodes sRGB PNGs). */
static int load_image_texture(loader *L, const cJSON *f, const char *p, int *out_index) {
    const char *file = "";
    if (read_string(L, f, p, &file)) return -1;
    char *full = resolve_path(L, file);
    if (!full) return fail(L, p, "out of memory");
    struct stat st;
    if (stat(full, &st) != 0) {
        int e = errno;
        fail(L, p, "%s: %s", full, strerror(e));
        free(full);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        fail(L, p, "%s: not a regular file", full);
        free(full);
        return -1;
    }
    image img;
    char ierr[512];
    if (image_load(&img, full, ierr, sizeof ierr)) {
        free(full);
        return fail(L, p, "%s", ierr);
    }
    free(full);
    int idx = scene_add_image_texture(L->s, img.width, img.height, img.rgb);
    image_free(&img);
    if (idx == -2) return fail(L, p, "too many texels in the scene");
    if (idx < 0) return fail(L, p, "out of memory");
    *out_index = idx;
    return 0;
}

static int parse_texture(loader *L, const cJSON *t, const char *jpath, int *out_index) {
    static const char *const keys[] = {"TYPE", "RGB1", "RGB2", "SCALE", "SPACE", "FILE", NULL};
    static const char *const types[] = {"checker", "image", NULL};
    static const char *const spaces[] = {"world", "uv", NULL};
    char p[JPATH];
    if (!cJSON_IsObject(t)) return fail(L, jpath, "expected an object, got %s", jtype(t));
    if (check_keys(L, t, jpath, keys)) return -1;
    const cJSON *ty = get(t, "TYPE");
    if (!ty) return missing(L, jpath, "TYPE");
    jkey(p, jpath, "TYPE");
    int type = read_enum(L, ty, p, "texture TYPE", types);
    if (type < 0) return -1;

    texture tex;
    memset(&tex, 0, sizeof tex);
    if (type == 0) {
        if (get(t, "FILE")) {
            jkey(p, jpath, "FILE");
            return fail(L, p, "FILE is only used by image textures");
        }
        tex.kind = TEX_CHECKER;
        const char *req[] = {"RGB1", "RGB2"};
        vec3 *dst[] = {&tex.a, &tex.b};
        for (int i = 0; i < 2; ++i) {
            const cJSON *c = get(t, req[i]);
            if (!c) return missing(L, jpath, req[i]);
            jkey(p, jpath, req[i]);
            if (read_vec3(L, c, p, 0.0, 0, 1.0, dst[i])) return -1;
        }
        double scale = 1.0;
        if (opt_number(L, t, jpath, "SCALE", 0.0, 1, 1e6, &scale)) return -1;
        tex.scale = (float)scale;
        const cJSON *sp = get(t, "SPACE");
        if (sp) {
            jkey(p, jpath, "SPACE");
            int space = read_enum(L, sp, p, "texture SPACE", spaces);
            if (space < 0) return -1;
            tex.uv_space = space;
        }
        int idx = scene_add_texture(L->s, tex, NULL);
        if (idx < 0) return fail(L, jpath, "out of memory");
        *out_index = idx;
        return 0;
    }

    /* image */
    static const char *const checker_only[] = {"RGB1", "RGB2", "SCALE", "SPACE"};
    for (int i = 0; i < 4; ++i) {
        if (get(t, checker_only[i])) {
            jkey(p, jpath, checker_only[i]);
            return fail(L, p, "%s is only used by checker textures", checker_only[i]);
        }
    }
    const cJSON *f = get(t, "FILE");
    if (!f) return missing(L, jpath, "FILE");
    jkey(p, jpath, "FILE");
    return load_image_texture(L, f, p, out_index);
}

/* ---- materials ------------------------------------------------------------------------------- */
enum {
    MT_EMITTING, MT_DIFFUSE, MT_SPECULAR, MT_REFRACTIVE, MT_CONDUCTOR, MT_METAL, MT_DIELECTRIC, MT_GLASS,
    MT_MIRROR, MT_PHONG, MT_PBR, MT_ROUGH_GLASS
};
static const char *const material_types[] = {"Emitting", "Diffuse", "Specular", "Refractive", "Conductor",
                                             "Metal", "Dielectric", "Glass", "Mirror", "Phong", "PBR",
                                             "RoughGlass", NULL};

static int parse_material(loader *L, const char *name, const cJSON *m, const char *jpath) {
    static const char *const keys[] = {"TYPE", "RGB", "EMITTANCE", "ROUGHNESS", "IOR", "TEXTURE",
                                       "SPECRGB", "EXPONENT", "METALLIC", NULL};
    char p[JPATH];
    if (!cJSON_IsObject(m)) return fail(L, jpath, "expected an object, got %s", jtype(m));
    if (check_keys(L, m, jpath, keys)) return -1;
    const cJSON *ty = get(m, "TYPE");
    if (!ty) return missing(L, jpath, "TYPE");
    jkey(p, jpath, "TYPE");
    int type = read_enum(L, ty, p, "material TYPE", material_types);
    if (type < 0) return -1;

    material mat;
    memset(&mat, 0, sizeof mat);
    mat.albedo_tex = -1;
    mat.ior = 1.5f;

    const cJSON *tex = get(m, "TEXTURE");
    if (tex && type == MT_EMITTING) {
        jkey(p, jpath, "TEXTURE");
        return fail(L, p, "Emitting materials cannot have a TEXTURE");
    }
    /* RGB is radiance colour for emitters (any size), reflectance otherwise: above 1 would create
     * energy. With a TEXTURE it multiplies the texture and defaults to white. */
    vec3 rgb = v3s(1.0f);
    const cJSON *c = get(m, "RGB");
    if (c) {
        jkey(p, jpath, "RGB");
        if (read_vec3(L, c, p, 0.0, 0, type == MT_EMITTING ? MAX_RADIANCE : 1.0, &rgb)) return -1;
    } else if (!tex) {
        return missing(L, jpath, "RGB");
    }
    double emittance = type == MT_EMITTING ? 1.0 : 0.0;
    if (opt_number(L, m, jpath, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &emittance)) return -1;
    double roughness = 0.0, ior = 1.5, metallic = 0.0;
    if (opt_number(L, m, jpath, "ROUGHNESS", 0.0, 0, 1.0, &roughness)) return -1;
    if (get(m, "METALLIC") && type != MT_PBR) {
        jkey(p, jpath, "METALLIC");
        return fail(L, p, "only PBR materials have METALLIC");
    }
    if (opt_number(L, m, jpath, "METALLIC", 0.0, 0, 1.0, &metallic)) return -1;
    if (opt_number(L, m, jpath, "IOR", 0.0, 1, 10.0, &ior)) return -1;
    /* Phong: RGB is the diffuse part, SPECRGB the lobe's reflectance; together at most 1 */
    vec3 spec = v3s(0.0f);
    double exponent = 1.0;
    if (type != MT_PHONG && (get(m, "SPECRGB") || get(m, "EXPONENT"))) {
        jkey(p, jpath, get(m, "SPECRGB") ? "SPECRGB" : "EXPONENT");
        return fail(L, p, "only Phong materials have SPECRGB and EXPONENT");
    }
    if (type == MT_PHONG) {
        if (!get(m, "SPECRGB")) return missing(L, jpath, "SPECRGB");
        if (!get(m, "EXPONENT")) return missing(L, jpath, "EXPONENT");
        if (opt_vec3(L, m, jpath, "SPECRGB", 0.0, 0, 1.0, &spec)) return -1;
        if (opt_number(L, m, jpath, "EXPONENT", 0.0, 0, 1e6, &exponent)) return -1;
        if (vmaxc(vadd(rgb, spec)) > 1.0f) {
            jkey(p, jpath, "SPECRGB");
            return fail(L, p, "RGB + SPECRGB exceeds 1 in some channel (the material would create energy)");
        }
    }

    mat.albedo = rgb;
    mat.emission = vscale(rgb, (float)emittance);
    switch (type) {
    case MT_EMITTING: mat.kind = MAT_BLACK; break;
    case MT_DIFFUSE: mat.kind = MAT_DIFFUSE; break;
    /* The reference loader reads ROUGHNESS for Specular but never uses it, and the course
     * renders Specular as an ideal mirror (the stock cornell.json has ROUGHNESS 1.0 on its
     * mirror sphere): keep that. Rough metal is the Conductor/Metal extension. */
    case MT_SPECULAR:
    case MT_MIRROR: mat.kind = MAT_MIRROR; break;
    case MT_REFRACTIVE:
    case MT_DIELECTRIC:
    case MT_GLASS: mat.kind = MAT_DIELECTRIC; mat.ior = (float)ior; break;
    case MT_PHONG: mat.kind = MAT_PHONG; mat.specular = spec; mat.exponent = (float)exponent; break;
    /* glTF 2.0 metallic-roughness: RGB base colour, METALLIC, ROUGHNESS (perceptual, alpha = r^2) */
    case MT_PBR: mat.kind = MAT_PBR; mat.metallic = (float)metallic; mat.alpha = (float)(roughness * roughness); break;
    /* frosted glass: GGX reflection and transmission, RGB tints both */
    case MT_ROUGH_GLASS: mat.kind = MAT_ROUGH_GLASS; mat.ior = (float)ior; mat.alpha = (float)(roughness * roughness); break;
    default: /* Conductor, Metal */
        mat.kind = MAT_CONDUCTOR;
        mat.alpha = (float)(roughness * roughness);
        break;
    }
    if (tex) {
        jkey(p, jpath, "TEXTURE");
        if (parse_texture(L, tex, p, &mat.albedo_tex)) return -1;
    }
    if (scene_add_material(L->s, name, mat) < 0) {
        if (scene_find_material(L->s, name) >= 0) return fail(L, jpath, "duplicate material name");
        return fail(L, jpath, "out of memory");
    }
    return 0;
}

static int parse_materials(loader *L, const cJSON *ms) {
    if (!cJSON_IsObject(ms)) return fail(L, "Materials", "expected an object (name -> material), got %s", jtype(ms));
    for (const cJSON *m = ms->child; m; m = m->next) {
        const char *name = m->string ? m->string : "";
        char p[JPATH];
        jkey(p, "Materials", name);
        if (parse_material(L, name, m, p)) return -1;
    }
    return 0;
}

/* ---- camera ---------------------------------------------------------------------------------- */
static int parse_camera(loader *L, const cJSON *cam) {
    static const char *const keys[] = {"RES", "FOVY", "ITERATIONS", "DEPTH", "FILE", "EYE", "LOOKAT", "UP",
                                       "APERTURE", "FSTOP", "FOCAL_LENGTH", "FOCUS_DISTANCE", NULL};
    const char *jp = "Camera";
    char p[JPATH];
    if (!cJSON_IsObject(cam)) return fail(L, jp, "expected an object, got %s", jtype(cam));
    if (check_keys(L, cam, jp, keys)) return -1;
    camera_desc *cd = &L->s->camera;

    const cJSON *res = get(cam, "RES");
    if (!res) return missing(L, jp, "RES");
    jkey(p, jp, "RES");
    if (!cJSON_IsArray(res)) return fail(L, p, "expected an array of 2 integers, got %s", jtype(res));
    long wh[2];
    int n = 0;
    for (const cJSON *e = res->child; e; e = e->next, ++n) {
        if (n >= 2) return fail(L, p, "expected 2 integers [width, height], got more");
        char pe[JPATH];
        jindex(pe, p, (size_t)n);
        if (read_int(L, e, pe, 1, MAX_RES_SIDE, &wh[n])) return -1;
    }
    if (n != 2) return fail(L, p, "expected 2 integers [width, height], got %d", n);
    if (wh[0] * wh[1] > MAX_RES_PIXELS)
        return fail(L, p, "%ldx%ld is too many pixels (at most %ld)", wh[0], wh[1], (long)MAX_RES_PIXELS);
    cd->width = (int)wh[0];
    cd->height = (int)wh[1];

    /* The reference uses tan(FOVY) as the half-height of the image plane at distance 1, so
     * FOVY is effectively the half angle: the full vertical field of view is 2*FOVY. */
    const cJSON *fovy = get(cam, "FOVY"), *focal = get(cam, "FOCAL_LENGTH");
    double focal_mm = 0.0;
    if (fovy && focal) {
        jkey(p, jp, "FOCAL_LENGTH");
        return fail(L, p, "FOVY and FOCAL_LENGTH both set the field of view: give only one");
    }
    if (fovy) {
        double f;
        jkey(p, jp, "FOVY");
        if (read_range(L, fovy, p, 0.0, 1, 89.5, &f)) return -1;
        cd->fovy_deg = (float)(2.0 * f);
    } else if (focal) {
        jkey(p, jp, "FOCAL_LENGTH");
        if (read_range(L, focal, p, 0.0, 1, 1e5, &focal_mm)) return -1;
        cd->fovy_deg = (float)(2.0 * atan(0.5 * SENSOR_HEIGHT_MM / focal_mm) * 180.0 / 3.14159265358979323846);
    } else {
        return missing(L, jp, "FOVY");
    }

    long iv;
    const cJSON *it = get(cam, "ITERATIONS");
    if (it) {
        jkey(p, jp, "ITERATIONS");
        if (read_int(L, it, p, 1, MAX_SPP, &iv)) return -1;
        L->s->spp = (int)iv;
    }
    const cJSON *dp = get(cam, "DEPTH");
    if (dp) {
        jkey(p, jp, "DEPTH");
        if (read_int(L, dp, p, 1, MAX_DEPTH, &iv)) return -1;
        L->s->max_depth = (int)iv;
    }
    const cJSON *file = get(cam, "FILE");
    if (file) {
        const char *name = "";
        jkey(p, jp, "FILE");
        if (read_string(L, file, p, &name)) return -1;
        size_t len = strlen(name);
        char *copy = malloc(len + 1);
        if (!copy) return fail(L, p, "out of memory");
        memcpy(copy, name, len + 1);
        free(L->s->output_name);
        L->s->output_name = copy;
    }

    const char *req[] = {"EYE", "LOOKAT"};
    vec3 *dst[] = {&cd->eye, &cd->lookat};
    for (int i = 0; i < 2; ++i) {
        const cJSON *v = get(cam, req[i]);
        if (!v) return missing(L, jp, req[i]);
        jkey(p, jp, req[i]);
        if (read_vec3(L, v, p, -MAX_COORD, 0, MAX_COORD, dst[i])) return -1;
    }
    cd->up = v3(0.0f, 1.0f, 0.0f);
    if (opt_vec3(L, cam, jp, "UP", -MAX_COORD, 0, MAX_COORD, &cd->up)) return -1;
    vec3 fwd = vsub(cd->lookat, cd->eye);
    if (!(vlen(fwd) > 0.0f)) {
        jkey(p, jp, "LOOKAT");
        return fail(L, p, "LOOKAT is the same point as EYE");
    }
    if (!(vlen(cd->up) > 0.0f) || !(vlen(vcross(vnorm(fwd), vnorm(cd->up))) > 1e-6f)) {
        jkey(p, jp, "UP");
        return fail(L, p, "UP is zero or parallel to the viewing direction");
    }

    /* Thin lens: APERTURE is the lens radius in scene units, or FSTOP with FOCAL_LENGTH gives
     * radius = focal / (2 * fstop) millimetres, with one scene unit = 1 m. */
    const cJSON *ap = get(cam, "APERTURE"), *fs = get(cam, "FSTOP");
    if (ap && fs) {
        jkey(p, jp, "FSTOP");
        return fail(L, p, "APERTURE and FSTOP both set the lens size: give only one");
    }
    double radius = 0.0;
    if (ap) {
        jkey(p, jp, "APERTURE");
        if (read_range(L, ap, p, 0.0, 0, 1e6, &radius)) return -1;
    } else if (fs) {
        double fstop;
        jkey(p, jp, "FSTOP");
        if (!focal) return fail(L, p, "FSTOP needs FOCAL_LENGTH (millimetres)");
        if (read_range(L, fs, p, 0.0, 1, 1e4, &fstop)) return -1;
        radius = focal_mm / (2.0 * fstop) / MM_PER_UNIT;
    }
    cd->aperture_radius = (float)radius;
    double focus = 0.0;
    if (opt_number(L, cam, jp, "FOCUS_DISTANCE", 0.0, 1, 1e9, &focus)) return -1;
    cd->focus_distance = (float)focus;
    return 0;
}

/* ---- environment ----------------------------------------------------------------------------- */
/* A constant colour (RGB x EMITTANCE), or a lat-long radiance map (FILE: .exr, .hdr, .pfm, .png)
 * scaled by EMITTANCE and tinted by RGB (default white). */
static int parse_environment(loader *L, const cJSON *env) {
    static const char *const keys[] = {"RGB", "EMITTANCE", "FILE", NULL};
    const char *jp = "Environment";
    if (!cJSON_IsObject(env)) return fail(L, jp, "expected an object, got %s", jtype(env));
    if (check_keys(L, env, jp, keys)) return -1;
    const cJSON *f = get(env, "FILE");
    if (!f && !get(env, "RGB")) return missing(L, jp, "RGB");
    vec3 rgb = v3s(f ? 1.0f : 0.0f);
    double e = 1.0;
    if (opt_vec3(L, env, jp, "RGB", 0.0, 0, MAX_RADIANCE, &rgb)) return -1;
    if (opt_number(L, env, jp, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &e)) return -1;
    L->s->env_radiance = vscale(rgb, (float)e);
    if (f) {
        char p[JPATH];
        jkey(p, jp, "FILE");
        if (load_image_texture(L, f, p, &L->s->env_tex)) return -1;
    }
    return 0;
}

/* ---- lights without geometry ----------------------------------------------------------------- */
/* {"TYPE":"point", "POSITION":[x,y,z], "RGB":[..], "EMITTANCE":e}: radiant intensity RGB*e (W/sr);
 * {"TYPE":"directional", "DIRECTION":[x,y,z], "RGB":[..], "EMITTANCE":e}: light travelling along
 * DIRECTION with irradiance RGB*e on a plane facing it. */
static int parse_lights(loader *L, const cJSON *ls) {
    static const char *const keys[] = {"TYPE", "POSITION", "DIRECTION", "RGB", "EMITTANCE", NULL};
    static const char *const types[] = {"point", "directional", NULL};
    if (!cJSON_IsArray(ls)) return fail(L, "Lights", "expected an array, got %s", jtype(ls));
    size_t i = 0;
    for (const cJSON *l = ls->child; l; l = l->next, ++i) {
        char jp[JPATH], p[JPATH];
        jindex(jp, "Lights", i);
        if (!cJSON_IsObject(l)) return fail(L, jp, "expected an object, got %s", jtype(l));
        if (check_keys(L, l, jp, keys)) return -1;
        const cJSON *ty = get(l, "TYPE");
        if (!ty) return missing(L, jp, "TYPE");
        jkey(p, jp, "TYPE");
        int type = read_enum(L, ty, p, "light TYPE", types);
        if (type < 0) return -1;
        const char *where = type == 0 ? "POSITION" : "DIRECTION";
        const char *other = type == 0 ? "DIRECTION" : "POSITION";
        if (get(l, other)) {
            jkey(p, jp, other);
            return fail(L, p, "%s lights have no %s", type == 0 ? "point" : "directional", other);
        }
        if (!get(l, where)) return missing(L, jp, where);
        if (!get(l, "RGB")) return missing(L, jp, "RGB");
        vec3 v = v3s(0.0f), rgb = v3s(0.0f);
        double e = 1.0;
        if (opt_vec3(L, l, jp, where, -1e30, 0, 1e30, &v)) return -1;
        if (opt_vec3(L, l, jp, "RGB", 0.0, 0, MAX_RADIANCE, &rgb)) return -1;
        if (opt_number(L, l, jp, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &e)) return -1;
        int rc = type == 0 ? scene_add_point_light(L->s, v, vscale(rgb, (float)e))
                           : scene_add_directional_light(L->s, v, vscale(rgb, (float)e));
        if (rc) {
            jkey(p, jp, where);
            return fail(L, p, type == 0 ? "out of memory" : "DIRECTION must not be the zero vector");
        }
    }
    return 0;
}

/* ---- objects --------------------------------------------------------------------------------- */
enum { OT_CUBE, OT_SPHERE, OT_MESH, OT_QUAD, OT_PLANE };
static const char *const object_types[] = {"cube", "sphere", "mesh", "quad", "plane", NULL};

static int parse_object(loader *L, const cJSON *o, const char *jp) {
    static const char *const keys[] = {"TYPE", "MATERIAL", "TRANS", "ROTAT", "SCALE", "FILE", "ORIGIN", "U", "V",
                                       NULL};
    char p[JPATH];
    if (!cJSON_IsObject(o)) return fail(L, jp, "expected an object, got %s", jtype(o));
    if (check_keys(L, o, jp, keys)) return -1;
    const cJSON *ty = get(o, "TYPE");
    if (!ty) return missing(L, jp, "TYPE");
    jkey(p, jp, "TYPE");
    int type = read_enum(L, ty, p, "object TYPE", object_types);
    if (type < 0) return -1;

    /* MATERIAL is optional for meshes only: without it an OBJ keeps its MTL materials */
    const cJSON *mv = get(o, "MATERIAL");
    if (!mv && type != OT_MESH) return missing(L, jp, "MATERIAL");
    jkey(p, jp, "MATERIAL");
    const char *mname = "";
    if (mv && read_string(L, mv, p, &mname)) return -1;
    int mat = mv ? scene_find_material(L->s, mname) : -1;
    if (mv && mat < 0) {
        const char *sug = NULL;
        if (L->s->nmaterials <= 4096) { /* suggestions cost O(materials); skip for huge scenes */
            int best = 3;
            for (size_t i = 0; i < L->s->nmaterials; ++i) {
                int d = edit_distance(mname, L->s->material_names[i]);
                if (d < best) { best = d; sug = L->s->material_names[i]; }
            }
        }
        if (sug) return fail(L, p, "unknown material \"%.64s\" (did you mean \"%.64s\"?)", mname, sug);
        return fail(L, p, "unknown material \"%.64s\" (not defined in Materials)", mname);
    }

    int is_quad = type == OT_QUAD || type == OT_PLANE;
    const char *quad_keys[] = {"ORIGIN", "U", "V"};
    int nquad = 0;
    for (int i = 0; i < 3; ++i) nquad += get(o, quad_keys[i]) != NULL;
    if (nquad && !is_quad) {
        for (int i = 0; i < 3; ++i)
            if (get(o, quad_keys[i])) { jkey(p, jp, quad_keys[i]); break; }
        return fail(L, p, "ORIGIN/U/V are only used by quad and plane objects");
    }
    if (get(o, "FILE") && type != OT_MESH) {
        jkey(p, jp, "FILE");
        return fail(L, p, "FILE is only used by mesh objects");
    }

    if (is_quad && nquad) {
        /* explicit parallelogram: exclusive with the transform form */
        const char *trs[] = {"TRANS", "ROTAT", "SCALE"};
        for (int i = 0; i < 3; ++i) {
            if (get(o, trs[i])) {
                jkey(p, jp, trs[i]);
                return fail(L, p, "give either ORIGIN/U/V or TRANS/ROTAT/SCALE for a quad, not both");
            }
        }
        vec3 q[3];
        for (int i = 0; i < 3; ++i) {
            const cJSON *v = get(o, quad_keys[i]);
            if (!v) return missing(L, jp, quad_keys[i]);
            jkey(p, jp, quad_keys[i]);
            if (read_vec3(L, v, p, -MAX_COORD, 0, MAX_COORD, &q[i])) return -1;
        }
        if (!(vlen(vcross(q[1], q[2])) > 0.0f)) {
            jkey(p, jp, "V");
            return fail(L, p, "U and V are zero or parallel: the quad has no area");
        }
        if (scene_add_quad(L->s, q[0], q[1], q[2], mat)) return fail(L, jp, "could not add quad (out of memory)");
        return 0;
    }

    vec3 t = v3s(0.0f), r = v3s(0.0f), sc = v3s(1.0f);
    if (opt_vec3(L, o, jp, "TRANS", -MAX_COORD, 0, MAX_COORD, &t)) return -1;
    if (opt_vec3(L, o, jp, "ROTAT", -MAX_ANGLE, 0, MAX_ANGLE, &r)) return -1;
    if (opt_vec3(L, o, jp, "SCALE", 0.0, 1, MAX_SCALE, &sc)) return -1;
    xform m = xform_trs(t, r, sc);
    xform inv;
    if (xform_invert(&m, &inv)) {
        jkey(p, jp, "SCALE");
        return fail(L, p, "transform is singular (scale too small)");
    }

    switch (type) {
    case OT_CUBE:
        if (scene_add_cube(L->s, m, mat)) return fail(L, jp, "could not add cube (out of memory)");
        return 0;
    case OT_SPHERE:
        if (scene_add_sphere(L->s, m, mat)) return fail(L, jp, "could not add sphere (out of memory)");
        return 0;
    case OT_MESH: {
        const cJSON *f = get(o, "FILE");
        if (!f) return missing(L, jp, "FILE");
        jkey(p, jp, "FILE");
        const char *file = "";
        if (read_string(L, f, p, &file)) return -1;
        int ply = ends_with_ci(file, ".ply");
        int gltf = ends_with_ci(file, ".gltf") || ends_with_ci(file, ".glb");
        if (!ends_with_ci(file, ".obj") && !ply && !gltf)
            return fail(L, p, "\"%.64s\": unsupported mesh format (use Wavefront .obj, .ply, .gltf or .glb)", file);
        if (ply && mat < 0) return missing(L, jp, "MATERIAL"); /* PLY files carry no materials */
        char *full = resolve_path(L, file);
        if (!full) return fail(L, p, "out of memory");
        for (size_t i = 0; i < L->nmeshes; ++i) {
            loaded_mesh *lm = &L->meshes[i];
            if (lm->material != mat || strcmp(lm->path, full) != 0) continue;
            free(full);
            if (scene_instance_mesh(L->s, lm->v0, lm->nv, lm->t0, lm->nt, lm->placed, m))
                return fail(L, jp, "could not instance the mesh (out of memory)");
            return 0;
        }
        size_t v0 = L->s->nvertices, t0 = L->s->ntriangles;
        char merr[512];
        /* mat < 0: the MTL's or the glTF file's own materials */
        int rc = ply ? scene_load_ply(L->s, full, m, mat, merr, sizeof merr)
               : gltf ? scene_load_gltf(L->s, full, m, mat, 0, merr, sizeof merr)
                      : scene_load_obj(L->s, full, m, mat, merr, sizeof merr);
        if (rc) { free(full); return fail(L, p, "%s", merr); }
        loaded_mesh *grown = realloc(L->meshes, (L->nmeshes + 1) * sizeof(loaded_mesh));
        if (!grown) { free(full); return fail(L, p, "out of memory"); }
        L->meshes = grown;
        loaded_mesh *lm = &L->meshes[L->nmeshes++];
        lm->path = full;
        lm->material = mat;
        lm->v0 = v0; lm->nv = L->s->nvertices - v0;
        lm->t0 = t0; lm->nt = L->s->ntriangles - t0;
        lm->placed = m;
        return 0;
    }
    default: {
        /* unit square [-0.5,0.5]^2 in the xy plane facing +z, under M = T*R*S */
        vec3 o0 = xform_point(&m, v3(-0.5f, -0.5f, 0.0f));
        vec3 u = xform_vector(&m, v3(1.0f, 0.0f, 0.0f)), v = xform_vector(&m, v3(0.0f, 1.0f, 0.0f));
        if (scene_add_quad(L->s, o0, u, v, mat)) return fail(L, jp, "quad has no area or out of memory");
        return 0;
    }
    }
}

static int parse_objects(loader *L, const cJSON *objs) {
    if (!cJSON_IsArray(objs)) return fail(L, "Objects", "expected an array, got %s", jtype(objs));
    size_t i = 0;
    for (const cJSON *o = objs->child; o; o = o->next, ++i) {
        char p[JPATH];
        jindex(p, "Objects", i);
        if (parse_object(L, o, p)) return -1;
    }
    return 0;
}

static int parse_root(loader *L, const cJSON *root) {
    static const char *const keys[] = {"Materials", "Camera", "Objects", "Environment", "Lights", NULL};
    if (!cJSON_IsObject(root)) return fail(L, NULL, "the top level must be a JSON object, got %s", jtype(root));
    if (check_keys(L, root, "", keys)) return -1;
    const cJSON *ms = get(root, "Materials"), *cam = get(root, "Camera"), *objs = get(root, "Objects");
    const cJSON *env = get(root, "Environment");
    /* materials first: objects refer to them by name, wherever they appear in the file */
    if (ms && parse_materials(L, ms)) return -1;
    if (!cam) return fail(L, NULL, "missing required key \"Camera\"");
    if (parse_camera(L, cam)) return -1;
    if (env && parse_environment(L, env)) return -1;
    const cJSON *lights = get(root, "Lights");
    if (lights && parse_lights(L, lights)) return -1;
    if (!objs) return fail(L, NULL, "missing required key \"Objects\"");
    return parse_objects(L, objs);
}

/* ---- entry points ---------------------------------------------------------------------------- */
int scene_load_json_text(scene **out, const char *text, const char *source_name, const char *base_dir,
                         char *err, size_t errlen) {
    *out = NULL;
    if (err && errlen) err[0] = '\0';
    loader L;
    L.s = NULL;
    L.meshes = NULL;
    L.nmeshes = 0;
    L.src = source_name ? source_name : "<scene>";
    L.base_dir = base_dir;
    L.err = err;
    L.errlen = errlen;
    if (!text) return fail(&L, NULL, "no scene text");

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        /* cJSON reports a byte offset: turn it into line:column like a compiler would */
        if (!end || end < text) end = text;
        size_t line = 1, col = 1;
        for (const char *c = text; c < end && *c; ++c) {
            if (*c == '\n') { ++line; col = 1; }
            else ++col;
        }
        char near[40];
        size_t j = 0;
        for (const char *c = end; *c && j < 24; ++c)
            near[j++] = (*c == '\n' || *c == '\r' || *c == '\t') ? ' ' : (isprint((unsigned char)*c) ? *c : '?');
        near[j] = '\0';
        if (err && errlen) {
            if (j) snprintf(err, errlen, "%s:%zu:%zu: malformed JSON near \"%s\"", L.src, line, col, near);
            else snprintf(err, errlen, "%s:%zu:%zu: malformed JSON: unexpected end of input", L.src, line, col);
        }
        return -1;
    }
    L.s = scene_create();
    if (!L.s) {
        cJSON_Delete(root);
        return fail(&L, NULL, "out of memory");
    }
    int rc = parse_root(&L, root);
    cJSON_Delete(root);
    for (size_t i = 0; i < L.nmeshes; ++i) free(L.meshes[i].path);
    free(L.meshes);
    if (rc) {
        scene_destroy(L.s);
        return -1;
    }
    *out = L.s;
    return 0;
}

int scene_load_json_file(scene **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    /* stat before opening: opening a FIFO blocks, and a device never ends */
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    if (st.st_size > MAX_SCENE_FILE) {
        snprintf(err, errlen, "%s: scene file too large (%lld bytes, at most %ld)", path, (long long)st.st_size,
                 (long)MAX_SCENE_FILE);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return -1;
    }
    size_t size = (size_t)st.st_size;
    char *text = malloc(size + 1);
    if (!text) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t got = fread(text, 1, size, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || got != size) {
        free(text);
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    text[size] = '\0';
    /* cJSON would stop at a NUL and silently ignore the rest */
    const char *nul = memchr(text, '\0', size);
    if (nul) {
        size_t line = 1;
        for (const char *c = text; c < nul; ++c) line += *c == '\n';
        snprintf(err, errlen, "%s:%zu: file contains a NUL byte (not a text file?)", path, line);
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
