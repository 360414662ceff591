/* The pbrt-v4 scene reader: the scene description of pbrt-v4's file format (its documentation's
 * "pbrt-v4 File Format" page, and parser.cpp / scene.cpp for what a directive means), read into
 * caustic's scene through the builders (docs/extending.md, "A scene format").
 *
 * What a directive means here:
 *   - transforms: the current transformation matrix (CTM) as pbrt defines it (post-multiplied;
 *     Transform/ConcatTransform read transposed), AttributeBegin/End saving it with the rest of the
 *     graphics state, CoordinateSystem/CoordSysTransform with "camera" (camera to world) and
 *     "world"; ReverseOrientation and transforms that swap handedness decide which side of a
 *     surface emits, as pbrt decides it (a mesh with normals: the side they face).
 *   - handedness: pbrt's camera space is left-handed (the image's right is camera +x); caustic's
 *     camera is right-handed (right = forward x up). Where the two disagree the whole world is
 *     mirrored through the plane of the camera's forward and up axes, which leaves the picture
 *     exactly pbrt's; --dump-scene and `caustic info` then show mirrored coordinates.
 *   - shapes: trianglemesh, plymesh (.ply/.ply.gz through ply.c), bilinearmesh (two triangles a
 *     patch), loopsubdiv (subdivided here), sphere (caustic's analytic sphere when whole, else
 *     tessellated), disk and cylinder (tessellated, 64 segments a turn; pbrt_shapes.c);
 *     ObjectBegin/ObjectInstance: the object's triangles become one mesh, placed by each instance
 *     (true instancing, scene_add_instance; an emissive object is copied, see scene_instances.c).
 *   - materials: one table (pbrt_materials in pbrt_materials.c): a row per pbrt material, its caustic kind, and
 *     where caustic has no such model the stand-in a warning names.
 *   - lights: area "diffuse" as emission of the shape's material (L, scale, twosided, power),
 *     point, spot, distant, infinite (constant, or an equal-area octahedral image resampled to
 *     caustic's lat-long map); every light normalised as pbrt normalises it (a spectrum's
 *     luminance is 1 before `scale`), spectra through pbrt_spectrum.c.
 * Anything caustic cannot show is one warning per feature with a count, and the summary of what
 * was approximated ends the load ("coverage"). Bad input is one message "FILE:LINE: problem". */
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

/* ---- directives ------------------------------------------------------------------------------------ */
static int read_numbers(R *r, double *out, int n, const char *what, const pbrt_token *at) {
    pbrt_token t;
    char w[PRM_WHERE];
    int bracket = 0;
    if (pbrt_lex_peek(&r->lx, &t)) return -1;
    if (t.type == PTK_LBRACK) {
        pbrt_lex_next(&r->lx, &t);
        bracket = 1;
    }
    for (int i = 0; i < n; ++i) {
        if (pbrt_lex_next(&r->lx, &t)) return -1;
        if (t.type != PTK_NUMBER) {
            pbrt_where(&r->lx, t.type == PTK_EOF ? at : &t, w);
            return prm_fail(&r->ctx, w, "%s expects %d numbers; value %d is %s", what, n, i + 1,
                            t.type == PTK_EOF ? "missing (the file ends)" : "not a number");
        }
        if (!isfinite(t.num)) {
            pbrt_where(&r->lx, &t, w);
            return prm_fail(&r->ctx, w, "%s: a value is not finite", what);
        }
        out[i] = t.num;
    }
    if (bracket) {
        if (pbrt_lex_next(&r->lx, &t)) return -1;
        if (t.type != PTK_RBRACK) {
            pbrt_where(&r->lx, &t, w);
            return prm_fail(&r->ctx, w, "%s expects %d numbers in [ ]; ']' is missing", what, n);
        }
    }
    return 0;
}

static int read_string(R *r, const pbrt_token *at, const char *what, char **out) {
    pbrt_token t;
    char w[PRM_WHERE];
    if (pbrt_lex_next(&r->lx, &t)) return -1;
    if (t.type != PTK_STRING) {
        pbrt_where(&r->lx, at, w);
        return prm_fail(&r->ctx, w, "%s expects a quoted name", what);
    }
    *out = sdup(t.text, t.len);
    if (!*out) {
        pbrt_where(&r->lx, at, w);
        return oom(r, w);
    }
    return 0;
}

