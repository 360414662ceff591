/* JSON scene loader: the CIS 5650 Project 3 format plus caustic's extensions (the full key
 * reference is docs/scene-format.md). Every problem is reported as one line,
 * "SOURCE: JSON.PATH: problem" (or "SOURCE:LINE:COL: ..." for syntax errors), and a failed
 * load frees everything it built: callers get NULL, never half a scene. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "scene/scene.h"
#include "util/array.h"
#include "util/file.h"
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
#define MAX_RES_SIDE     16384
#define MAX_RES_PIXELS   (1L << 26)
#define MAX_COORD        1e7 /* |TRANS|, |EYE|, quad corners: beyond this float precision is gone */
#define MAX_SCALE        1e7
#define MAX_ANGLE        1e6
#define MAX_RADIANCE     1e7
#define MAX_SPP          CAUSTIC_MAX_SPP
#define MAX_DEPTH        1024
#define MAX_SCENE_FILE   (256L << 20)
#define SENSOR_HEIGHT_MM 36.0   /* FOCAL_LENGTH -> field of view convention (docs) */
#define MM_PER_UNIT      1000.0 /* FSTOP/FOCAL_LENGTH: one scene unit is one metre */

#define JPATH 256 /* JSON paths longer than this are truncated in messages */

/* A mesh file already loaded by this scene: later objects with the same FILE and MATERIAL are
 * instances of it (its vertices are transformed again, the file is not re-read). */
typedef struct loaded_mesh {
    char *path;
    int material;
    size_t v0, nv, t0, nt;
    xform placed;
} loaded_mesh;

/* A warning waiting to be reported: one per dedup key (e.g. "Objects[].NAME"), with how many
 * more places said the same. Reported once the whole file has loaded. */
typedef struct pending_warning {
    char *key, *message;
    size_t more;
} pending_warning;

typedef struct loader {
    scene *s;
    loaded_mesh *meshes;
    size_t nmeshes;
    const char *src;      /* file name (or built-in name) for messages */
    const char *base_dir; /* relative FILE keys resolve against this; NULL = current dir */
    char *err;
    size_t errlen;
    int strict;      /* warnings are errors */
    int camera_only; /* scene_load_opts.camera_only */
    pending_warning *warnings;
    size_t nwarnings;
    const cJSON *mesh_table; /* top-level "Meshes": name -> file */
    int default_material;    /* grey diffuse for objects without a usable MATERIAL, -1 until needed */
} loader;

static int fail(loader *L, const char *jpath, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->err && L->errlen) {
        if (jpath && *jpath)
            snprintf(L->err, L->errlen, "%s: %s: %s", L->src, jpath, msg);
        else
            snprintf(L->err, L->errlen, "%s: %s", L->src, msg);
        /* names and paths come from the file: keep the message one printable line */
        text_one_line(L->err);
    }
    return -1;
}

/* One warning per `dedup` key ("Materials.*.SIGMA_A"), the first place it occurred named in
 * full; later ones are counted. */
static void note(loader *L, const char *dedup, const char *jpath, const char *msg) {
    for (size_t i = 0; i < L->nwarnings; ++i)
        if (strcmp(L->warnings[i].key, dedup) == 0) {
            L->warnings[i].more++;
            return;
        }
    char line[1100];
    if (jpath && *jpath)
        snprintf(line, sizeof line, "%s: %s: %s", L->src, jpath, msg);
    else
        snprintf(line, sizeof line, "%s: %s", L->src, msg);
    text_one_line(line);
    pending_warning *grown = realloc(L->warnings, (L->nwarnings + 1) * sizeof *grown);
    if (!grown) return; /* a warning lost to memory pressure is not worth failing the load */
    L->warnings = grown;
    pending_warning *w = &L->warnings[L->nwarnings];
    w->key = strdup(dedup);
    w->message = strdup(line);
    w->more = 0;
    if (!w->key || !w->message) {
        free(w->key);
        free(w->message);
        return;
    }
    L->nwarnings++;
}

/* A dialect mapping the user should know about: an error under --strict, otherwise a warning
 * (note). */
static int warn(loader *L, const char *dedup, const char *jpath, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->strict) return fail(L, jpath, "%s (an error with --strict)", msg);
    note(L, dedup, jpath, msg);
    return 0;
}

static void flush_warnings(loader *L, int report) {
    for (size_t i = 0; i < L->nwarnings; ++i) {
        pending_warning *w = &L->warnings[i];
        if (report && L->s) {
            if (w->more)
                scene_warn(L->s, "%s (and %zu more like it)", w->message, w->more);
            else
                scene_warn(L->s, "%s", w->message);
        }
        free(w->key);
        free(w->message);
    }
    free(L->warnings);
    L->warnings = NULL;
    L->nwarnings = 0;
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

/* ---- dialect keys ------------------------------------------------------------------------------
 * Course projects spell the same key many ways (FOCALDISTANCE, FOCAL_DISTANCE, "Focal Distance").
 * Each section has a table of caustic's keys with the other spellings that mean the same; keys are
 * matched after normalising (upper case, no '_', '-' or ' '), renamed in place to caustic's spelling,
 * and everything else that parses the section sees only those. Unknown keys are dropped with one
 * warning each (an error with --strict), so is a recognised key caustic cannot honour. */
enum { WANT_ANY = 0, WANT_STRING = 1, WANT_NONSTRING = 2 };
typedef struct keyalias {
    const char *name;    /* caustic's spelling */
    const char *aliases; /* other spellings, normalised, '|'-separated (NULL: none) */
    const char *ignored; /* non-NULL: recognised but not supported; the warning says this */
    int exact;           /* only the exact spelling `name` (FOCAL_LENGTH is not FOCALLENGTH) */
    int want;            /* the value's JSON type decides between two meanings (DIFFUSE) */
} keyalias;

static void normalise_key(const char *k, char *out, size_t n) {
    size_t j = 0;
    for (; *k && j + 1 < n; ++k)
        if (*k != '_' && *k != '-' && *k != ' ') out[j++] = (char)toupper((unsigned char)*k);
    out[j] = '\0';
}

static int in_list(const char *norm, const char *list) {
    if (!list) return 0;
    size_t n = strlen(norm);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && memcmp(p, norm, n) == 0) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

static int key_matches(const keyalias *a, const char *key, const char *norm, const cJSON *v) {
    if (a->want == WANT_STRING && !cJSON_IsString(v)) return 0;
    if (a->want == WANT_NONSTRING && cJSON_IsString(v)) return 0;
    if (strcmp(a->name, key) == 0) return 1;
    if (a->exact) return 0;
    char cn[64];
    normalise_key(a->name, cn, sizeof cn);
    return strcmp(cn, norm) == 0 || in_list(norm, a->aliases);
}

static int rename_key(cJSON *c, const char *name) {
    if (c->string && strcmp(c->string, name) == 0) return 0;
    size_t n = strlen(name);
    char *copy = cJSON_malloc(n + 1);
    if (!copy) return -1;
    memcpy(copy, name, n + 1);
    if (!(c->type & cJSON_StringIsConst)) cJSON_free(c->string);
    c->type &= ~cJSON_StringIsConst;
    c->string = copy;
    return 0;
}

/* Renames the keys of `obj` to caustic's spellings from `tab`, drops (with a warning) unknown and
 * unsupported ones, and rejects two spellings of one key. `dsec` names the section for warning
 * deduplication ("Objects[]"): the same unknown key in 70 objects is one warning. */
static int canonicalize(loader *L, cJSON *obj, const char *jpath, const char *dsec, const keyalias *tab) {
    uint64_t seen = 0;
    int ntab = 0;
    while (tab[ntab].name) ++ntab;
    for (cJSON *c = obj->child, *next; c; c = next) {
        next = c->next;
        const char *k = c->string ? c->string : "";
        char p[JPATH], norm[64], dk[160];
        jkey(p, jpath, k);
        normalise_key(k, norm, sizeof norm);
        int slot = -1;
        for (int i = 0; i < ntab && slot < 0; ++i)
            if (strcmp(tab[i].name, k) == 0 && key_matches(&tab[i], k, norm, c)) slot = i;
        for (int i = 0; i < ntab && slot < 0; ++i)
            if (key_matches(&tab[i], k, norm, c)) slot = i;
        if (slot < 0 || tab[slot].ignored) {
            snprintf(dk, sizeof dk, "%s.%.64s", dsec, norm);
            int rc;
            if (slot >= 0) {
                rc = warn(L, dk, p, "%s; ignored", tab[slot].ignored);
            } else {
                const char *names[72];
                int nn = 0;
                for (int i = 0; i < ntab && nn < 71; ++i)
                    if (!tab[i].ignored) names[nn++] = tab[i].name;
                names[nn] = NULL;
                const char *sug = suggest(k, names);
                if (sug)
                    rc = warn(L, dk, p, "unknown key, ignored (did you mean \"%s\"?)", sug);
                else
                    rc = warn(L, dk, p, "unknown key, ignored");
            }
            if (rc) return -1;
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, c));
            continue;
        }
        /* two spellings of one key: the first table entry of that name is its slot */
        int first = slot;
        for (int i = 0; i < slot; ++i)
            if (strcmp(tab[i].name, tab[slot].name) == 0) {
                first = i;
                break;
            }
        if (first < 64) {
            if (seen & (1ull << first)) {
                if (strcmp(k, tab[slot].name) == 0) return fail(L, p, "duplicate key");
                return fail(L, p, "duplicate key: \"%.64s\" is another spelling of %s", k, tab[slot].name);
            }
            seen |= 1ull << first;
        }
        if (rename_key(c, tab[slot].name)) return fail(L, p, "out of memory");
    }
    return 0;
}

