/* Textures and the BSDF table of the Mitsuba reader: Mitsuba's BSDFs and textures onto caustic's
 * materials. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "image/image.h"
#include "kernel/environment.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- textures ---------------------------------------------------------------------------------- */
int mi_texture_of(reader *R, const mx_node *t, int *index, vec3 *mean);
int mi_get_colour_tex(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *rgb, int *tex);

/* Mitsuba 0.x's <texture type="scale"> around a texture or colour: its `scale` times it. */
static int scale_texture(reader *R, const mx_node *t, vec3 *rgb, int *tex) {
    double k;
    if (R->tex_depth > MI_MAX_NEST) FAIL(R, t, "textures nested deeper than %d", MI_MAX_NEST);
    ((mx_node *)t)->used = 1;
    if (mi_get_float(R, t, "scale", 1.0, &k)) return -1;
    const mx_node *inner = NULL;
    for (int i = 0; i < t->nkids && !inner; ++i)
        if (!strcmp(t->kids[i]->tag, "texture") || !strcmp(t->kids[i]->tag, "rgb") ||
            !strcmp(t->kids[i]->tag, "srgb") || !strcmp(t->kids[i]->tag, "spectrum") || !strcmp(t->kids[i]->tag, "ref"))
            inner = t->kids[i];
    if (!inner) FAIL(R, t, "scale texture without a texture or colour to scale");
    R->tex_depth++;
    int rc =
        mi_get_colour_tex(R, inner->parent, mx_attr(inner, "name") ? mx_attr(inner, "name") : "", v3s(1.0f), rgb, tex);
    if (!mx_attr(inner, "name")) { /* unnamed: read it directly */
        ((mx_node *)inner)->used = 1;
        if (!strcmp(inner->tag, "texture")) {
            vec3 mean;
            rc = mi_texture_of(R, inner, tex, &mean);
            *rgb = v3s(1.0f);
        } else
            rc = mi_colour_of(R, inner, rgb);
    }
    R->tex_depth--;
    if (rc) return -1;
    *rgb = vscale(*rgb, (float)k);
    return 0;
}

/* Property `name` of n with a <ref> followed to what it names; *out NULL where n has none. */
static int prop_deref(reader *R, const mx_node *n, const char *name, const mx_node **out) {
    *out = mi_prop(n, name);
    if (*out && !strcmp((*out)->tag, "ref")) return mi_deref(R, *out, out);
    return 0;
}

/* A colour property that may be a texture: *tex >= 0 for a texture (then *rgb is white). */
int mi_get_colour_tex(reader *R, const mx_node *n, const char *name, vec3 def, vec3 *rgb, int *tex) {
    *rgb = def;
    *tex = -1;
    const mx_node *p;
    if (prop_deref(R, n, name, &p)) return -1;
    if (!p) return 0;
    if (!strcmp(p->tag, "texture") && mx_attr(p, "type") && !strcmp(mx_attr(p, "type"), "scale"))
        return scale_texture(R, p, rgb, tex);
    if (!strcmp(p->tag, "texture")) {
        vec3 mean;
        if (mi_texture_of(R, p, tex, &mean)) return -1;
        *rgb = v3s(1.0f);
        return 0;
    }
    return mi_colour_of(R, p, rgb);
}

/* A float property that may be a texture: a texture gives its mean (and *tex) */
static int get_float_tex(reader *R, const mx_node *n, const char *name, double def, double *out, int *tex) {
    *out = def;
    if (tex) *tex = -1;
    const mx_node *p;
    if (prop_deref(R, n, name, &p)) return -1;
    if (!p) return 0;
    if (!strcmp(p->tag, "texture")) {
        vec3 mean;
        int ti;
        if (mi_texture_of(R, p, &ti, &mean)) return -1;
        if (tex) *tex = ti;
        *out = (mean.x + mean.y + mean.z) / 3.0;
        return 0;
    }
    vec3 c;
    if (mi_colour_of(R, p, &c)) return -1;
    *out = (c.x + c.y + c.z) / 3.0;
    return 0;
}

