/* The pbrt-v4 reader: materials (one table, a row per pbrt material: its caustic kind, and where
 * caustic has no such model the stand-in a warning names), named materials, textures, and the
 * caustic material of a shape (pbrt_internal.h lists the files). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/pbrt_internal.h"
#include "image/image.h"
#include "kernel/bidir_limits.h"
#include "scene/material.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- materials: the one table ------------------------------------------------------------------------ */
/* pbrt's roughness to caustic's perceptual roughness (caustic's GGX alpha is roughness^2; pbrt's
 * alpha is sqrt(roughness) when remaproughness is true, the roughness itself otherwise) */
static int get_roughness(R *r, plist *pl, double def, double *rough) {
    double u, v, rr;
    if (pbrt_get_float(r, pl, "roughness", def, 0, 1e3, &rr)) return -1;
    if (pbrt_get_float(r, pl, "uroughness", rr, 0, 1e3, &u)) return -1;
    if (pbrt_get_float(r, pl, "vroughness", rr, 0, 1e3, &v)) return -1;
    int remap = 1;
    if (prm_bool(&pl->l, "remaproughness", 1, &remap)) return -1;
    if (fabs(u - v) > 1e-6 * (u + v) &&
        UNSUPPORTED(r, "anisotropic roughness", pl->where,
                    "anisotropic roughness (uroughness %g, vroughness %g) of %s: caustic's microfacets are isotropic; "
                    "their mean stands in",
                    u, v, pl->owner))
        return -1;
    double alpha = 0.5 * (u + v);
    if (remap) alpha = sqrt(alpha);
    double rough_c = sqrt(alpha);
    *rough = rough_c > 1 ? 1 : rough_c;
    return 0;
}

/* cauchy_b: where not NULL (a dielectric), a named glass-* spectrum caustic knows the Abbe number
 * of is a dispersive glass: Cauchy's B there (0 otherwise). */
static int get_eta_dispersive(R *r, plist *pl, double *eta, double *cauchy_b) {
    vec3 c;
    if (pbrt_get_color(r, pl, "eta", v3s(1.5f), 0, &c, NULL)) return -1;
    const char *t = pbrt_ptype(pl, "eta");
    prm_value *v = pbrt_pfind(pl, "eta");
    double abbe = 0.0;
    if (cauchy_b && t && !strcmp(t, "spectrum") && v->type == PRM_STRING && pbrt_glass_abbe(v->str, &abbe) == 0) {
        *eta = c.y;
        *cauchy_b = material_cauchy_b(*eta, abbe);
        return 0;
    }
    if (t && !strcmp(t, "spectrum") &&
        UNSUPPORTED(r, "dispersion", v->where,
                    "spectral IOR of %s: caustic renders in RGB (no dispersion); its mean %.4g stands in", pl->owner,
                    (c.x + c.y + c.z) / 3.0))
        return -1;
    *eta = (c.x + c.y + c.z) / 3.0;
    if (!(*eta > 0)) *eta = 1.5;
    return 0;
}
static int get_eta(R *r, plist *pl, double *eta) { return get_eta_dispersive(r, pl, eta, NULL); }

/* A conductor (prefix "" or "conductor."): "reflectance" r where given, as pbrt-v4 takes it: the
 * complex index eta 1, k = 2 sqrt(r) / sqrt(1 - r) per channel (r clamped to 0.9999, as pbrt),
 * whose normal-incidence Fresnel is r (a textured reflectance: Schlick with that F0). Else a
 * complex index eta + i k: pbrt's named metal spectra through caustic's table of measured metals,
 * the index fitted to the spectrally integrated Fresnel (material_metal_lookup_spectral: pbrt
 * renders spectrally, and Mitsuba's RGB projection of eta and k, which the Mitsuba reader keeps,
 * is darker, Cu by 2 % in luminance at normal incidence); rgb or float eta and k as given. F0 is
 * the colour. */
