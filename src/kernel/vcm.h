/* Bidirectional light transport: light tracing (LT), bidirectional path tracing (BDPT),
 * progressive and bidirectional photon mapping (PPM, BPM) and vertex connection and merging
 * (VCM) as one integrator with flags, after Georgiev et al. 2012 and the "Implementing VCM"
 * technical report (Georgiev 2012). MIS weights are computed recursively from three quantities
 * carried per sub-path vertex (dVCM, dVC, dVM), so no strategy ever walks a whole path.
 *
 * One iteration: trace one light sub-path per pixel, store its non-specular vertices and splat
 * its connections to the camera (LT); build a hash grid over the stored vertices (the backend
 * does that: count -> prefix sum -> scatter); trace one camera sub-path per pixel that connects
 * to lights (NEE), to the vertices of "its" light sub-path (same index) and merges with nearby
 * light vertices. All state lives in plain structs with fixed-size outputs so the same code runs
 * per thread on the CPU and per path on the GPU. The MIS heuristic is the balance heuristic. */
#ifndef CAUSTIC_KERNEL_VCM_H
#define CAUSTIC_KERNEL_VCM_H

#include "bsdf.h"
#include "bvh_traverse.h"
#include "camera.h"
#include "lights.h"
#include "medium.h"
#include "rng.h"

typedef enum vcm_algorithm { VCM_ALG_LT = 0, VCM_ALG_BDPT, VCM_ALG_PPM, VCM_ALG_BPM, VCM_ALG_VCM } vcm_algorithm;

/* Per-iteration constants. */
typedef struct vcm_params {
    int32_t use_vc, use_vm;   /* vertex connection (BDPT, VCM, LT), vertex merging (PPM, BPM, VCM) */
    int32_t light_trace_only; /* LT: splats carry no MIS weight */
    int32_t ppm;              /* merge at the first non-specular camera vertex only, no MIS */
    int32_t max_path_length;  /* path segments, camera to light */
    int32_t merge_all;        /* merging is a strategy at every non-delta vertex, not only
                                 between two glossy ones (see vcm_make_params) */
    float radius2;            /* merging radius squared */
    float light_paths;        /* light sub-paths per iteration */
    float mis_vm;             /* eta_VCM (0 without merging) */
    float mis_vc;             /* 1 / eta_VCM (0 without connections) */
    float vm_norm;            /* 1 / (pi r^2 light_paths) */
    float vm_medium;          /* eta at a medium vertex over eta at a surface: (4/3 pi r^3) / (pi r^2) = 4 r / 3
                                 (vcm_eta_at; merging in media, below) */
    float vm_norm_medium;     /* 1 / (4/3 pi r^3 light_paths): the volume kernel of a merge in a medium */
    float pixel_area;         /* one pixel's area on the image plane at distance 1 */
    camera cam;               /* the pass's camera (kpass.cam) */
} vcm_params;

KFN float vcm_mis(float x) { return x; } /* balance heuristic */

/* Two uniform numbers, drawn in this order. Not v2(pcg32_float(rng), pcg32_float(rng)): the
 * arguments of a call are evaluated in an unspecified order, and gcc and nvcc's device code
 * differ, which gave the CPU and the GPU different paths for the same seed. */
KFN vec2 vcm_rand2(pcg32 *rng) {
    float a = pcg32_float(rng);
    float b = pcg32_float(rng);
    return v2(a, b);
}

/* Is merging a strategy at a (non-delta) vertex whose neighbours on the path are glossy (1) or not
 * (0: Lambertian, or the light or the camera itself)? */
KFN int vcm_merges_between(const vcm_params *p, int glossy_before, int glossy_after) {
    return p->merge_all || (glossy_before && glossy_after);
}
/* eta_VCM where merging is a strategy, else 0. */
KFN float vcm_eta_if(const vcm_params *p, int merges) { return merges ? p->mis_vm : 0.0f; }

KFN vcm_params vcm_make_params(int algorithm, int max_path_length, float radius, float light_paths,
                               int merge_everywhere, const camera *cam) {
    vcm_params p;
    p.use_vc = algorithm == VCM_ALG_LT || algorithm == VCM_ALG_BDPT || algorithm == VCM_ALG_VCM;
    p.use_vm = algorithm == VCM_ALG_PPM || algorithm == VCM_ALG_BPM || algorithm == VCM_ALG_VCM;
    p.light_trace_only = algorithm == VCM_ALG_LT;
    p.ppm = algorithm == VCM_ALG_PPM;
    p.max_path_length = max_path_length;
    /* With connections, VCM merges only at vertices between two glossy ones (specular or glossy
     * materials: anything but Lambertian), the S D S paths that no connection samples well.
     * Elsewhere a connection through the Lambertian (or end) neighbour covers the same path at a
     * fraction of a merge's cost, without the kernel's blur: merging next to the light competes
     * with NEE (nearly noise-free for point and sun lights, while the balance heuristic credited
     * the merge with up to a quarter of the direct light on smallvcm2's walls, at several times
     * NEE's variance), merging at the camera sub-path's first vertex duplicates light tracing,
     * and merging after a Lambertian bounce duplicates the connection to that bounce. The
     * weights of all strategies stay a partition of unity (tested). PPM and BPM, which have no
     * connections, merge everywhere; so does VCM with merge_everywhere (SmallVCM's strategies). */
    p.merge_all = merge_everywhere || !(p.use_vc && p.use_vm);
    p.radius2 = radius * radius;
    p.light_paths = light_paths;
    float eta = K_PI * p.radius2 * light_paths;
    p.mis_vm = p.use_vm ? vcm_mis(eta) : 0.0f;
    p.mis_vc = (p.use_vc && !p.light_trace_only) ? vcm_mis(1.0f / eta) : 0.0f;
    p.vm_norm = 1.0f / eta;
    p.vm_medium = 4.0f * radius / 3.0f;
    p.vm_norm_medium = p.vm_norm / p.vm_medium;
    p.pixel_area = (2.0f * cam->tan_half_fovy * cam->aspect / (float)cam->width) *
                   (2.0f * cam->tan_half_fovy / (float)cam->height);
    p.cam = *cam;
    return p;
}

/* ---- iterations: what every driver (CPU, GPU) derives alike ------------------------------ */
/* Merging radius of iteration i, counted from 0: r_1 (i + 1)^((alpha - 1) / 2). */
KFN float vcm_iteration_radius(float radius1, float alpha, uint32_t iteration) {
    return radius1 * powf((float)(iteration + 1), 0.5f * (alpha - 1.0f));
}
/* Random streams of an iteration: light sub-path i and the camera sub-path of pixel i. */
KFN uint64_t vcm_iteration_seed(uint32_t seed, uint32_t iteration) {
    return hash_u64(((uint64_t)seed << 32) ^ iteration);
}
KFN pcg32 vcm_light_rng(uint64_t iteration_seed, uint32_t path) {
    return pcg32_seed(iteration_seed, 2u * (uint64_t)path);
}
KFN pcg32 vcm_camera_rng(uint64_t iteration_seed, uint32_t pixel) {
    return pcg32_seed(iteration_seed, 2u * (uint64_t)pixel + 1u);
}

/* ---- MIS bookkeeping ([tech. rep.] equations in brackets) --------------------------------- */
typedef struct vcm_mis_state {
    float dvcm, dvc, dvm;
} vcm_mis_state;

/* Light sub-path start (31-33). */
KFN vcm_mis_state vcm_mis_light_start(const vcm_params *p, const light_emission *e) {
    vcm_mis_state m;
    m.dvcm = vcm_mis(e->pdf_direct / e->pdf_emit);
    m.dvc = e->delta ? 0.0f : vcm_mis((e->finite ? e->cos_light : 1.0f) / e->pdf_emit);
    m.dvm = m.dvc * p->mis_vc;
    return m;
}
/* Camera sub-path start (31-33): camera_pdf_w is the solid-angle pdf of the primary ray. */
KFN vcm_mis_state vcm_mis_camera_start(const vcm_params *p, float camera_pdf_w) {
    vcm_mis_state m;
    m.dvcm = vcm_mis(p->light_paths / camera_pdf_w);
    m.dvc = 0.0f;
    m.dvm = 0.0f;
    return m;
}
/* Arriving at a surface after a segment of squared length dist2 (34-36); cos_fix is the cosine
 * at the new vertex. The first segment from an infinite light has no distance factor. pending
 * (see vcm_mis_after_scatter) is scaled alike. */
KFN void vcm_mis_after_hit(vcm_mis_state *m, vcm_mis_state *pending, float dist2, float cos_fix, int apply_dist) {
    if (apply_dist) m->dvcm *= vcm_mis(dist2);
    float ic = 1.0f / vcm_mis(fabsf(cos_fix));
    m->dvcm *= ic;
    m->dvc *= ic;
    m->dvm *= ic;
    pending->dvc *= ic;
    pending->dvm *= ic;
}
/* Scattering with outgoing cosine cos_out and (roulette-including) pdfs (34-38). The terms that
 * stand for merging at this vertex are not added but returned in *pending: whether merging here
 * is a strategy depends on the next vertex (vcm_merges_between), which vcm_mis_confirm adds
 * them for once it is known. */
