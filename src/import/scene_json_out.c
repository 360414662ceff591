/* A scene in memory written back as caustic JSON (`--dump-scene` for the readers that build the
 * scene directly: pbrt-v4, Mitsuba XML, a glTF file with its own lights): camera, environment,
 * point, directional and spot lights, every material with its keys, every primitive in the scene's
 * own order (triangles as inline meshes, one object per run of triangles of one material;
 * spheres by their MATRIX; quads by ORIGIN/U/V), and the image textures as PFM files next to the
 * JSON (NAME.texN.pfm). Read back, it builds the same arrays: numbers are printed with the digits
 * that give the same float back (%.9g), so the render is the same but for what the JSON loader
 * computes again (normals renormalised). The file's integrator is kept (Camera.INTEGRATOR).
 *
 * Media are written as Media (SIGMA_A, SIGMA_S, G, EMISSION as the scene holds them; a grid's
 * voxels as NAME.medN.vol and NAME.medN.albedo.vol beside the JSON, placed by BOX),
 * the media a material bounds (medium_inside / medium_outside, which scene_bind_media gave it) as
 * the INTERIOR and EXTERIOR of the objects that use it, the camera's as Camera.MEDIUM; read back,
 * scene_bind_media makes the same bound materials again (under longer names).
 *
 * What caustic's JSON has no key for is refused with one message naming it (metallic-roughness
 * and emission maps, a coat weight, tangents with a normal map, grid media turned by their
 * placement, texture wrap modes other than repeat). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/import.h"
#include "caustic.h"
#include "image/image.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n <= (size_t)k) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* a float as the shortest text that reads back as the same float (9 significant digits) */
static void sb_num(sbuf *b, float x) { sb_printf(b, "%.9g", (double)x); }
static void sb_vec(sbuf *b, vec3 v) {
    sb_printf(b, "[");
    sb_num(b, v.x);
    sb_printf(b, ",");
    sb_num(b, v.y);
    sb_printf(b, ",");
    sb_num(b, v.z);
    sb_printf(b, "]");
}
static void sb_str(sbuf *b, const char *s) {
    sb_printf(b, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
        if (*c == '"' || *c == '\\')
            sb_printf(b, "\\%c", *c);
        else if (*c < 0x20)
            sb_printf(b, "\\u%04x", *c);
        else
            sb_printf(b, "%c", *c);
    }
    sb_printf(b, "\"");
}

typedef struct dumper {
    const scene *s;
    const char *json_path;
    char *stem; /* json_path without its extension: NAME of NAME.texN.pfm */
    int *tex_written;
    char *err;
    size_t errlen;
} dumper;