static int get_conductor(R *r, plist *pl, const char *prefix, material_params *p) {
    char ne[40], nk[40];
    snprintf(ne, sizeof ne, "%seta", prefix);
    snprintf(nk, sizeof nk, "%sk", prefix);
    if (pbrt_ptype(pl, "reflectance")) {
        int tex;
        p->complex_ior = 0;
        if (pbrt_get_color(r, pl, "reflectance", v3s(1.0f), 0, &p->rgb, &tex)) return -1;
        if (tex < 0) {
            float c[3] = {p->rgb.x, p->rgb.y, p->rgb.z}, kk[3];
            for (int i = 0; i < 3; ++i) {
                float f = fminf(fmaxf(c[i], 0.0f), 0.9999f);
                kk[i] = 2.0f * sqrtf(f) / sqrtf(1.0f - f);
            }
            p->complex_ior = 1, p->eta = v3s(1.0f), p->k = v3(kk[0], kk[1], kk[2]);
        }
        return 0;
    }
    prm_value *ev = pbrt_pfind(pl, ne), *kv = pbrt_pfind(pl, nk);
    char metal[32] = "Cu"; /* pbrt's default: metal-Cu-eta / metal-Cu-k */
    if (ev && ev->type == PRM_STRING) {
        if (sscanf(ev->str, "metal-%31[^-]", metal) != 1) metal[0] = '\0';
    } else if (ev) {
        metal[0] = '\0';
    }
    if (metal[0] && (!kv || kv->type == PRM_STRING)) {
        vec3 eta, k, f0;
        if (!material_metal_lookup_spectral(metal, &eta, &k, &f0)) {
            p->complex_ior = 1, p->eta = eta, p->k = k, p->rgb = f0;
        } else if (!pbrt_metal_f0(metal, &f0)) {
            p->complex_ior = 0, p->rgb = f0;
        } else
            metal[0] = '\0';
        if (metal[0]) {
            if (ev) ev->used = 1;
            if (kv) kv->used = 1;
            return 0;
        }
    }
    vec3 eta, k;
    if (pbrt_get_color(r, pl, ne, v3s(0.2f), 0, &eta, NULL) || pbrt_get_color(r, pl, nk, v3s(3.9f), 0, &k, NULL))
        return -1;
    float e[3] = {eta.x, eta.y, eta.z}, kk[3] = {k.x, k.y, k.z}, f[3];
    for (int i = 0; i < 3; ++i)
        f[i] = ((e[i] - 1) * (e[i] - 1) + kk[i] * kk[i]) / ((e[i] + 1) * (e[i] + 1) + kk[i] * kk[i]);
    p->rgb = v3(f[0], f[1], f[2]);
    p->complex_ior = 1, p->eta = eta, p->k = k;
    return 0;
}

/* a prefixed roughness ("conductor.", "interface."): caustic's perceptual roughness */
static int get_prefixed_roughness(R *r, plist *pl, const char *prefix, double def, int remap, double *rough) {
    char n[3][48];
    snprintf(n[0], sizeof n[0], "%sroughness", prefix);
    snprintf(n[1], sizeof n[1], "%suroughness", prefix);
    snprintf(n[2], sizeof n[2], "%svroughness", prefix);
    double rr, u, v;
    if (pbrt_get_float(r, pl, n[0], def, 0, 1e3, &rr) || pbrt_get_float(r, pl, n[1], rr, 0, 1e3, &u) ||
        pbrt_get_float(r, pl, n[2], rr, 0, 1e3, &v))
        return -1;
    double alpha = 0.5 * (u + v);
    if (remap) alpha = sqrt(alpha);
    *rough = sqrt(alpha) > 1 ? 1 : sqrt(alpha);
    return 0;
}

/* the layer between coat and base: pbrt's "thickness" of a medium of "albedo" (0: absorbing,
 * sigma_t 1): its transmittance at normal incidence there and back */
static int get_coat_tint(R *r, plist *pl, material_params *p) {
    double th;
    vec3 alb;
    if (pbrt_get_float(r, pl, "thickness", 0.01, 0, 1e6, &th)) return -1;
    if (pbrt_get_color(r, pl, "albedo", v3s(0.0f), 0, &alb, NULL)) return -1;
    prm_value *g = pbrt_pfind(pl, "g"), *md = pbrt_pfind(pl, "maxdepth"), *ns = pbrt_pfind(pl, "nsamples");
    if (g) g->used = 1;
    if (md) md->used = 1;
    if (ns) ns->used = 1;
    /* scattering albedo a returns part of what the layer would absorb: (1 - a) of sigma_t absorbs */
    vec3 t;
    t.x = (float)exp(-2 * th * (1 - alb.x));
    t.y = (float)exp(-2 * th * (1 - alb.y));
    t.z = (float)exp(-2 * th * (1 - alb.z));
    p->coat_tint = t;
    return 0;
}