KFN void vcm_mis_after_scatter(vcm_mis_state *m, vcm_mis_state *pending, const vcm_params *p, float cos_out,
                               float pdf_dir, float pdf_rev, int delta) {
    pending->dvcm = pending->dvc = pending->dvm = 0.0f;
    if (delta) {
        m->dvcm = 0.0f;
        m->dvc *= vcm_mis(cos_out);
        m->dvm *= vcm_mis(cos_out);
        return;
    }
    float f = vcm_mis(cos_out / pdf_dir);
    m->dvc = f * (m->dvc * vcm_mis(pdf_rev) + m->dvcm);
    m->dvm = f * (m->dvm * vcm_mis(pdf_rev) + m->dvcm * p->mis_vc);
    m->dvcm = vcm_mis(1.0f / pdf_dir);
    pending->dvc = f * p->mis_vm;
    pending->dvm = f;
}
/* Adds the pending merge terms of the previous vertex where merging there is a strategy. */
KFN void vcm_mis_confirm(vcm_mis_state *m, const vcm_mis_state *pending, int merges) {
    if (!merges) return;
    m->dvc += pending->dvc;
    m->dvm += pending->dvm;
}
/* Weight of a camera sub-path that reaches an emitter (or escapes to the environment) by
 * itself, at path length > 1: pdf_direct / pdf_emit as emitter_pdfs returns them (48). cam and
 * pending: the state on arrival, before vcm_mis_confirm; the previous vertex's next one is the
 * light itself, and pending_after says whether the one before it is glossy. */
KFN float vcm_weight_emission(const vcm_params *p, const vcm_mis_state *cam, const vcm_mis_state *pending,
                              int pending_after, float pdf_direct, float pdf_emit) {
    float dvc = cam->dvc + (vcm_merges_between(p, pending_after, 0) ? pending->dvc : 0.0f);
    float w_camera = vcm_mis(pdf_direct) * cam->dvcm + vcm_mis(pdf_emit) * dvc;
    return 1.0f / (1.0f + w_camera);
}
/* Weight of a light sample taken at a camera vertex (NEE, 44-46); bsdf pdfs include roulette.
 * eta_here: vcm_eta_at of the camera vertex (merging there is a strategy when its next vertex is
 * the light). In media ("Media" below) bsdf_dir_pdf carries the shadow segment's T and
 * cos_to_light the camera vertex's s T. */
KFN float vcm_weight_nee(const vcm_params *p, const vcm_mis_state *cam, float eta_here, const light_sample *ls,
                         float cos_to_light, float bsdf_dir_pdf, float bsdf_rev_pdf) {
    (void)p;
    /* NEE's pdf without the selection: solid angle; for a point light the squared distance and
     * for the sun 1, so that pdf_emit * cos / pdf_dir_w is the light's emission pdf at the
     * receiver in area measure */
    float pdf_dir_w = ls->delta ? (ls->finite ? ls->dist * ls->dist : 1.0f) : ls->pdf / ls->pick;
    float w_light = ls->delta ? 0.0f : vcm_mis(bsdf_dir_pdf / ls->pdf);
    float w_camera = vcm_mis(ls->pdf_emit * cos_to_light / (pdf_dir_w * ls->cos_light)) *
                     (eta_here + cam->dvcm + cam->dvc * vcm_mis(bsdf_rev_pdf));
    /* the picks cancel unless NEE's (a light tree's) and emission's (power) differ */
    if (ls->pick_emit != ls->pick) w_camera *= vcm_mis(ls->pick_emit / ls->pick);
    return 1.0f / (w_light + 1.0f + w_camera);
}
/* Weight of connecting a camera vertex and a light vertex (40-42): *_eta vcm_eta_at of that vertex
 * (0 where merging there is no strategy), *_dir_pdf_a the area (in media: vertex) pdfs of each
 * side sampling the other vertex, *_rev_pdf the solid-angle pdfs of sampling backwards. */
KFN float vcm_weight_connect(const vcm_params *p, const vcm_mis_state *cam, float cam_eta, const vcm_mis_state *lig,
                             float light_eta, float cam_dir_pdf_a, float cam_rev_pdf, float light_dir_pdf_a,
                             float light_rev_pdf) {
    (void)p;
    float w_light = vcm_mis(cam_dir_pdf_a) * (light_eta + lig->dvcm + lig->dvc * vcm_mis(light_rev_pdf));
    float w_camera = vcm_mis(light_dir_pdf_a) * (cam_eta + cam->dvcm + cam->dvc * vcm_mis(cam_rev_pdf));
    return 1.0f / (w_light + 1.0f + w_camera);
}
/* Weight of connecting a light vertex to the camera (46-47): eta, vcm_eta_at of the light vertex
 * (merging there is a strategy when its next vertex is the camera); camera_pdf_a, the area (in
 * media: vertex) pdf at the light vertex of the camera's primary ray. */
KFN float vcm_weight_to_camera(const vcm_params *p, const vcm_mis_state *lig, float eta, float camera_pdf_a,
                               float light_rev_pdf) {
    if (p->light_trace_only) return 1.0f;
    float w_light = vcm_mis(camera_pdf_a / p->light_paths) * (eta + lig->dvcm + lig->dvc * vcm_mis(light_rev_pdf));
    return 1.0f / (w_light + 1.0f);
}
/* Weight of merging a camera vertex with a light vertex (37-39). eta_scale: the surface eta over
 * the merged vertex's (1 on surfaces, 1 / vm_medium in a medium: vcm_eta_at), since dVM counts
 * strategies relative to a merge with the surface eta (see "Media" below). */
KFN float vcm_weight_merge(const vcm_params *p, const vcm_mis_state *cam, const vcm_mis_state *lig, float cam_dir_pdf,
                           float cam_rev_pdf, float eta_scale) {
    if (p->ppm) return 1.0f;
    float w_light = (lig->dvcm * p->mis_vc + lig->dvm * vcm_mis(cam_dir_pdf)) * eta_scale;
    float w_camera = (cam->dvcm * p->mis_vc + cam->dvm * vcm_mis(cam_rev_pdf)) * eta_scale;
    return 1.0f / (w_light + 1.0f + w_camera);
}

/* The light tree and VCM's weights. With a tree, the probability that NEE picks light L depends on
 * the vertex NEE starts from: pick_D(L | x, n_x) (light_pick_at), while light sub-paths keep the
 * power pick pick_E(L) (light_emit). A light sub-path y0 y1 ... starts with
 *   dVCM_0 = pdf_direct(y0) / pdf_emit(y0)                                               (31)
 * where pdf_direct(y0) = pick_D(L | y1, n_y1) pdf_A(y0) is the probability that NEE from the
 * camera vertex that meets y1 would have produced y0: the direct pdf of y0 depends on its
 * successor on the light sub-path (its predecessor in the camera's direction), unknown until the
 * first segment is traced. light_emit therefore writes it with pick_E, and at y1 (the only vertex
 * whose NEE could produce y0) vcm_light_tree_fix multiplies dVCM_1 by
 *   mis(pick_D(L | y1, n_y1) / pick_E(L)),
 * exact because dVCM_1 = dVCM_0 mis(d^2) / mis(|cos_y1|) is linear in mis(pdf_direct) and no
 * other quantity reads dVCM_0 (dVC and dVM carry pdf_emit only). From y1 on the recursion
 * (34-38) carries the corrected value into every weight that names y0's direct pdf (connections,
 * merges, light tracing). On the camera side NEE's pdf and the emission pdf of the same light no
 * longer share their pick, so vcm_weight_nee multiplies its camera term by
 * mis(pick_E / pick_D), and a camera sub-path that hits an emitter at z_k weighs it with
 * pick_D(L | z_{k-1}, n_{k-1}) (emitter_pdfs gets the previous vertex and its normal). Every
 * vertex names the same shading normal (surface_at's ns, cosines absolute) on both sub-paths, so
 * the two sides compute the same pick for the same vertex. The environment and directional
 * lights are picked alike by both (their pick does not depend on the vertex). */
KFN float vcm_pick_fix(float pick_direct, float pick_emit) {
    return pick_emit > 0.0f ? vcm_mis(pick_direct / pick_emit) : 1.0f;
}
KFN float vcm_light_tree_fix(const kscene *s, const light_emission *e, vec3 y1, vec3 n1) {
    if (e->light < 0) return 1.0f;
    return vcm_pick_fix(light_pick_at(s, (uint32_t)e->light, y1, n1), light_pick(s, (uint32_t)e->light));
}

