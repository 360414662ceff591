/* The pbrt-v4 reader: Camera, Film, Sampler and Integrator, and the camera's world: the mirror
 * that makes pbrt's left-handed camera caustic's (pbrt_internal.h lists the files). */
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

/* ---- camera and render settings ---------------------------------------------------------------------- */
int pbrt_d_camera(R *r, const pbrt_token *at) {
    char w[PRM_WHERE], type[64];
    plist pl;
    if (pbrt_typed_params(r, at, "Camera", "camera", type, &pl, w)) return -1;
    int rc = 0;
    if (r->world) rc = prm_fail(&r->ctx, w, "Camera after WorldBegin");
    r->cam_from_world = r->g.ctm;
    r->cam_medium = r->g.med_out; /* pbrt-v4's CameraMedium: the outside of the MediumInterface in force */
    r->have_camera = 1;
    free(r->cam_type);
    r->cam_type = sdup(type, strlen(type));
    /* "camera": camera to world, for CoordSysTransform */
    m4 c2w;
    if (!rc && m4_inv(&r->g.ctm, &c2w)) rc = prm_fail(&r->ctx, w, "Camera: the camera transformation is singular");
    if (!rc) {
        if (GROW(r->coords, r->ncoords, r->capcoords)) return oom(r, w);
        r->coords[r->ncoords++] = (named_m4){sdup("camera", 6), c2w};
    }
    if (!rc) rc = prm_float(&pl.l, "fov", 90.0, 0.01, 179.9, "degrees", &r->fov);
    if (!rc) rc = prm_float(&pl.l, "lensradius", 0.0, 0, 1e30, "", &r->lensradius);
    if (!rc) rc = prm_float(&pl.l, "focaldistance", 1e6, 1e-6, 1e30, "", &r->focaldistance);
    size_t n = 0;
    const double *sw = pbrt_pnums(r, &pl, "screenwindow", &n);
    if (!rc && sw) {
        if (n == 4) r->screen_half = 0.5 * fmin(sw[1] - sw[0], sw[3] - sw[2]);
        if (strcmp(type, "orthographic"))
            rc = UNSUPPORTED(r, "screenwindow", w, "camera \"screenwindow\": not applied (the full frame is rendered)");
    }
    double so = 0, sc = 1;
    if (!rc) rc = prm_float(&pl.l, "shutteropen", 0.0, -1e30, 1e30, "", &so);
    if (!rc) rc = prm_float(&pl.l, "shutterclose", 1.0, -1e30, 1e30, "", &sc);
    if (!rc) r->imaging_ratio *= (sc - so);
    prm_value *fa = pbrt_pfind(&pl, "frameaspectratio");
    if (fa) fa->used = 1;
    if (!rc && strcmp(type, "perspective") && strcmp(type, "orthographic")) {
        char key[64];
        snprintf(key, sizeof key, "camera %.56s", type);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
        rc = UNSUPPORTED(r, key, w,
                         "camera \"%s\": caustic has a perspective camera; a perspective camera of fov 90 "
                         "stands in",
                         type);
    }
    if (!rc && !strcmp(type, "orthographic"))
        rc = UNSUPPORTED(
            r, "orthographic", w,
            "orthographic camera: caustic's camera is perspective; a far-away camera of a very narrow field "
            "of view stands in");
    if (!rc) rc = pbrt_finish_params(r, &pl);
    pbrt_plist_free(&pl);
    return rc;
}