static int load_bitmap(reader *R, const mx_node *t, int raw, int *index, vec3 *mean) {
    const char *fn = mi_get_string(t, "filename", NULL);
    if (!fn) FAIL(R, t, "bitmap texture without filename");
    char *full = mx_resolve(&R->D, t, fn);
    if (!full) FAIL(R, t, "out of memory");
    char ierr[512];
    int w = 0, h = 0, idx;
    int is8 = image_load_srgb8(full, scene_reserve_texels8, R->s, &w, &h, ierr, sizeof ierr);
    if (is8 < 0) {
        free(full);
        FAIL(R, t, "%s", ierr);
    }
    if (is8) {
        idx = scene_add_image_texture8(R->s, w, h, raw ? TEXEL8_LINEAR : TEXEL8_SRGB);
    } else {
        image img;
        if (image_load(&img, full, ierr, sizeof ierr)) {
            free(full);
            FAIL(R, t, "%s", ierr);
        }
        image_value_report vr;
        image_sanitize(&img, &vr);
        if ((vr.nonfinite || vr.negative) &&
            mi_warn_at(R, t, "bad texels", "%s: %zu non-finite and %zu negative values replaced by 0", fn, vr.nonfinite,
                       vr.negative)) {
            image_free(&img);
            free(full);
            return -1;
        }
        idx = scene_take_image_texture(R->s, &img);
    }
    if (idx < 0) {
        free(full);
        FAIL(R, t, idx == -2 ? "too many texels in the scene" : "out of memory");
    }
    int rc = scene_textures_memory_check(R->s, full, ierr, sizeof ierr);
    free(full);
    if (rc) FAIL(R, t, "%s", ierr);
    /* the mean colour (for parameters caustic takes as constants) */
    const texture *tx = &R->s->textures[idx];
    double sum[3] = {0, 0, 0};
    size_t n = (size_t)tx->width * (size_t)tx->height, step = n > 65536 ? n / 65536 : 1, cnt = 0;
    for (size_t i = 0; i < n; i += step, ++cnt) {
        vec3 c = scene_texel(R->s, tx, i);
        sum[0] += c.x, sum[1] += c.y, sum[2] += c.z;
    }
    if (cnt) *mean = v3((float)(sum[0] / cnt), (float)(sum[1] / cnt), (float)(sum[2] / cnt));
    const char *wrap = mi_get_string(t, "wrap_mode", "repeat");
    int wm = !strcmp(wrap, "clamp") ? TEX_WRAP_CLAMP : !strcmp(wrap, "mirror") ? TEX_WRAP_MIRROR : TEX_WRAP_REPEAT;
    R->s->textures[idx].wrap_u = R->s->textures[idx].wrap_v = wm;
    *index = idx;
    return 0;
}

int mi_texture_of(reader *R, const mx_node *t, int *index, vec3 *mean) {
    for (size_t i = 0; i < R->ntexs; ++i)
        if (R->texs[i].node == t) {
            *index = R->texs[i].index;
            *mean = R->texs[i].mean;
            return 0;
        }
    if (R->tex_depth > MI_MAX_NEST)
        FAIL(R, t, "textures nested deeper than %d (a texture made of itself?)", MI_MAX_NEST);
    ((mx_node *)t)->used = 1;
    const char *type = mx_attr(t, "type");
    if (!type) FAIL(R, t, "<texture> without type");
    xform uv;
    if (mi_get_transform(R, t, "to_uv", &uv)) return -1;
    int idx = -1;
    *mean = v3s(0.5f);
    if (!strcmp(type, "bitmap")) {
        int raw;
        if (mi_get_bool(R, t, "raw", 0, &raw) || load_bitmap(R, t, raw, &idx, mean)) return -1;
        (void)mi_get_string(t, "filter_type", NULL);
        xform I = xform_identity();
        if (memcmp(&uv, &I, sizeof uv) &&
            mi_warn_at(R, t, "bitmap to_uv", "bitmap to_uv transform: caustic's image textures have none (ignored)"))
            return -1;
    } else if (!strcmp(type, "checkerboard")) {
        texture tx;
        memset(&tx, 0, sizeof tx);
        tx.kind = TEX_CHECKER;
        int t0, t1;
        R->tex_depth++;
        int bad = mi_get_colour_tex(R, t, "color0", v3s(0.4f), &tx.a, &t0) ||
                  mi_get_colour_tex(R, t, "color1", v3s(0.2f), &tx.b, &t1);
        R->tex_depth--;
        if (bad) return -1;
        if ((t0 >= 0 || t1 >= 0) && mi_warn_at(R, t, "checker of textures",
                                               "checkerboard of textures: caustic's checker has two colours: "
                                               "white where a texture was"))
            return -1;
        /* Mitsuba: two cells per unit of uv; to_uv's scale multiplies that (caustic's checker
         * has one square scale: a non-square one takes the mean, with a warning) */
        double su = sqrt((double)uv.m[0][0] * uv.m[0][0] + (double)uv.m[1][0] * uv.m[1][0]);
        double sv = sqrt((double)uv.m[0][1] * uv.m[0][1] + (double)uv.m[1][1] * uv.m[1][1]);
        if (fabs(su - sv) > 1e-6 * (su + sv) &&
            mi_warn_at(R, t, "checker scale", "checkerboard with different u and v scales: caustic uses their mean"))
            return -1;
        tx.scale = (float)(su + sv);
        tx.uv_space = 1;
        *mean = vscale(vadd(tx.a, tx.b), 0.5f);
        idx = scene_add_texture(R->s, tx, NULL);
        if (idx < 0) FAIL(R, t, "out of memory");
    } else {
        if (mi_warn_at(R, t, "texture type", "texture \"%s\": caustic has no such texture: grey 0.5 instead", type))
            return -1;
        texture tx;
        memset(&tx, 0, sizeof tx);
        tx.kind = TEX_CONSTANT;
        tx.a = tx.b = v3s(0.5f);
        idx = scene_add_texture(R->s, tx, NULL);
        if (idx < 0) FAIL(R, t, "out of memory");
    }
    mi_tex *nt = R->ntexs == R->capt ? realloc(R->texs, (R->capt = R->capt ? 2 * R->capt : 8) * sizeof *nt) : R->texs;
    if (!nt) FAIL(R, t, "out of memory");
    R->texs = nt;
    R->texs[R->ntexs++] = (mi_tex){t, idx, *mean};
    *index = idx;
    return 0;
}

