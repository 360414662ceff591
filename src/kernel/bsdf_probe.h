/* One BSDF query answered the same way on every target: the conformance test
 * (tests/test_bsdf_conformance.c) runs a batch on the CPU and, through cuda_bsdf_probe
 * (src/cuda/bsdf_probe.cu), on the GPU, and compares. */
#ifndef CAUSTIC_KERNEL_BSDF_PROBE_H
#define CAUSTIC_KERNEL_BSDF_PROBE_H

#include "bsdf.h"

typedef struct bsdf_probe_in {
    material m;
    vec3 albedo, wo, wi; /* local directions */
    vec2 u2;
    float u1;
    int32_t mode; /* TRANSPORT_* */
} bsdf_probe_in;
typedef struct bsdf_probe_out {
    vec3 eval;       /* bsdf_eval_mode(wo, wi) */
    float pdf;       /* bsdf_pdf(wo, wi) */
    uint32_t flags;  /* material_flags */
    float albedo;    /* bsdf_continuation */
    int32_t sampled; /* bsdf_sample_dir_mode's result, then its record */
    bsdf_sample s;
} bsdf_probe_out;

KFN void bsdf_probe_one(const bsdf_probe_in *in, bsdf_probe_out *out) {
    const material *m = &in->m;
    out->eval = bsdf_eval_mode(m, in->albedo, in->wo, in->wi, in->mode);
    out->pdf = bsdf_pdf(m, in->wo, in->wi);
    out->flags = material_flags(m);
    out->albedo = bsdf_continuation(m, in->albedo);
    out->s.wi = v3s(0.0f);
    out->s.weight = v3s(0.0f);
    out->s.pdf = 0.0f;
    out->s.delta = 0;
    out->sampled = bsdf_sample_dir_mode(m, in->albedo, in->wo, in->u1, in->u2, in->mode, &out->s);
}

#endif
