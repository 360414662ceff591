/* The ray queries of a CPU kernel table (isa.h: trace_rays, closest_surface), included by each
 * kernel translation unit: kernel_cpu.c's (scenes without instances) and kernel_cpu_media.c's
 * (with KF_INSTANCES: instanced scenes), which kernel_cpu.c's entries hand instanced scenes to. */
#ifndef CAUSTIC_CPU_TRACE_RAYS_H
#define CAUSTIC_CPU_TRACE_RAYS_H

static size_t trace_rays(const kscene *k, int any_hit, const float *o, const float *d, const float *tmax, size_t begin,
                         size_t end, double *tsum, hit *out) {
    size_t hits = 0;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) {
        ray r = make_ray(v3(o[3 * i], o[3 * i + 1], o[3 * i + 2]), v3(d[3 * i], d[3 * i + 1], d[3 * i + 2]), tmax[i]);
        hit h;
        if (any_hit) {
            int occ = trace_ray(k, r, &h, 1, k->node_layout);
            hits += (size_t)occ;
            if (out) {
                out[i - begin] = h;
                out[i - begin].prim = occ ? h.prim : PRIM_NONE;
            }
        } else {
            if (trace_closest(k, r, &h)) {
                hits++;
                sum += h.t;
            }
            if (out) out[i - begin] = h;
        }
    }
    *tsum += sum;
    return hits;
}

static int closest_surface(const kscene *k, ray r, hit *h, surface *sf) {
    if (!trace_closest(k, r, h)) return 0;
    *sf = surface_at(k, r, h);
    return 1;
}

#endif
