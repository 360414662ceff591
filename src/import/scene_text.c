/* The CIS 565 text scene format (2012-2023 course projects): blocks of keyword lines,
 *
 *   MATERIAL 0            CAMERA                 OBJECT 0
 *   RGB  .98 .98 .98      RES  800 800           cube
 *   SPECEX 0              FOVY 45                material 0
 *   SPECRGB 1 1 1         ITERATIONS 5000        TRANS 0 5 0
 *   REFL 0                DEPTH 8                ROTAT 0 0 0
 *   REFR 0                EYE 0 5 10.5           SCALE 3 3 3
 *   REFRIOR 0             LOOKAT 0 5 0  (or VIEW 0 0 -1)
 *   EMITTANCE 0           UP 0 1 0
 *
 * converted to caustic JSON, which the JSON loader then reads with its dialect rules (so a value
 * out of range is reported at its JSON path, e.g. Materials.3.RGB). Only the text format's own
 * meaning is decided here: a material without a TYPE line takes the reference shader's order
 * (EMITTANCE > 0 emits, else REFR > 0 is glass, else REFL > 0 a mirror, else SPECEX > 0 with a
 * SPECRGB is Phong, else diffuse), and glass and mirrors take SPECRGB as their colour, as the
 * reference shader multiplies by the specular colour there. Later course years and student
 * projects add keys (TYPE, ALBEDO, METALLIC, ...): they pass through to the JSON rules. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"
#include "import/params.h"
#include "util/array.h"
#include "util/file.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 16

typedef struct textconv {
    const char *src;
    size_t line;
    char *err;
    size_t errlen;
} textconv;

static int tfail(textconv *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    file_error_v(t->err, t->errlen, t->src, t->line, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_number(const char *s, double *out) {
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end) return 0;
    *out = x;
    return 1;
}

/* A value from the tokens after the key: one number, an array of numbers, or the text. Numbers
 * that are not finite stay text, so the JSON loader reports them with their path. */
static cJSON *value_of(char **tok, int n) {
    if (n == 0) return cJSON_CreateTrue();
    double v[MAX_TOKENS];
    int all = 1;
    for (int i = 0; i < n; ++i)
        if (!is_number(tok[i], &v[i]) || !isfinite(v[i])) all = 0;
    if (all && n == 1) return cJSON_CreateNumber(v[0]);
    if (all) return cJSON_CreateDoubleArray(v, n);
    size_t len = 0;
    for (int i = 0; i < n; ++i) len += strlen(tok[i]) + 1;
    char *joined = malloc(len + 1);
    if (!joined) return NULL;
    joined[0] = '\0';
    for (int i = 0; i < n; ++i) {
        if (i) strcat(joined, " ");
        strcat(joined, tok[i]);
    }
    cJSON *s = cJSON_CreateString(joined);
    free(joined);
    return s;
}