/* ---- Media: medium vertices in both sub-paths (kernels with KERNEL_MEDIA only) ---------------
 * A vertex that free-flight sampling (medium_sample_segment) puts inside a medium, a "medium
 * vertex", scatters with the phase function as its BSDF: f = pdf = HG, the same value sampled in
 * either direction (hg.h), with no normal and no cosine. The report's recursions (34-38) are in
 * area measure, p(x_i) = pdf_w(x_{i-1}) |cos theta_i| / d^2. Through a medium (the path-space
 * measure with volume vertices: Pauly, Kollig and Keller 2000; Lafortune and Willems 1996 for
 * bidirectional transport in media) a vertex sampled by free flight has the volume pdf
 *   p(x_i) = pdf_w(x_{i-1}) sigma_t(x_i) T(d) / d^2,
 * and a surface vertex reached through a medium the area pdf pdf_w |cos theta_i| T(d) / d^2, where
 * T(d) is the probability to fly the whole segment. With c_i = |cos theta_i| at a surface and 1 in
 * a medium and s_i = sigma_t at a medium vertex and 1 at a surface, the distance-sampling pdf
 * replaces the cosine piece: cos theta_i (34-36) becomes c_i s_i T, and the reverse piece
 * cos theta_out of x_{i-1} (in 35-36, through vcm_mis_after_scatter's cos_out) becomes
 * c_{i-1} s_{i-1} T, because sampling backwards flies the same segment. On arrival
 * (vcm_mis_after_hit with cos_fix = c_i s_i, then vcm_mis_medium_arrive):
 *   dVCM_i = dVCM d^2 / (c_i s_i T)      dVC_i = dVC s_{i-1} / (c_i s_i)      dVM_i likewise
 * (T cancels from dVC and dVM: it is in the reverse pdf of x_{i-1} and the forward pdf of x_i).
 * A sub-path segment that passes interfaces (materials that only bound media) is one segment:
 * d is its whole length and T the product over its media. Connections (40-43), NEE (44-46) and
 * light tracing (46-47) evaluate the transmittance of their segment before their weight: the area
 * pdfs of the vertex each side would have sampled get s T of that vertex, and NEE's BSDF-sampling
 * pdf gets the T the sampled ray would have flown. A camera sub-path that escapes to the
 * environment divides dVCM by the escape segment's T and multiplies dVC by s_{k-1} (48).
 *
 * The exact distance pdfs of a chromatic medium depend on the hero channel's probabilities, which
 * follow the throughput (media/homogeneous.h) and so the direction a segment is sampled in. The
 * weights use proxies instead: s the mean of sigma_t over the channels, T the mean of the
 * transmittance. A weight only needs each strategy's pdf to be the same function of the path
 * whichever strategy computes it, so that the weights of a path sum to one (Veach 1997, 9.2.2):
 * these are, and for grey media they are the exact pdfs.
 *
 * Merging is point-to-point: photons are light medium vertices, and a camera medium vertex
 * gathers the medium photons within the radius with the volume kernel 1 / (4/3 pi r^3) (surface
 * queries gather surface photons only: a merged pair stands for one path vertex, so both are of
 * one kind). The photons' weights carry sigma_s of their last flight, so their sum estimates
 * sigma_s times the in-scattered radiance: the estimate divides by sigma_s (vcm_div_sigma_s).
 * Merging at x_i has the pdf p(x_i) eta_i with eta_i = pi r^2 N on a surface and
 * 4/3 pi r^3 N in a medium (N light paths). dVC's pending term carries each vertex's own eta_i
 * (vcm_eta_at, as do the eta terms of 40-47), and dVM counts strategies relative to a merge with the
 * surface's eta_ref = pi r^2 N: its pending term is eta_i / eta_ref (vm_medium = 4 r / 3 in a
 * medium), its dVCM term 1 / eta_ref (mis_vc), and a merge at x_k scales both sides of (37-39) by
 * eta_ref / eta_k (vcm_weight_merge's eta_scale). For VCM's default strategies a medium vertex
 * counts as Lambertian (not glossy): it merges between two glossy neighbours, e.g. the fog seen
 * through glass lit through glass (S M S), and --merge-everywhere merges at every medium vertex. */
/* T, the channels' mean of a transmittance (see above). Never 0 for a segment that was flown or
 * connected: a denormal floor keeps 1 / T finite where the mean underflows. */
KFN float vcm_tr_proxy(vec3 tr) { return kmax((tr.x + tr.y + tr.z) * (1.0f / 3.0f), 1e-30f); }
/* s of a medium: the channels' mean of sigma_t. */
KFN float vcm_medium_sigma(const medium *m) {
    vec3 st = vadd(m->sigma_a, m->sigma_s);
    return (st.x + st.y + st.z) * (1.0f / 3.0f);
}
/* The media pieces of an arrival (see above), after vcm_mis_after_hit(cos_fix = c_i s_i): tr, T of
 * the segment; s_prev, s of the vertex it started from (1: a surface, the camera or a light). */
KFN void vcm_mis_medium_arrive(vcm_mis_state *m, vcm_mis_state *pending, float tr, float s_prev) {
    m->dvcm *= 1.0f / vcm_mis(tr);
    float sp = vcm_mis(s_prev);
    m->dvc *= sp;
    m->dvm *= sp;
    pending->dvc *= sp;
    pending->dvm *= sp;
}

/* vcm_mis_after_scatter at a medium vertex: its "cosine" is 1 and its pending merge terms carry the
 * medium's eta_i: dVC's eta_i itself, dVM's eta_i / eta_ref. */
KFN void vcm_mis_after_scatter_medium(vcm_mis_state *m, vcm_mis_state *pending, const vcm_params *p, float pdf_dir,
                                      float pdf_rev) {
    vcm_mis_after_scatter(m, pending, p, 1.0f, pdf_dir, pdf_rev, 0);
    pending->dvc *= p->vm_medium;
    pending->dvm *= p->vm_medium;
}

/* Does a camera sub-path that reaches an emitter by itself at length len count? Seen directly:
 * always. Light tracing: never after that (particles cover the rest). Merging without
 * connections (PPM, BPM): only along purely specular paths; merging covers the rest, and its
 * weights sum to one without this strategy. */
KFN int vcm_counts_emission(const vcm_params *p, int len, int specular_path) {
    if (len == 1) return 1;
    if (p->light_trace_only) return 0;
    if (!p->use_vc) return specular_path;
    return 1;
}

/* ---- the local scattering function at a path vertex --------------------------------------- */
/* The material of a vertex is its scene material with the parameters that maps drive as
 * material_at set them at the vertex (material_textured, texture.h): an index and a few floats
 * rather than the whole material, so that stored vertices stay small (vcm_surface) and every
 * mapped parameter is the one evaluated at the vertex. */
typedef struct vcm_bsdf {
    int32_t material;      /* index into the scene's materials */
    material_textured tex; /* its mapped parameters at the vertex */
    vec3 albedo;
    frame fr;       /* shading frame, normal on the side of wo for two-sided materials */
    vec3 ng;        /* geometric normal, flipped with the frame */
    vec3 wo;        /* world direction towards the previous vertex of the sub-path */
    vec3 wo_l;      /* the same in the shading frame */
    float cont;     /* roulette continuation probability */
    uint32_t lobes; /* the material's lobe flags (material_flags) */
    int32_t delta;
    int32_t glossy; /* a non-Lambertian scatterer (specular or glossy): merging next to it is a strategy */
} vcm_bsdf;

/* A medium vertex's vcm_bsdf (see "Media" above): material -1 - its medium's index, wo as for a
 * surface, the phase function's frame around wo (wo_l.z = 1: the "cosine" of a medium vertex is
 * 1), no normal (ng 0: offset_origin leaves the point where it is), the single-scattering albedo
 * sigma_s / sigma_t as the roulette's albedo, neither delta nor glossy. */
KFN void vcm_bsdf_medium(const kscene *s, int32_t med, vec3 wo, vcm_bsdf *b) {
    const medium *m = &s->media[med];
    vec3 st = vadd(m->sigma_a, m->sigma_s);
    b->material = -1 - med;
    b->tex.alpha = 0.0f; /* unused: no material */
    b->tex.metallic = 0.0f;
    b->albedo = v3(st.x > 0.0f ? m->sigma_s.x / st.x : 0.0f, st.y > 0.0f ? m->sigma_s.y / st.y : 0.0f,
                   st.z > 0.0f ? m->sigma_s.z / st.z : 0.0f);
    b->ng = v3s(0.0f);
    b->wo = wo;
    b->cont = kclamp(vmaxc(b->albedo), 0.0f, 1.0f);
    b->fr = frame_from_normal(wo);
    b->wo_l = v3(0.0f, 0.0f, 1.0f);
    b->lobes = 0u;
    b->delta = 0;
    b->glossy = 0;
}
/* Is b a medium vertex? Never in a kernel without media (the test folds away). */
KFN int vcm_bsdf_in_medium(const vcm_bsdf *b) { return KERNEL_MEDIA && b->material < 0; }
/* s of b's vertex ("Media" above): sigma_t's mean in a medium, 1 on a surface. */
KFN float vcm_bsdf_sigma(const kscene *s, const vcm_bsdf *b) {
    return vcm_bsdf_in_medium(b) ? vcm_medium_sigma(&s->media[-1 - b->material]) : 1.0f;
}
/* eta of merging at b's vertex where merging there is a strategy, else 0: pi r^2 N on a surface,
 * 4/3 pi r^3 N in a medium. */
KFN float vcm_eta_at(const vcm_params *p, int merges, const vcm_bsdf *b) {
    float e = vcm_eta_if(p, merges);
    return vcm_bsdf_in_medium(b) ? e * p->vm_medium : e;
}
/* The phase function as a medium vertex's f (no cosine: cos_wi 1) and its pdfs both ways, which
 * are equal (HG depends on the angle between the propagation directions only). */
KFN vec3 vcm_phase_eval(const kscene *s, const vcm_bsdf *b, vec3 wi, float *cos_wi, float *pdf_dir, float *pdf_rev) {
    float ph = hg_eval(s->media[-1 - b->material].g, vneg(wi), b->wo);
    *cos_wi = 1.0f;
    *pdf_dir = *pdf_rev = ph * b->cont;
    return v3s(ph);
}

