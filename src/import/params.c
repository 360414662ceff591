/* The parameter module of every reader (params.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/params.h"
#include "caustic.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnostics ------------------------------------------------------------------------------- */
void prm_init(prm_ctx *c, const char *src, int strict, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    c->src = src ? src : "<scene>";
    c->strict = strict;
    c->err = err;
    c->errlen = errlen;
}

static void format_line(const prm_ctx *c, char *out, size_t n, const char *where, const char *msg) {
    if (where && *where)
        snprintf(out, n, c->line_format ? "%s:%s: %s" : "%s: %s: %s", c->src, where, msg);
    else
        snprintf(out, n, "%s: %s", c->src, msg);
    /* names and paths come from the file: keep the message one printable line */
    text_one_line(out);
}

int prm_fail(prm_ctx *c, const char *where, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen) format_line(c, c->err, c->errlen, where, msg);
    return -1;
}

void prm_note(prm_ctx *c, const char *dedup, const char *where, const char *msg) {
    for (size_t i = 0; i < c->npending; ++i)
        if (strcmp(c->pending[i].key, dedup) == 0) {
            c->pending[i].more++;
            return;
        }
    char line[1100];
    format_line(c, line, sizeof line, where, msg);
    prm_pending *grown = realloc(c->pending, (c->npending + 1) * sizeof *grown);
    if (!grown) return; /* a warning lost to memory pressure is not worth failing the load */
    c->pending = grown;
    prm_pending *w = &c->pending[c->npending];
    w->key = strdup(dedup);
    w->message = strdup(line);
    w->more = 0;
    if (!w->key || !w->message) {
        free(w->key);
        free(w->message);
        return;
    }
    c->npending++;
}

int prm_warn(prm_ctx *c, const char *dedup, const char *where, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->strict) return prm_fail(c, where, "%s (an error with --strict)", msg);
    for (int i = 0; where && i < c->ndefines; ++i) {
        size_t n = strcspn(c->defines[i], "=");
        if (strlen(where) == n && !strncmp(where, c->defines[i], n)) return prm_fail(c, where, "%s (set by -D)", msg);
    }
    prm_note(c, dedup, where, msg);
    return 0;
}

void prm_flush(prm_ctx *c, const scene *s, int report) {
    for (size_t i = 0; i < c->npending; ++i) {
        prm_pending *w = &c->pending[i];
        if (report && s) {
            if (w->more)
                scene_warn(s, "%s (and %zu more like it)", w->message, w->more);
            else
                scene_warn(s, "%s", w->message);
        }
        free(w->key);
        free(w->message);
    }
    free(c->pending);
    c->pending = NULL;
    c->npending = 0;
}

/* ---- where ------------------------------------------------------------------------------------- */
static int is_ident(const char *k) {
    if (!*k) return 0;
    for (; *k; ++k)
        if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-') return 0;
    return 1;
}

void prm_jkey(char out[PRM_WHERE], const char *parent, const char *key) {
    if (is_ident(key)) {
        snprintf(out, PRM_WHERE, "%.180s%s%.64s", parent, *parent ? "." : "", key);
        return;
    }
    char q[72];
    size_t j = 0;
    for (const char *k = key; *k && j < 64; ++k) {
        unsigned char ch = (unsigned char)*k;
        q[j++] = (ch < 32 || ch == 127 || ch == '"' || ch == '\\') ? '?' : (char)ch;
    }
    q[j] = '\0';
    snprintf(out, PRM_WHERE, "%.180s[\"%.64s%s\"]", parent, q, key[j] ? "..." : "");
}

void prm_jindex(char out[PRM_WHERE], const char *parent, size_t i) {
    snprintf(out, PRM_WHERE, "%.180s[%zu]", parent, i);
}

void prm_line(char out[PRM_WHERE], size_t line) { snprintf(out, PRM_WHERE, "%zu", line); }

/* ---- names ------------------------------------------------------------------------------------- */
int prm_ci_equal(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return 0;
    return *a == *b;
}

int prm_ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && prm_ci_equal(s + n - m, suffix);
}

