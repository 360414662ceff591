/* The grid medium: sigma(p) = density(p) * sigma (sigma_a, sigma_s of kernel/types.h's medium per
 * unit density), the density read trilinearly from a voxel grid (kscene.voxels), the
 * single-scattering albedo constant or read from an RGB grid of the same resolution. Kernel code
 * (CPU and GPU); kernel/medium.h dispatches to it by kind.
 *
 * Majorants. A coarse grid over the same unit cube (medium.majorant_grid) holds per cell the
 * largest density a trilinear lookup inside the cell can return (the largest voxel of its
 * support: src/scene/scene.c builds it). A ray walks its cells with a 3D DDA (Amanatides and Woo)
 * and tracks against the cell's majorant density D, which is piecewise constant along the ray.
 *
 * Free-flight sampling: delta tracking with null collisions (Woodcock), on one hero channel c
 * picked as the homogeneous kind picks it (probability P_c proportional to the throughput), whose
 * majorant is D * sigma_t,c; tentative collisions are real with probability density / D (the
 * same for every channel: sigma_n / majorant = (D - d) / D). A real collision scatters with
 * the weight sigma_s / sigma_t (no absorption event: the weight carries it), so that a grid of
 * constant density with its exact majorant is the homogeneous estimator step for step.
 *
 * Spectral MIS over RGB (Miller, Georgiev and Jarosz 2019, "A null-scattering path integral
 * formulation of light transport", sections 5-6; pbrt-v4's VolPathIntegrator carries the same
 * ratios path-wide as r_u): each channel k's delta tracking is one sampling technique of the
 * sequence of n null collisions and the event that ends it (a real collision, or leaving the
 * segment). Its pdf is prod_i (D_i - d_i) * st_k^n * exp(-st_k tau) times st_k d at a real
 * collision, tau the majorant optical depth in density units (the integral of D) and st the
 * per-density sigma_t; channel j's null-scattering integrand f_j is the same product with
 * sigma_s,j in place of st_j d. The one-sample balance heuristic weight f_j / sum_k P_k p_k needs
 * only q_k = st_k^n exp(-st_k tau) up to a common factor (the product over the D_i - d_i
 * cancels), computed in logs relative to the largest (grid_channel_ratios). A grey medium (all
 * st_k equal) has q_k = 1: no log or exp. Emission sigma_a Le is added at every tentative
 * collision, weighted against the techniques' pdfs of reaching it (pbrt-v4 does the same).
 * Unbiased per segment for the reason homogeneous.h gives.
 *
 * Transmittance (shadow rays): ratio tracking (Novak et al. 2014) against one majorant for all
 * channels, D * max_k st_k, each tentative collision multiplying channel k by 1 - st_k d / (D
 * max st), with Russian roulette once the largest channel is below GRID_RR_THRESHOLD.
 *
 * Random numbers: the segment's first distance is the media block's draw (u_dist, stratified by
 * the sampler); every further draw (null or real, later distances, ratio tracking) comes from the
 * stream the caller passes (sampler_medium_stream for paths, a seeded pcg32 for shadow rays). */
#ifndef CAUSTIC_KERNEL_MEDIA_GRID_H
#define CAUSTIC_KERNEL_MEDIA_GRID_H

#include "../rng.h"
#include "../types.h"
#include "homogeneous.h"

/* Ratio tracking's roulette: below this transmittance a shadow ray survives with probability
 * GRID_RR_SURVIVE (weighted by its inverse). */
#define GRID_RR_THRESHOLD 0.05f
#define GRID_RR_SURVIVE   0.25f

/* Grid space (the unit cube) of world point p. */
KFN vec3 grid_point(const medium *m, vec3 p) {
    const float *a = m->to_grid;
    return v3(a[0] * p.x + a[1] * p.y + a[2] * p.z + a[3], a[4] * p.x + a[5] * p.y + a[6] * p.z + a[7],
              a[8] * p.x + a[9] * p.y + a[10] * p.z + a[11]);
}
KFN vec3 grid_vector(const medium *m, vec3 d) {
    const float *a = m->to_grid;
    return v3(a[0] * d.x + a[1] * d.y + a[2] * d.z, a[4] * d.x + a[5] * d.y + a[6] * d.z,
              a[8] * d.x + a[9] * d.y + a[10] * d.z);
}

/* The trilinear lookup's corner voxels along one axis of n voxels at grid coordinate u in
 * [0, 1]: i0, i1 (clamped) and the weight f of i1. */
