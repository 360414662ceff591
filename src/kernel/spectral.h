/* Dispersion: a dielectric whose index of refraction depends on the wavelength (Cauchy's
 * n(lambda) = A + B / lambda^2), in an RGB renderer. A path that meets its first dispersive
 * surface picks one wavelength (importance-sampled over the visible range with pbrt-v4's
 * SampleVisibleWavelengths pdf) and multiplies its throughput by the wavelength's RGB weight,
 * rgb(lambda) / pdf(lambda): the CIE 1931 colour matching functions (Wyman, Sloan and Shirley's
 * multi-lobe fit, 2013) taken to linear sRGB, negative components clamped to 0, each channel
 * normalised so that its integral over the range is 1. So E[weight] = (1, 1, 1): white light
 * through a path that does not disperse stays white on average (tests/test_bsdf_conformance.c
 * checks it), and a path that does splits it into a continuous rainbow. Every later dispersive
 * event uses the same wavelength (the path state's `lambda`, 0 until one is picked). The
 * lights' RGB radiance is multiplied by the weight channel by channel (exact for white light,
 * an RGB approximation of the light's spectrum otherwise).
 *
 * Only the kernels that carry the wavelength (KERNEL_SPECTRAL 1: the media kernels, feature
 * KF_DISPERSION, kernel/features.h) run this; every other kernel is the code it was. The
 * bidirectional integrators refuse dispersive scenes (kernel/bidir_limits.h). */
#ifndef CAUSTIC_KERNEL_SPECTRAL_H
#define CAUSTIC_KERNEL_SPECTRAL_H

#include "features.h"
#include "path_state.h"

#define SPECTRAL_LAMBDA_MIN  360.0f /* nm: the range SampleVisibleWavelengths covers */
#define SPECTRAL_LAMBDA_MAX  830.0f
/* Fraunhofer lines of the Abbe number V_d = (n_d - 1) / (n_F - n_C), in micrometres */
#define SPECTRAL_LAMBDA_D_UM 0.5875618f
#define SPECTRAL_LAMBDA_F_UM 0.4861327f
#define SPECTRAL_LAMBDA_C_UM 0.6562725f
/* the integrals over [360, 830] nm of the clamped linear-sRGB matching functions below
 * (tests/test_bsdf_conformance.c recomputes them) */
#define SPECTRAL_NORM_R      176.1773f
#define SPECTRAL_NORM_G      115.3913f
#define SPECTRAL_NORM_B      109.3705f

KSTATIC_ASSERT(KHAS(KF_DISPERSION) == (KERNEL_SPECTRAL != 0),
               "a kernel with KF_DISPERSION in KERNEL_FEATURES defines KERNEL_SPECTRAL 1 first (kernel/path_state.h), "
               "and only such a kernel");

/* Cauchy's B (um^2) from an IOR at the d line and an Abbe number V_d (> 0). */
KFN float cauchy_b_from_abbe(float ior_d, float abbe) {
    float f = 1.0f / (SPECTRAL_LAMBDA_F_UM * SPECTRAL_LAMBDA_F_UM),
          c = 1.0f / (SPECTRAL_LAMBDA_C_UM * SPECTRAL_LAMBDA_C_UM);
    return (ior_d - 1.0f) / (abbe * (f - c));
}
/* The IOR at wavelength lambda (nm) of a Cauchy glass with IOR ior_d at the d line and
 * coefficient b (um^2): n = A + b / lambda^2 with A = ior_d - b / lambda_d^2. */
KFN float cauchy_ior(float ior_d, float b, float lambda_nm) {
    float l = lambda_nm * 1e-3f;
    return ior_d + b * (1.0f / (l * l) - 1.0f / (SPECTRAL_LAMBDA_D_UM * SPECTRAL_LAMBDA_D_UM));
}

