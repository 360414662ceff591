/* The pbrt-v4 tokenizer: quoted strings, numbers, brackets and bare words, '#' comments to the end
 * of the line; Include/Import push a file (gzip read through zlib, whatever its extension), and
 * every token keeps the file and line it came from, so that each message can name them. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/pbrt_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

char *pbrt_read_file(const char *path, size_t max, size_t *n, char *why, size_t whylen) {
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "cannot open: %s", errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            snprintf(why, whylen, "out of memory");
            gzclose(f);
            return NULL;
        }
        if (len == cap) {
            if (cap >= max) {
                snprintf(why, whylen, "larger than %zu MiB", max >> 20);
                free(buf);
                gzclose(f);
                return NULL;
            }
            cap = cap * 2 > max ? max : cap * 2;
            char *g = realloc(buf, cap + 1);
            if (!g) free(buf);
            buf = g;
            continue;
        }
        int want = (int)((cap - len) > (1u << 30) ? (1u << 30) : (cap - len));
        int got = gzread(f, buf + len, (unsigned)want);
        if (got < 0) {
            int e;
            const char *m = gzerror(f, &e);
            snprintf(why, whylen, "cannot read: %s", e == Z_ERRNO ? strerror(errno) : m);
            free(buf);
            gzclose(f);
            return NULL;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    gzclose(f);
    buf[len] = '\0';
    *n = len;
    return buf;
}

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *dir_of(const char *path, const char *fallback) {
    const char *slash = strrchr(path, '/');
    if (!slash) return fallback ? dup_n(fallback, strlen(fallback)) : dup_n(".", 1);
    return dup_n(path, slash == path ? 1 : (size_t)(slash - path));
}

static int keep_name(pbrt_lexer *lx, char *name) {
    char **g = realloc(lx->names, (lx->nnames + 1) * sizeof *g);
    if (!g) return -1;
    lx->names = g;
    lx->names[lx->nnames++] = name;
    return 0;
}

int pbrt_lex_init(pbrt_lexer *lx, prm_ctx *ctx, const char *name, const char *dir, const char *text, size_t size) {
    memset(lx, 0, sizeof *lx);
    lx->ctx = ctx;
    pbrt_src *s = &lx->stack[0];
    s->name = dup_n(name, strlen(name));
    s->dir = dir ? dup_n(dir, strlen(dir)) : dup_n(".", 1);
    if (!s->name || !s->dir || keep_name(lx, s->name)) {
        free(s->name);
        free(s->dir);
        return -1;
    }
    s->text = (char *)text;
    s->size = size;
    s->line = 1;
    lx->depth = 1;
    lx->bytes_read = size;
    return 0;
}

void pbrt_lex_free(pbrt_lexer *lx) {
    for (int i = 0; i < lx->depth; ++i) {
        if (lx->stack[i].owned) free(lx->stack[i].text);
        free(lx->stack[i].dir);
    }
    for (size_t i = 0; i < lx->nnames; ++i) free(lx->names[i]);
    free(lx->names);
    memset(lx, 0, sizeof *lx);
}

void pbrt_where(pbrt_lexer *lx, const pbrt_token *t, char out[PRM_WHERE]) {
    lx->ctx->src = t->file;
    prm_line(out, (size_t)t->line);
}

char *pbrt_resolve(const pbrt_lexer *lx, const pbrt_token *where, const char *path) {
    if (path[0] == '/') return dup_n(path, strlen(path));
    /* the folder of the file the token came from */
    const char *dir = ".";
    for (int i = lx->depth - 1; i >= 0; --i)
        if (lx->stack[i].name == where->file) {
            dir = lx->stack[i].dir;
            break;
        }
    size_t n = strlen(dir) + strlen(path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", dir, path);
    return out;
}