/* Caustic's own extension sections (textures, Lights) have no dialects: their keys as they are. */
static int check_keys(loader *L, cJSON *obj, const char *jpath, const char *dsec, const char *const *allowed) {
    keyalias tab[24];
    int n = 0;
    for (; allowed[n] && n < 23; ++n) {
        memset(&tab[n], 0, sizeof tab[n]);
        tab[n].name = allowed[n];
        tab[n].exact = 1;
    }
    tab[n].name = NULL;
    return canonicalize(L, obj, jpath, dsec, tab);
}

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* ---- typed values ---------------------------------------------------------------------------- */
/* A finite number with lo < x (lo_open) or lo <= x, and x <= hi. */
static int read_range(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, double *out) {
    if (!cJSON_IsNumber(v)) return fail(L, p, "expected a number, got %s", jtype(v));
    double x = v->valuedouble;
    if (!isfinite(x)) return fail(L, p, "number is not finite");
    if (lo_open ? !(x > lo) : !(x >= lo))
        return fail(L, p, "%g is out of range: must be %s %g", x, lo_open ? ">" : ">=", lo);
    if (!(x <= hi)) return fail(L, p, "%g is out of range: must be <= %g", x, hi);
    *out = x;
    return 0;
}

static int read_int(loader *L, const cJSON *v, const char *p, long lo, long hi, long *out) {
    if (!cJSON_IsNumber(v)) return fail(L, p, "expected an integer, got %s", jtype(v));
    double x = v->valuedouble;
    if (!isfinite(x) || x != floor(x)) return fail(L, p, "expected an integer, got %g", x);
    if (x < (double)lo || x > (double)hi)
        return fail(L, p, "%g is out of range: must be between %ld and %ld", x, lo, hi);
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
static int opt_vec3(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open, double hi,
                    vec3 *out) {
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
    /* scenes written on Windows: "obj\\dragon.obj" */
    for (char *c = out + nb; *c; ++c)
        if (*c == '\\') *c = '/';
    return out;
}

static int ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && ci_equal(s + n - m, suffix);
}

/* ---- textures -------------------------------------------------------------------------------- */
/* Loads the image named by the string `f` (at JSON path `p`, relative to the scene file) as an
 * image texture: an 8-bit sRGB file (PNG, JPEG) keeps its codes, decoded on lookup; any other as
 * linear float RGB, its invalid values reported and zeroed. */
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
    char ierr[512];
    int w = 0, h = 0, idx;
    /* 8-bit sRGB stays 8-bit (a quarter of the memory), decoded straight into the scene's store;
     * its codes are all valid values */
    int is8 = image_load_srgb8(full, scene_reserve_texels8, L->s, &w, &h, ierr, sizeof ierr);
    if (is8 < 0) {
        free(full);
        return fail(L, p, "%s", ierr);
    }
    if (is8) {
        free(full);
        idx = scene_add_image_texture8(L->s, w, h, TEXEL8_SRGB);
    } else {
        image img;
        if (image_load(&img, full, ierr, sizeof ierr)) {
            free(full);
            return fail(L, p, "%s", ierr);
        }
        /* values no light or reflectance has: said once per file, replaced by 0 (refused with --strict) */
        image_value_report vr;
        image_sanitize(&img, &vr);
        int bad = 0;
        char key[1100];
        snprintf(key, sizeof key, "invalid texels %s", full);
        if (vr.nonfinite || vr.negative)
            bad = warn(L, key, p, "%s: %zu non-finite and %zu negative values replaced by 0", full, vr.nonfinite,
                       vr.negative);
        if (!bad && vr.huge) {
            char msg[768];
            snprintf(msg, sizeof msg, "%s: %zu values above %g (largest %g): a broken file?", full, vr.huge,
                     (double)IMAGE_HUGE_VALUE, (double)vr.largest);
            snprintf(key, sizeof key, "huge texels %s", full);
            note(L, key, p, msg);
        }
        free(full);
        if (bad) {
            image_free(&img);
            return -1;
        }
        idx = scene_take_image_texture(L->s, &img);
    }
    if (idx == -2) return fail(L, p, "too many texels in the scene");
    if (idx < 0) return fail(L, p, "out of memory");
    *out_index = idx;
    return 0;
}

/* An environment map: its texture, and the memory cap checked for the sampling tables that
 * scene_prepare builds from it, where the message can name the file. */
static int load_env_map(loader *L, const cJSON *node, const char *jp) {
    if (load_image_texture(L, node, jp, &L->s->env_tex)) return -1;
    char err[512];
    const char *name = cJSON_IsString(node) ? node->valuestring : "environment map";
    if (scene_env_memory_check(L->s, L->s->env_tex, name, err, sizeof err)) return fail(L, jp, "%s", err);
    return 0;
}

