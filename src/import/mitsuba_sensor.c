/* The sensor of the Mitsuba reader (camera, film, sampler) and the integrator's settings. */
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

/* ---- sensor, film, sampler, integrator ---------------------------------------------------------- */
int mi_read_sensor(reader *R, const mx_node *sn) {
    ((mx_node *)sn)->used = 1;
    const char *type = mx_attr(sn, "type");
    if (!type) FAIL(R, sn, "<sensor> without type");
    camera_desc *cd = &R->s->camera;
    long w = 768, h = 576, spp = 4;
    for (int i = 0; i < sn->nkids; ++i) {
        const mx_node *c = sn->kids[i];
        if (!strcmp(c->tag, "film")) {
            ((mx_node *)c)->used = 1;
            if (mi_get_int(R, c, "width", 768, &w) || mi_get_int(R, c, "height", 576, &h)) return -1;
            if (w < 1 || h < 1 || w > 16384 || h > 16384 || (double)w * h > (double)(1 << 26))
                FAIL(R, c, "film %ldx%ld: each side 1..16384, at most 2^26 pixels", w, h);
            if ((mi_prop(c, "crop_width") || mi_prop(c, "crop_offset_x")) &&
                mi_warn_at(R, c, "crop", "film crop: caustic renders the whole film (--crop crops)"))
                return -1;
            for (int k = 0; k < c->nkids; ++k)
                if (!strcmp(c->kids[k]->tag, "rfilter")) {
                    ((mx_node *)c->kids[k])->used = 1;
                    const char *ft = mx_attr(c->kids[k], "type");
                    if (ft && strcmp(ft, "box") &&
                        mi_warn_at(R, c->kids[k], "rfilter", "reconstruction filter \"%s\": caustic's film is a box",
                                   ft))
                        return -1;
                    for (int j = 0; j < c->kids[k]->nkids; ++j) ((mx_node *)c->kids[k]->kids[j])->used = 1;
                }
            /* output settings with no meaning for the picture */
            static const char *const fmt[] = {"pixel_format",       "component_format", "file_format",   "banner",
                                              "high_quality_edges", "rfilter",          "sample_border", NULL};
            for (int k = 0; fmt[k]; ++k) (void)mi_prop(c, fmt[k]);
        } else if (!strcmp(c->tag, "sampler")) {
            ((mx_node *)c)->used = 1;
            if (mi_get_int(R, c, "sample_count", 4, &spp)) return -1;
            if (spp < 1) FAIL(R, c, "sample_count %ld must be at least 1", spp);
            (void)mi_prop(c, "seed");
        } else if (!strcmp(c->tag, "medium") || !strcmp(c->tag, "ref")) {
            const mx_node *t = c; /* the medium around the camera */
            if (!strcmp(c->tag, "ref") && mi_deref(R, c, &t)) return -1;
            if (!strcmp(t->tag, "medium") && mi_medium_of(R, c, &cd->medium)) return -1;
        }
    }
    cd->width = (int)w;
    cd->height = (int)h;
    R->s->spp = (int)(spp > 1 << 24 ? 1 << 24 : spp);
    xform M;
    if (mi_get_transform(R, sn, "to_world", &M)) return -1;
    cd->eye = xform_point(&M, v3s(0.0f));
    vec3 fwd = vnorm(xform_vector(&M, v3(0, 0, 1))), up = vnorm(xform_vector(&M, v3(0, 1, 0)));
    cd->lookat = vadd(cd->eye, fwd);
    cd->up = up;
    /* Mitsuba's film x runs along the camera's -x: caustic's right is fwd x up; a mirroring
     * to_world flips the picture, which caustic's camera cannot */
    vec3 right_mi = vscale(xform_vector(&M, v3(1, 0, 0)), -1.0f);
    if (vdot(right_mi, vcross(fwd, up)) < 0 &&
        mi_warn_at(R, sn, "mirrored camera",
                   "the sensor's to_world mirrors the picture: caustic renders it unmirrored"))
        return -1;
    double fov = 0, vfov;
    const char *axis = mi_get_string(sn, "fov_axis", "x");
    if (mi_prop(sn, "fov")) {
        if (mi_get_float(R, sn, "fov", 0, &fov)) return -1;
    } else {
        const char *fl = mi_get_string(sn, "focal_length", "50mm");
        double f = atof(fl);
        if (!(f > 0)) FAIL(R, sn, "focal_length \"%s\" is not a length (as \"50mm\")", fl);
        fov = 2 * atan(sqrt(36.0 * 36.0 + 24.0 * 24.0) / (2 * f)) * 180 / MI_PI;
        axis = "diagonal";
    }
    if (!(fov > 0 && fov < 180)) FAIL(R, sn, "fov %g must be in (0, 180) degrees", fov);
    double t = tan(fov * MI_PI / 360.0), aspect = (double)w / (double)h;
    if (!strcmp(axis, "smaller")) axis = w < h ? "x" : "y";
    if (!strcmp(axis, "larger")) axis = w > h ? "x" : "y";
    if (!strcmp(axis, "x"))
        vfov = 2 * atan(t / aspect);
    else if (!strcmp(axis, "y"))
        vfov = 2 * atan(t);
    else if (!strcmp(axis, "diagonal"))
        vfov = 2 * atan(t / sqrt(aspect * aspect + 1));
    else
        FAIL(R, sn, "fov_axis \"%s\": one of x, y, diagonal, smaller, larger", axis);
    cd->fovy_deg = (float)(vfov * 180 / MI_PI);
    cd->aperture_radius = 0;
    cd->focus_distance = 0;
    (void)mi_prop(sn, "near_clip");
    (void)mi_prop(sn, "far_clip");
    (void)mi_prop(sn, "shutter_open");
    (void)mi_prop(sn, "shutter_close");
    if (!strcmp(type, "thinlens")) {
        double ar, fd;
        if (mi_get_float(R, sn, "aperture_radius", 0.0, &ar) || mi_get_float(R, sn, "focus_distance", 0.0, &fd))
            return -1;
        if (ar < 0 || fd < 0) FAIL(R, sn, "thinlens: aperture_radius and focus_distance must not be negative");
        cd->aperture_radius = (float)ar;
        cd->focus_distance = (float)fd;
    } else if (!strcmp(type, "orthographic")) {
        if (mi_warn_at(R, sn, "orthographic",
                       "orthographic sensor: caustic's cameras are perspective: a %g degree "
                       "perspective view from the same place instead",
                       vfov * 180 / MI_PI))
            return -1;
    } else if (strcmp(type, "perspective")) {
        if (mi_warn_at(R, sn, type, "sensor \"%s\": caustic has no such camera: a perspective one instead", type))
            return -1;
    }
    return 0;
}

