/* The pbrt-v4 reader: parameter lists ("type name" [values] after a directive), with pbrt-v4's
 * type names and first-value-wins rule, and the colours (rgb, spectrum, blackbody, textures) and
 * floats read from them (pbrt_internal.h lists the files). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/pbrt_internal.h"
#include "image/image.h"
#include "kernel/bidir_limits.h"
#include "scene/material.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pbrt_plist_free(plist *pl) {
    prm_list_free(&pl->l);
    free(pl->types);
    pl->types = NULL;
}

const char *pbrt_ptype(const plist *pl, const char *name) {
    for (size_t i = 0; i < pl->l.n; ++i)
        if (!strcmp(pl->l.v[i].name, name)) return pl->types[i];
    return NULL;
}

prm_value *pbrt_pfind(plist *pl, const char *name) {
    for (size_t i = 0; i < pl->l.n; ++i)
        if (!strcmp(pl->l.v[i].name, name)) return &pl->l.v[i];
    return NULL;
}

/* numbers of a parameter (marked used); NULL when absent */
const double *pbrt_pnums(R *r, plist *pl, const char *name, size_t *n) {
    prm_value *v = pbrt_pfind(pl, name);
    if (!v) return NULL;
    v->used = 1;
    if (v->type != PRM_NUMBER) {
        prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: expected numbers", name, pl->owner);
        *n = (size_t)-1;
        return NULL;
    }
    *n = v->n;
    return v->nums;
}

static int is_type(const char *t) {
    static const char *const types[] = {"integer",  "float",     "point2", "vector2", "point3",  "vector3",
                                        "normal",   "normal3",   "point",  "vector",  "color",   "rgb",
                                        "spectrum", "blackbody", "bool",   "string",  "texture", NULL};
    for (int i = 0; types[i]; ++i)
        if (!strcmp(t, types[i])) return 1;
    return 0;
}

int pbrt_tok_is_word(const pbrt_token *t, const char *w) {
    return t->type == PTK_WORD && t->len == strlen(w) && !memcmp(t->text, w, t->len);
}

