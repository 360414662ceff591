/* The pbrt-v4 reader: LightSource and AreaLightSource, and the environment map resampled from
 * pbrt's equal-area octahedral image (pbrt_internal.h lists the files). */
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

/* ---- lights ---------------------------------------------------------------------------------------- */
/* The "from" and "to" points of point, spot and distant lights (pbrt-v4's defaults: the origin
 * and +z). */
static int from_to(R *r, plist *pl, double from[3], double to[3]) {
    static const double from0[3] = {0, 0, 0}, to0[3] = {0, 0, 1};
    memcpy(from, from0, sizeof from0);
    memcpy(to, to0, sizeof to0);
    size_t n = 0;
    const double *f = pbrt_pnums(r, pl, "from", &n);
    if (n == (size_t)-1) return -1;
    if (f && n == 3) memcpy(from, f, 3 * sizeof *from);
    const double *t = pbrt_pnums(r, pl, "to", &n);
    if (n == (size_t)-1) return -1;
    if (t && n == 3) memcpy(to, t, 3 * sizeof *to);
    return 0;
}

static void latlong_to_dir_pbrt(const R *r, const m4 *light_inv, double u, double v, double out[3]) {
    /* caustic's lat-long (kernel/environment.h): u = 0.5 + atan2(x, -z) / 2pi, v = theta / pi from +y */
    double phi = (u - 0.5) * 2 * PI_D, th = v * PI_D;
    double d[3] = {sin(th) * sin(phi), cos(th), -sin(th) * cos(phi)}, w[3];
    m4_vector(&r->mirror, d, w); /* the mirror is its own inverse */
    m4_vector(light_inv, w, out);
    d_norm(out);
}

/* pbrt-v4's equal-area octahedral mapping (Clarberg): unit direction -> [0,1]^2 */
static void equal_area_square(const double d[3], double *u, double *v) {
    double x = fabs(d[0]), y = fabs(d[1]), z = fabs(d[2]);
    double rr = sqrt(fmax(0.0, 1 - z));
    double a = fmax(x, y), b = fmin(x, y);
    b = a == 0 ? 0 : b / a;
    double phi = atan(b) * 2 / PI_D;
    if (x < y) phi = 1 - phi;
    double vv = phi * rr, uu = rr - vv;
    if (d[2] < 0) {
        double t = uu;
        uu = vv;
        vv = t;
        uu = 1 - uu;
        vv = 1 - vv;
    }
    uu = copysign(uu, d[0]);
    vv = copysign(vv, d[1]);
    *u = 0.5 * (uu + 1);
    *v = 0.5 * (vv + 1);
}

static vec3 bilerp(const image *img, double u, double v) {
    double x = u * img->width - 0.5, y = v * img->height - 0.5;
    int x0 = (int)floor(x), y0 = (int)floor(y);
    double fx = x - x0, fy = y - y0;
    vec3 acc = v3s(0.0f);
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i) {
            int xi = x0 + i, yi = y0 + j;
            xi = xi < 0 ? 0 : xi >= img->width ? img->width - 1 : xi;
            yi = yi < 0 ? 0 : yi >= img->height ? img->height - 1 : yi;
            double wgt = (i ? fx : 1 - fx) * (j ? fy : 1 - fy);
            const float *px = img->rgb + 3 * ((size_t)yi * (size_t)img->width + (size_t)xi);
            acc = vadd(acc, vscale(v3(px[0], px[1], px[2]), (float)wgt));
        }
    return acc;
}

/* pbrt-v3's lat-long maps: phi = atan2(y, x) across, theta = acos(z) down, in light space */
static void latlong_square(const double d[3], double *u, double *v) {
    double phi = atan2(d[1], d[0]);
    if (phi < 0) phi += 2 * PI_D;
    *u = phi / (2 * PI_D);
    *v = acos(d[2] < -1 ? -1 : d[2] > 1 ? 1 : d[2]) / PI_D;
}