static int refuse(dumper *D, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int refuse(dumper *D, const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(D->err, D->errlen, "%s: --dump-scene cannot write this scene: %s (caustic's JSON has no key for it)",
             D->json_path, what);
    return -1;
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* An image texture as NAME.texN.pfm (once), its linear texels as they are */
static int write_image(dumper *D, int ti, char *name, size_t cap) {
    const texture *t = &D->s->textures[ti];
    char path[4096];
    snprintf(path, sizeof path, "%s.tex%d.pfm", D->stem, ti);
    const char *bn = base_name(path);
    if (strlen(bn) >= cap) return refuse(D, "a texture file name longer than %zu bytes", cap - 1);
    memcpy(name, bn, strlen(bn) + 1);
    if (D->tex_written[ti]) return 0;
    if (t->wrap_u != TEX_WRAP_REPEAT || t->wrap_v != TEX_WRAP_REPEAT)
        return refuse(D, "texture %d clamps or mirrors its uvs (JSON textures repeat)", ti);
    image img;
    if (image_init(&img, t->width, t->height)) {
        snprintf(D->err, D->errlen, "%s: out of memory", D->json_path);
        return -1;
    }
    size_t n = (size_t)t->width * (size_t)t->height;
    for (size_t i = 0; i < n; ++i) {
        vec3 c = scene_texel(D->s, t, i);
        img.rgb[3 * i] = c.x;
        img.rgb[3 * i + 1] = c.y;
        img.rgb[3 * i + 2] = c.z;
    }
    int rc = image_save(&img, path, 1, D->err, D->errlen);
    image_free(&img);
    if (rc == 0) D->tex_written[ti] = 1;
    return rc;
}

/* a texture object (TEXTURE, NORMAL_MAP, BUMP_MAP); data: read linearly (maps), else colour */
static int texture_obj(dumper *D, sbuf *b, int ti) {
    const texture *t = &D->s->textures[ti];
    static const char *const proc[] = {NULL, "checker", NULL, "noise", "marble", "wood"};
    if (t->kind == TEX_IMAGE) {
        char name[1024];
        if (write_image(D, ti, name, sizeof name)) return -1;
        sb_printf(b, "{\"TYPE\":\"image\",\"FILE\":");
        sb_str(b, name);
        sb_printf(b, "}");
        return 0;
    }
    if (t->kind < TEX_CHECKER || t->kind > TEX_WOOD || !proc[t->kind])
        return refuse(D, "texture %d of kind %d", ti, (int)t->kind);
    sb_printf(b, "{\"TYPE\":\"%s\",\"RGB1\":", proc[t->kind]);
    sb_vec(b, t->a);
    sb_printf(b, ",\"RGB2\":");
    sb_vec(b, t->b);
    sb_printf(b, ",\"SCALE\":");
    sb_num(b, t->scale);
    sb_printf(b, ",\"SPACE\":\"%s\"", t->uv_space ? "uv" : "world");
    if (t->kind != TEX_CHECKER) sb_printf(b, ",\"OCTAVES\":%d", (int)t->octaves);
    sb_printf(b, "}");
    return 0;
}

static void key_num(sbuf *b, const char *k, float v) {
    sb_printf(b, ",\"%s\":", k);
    sb_num(b, v);
}
static void key_vec(sbuf *b, const char *k, vec3 v) {
    sb_printf(b, ",\"%s\":", k);
    sb_vec(b, v);
}
/* ROUGHNESS from a GGX alpha: the reader rounds ROUGHNESS^2 (in double) to float once, so the
 * root is written with a double's digits to give the same alpha back */
static void key_roughness(sbuf *b, const char *k, float alpha) {
    sb_printf(b, ",\"%s\":%.17g", k, sqrt((double)alpha));
}

static int write_material(dumper *D, sbuf *b, int mi) {
    const scene *s = D->s;
    const material *m = &s->materials[mi];
    const char *name = s->material_names[mi];
    if (m->maps & MAP_METALLIC_ROUGHNESS) return refuse(D, "material \"%s\": a metallic-roughness map", name);
    if (m->maps & MAP_EMISSION) return refuse(D, "material \"%s\": an emission map", name);
    if (m->alpha_cutoff > 0.0f && !(m->maps & MAP_OPACITY))
        return refuse(D, "material \"%s\": a cut-out without an opacity map", name);
    if (m->kind == MAT_COATED && m->coat_weight != 1.0f)
        return refuse(D, "material \"%s\": a coat weight of %g", name, (double)m->coat_weight);
    if ((m->maps & MAP_NORMAL) && s->has_tangents)
        return refuse(D, "material \"%s\": a normal map over the file's own tangents", name);
    const char *kname = material_kind_name(m->kind);
    if (!kname) return refuse(D, "material \"%s\" of kind %d", name, (int)m->kind);
    sb_str(b, name);
    sb_printf(b, ":{\"TYPE\":\"%s\"", kname);
    int complex_ior =
        (m->kind == MAT_CONDUCTOR || (m->kind == MAT_COATED && m->coat_base == COAT_BASE_CONDUCTOR)) && m->complex_ior;
    switch (m->kind) {
    case MAT_EMITTER:
        key_vec(b, "RGB", m->emission);
        sb_printf(b, ",\"EMITTANCE\":1");
        break;
    case MAT_INTERFACE: break;
    default: /* a constant texture is its colour times RGB */
        key_vec(b, "RGB",
                m->albedo_tex >= 0 && s->textures[m->albedo_tex].kind == TEX_CONSTANT
                    ? vmul(m->albedo, s->textures[m->albedo_tex].a)
                    : m->albedo);
        break;
    }
    switch (m->kind) {
    case MAT_CONDUCTOR:
    case MAT_PBR:
    case MAT_ROUGH_GLASS: key_roughness(b, "ROUGHNESS", m->alpha); break;
    case MAT_COATED:
        sb_printf(b, ",\"BASE\":\"%s\"",
                  m->coat_base == COAT_BASE_CONDUCTOR ? "Conductor"
                  : m->coat_base == COAT_BASE_PBR     ? "PBR"
                                                      : "Diffuse");
        key_roughness(b, "ROUGHNESS", m->alpha);
        key_roughness(b, "COAT_ROUGHNESS", m->coat_alpha);
        key_vec(b, "COAT_RGB", m->coat_tint);
        break;
    default: break;
    }
    if (m->kind == MAT_DIELECTRIC || m->kind == MAT_ROUGH_GLASS || m->kind == MAT_THIN_DIELECTRIC ||
        m->kind == MAT_COATED)
        key_num(b, "IOR", m->ior);
    if ((m->kind == MAT_DIELECTRIC || m->kind == MAT_ROUGH_GLASS) && m->dispersion != 0.0f)
        key_num(b, "CAUCHY_B", m->dispersion); /* the glass's dispersion (kernel/spectral.h) */
    if (m->kind == MAT_PBR && m->pbr_layers)
        return refuse(D, "material \"%s\": the PBR lobe's sheen and specular layers", name);
    if (m->kind == MAT_PBR || (m->kind == MAT_COATED && m->coat_base == COAT_BASE_PBR))
        key_num(b, "METALLIC", m->metallic);
    if (complex_ior) {
        if (m->kind == MAT_COATED) return refuse(D, "material \"%s\": a coat over a complex-IOR conductor", name);
        key_vec(b, "IOR", m->eta);
        key_vec(b, "K", m->k);
    }
    if (m->kind == MAT_PHONG) {
        key_vec(b, "SPECRGB", m->specular);
        key_num(b, "EXPONENT", m->exponent);
    }
    if (m->kind == MAT_DIFFUSE_TRANSMISSION) key_vec(b, "TRANSMIT_RGB", m->specular);
    if (m->kind != MAT_EMITTER && vmaxc(m->emission) > 0.0f) key_vec(b, "EMISSION_RGB", m->emission);
    sb_printf(b, ",\"TWO_SIDED\":%s", m->two_sided ? "true" : "false");
    if (m->albedo_tex >= 0 && m->kind != MAT_EMITTER && m->kind != MAT_INTERFACE &&
        s->textures[m->albedo_tex].kind != TEX_CONSTANT) {
        sb_printf(b, ",\"TEXTURE\":");
        if (texture_obj(D, b, m->albedo_tex)) return -1;
    }
    if (m->maps & (MAP_NORMAL | MAP_BUMP)) {
        int bump = (m->maps & MAP_BUMP) && !(m->maps & MAP_NORMAL);
        sb_printf(b, ",\"%s\":", bump ? "BUMP_MAP" : "NORMAL_MAP");
        if (texture_obj(D, b, m->normal_tex)) return -1;
        key_num(b, bump ? "BUMP_SCALE" : "NORMAL_SCALE", m->normal_scale);
    }
    if (m->maps & MAP_OPACITY) {
        sb_printf(b, ",\"OPACITY_MAP\":");
        if (texture_obj(D, b, m->alpha_tex)) return -1;
        key_num(b, "OPACITY", m->opacity);
        key_num(b, "ALPHA_CUTOFF", m->alpha_cutoff);
    }
    sb_printf(b, "}");
    return 0;
}

static void write_camera(const scene *s, sbuf *b) {
    const camera_desc *c = &s->camera;
    sb_printf(b, "\"Camera\":{\"RES\":[%d,%d],\"FOVY\":", c->width, c->height);
    sb_num(b, 0.5f * c->fovy_deg);
    key_vec(b, "EYE", c->eye);
    key_vec(b, "LOOKAT", c->lookat);
    key_vec(b, "UP", c->up);
    if (c->aperture_radius > 0.0f) key_num(b, "APERTURE", c->aperture_radius);
    if (c->focus_distance > 0.0f) key_num(b, "FOCUS_DISTANCE", c->focus_distance);
    if (s->spp > 0) sb_printf(b, ",\"ITERATIONS\":%d", s->spp);
    if (s->max_depth > 0) sb_printf(b, ",\"DEPTH\":%d", s->max_depth);
    if (s->integrator_hint > 0)
        sb_printf(b, ",\"INTEGRATOR\":\"%s\"", caustic_integrator_name((caustic_integrator)(s->integrator_hint - 1)));
    if (c->medium > 0) {
        sb_printf(b, ",\"MEDIUM\":");
        sb_str(b, s->medium_names[c->medium - 1]);
    }
    sb_printf(b, "}");
}

/* One of grid medium mi's grids (voxels at off, ch channels) as NAME.medN[.albedo].vol beside the
 * JSON, over the unit box (BOX places it); its file name (as the JSON names it) into name. */
static int write_grid(dumper *D, size_t mi, uint32_t off, uint32_t ch, char *name, size_t cap) {
    const medium *m = &D->s->media[mi];
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s.med%zu%s.vol", D->stem, mi, ch == 3 ? ".albedo" : "");
    const char *bn = base_name(path);
    if (strlen(bn) >= cap) return refuse(D, "a grid file name longer than %zu bytes", cap - 1);
    memcpy(name, bn, strlen(bn) + 1);
    const float unit[6] = {0, 0, 0, 1, 1, 1};
    if (vol_write(path, m->res, ch, unit, D->s->voxels + off, err, sizeof err)) {
        snprintf(D->err, D->errlen, "%s: --dump-scene: %s", D->json_path, err);
        return -1;
    }
    return 0;
}

/* A grid medium's keys: its grids as .vol files, and BOX, the world box that the JSON maps onto the
 * unit cube (json_media.c computes to_grid from it in double: the same floats come back); a grid
 * its placement turns or shears has no BOX: refused. */
static int grid_keys(dumper *D, sbuf *b, size_t mi) {
    const medium *m = &D->s->media[mi];
    const float *g = m->to_grid;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            if ((r == c) != (g[4 * r + c] != 0.0f))
                return refuse(D, "medium \"%s\": a grid its placement turns or shears (BOX is axis-aligned)",
                              D->s->medium_names[mi]);
    char name[1024];
    if (write_grid(D, mi, m->density_grid, 1u, name, sizeof name)) return -1;
    sb_printf(b, ",\"FILE\":");
    sb_str(b, name);
    if (m->albedo_grid != MEDIUM_NO_GRID) {
        if (write_grid(D, mi, m->albedo_grid, 3u, name, sizeof name)) return -1;
        sb_printf(b, ",\"ALBEDO_FILE\":");
        sb_str(b, name);
    }
    double lo[3], hi[3];
    for (int a = 0; a < 3; ++a) { /* u = g_aa p + g_a3: u 0 at lo, 1 at hi */
        lo[a] = -(double)g[4 * a + 3] / (double)g[4 * a + a];
        hi[a] = lo[a] + 1.0 / (double)g[4 * a + a];
    }
    sb_printf(b, ",\"BOX\":[[%.17g,%.17g,%.17g],[%.17g,%.17g,%.17g]]", lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    return 0;
}

/* The Media section: media by name, their coefficients (per unit density for grids) as the scene
 * holds them. */
static int write_media(dumper *D, sbuf *b) {
    const scene *s = D->s;
    if (!s->nmedia) return 0;
    sb_printf(b, ",\n\"Media\":{");
    for (size_t i = 0; i < s->nmedia; ++i) {
        const medium *m = &s->media[i];
        if (m->kind == MEDIUM_NANOVDB) /* its grid is bytes of the file, not written back */
            return refuse(D, "medium \"%s\": a NanoVDB grid (not written as a file yet)", s->medium_names[i]);
        sb_printf(b, i ? ",\n" : "\n");
        sb_str(b, s->medium_names[i]);
        sb_printf(b, ":{\"TYPE\":\"%s\"", m->kind == MEDIUM_GRID ? "Grid" : "Homogeneous");
        if (m->kind == MEDIUM_GRID && grid_keys(D, b, i)) return -1;
        key_vec(b, "SIGMA_A", m->sigma_a);
        key_vec(b, "SIGMA_S", m->sigma_s);
        key_num(b, "G", m->g);
        if (vmaxc(m->emission) > 0.0f) key_vec(b, "EMISSION", m->emission);
        sb_printf(b, "}");
    }
    sb_printf(b, "}");
    return 0;
}

/* An object's MATERIAL, and the media its material bounds as INTERIOR / EXTERIOR ("" the vacuum). */
static void object_material(const scene *s, sbuf *b, int mi) {
    const material *m = &s->materials[mi];
    sb_printf(b, ",\"MATERIAL\":");
    sb_str(b, s->material_names[mi]);
    if (!m->medium_inside && !m->medium_outside) return;
    sb_printf(b, ",\"INTERIOR\":");
    sb_str(b, m->medium_inside > 0 ? s->medium_names[m->medium_inside - 1] : "");
    sb_printf(b, ",\"EXTERIOR\":");
    sb_str(b, m->medium_outside > 0 ? s->medium_names[m->medium_outside - 1] : "");
}

/* one object for the run of triangles [t0, t1) of one material, over the vertices they use */
static void write_mesh_run(const scene *s, sbuf *b, size_t t0, size_t t1) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t t = t0; t < t1; ++t)
        for (int k = 0; k < 3; ++k) {
            uint32_t v = s->triangles[t].v[k];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    sb_printf(b, "{\"TYPE\":\"mesh\"");
    object_material(s, b, s->triangles[t0].material);
    sb_printf(b, ",\"VERTICES\":[");
    for (uint32_t v = lo; v <= hi; ++v) {
        vec3 p = s->positions[v];
        sb_printf(b, v > lo ? "," : "");
        sb_num(b, p.x);
        sb_printf(b, ",");
        sb_num(b, p.y);
        sb_printf(b, ",");
        sb_num(b, p.z);
    }
    sb_printf(b, "]");
    if (s->has_normals) {
        sb_printf(b, ",\"NORMALS\":[");
        for (uint32_t v = lo; v <= hi; ++v) {
            vec3 n = s->normals[v];
            sb_printf(b, v > lo ? "," : "");
            sb_num(b, n.x);
            sb_printf(b, ",");
            sb_num(b, n.y);
            sb_printf(b, ",");
            sb_num(b, n.z);
        }
        sb_printf(b, "]");
    }
    if (s->has_uvs) {
        sb_printf(b, ",\"UVS\":[");
        for (uint32_t v = lo; v <= hi; ++v) {
            sb_printf(b, v > lo ? "," : "");
            sb_num(b, s->uvs[v].x);
            sb_printf(b, ",");
            sb_num(b, s->uvs[v].y);
        }
        sb_printf(b, "]");
    }
    sb_printf(b, ",\"INDICES\":[");
    for (size_t t = t0; t < t1; ++t)
        sb_printf(b, "%s%u,%u,%u", t > t0 ? "," : "", s->triangles[t].v[0] - lo, s->triangles[t].v[1] - lo,
                  s->triangles[t].v[2] - lo);
    sb_printf(b, "]}");
}

static void write_matrix(sbuf *b, const xform *m) {
    sb_printf(b, ",\"MATRIX\":[");
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) {
            sb_printf(b, r || c ? "," : "");
            sb_num(b, m->m[r][c]);
        }
    sb_printf(b, ",0,0,0,1]");
}

int scene_to_json(const scene *s, const char *json_path, char **out, char *err, size_t errlen) {
    *out = NULL;
    dumper D = {s, json_path, NULL, NULL, err, errlen};
    sbuf b = {NULL, 0, 0, 0};
    int rc = -1;
    size_t len = strlen(json_path);
    D.stem = malloc(len + 1);
    D.tex_written = calloc(s->ntextures + 1, sizeof *D.tex_written);
    if (!D.stem || !D.tex_written) {
        snprintf(err, errlen, "%s: out of memory", json_path);
        goto done;
    }
    memcpy(D.stem, json_path, len + 1);
    char *dot = strrchr(D.stem, '.');
    if (dot && !strchr(dot, '/')) *dot = '\0';
    for (size_t i = 0; i < s->npunctual; ++i)
        if (!light_kind_name(s->punctual[i].kind) || s->punctual[i].kind == LIGHT_AREA) {
            refuse(&D, "a light of kind %d", (int)s->punctual[i].kind);
            goto done;
        }
    sb_printf(&b, "{\n");
    write_camera(s, &b);
    if (s->env_tex >= 0 || vmaxc(s->env_radiance) > 0.0f) {
        sb_printf(&b, ",\n\"Environment\":{\"RGB\":");
        sb_vec(&b, s->env_radiance);
        sb_printf(&b, ",\"EMITTANCE\":1");
        if (s->env_tex >= 0) {
            char name[1024];
            if (s->textures[s->env_tex].kind != TEX_IMAGE) {
                refuse(&D, "an environment that is not an image");
                goto done;
            }
            if (write_image(&D, s->env_tex, name, sizeof name)) goto done;
            sb_printf(&b, ",\"FILE\":");
            sb_str(&b, name);
        }
        sb_printf(&b, "}");
    }
    if (s->npunctual) {
        sb_printf(&b, ",\n\"Lights\":[");
        for (size_t i = 0; i < s->npunctual; ++i) {
            const light *l = &s->punctual[i];
            sb_printf(&b, "%s{\"TYPE\":\"%s\"", i ? ",\n" : "", light_kind_name(l->kind));
            key_vec(&b, l->kind == LIGHT_DIRECTIONAL ? "DIRECTION" : "POSITION", l->p);
            if (l->kind == LIGHT_SPOT) { /* the cone's angles back in degrees */
                key_vec(&b, "DIRECTION", l->axis);
                key_num(&b, "INNER_ANGLE", (float)(acos((double)l->cos_inner) * 180.0 / 3.14159265358979323846));
                key_num(&b, "OUTER_ANGLE",
                        fminf(90.0f, (float)(acos((double)l->cos_outer) * 180.0 / 3.14159265358979323846)));
                if (l->falloff != SPOT_FALLOFF_GLTF)
                    sb_printf(&b, ",\"FALLOFF\":\"%s\"", spot_falloff_name(l->falloff));
            }
            key_vec(&b, "RGB", l->intensity);
            sb_printf(&b, "}");
        }
        sb_printf(&b, "]");
    }
    if (write_media(&D, &b)) goto done;
    sb_printf(&b, ",\n\"Materials\":{");
    for (size_t i = 0; i < s->nmaterials; ++i) {
        sb_printf(&b, i ? ",\n" : "\n");
        if (write_material(&D, &b, (int)i)) goto done;
    }
    sb_printf(&b, "},\n\"Objects\":[");
    int first = 1;
    for (size_t t0 = 0; t0 < s->ntriangles;) {
        size_t t1 = t0 + 1;
        while (t1 < s->ntriangles && s->triangles[t1].material == s->triangles[t0].material) t1++;
        sb_printf(&b, first ? "\n" : ",\n");
        first = 0;
        write_mesh_run(s, &b, t0, t1);
        t0 = t1;
    }
    for (size_t i = 0; i < s->nspheres; ++i) {
        sb_printf(&b, first ? "\n" : ",\n");
        first = 0;
        sb_printf(&b, "{\"TYPE\":\"sphere\"");
        object_material(s, &b, s->spheres[i].material);
        write_matrix(&b, &s->spheres[i].to_world);
        sb_printf(&b, "}");
    }
    for (size_t i = 0; i < s->nquads; ++i) {
        const quad *q = &s->quads[i];
        sb_printf(&b, first ? "\n" : ",\n");
        first = 0;
        sb_printf(&b, "{\"TYPE\":\"quad\"");
        object_material(s, &b, q->material);
        key_vec(&b, "ORIGIN", q->o);
        key_vec(&b, "U", q->u);
        key_vec(&b, "V", q->v);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "\n]\n}\n");
    if (b.oom) {
        snprintf(err, errlen, "%s: out of memory", json_path);
        goto done;
    }
    *out = b.p;
    b.p = NULL;
    rc = 0;
done:
    free(b.p);
    free(D.stem);
    free(D.tex_written);
    return rc;
}
