/* Pinhole and thin-lens camera. Pixel (0,0) is the top-left of the image. */
#ifndef CAUSTIC_KERNEL_CAMERA_H
#define CAUSTIC_KERNEL_CAMERA_H

#include "sampling.h"
#include "types.h"

/* u_pixel jitters inside the pixel (box filter); u_lens picks a point on the aperture. */
KFN ray camera_ray(const camera *c, int px, int py, vec2 u_pixel, vec2 u_lens) {
    float sx = (2.0f * ((float)px + u_pixel.x) / (float)c->width - 1.0f) * c->tan_half_fovy * c->aspect;
    float sy = (1.0f - 2.0f * ((float)py + u_pixel.y) / (float)c->height) * c->tan_half_fovy;
    vec3 d = vadd(c->forward, vadd(vscale(c->right, sx), vscale(c->up, sy)));
    if (c->lens_radius <= 0.0f) return make_ray(c->pos, vnorm(d), K_INF);
    /* d has unit length along `forward`, so the focal plane is at d * focus_distance */
    vec3 focus = vmadd(c->pos, d, c->focus_distance);
    vec2 l = sample_disk_concentric(u_lens);
    vec3 o = vadd(c->pos, vadd(vscale(c->right, l.x * c->lens_radius), vscale(c->up, l.y * c->lens_radius)));
    return make_ray(o, vnorm(vsub(focus, o)), K_INF);
}

#endif