static int env_image(R *r, const char *path, double scale, const char *where) {
    image img;
    char err[512];
    memset(&img, 0, sizeof img);
    if (image_load(&img, path, err, sizeof err)) return prm_fail(&r->ctx, where, "infinite light: %s", err);
    int equal_area = img.width == img.height;
    if (!equal_area &&
        UNSUPPORTED(r, "latlong env", where,
                    "infinite light \"%s\": %dx%d is not square, so not pbrt-v4's equal-area map: read as pbrt-v3's "
                    "lat-long map",
                    path, img.width, img.height)) {
        image_free(&img);
        return -1;
    }
    int W = (equal_area ? 2 : 1) * img.width > 2048 ? 2048 : (equal_area ? 2 : 1) * img.width, H = W / 2;
    if (W < 8) W = 8, H = 4;
    float *ll = malloc((size_t)W * (size_t)H * 3 * sizeof *ll);
    if (!ll) {
        image_free(&img);
        return oom(r, where);
    }
    m4 inv;
    if (m4_inv(&r->g.ctm, &inv)) inv = m4_id();
    /* 2x2 samples a texel of the lat-long map */
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            vec3 acc = v3s(0.0f);
            for (int s = 0; s < 4; ++s) {
                double u = (x + 0.25 + 0.5 * (s & 1)) / W, v = (y + 0.25 + 0.5 * (s >> 1)) / H;
                double d[3], eu, ev;
                latlong_to_dir_pbrt(r, &inv, u, v, d);
                if (equal_area)
                    equal_area_square(d, &eu, &ev);
                else
                    latlong_square(d, &eu, &ev);
                acc = vadd(acc, bilerp(&img, eu, ev));
            }
            float *o = ll + 3 * ((size_t)y * (size_t)W + (size_t)x);
            o[0] = 0.25f * acc.x, o[1] = 0.25f * acc.y, o[2] = 0.25f * acc.z;
        }
    image_free(&img);
    int tex = scene_add_image_texture(r->s, W, H, ll);
    free(ll);
    if (tex < 0) return prm_fail(&r->ctx, where, "infinite light \"%s\": out of texture memory", path);
    if (scene_textures_memory_check(r->s, path, err, sizeof err) ||
        scene_env_memory_check(r->s, tex, path, err, sizeof err))
        return prm_fail(&r->ctx, where, "%s", err);
    r->s->env_tex = tex;
    r->s->env_radiance = v3s((float)scale);
    return 0;
}

