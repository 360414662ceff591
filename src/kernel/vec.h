/* Small vector/matrix math for the kernel. vec3 (not float3: CUDA owns that name). */
#ifndef CAUSTIC_KERNEL_VEC_H
#define CAUSTIC_KERNEL_VEC_H

#include "compat.h"

typedef struct vec2 {
    float x, y;
} vec2;
typedef struct vec3 {
    float x, y, z;
} vec3;
/* Affine 3x4 transform: rows m[0..2] of [R|t]. */
typedef struct xform {
    float m[3][4];
} xform;

KFN vec2 v2(float x, float y) {
    vec2 r;
    r.x = x;
    r.y = y;
    return r;
}
KFN vec3 v3(float x, float y, float z) {
    vec3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
KFN vec3 v3s(float s) { return v3(s, s, s); }
KFN vec3 vadd(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
KFN vec3 vsub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
KFN vec3 vmul(vec3 a, vec3 b) { return v3(a.x * b.x, a.y * b.y, a.z * b.z); }
KFN vec3 vscale(vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
KFN vec3 vmadd(vec3 a, vec3 b, float s) { return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s); }
KFN vec3 vneg(vec3 a) { return v3(-a.x, -a.y, -a.z); }
KFN float vdot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
KFN vec3 vcross(vec3 a, vec3 b) { return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
KFN float vlen2(vec3 a) { return vdot(a, a); }
KFN float vlen(vec3 a) { return sqrtf(vdot(a, a)); }
KFN vec3 vnorm(vec3 a) { return vscale(a, 1.0f / vlen(a)); }
KFN vec3 vmin(vec3 a, vec3 b) { return v3(kmin(a.x, b.x), kmin(a.y, b.y), kmin(a.z, b.z)); }
KFN vec3 vmax(vec3 a, vec3 b) { return v3(kmax(a.x, b.x), kmax(a.y, b.y), kmax(a.z, b.z)); }
KFN float vmaxc(vec3 a) { return kmax(a.x, kmax(a.y, a.z)); }
KFN float vcomp(vec3 a, int axis) { return axis == 0 ? a.x : (axis == 1 ? a.y : a.z); }
KFN int vis_black(vec3 a) { return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f; }
KFN int vis_finite(vec3 a) { return kfinite(a.x) && kfinite(a.y) && kfinite(a.z); }
KFN float vluminance(vec3 c) { return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z; }
KFN vec3 vlerp(vec3 a, vec3 b, float t) { return vadd(vscale(a, 1.0f - t), vscale(b, t)); }

/* Orthonormal basis around unit n (Duff et al. 2017, branchless). */
typedef struct frame {
    vec3 t, b, n;
} frame;
KFN frame frame_from_normal(vec3 n) {
    frame f;
    float s = copysignf(1.0f, n.z);
    float a = -1.0f / (s + n.z);
    float b = n.x * n.y * a;
    f.t = v3(1.0f + s * n.x * n.x * a, s * b, -s * n.x);
    f.b = v3(b, s + n.y * n.y * a, -n.y);
    f.n = n;
    return f;
}
KFN vec3 frame_to_local(frame f, vec3 v) { return v3(vdot(v, f.t), vdot(v, f.b), vdot(v, f.n)); }
KFN vec3 frame_to_world(frame f, vec3 v) { return vadd(vadd(vscale(f.t, v.x), vscale(f.b, v.y)), vscale(f.n, v.z)); }

KFN vec3 xform_point(const xform *x, vec3 p) {
    return v3(x->m[0][0] * p.x + x->m[0][1] * p.y + x->m[0][2] * p.z + x->m[0][3],
              x->m[1][0] * p.x + x->m[1][1] * p.y + x->m[1][2] * p.z + x->m[1][3],
              x->m[2][0] * p.x + x->m[2][1] * p.y + x->m[2][2] * p.z + x->m[2][3]);
}
KFN vec3 xform_vector(const xform *x, vec3 v) {
    return v3(x->m[0][0] * v.x + x->m[0][1] * v.y + x->m[0][2] * v.z,
              x->m[1][0] * v.x + x->m[1][1] * v.y + x->m[1][2] * v.z,
              x->m[2][0] * v.x + x->m[2][1] * v.y + x->m[2][2] * v.z);
}
/* Normals transform by the inverse transpose: pass the inverse transform. */
KFN vec3 xform_normal_by_inverse(const xform *inv, vec3 n) {
    return v3(inv->m[0][0] * n.x + inv->m[1][0] * n.y + inv->m[2][0] * n.z,
              inv->m[0][1] * n.x + inv->m[1][1] * n.y + inv->m[2][1] * n.z,
              inv->m[0][2] * n.x + inv->m[1][2] * n.y + inv->m[2][2] * n.z);
}

typedef struct ray {
    vec3 o, d;
    float tmax;
} ray;
KFN ray make_ray(vec3 o, vec3 d, float tmax) {
    ray r;
    r.o = o;
    r.d = d;
    r.tmax = tmax;
    return r;
}
KFN vec3 ray_at(ray r, float t) { return vmadd(r.o, r.d, t); }

/* Unit geometric normal of triangle (p0, p1, p2), the side its vertices wind counter-clockwise. */
KFN vec3 triangle_normal(vec3 p0, vec3 p1, vec3 p2) { return vnorm(vcross(vsub(p1, p0), vsub(p2, p0))); }

/* Origin offset along the geometric normal, towards the side `dir` leaves on. Scale-aware so
 * that large scenes do not self-intersect and small ones do not leak. */
KFN vec3 offset_origin(vec3 p, vec3 ng, vec3 dir) {
    float scale = K_RAY_EPS * (1.0f + vmaxc(v3(fabsf(p.x), fabsf(p.y), fabsf(p.z))));
    return vdot(ng, dir) >= 0.0f ? vmadd(p, ng, scale) : vmadd(p, ng, -scale);
}

#endif