KFN void grid_axis(float u, uint32_t n, uint32_t *i0, uint32_t *i1, float *f) {
    float v = u * (float)n - 0.5f;
    float fl = floorf(v);
    *f = v - fl;
    int32_t a = (int32_t)fl, last = (int32_t)n - 1;
    *i0 = (uint32_t)(a < 0 ? 0 : (a > last ? last : a));
    *i1 = (uint32_t)(a + 1 < 0 ? 0 : (a + 1 > last ? last : a + 1));
}
/* Channel ch of a grid of nch channels (voxels at offset `off`, resolution res) at grid point u
 * (inside the unit cube), trilinear. */
KFN float grid_lookup(const float *vox, uint32_t off, const uint32_t *res, uint32_t nch, uint32_t ch, vec3 u) {
    uint32_t x0, x1, y0, y1, z0, z1;
    float fx, fy, fz;
    grid_axis(u.x, res[0], &x0, &x1, &fx);
    grid_axis(u.y, res[1], &y0, &y1, &fy);
    grid_axis(u.z, res[2], &z0, &z1, &fz);
    const float *g = vox + off + ch;
    uint32_t sx = nch, sy = nch * res[0], sz = sy * res[1];
    float c00 = g[z0 * sz + y0 * sy + x0 * sx] * (1.0f - fx) + g[z0 * sz + y0 * sy + x1 * sx] * fx;
    float c01 = g[z0 * sz + y1 * sy + x0 * sx] * (1.0f - fx) + g[z0 * sz + y1 * sy + x1 * sx] * fx;
    float c10 = g[z1 * sz + y0 * sy + x0 * sx] * (1.0f - fx) + g[z1 * sz + y0 * sy + x1 * sx] * fx;
    float c11 = g[z1 * sz + y1 * sy + x0 * sx] * (1.0f - fx) + g[z1 * sz + y1 * sy + x1 * sx] * fx;
    float c0 = c00 * (1.0f - fy) + c01 * fy, c1 = c10 * (1.0f - fy) + c11 * fy;
    return c0 * (1.0f - fz) + c1 * fz;
}
/* The density lookup of a grid kind whose voxels are not a dense array (kernel/media/nanovdb.h,
 * included at the end of this header). */
KFN float nanovdb_density(const kscene *s, const medium *m, vec3 u);
/* The density at grid point u: 0 outside the unit cube. The one thing in which the grid kinds
 * differ (MEDIUM_GRID: the dense array; MEDIUM_NANOVDB: a NanoVDB tree); the majorant grid, its
 * DDA and the tracking below serve both. */
KFN float grid_density(const kscene *s, const medium *m, vec3 u) {
    if (!(u.x >= 0.0f && u.x <= 1.0f && u.y >= 0.0f && u.y <= 1.0f && u.z >= 0.0f && u.z <= 1.0f)) return 0.0f;
    if (m->kind == MEDIUM_NANOVDB) return nanovdb_density(s, m, u);
    return grid_lookup(s->voxels, m->density_grid, m->res, 1u, 0u, u);
}
/* sigma_s at grid point u of density d (sigma_t there: d * (sigma_a + sigma_s)). */
KFN vec3 grid_sigma_s(const kscene *s, const medium *m, vec3 u, float d) {
    if (m->albedo_grid == MEDIUM_NO_GRID) return vscale(m->sigma_s, d);
    vec3 st = vscale(homogeneous_sigma_t(m), d);
    vec3 a = v3(grid_lookup(s->voxels, m->albedo_grid, m->res, 3u, 0u, u),
                grid_lookup(s->voxels, m->albedo_grid, m->res, 3u, 1u, u),
                grid_lookup(s->voxels, m->albedo_grid, m->res, 3u, 2u, u));
    return vmul(st, vmin(vmax(a, v3s(0.0f)), v3s(1.0f)));
}

/* ---- the majorant grid's DDA ------------------------------------------------------------------ */
typedef struct grid_dda {
    vec3 uo, ud;     /* the ray in grid space: u(t) = uo + ud t */
    int32_t cell[3]; /* the current majorant cell */
    int32_t step[3]; /* +-1 per axis */
    float tnext[3];  /* ray parameter of the next cell boundary per axis */
    float tdelta[3]; /* parameter length of one cell per axis */
    float t, tend;   /* the current cell starts at t; the walk ends at tend */
} grid_dda;