int pbrt_d_settings(R *r, const pbrt_token *at, const char *what) {
    char w[PRM_WHERE], type[64];
    plist pl;
    if (pbrt_typed_params(r, at, what, what, type, &pl, w)) return -1;
    int rc = 0;
    if (!strcmp(what, "Film")) {
        long xr, yr;
        rc = prm_int(&pl.l, "xresolution", 1280, 1, 16384, &xr);
        if (!rc) rc = prm_int(&pl.l, "yresolution", 720, 1, 16384, &yr);
        r->width = (int)xr;
        r->height = (int)yr;
        const char *fn;
        if (!rc) rc = prm_string(&pl.l, "filename", "", &fn);
        double iso = 100, et = 1;
        if (!rc) rc = prm_float(&pl.l, "iso", 100.0, 1e-6, 1e9, "", &iso);
        if (!rc) rc = prm_float(&pl.l, "exposuretime", 1.0, 1e-9, 1e9, "", &et);
        if (!rc) r->imaging_ratio *= iso / 100.0 * et;
        const char *sensor;
        if (!rc) rc = prm_string(&pl.l, "sensor", "cie1931", &sensor);
        if (!rc && strcmp(sensor, "cie1931"))
            rc = UNSUPPORTED(r, "sensor", w, "film sensor \"%s\": caustic renders sRGB as the cie1931 sensor does",
                             sensor);
        prm_value *cw = pbrt_pfind(&pl, "cropwindow");
        if (!rc && cw) {
            cw->used = 1;
            rc = UNSUPPORTED(r, "cropwindow", cw->where, "film \"cropwindow\": the whole image is rendered");
        }
        const char *ignore[] = {"diagonal", "savefp16", "maxcomponentvalue", "whitebalance", "pixelbounds", NULL};
        for (int i = 0; ignore[i]; ++i) {
            prm_value *v = pbrt_pfind(&pl, ignore[i]);
            if (v) v->used = 1;
        }
        if (!rc && strcmp(type, "rgb") && strcmp(type, "gbuffer") && strcmp(type, "spectral") &&
            strcmp(type, "image")) /* "image": pbrt-v3's RGB film */
            rc = UNSUPPORTED(r, "film type", w, "film \"%s\": an RGB film stands in", type);
    } else if (!strcmp(what, "Sampler")) {
        long spp;
        rc = prm_int(&pl.l, "pixelsamples", 16, 1, 1 << 24, &spp);
        r->s->spp = (int)spp;
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* seeds and dimensions: caustic's own sampler */
    } else if (!strcmp(what, "Integrator")) {
        long md;
        rc = prm_int(&pl.l, "maxdepth", 5, 0, 100000, &md);
        if (md > 1024) md = 1024;
        r->s->max_depth = (int)md;
        static const char *const known[] = {"path", "volpath",   "simplepath", "bdpt",          "mlt",
                                            "sppm", "lightpath", "randomwalk", "simplevolpath", "ambientocclusion",
                                            "aov",  NULL};
        int k = -1;
        for (int i = 0; known[i]; ++i)
            if (!strcmp(known[i], type)) k = i;
        if (k < 0 && !strcmp(type, "directlighting")) { /* pbrt-v3 */
            r->s->max_depth = 1;
            rc = UNSUPPORTED(r, "integrator", w,
                             "integrator \"directlighting\" (pbrt-v3): path tracing of depth 1 "
                             "(direct light only) stands in");
        } else if (k < 0)
            rc = UNSUPPORTED(r, "integrator", w, "unknown integrator \"%s\": path tracing stands in", type);
        /* pbrt's bidirectional and photon integrators choose caustic's (a default --integrator overrides) */
        static const int as_caustic[] = {
            0, 0, 0, CAUSTIC_INTEGRATOR_BDPT + 1, 0, CAUSTIC_INTEGRATOR_PPM + 1, CAUSTIC_INTEGRATOR_LT + 1, 0, 0};
        if (!rc && k >= 0 && k < 9) r->s->integrator_hint = as_caustic[k];
        if (!rc && k >= 9)
            rc = UNSUPPORTED(r, "integrator", w,
                             "integrator \"%s\": caustic renders light transport; path tracing "
                             "stands in",
                             type);
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* regularize, lightsampler... */
    } else {
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1; /* Accelerator, PixelFilter: caustic's own */
    }
    if (!rc) rc = pbrt_finish_params(r, &pl);
    pbrt_plist_free(&pl);
    return rc;
}

/* caustic's camera from pbrt's, and the mirror that makes pbrt's left-handed view caustic's */
int pbrt_setup_world(R *r, const char *where) {
    m4 c2w;
    if (m4_inv(&r->cam_from_world, &c2w)) return prm_fail(&r->ctx, where, "the camera transformation is singular");
    double o[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    double eye[3], right[3], up[3], fwd[3], cr[3];
    m4_point(&c2w, o, eye);
    m4_vector(&c2w, ex, right);
    m4_vector(&c2w, ey, up);
    m4_vector(&c2w, ez, fwd);
    if (d_norm(fwd) || d_norm(up) || d_norm(right))
        return prm_fail(&r->ctx, where, "the camera transformation is degenerate");
    d_cross(fwd, up, cr);
    if (d_norm(cr)) return prm_fail(&r->ctx, where, "the camera's up and viewing directions are parallel");
    r->mirror = m4_id();
    r->mirrored = d_dot(cr, right) < 0;
    if (r->mirrored) { /* reflect through the plane through eye with normal cr */
        m4 refl = m4_id();
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) refl.m[i][j] -= 2 * cr[i] * cr[j];
        double t = 2 * d_dot(cr, eye);
        for (int i = 0; i < 3; ++i) refl.m[i][3] = t * cr[i];
        r->mirror = refl;
        pbrt_media_mirror(r); /* grid media made before WorldBegin */
    }
    camera_desc *cd = &r->s->camera;
    cd->medium = r->cam_medium;
    int W = r->width, H = r->height;
    cd->width = W;
    cd->height = H;
    double fov = r->fov;
    /* pbrt's fov spans the shorter image axis; caustic's is vertical */
    if (W < H) fov = 2 * atan(tan(fov * PI_D / 360) * (double)H / W) * 180 / PI_D;
    double e[3];
    memcpy(e, eye, sizeof e);
    if (r->cam_type && !strcmp(r->cam_type, "orthographic")) {
        /* far away with a narrow view: the same screen window (half-height screen_half on the
         * shorter axis) at distance D */
        double half = r->screen_half > 0 ? r->screen_half : 1.0;
        double D = 1e4 * half;
        double vh = W < H ? half * H / W : half;
        for (int i = 0; i < 3; ++i) e[i] = eye[i] - D * fwd[i];
        fov = 2 * atan(vh / D) * 180 / PI_D;
    }
    cd->fovy_deg = (float)(fov > 179 ? 179 : fov);
    double mf[3] = {e[0] + fwd[0], e[1] + fwd[1], e[2] + fwd[2]}, me[3], ml[3], mu[3];
    m4_point(&r->mirror, e, me);
    m4_point(&r->mirror, mf, ml);
    m4_vector(&r->mirror, up, mu);
    cd->eye = dv(me);
    cd->lookat = dv(ml);
    cd->up = dv(mu);
    cd->aperture_radius = (float)r->lensradius;
    cd->focus_distance = r->lensradius > 0 ? (float)r->focaldistance : 0.0f;
    if (r->lensradius > 0) { /* the lookat at the focal distance, which is also what FOCUS_DISTANCE says */
        double fp[3] = {e[0] + r->focaldistance * fwd[0], e[1] + r->focaldistance * fwd[1],
                        e[2] + r->focaldistance * fwd[2]};
        m4_point(&r->mirror, fp, ml);
        cd->lookat = dv(ml);
    }
    return 0;
}