static int parse_texture(loader *L, cJSON *t, const char *jpath, int *out_index) {
    static const char *const keys[] = {"TYPE", "RGB1", "RGB2", "SCALE", "SPACE", "FILE", NULL};
    static const char *const types[] = {"checker", "image", NULL};
    static const char *const spaces[] = {"world", "uv", NULL};
    char p[JPATH];
    /* course dialects give an image texture as its file name */
    if (cJSON_IsString(t)) return load_image_texture(L, t, jpath, out_index);
    if (!cJSON_IsObject(t)) return fail(L, jpath, "expected an object or a file name, got %s", jtype(t));
    if (check_keys(L, t, jpath, "TEXTURE", keys)) return -1;
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
/* What a material TYPE spelling means. The dialect spellings come from the survey of course
 * projects (docs/scene-format.md, "dialects we read"). */
enum {
    MT_EMITTING,
    MT_DIFFUSE,
    MT_MIRROR,
    MT_DIELECTRIC,
    MT_CONDUCTOR,
    MT_PHONG,
    MT_PBR,         /* glTF 2.0 metallic-roughness (MAT_PBR) */
    MT_ROUGH_GLASS, /* rough dielectric (MAT_ROUGH_GLASS) */
    MT_INFER,       /* no type ("", "N/A"): from the keys, as the course's text format did */
    MT_FALLBACK     /* known, no caustic counterpart: its base colour as diffuse, with a warning */
};
typedef struct mattype {
    const char *names;
    int kind;
    const char *why;
} mattype;
static const mattype material_types[] = {
    {"EMITTING|EMISSIVE|EMITTER|EMISSION|LIGHT|AREALIGHT|LIGHTSOURCE", MT_EMITTING, NULL},
    {"DIFFUSE|LAMBERT|LAMBERTIAN|MATTE", MT_DIFFUSE, NULL},
    {"SPECULAR|MIRROR|REFLECT|REFLECTIVE|REFLECTION|PUREREFLECTION|PERFECTSPECULAR|PERFECTMIRROR|"
     "SPECULARREFLECTION|SPECULARREFLECTIVE",
     MT_MIRROR, NULL},
    {"REFRACTIVE|DIELECTRIC|GLASS|TRANSMISSIVE|TRANSPARENT|TRANSMISSION|REFRACT|REFRACTION|FRESNEL|"
     "PURETRANSMISSION|PUREREFRACTION|SPECULARTRANSMISSION|SPECULARREFRACTION",
     MT_DIELECTRIC, NULL},
    {"CONDUCTOR|METAL|METALLIC|ROUGHMETAL|GLOSSYMETAL", MT_CONDUCTOR, NULL},
    {"PHONG|GLOSSY|BLINNPHONG|BLINN", MT_PHONG, NULL},
    {"PBR|MICROFACET|MICROFACETPBR|METALLICROUGHNESS|METALLICWORKFLOW|PRINCIPLED|DISNEY|DISNEYBRDF|GGX|"
     "COOKTORRANCE|STANDARD|PBRMETALLICROUGHNESS",
     MT_PBR, NULL},
    {"ROUGHGLASS|FROSTEDGLASS|ROUGHDIELECTRIC|ROUGHREFRACTIVE|ROUGHTRANSMISSION", MT_ROUGH_GLASS, NULL},
    {"|N/A|NA|NONE|DEFAULT", MT_INFER, NULL},
    {"PLASTIC|COATED|CLEARCOAT|COATEDDIFFUSE", MT_FALLBACK, "has no coated (plastic) layer yet"},
    {"SUBSURFACE|SSS|SKIN|WAX|TRANSLUCENT", MT_FALLBACK, "has no subsurface scattering"},
    {"VOLUME|MEDIUM|PARTICIPATINGMEDIUM|FOG|SMOKE|HOMOGENEOUS|HETEROGENEOUS", MT_FALLBACK,
     "has no participating media"},
    {"MARBLE|WOOD|NOISE|PERLIN|PROCEDURAL|TURBULENCE|CHECKER|CHECKERBOARD|GRADIENT|WORLEY", MT_FALLBACK,
     "has no procedural materials (caustic's checker is a TEXTURE)"},
    {NULL, 0, NULL}};
/* caustic's own names, for "did you mean" */
static const char *const material_type_names[] = {"Emitting", "Diffuse",    "Specular", "Refractive", "Conductor",
                                                  "Metal",    "Dielectric", "Glass",    "Mirror",     "Phong",
                                                  "PBR",      "RoughGlass", NULL};

static const keyalias material_keys[] = {
    {"TYPE", "MATERIALTYPE|MATTYPE|KIND|BSDF", NULL, 0, 0},
    {"RGB", "COLOR|COLOUR|ALBEDO|BASECOLOR|BASECOLOUR|DIFFUSECOLOR|DIFFUSECOLOUR|KD|REFLECTANCE|DIFFUSE", NULL, 0,
     WANT_NONSTRING},
    {"TEXTURE",
     "DIFFUSE|BASECOLOR|BASECOLOUR|ALBEDO|COLOR|COLOUR|DIFFUSEMAP|ALBEDOMAP|BASECOLORMAP|BASECOLORTEXTURE|COLORMAP|"
     "DIFFUSETEXTURE|TEX|MAPKD|"
     "ALBEDOTEXTURE|IMAGE",
     NULL, 0, 0},
    {"EMITTANCE", "EMISSION|EMISSIVE|EMISSIVESTRENGTH|EMISSIONSTRENGTH|INTENSITY|STRENGTH|POWER|LUMINANCE", NULL, 0, 0},
    {"ROUGHNESS", "FUZZ|ROUGH", NULL, 0, 0},
    {"IOR", "ETA|REFRIOR|INDEXOFREFRACTION|INDEXOFREFLECTION|REFRACTIONINDEX|REFRACTIVEINDEX|REFRACTION|N", NULL, 0, 0},
    {"METALLIC", "METALNESS|METAL", NULL, 0, 0},
    {"SPECRGB", "SPECULARCOLOR|SPECULARCOLOUR|SPECCOLOR|SPECCOLOUR|KS|SPECULARRGB", NULL, 0, 0},
    {"EXPONENT", "SPECEX|SHININESS|NS|SPECULAREXPONENT|SPECEXPONENT|PHONGEXPONENT", NULL, 0, 0},
    {"REFLECTIVE", "REFL|HASREFLECTIVE|REFLECTIVITY", NULL, 0, 0},
    {"REFRACTIVE", "REFR|HASREFRACTIVE|TRANSMISSION|TRANSMISSIVE|TRANSMITTANCE", NULL, 0, 0},
    {"TWO_SIDED", "DOUBLESIDED", NULL, 0, 0},
    /* two-colour procedural materials: the fallback renders their mean */
    {"RGB1", "COLOR1|COLOUR1", NULL, 0, 0},
    {"RGB2", "COLOR2|COLOUR2", NULL, 0, 0},
    {"LIGHT_RGB", "LIGHTCOLOR|LIGHTCOLOUR", NULL, 0, 0},
    {"DARK_RGB", "DARKCOLOR|DARKCOLOUR", NULL, 0, 0},
    {"NORMAL_MAP", "NORMAL|NORMALMAP|NORMALTEXTURE|BUMP|BUMPMAP|BUMPSCALE|NORMALSCALE|HEIGHTMAP|DISPLACEMENT",
     "normal and bump maps are not supported yet", 0, 0},
    {"METALLIC_ROUGHNESS",
     "METALLICROUGHNESSMAP|METALLICROUGHNESSTEXTURE|ROUGHNESSMAP|METALLICMAP|ORM|AOMAP|"
     "OCCLUSION|EMISSIVEMAP|EMISSIONMAP",
     "texture maps other than the base colour are not supported yet", 0, 0},
    {"DISPERSION", "ABBE|ABBENUMBER|CAUCHY|CAUCHYB", "dispersion is not supported (one IOR for all wavelengths)", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

/* Materials that objects use without defining one: a neutral grey diffuse. */
static int default_material(loader *L) {
    if (L->default_material >= 0) return L->default_material;
    material m;
    memset(&m, 0, sizeof m);
    m.kind = MAT_DIFFUSE;
    m.albedo = v3s(0.7f);
    m.albedo_tex = -1;
    m.ior = 1.5f;
    m.two_sided = 1;
    L->default_material = scene_add_material(L->s, "(default grey)", m);
    return L->default_material;
}

/* A colour key: [r,g,b], or one number for grey (the text format's "RGB 1" in some dialects). */
static int read_colour(loader *L, const cJSON *v, const char *p, double hi, vec3 *out) {
    if (cJSON_IsNumber(v)) {
        double g;
        if (read_range(L, v, p, 0.0, 0, hi, &g)) return -1;
        *out = v3s((float)g);
        return 0;
    }
    return read_vec3(L, v, p, 0.0, 0, hi, out);
}

/* A flag given as a boolean or a number (0 = off). */
static int read_flag(loader *L, const cJSON *v, const char *p, int *out) {
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 0;
    }
    double x;
    if (read_range(L, v, p, -1e30, 0, 1e30, &x)) return fail(L, p, "expected true/false or a number");
    *out = x > 0.0;
    return 0;
}

static int parse_material(loader *L, const char *name, cJSON *m, const char *jpath) {
    char p[JPATH];
    if (!cJSON_IsObject(m)) return fail(L, jpath, "expected an object, got %s", jtype(m));
    if (canonicalize(L, m, jpath, "Materials.*", material_keys)) return -1;
    const cJSON *ty = get(m, "TYPE");
    if (!ty) return missing(L, jpath, "TYPE");
    jkey(p, jpath, "TYPE");
    const char *tname = "";
    if (read_string(L, ty, p, &tname)) return -1;
    char tnorm[64];
    normalise_key(tname, tnorm, sizeof tnorm);
    int kind = -1;
    const char *why = NULL;
    for (int i = 0; material_types[i].names && kind < 0; ++i) {
        if (in_list(tnorm, material_types[i].names) || (!tnorm[0] && material_types[i].names[0] == '|')) {
            kind = material_types[i].kind;
            why = material_types[i].why;
        }
    }
    char dk[120];
    snprintf(dk, sizeof dk, "Materials.*.TYPE=%.64s", tnorm);
    if (kind < 0) {
        const char *sug = suggest(tname, material_type_names);
        int rc = sug ? warn(L, dk, p,
                            "unknown material TYPE \"%.64s\" (did you mean \"%s\"?): rendered as Diffuse with its RGB",
                            tname, sug)
                     : warn(L, dk, p, "unknown material TYPE \"%.64s\": rendered as Diffuse with its RGB", tname);
        if (rc) return -1;
        kind = MT_FALLBACK;
    } else if (kind == MT_FALLBACK) {
        if (warn(L, dk, p, "material TYPE \"%.64s\": caustic %s; rendered as Diffuse with its base colour", tname, why))
            return -1;
    }

    const cJSON *refl_v = get(m, "REFLECTIVE"), *refr_v = get(m, "REFRACTIVE");
    double emittance = kind == MT_EMITTING ? 1.0 : 0.0;
    if (opt_number(L, m, jpath, "EMITTANCE", 0.0, 0, MAX_RADIANCE, &emittance)) return -1;
    int reflective = 0, refractive = 0;
    if (refl_v) {
        jkey(p, jpath, "REFLECTIVE");
        if (read_flag(L, refl_v, p, &reflective)) return -1;
    }
    if (refr_v) {
        jkey(p, jpath, "REFRACTIVE");
        if (read_flag(L, refr_v, p, &refractive)) return -1;
    }
    if (kind == MT_INFER) /* the reference shader's order: light, then mirror/glass flags */
        kind = emittance > 0.0 ? MT_EMITTING : refractive ? MT_DIELECTRIC : reflective ? MT_MIRROR : MT_DIFFUSE;
    /* REFRACTIVE/REFLECTIVE flags on a Specular material (a dialect's one "Specular" type for both) */
    if (kind == MT_MIRROR && refractive) kind = MT_DIELECTRIC;

    material mat;
    memset(&mat, 0, sizeof mat);
    mat.albedo_tex = -1;
    mat.ior = 1.5f;
    mat.two_sided = 1; /* the course's shader emits whichever side a ray hits */

    cJSON *tex = cJSON_GetObjectItemCaseSensitive(m, "TEXTURE");
    if (tex && kind == MT_EMITTING) {
        jkey(p, jpath, "TEXTURE");
        return fail(L, p, "Emitting materials cannot have a TEXTURE");
    }
    /* RGB is radiance colour for emitters (any size), reflectance otherwise: above 1 would create
     * energy. With a TEXTURE it multiplies the texture and defaults to white. */
    vec3 rgb = v3s(1.0f);
    const cJSON *c = get(m, "RGB");
    if (c) {
        jkey(p, jpath, "RGB");
        if (read_colour(L, c, p, kind == MT_EMITTING ? MAX_RADIANCE : 1.0, &rgb)) return -1;
    } else if (!tex) {
        if (kind == MT_FALLBACK && (get(m, "RGB1") || get(m, "LIGHT_RGB")))
            rgb = v3s(0.5f);
        else
            return missing(L, jpath, "RGB");
    }
    double roughness = 0.0, ior = 1.5, metallic = kind == MT_CONDUCTOR ? 1.0 : 0.0;
    if (opt_number(L, m, jpath, "ROUGHNESS", 0.0, 0, 1.0, &roughness)) return -1;
    if (opt_number(L, m, jpath, "METALLIC", 0.0, 0, 1.0, &metallic)) return -1;
    const cJSON *iv = get(m, "IOR");
    if (iv) {
        jkey(p, jpath, "IOR");
        if (cJSON_IsArray(iv) && cJSON_GetArraySize(iv) == 3) { /* per-channel IOR: dispersion */
            double a[3];
            if (read_array(L, iv, p, 3, 0.0, 1, 10.0, a)) return -1;
            ior = a[1];
            snprintf(dk, sizeof dk, "Materials.*.IOR[]");
            if ((kind == MT_DIELECTRIC || kind == MT_ROUGH_GLASS) &&
                warn(L, dk, p, "per-channel IOR (dispersion) is not supported: using the middle value %g", ior))
                return -1;
        } else if (kind == MT_DIELECTRIC || kind == MT_ROUGH_GLASS) {
            /* the course's text format writes 0 for "not set" */
            if (cJSON_IsNumber(iv) && iv->valuedouble == 0.0) {
                if (warn(L, "Materials.*.IOR=0", p, "IOR 0 is not an index of refraction (must be > 0): using 1.5"))
                    return -1;
            } else if (read_range(L, iv, p, 0.0, 1, 10.0, &ior)) {
                return -1;
            }
        } else if (read_range(L, iv, p, -1e30, 0, 1e30, &ior)) {
            return -1; /* IOR does not apply to this type: any number is accepted, as the course does */
        }
    }
    /* Phong: RGB is the diffuse part, SPECRGB the lobe's reflectance; together at most 1 */
    vec3 spec = v3s(0.0f);
    double exponent = 1.0;
    if (kind == MT_PHONG) {
        if (!get(m, "SPECRGB")) return missing(L, jpath, "SPECRGB");
        if (!get(m, "EXPONENT")) return missing(L, jpath, "EXPONENT");
        jkey(p, jpath, "SPECRGB");
        if (read_colour(L, get(m, "SPECRGB"), p, 1.0, &spec)) return -1;
        if (opt_number(L, m, jpath, "EXPONENT", 0.0, 0, 1e6, &exponent)) return -1;
        float total = vmaxc(vadd(rgb, spec));
        if (total > 1.0f) {
            snprintf(dk, sizeof dk, "Materials.*.SPECRGB>1");
            if (warn(L, dk, p, "RGB + SPECRGB exceeds 1 (the material would create energy): both scaled by %.3g",
                     1.0 / total))
                return -1;
            rgb = vscale(rgb, 1.0f / total);
            spec = vscale(spec, 1.0f / total);
        }
    } else {
        /* keys that do not apply to the type are accepted and ignored, as the course does; their
         * values must still be well-formed */
        const cJSON *sr = get(m, "SPECRGB");
        vec3 unused;
        if (sr) {
            jkey(p, jpath, "SPECRGB");
            if (read_colour(L, sr, p, 1e30, &unused)) return -1;
        }
        if (opt_number(L, m, jpath, "EXPONENT", 0.0, 0, 1e30, &exponent)) return -1;
    }
    const cJSON *ts = get(m, "TWO_SIDED");
    if (ts) {
        jkey(p, jpath, "TWO_SIDED");
        if (read_flag(L, ts, p, &mat.two_sided)) return -1;
    }

    mat.albedo = rgb;
    mat.emission = vscale(rgb, (float)emittance);
    switch (kind) {
    case MT_EMITTING: mat.kind = MAT_EMITTER; break;
    /* The reference loader reads ROUGHNESS for Specular but never uses it, and the course
     * renders Specular as an ideal mirror (the stock cornell.json has ROUGHNESS 1.0 on its
     * mirror sphere): keep that. Rough metal is the Conductor/Metal extension. */
    case MT_MIRROR: mat.kind = MAT_MIRROR; break;
    case MT_DIELECTRIC:
        mat.kind = MAT_DIELECTRIC;
        mat.ior = (float)ior;
        break;
    case MT_PHONG:
        mat.kind = MAT_PHONG;
        mat.specular = spec;
        mat.exponent = (float)exponent;
        break;
    case MT_CONDUCTOR:
        mat.kind = MAT_CONDUCTOR;
        mat.alpha = (float)(roughness * roughness);
        break;
    /* glTF 2.0 metallic-roughness: RGB base colour, METALLIC, ROUGHNESS (perceptual, alpha = r^2) */
    case MT_PBR:
        mat.kind = MAT_PBR;
        mat.metallic = (float)metallic;
        mat.alpha = (float)(roughness * roughness);
        break;
    /* frosted glass: GGX reflection and transmission, RGB tints both */
    case MT_ROUGH_GLASS:
        mat.kind = MAT_ROUGH_GLASS;
        mat.ior = (float)ior;
        mat.alpha = (float)(roughness * roughness);
        break;
    case MT_FALLBACK: {
        /* procedural two-colour materials: the mean of their colours, tinted by RGB */
        const char *pairs[2][2] = {{"RGB1", "RGB2"}, {"LIGHT_RGB", "DARK_RGB"}};
        for (int i = 0; i < 2; ++i) {
            vec3 a, b;
            const cJSON *va = get(m, pairs[i][0]), *vb = get(m, pairs[i][1]);
            if (va && vb && cJSON_IsArray(va) && cJSON_IsArray(vb)) {
                char pa[JPATH], pb[JPATH];
                jkey(pa, jpath, pairs[i][0]);
                jkey(pb, jpath, pairs[i][1]);
                if (read_vec3(L, va, pa, 0.0, 0, 1.0, &a) || read_vec3(L, vb, pb, 0.0, 0, 1.0, &b)) return -1;
                mat.albedo = vmul(mat.albedo, vscale(vadd(a, b), 0.5f));
                break;
            }
        }
        mat.kind = MAT_DIFFUSE;
        break;
    }
    default: mat.kind = MAT_DIFFUSE; break;
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

static int parse_materials(loader *L, cJSON *ms) {
    if (!cJSON_IsObject(ms)) return fail(L, "Materials", "expected an object (name -> material), got %s", jtype(ms));
    for (cJSON *m = ms->child; m; m = m->next) {
        const char *name = m->string ? m->string : "";
        char p[JPATH];
        jkey(p, "Materials", name);
        if (parse_material(L, name, m, p)) return -1;
    }
    return 0;
}

/* ---- camera ---------------------------------------------------------------------------------- */
static const keyalias camera_keys[] = {
    {"RES", "RESOLUTION|SIZE|IMAGESIZE", NULL, 0, 0},
    {"FOVY", "FOV|VFOV|FIELDOFVIEW|YFOV", NULL, 0, 0},
    {"ITERATIONS", "SPP|SAMPLES|SAMPLESPERPIXEL|ITERATION", NULL, 0, 0},
    {"DEPTH", "MAXDEPTH|MAXBOUNCES|BOUNCES|TRACEDEPTH|MAXPATHLENGTH", NULL, 0, 0},
    {"FILE", "OUTPUT|OUTFILE|FILENAME", NULL, 0, 0},
    {"EYE", "POSITION|POS|ORIGIN|FROM|LOOKFROM|CAMERAPOSITION", NULL, 0, 0},
    {"LOOKAT", "TARGET|AT|CENTER|CENTRE|LOOKAT", NULL, 0, 0},
    {"VIEW", "DIRECTION|DIR|FORWARD|VIEWDIR", NULL, 0, 0},
    {"UP", "UPVECTOR|VUP", NULL, 0, 0},
    {"FOCAL_LENGTH", NULL, NULL, 1, 0},
    /* thin lens: course projects call the lens radius and the distance in focus many names; their
     * "focal length" is the distance in focus (a scene distance), unlike caustic's FOCAL_LENGTH */
    {"APERTURE", "APERTURERADIUS|LENSRADIUS|LENSRAD|LENS|RADIUS", NULL, 0, 0},
    {"FSTOP", "FNUMBER|FSTOPS", NULL, 0, 0},
    {"FOCUS_DISTANCE",
     "FOCUSDISTANCE|FOCALDISTANCE|FOCALDIST|FOCUSDIST|FOCALLENGTH|FOCAL|FOCUS|FOCALDEPTH|"
     "FOCUSPLANE|FOCALPLANE|FOCALPLANEDISTANCE",
     NULL, 0, 0},
    {"EXPOSURE", "EV", "exposure is not applied by the renderer (tone-map the image instead)", 0, 0},
    {"INV_RES", "PIXELLENGTH", NULL, 0, 0},
    {"ANTIALIAS", "AA|ANTIALIASING|SAMPLEWIDTH|JITTER", "caustic always antialiases (jittered samples)", 0, 0},
    {"FRAME", NULL, NULL, 0, 0},
    {"ENVMAP", "ENVIRONMENTMAP|ENVIRONMENT|SKYBOX|HDRI|BACKGROUND", NULL, 0,
     WANT_STRING}, /* a dialect's place for it */
    {NULL, NULL, NULL, 0, 0}};

static int parse_camera(loader *L, cJSON *cam) {
    const char *jp = "Camera";
    char p[JPATH];
    if (!cJSON_IsObject(cam)) return fail(L, jp, "expected an object, got %s", jtype(cam));
    if (canonicalize(L, cam, jp, "Camera", camera_keys)) return -1;
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

    const cJSON *ev = get(cam, "EYE"), *lv = get(cam, "LOOKAT"), *vv = get(cam, "VIEW");
    if (!ev) return missing(L, jp, "EYE");
    jkey(p, jp, "EYE");
    if (read_vec3(L, ev, p, -MAX_COORD, 0, MAX_COORD, &cd->eye)) return -1;
    if (lv && vv) {
        jkey(p, jp, "VIEW");
        return fail(L, p, "LOOKAT and VIEW both set the direction: give only one");
    }
    if (vv) { /* the older course format: a viewing direction instead of a point */
        vec3 d;
        jkey(p, jp, "VIEW");
        if (read_vec3(L, vv, p, -MAX_COORD, 0, MAX_COORD, &d)) return -1;
        if (!(vlen(d) > 0.0f)) return fail(L, p, "VIEW is the zero vector");
        cd->lookat = vadd(cd->eye, vnorm(d));
    } else {
        if (!lv) return missing(L, jp, "LOOKAT");
        jkey(p, jp, "LOOKAT");
        if (read_vec3(L, lv, p, -MAX_COORD, 0, MAX_COORD, &cd->lookat)) return -1;
    }
    cd->up = v3(0.0f, 1.0f, 0.0f);
    if (opt_vec3(L, cam, jp, "UP", -MAX_COORD, 0, MAX_COORD, &cd->up)) return -1;
    vec3 fwd = vsub(cd->lookat, cd->eye);
    if (!(vlen(fwd) > 0.0f)) {
        jkey(p, jp, "LOOKAT");
        return fail(L, p, "LOOKAT is the same point as EYE");
    }
    if (!(vlen(cd->up) > 0.0f)) {
        jkey(p, jp, "UP");
        return fail(L, p, "UP is the zero vector");
    }
    if (!(vlen(vcross(vnorm(fwd), vnorm(cd->up))) > 1e-6f)) {
        /* looking straight along UP (a top view): any other up frames the same picture, turned */
        jkey(p, jp, "UP");
        vec3 f = vnorm(fwd);
        vec3 alt = fabsf(f.z) < 0.9f ? v3(0.0f, 0.0f, -1.0f) : v3(0.0f, 1.0f, 0.0f);
        if (warn(L, "Camera.UP", p, "UP is parallel to the viewing direction: using (%g, %g, %g) instead", alt.x, alt.y,
                 alt.z))
            return -1;
        cd->up = alt;
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
        if (cJSON_IsNumber(ap) && ap->valuedouble < 0.0 && isfinite(ap->valuedouble)) { /* "-1": no lens */
            if (warn(L, "Camera.APERTURE<0", p, "negative lens radius %g: rendered without depth of field",
                     ap->valuedouble))
                return -1;
        } else if (read_range(L, ap, p, 0.0, 0, 1e6, &radius)) {
            return -1;
        }
    } else if (fs) {
        double fstop;
        jkey(p, jp, "FSTOP");
        if (!focal) return fail(L, p, "FSTOP needs FOCAL_LENGTH (millimetres)");
        if (read_range(L, fs, p, 0.0, 1, 1e4, &fstop)) return -1;
        radius = focal_mm / (2.0 * fstop) / MM_PER_UNIT;
    }
    cd->aperture_radius = (float)radius;
    double focus = 0.0;
    const cJSON *fd = get(cam, "FOCUS_DISTANCE");
    if (fd && cJSON_IsNumber(fd) && fd->valuedouble <= 0.0 && radius == 0.0) {
        /* dialects write 0 (or -1) for "no depth of field" */
        jkey(p, jp, "FOCUS_DISTANCE");
        if (warn(L, "Camera.FOCUS_DISTANCE<=0", p, "focus distance %g ignored (there is no lens)", fd->valuedouble))
            return -1;
    } else if (opt_number(L, cam, jp, "FOCUS_DISTANCE", 0.0, 1, 1e9, &focus)) {
        return -1;
    }
    cd->focus_distance = (float)focus;
    if (radius > 0.0) {
        double in_focus = focus > 0.0 ? focus : (double)vlen(vsub(cd->lookat, cd->eye));
        jkey(p, jp, "APERTURE");
        if (radius > in_focus && warn(L, "Camera.APERTURE>focus", p,
                                      "lens radius %g is larger than the distance in focus (%g): "
                                      "almost everything will be blurred (APERTURE is a radius in scene units)",
                                      radius, in_focus))
            return -1;
    }
    /* an environment map's file name given with the camera (a dialect): as "Environment" */
    const cJSON *em = get(cam, "ENVMAP");
    if (em && L->s->env_tex < 0 && vis_black(L->s->env_radiance)) {
        jkey(p, jp, "ENVMAP");
        L->s->env_radiance = v3s(1.0f);
        if (load_env_map(L, em, p)) return -1;
    }
    /* INV_RES / FRAME: derived or multi-frame bookkeeping of some dialects; must match if given */
    const cJSON *fr = get(cam, "FRAME");
    if (fr && !(cJSON_IsNumber(fr) && fr->valuedouble == 0.0)) {
        jkey(p, jp, "FRAME");
        if (warn(L, "Camera.FRAME", p, "only frame 0 of an animated scene is rendered")) return -1;
    }
    return 0;
}

/* ---- environment ----------------------------------------------------------------------------- */
/* A constant colour (RGB x EMITTANCE), or a lat-long radiance map (FILE: .exr, .hdr, .pfm, .png)
 * scaled by EMITTANCE and tinted by RGB (default white). */
static const keyalias environment_keys[] = {
    {"RGB", "COLOR|COLOUR|RADIANCE|BACKGROUND|BACKGROUNDCOLOR", NULL, 0, 0},
    {"EMITTANCE", "INTENSITY|STRENGTH|SCALE|EMISSION|MULTIPLIER", NULL, 0, 0},
    {"FILE", "PATH|FILENAME|TEXTURE|MAP|HDR|HDRI|IMAGE|ENVMAP", NULL, 0, 0},
    {"TYPE", NULL, NULL, 0, 0}, /* "CONSTANT" / "TEXTURE": implied by FILE */
    {"ROTATION", "ROTAT|ROTATE", "rotating the environment map is not supported", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

static int parse_environment(loader *L, cJSON *env) {
    const char *jp = "Environment";
    if (cJSON_IsString(env)) { /* a dialect: the map's file name alone */
        L->s->env_radiance = v3s(1.0f);
        return load_env_map(L, env, jp);
    }
    if (!cJSON_IsObject(env)) return fail(L, jp, "expected an object or a file name, got %s", jtype(env));
    if (canonicalize(L, env, jp, "Environment", environment_keys)) return -1;
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
        if (load_env_map(L, f, p)) return -1;
    }
    return 0;
}

/* ---- lights without geometry ----------------------------------------------------------------- */
/* {"TYPE":"point", "POSITION":[x,y,z], "RGB":[..], "EMITTANCE":e}: radiant intensity RGB*e (W/sr);
 * {"TYPE":"directional", "DIRECTION":[x,y,z], "RGB":[..], "EMITTANCE":e}: light travelling along
 * DIRECTION with irradiance RGB*e on a plane facing it. */
static int parse_lights(loader *L, cJSON *ls) {
    static const char *const keys[] = {"TYPE", "POSITION", "DIRECTION", "RGB", "EMITTANCE", NULL};
    /* the light table's names (kernel/types.h); area lights are emissive materials */
    const char *const types[] = {light_kind_name(LIGHT_POINT), light_kind_name(LIGHT_DIRECTIONAL), NULL};
    if (!cJSON_IsArray(ls)) return fail(L, "Lights", "expected an array, got %s", jtype(ls));
    size_t i = 0;
    for (cJSON *l = ls->child; l; l = l->next, ++i) {
        char jp[JPATH], p[JPATH];
        jindex(jp, "Lights", i);
        if (!cJSON_IsObject(l)) return fail(L, jp, "expected an object, got %s", jtype(l));
        if (check_keys(L, l, jp, "Lights[]", keys)) return -1;
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
/* dialect spellings of the object types, normalised, in object_types order */
static const char *const object_type_aliases[] = {"CUBE|BOX",
                                                  "SPHERE|BALL",
                                                  "MESH|OBJ|TRIMESH|TRIANGLEMESH|MODEL|GLTF|GLB|PLY|POLYMESH",
                                                  "QUAD|RECT|RECTANGLE|SQUARE|PARALLELOGRAM",
                                                  "PLANE|GROUND|FLOOR",
                                                  NULL};

static const keyalias object_keys[] = {
    {"TYPE", "SHAPE|KIND|GEOMETRY", NULL, 0, 0},
    {"MATERIAL", "MAT|MTL|MATERIALS|MATERIALNAME|MATERIALID|BSDF", NULL, 0, 0},
    {"TRANS", "TRANSLATE|TRANSLATION|POSITION|POS|OFFSET|T", NULL, 0, 0},
    {"ROTAT", "ROTATE|ROTATION|ROT|R|EULER", NULL, 0, 0},
    {"SCALE", "SCALING|S|SIZE", NULL, 0, 0},
    {"FILE", "PATH|FILENAME|FILEPATH|MESHFILE|MESHPATH|SRC|SOURCE|URI|GLTF|OBJ|MODELFILE", NULL, 0, 0},
    {"MESH", "MESHNAME|MODEL|MESHID", NULL, 0, WANT_STRING},
    {"ORIGIN", NULL, NULL, 1, 0},
    {"U", NULL, NULL, 1, 0},
    {"V", NULL, NULL, 1, 0},
    {"NAME", "LABEL|ID|COMMENT", NULL, 0, 0}, /* a label: no effect */
    {"BUILD_BVH", "BVH|USEBVH", NULL, 0, 0},  /* caustic always builds one */
    {"MOTION", "VELOCITY|VEL|MOTIONBLUR|TRANSEND|MOVE", "motion blur is not supported (the object is rendered at rest)",
     0, 0},
    {"FRAME", NULL, NULL, 0, 0},
    {NULL, NULL, NULL, 0, 0}};

static int parse_object(loader *L, cJSON *o, const char *jp) {
    char p[JPATH];
    if (!cJSON_IsObject(o)) return fail(L, jp, "expected an object, got %s", jtype(o));
    if (canonicalize(L, o, jp, "Objects[]", object_keys)) return -1;
    const cJSON *ty = get(o, "TYPE");
    int type = -1;
    if (!ty) {
        /* a dialect: objects that only name a mesh file are meshes */
        if (!get(o, "FILE") && !get(o, "MESH")) return missing(L, jp, "TYPE");
        type = OT_MESH;
    } else {
        jkey(p, jp, "TYPE");
        const char *tname = "";
        if (read_string(L, ty, p, &tname)) return -1;
        char tn[64];
        normalise_key(tname, tn, sizeof tn);
        for (int i = 0; object_type_aliases[i] && type < 0; ++i)
            if (in_list(tn, object_type_aliases[i])) type = i;
        if (type < 0) {
            char dk[120];
            snprintf(dk, sizeof dk, "Objects[].TYPE=%.64s", tn);
            const char *sug = suggest(tname, object_types);
            int rc =
                sug ? warn(L, dk, p, "unknown object TYPE \"%.64s\" (did you mean \"%s\"?): object skipped", tname, sug)
                    : warn(L, dk, p,
                           "unknown object TYPE \"%.64s\" (caustic has cube, sphere, mesh, quad, plane): "
                           "object skipped",
                           tname);
            return rc;
        }
    }

    /* MATERIAL: a name from Materials. Meshes may leave it out (an OBJ then keeps its MTL
     * materials); other objects without one, or with an empty name, get a grey diffuse. */
    cJSON *mv = cJSON_GetObjectItemCaseSensitive(o, "MATERIAL");
    jkey(p, jp, "MATERIAL");
    if (mv && cJSON_IsArray(mv)) {
        /* a per-primitive list (glTF dialects): the first entry, or the mesh's own materials */
        cJSON *first = mv->child;
        if (warn(L, "Objects[].MATERIAL[]", p, "a list of materials is not supported: %s",
                 type == OT_MESH ? "the mesh keeps its own materials" : "using the first"))
            return -1;
        mv = type == OT_MESH ? NULL : first;
    }
    const char *mname = "";
    if (mv && read_string(L, mv, p, &mname)) return -1;
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
                    int d = edit_distance(mname, L->s->material_names[i]);
                    if (d < best) {
                        best = d;
                        sug = L->s->material_names[i];
                    }
                }
            }
            char dk[120];
            snprintf(dk, sizeof dk, "Objects[].MATERIAL=%.64s", mname);
            const char *instead = type == OT_MESH ? "the mesh keeps its own materials" : "rendered grey diffuse";
            int rc =
                sug ? warn(L, dk, p, "unknown material \"%.64s\" (did you mean \"%.64s\"?): %s", mname, sug, instead)
                    : warn(L, dk, p, "unknown material \"%.64s\" (not defined in Materials): %s", mname, instead);
            if (rc) return -1;
            if (type != OT_MESH) {
                mat = default_material(L);
                if (mat < 0) return fail(L, jp, "out of memory");
            }
        }
    } else if (type != OT_MESH) {
        /* no MATERIAL, or "": a mesh keeps its own materials, anything else is grey */
        if (warn(L, "Objects[].MATERIAL", mv ? p : jp,
                 mv ? "empty material name: rendered grey diffuse" : "no MATERIAL: rendered grey diffuse"))
            return -1;
        mat = default_material(L);
        if (mat < 0) return fail(L, jp, "out of memory");
    }

    /* MESH: a name in the top-level "Meshes" table, instead of FILE */
    const cJSON *meshref = get(o, "MESH");
    if (meshref) {
        jkey(p, jp, "MESH");
        if (get(o, "FILE")) return fail(L, p, "give either FILE or MESH, not both");
        const char *ref = "";
        if (read_string(L, meshref, p, &ref)) return -1;
        const cJSON *f = L->mesh_table ? cJSON_GetObjectItemCaseSensitive(L->mesh_table, ref) : NULL;
        if (!f) return fail(L, p, "mesh \"%.64s\" is not in the Meshes table", ref);
        if (!cJSON_IsString(f)) return fail(L, p, "Meshes.%.64s: expected a file name, got %s", ref, jtype(f));
        cJSON *copy = cJSON_CreateString(f->valuestring);
        if (!copy || !cJSON_AddItemToObject(o, "FILE", copy)) {
            cJSON_Delete(copy);
            return fail(L, p, "out of memory");
        }
    }

    int is_quad = type == OT_QUAD || type == OT_PLANE;
    const char *quad_keys[] = {"ORIGIN", "U", "V"};
    int nquad = 0;
    for (int i = 0; i < 3; ++i) nquad += get(o, quad_keys[i]) != NULL;
    if (nquad && !is_quad) {
        for (int i = 0; i < 3; ++i)
            if (get(o, quad_keys[i])) {
                jkey(p, jp, quad_keys[i]);
                break;
            }
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
        if (ply && mat < 0) { /* PLY files carry no materials */
            jkey(p, jp, "MATERIAL");
            if (warn(L, "Objects[].MATERIAL", jp, "no MATERIAL for a PLY mesh: rendered grey diffuse")) return -1;
            mat = default_material(L);
            if (mat < 0) return fail(L, jp, "out of memory");
            jkey(p, jp, "FILE");
        }
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
        int rc = scene_load_mesh_file(L->s, full, m, mat, merr, sizeof merr); /* mat < 0: the file's materials */
        if (rc) {
            free(full);
            return fail(L, p, "%s", merr);
        }
        loaded_mesh *grown = realloc(L->meshes, (L->nmeshes + 1) * sizeof(loaded_mesh));
        if (!grown) {
            free(full);
            return fail(L, p, "out of memory");
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
    default: {
        /* unit square [-0.5,0.5]^2 in the xy plane facing +z, under M = T*R*S */
        vec3 o0 = xform_point(&m, v3(-0.5f, -0.5f, 0.0f));
        vec3 u = xform_vector(&m, v3(1.0f, 0.0f, 0.0f)), v = xform_vector(&m, v3(0.0f, 1.0f, 0.0f));
        if (scene_add_quad(L->s, o0, u, v, mat)) return fail(L, jp, "quad has no area or out of memory");
        return 0;
    }
    }
}

static int parse_objects(loader *L, cJSON *objs) {
    if (!cJSON_IsArray(objs)) return fail(L, "Objects", "expected an array, got %s", jtype(objs));
    size_t i = 0;
    for (cJSON *o = objs->child; o; o = o->next, ++i) {
        char p[JPATH];
        jindex(p, "Objects", i);
        if (parse_object(L, o, p)) return -1;
    }
    return 0;
}

static const keyalias root_keys[] = {
    {"Materials", "MATERIAL|MATS|MATERIALLIST", NULL, 0, 0},
    {"Camera", "CAM", NULL, 0, 0},
    {"Objects", "OBJECT|PRIMITIVES|GEOMETRY|SHAPES", NULL, 0, 0},
    {"Environment",
     "ENVIRONMENTMAP|ENVMAP|ENVIRONMENTTEXTURE|ENVIRONMENTLIGHT|ENVLIGHT|BACKGROUND|SKYBOX|SKY|"
     "HDRI|ENVIRONMENTHDR",
     NULL, 0, 0},
    {"Lights", "LIGHT|PUNCTUALLIGHTS", NULL, 0, 0},
    {"Meshes", "MESHTABLE|MESHLIST", NULL, 0, 0},
    {"Imports", "IMPORT|MODELS|GLTFS|SCENES", NULL, 0, 0},
    {"Volumes", "VOLUME|MEDIA|MEDIUMS|VDB", "participating media (volumes) are not supported", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

static int parse_root(loader *L, cJSON *root) {
    if (!cJSON_IsObject(root)) return fail(L, NULL, "the top level must be a JSON object, got %s", jtype(root));
    /* the file's own top-level keys, for the message when it is not a course scene at all */
    char keys_seen[200] = "";
    size_t used = 0;
    for (const cJSON *c = root->child; c && used + 70 < sizeof keys_seen; c = c->next)
        used += (size_t)snprintf(keys_seen + used, sizeof keys_seen - used, "%s%.60s", used ? ", " : "",
                                 c->string ? c->string : "");
    text_one_line(keys_seen);
    if (canonicalize(L, root, "", "", root_keys)) return -1;
    cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "Materials"),
          *cam = cJSON_GetObjectItemCaseSensitive(root, "Camera");
    cJSON *objs = cJSON_GetObjectItemCaseSensitive(root, "Objects"),
          *env = cJSON_GetObjectItemCaseSensitive(root, "Environment");
    cJSON *meshes = cJSON_GetObjectItemCaseSensitive(root, "Meshes"),
          *imports = cJSON_GetObjectItemCaseSensitive(root, "Imports");
    if (meshes && !cJSON_IsObject(meshes))
        return fail(L, "Meshes", "expected an object (name -> file), got %s", jtype(meshes));
    L->mesh_table = meshes;
    if (!cam && L->camera_only) return fail(L, NULL, "missing required key \"Camera\"");
    if (!cam) {
        if (!objs && !ms)
            return fail(L, NULL, "missing required key \"Camera\": not a CIS 5650 scene (top-level keys: %s)",
                        keys_seen);
        return fail(L, NULL, "missing required key \"Camera\"");
    }
    /* materials first: objects refer to them by name, wherever they appear in the file */
    if (ms && !L->camera_only && parse_materials(L, ms)) return -1;
    if (parse_camera(L, cam)) return -1;
    if (L->camera_only) return 0;
    if (env && parse_environment(L, env)) return -1;
    cJSON *lights = cJSON_GetObjectItemCaseSensitive(root, "Lights");
    if (lights && parse_lights(L, lights)) return -1;
    if (!objs && !imports) return fail(L, NULL, "missing required key \"Objects\"");
    if (objs && parse_objects(L, objs)) return -1;
    if (imports) {
        /* a dialect: placed model files in their own list, meshes with their own materials */
        if (!cJSON_IsArray(imports)) return fail(L, "Imports", "expected an array, got %s", jtype(imports));
        size_t i = 0;
        for (cJSON *o = imports->child; o; o = o->next, ++i) {
            char p[JPATH];
            jindex(p, "Imports", i);
            if (cJSON_IsObject(o) && !cJSON_GetObjectItem(o, "TYPE") && !cJSON_AddStringToObject(o, "TYPE", "mesh"))
                return fail(L, p, "out of memory");
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
    L.src = source_name ? source_name : "<scene>";
    L.base_dir = base_dir;
    L.err = err;
    L.errlen = errlen;
    L.strict = opts ? opts->strict : 1;
    L.default_material = -1;
    if (!text) return fail(&L, NULL, "no scene text");

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
                snprintf(err, errlen, "%s:%zu:%zu: malformed JSON near \"%s\"", L.src, line, col, near);
            else
                snprintf(err, errlen, "%s:%zu:%zu: malformed JSON: unexpected end of input", L.src, line, col);
        }
        return -1;
    }
    L.s = scene_create();
    if (!L.s) {
        cJSON_Delete(root);
        return fail(&L, NULL, "out of memory");
    }
    if (opts) {
        L.s->warn = opts->warn;
        L.s->warn_user = opts->warn_user;
        L.camera_only = opts->camera_only;
    }
    int rc = parse_root(&L, root);
    cJSON_Delete(root);
    for (size_t i = 0; i < L.nmeshes; ++i) free(L.meshes[i].path);
    free(L.meshes);
    flush_warnings(&L, rc == 0);
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