static double num_or(const cJSON *o, const char *key, double dflt) {
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The reference shader's choice for a material block without a TYPE line. */
static int settle_material(cJSON *m) {
    if (cJSON_GetObjectItem(m, "TYPE") || cJSON_GetObjectItem(m, "MAT_TYPE")) return 0;
    const char *type = "Diffuse";
    int colour_from_spec = 0;
    const cJSON *spec = cJSON_GetObjectItem(m, "SPECRGB");
    int spec_colour = cJSON_IsArray(spec);
    if (num_or(m, "EMITTANCE", 0.0) > 0.0)
        type = "Emitting";
    else if (num_or(m, "REFR", 0.0) > 0.0) {
        type = "Refractive";
        colour_from_spec = spec_colour;
    } else if (num_or(m, "REFL", 0.0) > 0.0) {
        type = "Specular";
        colour_from_spec = spec_colour;
    } else if (num_or(m, "SPECEX", 0.0) > 0.0 && spec_colour) {
        int black = 1;
        for (const cJSON *e = spec->child; e; e = e->next)
            if (cJSON_IsNumber(e) && e->valuedouble > 0.0) black = 0;
        if (!black) type = "Phong";
    }
    if (colour_from_spec) {
        cJSON *copy = cJSON_Duplicate(spec, 1);
        if (!copy) return -1;
        if (cJSON_GetObjectItem(m, "RGB"))
            cJSON_ReplaceItemInObject(m, "RGB", copy);
        else
            cJSON_AddItemToObject(m, "RGB", copy);
    }
    return cJSON_AddStringToObject(m, "TYPE", type) ? 0 : -1;
}

char *scene_text_to_json(const char *text, size_t size, const char *source_name, const char *base_dir, char *err,
                         size_t errlen) {
    (void)base_dir; /* FILE names stay relative: the JSON loader resolves them against the same directory */
    textconv t = {source_name ? source_name : "<scene>", 0, err, errlen};
    cJSON *root = cJSON_CreateObject();
    cJSON *mats = cJSON_AddObjectToObject(root, "Materials");
    cJSON *objs = cJSON_AddArrayToObject(root, "Objects");
    cJSON *cam = NULL, *cur = NULL;
    enum { SEC_NONE, SEC_MATERIAL, SEC_CAMERA, SEC_OBJECT } sec = SEC_NONE;
    int want_type = 0, want_file = 0, nmat = 0;
    size_t object_line = 0; /* where the current OBJECT block started */
    char *copy = malloc(size + 1);
    if (!root || !mats || !objs || !copy) {
        cJSON_Delete(root);
        free(copy);
        snprintf(err, errlen, "%s: out of memory", t.src);
        return NULL;
    }
    memcpy(copy, text, size);
    copy[size] = '\0';
    int rc = 0;
    char *save = NULL;
    for (char *line = copy; line && rc == 0; line = save) {
        char *nl = strchr(line, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        t.line++;
        char *c = strstr(line, "//");
        if (c) *c = '\0';
        char *tok[MAX_TOKENS + 1];
        int n = 0;
        char *tsave = NULL;
        for (char *p = strtok_r(line, " \t\r\f\v", &tsave); p; p = strtok_r(NULL, " \t\r\f\v", &tsave)) {
            if (n == MAX_TOKENS) {
                rc = tfail(&t, "too many values on one line (at most %d)", MAX_TOKENS - 1);
                break;
            }
            tok[n++] = p;
        }
        if (rc || n == 0) continue;
        const char *k = tok[0];
        /* an object's "material N" line is a key, not the start of a material block */
        int obj_material_key =
            sec == SEC_OBJECT && prm_ci_equal(k, "MATERIAL") && cur && !cJSON_GetObjectItem(cur, "MATERIAL");
        if (prm_ci_equal(k, "MATERIAL") && !obj_material_key) {
            if (sec == SEC_MATERIAL && settle_material(cur)) {
                rc = tfail(&t, "out of memory");
                break;
            }
            char name[64];
            if (n >= 2)
                snprintf(name, sizeof name, "%.60s", tok[1]);
            else
                snprintf(name, sizeof name, "%d", nmat);
            nmat++;
            if (cJSON_GetObjectItemCaseSensitive(mats, name)) {
                rc = tfail(&t, "material %s is defined twice", name);
                break;
            }
            cur = cJSON_AddObjectToObject(mats, name);
            sec = SEC_MATERIAL;
            continue;
        }
        if (prm_ci_equal(k, "CAMERA")) {
            if (sec == SEC_MATERIAL && settle_material(cur)) {
                rc = tfail(&t, "out of memory");
                break;
            }
            if (cam) {
                rc = tfail(&t, "a second CAMERA block (a scene has one camera)");
                break;
            }
            cam = cur = cJSON_AddObjectToObject(root, "Camera");
            sec = SEC_CAMERA;
            continue;
        }
        if (prm_ci_equal(k, "OBJECT")) {
            if (sec == SEC_MATERIAL && settle_material(cur)) {
                rc = tfail(&t, "out of memory");
                break;
            }
            if (sec == SEC_OBJECT && want_type) {
                t.line = object_line;
                rc = tfail(&t, "this OBJECT has no type line (cube, sphere, mesh)");
                break;
            }
            object_line = t.line;
            cur = cJSON_CreateObject();
            if (!cur || !cJSON_AddItemToArray(objs, cur)) {
                cJSON_Delete(cur);
                rc = tfail(&t, "out of memory");
                break;
            }
            if (n >= 2 && !cJSON_AddStringToObject(cur, "NAME", tok[1])) {
                rc = tfail(&t, "out of memory");
                break;
            }
            sec = SEC_OBJECT;
            want_type = 1;
            want_file = 0;
            continue;
        }
        if (sec == SEC_NONE) {
            rc = tfail(&t, "\"%.40s\" outside a MATERIAL, CAMERA or OBJECT block", k);
            break;
        }
        if (sec == SEC_OBJECT && want_type) {
            /* the type line: cube, sphere, mesh [FILE], or a model file name itself */
            want_type = 0;
            int is_file = strchr(k, '.') || strchr(k, '/');
            if (!cJSON_AddStringToObject(cur, "TYPE", is_file ? "mesh" : k)) {
                rc = tfail(&t, "out of memory");
                break;
            }
            const char *file = is_file ? k : (n >= 2 ? tok[1] : NULL);
            if (file && !cJSON_AddStringToObject(cur, "FILE", file)) {
                rc = tfail(&t, "out of memory");
                break;
            }
            want_file = !file && (prm_ci_equal(k, "mesh") || prm_ci_equal(k, "obj") || prm_ci_equal(k, "gltf"));
            continue;
        }
        if (sec == SEC_OBJECT && want_file) {
            want_file = 0;
            if (n == 1 && (strchr(k, '.') || strchr(k, '/'))) {
                if (!cJSON_AddStringToObject(cur, "FILE", k)) {
                    rc = tfail(&t, "out of memory");
                    break;
                }
                continue;
            }
        }
        char key[80];
        snprintf(key, sizeof key, "%.70s", k);
        /* keys whose text-format meaning differs from caustic JSON's */
        if (sec == SEC_MATERIAL && prm_ci_equal(key, "TEXTURE") && n == 2 && isdigit((unsigned char)tok[1][0]))
            snprintf(key, sizeof key, "TEXTURE_ID"); /* a texture slot number, not a file */
        if (sec == SEC_OBJECT && prm_ci_equal(key, "MATERIAL")) {
            if (n < 2) {
                rc = tfail(&t, "material needs a name or number");
                break;
            }
            if (!cJSON_AddStringToObject(cur, "MATERIAL", tok[1])) {
                rc = tfail(&t, "out of memory");
                break;
            }
            continue;
        }
        if (cJSON_GetObjectItem(cur, key)) {
            rc = tfail(&t, "%.40s is given twice in this block", key);
            break;
        }
        cJSON *v = value_of(tok + 1, n - 1);
        if (!v || !cJSON_AddItemToObject(cur, key, v)) {
            cJSON_Delete(v);
            rc = tfail(&t, "out of memory");
            break;
        }
    }
    if (rc == 0 && sec == SEC_MATERIAL && settle_material(cur)) rc = tfail(&t, "out of memory");
    if (rc == 0 && sec == SEC_OBJECT && want_type) {
        t.line = object_line;
        rc = tfail(&t, "this OBJECT has no type line (cube, sphere, mesh)");
    }
    if (rc == 0 && !cam) {
        t.line = 0;
        snprintf(err, errlen, "%s: no CAMERA block (not a CIS 565 text scene?)", t.src);
        text_one_line(err);
        rc = -1;
    }
    free(copy);
    char *json = NULL;
    if (rc == 0) {
        json = cJSON_Print(root);
        if (!json) snprintf(err, errlen, "%s: out of memory", t.src);
    }
    cJSON_Delete(root);
    if (!json) return NULL;
    /* cJSON_Print's buffer comes from cJSON's allocator (malloc by default): hand out a malloc'd copy */
    size_t len = strlen(json);
    char *out = malloc(len + 1);
    if (out)
        memcpy(out, json, len + 1);
    else
        snprintf(err, errlen, "%s: out of memory", t.src);
    cJSON_free(json);
    return out;
}