/* The material the BSDF of b evaluates (material_at's result at b's point). */
KFN material vcm_bsdf_material(const kscene *s, const vcm_bsdf *b) {
    return material_apply_textured(&s->materials[b->material], b->tex);
}
/* The parts of b that follow from its material m, its wo and its shading normal ns (already on
 * its side): setup and vcm_surface_load run the same operations on the same inputs, so a stored
 * vertex evaluates bit-identically to the one that was stored. */
KFN void vcm_bsdf_derive(const material *m, vec3 ns, vcm_bsdf *b) {
    b->fr = frame_from_normal(ns);
    b->wo_l = frame_to_local(b->fr, b->wo);
    b->lobes = material_flags(m); /* the kind's lobe flags (materials/<stem>.h) */
    b->delta = (b->lobes & BSDF_ALL_DELTA) != 0u;
    b->glossy = (b->lobes & BSDF_NON_LAMBERTIAN) != 0u;
}

/* Returns 0 where the sub-path must end (grazing arrival). */
KFN int vcm_bsdf_setup(const kscene *s, const surface *sf, vec3 wo, vcm_bsdf *b) {
    material mat = material_at(s, &s->materials[sf->material], sf->uv, sf->p);
    const material *m = &mat;
    b->material = sf->material;
    b->tex = material_textured_of(m);
    vec3 ns = sf->ns, ng = sf->ng;
    if (!(material_flags(m) & BSDF_INTERIOR) && vdot(wo, ng) < 0.0f) {
        ns = vneg(ns);
        ng = vneg(ng);
    }
    b->albedo = material_albedo(s, m, sf->uv, sf->p);
    b->ng = ng;
    b->wo = wo;
    b->cont = bsdf_continuation(m, b->albedo);
    vcm_bsdf_derive(m, ns, b);
    return fabsf(b->wo_l.z) > 1e-6f;
}

/* A vcm_bsdf as a light vertex or a merge query stores it: what vcm_surface_load rebuilds the
 * frame, the local wo and the lobe flags from, bit for bit. 64 bytes (a vcm_vertex of 108 and a
 * vcm_merge_query of 108, where copies of the material made them 236 and 192: the GPU writes and
 * reads every one of them in each iteration). */
typedef struct vcm_surface {
    vec3 albedo;
    vec3 n;  /* shading normal (the frame's n) */
    vec3 ng; /* geometric normal */
    vec3 wo;
    float cont;
    int32_t material;
    material_textured tex;
} vcm_surface;

KFN vcm_surface vcm_surface_store(const vcm_bsdf *b) {
    vcm_surface r;
    r.albedo = b->albedo;
    r.n = b->fr.n;
    r.ng = b->ng;
    r.wo = b->wo;
    r.cont = b->cont;
    r.material = b->material;
    r.tex = b->tex;
    return r;
}
/* The vcm_bsdf that vcm_surface_store stored. */
KFN vcm_bsdf vcm_surface_load(const kscene *s, const vcm_surface *r) {
    vcm_bsdf b;
    b.material = r->material;
    b.tex = r->tex;
    b.albedo = r->albedo;
    b.ng = r->ng;
    b.wo = r->wo;
    b.cont = r->cont;
    if (vcm_bsdf_in_medium(&b)) {
        vcm_bsdf_medium(s, -1 - b.material, r->wo, &b);
        return b;
    }
    material m = vcm_bsdf_material(s, &b);
    vcm_bsdf_derive(&m, r->n, &b);
    return b;
}

/* Shading-normal correction for importance transport (Veach 1997, 5.3): |wo.ns||wi.ng| / (|wo.ng||wi.ns|). */
KFN float vcm_adjoint_factor(const vcm_bsdf *b, vec3 wi, float wi_l_z) {
    float den = fabsf(vdot(b->wo, b->ng)) * fabsf(wi_l_z);
    return den > 0.0f ? fabsf(b->wo_l.z) * fabsf(vdot(wi, b->ng)) / den : 0.0f;
}

/* f(wo, wi) without the cosine, the cosine at wi, and the roulette-including pdfs of sampling wi
 * from wo (pdf_dir) and wo from wi (pdf_rev). mode: what the owning sub-path carries. */
KFN vec3 vcm_bsdf_eval(const kscene *s, const vcm_bsdf *b, vec3 wi, int mode, float *cos_wi, float *pdf_dir,
                       float *pdf_rev) {
    if (vcm_bsdf_in_medium(b)) return vcm_phase_eval(s, b, wi, cos_wi, pdf_dir, pdf_rev);
    material mat = vcm_bsdf_material(s, b);
    const material *m = &mat;
    vec3 wi_l = frame_to_local(b->fr, wi);
    *cos_wi = fabsf(wi_l.z);
    *pdf_dir = *pdf_rev = 0.0f;
    /* the non-delta lobes: reflection, or transmission where the material has it, agreeing with
     * the geometric sides (no light leaks) */
    if (b->delta || *cos_wi < 1e-6f || !bsdf_sides_agree_lobes(b->lobes, b->wo_l, wi_l, b->wo, wi, b->ng))
        return v3s(0.0f);
    vec3 fc = bsdf_eval_mode(m, b->albedo, b->wo_l, wi_l, mode);
    *pdf_dir = bsdf_pdf(m, b->wo_l, wi_l) * b->cont;
    *pdf_rev = bsdf_pdf(m, wi_l, b->wo_l) * b->cont;
    vec3 f = vscale(fc, 1.0f / *cos_wi);
    if (mode == TRANSPORT_IMPORTANCE) f = vscale(f, vcm_adjoint_factor(b, wi, wi_l.z));
    return f;
}

/* ---- light vertices, splats, hash grid ------------------------------------------------------ */
typedef struct vcm_vertex {
    vec3 p;
    vec3 throughput; /* light sub-path weight arriving here */
    vcm_mis_state mis;
    vcm_surface bsdf;     /* vcm_surface_load gives its vcm_bsdf */
    int32_t path_length;  /* segments from the light */
    int32_t after_glossy; /* the previous vertex (towards the light) is glossy */
} vcm_vertex;

/* Does merging with this light vertex count anywhere? (Its camera-side neighbour is the camera
 * sub-path's vertex before the merge, which the camera side checks.) */
KFN int vcm_vertex_merges(const vcm_params *p, const vcm_vertex *v) { return p->merge_all || v->after_glossy; }

/* Cell width in merge radii (>= 2). Wider cells mean fewer buckets per query (a bucket is a cache
 * miss) but more candidates to reject (cheap: contiguous). */
#ifndef VCM_CELL_RADII
#define VCM_CELL_RADII 4.0f
#endif

typedef struct vcm_splat {
    uint32_t pixel;
    vec3 value;
} vcm_splat;

/* What merging reads of a light vertex (besides its position), copied into bucket order so that
 * the vertices a query accepts lie together instead of anywhere in the light-vertex array. */
typedef struct vcm_photon {
    vec3 wo;    /* towards the previous vertex of the light sub-path */
    float cont; /* its roulette continuation probability */
    vec3 throughput;
    int32_t path_length; /* | VCM_PHOTON_MEDIUM for a medium vertex's photon */
    vcm_mis_state mis;
} vcm_photon;
/* A photon at a medium vertex: a flag in its path length (the record keeps its 44 bytes). */
#define VCM_PHOTON_MEDIUM (1 << 30)
KFN int32_t vcm_photon_length(const vcm_photon *ph) {
    return KERNEL_MEDIA ? ph->path_length & (VCM_PHOTON_MEDIUM - 1) : ph->path_length;
}
KFN int vcm_photon_in_medium(const vcm_photon *ph) { return (ph->path_length & VCM_PHOTON_MEDIUM) != 0; }

/* (Also compiled where the kernel has no media, e.g. the GPU's collect pass: the flag is set from
 * the record alone.) */
KFN vcm_photon vcm_photon_of(const vcm_vertex *v) {
    vcm_photon ph;
    ph.wo = v->bsdf.wo;
    ph.cont = v->bsdf.cont;
    ph.throughput = v->throughput;
    ph.path_length = v->bsdf.material < 0 ? v->path_length | VCM_PHOTON_MEDIUM : v->path_length;
    ph.mis = v->mis;
    return ph;
}

/* Light vertices hashed by cell (VCM_CELL_RADII radii wide: a query visits at most 2x2x2 cells); the backend
 * fills cell_start (ncells + 1 prefix sums), then positions and photons in bucket order. */
typedef struct vcm_grid {
    vec3 lo;
    float inv_cell;
    uint32_t ncells; /* a power of two */
    const uint32_t *cell_start;
    const vec3 *positions; /* compact, for the range test */
    const vcm_photon *photons;
} vcm_grid;

/* Cells are hashed in blocks of VCM_GRID_BLOCK^3 (a power of two): the block coordinates are
 * hashed to a block of VCM_GRID_BLOCK^3 consecutive buckets and the cell's place inside it is the
 * Morton order of its low coordinate bits, so neighbouring cells mostly land in the same or nearby
 * buckets (a query's 2x2x2 cells read nearby memory, and queries sorted by bucket walk the photon
 * array nearly in order). ncells is a power of two: the bucket is a mask, not a division. */