/* Integrators: wrappers (moment, aov, stokes) hold the one that renders. Mitsuba's max_depth
 * counts path segments (1: emitters seen directly, 2: direct light; -1: unbounded); caustic's
 * depth counts bounces (depth = max_depth - 1). */
int mi_read_integrator(reader *R, const mx_node *in) {
    ((mx_node *)in)->used = 1;
    const char *type = mx_attr(in, "type");
    if (!type) FAIL(R, in, "<integrator> without type");
    if (!strcmp(type, "moment") || !strcmp(type, "aov") || !strcmp(type, "stokes")) {
        for (int i = 0; i < in->nkids; ++i)
            if (!strcmp(in->kids[i]->tag, "integrator")) return mi_read_integrator(R, in->kids[i]);
        return 0;
    }
    long md;
    if (mi_get_int(R, in, "max_depth", -1, &md)) return -1;
    if (!strcmp(type, "direct")) md = 2;
    (void)mi_prop(in, "rr_depth");
    (void)mi_prop(in, "hide_emitters");
    if (md < 0 || md > 1025)
        R->s->max_depth = 1024;
    else if (md <= 1) {
        if (mi_warn_at(R, in, "max_depth 1",
                       "max_depth %ld (emitters seen directly): caustic's shortest paths are "
                       "depth 1 (direct light)",
                       md))
            return -1;
        R->s->max_depth = 1;
    } else
        R->s->max_depth = (int)md - 1;
    static const char *const native[] = {"path", "volpath", "volpathmis", "direct", "prb", "prbvolpath", NULL};
    int k = 0;
    while (native[k] && strcmp(native[k], type)) k++;
    if (!native[k]) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "integrator \"%s\": caustic renders with the integrator --integrator chooses "
                 "(path tracing unless told; vcm for caustics)",
                 type);
        char w[PRM_WHERE];
        mx_where(&R->P, w, in);
        prm_note(&R->P, "integrator", w, msg);
        mi_mark_all(in);
    }
    return 0;
}