static void concat(R *r, const m4 *m) { r->g.ctm = m4_mul(&r->g.ctm, m); }

static int push_state(R *r, const char *w) {
    if (GROW(r->stack, r->nstack, r->capstack)) return oom(r, w);
    r->stack[r->nstack] = r->g;
    if (r->g.area_where) r->stack[r->nstack].area_where = sdup(r->g.area_where, strlen(r->g.area_where));
    r->nstack++;
    return 0;
}
static int pop_state(R *r, const char *w, const char *what) {
    if (!r->nstack) return prm_fail(&r->ctx, w, "%s without a matching begin", what);
    free(r->g.area_where);
    r->g = r->stack[--r->nstack];
    return 0;
}

static int instance(R *r, const char *name, const char *w) {
    pobject *o = NULL;
    for (size_t i = 0; i < r->nobjects; ++i)
        if (!strcmp(r->objects[i].name, name)) o = &r->objects[i];
    if (!o) return prm_fail(&r->ctx, w, "ObjectInstance: no object named \"%s\"", name);
    if (r->cur_object) return prm_fail(&r->ctx, w, "ObjectInstance inside ObjectBegin");
    if (!o->nt) return 0;
    m4 F = final_m4(r);
    if (!o->mesh) { /* the object's triangles once, in its space (true instancing: scene_add_instance) */
        if (r->s->ntriangles + o->nt > MAX_TRIANGLES)
            return prm_fail(&r->ctx, w, "more than %u triangles", MAX_TRIANGLES);
        size_t v0 = r->s->nvertices, t0 = r->s->ntriangles;
        if (scene_add_mesh(r->s, o->p, o->n, o->uv, o->nv, o->idx, o->mat, o->nt, xform_identity(), 0))
            return oom(r, w);
        int mesh = scene_add_instanced_mesh(r->s, t0, o->nt, v0, o->nv);
        if (mesh < 0) return oom(r, w);
        o->mesh = mesh + 1;
    }
    /* pbrt keeps a surface's side under a transform that changes handedness: the winding reversed */
    if (scene_add_instance(r->s, o->mesh - 1, m4_xform(&F), -1, m4_det3(&F) < 0))
        return prm_fail(&r->ctx, w, "ObjectInstance \"%s\": out of memory or a singular transformation", name);
    return 0;
}