typedef int (*mat_fn)(R *r, plist *pl, pmat *m);
static int mat_diffuse(R *r, plist *pl, pmat *m) {
    return pbrt_get_color(r, pl, "reflectance", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
}
static int mat_conductor(R *r, plist *pl, pmat *m) {
    if (get_conductor(r, pl, "", &m->p)) return -1;
    return get_roughness(r, pl, 0.0, &m->p.roughness);
}
static int mat_dielectric(R *r, plist *pl, pmat *m) {
    if (get_eta_dispersive(r, pl, &m->p.ior, &m->p.dispersion) || get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.rgb = v3s(1.0f);
    if (m->p.roughness > 0.0) m->kind = MAT_ROUGH_GLASS;
    return 0;
}
/* pbrt's coated materials onto caustic's Coated kind (a dielectric coat over a diffuse or conductor
 * base): the coat's IOR and roughness, the base's colour (and roughness), the layer's tint */
static int mat_coateddiffuse(R *r, plist *pl, pmat *m) {
    if (pbrt_get_color(r, pl, "reflectance", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.coat_roughness)) return -1;
    if (get_eta(r, pl, &m->p.ior) || get_coat_tint(r, pl, &m->p)) return -1;
    m->p.coat_base = COAT_BASE_DIFFUSE;
    return 0;
}
static int mat_coatedconductor(R *r, plist *pl, pmat *m) {
    int remap = 1;
    if (prm_bool(&pl->l, "remaproughness", 1, &remap)) return -1;
    if (get_conductor(r, pl, "conductor.", &m->p)) return -1;
    if (get_prefixed_roughness(r, pl, "conductor.", 0.0, remap, &m->p.roughness)) return -1;
    if (get_prefixed_roughness(r, pl, "interface.", 0.0, remap, &m->p.coat_roughness)) return -1;
    vec3 c;
    if (pbrt_get_color(r, pl, "interface.eta", v3s(1.5f), 0, &c, NULL)) return -1;
    m->p.ior = (c.x + c.y + c.z) / 3.0;
    if (get_coat_tint(r, pl, &m->p)) return -1;
    m->p.coat_base = COAT_BASE_CONDUCTOR;
    return 0;
}
static int mat_difftrans(R *r, plist *pl, pmat *m) {
    double sc;
    if (pbrt_get_color(r, pl, "reflectance", v3s(0.25f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (pbrt_get_color(r, pl, "transmittance", v3s(0.25f), 0, &m->p.transmittance, NULL)) return -1;
    if (prm_float(&pl->l, "scale", 1.0, 0, 1e30, "", &sc)) return -1;
    m->p.rgb = vscale(m->p.rgb, (float)sc);
    m->p.transmittance = vscale(m->p.transmittance, (float)sc);
    return 0;
}
static int mat_thindielectric(R *r, plist *pl, pmat *m) {
    if (get_eta(r, pl, &m->p.ior)) return -1;
    m->p.rgb = v3s(1.0f);
    return 0;
}
/* pbrt's subsurface: caustic's model of it, a (rough) dielectric of "eta" (1.33) around a
 * homogeneous medium: "name" (a measured medium, material_measured_medium), "sigma_a"/"sigma_s",
 * or "reflectance" with "mfp" through the albedo inversion (src/scene/material.h); times "scale";
 * "g". pbrt-v4 itself renders it with a tabulated diffusion BSSRDF; the random walk differs from
 * that, and the one warning says so. */
static int mat_subsurface(R *r, plist *pl, pmat *m) {
    medium md;
    memset(&md, 0, sizeof md);
    md.kind = MEDIUM_HOMOGENEOUS;
    double g, scale, eta = 1.33;
    if (pbrt_get_float(r, pl, "g", 0.0, -0.999, 0.999, &g) || pbrt_get_float(r, pl, "scale", 1.0, 0.0, 1e30, &scale))
        return -1;
    md.g = (float)g;
    const char *preset;
    if (prm_string(&pl->l, "name", "", &preset)) return -1;
    if (preset[0]) {
        if (material_measured_medium(preset, &md.sigma_a, &md.sigma_s)) {
            prm_value *v = pbrt_pfind(pl, "name");
            return prm_fail(&r->ctx, v ? v->where : pl->where,
                            "%s: unknown measured medium \"%s\" (Skin1, Ketchup, ...)", pl->owner, preset);
        }
    } else if (pbrt_ptype(pl, "sigma_a") || pbrt_ptype(pl, "sigma_s")) {
        if (pbrt_get_color(r, pl, "sigma_a", v3(0.0011f, 0.0024f, 0.014f), 0, &md.sigma_a, NULL) ||
            pbrt_get_color(r, pl, "sigma_s", v3(2.55f, 3.21f, 3.77f), 0, &md.sigma_s, NULL))
            return -1;
    } else if (pbrt_ptype(pl, "reflectance")) {
        vec3 refl, mfp;
        if (pbrt_get_color(r, pl, "reflectance", v3s(1.0f), 0, &refl, NULL) ||
            pbrt_get_color(r, pl, "mfp", v3s(1.0f), 0, &mfp, NULL))
            return -1;
        if (!(vmaxc(mfp) > 0.0f) || mfp.x <= 0.0f || mfp.y <= 0.0f || mfp.z <= 0.0f) {
            prm_value *v = pbrt_pfind(pl, "mfp");
            return prm_fail(&r->ctx, v ? v->where : pl->where, "%s: \"mfp\" must be > 0", pl->owner);
        }
        material_subsurface_medium(refl, mfp, md.g, &md.sigma_a, &md.sigma_s);
    } else { /* pbrt-v4's default: whole milk's coefficients (1/mm) */
        md.sigma_a = v3(0.0011f, 0.0024f, 0.014f);
        md.sigma_s = v3(2.55f, 3.21f, 3.77f);
    }
    md.sigma_a = vscale(md.sigma_a, (float)scale);
    md.sigma_s = vscale(md.sigma_s, (float)scale);
    if (pbrt_ptype(pl, "eta") && get_eta(r, pl, &eta)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.ior = eta;
    m->p.rgb = v3s(1.0f);
    m->kind = m->p.roughness > 0.0 ? MAT_ROUGH_GLASS : MAT_DIELECTRIC;
    char name[64];
    snprintf(name, sizeof name, "(pbrt subsurface %zu)", r->npmats);
    int idx = scene_add_medium(r->s, name, md);
    if (idx < 0) return prm_fail(&r->ctx, pl->where, "%s: cannot add its medium", pl->owner);
    m->sss = idx + 1;
    return UNSUPPORTED(r, "material subsurface", pl->where,
                       "%s: a random walk through its medium inside a dielectric boundary (caustic's subsurface "
                       "model; pbrt-v4 renders a tabulated diffusion BSSRDF, which differs a little)",
                       pl->owner);
}
static int mat_grey(R *r, plist *pl, pmat *m) {
    (void)r, (void)pl;
    m->p.rgb = v3s(0.5f);
    return 0;
}
static int mat_hair(R *r, plist *pl, pmat *m) {
    vec3 c = v3(0.3f, 0.2f, 0.1f);
    if (pbrt_ptype(pl, "reflectance") && pbrt_get_color(r, pl, "reflectance", c, 0, &c, NULL)) return -1;
    m->p.rgb = c;
    return 0;
}
static int mat_interface(R *r, plist *pl, pmat *m) {
    (void)r, (void)pl;
    m->interface = 1;
    return 0;
}
static int mat_mix(R *r, plist *pl, pmat *m);

/* pbrt-v3's materials (files written for pbrt-v3 and read here): Kd/Ks/Kr, "index" */
static int mat_v3_matte(R *r, plist *pl, pmat *m) {
    prm_value *sg = pbrt_pfind(pl, "sigma");
    if (sg) sg->used = 1; /* Oren-Nayar roughness: Lambertian here */
    return pbrt_get_color(r, pl, "Kd", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
}
static int mat_v3_plastic(R *r, plist *pl, pmat *m) {
    vec3 ks;
    if (pbrt_get_color(r, pl, "Kd", v3s(0.25f), 0, &m->p.rgb, &m->p.albedo_tex)) return -1;
    if (pbrt_get_color(r, pl, "Ks", v3s(0.25f), 0, &ks, NULL)) return -1;
    if (get_roughness(r, pl, 0.1, &m->p.roughness)) return -1;
    m->p.metallic = 0.0;
    if (m->p.roughness < 0.02) m->p.roughness = 0.02;
    return 0;
}
static int mat_v3_metal(R *r, plist *pl, pmat *m) {
    if (get_conductor(r, pl, "", &m->p)) return -1;
    return get_roughness(r, pl, 0.01, &m->p.roughness);
}
static int mat_v3_mirror(R *r, plist *pl, pmat *m) {
    m->p.roughness = 0.0;
    return pbrt_get_color(r, pl, "Kr", v3s(0.9f), 0, &m->p.rgb, NULL);
}
static int mat_v3_glass(R *r, plist *pl, pmat *m) {
    vec3 kr, kt;
    double eta;
    if (pbrt_get_color(r, pl, "Kr", v3s(1.0f), 0, &kr, NULL) || pbrt_get_color(r, pl, "Kt", v3s(1.0f), 0, &kt, NULL))
        return -1;
    if (pbrt_get_float(r, pl, "index", 1.5, 1e-3, 1e3, &eta)) return -1;
    if (get_roughness(r, pl, 0.0, &m->p.roughness)) return -1;
    m->p.ior = eta;
    m->p.rgb = kt;
    if (m->p.roughness > 0.0) m->kind = MAT_ROUGH_GLASS;
    return 0;
}
static int mat_v3_kd(R *r, plist *pl, pmat *m) {
    if (pbrt_ptype(pl, "Kd")) return pbrt_get_color(r, pl, "Kd", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
    if (pbrt_ptype(pl, "color")) return pbrt_get_color(r, pl, "color", v3s(0.5f), 0, &m->p.rgb, &m->p.albedo_tex);
    m->p.rgb = v3s(0.5f);
    return 0;
}

/* pbrt material -> caustic kind. standin: NULL where caustic renders the model (or all of it
 * that a pbrt file usually sets); otherwise what stands in, named in the one warning. */
static const struct pbrt_material_row {
    const char *name;
    material_kind kind;
    mat_fn read;
    const char *standin;
} pbrt_materials[] = {
    {"diffuse", MAT_DIFFUSE, mat_diffuse, NULL},
    {"conductor", MAT_CONDUCTOR, mat_conductor, NULL},
    {"dielectric", MAT_DIELECTRIC, mat_dielectric, NULL},
    {"thindielectric", MAT_THIN_DIELECTRIC, mat_thindielectric, NULL},
    {"coateddiffuse", MAT_COATED, mat_coateddiffuse, NULL},
    {"coatedconductor", MAT_COATED, mat_coatedconductor, NULL},
    {"diffusetransmission", MAT_DIFFUSE_TRANSMISSION, mat_difftrans, NULL},
    {"mix", MAT_DIFFUSE, mat_mix, "the material of larger weight"},
    {"interface", MAT_DIFFUSE, mat_interface, NULL},
    {"subsurface", MAT_DIELECTRIC, mat_subsurface, NULL},
    {"measured", MAT_DIFFUSE, mat_grey, "grey diffuse 0.5 (caustic has no measured BRDFs)"},
    {"hair", MAT_DIFFUSE, mat_hair, "brown diffuse (caustic has no hair model)"},
    /* pbrt-v3's names, for files written for it */
    {"matte", MAT_DIFFUSE, mat_v3_matte, NULL},
    {"plastic", MAT_PBR, mat_v3_plastic, "caustic's PBR (pbrt-v3 plastic: Kd under a GGX lobe; Ks not used)"},
    {"metal", MAT_CONDUCTOR, mat_v3_metal, NULL},
    {"mirror", MAT_CONDUCTOR, mat_v3_mirror, NULL},
    {"glass", MAT_DIELECTRIC, mat_v3_glass, NULL},
    {"uber", MAT_PBR, mat_v3_kd, "caustic's PBR of its Kd (pbrt-v3 uber)"},
    {"substrate", MAT_PBR, mat_v3_kd, "caustic's PBR of its Kd (pbrt-v3 substrate)"},
    {"translucent", MAT_DIFFUSE, mat_v3_kd, "diffuse of its Kd (pbrt-v3 translucent)"},
    {"disney", MAT_PBR, mat_v3_kd, "caustic's PBR of its color (pbrt-v3 disney)"},
    {"kdsubsurface", MAT_DIFFUSE, mat_v3_kd, "diffuse of its Kd (no subsurface scattering)"},
    {"fourier", MAT_DIFFUSE, mat_grey, "grey diffuse 0.5 (pbrt-v3 fourier BSDF tables are not read)"},
    {NULL, MAT_DIFFUSE, NULL, NULL}};

int pbrt_find_named_material(R *r, const char *name) {
    for (size_t i = r->npmats; i-- > 0;)
        if (r->pmats[i].name && !strcmp(r->pmats[i].name, name)) return (int)i;
    return -1;
}

static int mat_mix(R *r, plist *pl, pmat *m) {
    const char *names;
    if (prm_string(&pl->l, "materials", "", &names)) return -1;
    prm_value *v = pbrt_pfind(pl, "materials");
    const char *sep = strchr(names, '\x1f');
    if (!v || !sep || strchr(sep + 1, '\x1f'))
        return prm_fail(&r->ctx, v ? v->where : pl->where, "%s needs \"string materials\" with two names", pl->owner);
    double amount;
    if (pbrt_get_float(r, pl, "amount", 0.5, 0, 1, &amount)) return -1;
    char a[256], b[256];
    snprintf(a, sizeof a, "%.*s", (int)(sep - names), names);
    snprintf(b, sizeof b, "%s", sep + 1);
    const char *pick = amount > 0.5 ? b : a;
    int i = pbrt_find_named_material(r, pick);
    if (i < 0) return prm_fail(&r->ctx, v->where, "%s: no material named \"%s\"", pl->owner, pick);
    char *keep = m->name;
    *m = r->pmats[i];
    m->name = keep;
    return 0;
}

int pbrt_make_material(R *r, const char *type, plist *pl, const char *name, const char *where) {
    const struct pbrt_material_row *row = NULL;
    for (int i = 0; pbrt_materials[i].name; ++i)
        if (!strcmp(pbrt_materials[i].name, type)) row = &pbrt_materials[i];
    pmat m;
    memset(&m, 0, sizeof m);
    if (!row) {
        static const char *names[] = {"diffuse",
                                      "conductor",
                                      "dielectric",
                                      "thindielectric",
                                      "coateddiffuse",
                                      "coatedconductor",
                                      "diffusetransmission",
                                      "mix",
                                      "interface",
                                      "subsurface",
                                      "measured",
                                      "hair",
                                      "none",
                                      NULL};
        if (!strcmp(type, "") || !strcmp(type, "none")) {
            m.interface = 1;
        } else {
            const char *sug = prm_suggest(type, names);
            char key[80];
            snprintf(key, sizeof key, "material %.60s", type);
            if (UNSUPPORTED(r, key, where, "unknown material \"%s\"%s%s%s: grey diffuse stands in", type,
                            sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : ""))
                return -1;
            m.kind = MAT_DIFFUSE;
            m.p = material_params_default(MAT_DIFFUSE);
            m.p.rgb = v3s(0.5f);
        }
    } else {
        m.kind = row->kind;
        m.p = material_params_default(row->kind);
        if (row->read(r, pl, &m)) return -1;
        if (row->standin) {
            char key[80];
            snprintf(key, sizeof key, "material %s", type);
            if (UNSUPPORTED(r, key, where, "material \"%s\": caustic has no such model; %s stands in", type,
                            row->standin))
                return -1;
        }
    }
    /* parameters every material may have */
    prm_value *disp = pbrt_pfind(pl, "displacement");
    if (!disp) disp = pbrt_pfind(pl, "bumpmap"); /* pbrt-v3's name */
    ptex *bt = disp && disp->type == PRM_STRING ? pbrt_find_tex(r, disp->str, 1) : NULL;
    if (bt && bt->kind == PT_IMAGE && bt->tex >= 0) { /* a height map: caustic's bump map */
        disp->used = 1;
        m.p.bump_tex = bt->tex;
        m.p.bump_scale = bt->factor;
        disp = NULL;
    }
    if (disp) {
        disp->used = 1;
        if (UNSUPPORTED(r, "bump mapping", disp->where,
                        "\"displacement\" of %s: not an image texture (caustic bumps by image height maps); the "
                        "surface is smooth",
                        pl->owner))
            return -1;
    }
    prm_value *nm = pbrt_pfind(pl, "normalmap");
    if (nm) {
        nm->used = 1;
        if (UNSUPPORTED(r, "normal map", nm->where,
                        "\"normalmap\" of %s: not read (caustic's normal maps are "
                        "glTF's); the surface is smooth",
                        pl->owner))
            return -1;
    }
    if (pbrt_finish_params(r, pl)) return -1;
    if (GROW(r->pmats, r->npmats, r->cappmats)) return oom(r, where);
    if (name) {
        m.name = sdup(name, strlen(name));
        if (!m.name) return oom(r, where);
    } else
        m.name = NULL;
    r->pmats[r->npmats++] = m;
    return (int)r->npmats - 1;
}

/* the caustic material of a shape: its pbrt material with the area light and alpha in force */
/* The media a shape of the current material binds (kernel/medium.h's rule, which is pbrt-v4's: a
 * MediumInterface whose sides differ is a boundary, one whose sides are equal is none); a
 * subsurface material binds its own medium inside, the MediumInterface's outside around it. */
static void shape_media(const R *r, const pmat *pm, int *in, int *out) {
    int transition = r->g.med_in != r->g.med_out;
    *in = pm->sss ? pm->sss : transition ? r->g.med_in : 0;
    *out = pm->sss || transition ? r->g.med_out : 0;
}

int pbrt_shape_material(R *r, int alpha_tex, const char *where) {
    const pmat *pm = &r->pmats[r->g.material];
    vec3 L = r->g.area ? r->g.area_L : v3s(0.0f);
    int two = r->g.area ? r->g.area_two_sided : 0;
    int med_in, med_out;
    shape_media(r, pm, &med_in, &med_out);
    for (size_t i = 0; i < r->nders; ++i) {
        derived *d = &r->ders[i];
        if (d->pm == r->g.material && d->two_sided == two && d->alpha_tex == alpha_tex && d->L.x == L.x &&
            d->L.y == L.y && d->L.z == L.z && d->med_in == med_in && d->med_out == med_out)
            return d->index;
    }
    material_params p = pm->p;
    p.emission = L;
    p.two_sided = two;
    if (pm->interface && med_in == med_out) { /* a boundary of nothing: no surface at all */
        p.opacity = 0.0;
        p.alpha_cutoff = 0.5;
        if (r->g.area && UNSUPPORTED(r, "emissive interface", where,
                                     "an area light on a shape of material \"interface\" (no surface): it emits "
                                     "nothing in caustic"))
            return -1;
    } else if (alpha_tex >= 0) {
        p.alpha_tex = alpha_tex;
        p.alpha_cutoff = 0.5;
    }
    /* an interface that bounds media: caustic's Interface kind (no surface) */
    material m = material_from_params(pm->interface && med_in != med_out ? MAT_INTERFACE : pm->kind, &p);
    if (pm->interface) m.emission = v3s(0.0f); /* a boundary of media is caustic's Interface, not cut out */
    m.medium_inside = med_in;
    m.medium_outside = med_out;
    char name[300];
    snprintf(name, sizeof name, "%.200s#%zu", pm->name ? pm->name : "pbrt", r->nders);
    int idx = scene_add_material(r->s, name, m);
    if (idx < 0) return prm_fail(&r->ctx, where, "cannot add material \"%s\"", name);
    if (GROW(r->ders, r->nders, r->capders)) return oom(r, where);
    r->ders[r->nders++] = (derived){r->g.material, L, two, alpha_tex, idx, med_in, med_out};
    return idx;
}

/* ---- textures ------------------------------------------------------------------------------------- */
static int load_image_texture(R *r, const char *path, const char *where, int *tex, vec3 *mean) {
    image img;
    char err[512];
    memset(&img, 0, sizeof img);
    if (image_load(&img, path, err, sizeof err)) return prm_fail(&r->ctx, where, "imagemap: %s", err);
    double sum[3] = {0, 0, 0};
    size_t n = (size_t)img.width * (size_t)img.height;
    for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) sum[c] += img.rgb[3 * i + (size_t)c];
    if (n) *mean = v3((float)(sum[0] / n), (float)(sum[1] / n), (float)(sum[2] / n));
    *tex = scene_take_image_texture(r->s, &img);
    image_free(&img);
    if (*tex < 0) return prm_fail(&r->ctx, where, "imagemap \"%s\": out of texture memory", path);
    /* one image memory budget per scene (CAUSTIC_IMAGE_MEMORY), as every reader keeps */
    if (scene_textures_memory_check(r->s, path, err, sizeof err)) return prm_fail(&r->ctx, where, "%s", err);
    return 0;
}

int pbrt_d_texture(R *r, const pbrt_token *at) {
    char w[PRM_WHERE];
    pbrt_token name, type, cls;
    if (pbrt_lex_next(&r->lx, &name) || pbrt_lex_next(&r->lx, &type) || pbrt_lex_next(&r->lx, &cls)) return -1;
    pbrt_where(&r->lx, at, w);
    if (name.type != PTK_STRING || type.type != PTK_STRING || cls.type != PTK_STRING)
        return prm_fail(&r->ctx, w, "Texture: expected \"name\" \"float|spectrum\" \"class\"");
    char *nm = sdup(name.text, name.len);
    char ty[32], cl[64];
    snprintf(ty, sizeof ty, "%.*s", (int)(type.len > 30 ? 30 : type.len), type.text);
    snprintf(cl, sizeof cl, "%.*s", (int)(cls.len > 60 ? 60 : cls.len), cls.text);
    if (!nm) return oom(r, w);
    if (strcmp(ty, "float") && strcmp(ty, "spectrum") && strcmp(ty, "color") && strcmp(ty, "rgb")) {
        free(nm);
        return prm_fail(&r->ctx, w, "Texture \"%.64s\": type \"%s\" is neither \"float\" nor \"spectrum\"", name.text,
                        ty);
    }
    char owner[160];
    snprintf(owner, sizeof owner, "texture \"%.64s\" (%s)", nm, cl);
    plist pl;
    if (pbrt_parse_params(r, &pl, owner, at)) {
        free(nm);
        return -1;
    }
    pbrt_where(&r->lx, at, w);
    ptex t;
    memset(&t, 0, sizeof t);
    t.name = nm;
    t.is_float = !strcmp(ty, "float");
    t.kind = PT_OTHER;
    t.value = v3s(t.is_float ? 1.0f : 0.5f);
    t.tex = -1;
    int rc = 0;
    if (!strcmp(cl, "constant")) {
        t.kind = PT_CONST;
        rc = pbrt_get_color(r, &pl, "value", v3s(1.0f), 0, &t.value, NULL);
    } else if (!strcmp(cl, "imagemap")) {
        const char *fn;
        rc = prm_string(&pl.l, "filename", "", &fn);
        if (!rc && !fn[0]) rc = prm_fail(&r->ctx, w, "%s needs \"string filename\"", owner);
        if (!rc) {
            char *path = pbrt_resolve(&r->lx, at, fn);
            vec3 mean = v3s(0.5f);
            rc = path ? load_image_texture(r, path, w, &t.tex, &mean) : oom(r, w);
            free(path);
            double sc = 1.0;
            int inv = 0;
            if (!rc) rc = prm_float(&pl.l, "scale", 1.0, -1e30, 1e30, "", &sc);
            if (!rc) rc = prm_bool(&pl.l, "invert", 0, &inv);
            if (!rc && inv) rc = UNSUPPORTED(r, "imagemap invert", w, "%s: \"invert\" is not applied", owner);
            const char *enc;
            if (!rc) rc = prm_string(&pl.l, "encoding", "", &enc);
            const char *filt;
            if (!rc) rc = prm_string(&pl.l, "filter", "", &filt);
            const char *wrap;
            if (!rc) rc = prm_string(&pl.l, "wrap", "repeat", &wrap);
            if (!rc && t.tex >= 0 && (!strcmp(wrap, "clamp") || !strcmp(wrap, "black")))
                r->s->textures[t.tex].wrap_u = r->s->textures[t.tex].wrap_v = TEX_WRAP_CLAMP;
            t.kind = PT_IMAGE;
            t.value = v3s((float)sc);
            if (t.is_float) { /* a float texture's stand-in value is its mean */
                t.value = vscale(mean, (float)sc);
                t.factor = (float)sc;
            }
        }
    } else if (!strcmp(cl, "scale")) {
        /* tex * scale: an image times a constant stays an image */
        vec3 a, b;
        int ta = -1, tb = -1;
        int v3 = !pbrt_ptype(&pl, "tex") && pbrt_ptype(&pl, "tex1"); /* pbrt-v3: tex1 x tex2 */
        rc = pbrt_get_color(r, &pl, v3 ? "tex1" : "tex", v3s(1.0f), 0, &a, &ta);
        if (!rc) rc = pbrt_get_color(r, &pl, v3 ? "tex2" : "scale", v3s(1.0f), 0, &b, &tb);
        if (!rc) {
            const char *an = "", *bn = "";
            (void)prm_string(&pl.l, v3 ? "tex1" : "tex", "", &an);
            (void)prm_string(&pl.l, v3 ? "tex2" : "scale", "", &bn);
            if (ta >= 0 && tb < 0) {
                t.kind = PT_IMAGE;
                t.tex = ta;
                t.value = vmul(a, b);
                ptex *in = pbrt_find_tex(r, an, 1);
                t.factor = (in ? in->factor : 1.0f) * b.x;
            } else if (tb >= 0 && ta < 0) {
                t.kind = PT_IMAGE;
                t.tex = tb;
                t.value = vmul(a, b);
                ptex *in = pbrt_find_tex(r, bn, 1);
                t.factor = (in ? in->factor : 1.0f) * a.x;
            } else if (ta < 0 && tb < 0) {
                t.kind = PT_CONST;
                t.value = vmul(a, b);
            } else {
                t.value = vmul(a, b);
                rc = UNSUPPORTED(r, "texture scale of two", w, "%s: a product of two textures; the first stands in",
                                 owner);
                t.kind = PT_IMAGE;
                t.tex = ta;
            }
            if (t.kind == PT_IMAGE && t.tex >= 0 && r->s->textures[t.tex].kind == TEX_CHECKER) t.kind = PT_CHECKER;
        }
    } else if (!strcmp(cl, "checkerboard")) {
        vec3 a, b;
        double us, vs;
        long dim;
        rc = pbrt_get_color(r, &pl, "tex1", v3s(1.0f), 0, &a, NULL);
        if (!rc) rc = pbrt_get_color(r, &pl, "tex2", v3s(0.0f), 0, &b, NULL);
        if (!rc) rc = prm_float(&pl.l, "uscale", 1.0, -1e9, 1e9, "", &us);
        if (!rc) rc = prm_float(&pl.l, "vscale", us, -1e9, 1e9, "", &vs);
        if (!rc) rc = prm_int(&pl.l, "dimension", 2, 2, 3, &dim);
        if (!rc && fabs(us - vs) > 1e-9 * fabs(us))
            rc = UNSUPPORTED(r, "checkerboard scales", w,
                             "%s: uscale %g and vscale %g differ; caustic's checker has one "
                             "scale (uscale used)",
                             owner, us, vs);
        if (!rc) {
            texture tx;
            memset(&tx, 0, sizeof tx);
            tx.kind = TEX_CHECKER;
            tx.a = a;
            tx.b = b;
            tx.scale = (float)us;
            tx.uv_space = dim == 2;
            t.tex = scene_add_texture(r->s, tx, NULL);
            if (t.tex < 0) rc = oom(r, w);
            t.kind = PT_CHECKER;
            t.value = vscale(vadd(a, b), 0.5f);
        }
    } else if (!strcmp(cl, "mix") || !strcmp(cl, "directionmix")) {
        vec3 a, b;
        double amt;
        rc = pbrt_get_color(r, &pl, "tex1", v3s(0.0f), 0, &a, NULL);
        if (!rc) rc = pbrt_get_color(r, &pl, "tex2", v3s(1.0f), 0, &b, NULL);
        if (!rc) rc = pbrt_get_float(r, &pl, "amount", 0.5, 0, 1, &amt);
        if (!rc) {
            prm_value *dir = pbrt_pfind(&pl, "dir");
            if (dir) dir->used = 1;
            t.value = vadd(vscale(a, (float)(1 - amt)), vscale(b, (float)amt));
            t.kind = PT_CONST;
            int varying = pbrt_ptype(&pl, "amount") && !strcmp(pbrt_ptype(&pl, "amount"), "texture");
            if (varying || !strcmp(cl, "directionmix"))
                rc = UNSUPPORTED(r, "texture mix", w, "%s: a varying mix; its mean colour stands in", owner);
        }
    } else {
        char key[96];
        snprintf(key, sizeof key, "texture %.60s", cl);
        rc = UNSUPPORTED(r, key, w, "texture class \"%s\" (%s): caustic does not have it; %s stands in", cl, owner,
                         t.is_float ? "1" : "grey 0.5");
        for (size_t i = 0; i < pl.l.n; ++i) pl.l.v[i].used = 1;
    }
    if (!rc) rc = pbrt_finish_params(r, &pl);
    pbrt_plist_free(&pl);
    if (!rc && GROW(r->ptexs, r->nptexs, r->capptexs)) rc = oom(r, w);
    if (rc) {
        free(nm);
        return -1;
    }
    r->ptexs[r->nptexs++] = t;
    return 0;
}
