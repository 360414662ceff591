/* Ray-primitive intersection and hit-point reconstruction. */
#ifndef CAUSTIC_KERNEL_INTERSECT_H
#define CAUSTIC_KERNEL_INTERSECT_H

#include "texture.h"

/* Per-ray constants of the watertight test (Woop, Benthin, Wald 2013): the axis where the
 * direction is largest becomes z, and a shear maps the ray onto +z. */
typedef struct ray_shear {
    int kx, ky, kz;
    float sx, sy, sz;
} ray_shear;

KFN ray_shear make_ray_shear(vec3 d) {
    ray_shear r;
    float ax = fabsf(d.x), ay = fabsf(d.y), az = fabsf(d.z);
    r.kz = (ax > ay) ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2);
    r.kx = r.kz == 2 ? 0 : r.kz + 1;
    r.ky = r.kx == 2 ? 0 : r.kx + 1;
    if (vcomp(d, r.kz) < 0.0f) {
        int t = r.kx;
        r.kx = r.ky;
        r.ky = t;
    } /* keep winding */
    r.sz = 1.0f / vcomp(d, r.kz);
    r.sx = vcomp(d, r.kx) * r.sz;
    r.sy = vcomp(d, r.ky) * r.sz;
    return r;
}

/* Returns 1 and sets *t, *b1, *b2 on a hit with tmin < t < tmax. Edges shared by two
 * triangles are never both missed (watertight). */
KFN int intersect_triangle(vec3 o, const ray_shear *sh, vec3 p0, vec3 p1, vec3 p2, float tmax, float *t_out,
                           float *b1_out, float *b2_out) {
    vec3 a = vsub(p0, o), b = vsub(p1, o), c = vsub(p2, o);
    float az = vcomp(a, sh->kz), bz = vcomp(b, sh->kz), cz = vcomp(c, sh->kz);
    float ax = vcomp(a, sh->kx) - sh->sx * az, ay = vcomp(a, sh->ky) - sh->sy * az;
    float bx = vcomp(b, sh->kx) - sh->sx * bz, by = vcomp(b, sh->ky) - sh->sy * bz;
    float cx = vcomp(c, sh->kx) - sh->sx * cz, cy = vcomp(c, sh->ky) - sh->sy * cz;
    float u = cx * by - cy * bx, v = ax * cy - ay * cx, w = bx * ay - by * ax;
    if (u == 0.0f || v == 0.0f || w == 0.0f) { /* on an edge: decide in double precision */
        u = (float)((double)cx * (double)by - (double)cy * (double)bx);
        v = (float)((double)ax * (double)cy - (double)ay * (double)cx);
        w = (float)((double)bx * (double)ay - (double)by * (double)ax);
    }
    if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) return 0;
    float det = u + v + w;
    if (det == 0.0f) return 0;
    float t_scaled = (u * az + v * bz + w * cz) * sh->sz;
    float inv = 1.0f / det;
    float t = t_scaled * inv;
    if (!(t > 0.0f && t < tmax)) return 0;
    *t_out = t;
    *b1_out = v * inv;
    *b2_out = w * inv;
    return 1;
}

/* Unit-diameter sphere at the object origin, intersected in object space. The ray parameter t
 * is the same in both spaces because the direction is transformed without normalising. */
KFN int intersect_sphere(const sphere *s, vec3 o, vec3 d, float tmin, float tmax, float *t_out) {
    vec3 oo = xform_point(&s->to_object, o);
    vec3 od = xform_vector(&s->to_object, d);
    float a = vdot(od, od);
    float half_b = vdot(oo, od);
    float c = vdot(oo, oo) - 0.25f;
    /* Numerically robust discriminant (Hearn-Baker form, as in Ray Tracing Gems ch. 7). */
    vec3 l = vsub(oo, vscale(od, half_b / a));
    float disc = a * (0.25f - vdot(l, l));
    if (disc < 0.0f) return 0;
    float sq = sqrtf(disc);
    float q = half_b < 0.0f ? -half_b + sq : -half_b - sq;
    float t0 = c / q, t1 = q / a;
    if (t0 > t1) {
        float tmp = t0;
        t0 = t1;
        t1 = tmp;
    }
    if (t0 > tmin && t0 < tmax) {
        *t_out = t0;
        return 1;
    }
    if (t1 > tmin && t1 < tmax) {
        *t_out = t1;
        return 1;
    }
    return 0;
}