static int directive(R *r, const pbrt_token *t) {
    char w[PRM_WHERE];
    pbrt_where(&r->lx, t, w);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(t->len > 60 ? 60 : t->len), t->text);
    double v[16];
    if (!strcmp(name, "Identity")) {
        r->g.ctm = m4_id();
    } else if (!strcmp(name, "Translate")) {
        if (read_numbers(r, v, 3, name, t)) return -1;
        m4 m = m4_translate(v[0], v[1], v[2]);
        concat(r, &m);
    } else if (!strcmp(name, "Scale")) {
        if (read_numbers(r, v, 3, name, t)) return -1;
        m4 m = m4_scale(v[0], v[1], v[2]);
        concat(r, &m);
    } else if (!strcmp(name, "Rotate")) {
        if (read_numbers(r, v, 4, name, t)) return -1;
        m4 m = m4_rotate(v[0], v[1], v[2], v[3]);
        concat(r, &m);
    } else if (!strcmp(name, "LookAt")) {
        if (read_numbers(r, v, 9, name, t)) return -1;
        double pos[3] = {v[0], v[1], v[2]}, dir[3] = {v[3] - v[0], v[4] - v[1], v[5] - v[2]},
               up[3] = {v[6], v[7], v[8]};
        double right[3], nup[3];
        if (d_norm(dir)) return prm_fail(&r->ctx, w, "LookAt: the eye and the point looked at are the same");
        if (d_norm(up)) return prm_fail(&r->ctx, w, "LookAt: the up vector is zero");
        d_cross(up, dir, right);
        if (d_norm(right)) return prm_fail(&r->ctx, w, "LookAt: the up vector and the viewing direction are parallel");
        d_cross(dir, right, nup);
        m4 wfc = m4_id(), cfw;
        for (int i = 0; i < 3; ++i) {
            wfc.m[i][0] = right[i];
            wfc.m[i][1] = nup[i];
            wfc.m[i][2] = dir[i];
            wfc.m[i][3] = pos[i];
        }
        if (m4_inv(&wfc, &cfw)) return prm_fail(&r->ctx, w, "LookAt: degenerate");
        concat(r, &cfw);
    } else if (!strcmp(name, "Transform") || !strcmp(name, "ConcatTransform")) {
        if (read_numbers(r, v, 16, name, t)) return -1;
        m4 m;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) m.m[i][j] = v[j * 4 + i]; /* pbrt writes the transpose */
        if (name[0] == 'T')
            r->g.ctm = m;
        else
            concat(r, &m);
    } else if (!strcmp(name, "CoordinateSystem") || !strcmp(name, "CoordSysTransform")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = 0;
        if (name[5] == 'i') { /* CoordinateSystem */
            if (GROW(r->coords, r->ncoords, r->capcoords))
                rc = oom(r, w);
            else
                r->coords[r->ncoords++] = (named_m4){n, r->g.ctm}, n = NULL;
        } else {
            size_t i = r->ncoords;
            while (i-- > 0)
                if (!strcmp(r->coords[i].name, n)) break;
            if (i == (size_t)-1 && !strcmp(n, "world"))
                r->g.ctm = m4_id();
            else if (i == (size_t)-1)
                rc = UNSUPPORTED(r, "coordsys", w, "CoordSysTransform \"%s\": no such coordinate system; ignored", n);
            else
                r->g.ctm = r->coords[i].m;
        }
        free(n);
        return rc;
    } else if (!strcmp(name, "ReverseOrientation")) {
        r->g.rev = !r->g.rev;
    } else if (!strcmp(name, "AttributeBegin") || !strcmp(name, "TransformBegin")) {
        return push_state(r, w);
    } else if (!strcmp(name, "AttributeEnd") || !strcmp(name, "TransformEnd")) {
        if (name[0] == 'T') { /* pbrt-v3's TransformEnd restores only the transformation */
            m4 keep = r->g.ctm;
            (void)keep;
            if (!r->nstack) return prm_fail(&r->ctx, w, "TransformEnd without TransformBegin");
            r->g.ctm = r->stack[r->nstack - 1].ctm;
            free(r->stack[r->nstack - 1].area_where);
            r->nstack--;
            return 0;
        }
        return pop_state(r, w, name);
    } else if (!strcmp(name, "TransformTimes")) {
        return read_numbers(r, v, 2, name, t);
    } else if (!strcmp(name, "ActiveTransform")) {
        pbrt_token a;
        if (pbrt_lex_next(&r->lx, &a)) return -1;
        if (a.type != PTK_WORD) return prm_fail(&r->ctx, w, "ActiveTransform expects StartTime, EndTime or All");
        if (!pbrt_tok_is_word(&a, "All"))
            return UNSUPPORTED(r, "motion blur", w,
                               "ActiveTransform: caustic has no motion blur; the transforms of both "
                               "times apply");
    } else if (!strcmp(name, "WorldBegin")) {
        if (r->world) return prm_fail(&r->ctx, w, "WorldBegin twice");
        r->world = 1;
        if (pbrt_setup_world(r, w)) return -1;
        r->g.ctm = m4_id();
        if (GROW(r->coords, r->ncoords, r->capcoords)) return oom(r, w);
        r->coords[r->ncoords++] = (named_m4){sdup("world", 5), m4_id()};
    } else if (!strcmp(name, "WorldEnd")) {
        /* pbrt-v3: the end of the file */
    } else if (!strcmp(name, "Camera")) {
        return pbrt_d_camera(r, t);
    } else if (!strcmp(name, "Film") || !strcmp(name, "Sampler") || !strcmp(name, "Integrator") ||
               !strcmp(name, "Accelerator") || !strcmp(name, "PixelFilter") || !strcmp(name, "Filter")) {
        return pbrt_d_settings(r, t, name);
    } else if (!strcmp(name, "Option")) {
        plist pl;
        if (pbrt_parse_params(r, &pl, "Option", t)) return -1;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        pbrt_plist_free(&pl);
    } else if (!strcmp(name, "ColorSpace")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = strcmp(n, "srgb") ? UNSUPPORTED(r, "colorspace", w, "ColorSpace \"%s\": caustic renders sRGB", n) : 0;
        free(n);
        return rc;
    } else if (!strcmp(name, "Attribute")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        free(n);
        plist pl;
        if (pbrt_parse_params(r, &pl, "Attribute", t)) return -1;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        pbrt_plist_free(&pl);
        pbrt_where(&r->lx, t, w);
        return UNSUPPORTED(r, "attribute", w, "Attribute (default parameters): not applied");
    } else if (!strcmp(name, "Shape")) {
        return pbrt_d_shape(r, t);
    } else if (!strcmp(name, "LightSource")) {
        return pbrt_d_light(r, t, 0);
    } else if (!strcmp(name, "AreaLightSource")) {
        return pbrt_d_light(r, t, 1);
    } else if (!strcmp(name, "Material")) {
        char type[64];
        plist pl;
        if (pbrt_typed_params(r, t, "Material", "material", type, &pl, w)) return -1;
        int i = pbrt_make_material(r, type, &pl, NULL, w);
        pbrt_plist_free(&pl);
        if (i < 0) return -1;
        r->g.material = i;
    } else if (!strcmp(name, "MakeNamedMaterial")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        char owner[128];
        snprintf(owner, sizeof owner, "material \"%.100s\"", n);
        plist pl;
        if (pbrt_parse_params(r, &pl, owner, t)) {
            free(n);
            return -1;
        }
        pbrt_where(&r->lx, t, w);
        const char *type;
        int rc = prm_string(&pl.l, "type", "", &type);
        if (!rc && !type[0]) rc = prm_fail(&r->ctx, w, "MakeNamedMaterial \"%s\" needs \"string type\"", n);
        if (!rc && pbrt_find_named_material(r, n) >= 0)
            rc = prm_fail(&r->ctx, w, "MakeNamedMaterial: \"%s\" is defined twice", n);
        char tcopy[64];
        if (!rc) snprintf(tcopy, sizeof tcopy, "%s", type);
        if (!rc && pbrt_make_material(r, tcopy, &pl, n, w) < 0) rc = -1;
        pbrt_plist_free(&pl);
        free(n);
        return rc;
    } else if (!strcmp(name, "NamedMaterial")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int i = pbrt_find_named_material(r, n);
        int rc = i < 0 ? prm_fail(&r->ctx, w, "NamedMaterial: no material named \"%s\"", n) : 0;
        if (i >= 0) r->g.material = i;
        free(n);
        return rc;
    } else if (!strcmp(name, "Texture")) {
        return pbrt_d_texture(r, t);
    } else if (!strcmp(name, "MakeNamedMedium")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        for (size_t i = 0; i < r->nmedia; ++i)
            if (!strcmp(r->media[i], n)) {
                int rc = prm_fail(&r->ctx, w, "MakeNamedMedium: \"%s\" is defined twice", n);
                free(n);
                return rc;
            }
        char owner[200];
        snprintf(owner, sizeof owner, "medium \"%.160s\"", n);
        plist pl;
        if (pbrt_parse_params(r, &pl, owner, t)) {
            free(n);
            return -1;
        }
        char **g = realloc(r->media, (r->nmedia + 1) * sizeof *g);
        int *gr = g ? realloc(r->media_ref, (r->nmedia + 1) * sizeof *gr) : NULL;
        if (g) r->media = g;
        if (!gr) {
            free(n);
            pbrt_plist_free(&pl);
            return oom(r, w);
        }
        r->media_ref = gr;
        r->media[r->nmedia] = n;
        r->media_ref[r->nmedia++] = 0;
        int ref = 0, rc = pbrt_make_medium(r, &pl, t, n, &ref);
        r->media_ref[r->nmedia - 1] = ref;
        if (!rc) rc = pbrt_finish_params(r, &pl);
        pbrt_plist_free(&pl);
        return rc;
    } else if (!strcmp(name, "MediumInterface")) {
        char *a = NULL, *b = NULL;
        if (read_string(r, t, name, &a)) return -1;
        pbrt_token nx;
        if (pbrt_lex_peek(&r->lx, &nx)) {
            free(a);
            return -1;
        }
        if (nx.type == PTK_STRING && !memchr(nx.text, ' ', nx.len) && read_string(r, t, name, &b)) {
            free(a);
            return -1;
        }
        int rc = 0, ref[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            const char *m = k && b ? b : a; /* one name: the same medium on both sides (pbrt-v4) */
            if (!m || !m[0]) continue;
            size_t i = 0;
            while (i < r->nmedia && strcmp(r->media[i], m)) ++i;
            if (i == r->nmedia) {
                rc = prm_fail(&r->ctx, w, "MediumInterface: no medium named \"%s\"", m);
                break;
            }
            ref[k] = r->media_ref[i];
        }
        free(a), free(b);
        r->g.med_in = ref[0];
        r->g.med_out = ref[1];
        return rc;
    } else if (!strcmp(name, "ObjectBegin")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        if (r->cur_object) {
            free(n);
            return prm_fail(&r->ctx, w, "ObjectBegin inside ObjectBegin");
        }
        for (size_t i = 0; i < r->nobjects; ++i)
            if (!strcmp(r->objects[i].name, n)) {
                int rc = prm_fail(&r->ctx, w, "ObjectBegin: \"%s\" is defined twice", n);
                free(n);
                return rc;
            }
        if (push_state(r, w) || GROW(r->objects, r->nobjects, r->capobjects)) {
            free(n);
            return oom(r, w);
        }
        memset(&r->objects[r->nobjects], 0, sizeof r->objects[0]);
        r->objects[r->nobjects].name = n;
        r->cur_object = &r->objects[r->nobjects++];
    } else if (!strcmp(name, "ObjectEnd")) {
        if (!r->cur_object) return prm_fail(&r->ctx, w, "ObjectEnd without ObjectBegin");
        r->cur_object = NULL;
        return pop_state(r, w, name);
    } else if (!strcmp(name, "ObjectInstance")) {
        char *n;
        if (read_string(r, t, name, &n)) return -1;
        int rc = instance(r, n, w);
        free(n);
        return rc;
    } else if (!strcmp(name, "Include") || !strcmp(name, "Import")) {
        pbrt_token f;
        if (pbrt_lex_next(&r->lx, &f)) return -1;
        if (f.type != PTK_STRING) return prm_fail(&r->ctx, w, "%s expects a quoted file name", name);
        char *fn = sdup(f.text, f.len);
        if (!fn) return oom(r, w);
        int rc = pbrt_lex_push(&r->lx, fn, t);
        free(fn);
        return rc;
    } else if (!strcmp(name, "MakeNamedMedium")) {
        return 0;
    } else {
        static const char *const known[] = {"Identity",
                                            "Translate",
                                            "Scale",
                                            "Rotate",
                                            "LookAt",
                                            "Transform",
                                            "ConcatTransform",
                                            "CoordinateSystem",
                                            "CoordSysTransform",
                                            "ReverseOrientation",
                                            "AttributeBegin",
                                            "AttributeEnd",
                                            "TransformBegin",
                                            "TransformEnd",
                                            "TransformTimes",
                                            "ActiveTransform",
                                            "WorldBegin",
                                            "WorldEnd",
                                            "Camera",
                                            "Film",
                                            "Sampler",
                                            "Integrator",
                                            "Accelerator",
                                            "PixelFilter",
                                            "Option",
                                            "ColorSpace",
                                            "Attribute",
                                            "Shape",
                                            "LightSource",
                                            "AreaLightSource",
                                            "Material",
                                            "MakeNamedMaterial",
                                            "NamedMaterial",
                                            "Texture",
                                            "MakeNamedMedium",
                                            "MediumInterface",
                                            "ObjectBegin",
                                            "ObjectEnd",
                                            "ObjectInstance",
                                            "Include",
                                            "Import",
                                            NULL};
        const char *sug = prm_suggest(name, known);
        return prm_fail(&r->ctx, w, "unknown directive \"%s\"%s%s%s", name, sug ? " (did you mean \"" : "",
                        sug ? sug : "", sug ? "\"?)" : "");
    }
    return 0;
}

