/* The homogeneous medium: constant RGB coefficients (kernel/types.h, medium). Its free-flight
 * distances and transmittance are closed forms, so its "tracking" needs no null collisions: the
 * majorant is sigma_t itself on the sampled channel (delta tracking against the exact majorant
 * takes one step) and ratio tracking against it is exact, exp(-sigma_t t), with no random number.
 * Kernel code (CPU and GPU); kernel/medium.h dispatches to it by kind.
 *
 * Chromatic media: the distance is sampled on one channel (the hero channel, picked with
 * probability proportional to the path's throughput), and the estimate is weighted by the
 * one-sample MIS of the balance heuristic over the three channels' distance pdfs: the weight
 * divides by the average pdf sum_c P(c) pdf_c(t), not by the hero channel's (Miller, Georgiev
 * and Jarosz 2019, section 6 and its "spectral MIS"; pbrt-v4's VolPathIntegrator carries the
 * same ratio over whole paths as r_u, here it is applied per segment, which is the same
 * estimator for one segment and stays unbiased over a path because each segment's channel
 * probabilities depend only on the path before it). */
#ifndef CAUSTIC_KERNEL_MEDIA_HOMOGENEOUS_H
#define CAUSTIC_KERNEL_MEDIA_HOMOGENEOUS_H

#include "../rng.h"
#include "../types.h"

/* What a segment through a medium found (medium_sample_segment, kernel/medium.h). */
typedef struct medium_segment {
    vec3 weight;   /* the factor of the path throughput: transmittance (times sigma_s at a
                      scattering) over the probability of what was sampled */
    vec3 emitted;  /* the medium's emission along the whole segment, seen from its start (to be
                      multiplied by the throughput before `weight`) */
    float t;       /* the scattering's distance along the ray (scattered) */
    int scattered; /* a real scattering at t, before the segment's end */
} medium_segment;

/* exp(-sigma t) per channel, 1 where sigma is 0 (t may be K_INF: no 0 * inf). */
KFN float medium_exp_neg(float sigma, float t) { return sigma > 0.0f ? expf(-sigma * t) : 1.0f; }
KFN vec3 medium_exp_neg3(vec3 sigma, float t) {
    return v3(medium_exp_neg(sigma.x, t), medium_exp_neg(sigma.y, t), medium_exp_neg(sigma.z, t));
}
/* (1 - exp(-sigma t)) / sigma, the integral of exp(-sigma s) over [0, t) (t where sigma is 0). */
KFN float medium_exp_integral(float sigma, float t) {
    if (sigma > 0.0f) return (1.0f - expf(-sigma * t)) / sigma;
    return t < K_INF ? t : 0.0f; /* sigma_t = 0: sigma_a = 0 too, the emission is 0 */
}

KFN vec3 homogeneous_sigma_t(const medium *m) { return vadd(m->sigma_a, m->sigma_s); }

/* The transmittance over [0, t) of ray r (the medium has no position dependence: r unused; no
 * random number: rng unused). */
KFN vec3 homogeneous_transmittance(const kscene *s, const medium *m, ray r, float t, pcg32 *rng) {
    (void)s;
    (void)r;
    (void)rng;
    return medium_exp_neg3(homogeneous_sigma_t(m), t);
}

/* One segment [0, tmax) of ray r (tmax K_INF: the ray escapes), for a path of throughput beta:
 * u_channel picks the hero channel, u_dist its free-flight distance. */
KFN medium_segment homogeneous_sample_segment(const kscene *s, const medium *m, ray r, float tmax, vec3 beta,
                                              float u_channel, float u_dist, pcg32 *rng) {
    (void)s;
    (void)r;
    (void)rng;
    medium_segment seg;
    vec3 st = homogeneous_sigma_t(m);
    seg.emitted = v3(m->sigma_a.x * m->emission.x * medium_exp_integral(st.x, tmax),
                     m->sigma_a.y * m->emission.y * medium_exp_integral(st.y, tmax),
                     m->sigma_a.z * m->emission.z * medium_exp_integral(st.z, tmax));
    seg.t = tmax;
    seg.scattered = 0;
    if (vmaxc(m->sigma_s) <= 0.0f) { /* an absorber: the transmittance itself (Beer-Lambert) */
        seg.weight = medium_exp_neg3(st, tmax);
        return seg;
    }
    /* channel probabilities proportional to the throughput (uniform when it is black) */
    vec3 b = v3(fabsf(beta.x), fabsf(beta.y), fabsf(beta.z));
    float bs = b.x + b.y + b.z;
    vec3 pc = bs > 0.0f ? vscale(b, 1.0f / bs) : v3s(1.0f / 3.0f);
    int c = u_channel < pc.x ? 0 : (u_channel < pc.x + pc.y ? 1 : 2);
    float sc = vcomp(st, c);
    float t = sc > 0.0f ? -logf(1.0f - u_dist) / sc : K_INF;
    vec3 tr;
    if (t < tmax) {
        tr = medium_exp_neg3(st, t);
        float pdf = pc.x * st.x * tr.x + pc.y * st.y * tr.y + pc.z * st.z * tr.z;
        seg.t = t;
        seg.scattered = 1;
        seg.weight = pdf > 0.0f ? vscale(vmul(m->sigma_s, tr), 1.0f / pdf) : v3s(0.0f);
        return seg;
    }
    tr = medium_exp_neg3(st, tmax);
    float pass = pc.x * tr.x + pc.y * tr.y + pc.z * tr.z; /* P(no collision before tmax) */
    seg.weight = pass > 0.0f ? vscale(tr, 1.0f / pass) : v3s(0.0f);
    return seg;
}

#endif
