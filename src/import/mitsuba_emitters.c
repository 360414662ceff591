/* Emitters of the Mitsuba reader: point, spot, directional, envmap and constant lights (area
 * emitters are the shapes' materials). */
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

int mi_emitter_radiance(reader *R, const mx_node *e, vec3 *rgb, int *tex) {
    return mi_get_colour_tex(R, e, "radiance", v3s(1.0f), rgb, tex);
}
/* ---- emitters ---------------------------------------------------------------------------------- */
/* Mitsuba's envmap: lat-long, u = atan2(x, -z) / 2pi wrapped to [0, 1) (caustic's u is that plus
 * one half), under to_world. Resampled here into caustic's convention (bilinear where rotated;
 * a shift of whole columns when not). */
static int add_envmap(reader *R, const mx_node *e, xform M, double scale) {
    const char *fn = mi_get_string(e, "filename", NULL);
    if (!fn) FAIL(R, e, "envmap without filename");
    char *full = mx_resolve(&R->D, e, fn);
    if (!full) FAIL(R, e, "out of memory");
    image src, dst;
    char ierr[512];
    if (image_load(&src, full, ierr, sizeof ierr)) {
        free(full);
        FAIL(R, e, "%s", ierr);
    }
    image_value_report vr;
    image_sanitize(&src, &vr);
    if (image_init(&dst, src.width, src.height)) {
        image_free(&src);
        free(full);
        FAIL(R, e, "out of memory");
    }
    int W = src.width, H = src.height;
    xform inv;
    if (xform_invert(&M, &inv)) {
        image_free(&src);
        image_free(&dst);
        free(full);
        FAIL(R, e, "envmap: singular to_world");
    }
    xform I = xform_identity();
    int rotated = memcmp(&M, &I, sizeof M) != 0;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            float *o = dst.rgb + 3 * ((size_t)y * W + x);
            if (!rotated) { /* the same row, half a turn along it */
                const float *s = src.rgb + 3 * ((size_t)y * W + (x + W / 2) % W);
                memcpy(o, s, 3 * sizeof *o);
                if (W % 2) { /* odd widths: average the two neighbours */
                    const float *s2 = src.rgb + 3 * ((size_t)y * W + (x + W / 2 + 1) % W);
                    for (int c = 0; c < 3; ++c) o[c] = 0.5f * (s[c] + s2[c]);
                }
                continue;
            }
            vec3 d = env_uv_to_dir(v2((x + 0.5f) / W, (y + 0.5f) / H));
            vec3 l = vnorm(xform_vector(&inv, d));
            double u = atan2(l.x, -l.z) / (2 * MI_PI), v = acos(fmax(-1.0, fmin(1.0, l.y))) / MI_PI;
            u -= floor(u);
            double fx = u * W - 0.5, fy = v * H - 0.5;
            int x0 = (int)floor(fx), y0 = (int)floor(fy);
            double ax = fx - x0, ay = fy - y0;
            for (int c = 0; c < 3; ++c) {
                double acc = 0;
                for (int j = 0; j < 2; ++j)
                    for (int i = 0; i < 2; ++i) {
                        int xx = ((x0 + i) % W + W) % W, yy = y0 + j < 0 ? 0 : y0 + j >= H ? H - 1 : y0 + j;
                        acc += (i ? ax : 1 - ax) * (j ? ay : 1 - ay) * src.rgb[3 * ((size_t)yy * W + xx) + c];
                    }
                o[c] = (float)acc;
            }
        }
    image_free(&src);
    int idx = scene_take_image_texture(R->s, &dst);
    if (idx < 0) {
        free(full);
        FAIL(R, e, "out of memory");
    }
    R->s->env_tex = idx;
    R->s->env_radiance = v3s((float)scale);
    int rc = scene_env_memory_check(R->s, idx, full, ierr, sizeof ierr);
    free(full);
    if (rc) FAIL(R, e, "%s", ierr);
    return 0;
}

