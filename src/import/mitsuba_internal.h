/* The Mitsuba XML reader's parts (mitsuba_xml.c: the document as a tree; mitsuba.c: the scene).
 *
 * Why libexpat: it is small (one C library, no dependencies), streaming, reports the line of every
 * element (XML_GetCurrentLineNumber, which every message of the reader names), and Debian keeps it
 * (libexpat1-dev, security-maintained, already on every system that has Python). libxml2 would do
 * as well but brings a DOM, XPath and network code that a scene reader does not need. */
#ifndef CAUSTIC_IMPORT_MITSUBA_INTERNAL_H
#define CAUSTIC_IMPORT_MITSUBA_INTERNAL_H

#include <stddef.h>
#include "import/params.h"

typedef struct mx_node {
    char *tag;   /* element name (after the 0.x upgrade: "lookat", snake_case names) */
    char **attr; /* name, value, name, value ... ($name substituted) */
    int nattr;
    struct mx_node **kids;
    int nkids, cap;
    struct mx_node *parent;
    const char *file; /* the file it was read from (owned by the document) */
    long line;
    int used; /* a property some plugin looked up */
} mx_node;

typedef struct mx_doc {
    mx_node *root;
    char **files; /* every file read (include), for messages */
    int nfiles;
    /* name=value parameters: -D first (they win over <default>), then <default> in file order */
    char **pname, **pvalue;
    int nparams, ndefines; /* the first ndefines came from -D */
    unsigned char *pused;  /* per parameter: some $name used it */
    char **search;         /* <path value=...> folders, then the scene's own */
    int nsearch;
    int nincludes;
    int version_major, version_minor;
} mx_doc;

/* Reads PATH (text, size: its bytes) into doc: includes spliced in, defaults and $name substituted,
 * 0.x names upgraded. defines are "name=value" (caustic render -D); with line_format set in c,
 * errors are "FILE:LINE: problem". Returns 0 or -1 (prm_fail). */
int mx_read(mx_doc *doc, prm_ctx *c, const char *path, const char *text, size_t size, const char *const *defines,
            int ndefines);
void mx_free(mx_doc *doc);
/* The -D names no $name of the document used (NULL when all were): one warning each. */
const char *mx_unused_define(const mx_doc *doc, int *cursor);
const char *mx_attr(const mx_node *n, const char *name);
/* The line of a node as the where-string of params.h messages, with c's file set to the node's
 * (an included file is named as itself: "inc.xml:6: ..."). */
void mx_where(prm_ctx *c, char out[PRM_WHERE], const mx_node *n);
/* A file named by the scene: absolute, or relative to the folders of <path> and the scene's.
 * Returns a malloc'd path (the first that exists; else the scene-relative one). */
char *mx_resolve(const mx_doc *doc, const mx_node *at, const char *name);
/* Whether libexpat is compiled in (0: the reader refuses with a message naming libexpat1-dev). */
int mx_available(void);

#endif