#define VCM_GRID_BLOCK_BITS 2
#define VCM_GRID_BLOCK      (1 << VCM_GRID_BLOCK_BITS)
KFN uint32_t vcm_morton3(uint32_t x, uint32_t y, uint32_t z) {
    uint32_t m = 0;
    for (int i = 0; i < VCM_GRID_BLOCK_BITS; ++i)
        m |= (((x >> i) & 1u) << (3 * i)) | (((y >> i) & 1u) << (3 * i + 1)) | (((z >> i) & 1u) << (3 * i + 2));
    return m;
}
KFN uint32_t vcm_grid_hash(int x, int y, int z, uint32_t ncells) {
    const uint32_t mask = (uint32_t)VCM_GRID_BLOCK - 1u;
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y, uz = (uint32_t)z;
    uint32_t bx = ux >> VCM_GRID_BLOCK_BITS, by = uy >> VCM_GRID_BLOCK_BITS, bz = uz >> VCM_GRID_BLOCK_BITS;
    uint32_t block = (bx * 73856093u) ^ (by * 19349663u) ^ (bz * 83492791u);
    uint32_t h = (block << (3 * VCM_GRID_BLOCK_BITS)) | vcm_morton3(ux & mask, uy & mask, uz & mask);
    return h & (ncells - 1u);
}
KFN uint32_t vcm_grid_cell_of(const vcm_grid *g, vec3 p) {
    vec3 c = vscale(vsub(p, g->lo), g->inv_cell);
    return vcm_grid_hash((int)floorf(c.x), (int)floorf(c.y), (int)floorf(c.z), g->ncells);
}

/* The grid of an iteration with n merging vertices (the backend then fills cell_start, positions
 * and photons): cells start at the scene's bounding box, and buckets are a power of two with a
 * load factor of at most 1/2 (few unrelated vertices per bucket). */
KFN vcm_grid vcm_grid_make(const kscene *s, float radius, uint64_t n) {
    vcm_grid g;
    g.lo = vsub(s->scene_center, v3s(s->scene_radius));
    g.inv_cell = 1.0f / (VCM_CELL_RADII * radius);
    g.ncells = 1;
    while ((uint64_t)g.ncells < 2 * n && g.ncells < (1u << 31)) g.ncells <<= 1;
    g.cell_start = NULL;
    g.positions = NULL;
    g.photons = NULL;
    return g;
}

/* The index ranges [begin, end) of the distinct buckets of the cells that the sphere of radius r
 * around p overlaps: p's cell and, on the nearer side along each axis, the neighbours within r
 * (cells are VCM_CELL_RADII * r wide, at least 2r, so at most 2x2x2 cells). All bucket bounds are
 * loaded before any range is walked, so their cache misses overlap instead of following one
 * another. */
KFN int vcm_grid_ranges(const vcm_grid *g, vec3 p, float radius2, uint32_t *begin, uint32_t *end) {
    vec3 c = vscale(vsub(p, g->lo), g->inv_cell);
    int cx = (int)floorf(c.x), cy = (int)floorf(c.y), cz = (int)floorf(c.z);
    float fx = c.x - (float)cx, fy = c.y - (float)cy, fz = c.z - (float)cz;
    int ox = fx < 0.5f ? -1 : 1, oy = fy < 0.5f ? -1 : 1, oz = fz < 0.5f ? -1 : 1;
    /* squared world distances to the nearer cell face along each axis */
    float cell = 1.0f / g->inv_cell;
    float dx = (fx < 0.5f ? fx : 1.0f - fx) * cell, dy = (fy < 0.5f ? fy : 1.0f - fy) * cell,
          dz = (fz < 0.5f ? fz : 1.0f - fz) * cell;
    float d2[3] = {dx * dx, dy * dy, dz * dz};
    uint32_t bucket[8];
    int n = 0;
    for (int k = 0; k < 8; ++k) {
        float dist2 = ((k & 1) ? d2[0] : 0.0f) + ((k & 2) ? d2[1] : 0.0f) + ((k & 4) ? d2[2] : 0.0f);
        if (dist2 > radius2 * 1.0001f) continue; /* slack: face distances are rounded */
        uint32_t h =
            vcm_grid_hash(cx + ((k & 1) ? ox : 0), cy + ((k & 2) ? oy : 0), cz + ((k & 4) ? oz : 0), g->ncells);
        /* distinct cells can share a bucket: walk each bucket once. Scalar loops with an early
         * exit, on purpose: vectorised, they reload bucket[] as one vector right after its scalar
         * stores, and the failed store forwarding cost a fifth of the merge pass. */
        int seen = 0;
        for (int j = 0; j < n; ++j)
            if (bucket[j] == h) {
                seen = 1;
                break;
            }
        if (seen) continue;
        bucket[n] = h;
        begin[n] = g->cell_start[h];
        end[n] = g->cell_start[h + 1];
        n++;
    }
    return n;
}

/* ---- deferred merging ------------------------------------------------------------------------ */
/* What merging at one camera vertex needs: the camera pass records these instead of walking the
 * grid inline, the backend sorts them by grid bucket (queries reading the same photons run
 * together) and evaluates them with vcm_merge_query_eval; results go to the pixel afterwards. */
typedef struct vcm_merge_query {
    vec3 p;            /* camera vertex position */
    vec3 throughput;   /* camera sub-path throughput (vm_norm applied at evaluation) */
    vcm_surface bsdf;  /* the vertex's (non-delta) vcm_bsdf */
    vcm_mis_state mis; /* camera sub-path MIS state at the vertex */
    uint32_t pixel;
    int32_t len; /* camera sub-path segments */
} vcm_merge_query;

KFN void vcm_merge_query_set(vcm_merge_query *q, vec3 p, vec3 throughput, const vcm_bsdf *b, const vcm_mis_state *mis,
                             uint32_t pixel, int len) {
    q->p = p;
    q->throughput = throughput;
    q->bsdf = vcm_surface_store(b);
    q->mis = *mis;
    q->pixel = pixel;
    q->len = len;
}

/* x / sigma_s of medium m per channel (0 where sigma_s is: no photon carries light there). */
KFN vec3 vcm_div_sigma_s(const medium *m, vec3 x) {
    vec3 ss = m->sigma_s;
    return v3(ss.x > 0.0f ? x.x / ss.x : 0.0f, ss.y > 0.0f ? x.y / ss.y : 0.0f, ss.z > 0.0f ? x.z / ss.z : 0.0f);
}

/* Contribution of merging query q with every light vertex within the radius. */
KFN vec3 vcm_merge_query_eval(const kscene *s, const vcm_grid *grid, const vcm_params *p, const vcm_merge_query *q) {
    vec3 acc = v3s(0.0f);
    uint32_t begin[8], end[8];
    int nranges = vcm_grid_ranges(grid, q->p, p->radius2, begin, end);
    vcm_bsdf bsdf = vcm_surface_load(s, &q->bsdf);
    const vcm_bsdf *b = &bsdf;
    /* a query in a medium gathers medium photons with the volume kernel, one on a surface surface
     * photons ("Media" above) */
    int in_medium = vcm_bsdf_in_medium(b);
    for (int k = 0; k < nranges; ++k) {
        for (uint32_t i = begin[k]; i < end[k]; ++i) {
            if (vlen2(vsub(grid->positions[i], q->p)) > p->radius2) continue;
            const vcm_photon *lv = &grid->photons[i];
            if (KERNEL_MEDIA && vcm_photon_in_medium(lv) != in_medium) continue;
            if (vcm_photon_length(lv) + q->len > p->max_path_length) continue;
            float cos_c, cam_dir, cam_rev;
            vec3 fc = vcm_bsdf_eval(s, b, lv->wo, TRANSPORT_RADIANCE, &cos_c, &cam_dir, &cam_rev);
            if (vis_black(fc)) continue;
            /* the reverse pdf continues the light sub-path: its vertex's roulette */
            cam_rev = cam_rev / b->cont * lv->cont;
            float w = vcm_weight_merge(p, &q->mis, &lv->mis, cam_dir, cam_rev, in_medium ? 1.0f / p->vm_medium : 1.0f);
            acc = vadd(acc, vscale(vmul(fc, lv->throughput), w));
        }
    }
    /* in a medium the photons' sum estimates sigma_s times the in-scattered radiance (their
     * weights carry sigma_s of their last free flight, as the camera's carries its own): divided
     * by the medium's sigma_s per channel (Jensen and Christensen 1998, volume radiance estimate) */
    if (in_medium) acc = vcm_div_sigma_s(&s->media[-1 - b->material], acc);
    /* the same operations as the inline merge had: PPM images stay bit-identical */
    vec3 add = vscale(vmul(q->throughput, acc), in_medium ? p->vm_norm_medium : p->vm_norm);
    return vis_finite(add) ? add : v3s(0.0f);
}

/* ---- camera projection ---------------------------------------------------------------------- */
/* Pixel that sees point p and the cosine at the camera; 0 if p is behind or outside the frame. */
KFN int vcm_camera_project(const camera *c, vec3 p, uint32_t *pixel, float *cos_cam) {
    vec3 v = vsub(p, c->pos);
    float z = vdot(v, c->forward);
    if (!(z > 0.0f)) return 0;
    float x = vdot(v, c->right) / z, y = vdot(v, c->up) / z;
    float fx = (x / (c->tan_half_fovy * c->aspect) + 1.0f) * 0.5f * (float)c->width;
    float fy = (1.0f - y / c->tan_half_fovy) * 0.5f * (float)c->height;
    if (!(fx >= 0.0f && fy >= 0.0f && fx < (float)c->width && fy < (float)c->height)) return 0;
    *pixel = (uint32_t)(int)fy * (uint32_t)c->width + (uint32_t)(int)fx;
    *cos_cam = z / vlen(v);
    return 1;
}
/* Solid-angle pdf of a primary ray at cosine cos_cam from the optical axis, per pixel. */
KFN float vcm_camera_pdf_w(const vcm_params *p, float cos_cam) {
    return 1.0f / (p->pixel_area * cos_cam * cos_cam * cos_cam);
}

