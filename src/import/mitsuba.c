/* The Mitsuba scene reader (Mitsuba 3 XML; Mitsuba 0.5/0.6 files upgraded on reading): the
 * document (mitsuba_xml.c) turned into a caustic scene through the builders (scene/scene.h), so
 * that serialized meshes, spot lights and cut-out masks, which scene JSON cannot say, are kept.
 *
 * Meanings follow Mitsuba 3's documentation: transforms compose in file order (each element is
 * applied after the ones above it), shapes keep Mitsuba's local geometry (rectangle [-1,1]^2 at
 * z = 0, cube [-1,1]^3, disk of radius 1, cylinder from p0 to p1), `max_depth` counts path
 * segments (caustic's depth counts bounces: depth = max_depth - 1), the sensor's `fov` is along
 * `fov_axis` (caustic keeps the full vertical angle). What caustic lacks is one warning naming
 * FILE:LINE and the stand-in (the table of BSDFs below says which); parameters nobody read are
 * reported, one line per feature with a count, as the coverage summary. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "image/image.h"
#include "kernel/environment.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A warning about node n, deduplicated per `key` (the count is the coverage summary). */
int mi_warn_at(reader *R, const mx_node *n, const char *key, const char *fmt, ...) {
    char msg[512], w[PRM_WHERE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mx_where(&R->P, w, n);
    return prm_warn(&R->P, key, w, "%s", msg);
}

/* ---- the document ------------------------------------------------------------------------------ */
/* n and everything in it read (what a warning has already said is left out) */
void mi_mark_all(const mx_node *n) {
    ((mx_node *)n)->used = 1;
    for (int i = 0; i < n->nkids; ++i) mi_mark_all(n->kids[i]);
}

/* Objects by id: sorted once, looked up by bisection (a scene of many shapes has many refs). */
typedef struct id_entry {
    const char *id;
    const mx_node *node;
} id_entry;

static int collect_ids(const mx_node *n, id_entry **ids, size_t *nids, size_t *cap) {
    const char *a = strcmp(n->tag, "ref") ? mx_attr(n, "id") : NULL;
    if (a) {
        if (*nids == *cap) {
            size_t nc = *cap ? 2 * *cap : 64;
            id_entry *e = realloc(*ids, nc * sizeof *e);
            if (!e) return -1;
            *ids = e;
            *cap = nc;
        }
        (*ids)[(*nids)++] = (id_entry){a, n};
    }
    for (int i = 0; i < n->nkids; ++i)
        if (collect_ids(n->kids[i], ids, nids, cap)) return -1;
    return 0;
}

static int id_cmp(const void *a, const void *b) { return strcmp(((const id_entry *)a)->id, ((const id_entry *)b)->id); }

/* <ref id="x"/> to the object; an unknown id is an error. */
int mi_deref(reader *R, const mx_node *ref, const mx_node **out) {
    const char *id = mx_attr(ref, "id");
    if (!id) FAIL(R, ref, "<ref> without id");
    id_entry key = {id, NULL};
    const id_entry *hit = R->nids ? bsearch(&key, R->ids, R->nids, sizeof *R->ids, id_cmp) : NULL;
    const mx_node *t = hit ? hit->node : NULL;
    if (!t || t == ref) FAIL(R, ref, "<ref id=\"%s\">: no object has this id", id);
    ((mx_node *)ref)->used = 1;
    *out = t;
    return 0;
}

/* ---- the coverage summary: parameters nobody read --------------------------------------------- */
static int is_property(const char *tag) {
    static const char *const t[] = {"float", "integer", "boolean",   "string",  "rgb",       "srgb", "spectrum",
                                    "point", "vector",  "transform", "texture", "blackbody", NULL};
    for (int i = 0; t[i]; ++i)
        if (!strcmp(t[i], tag)) return 1;
    return 0;
}

static int report_unused(reader *R, const mx_node *n) {
    for (int i = 0; i < n->nkids; ++i) {
        const mx_node *c = n->kids[i];
        if (n->used && !c->used && is_property(c->tag) && mx_attr(c, "name")) {
            char key[160];
            snprintf(key, sizeof key, "unused %s %s %s", n->tag, mx_attr(n, "type") ? mx_attr(n, "type") : "",
                     mx_attr(c, "name"));
            if (mi_warn_at(R, c, key, "%s \"%s\": parameter \"%s\" is not used (caustic has no such setting)", n->tag,
                           mx_attr(n, "type") ? mx_attr(n, "type") : "", mx_attr(c, "name")))
                return -1;
        }
        if (report_unused(R, c)) return -1;
    }
    return 0;
}

/* ---- the scene ------------------------------------------------------------------------------- */
static int read_scene(reader *R) {
    const mx_node *root = R->D.root;
    ((mx_node *)root)->used = 1;
    R->s->spp = 4;
    R->s->max_depth = 1024;
    R->s->env_tex = -1;
    R->s->env_radiance = v3s(0.0f);
    size_t cap = 0;
    if (collect_ids(root, &R->ids, &R->nids, &cap)) return prm_fail(&R->P, NULL, "out of memory");
    if (R->nids) qsort(R->ids, R->nids, sizeof *R->ids, id_cmp);
    /* an id given twice: Mitsuba refuses it */
    for (size_t i = 1; i < R->nids; ++i)
        if (!strcmp(R->ids[i].id, R->ids[i - 1].id)) {
            const mx_node *a = R->ids[i - 1].node, *b = R->ids[i].node;
            if (a->line > b->line && a->file == b->file) a = b;
            char w[PRM_WHERE];
            mx_where(&R->P, w, R->ids[i].node == a ? R->ids[i - 1].node : R->ids[i].node);
            return prm_fail(&R->P, w, "id \"%s\" is given twice (also at line %ld)", R->ids[i].id, a->line);
        }
    R->default_mat = scene_add_material(R->s, "mitsuba-default", material_default(MAT_DIFFUSE));
    if (R->default_mat < 0) return prm_fail(&R->P, NULL, "out of memory");
    R->s->materials[R->default_mat].albedo = v3s(0.5f);
    int sensors = 0;
    for (int i = 0; i < root->nkids; ++i) {
        const mx_node *c = root->kids[i];
        const char *t = c->tag;
        if (!strcmp(t, "sensor")) {
            if (sensors++) {
                if (mi_warn_at(R, c, "second sensor", "a second sensor: caustic renders the first")) return -1;
                ((mx_node *)c)->used = 1;
                continue;
            }
            if (mi_read_sensor(R, c)) return -1;
        } else if (!strcmp(t, "integrator")) {
            if (mi_read_integrator(R, c)) return -1;
        } else if (!strcmp(t, "shape")) {
            if (mi_add_shape(R, c, xform_identity(), 0)) return -1;
        } else if (!strcmp(t, "emitter")) {
            if (mi_add_emitter(R, c)) return -1;
        } else if (!strcmp(t, "bsdf") || !strcmp(t, "texture") || !strcmp(t, "spectrum") || !strcmp(t, "rgb")) {
            /* declared for reference */
        } else if (!strcmp(t, "medium")) {
            int ref; /* declared for reference; read here so that its problems are said once */
            if (mi_medium_of(R, c, &ref)) return -1;
        } else if (!strcmp(t, "default") || !strcmp(t, "path")) {
        } else if (mi_warn_at(R, c, t, "<%s> at the scene's top level is not read", t))
            return -1;
    }
    if (!sensors) {
        /* Mitsuba's default sensor: perspective at the origin looking along +z */
        camera_desc *cd = &R->s->camera;
        cd->width = 768;
        cd->height = 576;
        cd->eye = v3s(0.0f);
        cd->lookat = v3(0, 0, 1);
        cd->up = v3(0, 1, 0);
        cd->fovy_deg = (float)(2 * atan(tan(45 * MI_PI / 360) * 576.0 / 768.0) * 180 / MI_PI);
        if (mi_warn_at(R, root, "no sensor", "no <sensor>: Mitsuba's default camera (at the origin, looking along +z)"))
            return -1;
    }
    /* R->bsdfs are read where shapes use them; declared but unused ones are read too, so that
     * their errors are not hidden */
    for (int i = 0; i < root->nkids; ++i)
        if (!strcmp(root->kids[i]->tag, "bsdf") && !mi_bsdf_get(R, root->kids[i])) return -1;
    int cur = 0;
    for (const char *d; (d = mx_unused_define(&R->D, &cur));) {
        char key[128];
        snprintf(key, sizeof key, "unused define %.100s", d);
        if (prm_warn(&R->P, key, NULL, "-D %s: the scene has no $%s", d, d)) return -1;
    }
    return report_unused(R, root);
}

int mitsuba_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);