/* Starts the walk of ray r over [0, tmax) through m's unit cube: 0 where it misses the cube. */
KFN int grid_dda_init(const medium *m, ray r, float tmax, grid_dda *q) {
    q->uo = grid_point(m, r.o);
    q->ud = grid_vector(m, r.d);
    float t0 = 0.0f, t1 = tmax;
    for (int a = 0; a < 3; ++a) {
        float o = vcomp(q->uo, a), d = vcomp(q->ud, a);
        if (d == 0.0f) {
            if (!(o >= 0.0f && o <= 1.0f)) return 0;
            continue;
        }
        float inv = 1.0f / d, ta = -o * inv, tb = (1.0f - o) * inv;
        if (ta > tb) {
            float x = ta;
            ta = tb;
            tb = x;
        }
        t0 = kmax(t0, ta);
        t1 = kmin(t1, tb);
    }
    if (!(t0 < t1)) return 0;
    q->t = t0;
    q->tend = t1;
    vec3 p = vmadd(q->uo, q->ud, t0);
    for (int a = 0; a < 3; ++a) {
        float n = (float)m->mres[a], d = vcomp(q->ud, a) * n, g = vcomp(p, a) * n;
        int32_t c = (int32_t)floorf(g), last = (int32_t)m->mres[a] - 1;
        c = c < 0 ? 0 : (c > last ? last : c);
        q->cell[a] = c;
        if (d > 0.0f) {
            q->step[a] = 1;
            q->tnext[a] = t0 + ((float)(c + 1) - g) / d;
            q->tdelta[a] = 1.0f / d;
        } else if (d < 0.0f) {
            q->step[a] = -1;
            q->tnext[a] = t0 + ((float)c - g) / d;
            q->tdelta[a] = -1.0f / d;
        } else {
            q->step[a] = 0;
            q->tnext[a] = K_INF;
            q->tdelta[a] = K_INF;
        }
    }
    return 1;
}
/* The current cell's span [*ta, *tb) and majorant density *dmaj, then steps to the next cell:
 * 0 once the walk has passed tend. */
KFN int grid_dda_next(const kscene *s, const medium *m, grid_dda *q, float *ta, float *tb, float *dmaj) {
    if (!(q->t < q->tend)) return 0;
    int a = q->tnext[0] < q->tnext[1] ? (q->tnext[0] < q->tnext[2] ? 0 : 2) : (q->tnext[1] < q->tnext[2] ? 1 : 2);
    *ta = q->t;
    *tb = kmin(q->tnext[a], q->tend);
    *dmaj = s->voxels[m->majorant_grid + ((uint32_t)q->cell[2] * m->mres[1] + (uint32_t)q->cell[1]) * m->mres[0] +
                      (uint32_t)q->cell[0]];
    q->t = *tb;
    q->cell[a] += q->step[a];
    q->tnext[a] += q->tdelta[a];
    if (q->cell[a] < 0 || q->cell[a] >= (int32_t)m->mres[a]) q->t = q->tend; /* left the cube */
    return 1;
}

/* ---- spectral MIS ------------------------------------------------------------------------------- */
/* q_k of the header's comment for n null collisions over majorant depth tau, scaled so that the
 * largest among channels with pc_k > 0 is 1; 0 where pc_k is 0 (that channel's throughput is 0:
 * its weight is never used). */
KFN vec3 grid_channel_ratios(vec3 st, vec3 pc, uint32_t n, float tau) {
    vec3 q = v3(pc.x > 0.0f ? 1.0f : 0.0f, pc.y > 0.0f ? 1.0f : 0.0f, pc.z > 0.0f ? 1.0f : 0.0f);
    if (st.x == st.y && st.y == st.z) return q; /* grey: every technique is the same */
    float l[3], mx = -K_INF;
    for (int k = 0; k < 3; ++k) {
        float s = vcomp(st, k);
        if (n > 0u && !(s > 0.0f))
            l[k] = -K_INF; /* a channel without extinction has no null collisions */
        else
            l[k] = (n > 0u ? (float)n * logf(s) : 0.0f) - s * tau;
        if (vcomp(pc, k) > 0.0f) mx = kmax(mx, l[k]);
    }
    if (!(mx > -K_INF)) return v3s(0.0f);
    return v3(pc.x > 0.0f ? expf(l[0] - mx) : 0.0f, pc.y > 0.0f ? expf(l[1] - mx) : 0.0f,
              pc.z > 0.0f ? expf(l[2] - mx) : 0.0f);
}
/* f / sum_k pc_k q_k den_k: the balance heuristic's weight of numerator f (per channel, already
 * multiplied by q) over the techniques' pdf terms den_k. */
KFN vec3 grid_mis(vec3 f, vec3 q, vec3 pc, vec3 den) {
    float p = pc.x * q.x * den.x + pc.y * q.y * den.y + pc.z * q.z * den.z;
    return p > 0.0f ? vscale(f, 1.0f / p) : v3s(0.0f);
}

/* The hero channel's next distance in majorant optical depth (density units): infinite where the
 * channel has no extinction. */