/* The transmittance between vertices a and b (kernel/medium.h: 0 or 1 for surfaces; black where
 * the two coincide), starting in medium `medium` at a (MEDIUM_NONE without media). seed:
 * vcm_medium_seed. */
KFN vec3 vcm_transmittance(const kscene *s, vec3 a, vec3 na, vec3 b, vec3 nb, int32_t medium, uint32_t seed,
                           uint32_t *rays) {
    vec3 d = vsub(b, a);
    float dist = vlen(d);
    if (!(dist > 0.0f)) return v3s(0.0f);
    d = vscale(d, 1.0f / dist);
    vec3 o = offset_origin(a, na, d);
    vec3 e = offset_origin(b, nb, vneg(d));
    vec3 de = vsub(e, o);
    float len = vlen(de);
    if (!(len > 0.0f)) return v3s(0.0f);
    (*rays)++;
    return trace_transmittance(s, make_ray(o, vscale(de, 1.0f / len), len * (1.0f - 1e-4f)), medium, seed,
                               s->node_layout);
}
/* A connection's contribution c through a transmittance tr that is not black: without media (tr
 * 1) c itself, as when connections were yes or no. */
KFN vec3 vcm_transmitted(vec3 c, vec3 tr) { return KERNEL_MEDIA ? vmul(c, tr) : c; }
/* The seed of a connection's ratio tracking (trace_transmittance): read from the sub-path's
 * generator without drawing from it (its numbers stay those of a scene without media). */
KFN uint32_t vcm_medium_seed(const pcg32 *rng) { return (uint32_t)(rng->state >> 32) ^ (uint32_t)rng->state; }

/* ---- media along the sub-paths (KERNEL_MEDIA kernels; see "Media" above) --------------------- */
/* The medium on the side of b's vertex that direction d leaves into, where the vertex's wo side
 * is in `medium`: a refraction (d on the other side) crosses into the material's other medium as
 * integrator_pt.h's shading does (medium_after_crossing; sf: the vertex's surface, its ng facing
 * the outside); a medium vertex stays in its medium. */
KFN int32_t vcm_medium_towards(const kscene *s, const surface *sf, const vcm_bsdf *b, vec3 d, int32_t medium) {
    if (!KERNEL_MEDIA || vcm_bsdf_in_medium(b)) return medium;
    if (vdot(d, b->ng) * vdot(b->wo, b->ng) >= 0.0f) return medium;
    return medium_after_crossing(&s->materials[b->material], sf->ng, d, medium);
}

/* The medium a light sub-path starts in, found by walking from its first ray's origin along the
 * ray: the first surface that binds media (an interface, or a material with INTERIOR/EXTERIOR)
 * says which of its sides the light is on; surfaces that bind none are passed. A ray that meets
 * none starts where a walk from the camera to its origin ends: in the camera's medium, changed at
 * every surface on the way that binds media. So a medium around everything (global fog) holds the
 * light, and an environment's light paths (their origins outside the scene), or a light whose ray
 * misses a bounded medium that holds the camera, start outside it; taking the camera's medium for
 * them put the whole ray inside the fog, light scattered where there is no medium (an albedo-1
 * fog sphere around the camera under a white sky: 1.22 with BDPT, 1.83 with light tracing, where
 * 1 is right). (pbrt-v4 asks every light for its medium instead; this reads the same scenes
 * without a key.) */
KFN int32_t vcm_light_medium(const kscene *s, const vcm_params *p, ray r, uint32_t *rays) {
    for (int crossings = 0; crossings < MEDIUM_MAX_CROSSINGS; ++crossings) {
        hit h;
        (*rays)++;
        if (!trace_closest(s, r, &h)) break;
        surface sf = surface_at(s, r, &h);
        const material *m = &s->materials[sf.material];
        if (m->medium_inside != m->medium_outside)
            return medium_of_ref(vdot(r.d, sf.ng) < 0.0f ? m->medium_outside : m->medium_inside);
        r = make_ray(offset_origin(sf.p, sf.ng, r.d), r.d, K_INF);
    }
    int32_t m = medium_of_ref(p->cam.medium);
    vec3 d = vsub(r.o, p->cam.pos);
    float dist = vlen(d);
    if (!(dist > 0.0f)) return m;
    d = vscale(d, 1.0f / dist);
    ray c = make_ray(p->cam.pos, d, dist);
    for (int crossings = 0; crossings < MEDIUM_MAX_CROSSINGS; ++crossings) {
        hit h;
        (*rays)++;
        if (!trace_closest(s, c, &h)) break;
        surface sf = surface_at(s, c, &h);
        m = medium_after_crossing(&s->materials[sf.material], sf.ng, d, m);
        vec3 o = offset_origin(sf.p, sf.ng, d);
        float left = dist - vdot(vsub(o, p->cam.pos), d);
        if (!(left > 0.0f)) break;
        c = make_ray(o, d, left);
    }
    return m;
}

/* What one sub-path segment found: free flight through the media along it, across interfaces. */
enum vcm_walk_event { VCM_WALK_END = 0, VCM_WALK_MISS, VCM_WALK_SURFACE, VCM_WALK_MEDIUM };
typedef struct vcm_walk {
    int32_t event; /* vcm_walk_event: END the path ends (absorbed, or too many interfaces) */
    float dist;    /* from the segment's start to the vertex it found */
    float tr;      /* T of the segment (vcm_tr_proxy) */
    vec3 x;        /* the medium vertex (VCM_WALK_MEDIUM) */
} vcm_walk;

/* The segment along *r, whose closest hit (got) is *h, starting in medium *cur: in each medium a free
 * flight is sampled (medium_sample_segment, the throughput weighted as path tracing weights it);
 * an interface is crossed (the medium changes, the ray goes on: *r, *h are then the last piece's)
 * until a surface, a medium vertex, an escape or an absorption. */
KFN vcm_walk vcm_walk_segment(const kscene *s, ray *r, hit *h, int got, int32_t *cur, vec3 *throughput, pcg32 *rng,
                              uint32_t *rays) {
    vcm_walk w;
    w.event = VCM_WALK_END;
    w.dist = 0.0f;
    w.x = r->o;
    vec3 tr = v3s(1.0f);
    for (int crossings = 0; crossings < MEDIUM_MAX_CROSSINGS; ++crossings) {
        if (*cur != MEDIUM_NONE) {
            const medium *m = &s->media[*cur];
            float u_channel = pcg32_float(rng);
            float u_dist = pcg32_float(rng);
            float tmax = got ? h->t : K_INF;
            medium_segment seg = medium_sample_segment(s, m, *r, tmax, *throughput, u_channel, u_dist, rng);
            *throughput = vmul(*throughput, seg.weight);
            if (vis_black(*throughput) || !vis_finite(*throughput)) return w;
            tr = vmul(tr, medium_transmittance(s, m, *r, seg.scattered ? seg.t : tmax, rng));
            if (seg.scattered) {
                w.event = VCM_WALK_MEDIUM;
                w.dist += seg.t;
                w.tr = vcm_tr_proxy(tr);
                w.x = vmadd(r->o, r->d, seg.t);
                return w;
            }
        }
        w.tr = vcm_tr_proxy(tr);
        if (!got) {
            w.event = VCM_WALK_MISS;
            return w;
        }
        w.dist += h->t;
        if (hit_material_kind(s, h->prim) != MAT_INTERFACE) {
            w.event = VCM_WALK_SURFACE;
            return w;
        }
        surface sf = surface_at(s, *r, h);
        *cur = medium_after_crossing(&s->materials[sf.material], sf.ng, r->d, *cur);
        vec3 o = offset_origin(sf.p, sf.ng, r->d);
        w.dist += vdot(vsub(o, sf.p), r->d);
        *r = make_ray(o, r->d, K_INF);
        (*rays)++;
        got = trace_closest(s, *r, h);
    }
    w.event = VCM_WALK_END;
    return w;
}

/* The scattering of a medium vertex: a direction from the phase function (its weight is 1), the
 * roulette, and the MIS update with the medium's "cosine" 1 and merging's eta_i / eta_ref in the
 * pending terms ("Media" above). */
KFN int vcm_scatter_medium(const kscene *s, const vcm_params *p, const vcm_bsdf *b, vec3 x, pcg32 *rng,
                           vec3 *throughput, vcm_mis_state *mis, vcm_mis_state *pending, ray *r) {
    vec2 u = vcm_rand2(rng);
    float u_rr = pcg32_float(rng);
    float g = s->media[-1 - b->material].g;
    vec3 wi = hg_sample(g, vneg(b->wo), u);
    float ph = hg_pdf(g, vneg(b->wo), wi);
    if (!(ph > 0.0f) || u_rr >= b->cont) return 0;
    *throughput = vscale(*throughput, 1.0f / b->cont);
    if (vis_black(*throughput) || !vis_finite(*throughput)) return 0;
    float pdf = ph * b->cont;
    vcm_mis_after_scatter_medium(mis, pending, p, pdf, pdf);
    *r = make_ray(x, wi, K_INF);
    return 1;
}