KFN int intersect_quad(const quad *q, vec3 o, vec3 d, float tmin, float tmax, float *t_out, float *s_out,
                       float *u_out) {
    float denom = vdot(q->n, d);
    if (denom == 0.0f) return 0;
    vec3 w = vsub(o, q->o);
    float t = -vdot(q->n, w) / denom;
    if (!(t > tmin && t < tmax)) return 0;
    vec3 p = vmadd(w, d, t);
    float a = vdot(p, q->su), b = vdot(p, q->sv);
    if (a < 0.0f || a > 1.0f || b < 0.0f || b > 1.0f) return 0;
    *t_out = t;
    *s_out = a;
    *u_out = b;
    return 1;
}

/* Intersect one primitive; updates *h and returns 1 if it is nearer than h->t. */
KFN int intersect_prim(const kscene *s, uint32_t id, vec3 o, vec3 d, const ray_shear *sh, hit *h) {
    uint32_t i = prim_id_index(id);
    float t, b1 = 0.0f, b2 = 0.0f;
    switch (prim_id_kind(id)) {
    case PRIM_TRIANGLE: {
        const triangle *tr = &s->triangles[i];
        if (!intersect_triangle(o, sh, s->positions[tr->v[0]], s->positions[tr->v[1]], s->positions[tr->v[2]], h->t, &t,
                                &b1, &b2))
            return 0;
        break;
    }
    case PRIM_SPHERE:
        if (!KHAS(KF_PRIM(PRIM_SPHERE)) || !intersect_sphere(&s->spheres[i], o, d, 0.0f, h->t, &t)) return 0;
        break;
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */
        if (!KHAS(KF_PRIM(PRIM_QUAD)) || !intersect_quad(&s->quads[i], o, d, 0.0f, h->t, &t, &b1, &b2)) return 0;
        break;
    }
    h->t = t;
    h->prim = id;
    h->b1 = b1;
    h->b2 = b2;
    return 1;
}

/* dp/du and dp/dv of triangle tr in the parametrisation of its vertices' uvs; 0 where it has none
 * (a scene without uvs) or it is degenerate. */
KFN int triangle_dpduv(const kscene *s, const triangle *tr, vec3 *dpdu, vec3 *dpdv) {
    if (!s->uvs) return 0;
    vec3 p0 = s->positions[tr->v[0]];
    vec3 e1 = vsub(s->positions[tr->v[1]], p0), e2 = vsub(s->positions[tr->v[2]], p0);
    vec2 u0 = s->uvs[tr->v[0]], u1 = s->uvs[tr->v[1]], u2 = s->uvs[tr->v[2]];
    float du1 = u1.x - u0.x, dv1 = u1.y - u0.y, du2 = u2.x - u0.x, dv2 = u2.y - u0.y;
    float det = du1 * dv2 - du2 * dv1;
    if (det == 0.0f || !kfinite(det)) return 0;
    *dpdu = vscale(vsub(vscale(e1, dv2), vscale(e2, dv1)), 1.0f / det);
    *dpdv = vscale(vsub(vscale(e2, du1), vscale(e1, du2)), 1.0f / det);
    return 1;
}

/* Tangent-space normal mapping around shading normal n with tangent t (any length, not yet
 * orthogonal to n) and handedness w (+-1): the bitangent is w * (n x t). */
KFN vec3 normal_map_apply(const kscene *s, const material *m, vec3 n, vec3 t, float w, vec2 uv, vec3 p) {
    t = vsub(t, vscale(n, vdot(n, t))); /* Gram-Schmidt against the interpolated normal */
    float tl = vlen2(t);
    if (!(tl > 0.0f) || !kfinite(tl)) return n;
    t = vscale(t, 1.0f / sqrtf(tl));
    vec3 bt = vscale(vcross(n, t), w);
    vec3 c = texture_eval(s, m->normal_tex, uv, p);
    vec3 d = v3((2.0f * c.x - 1.0f) * m->normal_scale, (2.0f * c.y - 1.0f) * m->normal_scale, 2.0f * c.z - 1.0f);
    vec3 r = vadd(vadd(vscale(t, d.x), vscale(bt, d.y)), vscale(n, d.z));
    float rl = vlen2(r);
    return rl > 0.0f && kfinite(rl) ? vscale(r, 1.0f / sqrtf(rl)) : n;
}

/* Bump mapping around shading normal n, given the surface's dp/du and dp/dv (Mitsuba's bumpmap,
 * pbrt's BumpMap without the dn/du term): the height h = normal_scale * the map displaces the
 * surface along n, so dp/du becomes its part in the tangent plane plus n dh/du (likewise v), and
 * the normal is their cross product, on n's side. A flat map leaves n as it is (bit for bit). */