KFN float grid_exp_depth(float stc, float u) { return stc > 0.0f ? -logf(1.0f - u) / stc : K_INF; }

/* One segment [0, tmax) of ray r through grid medium m (kernel/medium.h's contract, as
 * homogeneous_sample_segment's; rng: the stream for the draws after the first). */
KFN medium_segment grid_sample_segment(const kscene *s, const medium *m, ray r, float tmax, vec3 beta, float u_channel,
                                       float u_dist, pcg32 *rng) {
    medium_segment seg;
    seg.weight = v3s(1.0f);
    seg.emitted = v3s(0.0f);
    seg.t = tmax;
    seg.scattered = 0;
    grid_dda q;
    if (!grid_dda_init(m, r, tmax, &q)) return seg;
    vec3 st = homogeneous_sigma_t(m);
    vec3 b = v3(fabsf(beta.x), fabsf(beta.y), fabsf(beta.z));
    float bs = b.x + b.y + b.z;
    vec3 pc = bs > 0.0f ? vscale(b, 1.0f / bs) : v3s(1.0f / 3.0f);
    int c = u_channel < pc.x ? 0 : (u_channel < pc.x + pc.y ? 1 : 2);
    float stc = vcomp(st, c);
    int emits = !vis_black(m->emission);
    float e = grid_exp_depth(stc, u_dist), tau = 0.0f, ta, tb, dmaj;
    uint32_t n = 0u;
    while (grid_dda_next(s, m, &q, &ta, &tb, &dmaj)) {
        if (!(dmaj > 0.0f)) continue;
        for (;;) {
            float span = dmaj * (tb - ta);
            if (e >= span) {
                e -= span;
                tau += span;
                break;
            }
            float t = ta + e / dmaj;
            tau += e;
            ta = t;
            vec3 u = vmadd(q.uo, q.ud, t);
            float d = grid_density(s, m, u);
            int real = pcg32_float(rng) * dmaj < d;
            if (!emits && !real) {
                ++n;
                e = grid_exp_depth(stc, pcg32_float(rng));
                continue;
            }
            vec3 ss = grid_sigma_s(s, m, u, d);
            vec3 qk = grid_channel_ratios(st, pc, n, tau);
            if (emits) {
                vec3 sa = vmax(vsub(vscale(st, d), ss), v3s(0.0f));
                seg.emitted = vadd(seg.emitted, grid_mis(vmul(qk, vmul(sa, m->emission)), qk, pc, vscale(st, dmaj)));
            }
            if (real) { /* a real collision: scatter, weighted by the albedo */
                seg.t = t;
                seg.scattered = 1;
                seg.weight = grid_mis(vmul(qk, ss), qk, pc, vscale(st, d));
                return seg;
            }
            ++n;
            e = grid_exp_depth(stc, pcg32_float(rng));
        }
    }
    vec3 qk = grid_channel_ratios(st, pc, n, tau);
    seg.weight = grid_mis(qk, qk, pc, v3s(1.0f));
    return seg;
}

/* The transmittance over [0, t) of ray r by ratio tracking (rng: its stream). */
KFN vec3 grid_transmittance(const kscene *s, const medium *m, ray r, float t, pcg32 *rng) {
    vec3 tr = v3s(1.0f);
    vec3 st = homogeneous_sigma_t(m);
    float smax = vmaxc(st);
    grid_dda q;
    if (!(smax > 0.0f) || !grid_dda_init(m, r, t, &q)) return tr;
    vec3 rel = vscale(st, 1.0f / smax);
    float e = grid_exp_depth(smax, pcg32_float(rng)), ta, tb, dmaj;
    while (grid_dda_next(s, m, &q, &ta, &tb, &dmaj)) {
        if (!(dmaj > 0.0f)) continue;
        for (;;) {
            float span = dmaj * (tb - ta);
            if (e >= span) {
                e -= span;
                break;
            }
            ta += e / dmaj;
            float f = grid_density(s, m, vmadd(q.uo, q.ud, ta)) / dmaj;
            tr = vmul(tr, vsub(v3s(1.0f), vscale(rel, f)));
            float mx = vmaxc(tr);
            if (mx < GRID_RR_THRESHOLD) {
                if (!(mx > 0.0f) || pcg32_float(rng) >= GRID_RR_SURVIVE) return v3s(0.0f);
                tr = vscale(tr, 1.0f / GRID_RR_SURVIVE);
            }
            e = grid_exp_depth(smax, pcg32_float(rng));
        }
    }
    return tr;
}

#endif

/* the NanoVDB kind's lookup (it includes this header: guarded both ways) */
#include "nanovdb.h"
