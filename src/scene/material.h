/* Host constructors of materials, the one way every reader (scene JSON and its dialects, OBJ/MTL,
 * glTF, the library's caustic_scene_add_material, and the coming pbrt-v4 and Mitsuba readers)
 * builds a `material` (kernel/types.h) from values it has parsed and checked:
 *
 *   material_params p = material_params_default(MAT_CONDUCTOR);
 *   p.rgb = ...; p.roughness = ...;            the values the format states
 *   material m = material_from_params(MAT_CONDUCTOR, &p);
 *   p.albedo_tex = ...;                         textures and maps the reader loaded (indices into
 *                                               the scene it builds; -1 for none)
 *
 * material_params (kernel/materials/lobe.h) holds parsed values, not text: range checks and
 * messages naming file/line/key are the reader's (its parameter module's), so that these stay
 * free of any format. Which parameters a kind reads is its <stem>_from_params
 * (kernel/materials/<stem>.h). */
#ifndef CAUSTIC_SCENE_MATERIAL_H
#define CAUSTIC_SCENE_MATERIAL_H

#include "kernel/bsdf.h"

/* The defaults of every parameter for kind `kind`: grey 0.8, no emission (an emitter: white
 * emittance 1), roughness 0.5, IOR 1.5, metallic 0 (a conductor: 1), no Phong lobe (exponent 1),
 * one-sided emission, no maps (textures -1, normal scale 1), opaque (opacity 1, no cut-off). */
material_params material_params_default(material_kind kind);
/* A material of kind `kind` from p: colour, emission, two-sidedness, maps (a texture >= 0 sets
 * its MAP_* bit), normal scale, opacity and alpha cut-off for every kind, then the kind's own
 * parameters. kind must be a row of MATERIAL_KINDS (an out-of-range kind gives a Diffuse
 * material). */
material material_from_params(material_kind kind, const material_params *p);
/* material_from_params(kind, material_params_default(kind)). */
material material_default(material_kind kind);
/* A named conductor's RGB complex index (Mitsuba 3's names: "Au", "Ag", "Cu", "Al", "Cr", "W",
 * ..., "none" for a perfect mirror; src/scene/metal_ior_table.h, generated from measured spectra by
 * tools/metal_ior_table.py) and its reference normal-incidence reflectance (sRGB, from the
 * spectra). 0, or -1 for an unknown name. Any output may be NULL. */
int material_metal_lookup(const char *name, vec3 *eta, vec3 *k, vec3 *f0_ref);
/* The same metal as a renderer that integrates over wavelength sees it (pbrt-v4): the RGB index
 * fitted per channel so that the exact conductor Fresnel matches the spectral Fresnel reflectance
 * integrated through that linear-sRGB channel under D65, over all incidence angles (the table's
 * eta_spec, k_spec). Mitsuba's RGB projection of eta and k (material_metal_lookup) misses that by
 * up to 5 % (Au, Cu): right for Mitsuba scenes, whose references are RGB renders, not for pbrt's.
 * For the pbrt-v4 reader; 0, or -1 for an unknown name. */
int material_metal_lookup_spectral(const char *name, vec3 *eta, vec3 *k, vec3 *f0_ref);
/* Dispersion (kernel/spectral.h): Cauchy's B in um^2 of a glass with IOR ior_d at the d line and
 * Abbe number abbe (> 0; KHR_materials_dispersion's `dispersion` is 20 / abbe), for the readers
 * (material_params.dispersion). */
double material_cauchy_b(double ior_d, double abbe);
/* The i-th name of that table, NULL past its end (for messages and "did you mean"). */
const char *material_metal_name(int i);

/* ---- subsurface scattering: the medium inside a Subsurface material ------------------------
 * A subsurface material is a (rough) dielectric boundary around a homogeneous medium, so that the
 * path tracer's random walk through media is the subsurface walk (Cycles' random-walk SSS; the
 * Mitsuba 3 model of a dielectric with an interior medium). What users set is the colour seen
 * from outside (the multiple-scattering albedo A, per channel) and the distance light travels
 * inside (the radius d, per channel). The medium's coefficients from them: the single-scattering
 * albedo alpha and the extinction from the fits of Chiang, Kutz and Burley 2016 ("Practical and
 * Controllable Subsurface Scattering for Production Path Tracing", SIGGRAPH talk), the inversion
 * Cycles' random walk uses:
 *     alpha(A) = 1 - exp(-5.09406 A + 2.61188 A^2 - 4.31805 A^3)
 *     s(A)     = 1.9 - A + 3.5 (A - 0.8)^2
 *     sigma_t  = 1 / (d s(A)),  sigma_s = alpha sigma_t,  sigma_a = sigma_t - sigma_s.
 * The fit is for isotropic scattering; with an HG g the scattering coefficient is the reduced
 * one's over (1 - g) (the similarity relation sigma_s' = sigma_s (1 - g)), so the diffusive look
 * stays. A in [0, 1] (clamped), d > 0; g in (-1, 1). */
float material_subsurface_alpha(float A);
void material_subsurface_medium(vec3 albedo, vec3 radius, float g, vec3 *sigma_a, vec3 *sigma_s);
/* Measured media of Jensen, Marschner, Levoy and Hanrahan 2001 ("A Practical Model for Subsurface
 * Light Transport", figure 5: reduced scattering sigma_s' and absorption sigma_a in 1/mm), by
 * pbrt's names ("Skin1", "Ketchup", "Wholemilk", ...; compared without case): sigma_s' is given as
 * sigma_s (g = 0), per scene unit, as pbrt-v4 does. 0, or -1 for an unknown name. */
int material_measured_medium(const char *name, vec3 *sigma_a, vec3 *sigma_s);
/* The i-th name of that table, NULL past its end. */
const char *material_measured_medium_name(int i);

#endif