/* "type name" [values] ... after a directive */
int pbrt_parse_params(R *r, plist *pl, const char *owner, const pbrt_token *at) {
    memset(pl, 0, sizeof *pl);
    snprintf(pl->owner, sizeof pl->owner, "%s", owner);
    pbrt_where(&r->lx, at, pl->where);
    prm_list_init(&pl->l, &r->ctx, pl->owner);
    size_t capt = 0;
    double *nums = NULL;
    size_t nn = 0, capn = 0;
    char *strs = NULL;
    size_t ns = 0, caps = 0, nstr = 0;
    int rc = 0;
    for (;;) {
        pbrt_token t;
        if (pbrt_lex_peek(&r->lx, &t)) goto fail;
        if (t.type != PTK_STRING) break;
        char decl[160];
        if (t.len >= sizeof decl) break;
        memcpy(decl, t.text, t.len);
        decl[t.len] = '\0';
        char type[32], name[128], extra[8];
        int k = sscanf(decl, " %31s %127s %7s", type, name, extra);
        if (k != 2) break; /* not "type name": the next directive's argument, or an error there */
        pbrt_lex_next(&r->lx, &t);
        char w[PRM_WHERE];
        pbrt_where(&r->lx, &t, w);
        if (!strcmp(type, "point")) strcpy(type, "point3");
        if (!strcmp(type, "vector")) strcpy(type, "vector3");
        if (!strcmp(type, "normal3")) strcpy(type, "normal");
        if (!strcmp(type, "color")) strcpy(type, "rgb");
        if (!is_type(type)) {
            prm_fail(&r->ctx, w, "unknown parameter type \"%s\" in \"%s\" of %s", type, decl, owner);
            goto fail;
        }
        nn = ns = nstr = 0;
        int nbool = 0, bval = 0;
        pbrt_token v;
        if (pbrt_lex_next(&r->lx, &v)) goto fail;
        int bracket = v.type == PTK_LBRACK;
        for (;;) {
            if (bracket && pbrt_lex_next(&r->lx, &v)) goto fail;
            if (bracket && v.type == PTK_RBRACK) break;
            if (v.type == PTK_NUMBER) {
                if (grow((void **)&nums, &capn, nn + 1, sizeof *nums)) goto nomem;
                nums[nn++] = v.num;
            } else if (v.type == PTK_STRING) {
                if (grow((void **)&strs, &caps, ns + v.len + 2, 1)) goto nomem;
                if (nstr) strs[ns++] = '\x1f';
                memcpy(strs + ns, v.text, v.len);
                ns += v.len;
                strs[ns] = '\0';
                nstr++;
            } else if (pbrt_tok_is_word(&v, "true") || pbrt_tok_is_word(&v, "false")) {
                nbool++;
                bval = pbrt_tok_is_word(&v, "true");
            } else {
                pbrt_where(&r->lx, &v, w);
                if (v.type == PTK_EOF)
                    prm_fail(&r->ctx, w, "parameter \"%s\" of %s: the file ends inside its values ('[' without ']')",
                             name, owner);
                else
                    prm_fail(&r->ctx, w, "parameter \"%s\" of %s: \"%.*s\" is not a value", name, owner,
                             (int)(v.len > 40 ? 40 : v.len), v.text);
                goto fail;
            }
            if (!bracket) break;
        }
        pbrt_where(&r->lx, &t, w);
        int mixed = (nn > 0) + (nstr > 0) + (nbool > 0);
        if (mixed > 1) {
            prm_fail(&r->ctx, w, "parameter \"%s\" of %s mixes numbers, strings and booleans", name, owner);
            goto fail;
        }
        prm_value *dup = pbrt_pfind(pl, name);
        if (dup) { /* pbrt-v4 keeps the first value */
            char key[200];
            snprintf(key, sizeof key, "twice %.100s %.64s", owner, name);
            if (UNSUPPORTED(r, key, w,
                            "parameter \"%s\" of %s given twice (first at %s); the first is used, as pbrt-v4 "
                            "does",
                            name, owner, dup->where))
                goto fail;
            continue;
        }
        if (grow((void **)&pl->types, &capt, pl->l.n + 1, sizeof *pl->types)) goto nomem;
        snprintf(pl->types[pl->l.n], sizeof pl->types[0], "%.15s", type);
        if (!strcmp(type, "bool")) {
            if (nstr == 1 && (!strcmp(strs, "true") || !strcmp(strs, "false"))) nbool = 1, bval = !strcmp(strs, "true");
            if (nbool != 1) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected one of true or false", name, owner);
                goto fail;
            }
            rc = prm_add_bool(&pl->l, name, bval, w);
        } else if (!strcmp(type, "string") || !strcmp(type, "texture")) {
            if (nstr == 0) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected a quoted string", name, owner);
                goto fail;
            }
            rc = prm_add_string(&pl->l, name, strs, w);
        } else if (!strcmp(type, "spectrum") && nstr) {
            rc = prm_add_string(&pl->l, name, strs, w);
        } else {
            if (nstr || nbool) {
                prm_fail(&r->ctx, w, "parameter \"%s\" of %s: expected numbers (type %s)", name, owner, type);
                goto fail;
            }
            rc = prm_add_numbers(&pl->l, name, nums, nn, w);
        }
        if (rc) goto fail;
    }
    free(nums);
    free(strs);
    return 0;
nomem:
    oom(r, pl->where);
fail:
    free(nums);
    free(strs);
    pbrt_plist_free(pl);
    return -1;
}

/* the unused-parameter report, folded into one warning per owner and name */
int pbrt_finish_params(R *r, plist *pl) {
    for (size_t i = 0; i < pl->l.n; ++i) {
        prm_value *v = &pl->l.v[i];
        if (v->used) continue;
        v->used = 1;
        char key[200];
        snprintf(key, sizeof key, "unused %.100s %.64s", pl->owner, v->name);
        if (UNSUPPORTED(r, key, v->where, "parameter \"%s\" of %s is not used by caustic", v->name, pl->owner))
            return -1;
    }
    return 0;
}

