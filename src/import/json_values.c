/* Typed values of the JSON reader over cJSON (the JSON side of params.h: the path of each value
 * is its JSON path) and the key canonicalisation the dialect tables drive. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/json_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *json_type(const cJSON *v) {
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

static int key_matches(const keyalias *a, const char *key, const char *norm, const cJSON *v) {
    if (a->want == WANT_STRING && !cJSON_IsString(v)) return 0;
    if (a->want == WANT_NONSTRING && cJSON_IsString(v)) return 0;
    if (strcmp(a->name, key) == 0) return 1;
    if (a->exact) return 0;
    char cn[64];
    prm_normalise(a->name, cn, sizeof cn);
    return strcmp(cn, norm) == 0 || prm_in_list(norm, a->aliases);
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
int json_canonicalize(loader *L, cJSON *obj, const char *jpath, const char *dsec, const keyalias *tab) {
    uint64_t seen = 0;
    int ntab = 0;
    while (tab[ntab].name) ++ntab;
    for (cJSON *c = obj->child, *next; c; c = next) {
        next = c->next;
        const char *k = c->string ? c->string : "";
        char p[PRM_WHERE], norm[64], dk[160];
        prm_jkey(p, jpath, k);
        prm_normalise(k, norm, sizeof norm);
        int slot = -1;
        for (int i = 0; i < ntab && slot < 0; ++i)
            if (strcmp(tab[i].name, k) == 0 && key_matches(&tab[i], k, norm, c)) slot = i;
        for (int i = 0; i < ntab && slot < 0; ++i)
            if (key_matches(&tab[i], k, norm, c)) slot = i;
        if (slot < 0 || tab[slot].ignored) {
            snprintf(dk, sizeof dk, "%s.%.64s", dsec, norm);
            int rc;
            if (slot >= 0) {
                rc = prm_warn(&L->P, dk, p, "%s; ignored", tab[slot].ignored);
            } else {
                const char *names[72];
                int nn = 0;
                for (int i = 0; i < ntab && nn < 71; ++i)
                    if (!tab[i].ignored) names[nn++] = tab[i].name;
                names[nn] = NULL;
                const char *sug = prm_suggest(k, names);
                if (sug)
                    rc = prm_warn(&L->P, dk, p, "unknown key, ignored (did you mean \"%s\"?)", sug);
                else
                    rc = prm_warn(&L->P, dk, p, "unknown key, ignored");
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
                if (strcmp(k, tab[slot].name) == 0) return prm_fail(&L->P, p, "duplicate key");
                return prm_fail(&L->P, p, "duplicate key: \"%.64s\" is another spelling of %s", k, tab[slot].name);
            }
            seen |= 1ull << first;
        }
        if (rename_key(c, tab[slot].name)) return prm_fail(&L->P, p, "out of memory");
    }
    return 0;
}

int json_check_keys(loader *L, cJSON *obj, const char *jpath, const char *dsec, const char *const *allowed) {
    keyalias tab[24];
    int n = 0;
    for (; allowed[n] && n < 23; ++n) {
        memset(&tab[n], 0, sizeof tab[n]);
        tab[n].name = allowed[n];
        tab[n].exact = 1;
    }
    tab[n].name = NULL;
    return json_canonicalize(L, obj, jpath, dsec, tab);
}

const cJSON *json_get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* ---- typed values ---------------------------------------------------------------------------- */
/* A finite number with lo < x (lo_open) or lo <= x, and x <= hi. */
int json_range(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, double *out) {
    if (!cJSON_IsNumber(v)) return prm_fail(&L->P, p, "expected a number, got %s", json_type(v));
    if (prm_check_range(&L->P, p, v->valuedouble, lo, lo_open, hi)) return -1;
    *out = v->valuedouble;
    return 0;
}

int json_int(loader *L, const cJSON *v, const char *p, long lo, long hi, long *out) {
    if (!cJSON_IsNumber(v)) return prm_fail(&L->P, p, "expected an integer, got %s", json_type(v));
    double x = v->valuedouble;
    if (!isfinite(x) || x != floor(x)) return prm_fail(&L->P, p, "expected an integer, got %g", x);
    if (x < (double)lo || x > (double)hi)
        return prm_fail(&L->P, p, "%g is out of range: must be between %ld and %ld", x, lo, hi);
    *out = (long)x;
    return 0;
}