/* pbrt-v4's visible-wavelength pdf on [360, 830] nm and its inverse cdf. */
KFN float spectral_pdf(float lambda) {
    if (lambda < SPECTRAL_LAMBDA_MIN || lambda > SPECTRAL_LAMBDA_MAX) return 0.0f;
    float c = coshf(0.0072f * (lambda - 538.0f));
    return 0.0039398042f / (c * c);
}
KFN float spectral_sample(float u) {
    float l = 538.0f - 138.888889f * atanhf(0.85691062f - 1.82750197f * u);
    return kclamp(l, SPECTRAL_LAMBDA_MIN, SPECTRAL_LAMBDA_MAX);
}

/* One lobe of the fit: a Gaussian with different widths on its two sides. */
KFN float spectral_lobe(float l, float mu, float s1, float s2) {
    float t = (l - mu) / (l < mu ? s1 : s2);
    return expf(-0.5f * t * t);
}
/* CIE 1931 2-degree x, y, z (Wyman, Sloan and Shirley 2013, the multi-lobe fit). */
KFN vec3 spectral_xyz(float l) {
    vec3 r;
    r.x = 1.056f * spectral_lobe(l, 599.8f, 37.9f, 31.0f) + 0.362f * spectral_lobe(l, 442.0f, 16.0f, 26.7f) -
          0.065f * spectral_lobe(l, 501.1f, 20.4f, 26.2f);
    r.y = 0.821f * spectral_lobe(l, 568.8f, 46.9f, 40.5f) + 0.286f * spectral_lobe(l, 530.9f, 16.3f, 31.1f);
    r.z = 1.217f * spectral_lobe(l, 437.0f, 11.8f, 36.0f) + 0.681f * spectral_lobe(l, 459.0f, 26.0f, 13.8f);
    return r;
}
/* The wavelength's linear-sRGB response: XYZ to linear sRGB (D65), clamped to >= 0, each
 * channel divided by its integral (so that a flat spectrum is white). */
KFN vec3 spectral_rgb(float l) {
    vec3 c = spectral_xyz(l);
    vec3 r;
    r.x = kmax(0.0f, 3.2404542f * c.x - 1.5371385f * c.y - 0.4985314f * c.z) * (1.0f / SPECTRAL_NORM_R);
    r.y = kmax(0.0f, -0.9692660f * c.x + 1.8760108f * c.y + 0.0415560f * c.z) * (1.0f / SPECTRAL_NORM_G);
    r.z = kmax(0.0f, 0.0556434f * c.x - 0.2040259f * c.y + 1.0572252f * c.z) * (1.0f / SPECTRAL_NORM_B);
    return r;
}
/* The RGB weight a path takes on when it picks lambda with spectral_sample: rgb / pdf. */
KFN vec3 spectral_weight(float lambda) {
    float pdf = spectral_pdf(lambda);
    return pdf > 0.0f ? vscale(spectral_rgb(lambda), 1.0f / pdf) : v3s(0.0f);
}

/* The draw that picks a path's wavelength: a hash of (pixel, sample) with its own key, so that no
 * other draw of the path moves (a path picks at most one wavelength). */
#define SPECTRAL_DRAW_KEY 0x5ec7a1d5u
KFN float spectral_u(const sampler *s) {
    return u32_to_unit_float(hash_u32(hash_combine(hash_combine(s->pixel_seed, s->index), SPECTRAL_DRAW_KEY)));
}

/* Is m dispersive (a dielectric or rough glass with a Cauchy B)? */
KFN int material_dispersive(const material *m) {
    return m->dispersion != 0.0f && (m->kind == MAT_DIELECTRIC || m->kind == MAT_ROUGH_GLASS);
}
/* At a dispersive surface: the path's wavelength (*lambda, 0 = none yet: picked now with u, the
 * throughput taking its weight) and m's IOR at that wavelength. */
KFN void dispersion_resolve(material *m, float *lambda, vec3 *throughput, float u) {
    if (*lambda == 0.0f) {
        *lambda = spectral_sample(u);
        *throughput = vmul(*throughput, spectral_weight(*lambda));
    }
    m->ior = cauchy_ior(m->ior, m->dispersion, *lambda);
}

#endif