/* A checkerboard metallic and/or roughness of `principled` (the same cells where both are) as one
 * procedural metallic-roughness map in glTF's layout (G: roughness, B: metallic; the factors 1),
 * so that the pattern itself is rendered. -1 where the textures are not such checkers (caustic
 * then takes their means); mt, rt: the textures' indices or -1 for the constants in p. */
static int mr_checker(reader *R, int mt, int rt, material_params *p) {
    const texture *m = mt >= 0 ? &R->s->textures[mt] : NULL, *r = rt >= 0 ? &R->s->textures[rt] : NULL;
    if ((m && m->kind != TEX_CHECKER) || (r && r->kind != TEX_CHECKER)) return -1;
    if (m && r && (m->scale != r->scale || m->uv_space != r->uv_space)) return -1;
    texture tx = m ? *m : *r;
    float rough = (float)p->roughness, metal = (float)p->metallic;
    tx.a = v3(0.0f, r ? r->a.x : rough, m ? m->a.x : metal);
    tx.b = v3(0.0f, r ? r->b.x : rough, m ? m->b.x : metal);
    int idx = scene_add_texture(R->s, tx, NULL);
    if (idx < 0) return -1;
    p->mr_tex = idx;
    p->roughness = 1.0;
    p->metallic = 1.0;
    return 0;
}

/* ---- BSDFs -------------------------------------------------------------------------------------
 * The one table of Mitsuba BSDFs onto caustic's kinds (MATERIAL_KINDS, kernel/types.h):
 *
 *   diffuse                          Diffuse (reflectance, texture)
 *   conductor, roughconductor        Conductor with a complex index: the named `material`
 *                                    (material_metal_lookup) or eta/k; a specular_reflectance
 *                                    other than 1: Schlick with F0 from the index times it;
 *                                    alpha -> roughness sqrt(alpha); beckmann and anisotropic
 *                                    alpha_u/alpha_v warn (GGX, sqrt(au*av))
 *   dielectric                       Dielectric, IOR int_ior/ext_ior (named IORs below)
 *   roughdielectric                  RoughGlass, same IOR, roughness sqrt(alpha)
 *   thindielectric                   ThinDielectric (IOR int_ior/ext_ior)
 *   plastic, roughplastic, pplastic  Coated over a diffuse base (coat IOR int_ior/ext_ior, coat
 *                                    roughness sqrt(alpha); plastic: smooth)
 *   principled                       PBR (base_color, metallic, roughness); the lobes caustic lacks
 *                                    (clearcoat, sheen, spec_trans, anisotropic) warn when nonzero
 *   twosided                         its BSDF (caustic's surfaces are two-sided, glass aside)
 *   blendbsdf, mixturebsdf (0.x)    warns: opaque ones (diffuse, conductors, plastics) blend into
 *                                    one PBR (weighted colour, metallic, roughness); with glass,
 *                                    the BSDF of the largest weight
 *   mask                             its BSDF with a cut-out: opacity texture -> alpha map with
 *                                    cut-off 0.5; a constant opacity warns
 *   bumpmap                          its BSDF with caustic's bump map (height texture, `scale`)
 *   normalmap                        its BSDF with the normal map (tangent space)
 *   null                             the shape is left out; with interior/exterior media, an
 *                                    Interface (a boundary of media, no surface)
 *   anything else                    warns: Diffuse 0.5 */