/* ---- spectra and textures as parameters ------------------------------------------------------------- */
/* .spd file: "lambda value" pairs */
static int read_spd(R *r, const char *where, const char *path, double **lam, double **val, size_t *n) {
    char why[200];
    size_t len = 0;
    char *text = pbrt_read_file(path, 16u << 20, &len, why, sizeof why);
    if (!text) return prm_fail(&r->ctx, where, "spectrum file \"%s\": %s", path, why);
    size_t cap = 0, k = 0;
    double *all = NULL;
    char *p = text;
    while (*p) {
        if (*p == '#') {
            while (*p && *p != '\n') ++p;
            continue;
        }
        if (isspace((unsigned char)*p) || *p == ',') {
            ++p;
            continue;
        }
        char *end;
        double x = strtod(p, &end);
        if (end == p) {
            free(all);
            free(text);
            return prm_fail(&r->ctx, where, "spectrum file \"%s\": \"%.10s\" is not a number", path, p);
        }
        if (grow((void **)&all, &cap, k + 1, sizeof *all)) {
            free(all);
            free(text);
            return oom(r, where);
        }
        all[k++] = x;
        p = end;
    }
    free(text);
    if (k < 2 || k % 2) {
        free(all);
        return prm_fail(&r->ctx, where, "spectrum file \"%s\": expected (wavelength, value) pairs", path);
    }
    *n = k / 2;
    *lam = malloc(*n * sizeof **lam);
    *val = malloc(*n * sizeof **val);
    if (!*lam || !*val) {
        free(*lam), free(*val), free(all);
        return oom(r, where);
    }
    for (size_t i = 0; i < *n; ++i) (*lam)[i] = all[2 * i], (*val)[i] = all[2 * i + 1];
    free(all);
    return 0;
}

/* pairs -> RGB; illum: normalised to luminance 1 (pbrt divides lights by their luminance) */
static vec3 pairs_rgb(const double *lam, const double *val, size_t n, int illum) {
    if (!illum) return pbrt_reflectance_to_rgb(lam, val, n);
    vec3 c = pbrt_spd_to_rgb(lam, val, n);
    double y = pbrt_luminance(c);
    return y > 0 ? vscale(c, (float)(1.0 / y)) : v3s(0.0f);
}

ptex *pbrt_find_tex(R *r, const char *name, int is_float) {
    for (size_t i = r->nptexs; i-- > 0;)
        if (r->ptexs[i].is_float == is_float && !strcmp(r->ptexs[i].name, name)) return &r->ptexs[i];
    for (size_t i = r->nptexs; i-- > 0;)
        if (!strcmp(r->ptexs[i].name, name)) return &r->ptexs[i];
    return NULL;
}

/* A colour-valued parameter (rgb, spectrum, blackbody, float or texture). illum: an emission
 * spectrum (normalised as pbrt normalises lights; rgb stays as given). tex (may be NULL): a
 * caustic texture where the value is an image or checker texture. Absent: def. */
