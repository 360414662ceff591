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
/* Dispersion (kernel/spectral.h): Cauchy's B in um^2 of a glass with IOR ior_d at the d line and
 * Abbe number abbe (> 0; KHR_materials_dispersion's `dispersion` is 20 / abbe), for the readers
 * (material_params.dispersion). */
double material_cauchy_b(double ior_d, double abbe);
/* The i-th name of that table, NULL past its end (for messages and "did you mean"). */
const char *material_metal_name(int i);

#endif