int mi_add_emitter(reader *R, const mx_node *e) {
    ((mx_node *)e)->used = 1;
    const char *type = mx_attr(e, "type");
    if (!type) FAIL(R, e, "<emitter> without type");
    xform M;
    if (mi_get_transform(R, e, "to_world", &M)) return -1;
    vec3 rgb;
    int tex;
    char w[PRM_WHERE];
    mx_where(&R->P, w, e);
    if (!strcmp(type, "point")) {
        vec3 pos = xform_point(&M, v3s(0.0f));
        if (mi_prop(e, "position") && mi_get_point(R, e, "position", pos, &pos)) return -1;
        if (mi_get_colour_tex(R, e, "intensity", v3s(1.0f), &rgb, &tex)) return -1;
        if (scene_add_point_light(R->s, pos, rgb)) FAIL(R, e, "point light: bad values (or out of memory)");
    } else if (!strcmp(type, "spot")) {
        double cut, beam;
        if (mi_get_colour_tex(R, e, "intensity", v3s(1.0f), &rgb, &tex) ||
            mi_get_float(R, e, "cutoff_angle", 20.0, &cut) || mi_get_float(R, e, "beam_width", cut * 0.75, &beam))
            return -1;
        mx_node *tp = mi_prop(e, "texture");
        if (tp) {
            vec3 mean;
            int ti;
            if (!strcmp(tp->tag, "ref")) {
                const mx_node *t;
                if (mi_deref(R, tp, &t)) return -1;
                tp = (mx_node *)t;
            }
            if (strcmp(tp->tag, "texture")) FAIL(R, tp, "spot: \"texture\" must be a <texture>");
            if (mi_texture_of(R, tp, &ti, &mean)) return -1;
            rgb = vmul(rgb, mean);
            if (mi_warn_at(R, e, "spot texture",
                           "spot light with a texture: caustic's spot lights are plain: the "
                           "texture's mean colour (%.3g, %.3g, %.3g) instead",
                           mean.x, mean.y, mean.z))
                return -1;
        }
        if (!(cut > 0 && cut <= 90)) FAIL(R, e, "spot: cutoff_angle %g must be in (0, 90]", cut);
        if (beam > cut) beam = cut;
        vec3 pos = xform_point(&M, v3s(0.0f)), ax = vnorm(xform_vector(&M, v3(0, 0, 1)));
        if (scene_add_spot_light(R->s, pos, ax, rgb, (float)beam, (float)cut, SPOT_FALLOFF_LINEAR_ANGLE))
            FAIL(R, e, "spot light: bad values (or out of memory)");
    } else if (!strcmp(type, "directional")) {
        vec3 dir = xform_vector(&M, v3(0, 0, 1));
        if (mi_prop(e, "direction") && mi_get_point(R, e, "direction", dir, &dir)) return -1;
        if (mi_get_colour_tex(R, e, "irradiance", v3s(1.0f), &rgb, &tex)) return -1;
        if (scene_add_directional_light(R->s, dir, rgb)) FAIL(R, e, "directional light: bad direction");
    } else if (!strcmp(type, "constant")) {
        if (mi_get_colour_tex(R, e, "radiance", v3s(1.0f), &rgb, &tex)) return -1;
        if (R->s->env_tex >= 0 || R->s->env_radiance.x + R->s->env_radiance.y + R->s->env_radiance.z > 0) {
            if (mi_warn_at(R, e, "two environments",
                           "a second environment emitter: caustic has one; this one is left out"))
                return -1;
            return 0;
        }
        R->s->env_radiance = rgb;
    } else if (!strcmp(type, "envmap")) {
        double scale;
        if (mi_get_float(R, e, "scale", 1.0, &scale)) return -1;
        if (R->s->env_tex >= 0 || R->s->env_radiance.x + R->s->env_radiance.y + R->s->env_radiance.z > 0) {
            if (mi_warn_at(R, e, "two environments",
                           "a second environment emitter: caustic has one; this one is left out"))
                return -1;
            mi_mark_all(e);
            return 0;
        }
        return add_envmap(R, e, M, scale);
    } else if (!strcmp(type, "area")) {
        FAIL(R, e, "an area emitter belongs inside a <shape>");
    } else {
        mi_mark_all(e);
        return mi_warn_at(R, e, type, "emitter \"%s\": caustic has no such light: left out", type);
    }
    return 0;
}