int pbrt_d_light(R *r, const pbrt_token *at, int area) {
    char w[PRM_WHERE], type[64];
    plist pl;
    if (pbrt_typed_params(r, at, area ? "AreaLightSource" : "LightSource", area ? "area light" : "light", type, &pl, w))
        return -1;
    int rc = 0;
    double scale = 1, power = 0;
    prm_value *sv = pbrt_pfind(&pl, "scale");
    if (sv && sv->type == PRM_NUMBER && sv->n == 3) { /* pbrt-v3: a spectrum */
        sv->used = 1;
        scale = (sv->nums[0] + sv->nums[1] + sv->nums[2]) / 3.0;
        if ((sv->nums[0] != sv->nums[1] || sv->nums[1] != sv->nums[2]) &&
            UNSUPPORTED(r, "coloured scale", sv->where, "a coloured \"scale\" of %s: its mean %g is used", pl.owner,
                        scale))
            rc = -1;
    } else
        rc = prm_float(&pl.l, "scale", 1.0, -1e30, 1e30, "", &scale);
    if (!rc) rc = prm_float(&pl.l, "power", 0.0, 0, 1e30, "", &power);
    if (!rc && !r->world) rc = prm_fail(&r->ctx, w, "%s before WorldBegin", pl.owner);
    m4 F = final_m4(r);
    if (rc) goto done;
    if (area) {
        if (strcmp(type, "diffuse") && strcmp(type, "area")) { /* "area": pbrt-v3's name */
            rc = prm_fail(&r->ctx, w, "AreaLightSource \"%s\": pbrt-v4 has only \"diffuse\"", type);
            goto done;
        }
        vec3 L;
        int two = 0;
        rc = pbrt_get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
        if (!rc) rc = prm_bool(&pl.l, "twosided", 0, &two);
        prm_value *fn = pbrt_pfind(&pl, "filename");
        if (!rc && fn) {
            fn->used = 1;
            rc = UNSUPPORTED(r, "area light image", fn->where,
                             "area light \"filename\": image emission is not read; L stands in");
        }
        r->g.area = 1;
        r->g.area_L = vscale(L, (float)scale);
        r->g.area_two_sided = two;
        r->g.area_power = power;
        free(r->g.area_where);
        r->g.area_where = sdup(w, strlen(w));
    } else if (!strcmp(type, "point") || !strcmp(type, "spot")) {
        vec3 I;
        double from[3], to[3];
        if (rc || (rc = from_to(r, &pl, from, to))) goto done;
        rc = pbrt_get_color(r, &pl, "I", v3s(1.0f), 1, &I, NULL);
        double pw[3], pt[3], axis[3];
        m4_point(&F, from, pw);
        m4_point(&F, to, pt);
        for (int i = 0; i < 3; ++i) axis[i] = pt[i] - pw[i];
        if (!strcmp(type, "point")) {
            if (power > 0) scale *= power / (4 * PI_D);
            if (!rc && scene_add_point_light(r->s, dv(pw), vscale(I, (float)scale)))
                rc = prm_fail(&r->ctx, w, "cannot add the point light (bad values?)");
        } else {
            double cone, delta;
            if (!rc) rc = prm_float(&pl.l, "coneangle", 30.0, 0.01, 90, "degrees", &cone);
            if (!rc) rc = prm_float(&pl.l, "conedelta", 5.0, 0, 90, "degrees", &delta);
            double inner = cone - delta < 0 ? 0 : cone - delta;
            if (power > 0) {
                double cs = cos(inner * PI_D / 180), ce = cos(cone * PI_D / 180);
                scale *= power / (2 * PI_D * ((1 - cs) + (cs - ce) / 2));
            }
            if (!rc && d_norm(axis)) rc = prm_fail(&r->ctx, w, "spot light: \"from\" and \"to\" are the same point");
            if (!rc && scene_add_spot_light(r->s, dv(pw), dv(axis), vscale(I, (float)scale), (float)inner, (float)cone,
                                            SPOT_FALLOFF_SMOOTHSTEP))
                rc = prm_fail(&r->ctx, w, "cannot add the spot light (bad values?)");
        }
        r->nlights++;
    } else if (!strcmp(type, "distant")) {
        vec3 L;
        double from[3], to[3];
        if (rc || (rc = from_to(r, &pl, from, to))) goto done;
        rc = pbrt_get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
        double dir[3] = {to[0] - from[0], to[1] - from[1], to[2] - from[2]}, dw[3];
        m4_vector(&F, dir, dw);
        if (!rc && power > 0)
            rc = UNSUPPORTED(r, "distant power", w, "distant light \"power\": needs the scene's bounds; scale used");
        if (!rc && d_norm(dw)) rc = prm_fail(&r->ctx, w, "distant light: \"from\" and \"to\" are the same point");
        if (!rc && scene_add_directional_light(r->s, dv(dw), vscale(L, (float)scale)))
            rc = prm_fail(&r->ctx, w, "cannot add the distant light (bad values?)");
        r->nlights++;
    } else if (!strcmp(type, "infinite")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_string(&pl.l, "mapname", "", &fn); /* pbrt-v3 */
        prm_value *portal = pbrt_pfind(&pl, "portal");
        if (!rc && portal) {
            portal->used = 1;
            rc = UNSUPPORTED(r, "portal", portal->where, "infinite light \"portal\": ignored (sampling only)");
        }
        if (!rc && power > 0)
            rc = UNSUPPORTED(r, "infinite power", w, "infinite light \"power\": not applied; scale used");
        if (!rc && fn[0]) {
            vec3 tint = v3s(1.0f); /* pbrt-v3 multiplies its map by L */
            if (pbrt_pfind(&pl, "L")) rc = pbrt_get_color(r, &pl, "L", v3s(1.0f), 0, &tint, NULL);
            if (!rc && (r->env_images || r->s->env_tex >= 0))
                rc = UNSUPPORTED(r, "second env image", w,
                                 "a second infinite light with an image: caustic has one "
                                 "environment map; this one is dropped");
            else if (!rc) {
                char *path = pbrt_resolve(&r->lx, at, fn);
                rc = path ? env_image(r, path, scale, w) : oom(r, w);
                free(path);
                if (!rc) r->s->env_radiance = vmul(r->s->env_radiance, tint);
                r->env_images++;
            }
        } else if (!rc) {
            vec3 L;
            rc = pbrt_get_color(r, &pl, "L", v3s(1.0f), 1, &L, NULL);
            r->env_const = vadd(r->env_const, vscale(L, (float)scale));
        }
        r->nlights++;
    } else if (!strcmp(type, "goniometric") || !strcmp(type, "projection")) {
        vec3 I;
        double from[3] = {0, 0, 0}, pw[3];
        rc = pbrt_get_color(r, &pl, "I", v3s(1.0f), 1, &I, NULL);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        m4_point(&F, from, pw);
        char key[96];
        snprintf(key, sizeof key, "light %s", type);
        if (!rc) rc = UNSUPPORTED(r, key, w, "light \"%s\": its image is not read; a point light of I stands in", type);
        if (!rc && scene_add_point_light(r->s, dv(pw), vscale(I, (float)scale)))
            rc = prm_fail(&r->ctx, w, "cannot add the point light");
        r->nlights++;
    } else {
        rc = prm_fail(&r->ctx, w,
                      "unknown light \"%s\" (pbrt-v4 has point, spot, goniometric, projection, distant, "
                      "infinite)",
                      type);
    }
    if (!rc) rc = pbrt_finish_params(r, &pl);
done:
    pbrt_plist_free(&pl);
    return rc;
}