typedef struct named {
    const char *name;
    double v[3];
} named;
/* Mitsuba's named IORs (at ~589 nm). */
static const named iors[] = {{"vacuum", {1.0}},      {"helium", {1.00004}},         {"hydrogen", {1.00013}},
                             {"air", {1.00028}},     {"carbon dioxide", {1.00045}}, {"water", {1.3330}},
                             {"acetone", {1.36}},    {"ethanol", {1.361}},          {"carbon tetrachloride", {1.461}},
                             {"glycerol", {1.4729}}, {"benzene", {1.501}},          {"silicone oil", {1.52045}},
                             {"bromine", {1.661}},   {"water ice", {1.31}},         {"fused quartz", {1.458}},
                             {"pyrex", {1.470}},     {"acrylic glass", {1.49}},     {"polypropylene", {1.49}},
                             {"bk7", {1.5046}},      {"sodium chloride", {1.544}},  {"amber", {1.55}},
                             {"pet", {1.5750}},      {"diamond", {2.419}},          {NULL, {0}}};

static const named *find_named(const named *t, const char *name) {
    for (; t->name; ++t)
        if (!strcmp(t->name, name)) return t;
    return NULL;
}

static int get_ior(reader *R, const mx_node *n, const char *name, double def, double *out) {
    *out = def;
    mx_node *p = mi_prop(n, name);
    if (!p) return 0;
    if (!strcmp(p->tag, "string")) {
        const char *v = mx_attr(p, "value");
        const named *k = v ? find_named(iors, v) : NULL;
        if (!k) {
            const char *names[32];
            int i = 0;
            for (; iors[i].name && i < 31; ++i) names[i] = iors[i].name;
            names[i] = NULL;
            const char *sug = v ? prm_suggest(v, names) : NULL;
            FAIL(R, p, "\"%s\": unknown IOR name \"%s\"%s%s%s", name, v ? v : "", sug ? " (did you mean \"" : "",
                 sug ? sug : "", sug ? "\"?)" : "");
        }
        *out = k->v[0];
        return 0;
    }
    if (mi_num_attr(R, p, "value", out)) return -1;
    if (!(*out > 0)) FAIL(R, p, "\"%s\": an IOR must be positive", name);
    return 0;
}

/* alpha, or alpha_u/alpha_v (anisotropic: their geometric mean, with a warning) -> roughness */
static int get_roughness(reader *R, const mx_node *b, double def_alpha, double *rough) {
    double a, au, av;
    int has_u = mi_prop(b, "alpha_u") != NULL;
    if (get_float_tex(R, b, "alpha", def_alpha, &a, NULL)) return -1;
    if (has_u) {
        if (get_float_tex(R, b, "alpha_u", def_alpha, &au, NULL) || get_float_tex(R, b, "alpha_v", au, &av, NULL))
            return -1;
        if (fabs(au - av) > 1e-6 &&
            mi_warn_at(R, b, "anisotropic",
                       "anisotropic roughness (alpha_u %g, alpha_v %g): caustic's GGX is isotropic "
                       "(alpha = sqrt(alpha_u alpha_v))",
                       au, av))
            return -1;
        a = sqrt(fabs(au * av));
    }
    const char *dist = mi_get_string(b, "distribution", "beckmann");
    if (strcmp(dist, "ggx") &&
        mi_warn_at(R, b, "beckmann", "microfacet distribution \"%s\": caustic's is GGX (same alpha)", dist))
        return -1;
    if (a < 0) a = 0;
    *rough = sqrt(a);
    if (*rough > 1) *rough = 1;
    return 0;
}

static int bsdf_build(reader *R, const mx_node *b, int depth, int *kind, material_params *p, int *skip);

/* The which-th nested BSDF of b (a <bsdf> child or a <ref> to one). */
static int inner_bsdf(reader *R, const mx_node *b, int which, const mx_node **out) {
    int k = 0;
    for (int i = 0; i < b->nkids; ++i) {
        const mx_node *c = b->kids[i];
        if (!strcmp(c->tag, "ref")) {
            const mx_node *t;
            if (mi_deref(R, c, &t)) return -1;
            if (strcmp(t->tag, "bsdf")) continue;
            c = t;
        }
        if (!strcmp(c->tag, "bsdf") && k++ == which) {
            *out = c;
            return 0;
        }
    }
    FAIL(R, b, "bsdf \"%s\" needs %s nested BSDF", mx_attr(b, "type"), which ? "a second" : "a");
}

/* blendbsdf / mixturebsdf: caustic cannot mix BSDFs. Opaque reflectors (Diffuse, Conductor,
 * PBR) blend into one PBR: metallic, colour and roughness the weighted means of theirs (a
 * Conductor counting as metallic 1), which keeps the blend's albedo; otherwise (glass, emitters)
 * the BSDF of the largest weight. Either way one warning. */