/* ---- the load ------------------------------------------------------------------------------------- */
static void free_reader(R *r) {
    pbrt_lex_free(&r->lx);
    free(r->g.area_where);
    for (size_t i = 0; i < r->nstack; ++i) free(r->stack[i].area_where);
    free(r->stack);
    for (size_t i = 0; i < r->npmats; ++i) free(r->pmats[i].name);
    free(r->pmats);
    for (size_t i = 0; i < r->nptexs; ++i) free(r->ptexs[i].name);
    free(r->ptexs);
    free(r->ders);
    for (size_t i = 0; i < r->ncoords; ++i) free(r->coords[i].name);
    free(r->coords);
    for (size_t i = 0; i < r->nmedia; ++i) free(r->media[i]);
    free(r->media);
    free(r->media_ref);
    for (size_t i = 0; i < r->nobjects; ++i) {
        pobject *o = &r->objects[i];
        free(o->name), free(o->p), free(o->n), free(o->uv), free(o->idx), free(o->mat);
    }
    free(r->objects);
    free(r->cam_type);
}

int pbrt_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen);

int pbrt_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    R *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        return -1;
    }
    prm_init(&r->ctx, src->path, opts ? opts->strict : 0, err, errlen);
    r->ctx.line_format = 1;
    r->opts = opts;
    int rc = 0;
    /* a gzipped top file (.pbrt.gz): read it again through zlib */
    char *unz = NULL;
    const char *text = src->text;
    size_t size = src->size;
    if (size >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b) {
        char why[256];
        unz = pbrt_read_file(src->path, (size_t)PBRT_MAX_BYTES, &size, why, sizeof why);
        if (!unz) {
            snprintf(err, errlen, "%s: %s", src->path, why);
            free(r);
            return -1;
        }
        text = unz;
    }
    if (pbrt_lex_init(&r->lx, &r->ctx, src->path, src->dir, text, size)) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        free(unz);
        free(r);
        return -1;
    }
    r->s = scene_create();
    if (!r->s) rc = prm_fail(&r->ctx, NULL, "out of memory");
    if (!rc) {
        if (opts) {
            r->s->warn = opts->warn;
            r->s->warn_user = opts->warn_user;
        }
        r->g.ctm = m4_id();
        r->cam_from_world = m4_id();
        r->mirror = m4_id();
        r->fov = 90;
        r->focaldistance = 1e6;
        r->width = 1280;
        r->height = 720;
        r->imaging_ratio = 1.0;
        r->s->spp = 16;
        r->s->max_depth = 5;
        /* pbrt's default material: diffuse 0.5 */
        pmat d;
        memset(&d, 0, sizeof d);
        d.kind = MAT_DIFFUSE;
        d.p = material_params_default(MAT_DIFFUSE);
        d.p.rgb = v3s(0.5f);
        if (GROW(r->pmats, r->npmats, r->cappmats))
            rc = prm_fail(&r->ctx, NULL, "out of memory");
        else
            r->pmats[r->npmats++] = d;
        r->g.material = 0;
    }
    while (!rc) {
        pbrt_token t;
        if (pbrt_lex_next(&r->lx, &t)) {
            rc = -1;
            break;
        }
        if (t.type == PTK_EOF) break;
        if (t.type != PTK_WORD) {
            char w[PRM_WHERE];
            pbrt_where(&r->lx, &t, w);
            rc = prm_fail(&r->ctx, w, "expected a directive (a word such as Shape or AttributeBegin), found %s",
                          t.type == PTK_STRING   ? "a quoted string"
                          : t.type == PTK_NUMBER ? "a number"
                                                 : "a bracket");
            break;
        }
        rc = directive(r, &t);
    }
    r->ctx.src = src->path;
    if (!rc && !r->world) rc = prm_fail(&r->ctx, NULL, "no WorldBegin: this pbrt file describes no scene");
    if (!rc && r->cur_object) rc = prm_fail(&r->ctx, NULL, "ObjectBegin without ObjectEnd at the end of the file");
    if (!rc && r->nstack)
        rc = UNSUPPORTED(r, "unbalanced", NULL, "%zu AttributeBegin without AttributeEnd at the end of the file",
                         r->nstack);
    if (!rc) {
        scene *s = r->s;
        s->env_radiance = s->env_tex >= 0 ? vadd(s->env_radiance, v3s(0.0f)) : r->env_const;
        if (s->env_tex >= 0 && (r->env_const.x > 0 || r->env_const.y > 0 || r->env_const.z > 0))
            rc = UNSUPPORTED(
                r, "env const+image", NULL,
                "a constant infinite light besides the image one: caustic's environment is one of them; the "
                "constant is dropped");
        /* exposure: pbrt's imaging ratio (shutter time x ISO / 100) scales what the film records */
        float k = (float)r->imaging_ratio;
        if (k != 1.0f) {
            for (size_t i = 0; i < s->nmaterials; ++i) s->materials[i].emission = vscale(s->materials[i].emission, k);
            for (size_t i = 0; i < s->npunctual; ++i) s->punctual[i].intensity = vscale(s->punctual[i].intensity, k);
            s->env_radiance = vscale(s->env_radiance, k);
        }
        if (!s->ntriangles && !s->nspheres && !s->nquads)
            rc = UNSUPPORTED(r, "empty", NULL, "the scene has no shapes caustic can render");
    }
    if (!rc && r->s->integrator_hint > 1 && r->lensradius > 0) { /* caustic's bidirectional ones have no lens */
        r->s->integrator_hint = 0;
        prm_note(&r->ctx, "integrator lens", NULL,
                 "the pbrt file's integrator is bidirectional and its camera has a lens: caustic renders lenses with "
                 "path tracing only, so path tracing it is");
    }
    if (!rc && r->s->integrator_hint > 1 && r->s->nmedia > 0) {
        /* the bidirectional integrators render homogeneous media but refuse grids and emitting
         * media (kernel/bidir_limits.h): for those the file's bdpt / sppm / lightpath becomes path
         * tracing rather than a refusal */
        bidir_request q;
        memset(&q, 0, sizeof q);
        q.features = KF_MEDIA;
        q.media_ok = 1;
        for (size_t i = 0; i < r->s->nmedia; ++i) {
            const medium *m = &r->s->media[i];
            if (m->kind == MEDIUM_GRID || m->kind == MEDIUM_NANOVDB) q.grid_media = 1;
            if (vmaxc(m->emission) > 0.0f && vmaxc(m->sigma_a) > 0.0f) q.emissive_media = 1;
        }
        if (bidir_refusal(&q)) {
            r->s->integrator_hint = 0;
            prm_note(
                &r->ctx, "integrator media", NULL,
                "the pbrt file's integrator is bidirectional and the scene has a grid or an emitting medium, which "
                "caustic's bidirectional integrators do not render: path tracing it is");
        }
    }
    if (!rc && r->mirrored && opts && opts->json_out) /* said where coordinates are shown */
        prm_note(&r->ctx, "mirrored", NULL,
                 "pbrt's camera is left-handed: the scene is mirrored through the camera's vertical plane so that "
                 "caustic's right-handed camera sees pbrt's picture (coordinates in --dump-scene are mirrored)");
    if (!rc && r->ctx.npending) { /* the coverage summary closes the list */
        size_t approx = r->ctx.npending, uses = 0;
        for (size_t i = 0; i < r->ctx.npending; ++i) uses += 1 + r->ctx.pending[i].more;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "coverage: %zu pbrt-v4 feature%s above (%zu use%s) approximated or not rendered; the rest is read as "
                 "pbrt-v4 defines it",
                 approx, approx == 1 ? "" : "s", uses, uses == 1 ? "" : "s");
        prm_note(&r->ctx, "coverage summary", NULL, msg);
    }
    if (rc) {
        prm_flush(&r->ctx, NULL, 0);
        scene_destroy(r->s);
    } else {
        prm_flush(&r->ctx, r->s, 1);
        *out = r->s;
    }
    free_reader(r);
    free(unz);
    free(r);
    return rc;
}