/* Fixed-length numeric array, every element range-checked (errors name the element). */
int json_array(loader *L, const cJSON *v, const char *p, int n, double lo, int lo_open, double hi, double *out) {
    if (!cJSON_IsArray(v)) return prm_fail(&L->P, p, "expected an array of %d numbers, got %s", n, json_type(v));
    int count = 0;
    for (const cJSON *e = v->child; e; e = e->next) {
        if (count >= n) return prm_fail(&L->P, p, "expected %d numbers, got more", n);
        char pe[PRM_WHERE];
        prm_jindex(pe, p, (size_t)count);
        if (json_range(L, e, pe, lo, lo_open, hi, &out[count])) return -1;
        ++count;
    }
    if (count != n) return prm_fail(&L->P, p, "expected %d numbers, got %d", n, count);
    return 0;
}

int json_vec3(loader *L, const cJSON *v, const char *p, double lo, int lo_open, double hi, vec3 *out) {
    double a[3];
    if (json_array(L, v, p, 3, lo, lo_open, hi, a)) return -1;
    *out = v3((float)a[0], (float)a[1], (float)a[2]);
    return 0;
}

/* Optional vec3 member: leaves *out (the default) alone when absent. */
int json_opt_vec3(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open, double hi,
                  vec3 *out) {
    const cJSON *v = json_get(obj, key);
    if (!v) return 0;
    char p[PRM_WHERE];
    prm_jkey(p, jpath, key);
    return json_vec3(L, v, p, lo, lo_open, hi, out);
}

int json_opt_number(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, int lo_open, double hi,
                    double *out) {
    const cJSON *v = json_get(obj, key);
    if (!v) return 0;
    char p[PRM_WHERE];
    prm_jkey(p, jpath, key);
    return json_range(L, v, p, lo, lo_open, hi, out);
}

int json_opt_soft(loader *L, const cJSON *obj, const char *jpath, const char *key, double lo, double hi, double *out) {
    const cJSON *v = json_get(obj, key);
    if (!v) return 0;
    char p[PRM_WHERE], dk[96];
    prm_jkey(p, jpath, key);
    double x = 0.0;
    if (json_range(L, v, p, -1e30, 0, 1e30, &x)) return -1;
    snprintf(dk, sizeof dk, "soft range %.64s", key);
    if (prm_soft_range(&L->P, dk, p, key, "", lo, hi, &x)) return -1;
    *out = x;
    return 0;
}

int json_string(loader *L, const cJSON *v, const char *p, const char **out) {
    if (!cJSON_IsString(v) || !v->valuestring) return prm_fail(&L->P, p, "expected a string, got %s", json_type(v));
    *out = v->valuestring;
    return 0;
}

int json_missing(loader *L, const char *jpath, const char *key) {
    return prm_fail(&L->P, jpath, "missing required key \"%s\"", key);
}

/* Picks `word` from `names` (case-insensitive); -1 with a "did you mean" error otherwise. */
int json_enum(loader *L, const cJSON *v, const char *p, const char *what, const char *const *names) {
    const char *w = "";
    if (json_string(L, v, p, &w)) return -1;
    return prm_enum(&L->P, p, w, what, names);
}

/* A colour key: [r,g,b], or one number for grey (the text format's "RGB 1" in some dialects). */
int json_colour(loader *L, const cJSON *v, const char *p, double hi, vec3 *out) {
    if (cJSON_IsNumber(v)) {
        double g = 0.0;
        if (json_range(L, v, p, 0.0, 0, hi, &g)) return -1;
        *out = v3s((float)g);
        return 0;
    }
    return json_vec3(L, v, p, 0.0, 0, hi, out);
}

/* A flag given as a boolean or a number (0 = off). */
int json_flag(loader *L, const cJSON *v, const char *p, int *out) {
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 0;
    }
    double x = 0.0;
    if (json_range(L, v, p, -1e30, 0, 1e30, &x)) return prm_fail(&L->P, p, "expected true/false or a number");
    *out = x > 0.0;
    return 0;
}

int json_matrix(loader *L, const cJSON *v, const char *jpath, xform *m) {
    char p[PRM_WHERE];
    prm_jkey(p, jpath, "MATRIX");
    double a[16];
    if (json_array(L, v, p, 16, -MAX_MATRIX, 0, MAX_MATRIX, a)) return -1;
    if (a[12] != 0.0 || a[13] != 0.0 || a[14] != 0.0 || a[15] != 1.0)
        return prm_fail(&L->P, p,
                        "the last row must be [0, 0, 0, 1] (caustic's transforms are affine), got [%g, %g, %g, %g]",
                        a[12], a[13], a[14], a[15]);
    xform x;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) x.m[i][j] = (float)a[4 * i + j];
    *m = xform_mul(&x, m);
    return 0;
}

/* FILE keys are relative to the scene file's directory. Caller frees. */
char *json_resolve_path(const loader *L, const char *file) {
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