static int blend(reader *R, const mx_node *b, int depth, const mx_node *const *in, const double *w, int n, int *kind,
                 material_params *p, int *skip) {
    int kinds[16], skips[16], best = 0, opaque = 1;
    material_params ps[16];
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        if (bsdf_build(R, in[i], depth + 1, &kinds[i], &ps[i], &skips[i])) return -1;
        if (w[i] > w[best]) best = i;
        sum += w[i] > 0 ? w[i] : 0;
        opaque &=
            !skips[i] && ps[i].alpha_tex < 0 &&
            (kinds[i] == MAT_DIFFUSE || kinds[i] == MAT_CONDUCTOR || kinds[i] == MAT_PBR || kinds[i] == MAT_COATED);
    }
    if (!opaque || !(sum > 0)) {
        *kind = kinds[best];
        *p = ps[best];
        *skip = skips[best];
        return mi_warn_at(R, b, "blend", "%s: caustic cannot mix these BSDFs: the one of weight %.3g instead",
                          mx_attr(b, "type"), w[best]);
    }
    *kind = MAT_PBR;
    *p = material_params_default(MAT_PBR);
    *skip = 0;
    vec3 rgb = v3s(0.0f);
    double metal = 0, rough = 0;
    for (int i = 0; i < n; ++i) {
        double wi = (w[i] > 0 ? w[i] : 0) / sum;
        rgb = vadd(rgb, vscale(ps[i].rgb, (float)wi));
        /* a coated BSDF counts as its base, with the coat's roughness */
        int k = kinds[i] == MAT_COATED ? (ps[i].coat_base == COAT_BASE_CONDUCTOR ? MAT_CONDUCTOR
                                          : ps[i].coat_base == COAT_BASE_PBR     ? MAT_PBR
                                                                                 : MAT_DIFFUSE)
                                       : kinds[i];
        metal += wi * (k == MAT_CONDUCTOR ? 1.0 : k == MAT_PBR ? ps[i].metallic : 0.0);
        rough += wi * (kinds[i] == MAT_COATED ? ps[i].coat_roughness : k == MAT_DIFFUSE ? 1.0 : ps[i].roughness);
    }
    p->rgb = rgb;
    p->metallic = metal;
    p->roughness = rough;
    p->albedo_tex = ps[best].albedo_tex;
    p->normal_tex = ps[best].normal_tex;
    return mi_warn_at(R, b, "blend",
                      "%s: caustic cannot mix BSDFs: one PBR of their weighted colour, metallic (%.3g) "
                      "and roughness (%.3g) instead",
                      mx_attr(b, "type"), metal, rough);
}