/* Sample the next direction of a sub-path; updates throughput, MIS state (pending: see
 * vcm_mis_after_scatter) and the ray. */
KFN int vcm_scatter(const kscene *s, const vcm_params *p, const vcm_bsdf *b, vec3 hit_p, pcg32 *rng, int mode,
                    vec3 *throughput, vcm_mis_state *mis, vcm_mis_state *pending, ray *r) {
    if (vcm_bsdf_in_medium(b)) return vcm_scatter_medium(s, p, b, hit_p, rng, throughput, mis, pending, r);
    material mat = vcm_bsdf_material(s, b);
    const material *m = &mat;
    float u_lobe = pcg32_float(rng);
    vec2 u = vcm_rand2(rng);
    float u_rr = pcg32_float(rng);
    bsdf_sample bs;
    if (!bsdf_sample_dir_mode(m, b->albedo, b->wo_l, u_lobe, u, mode, &bs)) return 0;
    vec3 wi = frame_to_world(b->fr, bs.wi);
    int reflect = bs.wi.z * b->wo_l.z > 0.0f;
    int geo_reflect = vdot(wi, b->ng) * vdot(b->wo, b->ng) > 0.0f;
    if (reflect != geo_reflect) return 0;
    if (u_rr >= b->cont) return 0;
    float cos_out = fabsf(bs.wi.z);
    float pdf_dir = bs.pdf * b->cont, pdf_rev = bs.delta ? pdf_dir : bsdf_pdf(m, bs.wi, b->wo_l) * b->cont;
    vec3 w = vscale(bs.weight, 1.0f / b->cont);
    if (mode == TRANSPORT_IMPORTANCE && !bs.delta) w = vscale(w, vcm_adjoint_factor(b, wi, bs.wi.z));
    *throughput = vmul(*throughput, w);
    if (vis_black(*throughput) || !vis_finite(*throughput)) return 0;
    vcm_mis_after_scatter(mis, pending, p, cos_out, pdf_dir, pdf_rev, bs.delta);
    *r = make_ray(offset_origin(hit_p, b->ng, wi), wi, K_INF);
    return 1;
}

/* ---- light sub-path --------------------------------------------------------------------------- */
/* Traces one light sub-path: stores its non-specular vertices (at most max_path_length) and,
 * where connections are on, its connections to the camera as splats (at most as many). */
KFN void vcm_trace_light_path(const kscene *s, const vcm_params *p, pcg32 *rng, vcm_vertex *verts, int *nverts,
                              vcm_splat *splats, int *nsplats, uint32_t *rays) {
    *nverts = 0;
    *nsplats = 0;
    light_emission e;
    float u_sel = pcg32_float(rng);
    vec2 u_pos = vcm_rand2(rng);
    vec2 u_dir = vcm_rand2(rng);
    if (!light_emit(s, u_sel, u_pos, u_dir, &e)) return;
    vec3 throughput = e.weight;
    vcm_mis_state mis = vcm_mis_light_start(p, &e), pending = {0.0f, 0.0f, 0.0f};
    int prev_glossy = 0;   /* the previous vertex is glossy (the light is not) */
    int pending_after = 0; /* ... and the one before it: pending's merge needs both */
    ray r = make_ray(e.p, e.d, K_INF);
    if (e.finite && !e.delta)
        r.o = vmadd(e.p, e.d, K_RAY_EPS * (1.0f + vmaxc(v3(fabsf(e.p.x), fabsf(e.p.y), fabsf(e.p.z)))));
    int finite = e.finite;
    /* media: the medium the ray travels in, and s of the vertex it left (the light: 1) */
    int32_t medium = KERNEL_MEDIA ? vcm_light_medium(s, p, r, rays) : MEDIUM_NONE;
    float s_prev = 1.0f;
    for (int len = 1;; ++len) {
        hit h;
        (*rays)++;
        int got = trace_closest(s, r, &h);
        float dist = h.t;
        int in_medium = 0; /* the segment ends at a medium vertex */
        vcm_walk wk;
        wk.event = VCM_WALK_SURFACE;
        wk.dist = h.t;
        wk.tr = 1.0f;
        wk.x = r.o;
        if (KERNEL_MEDIA) {
            wk = vcm_walk_segment(s, &r, &h, got, &medium, &throughput, rng, rays);
            if (wk.event == VCM_WALK_END) return;
            got = wk.event != VCM_WALK_MISS;
            in_medium = wk.event == VCM_WALK_MEDIUM;
            dist = wk.dist;
        }
        if (!got) return;
        surface sf;
        vcm_bsdf b;
        if (in_medium) {
            sf.p = wk.x;
            sf.ns = sf.ng = v3s(0.0f);
            vcm_bsdf_medium(s, medium, vneg(r.d), &b);
        } else {
            sf = surface_at(s, r, &h);
            if (!vcm_bsdf_setup(s, &sf, vneg(r.d), &b)) return;
        }
        float s_here = vcm_bsdf_sigma(s, &b);
        vcm_mis_after_hit(&mis, &pending, dist * dist, b.wo_l.z * s_here, len > 1 || finite);
        if (KERNEL_MEDIA) vcm_mis_medium_arrive(&mis, &pending, wk.tr, s_prev);
        if (len == 1 && finite && s->nlight_nodes > 0) mis.dvcm *= vcm_light_tree_fix(s, &e, sf.p, sf.ns);
        vcm_mis_confirm(&mis, &pending, vcm_merges_between(p, pending_after, b.glossy));
        if (!b.delta) {
            if ((p->use_vc && !p->light_trace_only) || p->use_vm) {
                vcm_vertex *v = &verts[(*nverts)++];
                v->p = sf.p;
                v->throughput = throughput;
                v->bsdf = vcm_surface_store(&b);
                v->mis = mis;
                v->path_length = len;
                v->after_glossy = prev_glossy;
            }
            /* connect to the camera (light tracing strategy) */
            if (p->use_vc && len + 1 <= p->max_path_length) {
                uint32_t pixel;
                float cos_cam;
                if (vcm_camera_project(&p->cam, sf.p, &pixel, &cos_cam)) {
                    vec3 to_cam = vsub(p->cam.pos, sf.p);
                    float dist2 = vlen2(to_cam);
                    vec3 dir = vscale(to_cam, 1.0f / sqrtf(dist2));
                    float cos_s, pdf_dir, pdf_rev;
                    vec3 f = vcm_bsdf_eval(s, &b, dir, TRANSPORT_IMPORTANCE, &cos_s, &pdf_dir, &pdf_rev);
                    vec3 tr = v3s(1.0f);
                    float t_mis = 1.0f; /* s T of the light vertex over the connection (media) */
                    if (KERNEL_MEDIA && !vis_black(f)) {
                        /* from the camera, whose medium is known, to the vertex */
                        tr = vcm_transmittance(s, p->cam.pos, vneg(dir), sf.p, b.ng, medium_of_ref(p->cam.medium),
                                               vcm_medium_seed(rng), rays);
                        t_mis = vcm_tr_proxy(tr) * s_here;
                    }
                    if (!vis_black(f) && !vis_black(tr)) {
                        float cam_pdf_w = vcm_camera_pdf_w(p, cos_cam);
                        float cam_pdf_a = cam_pdf_w * cos_s / dist2;
                        float w =
                            vcm_weight_to_camera(p, &mis, vcm_eta_at(p, vcm_merges_between(p, prev_glossy, 0), &b),
                                                 cam_pdf_a * t_mis, pdf_rev);
                        vec3 c = vscale(vmul(throughput, f), w * cam_pdf_a / p->light_paths);
                        if (vis_finite(c) && !vis_black(c)) {
                            if (!KERNEL_MEDIA)
                                tr = vcm_transmittance(s, sf.p, b.ng, p->cam.pos, dir, MEDIUM_NONE,
                                                       vcm_medium_seed(rng), rays);
                            if (!vis_black(tr)) {
                                splats[*nsplats].pixel = pixel;
                                splats[*nsplats].value = vcm_transmitted(c, tr);
                                (*nsplats)++;
                            }
                        }
                    }
                }
            }
        }
        if (len + 2 > p->max_path_length) return;
        if (!vcm_scatter(s, p, &b, sf.p, rng, TRANSPORT_IMPORTANCE, &throughput, &mis, &pending, &r)) return;
        medium = vcm_medium_towards(s, &sf, &b, r.d, medium);
        s_prev = s_here;
        pending_after = prev_glossy;
        prev_glossy = b.glossy;
    }
}

/* ---- camera sub-path ------------------------------------------------------------------------ */
/* Traces the camera sub-path of pixel (px, py) and returns its radiance estimate without merging.
 * own/nown: the vertices of the light sub-path with this pixel's index; grid: every light vertex
 * (only whether it has cells is read here). Where merging applies, a merge query is appended to
 * queries (capacity cap, count *nqueries; the caller leaves room for max_path_length of them). */
