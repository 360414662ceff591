/* AOVs (arbitrary output variables): per sample, what a camera ray sees first, as denoisers
 * (Open Image Denoise) take it as guides. A camera ray is followed through perfect mirrors and
 * glass (delta lobes: the BSDF's own sampling picks reflection or refraction, Fresnel-weighted)
 * to the first surface that is not a perfect specular; its albedo (times the chain's specular
 * throughput) and shading normal (world space, facing the surface's outside) are the sample's.
 * Depth is the distance to the first hit, whatever its material. A ray that leaves the scene
 * gives the environment's radiance clamped to [0, 1] as albedo and a zero normal (OIDN's "no
 * surface here"). The film sums AOV samples next to the radiance (film.h): AOV_FLOATS per pixel. */
#ifndef CAUSTIC_KERNEL_AOV_H
#define CAUSTIC_KERNEL_AOV_H

#include "bsdf.h"
#include "bvh_traverse.h"
#include "camera.h"
#include "environment.h"
#include "pass.h"
#include "sampler.h"
#include "texture.h"

/* Specular bounces followed at most (a ray caught between two mirrors stops there). */
#define AOV_MAX_CHAIN 8

/* One sample's AOVs. hit: 1 if the camera ray hit anything (depth is then its distance). */
typedef struct aov_sample {
    vec3 albedo, normal;
    float depth, hit;
} aov_sample;

/* The film's plane holds these sums per pixel, in this order. */
enum { AOV_ALBEDO = 0, AOV_NORMAL = 3, AOV_DEPTH = 6, AOV_HITS = 7, AOV_FLOATS = 8 };

/* The AOVs along camera ray r; `u` seeds the choice between reflection and refraction at glass.
 * `layout`: s->node_layout, or that value as a constant (trace_ray). */
KFN aov_sample aov_trace(const kscene *s, ray r, uint32_t u, uint32_t layout) {
    aov_sample a;
    a.albedo = v3s(0.0f);
    a.normal = v3s(0.0f);
    a.depth = 0.0f;
    a.hit = 0.0f;
    pcg32 rng = pcg32_seed(u, 0x0a0fu);
    vec3 tp = v3s(1.0f);
    for (int bounce = 0; bounce <= AOV_MAX_CHAIN; ++bounce) {
        hit h;
        if (!trace_closest_layout(s, r, &h, layout)) {
            vec3 e = env_eval(s, r.d);
            a.albedo =
                vmul(tp, v3(kmin(kmax(e.x, 0.0f), 1.0f), kmin(kmax(e.y, 0.0f), 1.0f), kmin(kmax(e.z, 0.0f), 1.0f)));
            break;
        }
        surface sf = surface_at(s, r, &h);
        material mat = material_at(s, &s->materials[sf.material], sf.uv, sf.p);
        vec3 albedo = material_albedo(s, &mat, sf.uv, sf.p);
        if (bounce == 0) {
            a.depth = h.t;
            a.hit = 1.0f;
        }
        if (!(material_flags(&mat) & BSDF_ALL_DELTA) || bounce == AOV_MAX_CHAIN) {
            a.albedo = vmul(tp, albedo);
            a.normal = sf.ns;
            break;
        }
        /* a perfect specular: continue along the direction its BSDF samples */
        vec3 wo_world = vneg(r.d), ns = sf.ns, ng = sf.ng;
        if (!(material_flags(&mat) & BSDF_INTERIOR) && vdot(wo_world, ng) < 0.0f) {
            ng = vneg(ng);
            ns = vneg(ns);
        }
        frame fr = frame_from_normal(ns);
        bsdf_sample bs;
        /* one draw per statement: the order of a call's arguments is unspecified (and differs
         * between the CPU's and the GPU's compilers) */
        float u_lobe = pcg32_float(&rng);
        float u_x = pcg32_float(&rng);
        float u_y = pcg32_float(&rng);
        vec2 u_dir = v2(u_x, u_y);
        if (!bsdf_sample_dir(&mat, albedo, frame_to_local(fr, wo_world), u_lobe, u_dir, &bs)) break;
        vec3 wi = frame_to_world(fr, bs.wi);
        tp = vmul(tp, bs.weight);
        r = make_ray(offset_origin(sf.p, ng, wi), wi, K_INF);
    }
    return a;
}

/* Path tracing: the AOVs of pixel sample `index` along the same camera ray as path_generate's. */
KFN aov_sample aov_pass_sample(const kscene *s, const kpass *p, int px, int py, uint32_t index, uint32_t layout) {
    sampler smp = sampler_start(p->sampler, (uint32_t)px, (uint32_t)py, index, p->seed, p->spp_total);
    vec2 u_pixel, u_lens;
    sampler_camera(&smp, NULL, &u_pixel, &u_lens);
    return aov_trace(s, camera_ray(&p->cam, px, py, u_pixel, u_lens), hash_combine(smp.pixel_seed, index), layout);
}

/* The bidirectional integrators: iteration `it` of pixel (px, py) through a camera ray of its
 * own (jittered in the pixel and on the lens by a hash of pixel, iteration and seed). */
KFN aov_sample aov_camera_sample(const kscene *s, const camera *cam, int px, int py, uint32_t it, uint32_t seed) {
    uint32_t h = hash_combine(hash_combine((uint32_t)py * (uint32_t)cam->width + (uint32_t)px, it), seed);
    pcg32 rng = pcg32_seed(h, 0x0a0e1u);
    float u[4];
    for (int k = 0; k < 4; ++k) u[k] = pcg32_float(&rng); /* in order (see aov_trace) */
    uint32_t chain = pcg32_next(&rng);
    return aov_trace(s, camera_ray(cam, px, py, v2(u[0], u[1]), v2(u[2], u[3])), chain, s->node_layout);
}

#endif