int pbrt_get_color(R *r, plist *pl, const char *name, vec3 def, int illum, vec3 *out, int *tex) {
    *out = def;
    if (tex) *tex = -1;
    const char *t = pbrt_ptype(pl, name);
    if (!t) return 0;
    prm_value *v = pbrt_pfind(pl, name);
    if (!strcmp(t, "rgb")) return prm_vec3(&pl->l, name, def, 0.0, 1e30, "", out);
    if (!strcmp(t, "float")) {
        double x;
        if (prm_float(&pl->l, name, 0.0, -1e30, 1e30, "", &x)) return -1;
        *out = v3s((float)x);
        return 0;
    }
    if (!strcmp(t, "blackbody") && v->type == PRM_NUMBER && v->n == 2) { /* pbrt-v3: temperature, scale */
        v->used = 1;
        *out = vscale(pbrt_blackbody_rgb(v->nums[0]), (float)v->nums[1]);
        return 0;
    }
    if (!strcmp(t, "blackbody")) {
        double T;
        if (prm_float(&pl->l, name, 6500, 1.0, 1e6, "K", &T)) return -1;
        *out = pbrt_blackbody_rgb(T);
        return 0;
    }
    if (!strcmp(t, "spectrum")) {
        v->used = 1;
        if (v->type == PRM_STRING) {
            if (!pbrt_named_spectrum(v->str, out)) return 0;
            if (!strncmp(v->str, "metal-", 6) || !strncmp(v->str, "glass-", 6) || !strchr(v->str, '.')) {
                vec3 f0;
                char metal[32] = "";
                sscanf(v->str, "metal-%31[^-]", metal);
                if (metal[0] && !pbrt_metal_f0(metal, &f0)) { /* a metal's eta or k where a colour goes */
                    *out = f0;
                    return 0;
                }
                return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: unknown named spectrum \"%s\"", name,
                                pl->owner, v->str);
            }
            pbrt_token at = {0};
            at.file = r->ctx.src;
            at.line = atoi(v->where);
            char *path = pbrt_resolve(&r->lx, &at, v->str);
            if (!path) return oom(r, v->where);
            double *lam = NULL, *val = NULL;
            size_t n = 0;
            int rc = read_spd(r, v->where, path, &lam, &val, &n);
            free(path);
            if (rc) return -1;
            *out = pairs_rgb(lam, val, n, illum);
            free(lam), free(val);
            return 0;
        }
        if (v->n < 2 || v->n % 2)
            return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: a spectrum is (wavelength, value) pairs", name,
                            pl->owner);
        double *lam = malloc(v->n / 2 * sizeof *lam), *val = malloc(v->n / 2 * sizeof *val);
        if (!lam || !val) {
            free(lam), free(val);
            return oom(r, v->where);
        }
        for (size_t i = 0; i < v->n / 2; ++i) lam[i] = v->nums[2 * i], val[i] = v->nums[2 * i + 1];
        *out = pairs_rgb(lam, val, v->n / 2, illum);
        free(lam), free(val);
        return 0;
    }
    if (!strcmp(t, "texture")) {
        const char *tn;
        if (prm_string(&pl->l, name, "", &tn)) return -1;
        ptex *x = pbrt_find_tex(r, tn, 0);
        if (!x)
            return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: no texture named \"%s\"", name, pl->owner, tn);
        *out = x->value;
        if (x->kind == PT_CONST) return 0;
        if (tex && (x->kind == PT_IMAGE || x->kind == PT_CHECKER)) {
            *tex = x->tex;
            return 0;
        }
        char key[120];
        snprintf(key, sizeof key, "texture-standin %s", name);
        return UNSUPPORTED(r, key, v->where,
                           "texture \"%s\" as \"%s\" of %s: caustic cannot texture this parameter; its mean colour "
                           "stands in",
                           tn, name, pl->owner);
    }
    return prm_fail(&r->ctx, v->where, "parameter \"%s\" of %s: a %s cannot be a colour", name, pl->owner, t);
}

/* A float-valued parameter (float, or a float texture: its constant or mean stands in). */
int pbrt_get_float(R *r, plist *pl, const char *name, double def, double lo, double hi, double *out) {
    const char *t = pbrt_ptype(pl, name);
    *out = def;
    if (!t) return 0;
    if (!strcmp(t, "texture")) {
        vec3 c;
        if (pbrt_get_color(r, pl, name, v3s((float)def), 0, &c, NULL)) return -1;
        *out = c.x;
        return 0;
    }
    if (!strcmp(t, "spectrum") || !strcmp(t, "rgb")) {
        vec3 c;
        if (pbrt_get_color(r, pl, name, v3s((float)def), 0, &c, NULL)) return -1;
        *out = (c.x + c.y + c.z) / 3.0;
        return 0;
    }
    return prm_float(&pl->l, name, def, lo, hi, "", out);
}

int pbrt_typed_params(R *r, const pbrt_token *at, const char *directive, const char *noun, char type[64], plist *pl,
                      char w[PRM_WHERE]) {
    pbrt_token ty;
    if (pbrt_lex_next(&r->lx, &ty)) return -1;
    pbrt_where(&r->lx, at, w);
    if (ty.type != PTK_STRING) return prm_fail(&r->ctx, w, "%s: expected its type as a quoted string", directive);
    snprintf(type, 64, "%.*s", (int)(ty.len > 60 ? 60 : ty.len), ty.text);
    char owner[96];
    snprintf(owner, sizeof owner, "%s \"%s\"", noun, type);
    if (pbrt_parse_params(r, pl, owner, at)) return -1;
    pbrt_where(&r->lx, at, w);
    return 0;
}
