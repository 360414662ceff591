/* JSON scene reader: the "Camera" section (json_scene.c walks the document; json_internal.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/json_internal.h"
#include "caustic.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- camera ---------------------------------------------------------------------------------- */
int json_parse_camera(loader *L, cJSON *cam) {
    const char *jp = "Camera";
    char p[PRM_WHERE];
    if (!cJSON_IsObject(cam)) return prm_fail(&L->P, jp, "expected an object, got %s", json_type(cam));
    if (json_canonicalize(L, cam, jp, "Camera", json_camera_keys)) return -1;
    camera_desc *cd = &L->s->camera;

    const cJSON *res = json_get(cam, "RES");
    if (!res) return json_missing(L, jp, "RES");
    prm_jkey(p, jp, "RES");
    if (!cJSON_IsArray(res)) return prm_fail(&L->P, p, "expected an array of 2 integers, got %s", json_type(res));
    long wh[2];
    int n = 0;
    for (const cJSON *e = res->child; e; e = e->next, ++n) {
        if (n >= 2) return prm_fail(&L->P, p, "expected 2 integers [width, height], got more");
        char pe[PRM_WHERE];
        prm_jindex(pe, p, (size_t)n);
        if (json_int(L, e, pe, 1, MAX_RES_SIDE, &wh[n])) return -1;
    }
    if (n != 2) return prm_fail(&L->P, p, "expected 2 integers [width, height], got %d", n);
    if (wh[0] * wh[1] > MAX_RES_PIXELS)
        return prm_fail(&L->P, p, "%ldx%ld is too many pixels (at most %ld)", wh[0], wh[1], (long)MAX_RES_PIXELS);
    cd->width = (int)wh[0];
    cd->height = (int)wh[1];

    /* FOVY is the course's half angle; caustic keeps the full one (json_fovy_to_full) */
    const cJSON *fovy = json_get(cam, "FOVY"), *focal = json_get(cam, "FOCAL_LENGTH");
    double focal_mm = 0.0;
    if (fovy && focal) {
        prm_jkey(p, jp, "FOCAL_LENGTH");
        return prm_fail(&L->P, p, "FOVY and FOCAL_LENGTH both set the field of view: give only one");
    }
    if (fovy) {
        double f;
        prm_jkey(p, jp, "FOVY");
        if (json_range(L, fovy, p, 0.0, 1, 89.5, &f)) return -1;
        cd->fovy_deg = (float)json_fovy_to_full(f);
    } else if (focal) {
        prm_jkey(p, jp, "FOCAL_LENGTH");
        if (json_range(L, focal, p, 0.0, 1, 1e5, &focal_mm)) return -1;
        cd->fovy_deg = (float)(2.0 * atan(0.5 * SENSOR_HEIGHT_MM / focal_mm) * 180.0 / 3.14159265358979323846);
    } else {
        return json_missing(L, jp, "FOVY");
    }

    long iv;
    const cJSON *it = json_get(cam, "ITERATIONS");
    if (it) {
        prm_jkey(p, jp, "ITERATIONS");
        if (json_int(L, it, p, 1, MAX_SPP, &iv)) return -1;
        L->s->spp = (int)iv;
    }
    const cJSON *dp = json_get(cam, "DEPTH");
    if (dp) {
        prm_jkey(p, jp, "DEPTH");
        if (json_int(L, dp, p, 1, MAX_DEPTH, &iv)) return -1;
        L->s->max_depth = (int)iv;
    }
    const cJSON *ig = json_get(cam, "INTEGRATOR");
    if (ig) { /* the scene's integrator, as --integrator names them */
        const char *nm = "";
        caustic_integrator k;
        prm_jkey(p, jp, "INTEGRATOR");
        if (json_string(L, ig, p, &nm)) return -1;
        if (caustic_parse_integrator(nm, &k))
            return prm_fail(&L->P, p, "unknown integrator \"%.40s\" (pt, lt, bdpt, ppm, bpm or vcm)", nm);
        L->s->integrator_hint = (int)k + 1;
    }
    const cJSON *file = json_get(cam, "FILE");
    if (file) {
        const char *name = "";
        prm_jkey(p, jp, "FILE");
        if (json_string(L, file, p, &name)) return -1;
        size_t len = strlen(name);
        char *copy = malloc(len + 1);
        if (!copy) return prm_fail(&L->P, p, "out of memory");
        memcpy(copy, name, len + 1);
        free(L->s->output_name);
        L->s->output_name = copy;
    }

    const cJSON *ev = json_get(cam, "EYE"), *lv = json_get(cam, "LOOKAT"), *vv = json_get(cam, "VIEW");
    if (!ev) return json_missing(L, jp, "EYE");
    prm_jkey(p, jp, "EYE");
    if (json_vec3(L, ev, p, -MAX_COORD, 0, MAX_COORD, &cd->eye)) return -1;
    if (lv && vv) {
        prm_jkey(p, jp, "VIEW");
        return prm_fail(&L->P, p, "LOOKAT and VIEW both set the direction: give only one");
    }
    if (vv) { /* the older course format: a viewing direction instead of a point */
        vec3 d;
        prm_jkey(p, jp, "VIEW");
        if (json_vec3(L, vv, p, -MAX_COORD, 0, MAX_COORD, &d)) return -1;
        if (!(vlen(d) > 0.0f)) return prm_fail(&L->P, p, "VIEW is the zero vector");
        cd->lookat = vadd(cd->eye, vnorm(d));
    } else {
        if (!lv) return json_missing(L, jp, "LOOKAT");
        prm_jkey(p, jp, "LOOKAT");
        if (json_vec3(L, lv, p, -MAX_COORD, 0, MAX_COORD, &cd->lookat)) return -1;
    }
    cd->up = v3(0.0f, 1.0f, 0.0f);
    if (json_opt_vec3(L, cam, jp, "UP", -MAX_COORD, 0, MAX_COORD, &cd->up)) return -1;
    vec3 fwd = vsub(cd->lookat, cd->eye);
    if (!(vlen(fwd) > 0.0f)) {
        prm_jkey(p, jp, "LOOKAT");
        return prm_fail(&L->P, p, "LOOKAT is the same point as EYE");
    }
    if (!(vlen(cd->up) > 0.0f)) {
        prm_jkey(p, jp, "UP");
        return prm_fail(&L->P, p, "UP is the zero vector");
    }
    if (!(vlen(vcross(vnorm(fwd), vnorm(cd->up))) > 1e-6f)) {
        /* looking straight along UP (a top view): any other up frames the same picture, turned */
        prm_jkey(p, jp, "UP");
        vec3 f = vnorm(fwd);
        vec3 alt = fabsf(f.z) < 0.9f ? v3(0.0f, 0.0f, -1.0f) : v3(0.0f, 1.0f, 0.0f);
        if (prm_warn(&L->P, "Camera.UP", p, "UP is parallel to the viewing direction: using (%g, %g, %g) instead",
                     alt.x, alt.y, alt.z))
            return -1;
        cd->up = alt;
    }

    /* Thin lens: APERTURE is the lens radius in scene units, or FSTOP with FOCAL_LENGTH gives
     * radius = focal / (2 * fstop) millimetres, with one scene unit = 1 m. */
    const cJSON *ap = json_get(cam, "APERTURE"), *fs = json_get(cam, "FSTOP");
    if (ap && fs) {
        prm_jkey(p, jp, "FSTOP");
        return prm_fail(&L->P, p, "APERTURE and FSTOP both set the lens size: give only one");
    }
    double radius = 0.0;
    if (ap) {
        prm_jkey(p, jp, "APERTURE");
        if (cJSON_IsNumber(ap) && ap->valuedouble < 0.0 && isfinite(ap->valuedouble)) { /* "-1": no lens */
            if (prm_warn(&L->P, "Camera.APERTURE<0", p, "negative lens radius %g: rendered without depth of field",
                         ap->valuedouble))
                return -1;
        } else if (json_range(L, ap, p, 0.0, 0, 1e6, &radius)) {
            return -1;
        }
    } else if (fs) {
        double fstop;
        prm_jkey(p, jp, "FSTOP");
        if (!focal) return prm_fail(&L->P, p, "FSTOP needs FOCAL_LENGTH (millimetres)");
        if (json_range(L, fs, p, 0.0, 1, 1e4, &fstop)) return -1;
        radius = focal_mm / (2.0 * fstop) / MM_PER_UNIT;
    }
    cd->aperture_radius = (float)radius;
    double focus = 0.0;
    const cJSON *fd = json_get(cam, "FOCUS_DISTANCE");
    if (fd && cJSON_IsNumber(fd) && fd->valuedouble <= 0.0 && radius == 0.0) {
        /* dialects write 0 (or -1) for "no depth of field" */
        prm_jkey(p, jp, "FOCUS_DISTANCE");
        if (prm_warn(&L->P, "Camera.FOCUS_DISTANCE<=0", p, "focus distance %g ignored (there is no lens)",
                     fd->valuedouble))
            return -1;
    } else if (json_opt_number(L, cam, jp, "FOCUS_DISTANCE", 0.0, 1, 1e9, &focus)) {
        return -1;
    }
    cd->focus_distance = (float)focus;
    if (radius > 0.0) {
        double in_focus = focus > 0.0 ? focus : (double)vlen(vsub(cd->lookat, cd->eye));
        prm_jkey(p, jp, "APERTURE");
        if (radius > in_focus && prm_warn(&L->P, "Camera.APERTURE>focus", p,
                                          "lens radius %g is larger than the distance in focus (%g): "
                                          "almost everything will be blurred (APERTURE is a radius in scene units)",
                                          radius, in_focus))
            return -1;
    }
    /* an environment map's file name given with the camera (a dialect): as "Environment" */
    const cJSON *em = json_get(cam, "ENVMAP");
    if (em && L->s->env_tex < 0 && vis_black(L->s->env_radiance)) {
        prm_jkey(p, jp, "ENVMAP");
        L->s->env_radiance = v3s(1.0f);
        if (json_env_map(L, em, p)) return -1;
    }
    /* INV_RES / FRAME: derived or multi-frame bookkeeping of some dialects; must match if given */
    const cJSON *fr = json_get(cam, "FRAME");
    if (fr && !(cJSON_IsNumber(fr) && fr->valuedouble == 0.0)) {
        prm_jkey(p, jp, "FRAME");
        if (prm_warn(&L->P, "Camera.FRAME", p, "only frame 0 of an animated scene is rendered")) return -1;
    }
    return 0;
}