static int bsdf_build(reader *R, const mx_node *b, int depth, int *kind, material_params *p, int *skip) {
    ((mx_node *)b)->used = 1;
    if (depth > MI_MAX_NEST) FAIL(R, b, "BSDFs nested deeper than %d (a reference loop?)", MI_MAX_NEST);
    const char *type = mx_attr(b, "type");
    if (!type) FAIL(R, b, "<bsdf> without type");
    *skip = 0;
    int tex;
    vec3 c;
    if (!strcmp(type, "diffuse")) {
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        if (mi_get_colour_tex(R, b, "reflectance", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
    } else if (!strcmp(type, "conductor") || !strcmp(type, "roughconductor")) {
        *kind = MAT_CONDUCTOR;
        *p = material_params_default(MAT_CONDUCTOR);
        /* a complex index (named metal or eta/k: the exact conductor Fresnel of caustic's
         * conductor, material_metal_lookup's table of Mitsuba's names); a specular_reflectance
         * other than 1 tints it, which caustic's complex Fresnel cannot: Schlick with that F0 */
        vec3 eta = v3s(0.0f), k = v3s(1.0f);
        int complex = 1;
        if (mi_prop(b, "eta") || mi_prop(b, "k")) {
            int t1, t2;
            if (mi_get_colour_tex(R, b, "eta", v3s(0.0f), &eta, &t1) ||
                mi_get_colour_tex(R, b, "k", v3s(1.0f), &k, &t2))
                return -1;
        } else {
            const char *m = mi_get_string(b, "material", "none");
            if (material_metal_lookup(m, &eta, &k, NULL)) {
                const char *names[64];
                int i = 0;
                for (; i < 63 && material_metal_name(i); ++i) names[i] = material_metal_name(i);
                names[i] = NULL;
                const char *sug = prm_suggest(m, names);
                if (mi_warn_at(R, b, "conductor material",
                               "conductor material \"%s\" is not in caustic's table%s%s%s: "
                               "F0 0.9 instead",
                               m, sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : ""))
                    return -1;
                complex = 0;
                eta = v3s(0.0f);
                k = v3s(0.0f);
            }
        }
        float e[3] = {eta.x, eta.y, eta.z}, kk[3] = {k.x, k.y, k.z}, f[3];
        for (int i = 0; i < 3; ++i)
            f[i] = ((e[i] - 1) * (e[i] - 1) + kk[i] * kk[i]) / ((e[i] + 1) * (e[i] + 1) + kk[i] * kk[i]);
        vec3 f0 = complex ? v3(f[0], f[1], f[2]) : v3s(0.9f);
        if (mi_get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &c, &tex)) return -1;
        if (tex >= 0 || c.x != 1.0f || c.y != 1.0f || c.z != 1.0f) complex = 0;
        p->rgb = vmul(f0, c);
        p->albedo_tex = tex;
        p->complex_ior = complex;
        p->eta = eta;
        p->k = k;
        p->roughness = 0;
        if (!strcmp(type, "roughconductor") && get_roughness(R, b, 0.1, &p->roughness)) return -1;
    } else if (!strcmp(type, "dielectric") || !strcmp(type, "roughdielectric") || !strcmp(type, "thindielectric")) {
        int rough = !strcmp(type, "roughdielectric"), thin = !strcmp(type, "thindielectric");
        *kind = thin ? MAT_THIN_DIELECTRIC : rough ? MAT_ROUGH_GLASS : MAT_DIELECTRIC;
        *p = material_params_default(*kind);
        double in, ext;
        if (get_ior(R, b, "int_ior", 1.5046, &in) || get_ior(R, b, "ext_ior", 1.000277, &ext)) return -1;
        p->ior = in / ext;
        if (mi_get_colour_tex(R, b, "specular_transmittance", v3s(1.0f), &c, &tex)) return -1;
        p->rgb = c;
        vec3 sr;
        int t2;
        if (mi_get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &sr, &t2)) return -1;
        if (rough && get_roughness(R, b, 0.1, &p->roughness)) return -1;
    } else if (!strcmp(type, "phong")) {
        /* Mitsuba 0.x: the normalised Phong of caustic's Phong kind, the same formula */
        *kind = MAT_PHONG;
        *p = material_params_default(MAT_PHONG);
        vec3 sp;
        int t2;
        double ex;
        if (mi_get_colour_tex(R, b, "diffuse_reflectance", v3s(0.5f), &c, &tex) ||
            mi_get_colour_tex(R, b, "specular_reflectance", v3s(0.2f), &sp, &t2) ||
            get_float_tex(R, b, "exponent", 30, &ex, NULL))
            return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        p->specular = sp;
        p->exponent = ex > 0 ? ex : 0;
    } else if (!strcmp(type, "coating") || !strcmp(type, "roughcoating")) {
        /* Mitsuba 0.x: a dielectric coat over a nested BSDF: caustic's Coated kind where the base
         * is diffuse, a conductor or PBR; the nested BSDF alone otherwise */
        const mx_node *in;
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        double ci, ce, r = 0, thick;
        vec3 sa;
        int t1;
        if (get_ior(R, b, "int_ior", 1.5046, &ci) || get_ior(R, b, "ext_ior", 1.000277, &ce) ||
            mi_get_float(R, b, "thickness", 1.0, &thick) || mi_get_colour_tex(R, b, "sigma_a", v3s(0.0f), &sa, &t1))
            return -1;
        if (!strcmp(type, "roughcoating") && get_roughness(R, b, 0.1, &r)) return -1;
        (void)mi_prop(b, "specular_reflectance");
        int base = *kind == MAT_DIFFUSE     ? COAT_BASE_DIFFUSE
                   : *kind == MAT_CONDUCTOR ? COAT_BASE_CONDUCTOR
                   : *kind == MAT_PBR       ? COAT_BASE_PBR
                                            : -1;
        if (base < 0)
            return mi_warn_at(R, b, "coating",
                              "%s over this BSDF: caustic coats diffuse, conductor and PBR bases only: "
                              "the BSDF under the coat instead",
                              type);
        *kind = MAT_COATED;
        p->coat_base = base;
        p->ior = ci / ce;
        p->coat_roughness = r;
        p->coat_weight = 1.0;
        p->coat_tint =
            v3(expf(-2.0f * (float)thick * sa.x), expf(-2.0f * (float)thick * sa.y), expf(-2.0f * (float)thick * sa.z));
    } else if (!strcmp(type, "plastic") || !strcmp(type, "roughplastic") || !strcmp(type, "pplastic")) {
        /* caustic's Coated kind over a diffuse base: Mitsuba's plastic (a dielectric coat, smooth
         * or rough, over a Lambertian base, the coat-base interreflection restored as Mitsuba's
         * nonlinear = false does) */
        *kind = MAT_COATED;
        *p = material_params_default(MAT_COATED);
        p->coat_base = COAT_BASE_DIFFUSE;
        if (mi_get_colour_tex(R, b, "diffuse_reflectance", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        double in, ext, r = 0;
        if (get_ior(R, b, "int_ior", 1.49, &in) || get_ior(R, b, "ext_ior", 1.000277, &ext)) return -1;
        p->ior = in / ext;
        vec3 sr;
        int t2, nl;
        if (mi_get_colour_tex(R, b, "specular_reflectance", v3s(1.0f), &sr, &t2) ||
            mi_get_bool(R, b, "nonlinear", 0, &nl))
            return -1;
        if (strcmp(type, "plastic") && get_roughness(R, b, 0.1, &r)) return -1;
        p->coat_roughness = r;
        if (nl && mi_warn_at(R, b, "plastic nonlinear",
                             "%s: nonlinear = true (the colour shift of internal scattering) "
                             "is not modelled: the linear form instead",
                             type))
            return -1;
        if ((t2 >= 0 || sr.x != 1.0f || sr.y != 1.0f || sr.z != 1.0f) &&
            mi_warn_at(R, b, "plastic specular", "%s: specular_reflectance other than 1 is not modelled (a clear coat)",
                       type))
            return -1;
    } else if (!strcmp(type, "principled")) {
        *kind = MAT_PBR;
        *p = material_params_default(MAT_PBR);
        if (mi_get_colour_tex(R, b, "base_color", v3s(0.5f), &c, &tex)) return -1;
        p->rgb = c;
        p->albedo_tex = tex;
        int mt, rt;
        if (get_float_tex(R, b, "metallic", 0.0, &p->metallic, &mt) ||
            get_float_tex(R, b, "roughness", 0.5, &p->roughness, &rt))
            return -1;
        if ((mt >= 0 || rt >= 0) && mr_checker(R, mt, rt, p) < 0 &&
            mi_warn_at(R, b, "principled textured scalar",
                       "principled: textured metallic/roughness: caustic takes the "
                       "texture's mean (%.3g, %.3g)",
                       p->metallic, p->roughness))
            return -1;
        /* clearcoat is left out: Disney's clear coat is added on top of the base without taking
         * its light, so caustic's energy-conserving Coated kind over the PBR base measured further
         * from Mitsuba's mean (0.833 against 0.876 without it, mi3-principled-textured) */
        static const char *const lobes[] = {"anisotropic", "clearcoat", "spec_trans", "flatness", NULL};
        for (int i = 0; lobes[i]; ++i) {
            double v;
            int t;
            if (get_float_tex(R, b, lobes[i], 0.0, &v, &t)) return -1;
            if ((v > 0 || t >= 0) &&
                mi_warn_at(R, b, lobes[i], "principled: \"%s\" (caustic's PBR has no such lobe): left out", lobes[i]))
                return -1;
        }
        double sp, st, ct, eta, sh, sht;
        int sht_tex;
        if (get_float_tex(R, b, "specular", 0.5, &sp, NULL) || get_float_tex(R, b, "spec_tint", 0.0, &st, NULL) ||
            get_float_tex(R, b, "clearcoat_gloss", 0.0, &ct, NULL) || mi_get_float(R, b, "eta", 1.5, &eta) ||
            get_float_tex(R, b, "sheen", 0.0, &sh, &sht_tex) || get_float_tex(R, b, "sheen_tint", 0.0, &sht, NULL))
            return -1;
        /* the base colour's hue (Disney's "tint": the colour over its luminance) */
        float lum = vluminance(c);
        vec3 tint = lum > 0.0f ? vscale(c, 1.0f / lum) : v3s(1.0f);
        /* Disney's specular: the dielectric F0 = 0.08 specular mix(1, tint, spec_tint), as caustic's
         * KHR_materials_specular tint over F0 0.04 (0.5 and no tint: the plain lobe) */
        if (sp != 0.5 || st > 0.0) p->spec_tint = vscale(vlerp(v3s(1.0f), tint, (float)st), (float)(2.0 * sp));
        /* Disney's sheen (a grazing lobe added on top) as caustic's Charlie sheen of the colour
         * sheen mix(1, tint, sheen_tint), roughness 0.5: another lobe, not Mitsuba's */
        if (sh > 0.0 || sht_tex >= 0) {
            p->sheen = vscale(vlerp(v3s(1.0f), tint, (float)sht), (float)kclamp((float)sh, 0.0f, 1.0f));
            p->sheen = v3(kmin(p->sheen.x, 1.0f), kmin(p->sheen.y, 1.0f), kmin(p->sheen.z, 1.0f));
            p->sheen_roughness = 0.5;
            if (mi_warn_at(R, b, "sheen",
                           "principled: \"sheen\" %.3g is rendered as Charlie sheen (KHR_materials_sheen, roughness "
                           "0.5), not Disney's lobe: the sheen's light differs from Mitsuba's",
                           sh))
                return -1;
        }
    } else if (!strcmp(type, "twosided")) {
        const mx_node *in;
        return inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip) ? -1 : 0;
    } else if (!strcmp(type, "blendbsdf")) {
        double w;
        int wt;
        const mx_node *a, *bb;
        if (get_float_tex(R, b, "weight", 0.5, &w, &wt) || inner_bsdf(R, b, 0, &a) || inner_bsdf(R, b, 1, &bb))
            return -1;
        const mx_node *in[2] = {a, bb};
        double wv[2] = {1 - w, w};
        return blend(R, b, depth, in, wv, 2, kind, p, skip);
    } else if (!strcmp(type, "mixturebsdf")) {
        /* Mitsuba 0.x: weights "w1, w2, ..." over the nested BSDFs (Mitsuba 3 has blendbsdf) */
        const char *ws = mi_get_string(b, "weights", NULL);
        double wv[16];
        int nw = ws ? mi_parse_numbers(ws, wv, 16) : -1;
        if (nw < 1) FAIL(R, b, "mixturebsdf: \"weights\" must be a list of numbers");
        const mx_node *in[16];
        for (int i = 0; i < nw; ++i)
            if (inner_bsdf(R, b, i, &in[i])) return -1;
        return blend(R, b, depth, in, wv, nw, kind, p, skip);
    } else if (!strcmp(type, "mask")) {
        const mx_node *in;
        double op;
        int ot;
        if (get_float_tex(R, b, "opacity", 0.5, &op, &ot) || inner_bsdf(R, b, 0, &in) ||
            bsdf_build(R, in, depth + 1, kind, p, skip))
            return -1;
        if (ot >= 0) {
            p->alpha_tex = ot;
            p->alpha_cutoff = 0.5;
        } else if (op < 1 && mi_warn_at(R, b, "mask constant",
                                        "mask with constant opacity %.3g: caustic's cut-outs are "
                                        "all or nothing: %s",
                                        op, op < 0.5 ? "left out" : "opaque"))
            return -1;
        else if (op < 0.5)
            *skip = 1;
    } else if (!strcmp(type, "bumpmap")) {
        /* caustic's bump map: the height texture times `scale` in scene units along the normal */
        const mx_node *in, *ht = NULL;
        double scale;
        if (mi_get_float(R, b, "scale", 1.0, &scale)) return -1;
        for (int i = 0; i < b->nkids && !ht; ++i) {
            const mx_node *c2 = b->kids[i];
            if (!strcmp(c2->tag, "ref")) {
                const mx_node *t;
                if (mi_deref(R, c2, &t)) return -1;
                c2 = t;
            }
            if (!strcmp(c2->tag, "texture")) ht = c2;
        }
        if (!ht) FAIL(R, b, "bumpmap without a height <texture>");
        ((mx_node *)ht)->used = 1;
        int ti;
        vec3 mean;
        if (mi_texture_of(R, ht, &ti, &mean)) return -1;
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        p->bump_tex = ti;
        p->bump_scale = scale;
    } else if (!strcmp(type, "normalmap")) {
        const mx_node *in;
        mx_node *nt = mi_prop(b, "normalmap");
        if (inner_bsdf(R, b, 0, &in) || bsdf_build(R, in, depth + 1, kind, p, skip)) return -1;
        if (nt) {
            vec3 mean;
            int ti;
            if (!strcmp(nt->tag, "ref")) {
                const mx_node *t;
                if (mi_deref(R, nt, &t)) return -1;
                nt = (mx_node *)t;
            }
            if (strcmp(nt->tag, "texture")) FAIL(R, nt, "normalmap: \"normalmap\" must be a bitmap <texture>");
            if (mi_texture_of(R, nt, &ti, &mean)) return -1;
            p->normal_tex = ti;
            p->normal_scale = 1;
        }
    } else if (!strcmp(type, "null")) {
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        *skip = 1;
    } else {
        if (mi_warn_at(R, b, type, "bsdf \"%s\": caustic has no such model: Diffuse 0.5 instead", type)) return -1;
        *kind = MAT_DIFFUSE;
        *p = material_params_default(MAT_DIFFUSE);
        p->rgb = v3s(0.5f);
        mi_mark_all(b); /* said once above */
    }
    return 0;
}

mi_bsdf *mi_bsdf_get(reader *R, const mx_node *b) {
    for (size_t i = 0; i < R->nbsdfs; ++i)
        if (R->bsdfs[i].node == b) return &R->bsdfs[i];
    mi_bsdf nb;
    memset(&nb, 0, sizeof nb);
    nb.node = b;
    nb.mat = -1;
    if (bsdf_build(R, b, 0, &nb.kind, &nb.p, &nb.skip)) return NULL;
    if (R->nbsdfs == R->capb) {
        mi_bsdf *a = realloc(R->bsdfs, (R->capb = R->capb ? 2 * R->capb : 16) * sizeof *a);
        if (!a) {
            prm_fail(&R->P, NULL, "out of memory");
            return NULL;
        }
        R->bsdfs = a;
    }
    R->bsdfs[R->nbsdfs] = nb;
    return &R->bsdfs[R->nbsdfs++];
}
