/* The built-in camera path: a turntable orbit of the scene's camera around its look-at point. */
#include <math.h>
#include <stdio.h>

#include "api/api_internal.h"
#include "caustic.h"

int caustic_scene_orbit(caustic_scene *cs, double degrees, char *err, size_t errlen) {
    scene *s = api_scene_internal(cs);
    camera_desc *c = &s->camera;
    if (!(vlen(c->up) > 0.0f) || !isfinite(degrees)) {
        snprintf(err, errlen, "orbit: the camera has no UP direction to turn about");
        return -1;
    }
    /* Rodrigues: the eye's offset from the look-at point turned about the unit up axis */
    vec3 k = vnorm(c->up), v = vsub(c->eye, c->lookat);
    double a = degrees * (3.14159265358979323846 / 180.0);
    float cs_ = (float)cos(a), sn = (float)sin(a);
    vec3 r = vadd(vadd(vscale(v, cs_), vscale(vcross(k, v), sn)), vscale(k, vdot(k, v) * (1.0f - cs_)));
    c->eye = vadd(c->lookat, r);
    return 0;
}