int pbrt_lex_push(pbrt_lexer *lx, const char *path, const pbrt_token *where) {
    char w[PRM_WHERE];
    pbrt_where(lx, where, w);
    if (lx->depth >= PBRT_MAX_DEPTH)
        return prm_fail(lx->ctx, w, "Include nested more than %d deep (does \"%s\" include itself?)", PBRT_MAX_DEPTH,
                        path);
    char *full = pbrt_resolve(lx, where, path);
    if (!full) return prm_fail(lx->ctx, w, "out of memory");
    for (int i = 0; i < lx->depth; ++i)
        if (strcmp(lx->stack[i].name, full) == 0) {
            free(full);
            return prm_fail(lx->ctx, w, "\"%s\" includes itself", path);
        }
    char why[256];
    size_t n = 0;
    char *text = pbrt_read_file(full, (size_t)(PBRT_MAX_BYTES - (long long)lx->bytes_read), &n, why, sizeof why);
    if (!text) {
        prm_fail(lx->ctx, w, "Include \"%s\": %s", full, why);
        free(full);
        return -1;
    }
    pbrt_src *s = &lx->stack[lx->depth];
    memset(s, 0, sizeof *s);
    s->dir = dir_of(full, NULL);
    if (!s->dir || keep_name(lx, full)) {
        free(s->dir);
        free(full);
        free(text);
        return prm_fail(lx->ctx, w, "out of memory");
    }
    s->name = full;
    s->text = text;
    s->size = n;
    s->line = 1;
    s->owned = 1;
    lx->bytes_read += n;
    lx->depth++;
    return 0;
}

static int is_delim(int c) { return c == '"' || c == '[' || c == ']' || c == '#' || isspace(c); }

static int lex_raw(pbrt_lexer *lx, pbrt_token *t) {
    for (;;) {
        pbrt_src *s = &lx->stack[lx->depth - 1];
        const char *p = s->text;
        size_t i = s->pos;
        while (i < s->size) {
            char c = p[i];
            if (c == '\n') {
                s->line++;
                ++i;
            } else if (c == '#') {
                while (i < s->size && p[i] != '\n') ++i;
            } else if (isspace((unsigned char)c) || c == '\0') {
                ++i;
            } else
                break;
        }
        s->pos = i;
        t->file = s->name;
        t->line = s->line;
        t->text = p + i;
        t->len = 0;
        if (i >= s->size) {
            if (lx->depth == 1) {
                t->type = PTK_EOF;
                return 0;
            }
            /* tokens of the file may still be in use (a peeked token): its text is freed with the lexer */
            if (s->owned) (void)keep_name(lx, s->text); /* out of memory: leaked, not freed under a token */
            free(s->dir);
            memset(s, 0, sizeof *s);
            lx->depth--;
            continue;
        }
        char c = p[i];
        if (c == '[' || c == ']') {
            t->type = c == '[' ? PTK_LBRACK : PTK_RBRACK;
            t->len = 1;
            s->pos = i + 1;
            return 0;
        }
        if (c == '"') {
            size_t j = i + 1;
            while (j < s->size && p[j] != '"' && p[j] != '\n') ++j;
            if (j >= s->size || p[j] != '"') {
                char w[PRM_WHERE];
                pbrt_where(lx, t, w);
                return prm_fail(lx->ctx, w, "unterminated string (a '\"' is missing on this line)");
            }
            t->type = PTK_STRING;
            t->text = p + i + 1;
            t->len = j - i - 1;
            s->pos = j + 1;
            return 0;
        }
        size_t j = i;
        while (j < s->size && !is_delim((unsigned char)p[j]) && p[j] != '\0') ++j;
        t->text = p + i;
        t->len = j - i;
        s->pos = j;
        if (isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.') {
            char buf[64];
            char *end = NULL;
            if (t->len < sizeof buf) {
                memcpy(buf, t->text, t->len);
                buf[t->len] = '\0';
                t->num = strtod(buf, &end);
            }
            if (!end || *end != '\0' || end == buf) {
                char w[PRM_WHERE];
                pbrt_where(lx, t, w);
                return prm_fail(lx->ctx, w, "\"%.*s\" is not a number", (int)(t->len > 40 ? 40 : t->len), t->text);
            }
            t->type = PTK_NUMBER;
            return 0;
        }
        t->type = PTK_WORD;
        return 0;
    }
}

int pbrt_lex_next(pbrt_lexer *lx, pbrt_token *t) {
    if (lx->has_peek) {
        *t = lx->peeked;
        lx->has_peek = 0;
        return 0;
    }
    return lex_raw(lx, t);
}

int pbrt_lex_peek(pbrt_lexer *lx, pbrt_token *t) {
    if (!lx->has_peek) {
        if (lex_raw(lx, &lx->peeked)) return -1;
        lx->has_peek = 1;
    }
    *t = lx->peeked;
    return 0;
}