int mitsuba_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    reader R;
    memset(&R, 0, sizeof R);
    R.interface_mat = -1;
    prm_init(&R.P, src->path, opts ? opts->strict : 0, err, errlen);
    R.P.line_format = 1;
    /* -D name=value: Mitsuba's parameters ($name); the names are not JSON paths here */
    int rc =
        mx_read(&R.D, &R.P, src->path, src->text, src->size, opts ? opts->defines : NULL, opts ? opts->ndefines : 0);
    if (rc == 0) {
        R.s = scene_create();
        if (!R.s)
            rc = prm_fail(&R.P, NULL, "out of memory");
        else {
            R.s->warn = opts ? opts->warn : NULL;
            R.s->warn_user = opts ? opts->warn_user : NULL;
            rc = read_scene(&R);
        }
    }
    if (rc == 0 && R.s->ntriangles + R.s->nspheres + R.s->nquads == 0 && R.s->env_tex < 0 && R.s->npunctual == 0)
        rc = prm_fail(&R.P, NULL, "the scene has nothing caustic can render (no shape, light or environment read)");
    /* -D was this reader's own ($name parameters); no caustic JSON is handed out (it cannot say
     * serialized meshes, spot lights, cut-out masks), so --dump-scene refuses (scene_api.c) */
    if (rc == 0 && opts && opts->defines_taken) *opts->defines_taken = 1;
    prm_flush(&R.P, R.s, rc == 0);
    if (rc == 0)
        *out = R.s;
    else
        scene_destroy(R.s);
    free(R.bsdfs);
    free(R.texs);
    free(R.ids);
    free(R.groups);
    free(R.med_nodes);
    free(R.med_refs);
    mx_free(&R.D);
    return rc;
}