KFN vec3 bump_map_apply(const kscene *s, const material *m, vec3 n, vec3 dpdu, vec3 dpdv, vec2 uv) {
    vec2 g = texture_height_grad(s, m->normal_tex, uv);
    if (g.x == 0.0f && g.y == 0.0f) return n;
    vec3 su = vadd(dpdu, vscale(n, m->normal_scale * g.x - vdot(n, dpdu)));
    vec3 sv = vadd(dpdv, vscale(n, m->normal_scale * g.y - vdot(n, dpdv)));
    vec3 r = vcross(su, sv);
    float rl = vlen2(r);
    if (!(rl > 0.0f) || !kfinite(rl)) return n;
    r = vscale(r, 1.0f / sqrtf(rl));
    return vdot(r, n) < 0.0f ? vneg(r) : r;
}

/* Does m have a bump map (MAP_BUMP) that this kernel handles? A constant 0 without KF_BUMP (a
 * kernel whose scenes have none: features.h). */
KFN int material_bumped(const material *m) { return KHAS(KF_BUMP) && (m->maps & MAP_BUMP); }

/* The frame of triangle tr's normal or bump map at barycentrics (b0, b1, b2), around shading
 * normal n: MAP_NORMAL with tangent *t and handedness *w, MAP_BUMP with dp/du *t and dp/dv *b, or 0
 * (the map leaves n as it is). Normal maps: the tangent is the vertices' (glTF TANGENT, xyz and
 * handedness w) where they have one, otherwise dp/du of the triangle with the handedness of its uv
 * parametrisation. Bump maps: dp/du and dp/dv of the uvs, or of the barycentrics (the uv of a scene
 * without uvs). */
KFN int triangle_map_frame(const kscene *s, const material *m, const triangle *tr, float b0, float b1, float b2, vec3 n,
                           vec3 *t, vec3 *b, float *w) {
    if (material_bumped(m)) {
        if (!triangle_dpduv(s, tr, t, b)) {
            if (s->uvs) return 0;
            vec3 p0 = s->positions[tr->v[0]];
            *t = vsub(s->positions[tr->v[1]], p0);
            *b = vsub(s->positions[tr->v[2]], p0);
        }
        return MAP_BUMP;
    }
    if (s->tangents && s->tangents[4u * tr->v[0] + 3u] != 0.0f) {
        const float *t0 = s->tangents + 4u * tr->v[0], *t1 = s->tangents + 4u * tr->v[1],
                    *t2 = s->tangents + 4u * tr->v[2];
        *t = v3(b0 * t0[0] + b1 * t1[0] + b2 * t2[0], b0 * t0[1] + b1 * t1[1] + b2 * t2[1],
                b0 * t0[2] + b1 * t1[2] + b2 * t2[2]);
        *w = t0[3] < 0.0f ? -1.0f : 1.0f;
    } else {
        if (!triangle_dpduv(s, tr, t, b)) return 0;
        *w = vdot(vcross(n, *t), *b) < 0.0f ? -1.0f : 1.0f;
    }
    return MAP_NORMAL;
}