int prm_edit_distance(const char *a, const char *b) {
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

/* caustic.h's did-you-mean (the command line's flags, commands and scene names): the readers' */
const char *caustic_suggest(const char *word, const char *const *candidates) { return prm_suggest(word, candidates); }

const char *prm_suggest(const char *word, const char *const *cands) {
    const char *best = NULL;
    int limit = strlen(word) <= 3 ? 1 : 2, bestd = limit + 1;
    for (int i = 0; cands[i]; ++i) {
        if (prm_ci_equal(word, cands[i])) return cands[i];
        int dd = prm_edit_distance(word, cands[i]);
        if (dd < bestd) {
            best = cands[i];
            bestd = dd;
        }
    }
    return best;
}

void prm_join(char *out, size_t n, const char *const *names) {
    out[0] = '\0';
    size_t used = 0;
    for (int i = 0; names[i] && used + 1 < n; ++i) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

void prm_normalise(const char *k, char *out, size_t n) {
    size_t j = 0;
    for (; *k && j + 1 < n; ++k)
        if (*k != '_' && *k != '-' && *k != ' ') out[j++] = (char)toupper((unsigned char)*k);
    out[j] = '\0';
}

int prm_in_list(const char *norm, const char *list) {
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

int prm_enum(prm_ctx *c, const char *where, const char *w, const char *what, const char *const *names) {
    for (int i = 0; names[i]; ++i)
        if (prm_ci_equal(w, names[i])) return i;
    char list[512];
    prm_join(list, sizeof list, names);
    const char *sug = prm_suggest(w, names);
    if (sug) return prm_fail(c, where, "unknown %s \"%.64s\" (did you mean \"%s\"?)", what, w, sug);
    return prm_fail(c, where, "unknown %s \"%.64s\" (expected one of: %s)", what, w, list);
}

/* ---- numbers ----------------------------------------------------------------------------------- */
int prm_check_range(prm_ctx *c, const char *where, double x, double lo, int lo_open, double hi) {
    if (!isfinite(x)) return prm_fail(c, where, "number is not finite");
    if (lo_open ? !(x > lo) : !(x >= lo))
        return prm_fail(c, where, "%g is out of range: must be %s %g", x, lo_open ? ">" : ">=", lo);
    if (!(x <= hi)) return prm_fail(c, where, "%g is out of range: must be <= %g", x, hi);
    return 0;
}

int prm_soft_range(prm_ctx *c, const char *dedup, const char *where, const char *name, const char *unit, double lo,
                   double hi, double *x) {
    if (!isfinite(*x)) return prm_fail(c, where, "%s: number is not finite", name);
    if (*x >= lo && *x <= hi) return 0;
    double y = *x < lo ? lo : hi;
    const char *sp = unit && *unit ? " " : "";
    if (prm_warn(c, dedup, where, "%s: %g is outside [%g, %g]%s%s; clamped to %g", name, *x, lo, hi, sp,
                 unit ? unit : "", y))
        return -1;
    *x = y;
    return 0;
}

/* ---- parameter lists --------------------------------------------------------------------------- */
void prm_list_init(prm_list *l, prm_ctx *c, const char *owner) {
    memset(l, 0, sizeof *l);
    l->ctx = c;
    l->owner = owner ? owner : "this item";
}

void prm_list_free(prm_list *l) {
    for (size_t i = 0; i < l->n; ++i) {
        free(l->v[i].name);
        free(l->v[i].nums);
        free(l->v[i].str);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static prm_value *find(const prm_list *l, const char *name) {
    for (size_t i = 0; i < l->n; ++i)
        if (strcmp(l->v[i].name, name) == 0) return &l->v[i];
    return NULL;
}

static prm_value *add(prm_list *l, const char *name, prm_type type, const char *where) {
    prm_value *old = find(l, name);
    if (old) {
        prm_fail(l->ctx, where, "parameter \"%.64s\" of %s given twice (first at %s)", name, l->owner, old->where);
        return NULL;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        prm_value *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            prm_fail(l->ctx, where, "out of memory");
            return NULL;
        }
        l->v = grown;
        l->cap = cap;
    }
    prm_value *v = &l->v[l->n];
    memset(v, 0, sizeof *v);
    v->name = strdup(name);
    if (!v->name) {
        prm_fail(l->ctx, where, "out of memory");
        return NULL;
    }
    v->type = type;
    snprintf(v->where, sizeof v->where, "%s", where ? where : "");
    l->n++;
    return v;
}

int prm_add_numbers(prm_list *l, const char *name, const double *nums, size_t n, const char *where) {
    prm_value *v = add(l, name, PRM_NUMBER, where);
    if (!v) return -1;
    v->nums = malloc((n ? n : 1) * sizeof(double));
    if (!v->nums) return prm_fail(l->ctx, where, "out of memory");
    if (n) memcpy(v->nums, nums, n * sizeof(double));
    v->n = n;
    return 0;
}

int prm_add_string(prm_list *l, const char *name, const char *str, const char *where) {
    prm_value *v = add(l, name, PRM_STRING, where);
    if (!v) return -1;
    v->str = strdup(str);
    if (!v->str) return prm_fail(l->ctx, where, "out of memory");
    v->n = 1;
    return 0;
}

int prm_add_bool(prm_list *l, const char *name, int b, const char *where) {
    double x = b ? 1.0 : 0.0;
    if (prm_add_numbers(l, name, &x, 1, where)) return -1;
    l->v[l->n - 1].type = PRM_BOOL;
    return 0;
}

static const char *type_name(prm_type t) {
    return t == PRM_NUMBER ? "a number" : t == PRM_STRING ? "a string" : "a boolean";
}

/* The parameter, checked to be of `type` with `n` values; NULL when absent (*rc = 0) or wrong (*rc = -1). */
static prm_value *lookup(prm_list *l, const char *name, prm_type type, size_t n, int *rc) {
    *rc = 0;
    prm_value *v = find(l, name);
    if (!v) return NULL;
    v->used = 1;
    if (v->type != type) {
        *rc = prm_fail(l->ctx, v->where, "parameter \"%.64s\" of %s: expected %s, got %s", name, l->owner,
                       type_name(type), type_name(v->type));
        return NULL;
    }
    if (v->n != n) {
        *rc = prm_fail(l->ctx, v->where, "parameter \"%.64s\" of %s: expected %zu value%s, got %zu", name, l->owner, n,
                       n == 1 ? "" : "s", v->n);
        return NULL;
    }
    return v;
}

static int soft(prm_list *l, const prm_value *v, const char *unit, double lo, double hi, double *x) {
    char dedup[200];
    snprintf(dedup, sizeof dedup, "%.80s.%.64s range", l->owner, v->name);
    char name[200];
    snprintf(name, sizeof name, "parameter \"%.64s\" of %.80s", v->name, l->owner);
    return prm_soft_range(l->ctx, dedup, v->where, name, unit, lo, hi, x);
}

int prm_float(prm_list *l, const char *name, double def, double lo, double hi, const char *unit, double *out) {
    int rc;
    prm_value *v = lookup(l, name, PRM_NUMBER, 1, &rc);
    *out = def;
    if (!v) return rc;
    double x = v->nums[0];
    if (soft(l, v, unit, lo, hi, &x)) return -1;
    *out = x;
    return 0;
}

int prm_int(prm_list *l, const char *name, long def, long lo, long hi, long *out) {
    int rc;
    prm_value *v = lookup(l, name, PRM_NUMBER, 1, &rc);
    *out = def;
    if (!v) return rc;
    double x = v->nums[0];
    if (!isfinite(x) || x != floor(x))
        return prm_fail(l->ctx, v->where, "parameter \"%.64s\" of %s: expected an integer, got %g", name, l->owner, x);
    if (soft(l, v, "", (double)lo, (double)hi, &x)) return -1;
    *out = (long)x;
    return 0;
}

int prm_vec3(prm_list *l, const char *name, vec3 def, double lo, double hi, const char *unit, vec3 *out) {
    int rc;
    prm_value *v = lookup(l, name, PRM_NUMBER, 3, &rc);
    *out = def;
    if (!v) return rc;
    double a[3];
    for (int i = 0; i < 3; ++i) {
        a[i] = v->nums[i];
        if (soft(l, v, unit, lo, hi, &a[i])) return -1;
    }
    *out = v3((float)a[0], (float)a[1], (float)a[2]);
    return 0;
}

int prm_string(prm_list *l, const char *name, const char *def, const char **out) {
    int rc;
    prm_value *v = lookup(l, name, PRM_STRING, 1, &rc);
    *out = def;
    if (!v) return rc;
    *out = v->str;
    return 0;
}

int prm_bool(prm_list *l, const char *name, int def, int *out) {
    int rc;
    prm_value *v = lookup(l, name, PRM_BOOL, 1, &rc);
    *out = def;
    if (!v) return rc;
    *out = v->nums[0] != 0.0;
    return 0;
}

int prm_has(const prm_list *l, const char *name) { return find(l, name) != NULL; }

int prm_check_known(prm_list *l, const char *const *known) {
    for (size_t i = 0; i < l->n; ++i) {
        prm_value *v = &l->v[i];
        int ok = 0;
        for (int k = 0; known[k] && !ok; ++k) ok = strcmp(known[k], v->name) == 0;
        if (ok) continue;
        v->used = 1; /* said once, here, not again by the unused report */
        char dedup[200];
        snprintf(dedup, sizeof dedup, "unknown %.80s.%.64s", l->owner, v->name);
        const char *sug = prm_suggest(v->name, known);
        int rc = sug ? prm_warn(l->ctx, dedup, v->where, "unknown parameter \"%.64s\" of %s (did you mean \"%s\"?)",
                                v->name, l->owner, sug)
                     : prm_warn(l->ctx, dedup, v->where, "unknown parameter \"%.64s\" of %s", v->name, l->owner);
        if (rc) return -1;
    }
    return 0;
}

int prm_report_unused(prm_list *l) {
    for (size_t i = 0; i < l->n; ++i) {
        prm_value *v = &l->v[i];
        if (v->used) continue;
        char dedup[200];
        snprintf(dedup, sizeof dedup, "unused %.80s.%.64s", l->owner, v->name);
        if (prm_warn(l->ctx, dedup, v->where, "parameter \"%.64s\" of %s is not used", v->name, l->owner)) return -1;
        v->used = 1;
    }
    return 0;
}
