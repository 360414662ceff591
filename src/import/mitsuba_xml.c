/* The Mitsuba XML document as a tree (libexpat; see mitsuba_internal.h for why expat): elements
 * with their file and line, <include> files spliced in where they stand, <default name value> and
 * `caustic render -D name=value` parameters substituted for $name in attribute values (-D wins
 * over a default, as `mitsuba -D` does), <path> folders for file names, and Mitsuba 0.x names
 * upgraded where the meaning is clear (camelCase property names to snake_case: maxDepth,
 * sampleCount, intIOR, toWorld...; <lookAt> to <lookat>), as Mitsuba 3 upgrades such files. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/mitsuba_internal.h"
#include "util/file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MX_MAX_INCLUDES 256 /* in all: a file that includes itself stops here */
#define MX_MAX_FILE     (256L << 20)
#define MX_MAX_DEPTH    256 /* element nesting */

static char *xstrdup(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

static void node_free(mx_node *n) {
    if (!n) return;
    for (int i = 0; i < n->nkids; ++i) node_free(n->kids[i]);
    free(n->kids);
    for (int i = 0; i < 2 * n->nattr; ++i) free(n->attr[i]);
    free(n->attr);
    free(n->tag);
    free(n);
}

void mx_free(mx_doc *doc) {
    node_free(doc->root);
    for (int i = 0; i < doc->nfiles; ++i) free(doc->files[i]);
    free(doc->files);
    for (int i = 0; i < doc->nparams; ++i) {
        free(doc->pname[i]);
        free(doc->pvalue[i]);
    }
    free(doc->pname);
    free(doc->pvalue);
    free(doc->pused);
    for (int i = 0; i < doc->nsearch; ++i) free(doc->search[i]);
    free(doc->search);
    memset(doc, 0, sizeof *doc);
}

const char *mx_unused_define(const mx_doc *doc, int *cursor) {
    while (*cursor < doc->ndefines) {
        int i = (*cursor)++;
        if (!doc->pused[i]) return doc->pname[i];
    }
    return NULL;
}

const char *mx_attr(const mx_node *n, const char *name) {
    for (int i = 0; i < n->nattr; ++i)
        if (!strcmp(n->attr[2 * i], name)) return n->attr[2 * i + 1];
    return NULL;
}

void mx_where(prm_ctx *c, char out[PRM_WHERE], const mx_node *n) {
    if (n->file) c->src = n->file;
    snprintf(out, PRM_WHERE, "%ld", n->line);
}

static int add_kid(mx_node *p, mx_node *k, int at) {
    if (p->nkids == p->cap) {
        int cap = p->cap ? 2 * p->cap : 4;
        mx_node **kids = realloc(p->kids, (size_t)cap * sizeof *kids);
        if (!kids) return -1;
        p->kids = kids;
        p->cap = cap;
    }
    if (at < 0 || at > p->nkids) at = p->nkids;
    memmove(p->kids + at + 1, p->kids + at, (size_t)(p->nkids - at) * sizeof *p->kids);
    p->kids[at] = k;
    p->nkids++;
    k->parent = p;
    return 0;
}

static const char *add_file(mx_doc *doc, const char *path) {
    char **f = realloc(doc->files, (size_t)(doc->nfiles + 1) * sizeof *f);
    if (!f) return NULL;
    doc->files = f;
    if (!(f[doc->nfiles] = xstrdup(path))) return NULL;
    return f[doc->nfiles++];
}

static int path_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static char *join(const char *dir, const char *name) {
    if (!dir || !*dir || name[0] == '/') return xstrdup(name);
    size_t a = strlen(dir), b = strlen(name);
    char *r = malloc(a + b + 2);
    if (!r) return NULL;
    memcpy(r, dir, a);
    r[a] = '/';
    memcpy(r + a + 1, name, b + 1);
    return r;
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

char *mx_resolve(const mx_doc *doc, const mx_node *at, const char *name) {
    char *fixed = xstrdup(name);
    if (!fixed) return NULL;
    for (char *p = fixed; *p; ++p)
        if (*p == '\\') *p = '/'; /* files written on Windows */
    if (fixed[0] == '/') return fixed;
    for (int i = doc->nsearch - 1; i >= 0; --i) { /* later <path> first, as Mitsuba prepends them */
        char *c = join(doc->search[i], fixed);
        if (c && path_exists(c)) {
            free(fixed);
            return c;
        }
        free(c);
    }
    char *d = at && at->file ? dir_of(at->file) : NULL;
    char *c = d ? join(d, fixed) : NULL;
    free(d);
    if (c && path_exists(c)) {
        free(fixed);
        return c;
    }
    free(c);
    /* the main scene's folder (the last search entry is always it) */
    c = doc->nsearch ? join(doc->search[0], fixed) : xstrdup(fixed);
    free(fixed);
    return c;
}

#ifdef CAUSTIC_HAVE_EXPAT
#include <expat.h>

int mx_available(void) { return 1; }

/* camelCase -> snake_case (toWorld -> to_world, intIOR -> int_ior, maxDepth -> max_depth) */
static char *snake(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(2 * n + 1), *o = r;
    if (!r) return NULL;
    for (size_t i = 0; i < n; ++i) {
        unsigned char ch = (unsigned char)s[i];
        if (isupper(ch) && i > 0 && (islower((unsigned char)s[i - 1]) || isdigit((unsigned char)s[i - 1]))) *o++ = '_';
        *o++ = (char)tolower(ch);
    }
    *o = '\0';
    return r;
}

typedef struct pstate {
    mx_doc *doc;
    prm_ctx *c;
    XML_Parser xp;
    const char *file;
    mx_node *root, *cur;
    int depth, failed, upgrade;
} pstate;

static void stop(pstate *ps) {
    ps->failed = 1;
    XML_StopParser(ps->xp, XML_FALSE);
}

static void XMLCALL on_start(void *user, const XML_Char *name, const XML_Char **atts) {
    pstate *ps = user;
    if (ps->failed) return;
    long line = (long)XML_GetCurrentLineNumber(ps->xp);
    char where[PRM_WHERE];
    mx_node tmp = {0};
    tmp.file = ps->file;
    tmp.line = line;
    mx_where(ps->c, where, &tmp);
    if (++ps->depth > MX_MAX_DEPTH) {
        prm_fail(ps->c, where, "elements nested deeper than %d", MX_MAX_DEPTH);
        stop(ps);
        return;
    }
    mx_node *n = calloc(1, sizeof *n);
    if (!n) {
        prm_fail(ps->c, where, "out of memory");
        stop(ps);
        return;
    }
    n->file = ps->file;
    n->line = line;
    if (!ps->root) {
        /* the root: its version decides whether 0.x names are upgraded */
        const char *ver = NULL;
        for (int i = 0; atts[i]; i += 2)
            if (!strcmp(atts[i], "version")) ver = atts[i + 1];
        int major = 2, minor = 0;
        if (ver && sscanf(ver, "%d.%d", &major, &minor) < 1) {
            free(n);
            prm_fail(ps->c, where, "version \"%s\" is not a version number (as \"3.0.0\")", ver);
            stop(ps);
            return;
        }
        ps->upgrade = major < 2;
        if (ps->doc->root == NULL) {
            ps->doc->version_major = major;
            ps->doc->version_minor = minor;
        }
    }
    const char *tag = name;
    if (ps->upgrade && !strcmp(tag, "lookAt")) tag = "lookat";
    n->tag = xstrdup(tag);
    int na = 0;
    while (atts[2 * na]) na++;
    n->attr = calloc((size_t)(2 * na + 1), sizeof *n->attr);
    if (!n->tag || !n->attr) {
        node_free(n);
        prm_fail(ps->c, where, "out of memory");
        stop(ps);
        return;
    }
    n->nattr = na;
    for (int i = 0; i < na; ++i) {
        int up = ps->upgrade && !strcmp(atts[2 * i], "name") && strcmp(n->tag, "default");
        n->attr[2 * i] = xstrdup(atts[2 * i]);
        n->attr[2 * i + 1] = up ? snake(atts[2 * i + 1]) : xstrdup(atts[2 * i + 1]);
        if (!n->attr[2 * i] || !n->attr[2 * i + 1]) {
            node_free(n);
            prm_fail(ps->c, where, "out of memory");
            stop(ps);
            return;
        }
    }
    if (!ps->root)
        ps->root = n;
    else if (add_kid(ps->cur, n, -1)) {
        node_free(n);
        prm_fail(ps->c, where, "out of memory");
        stop(ps);
        return;
    }
    ps->cur = n;
}

static void XMLCALL on_end(void *user, const XML_Char *name) {
    (void)name;
    pstate *ps = user;
    if (ps->failed) return;
    ps->depth--;
    if (ps->cur) ps->cur = ps->cur->parent;
}

/* One file into a tree (its root element). */
static mx_node *parse_file(mx_doc *doc, prm_ctx *c, const char *path, const char *text, size_t size) {
    pstate ps = {0};
    ps.doc = doc;
    ps.c = c;
    ps.file = add_file(doc, path);
    if (!ps.file) {
        prm_fail(c, NULL, "out of memory");
        return NULL;
    }
    ps.xp = XML_ParserCreate(NULL);
    if (!ps.xp) {
        prm_fail(c, NULL, "out of memory");
        return NULL;
    }
    XML_SetUserData(ps.xp, &ps);
    XML_SetElementHandler(ps.xp, on_start, on_end);
    int ok = 1;
    /* expat takes int lengths: feed large files in pieces */
    for (size_t off = 0; ok && !ps.failed;) {
        size_t piece = size - off > (1u << 30) ? (1u << 30) : size - off;
        int last = off + piece == size;
        ok = XML_Parse(ps.xp, text + off, (int)piece, last) == XML_STATUS_OK;
        off += piece;
        if (last) break;
    }
    if (!ok && !ps.failed) {
        mx_node tmp = {0};
        tmp.file = ps.file;
        tmp.line = (long)XML_GetCurrentLineNumber(ps.xp);
        char where[PRM_WHERE];
        mx_where(c, where, &tmp);
        prm_fail(c, where, "not well-formed XML: %s", XML_ErrorString(XML_GetErrorCode(ps.xp)));
        ps.failed = 1;
    }
    XML_ParserFree(ps.xp);
    if (ps.failed) {
        node_free(ps.root);
        return NULL;
    }
    if (!ps.root) {
        prm_fail(c, "1", "no XML element in the file");
        return NULL;
    }
    return ps.root;
}

static int param_index(const mx_doc *doc, const char *name, size_t n) {
    for (int i = 0; i < doc->nparams; ++i)
        if (strlen(doc->pname[i]) == n && !strncmp(doc->pname[i], name, n)) return i;
    return -1;
}

static int add_param(mx_doc *doc, const char *name, size_t nlen, const char *value) {
    char **a = realloc(doc->pname, (size_t)(doc->nparams + 1) * sizeof *a);
    if (!a) return -1;
    doc->pname = a;
    char **b = realloc(doc->pvalue, (size_t)(doc->nparams + 1) * sizeof *b);
    if (!b) return -1;
    doc->pvalue = b;
    unsigned char *u = realloc(doc->pused, (size_t)(doc->nparams + 1));
    if (!u) return -1;
    doc->pused = u;
    u[doc->nparams] = 0;
    char *nm = malloc(nlen + 1), *v = xstrdup(value);
    if (!nm || !v) {
        free(nm);
        free(v);
        return -1;
    }
    memcpy(nm, name, nlen);
    nm[nlen] = '\0';
    doc->pname[doc->nparams] = nm;
    doc->pvalue[doc->nparams++] = v;
    return 0;
}

/* $name in s replaced by the parameter's value (Mitsuba: the longest parameter name that follows
 * the '$'); a $name that is no parameter is an error. Returns a malloc'd string or NULL. */
static char *substitute(const mx_doc *doc, prm_ctx *c, const mx_node *n, const char *s) {
    if (!strchr(s, '$')) return xstrdup(s);
    size_t cap = strlen(s) + 64, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (const char *p = s; *p;) {
        const char *add = p;
        size_t addn = 1;
        if (*p == '$') {
            const char *q = p + 1;
            while (isalnum((unsigned char)*q) || *q == '_') q++;
            int best = -1;
            size_t bestn = 0;
            for (size_t k = (size_t)(q - p - 1); k > 0 && best < 0; --k) {
                int i = param_index(doc, p + 1, k);
                if (i >= 0) {
                    best = i;
                    bestn = k;
                }
            }
            if (best < 0 && q > p + 1) {
                char where[PRM_WHERE];
                mx_where(c, where, n);
                prm_fail(c, where, "$%.*s is not a parameter (no <default name=\"%.*s\"> and no -D %.*s=...)",
                         (int)(q - p - 1), p + 1, (int)(q - p - 1), p + 1, (int)(q - p - 1), p + 1);
                free(out);
                return NULL;
            }
            if (best >= 0) {
                ((mx_doc *)doc)->pused[best] = 1;
                add = doc->pvalue[best];
                addn = strlen(add);
                p += 1 + bestn;
            } else
                p++;
        } else
            p++;
        if (len + addn + 1 > cap) {
            cap = 2 * (len + addn + 1);
            char *o = realloc(out, cap);
            if (!o) {
                free(out);
                return NULL;
            }
            out = o;
        }
        memcpy(out + len, add, addn);
        len += addn;
    }
    out[len] = '\0';
    return out;
}

static int expand(mx_doc *doc, prm_ctx *c, mx_node *n);

/* <include filename="..."/>: the file's <scene> children in its place. */
static int do_include(mx_doc *doc, prm_ctx *c, mx_node *parent, int at) {
    mx_node *inc = parent->kids[at];
    char where[PRM_WHERE];
    mx_where(c, where, inc);
    const char *fn = mx_attr(inc, "filename");
    if (!fn) return prm_fail(c, where, "<include> without filename");
    char *path = mx_resolve(doc, inc, fn);
    if (!path) return prm_fail(c, where, "out of memory");
    size_t size = 0;
    char why[256];
    char *text = file_read_all(path, MX_MAX_FILE, &size, why, sizeof why);
    if (!text) {
        prm_fail(c, where, "<include> \"%s\": %s", fn, why);
        free(path);
        return -1;
    }
    mx_node *root = parse_file(doc, c, path, text, size);
    free(text);
    free(path);
    if (!root) return -1;
    if (strcmp(root->tag, "scene")) {
        char w2[PRM_WHERE];
        mx_where(c, w2, root);
        prm_fail(c, w2, "an included file must hold a <scene>, not <%s>", root->tag);
        node_free(root);
        return -1;
    }
    /* replace the include by the scene's children (room made first: nothing can fail after) */
    int need = parent->nkids - 1 + root->nkids;
    if (need > parent->cap) {
        mx_node **kids = realloc(parent->kids, (size_t)need * sizeof *kids);
        if (!kids) {
            node_free(root);
            return prm_fail(c, where, "out of memory");
        }
        parent->kids = kids;
        parent->cap = need;
    }
    memmove(parent->kids + at + root->nkids, parent->kids + at + 1,
            (size_t)(parent->nkids - at - 1) * sizeof *parent->kids);
    for (int i = 0; i < root->nkids; ++i) {
        parent->kids[at + i] = root->kids[i];
        root->kids[i]->parent = parent;
    }
    parent->nkids = need;
    node_free(inc);
    root->nkids = 0;
    node_free(root);
    return 0;
}

/* In document order: <default> and <path> recorded, <include> spliced, $name substituted. */
static int expand(mx_doc *doc, prm_ctx *c, mx_node *n) {
    for (int i = 0; i < n->nattr; ++i) {
        char *v = substitute(doc, c, n, n->attr[2 * i + 1]);
        if (!v) return -1;
        free(n->attr[2 * i + 1]);
        n->attr[2 * i + 1] = v;
    }
    for (int i = 0; i < n->nkids; ++i) {
        mx_node *k = n->kids[i];
        char where[PRM_WHERE];
        mx_where(c, where, k);
        if (!strcmp(k->tag, "include")) {
            for (int a = 0; a < k->nattr; ++a) {
                char *v = substitute(doc, c, k, k->attr[2 * a + 1]);
                if (!v) return -1;
                free(k->attr[2 * a + 1]);
                k->attr[2 * a + 1] = v;
            }
            if (++doc->nincludes > MX_MAX_INCLUDES)
                return prm_fail(c, where, "more than %d includes (a file that includes itself?)", MX_MAX_INCLUDES);
            if (do_include(doc, c, n, i)) return -1;
            i--; /* the spliced elements are visited next, in order (their defaults count from here on) */
            continue;
        }
        if (!strcmp(k->tag, "default")) {
            const char *name = mx_attr(k, "name"), *value = mx_attr(k, "value");
            if (!name || !value) return prm_fail(c, where, "<default> needs name and value");
            char *v = substitute(doc, c, k, value);
            if (!v) return -1;
            int rc = param_index(doc, name, strlen(name)) >= 0 ? 0 : add_param(doc, name, strlen(name), v);
            free(v);
            if (rc) return prm_fail(c, where, "out of memory");
            k->used = 1;
            continue;
        }
        if (expand(doc, c, k)) return -1;
        if (!strcmp(k->tag, "path")) {
            const char *v = mx_attr(k, "value");
            if (!v) return prm_fail(c, where, "<path> needs value");
            char *d = dir_of(k->file);
            char *full = d ? join(d, v) : NULL;
            free(d);
            char **s = full ? realloc(doc->search, (size_t)(doc->nsearch + 1) * sizeof *s) : NULL;
            if (!s) {
                free(full);
                return prm_fail(c, where, "out of memory");
            }
            doc->search = s;
            s[doc->nsearch++] = full;
            k->used = 1;
        }
    }
    return 0;
}

int mx_read(mx_doc *doc, prm_ctx *c, const char *path, const char *text, size_t size, const char *const *defines,
            int ndefines) {
    memset(doc, 0, sizeof *doc);
    for (int i = 0; i < ndefines; ++i) {
        const char *eq = strchr(defines[i], '=');
        if (!eq || eq == defines[i]) return prm_fail(c, NULL, "-D %s: expected name=value", defines[i]);
        if (param_index(doc, defines[i], (size_t)(eq - defines[i])) < 0 &&
            add_param(doc, defines[i], (size_t)(eq - defines[i]), eq + 1))
            return prm_fail(c, NULL, "out of memory");
    }
    doc->ndefines = doc->nparams;
    char *d = dir_of(path);
    doc->search = malloc(sizeof *doc->search);
    if (!d || !doc->search) {
        free(d);
        return prm_fail(c, NULL, "out of memory");
    }
    doc->search[doc->nsearch++] = d;
    doc->root = parse_file(doc, c, path, text, size);
    if (!doc->root) return -1;
    if (strcmp(doc->root->tag, "scene")) {
        char where[PRM_WHERE];
        mx_where(c, where, doc->root);
        return prm_fail(c, where, "the root element is <%s>: a Mitsuba scene is a <scene>", doc->root->tag);
    }
    return expand(doc, c, doc->root);
}

#else /* no libexpat */

int mx_available(void) { return 0; }
int mx_read(mx_doc *doc, prm_ctx *c, const char *path, const char *text, size_t size, const char *const *defines,
            int ndefines) {
    (void)path;
    (void)text;
    (void)size;
    (void)defines;
    (void)ndefines;
    memset(doc, 0, sizeof *doc);
    return prm_fail(c, NULL,
                    "caustic was built without libexpat, which reads Mitsuba XML (install libexpat1-dev and "
                    "rebuild)");
}

#endif