/* Position, normals, uv and material at a hit. Normals face the primitive's outside. */
KFN surface surface_at(const kscene *s, ray r, const hit *h) {
    surface sf;
    /* a normal or bump map's frame, from the primitive's case, applied once after the switch (one
     * copy of the map code in the GPU's megakernels, not one per primitive kind): MAP_NORMAL with
     * tangent mt and handedness mw, MAP_BUMP with dp/du mt and dp/dv mb, or 0 */
    int map = 0;
    vec3 mt = v3s(0.0f), mb = v3s(0.0f);
    float mw = 0.0f;
    uint32_t i = prim_id_index(h->prim);
    switch (prim_id_kind(h->prim)) {
    case PRIM_TRIANGLE: {
        const triangle *tr = &s->triangles[i];
        vec3 p0 = s->positions[tr->v[0]], p1 = s->positions[tr->v[1]], p2 = s->positions[tr->v[2]];
        float b0 = 1.0f - h->b1 - h->b2;
        sf.p = vadd(vadd(vscale(p0, b0), vscale(p1, h->b1)), vscale(p2, h->b2));
        sf.ng = triangle_normal(p0, p1, p2);
        sf.ns = sf.ng;
        if (s->normals) {
            vec3 n = vadd(vadd(vscale(s->normals[tr->v[0]], b0), vscale(s->normals[tr->v[1]], h->b1)),
                          vscale(s->normals[tr->v[2]], h->b2));
            float l2 = vlen2(n);
            if (l2 > 0.0f && kfinite(l2)) {
                sf.ns = vscale(n, 1.0f / sqrtf(l2));
                if (vdot(sf.ns, sf.ng) < 0.0f) sf.ng = vneg(sf.ng); /* trust authored normals' side */
            }
        }
        if (s->uvs) {
            vec2 u0 = s->uvs[tr->v[0]], u1 = s->uvs[tr->v[1]], u2 = s->uvs[tr->v[2]];
            sf.uv = v2(b0 * u0.x + h->b1 * u1.x + h->b2 * u2.x, b0 * u0.y + h->b1 * u1.y + h->b2 * u2.y);
        } else {
            sf.uv = v2(h->b1, h->b2);
        }
        sf.material = tr->material;
        {
            const material *m = &s->materials[tr->material];
            if (KHAS(KF_TEXTURES) && (m->maps & (MAP_NORMAL | MAP_BUMP)))
                map = triangle_map_frame(s, m, tr, b0, h->b1, h->b2, sf.ns, &mt, &mb, &mw);
        }
        break;
    }
    case PRIM_SPHERE:
        if (KHAS(KF_PRIM(PRIM_SPHERE))) {
            const sphere *sp = &s->spheres[i];
            sf.p = ray_at(r, h->t);
            vec3 po = xform_point(&sp->to_object, sf.p);
            sf.ng = vnorm(xform_normal_by_inverse(&sp->to_object, po));
            sf.ns = sf.ng;
            sf.uv = sphere_uv(s, sp->material, po);
            sf.material = sp->material;
            {
                const material *m = &s->materials[sp->material];
                if (KHAS(KF_TEXTURES) && (m->maps & (MAP_NORMAL | MAP_BUMP))) {
                    /* sphere_uv's parametrisation: phi = atan2(z, x) = 2 pi (u - 1/2), theta = acos(y) = pi v,
                     * so in object space dp/du = 2 pi (-z, 0, x) and dp/dv = pi (y cos phi, -sin theta r, y sin phi)
                     * with r = |po| */
                    float rxz = sqrtf(po.x * po.x + po.z * po.z);
                    vec3 du = vscale(v3(-po.z, 0.0f, po.x), 2.0f * K_PI);
                    vec3 dv = rxz > 0.0f ? vscale(v3(po.y * po.x / rxz, -rxz, po.y * po.z / rxz), K_PI)
                                         : v3(K_PI * po.y, 0.0f, 0.0f);
                    mt = xform_vector(&sp->to_world, du);
                    mb = xform_vector(&sp->to_world, dv);
                    map = material_bumped(m) ? MAP_BUMP : MAP_NORMAL;
                    if (map == MAP_NORMAL) mw = vdot(vcross(sf.ns, mt), mb) < 0.0f ? -1.0f : 1.0f;
                }
            }
            break;
        }
        /* fall through - a kernel without spheres never gets here (kernel/features.h) */
    case PRIM_QUAD:
    case PRIM_KIND_COUNT: /* not a kind: ids hold 2 bits; named so that -Wswitch checks the list */ {
        const quad *q = &s->quads[i];
        sf.p = vadd(vadd(q->o, vscale(q->u, h->b1)), vscale(q->v, h->b2));
        sf.ng = q->n;
        sf.ns = q->n;
        sf.uv = v2(h->b1, h->b2);
        sf.material = q->material;
        {
            /* uv = (s, t) of o + s U + t V: dp/du = U, dp/dv = V */
            const material *m = &s->materials[q->material];
            if (KHAS(KF_TEXTURES) && (m->maps & (MAP_NORMAL | MAP_BUMP))) {
                mt = q->u;
                mb = q->v;
                map = material_bumped(m) ? MAP_BUMP : MAP_NORMAL;
                if (map == MAP_NORMAL) mw = vdot(vcross(sf.ns, q->u), q->v) < 0.0f ? -1.0f : 1.0f;
            }
        }
        break;
    }
    }
    if (KHAS(KF_TEXTURES) && map) {
        const material *m = &s->materials[sf.material];
        sf.ns = map == MAP_BUMP ? bump_map_apply(s, m, sf.ns, mt, mb, sf.uv)
                                : normal_map_apply(s, m, sf.ns, mt, mw, sf.uv, sf.p);
    }
    return sf;
}

/* Material kind at a hit: the GPU wavefront sorts paths into one shade queue per kind; kernels
 * with media step over interface-only surfaces (kernel/medium.h). */
KFN int hit_material_kind(const kscene *s, uint32_t prim) {
    uint32_t i = prim_id_index(prim);
    int32_t m = prim_id_kind(prim) == PRIM_TRIANGLE ? s->triangles[i].material
                : prim_id_kind(prim) == PRIM_SPHERE ? s->spheres[i].material
                                                    : s->quads[i].material;
    return s->materials[m].kind;
}

#endif