KFN vec3 vcm_trace_camera_path(const kscene *s, const vcm_params *p, pcg32 *rng, int px, int py, const vcm_vertex *own,
                               int nown, const vcm_grid *grid, vcm_merge_query *queries, uint32_t *nqueries,
                               uint32_t cap, uint32_t *rays) {
    vec3 color = v3s(0.0f);
    vec2 u_pix = vcm_rand2(rng);
    ray r = camera_ray(&p->cam, px, py, u_pix, v2(0.5f, 0.5f));
    float cos_cam = vdot(p->cam.forward, r.d);
    vcm_mis_state mis = vcm_mis_camera_start(p, vcm_camera_pdf_w(p, cos_cam)), pending = {0.0f, 0.0f, 0.0f};
    vec3 throughput = v3s(1.0f);
    int prev_glossy = 0;                   /* the previous vertex is glossy (the camera is not) */
    int pending_after = 0;                 /* ... and the one before it: pending's merge needs both */
    int specular_path = 1;                 /* every bounce so far was specular */
    vec3 prev_p = r.o, prev_n = v3s(0.0f); /* the previous vertex and its shading normal (emitter_pdfs) */
    /* media: the medium the ray travels in, and s of the vertex it left (the camera: 1) */
    int32_t medium = KERNEL_MEDIA ? medium_of_ref(p->cam.medium) : MEDIUM_NONE;
    float s_prev = 1.0f;
    for (int len = 1;; ++len) {
        hit h;
        (*rays)++;
        int got = trace_closest(s, r, &h);
        float dist = h.t;
        int in_medium = 0; /* the segment ends at a medium vertex */
        vcm_walk wk;
        wk.event = VCM_WALK_SURFACE;
        wk.dist = h.t;
        wk.tr = 1.0f;
        wk.x = r.o;
        if (KERNEL_MEDIA) {
            wk = vcm_walk_segment(s, &r, &h, got, &medium, &throughput, rng, rays);
            if (wk.event == VCM_WALK_END) break;
            got = wk.event != VCM_WALK_MISS;
            in_medium = wk.event == VCM_WALK_MEDIUM;
            dist = wk.dist;
            /* an escape's weight (48) reads dVCM and dVC with the escape segment's pieces */
            if (!got) vcm_mis_medium_arrive(&mis, &pending, wk.tr, s_prev);
        }
        if (!got) {
            if (!vis_black(s->env_radiance) && vcm_counts_emission(p, len, specular_path)) {
                vec3 le = env_eval(s, r.d);
                float w = 1.0f;
                if (len > 1 && p->use_vc) {
                    float pd, pe;
                    env_pdfs(s, r.d, &pd, &pe);
                    w = vcm_weight_emission(p, &mis, &pending, pending_after, pd, pe);
                }
                color = vadd(color, vscale(vmul(throughput, le), w));
            }
            break;
        }
        surface sf;
        vcm_bsdf b;
        int ok = 1;
        if (in_medium) {
            sf.p = wk.x;
            sf.ns = sf.ng = v3s(0.0f);
            vcm_bsdf_medium(s, medium, vneg(r.d), &b);
        } else {
            sf = surface_at(s, r, &h);
            ok = vcm_bsdf_setup(s, &sf, vneg(r.d), &b);
        }
        float s_here = vcm_bsdf_sigma(s, &b);
        vcm_mis_after_hit(&mis, &pending, dist * dist, ok ? b.wo_l.z * s_here : 1.0f, 1);
        if (KERNEL_MEDIA) vcm_mis_medium_arrive(&mis, &pending, wk.tr, s_prev);
        /* an emitter reached by the camera sub-path itself */
        vec3 le = in_medium ? v3s(0.0f) : emitted_radiance(s, &sf, vneg(r.d));
        if (!vis_black(le) && vcm_counts_emission(p, len, specular_path)) {
            float w = 1.0f, pd, pe;
            if (len > 1 && p->use_vc && emitter_pdfs(s, h.prim, sf.p, sf.ng, r.d, prev_p, prev_n, &pd, &pe))
                w = vcm_weight_emission(p, &mis, &pending, pending_after, pd, pe);
            color = vadd(color, vscale(vmul(throughput, le), w));
        }
        if (!ok || p->light_trace_only || len >= p->max_path_length) break;
        vcm_mis_confirm(&mis, &pending, vcm_merges_between(p, pending_after, b.glossy));

        if (!b.delta && p->use_vc) {
            /* connect to a light (NEE) */
            light_sample ls;
            float u_sel = pcg32_float(rng);
            vec2 u_l = vcm_rand2(rng);
            if ((s->nlights > 0 || s->env_pmf > 0.0f) && sample_light(s, sf.p, sf.ns, u_sel, u_l, &ls)) {
                float cos_l, pdf_dir, pdf_rev;
                vec3 f = vcm_bsdf_eval(s, &b, ls.wi, TRANSPORT_RADIANCE, &cos_l, &pdf_dir, &pdf_rev);
                vec3 tr = v3s(1.0f);
                float t_seg = 1.0f; /* T of the shadow segment (media) */
                if (KERNEL_MEDIA && !vis_black(f)) {
                    (*rays)++;
                    tr = trace_transmittance(s, shadow_ray_to(&ls, sf.p, b.ng),
                                             vcm_medium_towards(s, &sf, &b, ls.wi, medium), vcm_medium_seed(rng),
                                             s->node_layout);
                    t_seg = vcm_tr_proxy(tr);
                }
                if (!vis_black(f) && !vis_black(tr)) {
                    float w = vcm_weight_nee(p, &mis, vcm_eta_at(p, vcm_merges_between(p, prev_glossy, 0), &b), &ls,
                                             cos_l * s_here * t_seg, pdf_dir * t_seg, pdf_rev);
                    vec3 c = vscale(vmul(vmul(throughput, f), ls.le), w * cos_l / ls.pdf);
                    if (vis_finite(c) && !vis_black(c)) {
                        if (!KERNEL_MEDIA) {
                            (*rays)++;
                            tr = trace_transmittance(s, shadow_ray_to(&ls, sf.p, b.ng), MEDIUM_NONE,
                                                     vcm_medium_seed(rng), s->node_layout);
                        }
                        if (!vis_black(tr)) color = vadd(color, vcm_transmitted(c, tr));
                    }
                }
            }
            /* connect to the vertices of this pixel's light sub-path (stored by path length) */
            for (int i = 0; i < nown; ++i) {
                const vcm_vertex *lv = &own[i];
                if (lv->path_length + 1 + len > p->max_path_length) break;
                vec3 d = vsub(lv->p, sf.p);
                float dist2 = vlen2(d);
                if (!(dist2 > 0.0f)) continue;
                float dist = sqrtf(dist2);
                d = vscale(d, 1.0f / dist);
                float cos_c, cam_dir, cam_rev, cos_lv, l_dir, l_rev;
                vec3 fc = vcm_bsdf_eval(s, &b, d, TRANSPORT_RADIANCE, &cos_c, &cam_dir, &cam_rev);
                if (vis_black(fc)) continue;
                vcm_bsdf lb = vcm_surface_load(s, &lv->bsdf);
                vec3 fl = vcm_bsdf_eval(s, &lb, vneg(d), TRANSPORT_IMPORTANCE, &cos_lv, &l_dir, &l_rev);
                if (vis_black(fl)) continue;
                vec3 tr = v3s(1.0f);
                float t_seg = 1.0f; /* T of the connection (media) */
                if (KERNEL_MEDIA) {
                    tr = vcm_transmittance(s, sf.p, b.ng, lv->p, lb.ng, vcm_medium_towards(s, &sf, &b, d, medium),
                                           vcm_medium_seed(rng), rays);
                    if (vis_black(tr)) continue;
                    t_seg = vcm_tr_proxy(tr);
                }
                float g = cos_c * cos_lv / dist2;
                float w =
                    vcm_weight_connect(p, &mis, vcm_eta_at(p, vcm_merges_between(p, prev_glossy, lb.glossy), &b),
                                       &lv->mis, vcm_eta_at(p, vcm_merges_between(p, lv->after_glossy, b.glossy), &lb),
                                       cam_dir * cos_lv / dist2 * (vcm_bsdf_sigma(s, &lb) * t_seg), cam_rev,
                                       l_dir * cos_c / dist2 * (s_here * t_seg), l_rev);
                vec3 c = vscale(vmul(vmul(throughput, lv->throughput), vmul(fc, fl)), g * w);
                if (vis_finite(c) && !vis_black(c)) {
                    if (!KERNEL_MEDIA)
                        tr = vcm_transmittance(s, sf.p, b.ng, lv->p, lb.ng, MEDIUM_NONE, vcm_medium_seed(rng), rays);
                    if (!vis_black(tr)) color = vadd(color, vcm_transmitted(c, tr));
                }
            }
        }
        if (!b.delta && p->use_vm && grid->ncells > 0 && vcm_merges_between(p, prev_glossy, 1)) {
            /* merge with light vertices within the radius (the grid holds those whose previous
             * vertex allows it): deferred to a merge query */
            if (*nqueries < cap) {
                vcm_merge_query_set(&queries[(*nqueries)++], sf.p, throughput, &b, &mis,
                                    (uint32_t)py * (uint32_t)p->cam.width + (uint32_t)px, len);
            }
            if (p->ppm) break;
        }
        specular_path &= b.delta;
        if (!vcm_scatter(s, p, &b, sf.p, rng, TRANSPORT_RADIANCE, &throughput, &mis, &pending, &r)) break;
        medium = vcm_medium_towards(s, &sf, &b, r.d, medium);
        s_prev = s_here;
        prev_p = sf.p;
        prev_n = sf.ns;
        pending_after = prev_glossy;
        prev_glossy = b.glossy;
    }
    return color;
}

#endif
