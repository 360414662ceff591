/* The parameter module every scene reader shares (JSON and its dialects, the course's text
 * format, and the pbrt-v4 and Mitsuba readers of issue 39): one-line diagnostics that name where a
 * value came from ("FILE: JSON.PATH: problem" or "FILE:LINE: problem"), warnings deduplicated per
 * key and reported once the file has loaded, lenient versus --strict, "did you mean" for unknown
 * names, and typed lookups with defaults, ranges and units over a parameter list that records
 * which parameters a reader used (the unused ones are reported, as pbrt-v4's ParameterDictionary
 * does).
 *
 * Two kinds of range: a hard range (prm_check_range) is what the value must be to mean anything
 * (a negative resolution, an IOR of 0): outside it the load fails. A soft range (the lo/hi of
 * prm_float and friends) is what caustic renders faithfully: outside it the value is clamped with
 * one warning in lenient mode, and refused under --strict. */
#ifndef CAUSTIC_IMPORT_PARAMS_H
#define CAUSTIC_IMPORT_PARAMS_H

#include <stddef.h>
#include "scene/scene.h"

#define PRM_WHERE 256 /* where-strings (JSON paths, FILE:LINE) longer than this are truncated */

/* ---- diagnostics ------------------------------------------------------------------------------- */
typedef struct prm_pending {
    char *key, *message;
    size_t more;
} prm_pending;

typedef struct prm_ctx {
    const char *src; /* the file (or built-in) name every message starts with */
    char *err;       /* the one error line */
    size_t errlen;
    int strict;      /* warnings are errors */
    int line_format; /* where-strings are line numbers ("FILE:LINE: ..."), not JSON paths */
    prm_pending *pending;
    size_t npending;
    /* "PATH=VALUE" overrides of this load (caustic render -D): a warning about one of their
     * paths is an error, "(set by -D)" */
    const char *const *defines;
    int ndefines;
} prm_ctx;

void prm_init(prm_ctx *c, const char *src, int strict, char *err, size_t errlen);
/* The load fails: "SRC: WHERE: message" (or "SRC:LINE: message" in line formats) into err.
 * Returns -1, for `return prm_fail(...)`. where may be NULL or "". */
int prm_fail(prm_ctx *c, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Something the user should know about: an error under --strict ("... (an error with --strict)"),
 * otherwise one warning per `dedup` key (the first place named in full, later ones counted).
 * Returns 0, or -1 when it became the error. */
int prm_warn(prm_ctx *c, const char *dedup, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* A warning even under --strict (information, not a mapping that changes the picture). */
void prm_note(prm_ctx *c, const char *dedup, const char *where, const char *msg);
/* Reports the pending warnings to s (report != 0, s != NULL) and frees them. */
void prm_flush(prm_ctx *c, const scene *s, int report);

/* ---- where ------------------------------------------------------------------------------------- */
/* parent.key, or parent["odd key"] when the key would not read as one path element. */
void prm_jkey(char out[PRM_WHERE], const char *parent, const char *key);
void prm_jindex(char out[PRM_WHERE], const char *parent, size_t i);
/* "LINE" for line formats (prm_fail then writes "SRC:LINE: ..."). */
void prm_line(char out[PRM_WHERE], size_t line);

/* ---- names ------------------------------------------------------------------------------------- */
int prm_ci_equal(const char *a, const char *b);
int prm_ends_with_ci(const char *s, const char *suffix);
/* Case-insensitive edit distance (insert, delete, substitute, transpose), words up to 40 chars. */
int prm_edit_distance(const char *a, const char *b);
/* The candidate within a typo's reach (one edit for words of up to 3 characters, two otherwise),
 * an exact case-insensitive match first; NULL when none is. cands is NULL-terminated. */
const char *prm_suggest(const char *word, const char *const *cands);
void prm_join(char *out, size_t n, const char *const *names);
/* Upper case without '_', '-' and ' ' (FOCAL_DISTANCE, "Focal Distance" -> FOCALDISTANCE). */
void prm_normalise(const char *k, char *out, size_t n);
/* Whether normalised `norm` is one of the '|'-separated names of `list` (NULL: none). */
int prm_in_list(const char *norm, const char *list);
/* Picks `word` from names (case-insensitive): its index, or -1 with "unknown WHAT "word" (did you
 * mean "x"?)" / "(expected one of: ...)" as the error at `where`. */
int prm_enum(prm_ctx *c, const char *where, const char *word, const char *what, const char *const *names);

/* ---- numbers ----------------------------------------------------------------------------------- */
/* A finite x with lo < x (lo_open) or lo <= x, and x <= hi; otherwise the load fails with
 * "X is out of range: must be ..." at `where`. */
int prm_check_range(prm_ctx *c, const char *where, double x, double lo, int lo_open, double hi);
/* A soft range: x outside [lo, hi] is clamped with one warning (dedup `dedup`, "NAME: X is outside
 * [lo, hi] UNIT: clamped to Y"), an error under --strict. Returns 0 or -1. */
int prm_soft_range(prm_ctx *c, const char *dedup, const char *where, const char *name, const char *unit, double lo,
                   double hi, double *x);

/* ---- parameter lists (line formats; tests) ----------------------------------------------------- */
typedef enum { PRM_NUMBER, PRM_STRING, PRM_BOOL } prm_type;
typedef struct prm_value {
    char *name;
    prm_type type;
    double *nums; /* PRM_NUMBER, PRM_BOOL (0/1) */
    size_t n;
    char *str; /* PRM_STRING */
    char where[PRM_WHERE];
    int used;
} prm_value;
typedef struct prm_list {
    prm_ctx *ctx;
    const char *owner; /* "shape \"sphere\"": what the unused-parameter report names */
    prm_value *v;
    size_t n, cap;
} prm_list;

void prm_list_init(prm_list *l, prm_ctx *c, const char *owner);
void prm_list_free(prm_list *l);
/* Adds a parameter (copied). A name given twice is an error naming both places. Returns 0 or -1. */
int prm_add_numbers(prm_list *l, const char *name, const double *nums, size_t n, const char *where);
int prm_add_string(prm_list *l, const char *name, const char *str, const char *where);
int prm_add_bool(prm_list *l, const char *name, int b, const char *where);
/* Typed lookups. Absent: *out keeps `def` and the return is 0. Present: type and count checked
 * (an error naming where it was given), the soft range applied (clamp + warning, or the error under
 * --strict), the parameter marked used. unit is for messages ("degrees", "" for none). */
int prm_float(prm_list *l, const char *name, double def, double lo, double hi, const char *unit, double *out);
int prm_int(prm_list *l, const char *name, long def, long lo, long hi, long *out);
int prm_vec3(prm_list *l, const char *name, vec3 def, double lo, double hi, const char *unit, vec3 *out);
int prm_string(prm_list *l, const char *name, const char *def, const char **out);
int prm_bool(prm_list *l, const char *name, int def, int *out);
/* Whether the list has the parameter (marks nothing). */
int prm_has(const prm_list *l, const char *name);
/* Unknown names: every parameter not in `known` (NULL-terminated) is a warning "unknown parameter
 * "x" of OWNER (did you mean "y"?)", an error under --strict; it is then marked used. Returns 0 or -1. */
int prm_check_known(prm_list *l, const char *const *known);
/* The unused-parameter report: one warning per parameter nobody looked up ("parameter "x" of OWNER
 * is not used"), an error under --strict. Returns 0 or -1. */
int prm_report_unused(prm_list *l);

#endif
