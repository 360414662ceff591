/* Scene builder: growable arrays, materials, media, textures, transforms and primitive helpers.
 * Their preparation for the kernel (light table, environment distribution, BVH, the flat kscene,
 * the camera) is scene_prepare.c's. */
#include "scene/scene.h"
#include "kernel/media/grid.h"
#include "image/image.h"
#include "util/array.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MATERIAL_NAME_ROW(kind, stem, name, PUBLIC) [kind] = name,
#define PRIM_NAME_ROW(kind, name)                   [kind] = name,
#define LIGHT_NAME_ROW(kind, name)                  [kind] = name,
static const char *const material_names[] = {MATERIAL_KINDS(MATERIAL_NAME_ROW)};
static const char *const prim_names[] = {PRIM_KINDS(PRIM_NAME_ROW)};
static const char *const light_names[] = {LIGHT_KINDS(LIGHT_NAME_ROW)};
static const char *const spot_falloff_names[] = {SPOT_FALLOFFS(LIGHT_NAME_ROW)};
_Static_assert(sizeof material_names / sizeof *material_names == MAT_KIND_COUNT, "a name per material kind");
_Static_assert(sizeof prim_names / sizeof *prim_names == PRIM_KIND_COUNT, "a name per primitive kind");
_Static_assert(sizeof light_names / sizeof *light_names == LIGHT_KIND_COUNT, "a name per light kind");
_Static_assert(sizeof spot_falloff_names / sizeof *spot_falloff_names == SPOT_FALLOFF_COUNT, "a name per falloff");
const char *material_kind_name(int k) { return k >= 0 && k < MAT_KIND_COUNT ? material_names[k] : NULL; }
const char *prim_kind_name(int k) { return k >= 0 && k < PRIM_KIND_COUNT ? prim_names[k] : NULL; }
const char *light_kind_name(int k) { return k >= 0 && k < LIGHT_KIND_COUNT ? light_names[k] : NULL; }
const char *spot_falloff_name(int k) { return k >= 0 && k < SPOT_FALLOFF_COUNT ? spot_falloff_names[k] : NULL; }

void scene_warn(const scene *s, const char *fmt, ...) {
    if (!s || !s->warn) return;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    text_one_line(msg);
    s->warn(s->warn_user, msg);
}

scene *scene_create(void) {
    scene *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->camera.eye = v3(0, 0, 5);
    s->camera.lookat = v3(0, 0, 0);
    s->camera.up = v3(0, 1, 0);
    s->camera.fovy_deg = 45.0f;
    s->camera.width = 800;
    s->camera.height = 800;
    s->spp = 256;
    s->max_depth = 8;
    s->env_tex = -1;
    return s;
}

void scene_destroy(scene *s) {
    if (!s) return;
    free(s->triangles);
    free(s->positions);
    free(s->normals);
    free(s->uvs);
    free(s->tangents);
    free(s->spheres);
    free(s->quads);
    free(s->materials);
    for (size_t i = 0; i < s->nmaterials; ++i) free(s->material_names[i]);
    free(s->material_names);
    free(s->textures);
    free(s->texels);
    free(s->texels8);
    free(s->texel8_lut);
    free(s->output_name);
    bvh_free(&s->bvh);
    for (int i = 0; i < s->nbvh_cache; ++i) bvh_free(&s->bvh_cache[i]);
    free(s->lights);
    free(s->light_cdf);
    free(s->prim_light);
    free(s->light_nodes);
    free(s->light_trail);
    free(s->punctual);
    free(s->env_cdf_rows);
    free(s->env_cdf_cols);
    free(s->media);
    for (size_t i = 0; i < s->nmedia; ++i) free(s->medium_names[i]);
    free(s->medium_names);
    free(s->meshes);
    free(s->placements);
    free(s->instances);
    free(s->instance_mesh);
    free(s->voxels);
    free(s->nanovdb);
    free(s);
}

int scene_find_material(const scene *s, const char *name) {
    for (size_t i = 0; i < s->nmaterials; ++i)
        if (strcmp(s->material_names[i], name) == 0) return (int)i;
    return -1;
}

int scene_add_material(scene *s, const char *name, material m) {
    if (scene_find_material(s, name) >= 0) return -1;
    if (GROW(s->materials, s->cap_materials, s->nmaterials + 1)) return -1;
    size_t cap_names = s->cap_materials;
    char **names = realloc(s->material_names, cap_names * sizeof(char *));
    if (!names) return -1;
    s->material_names = names;
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, name, len + 1);
    s->materials[s->nmaterials] = m;
    s->material_names[s->nmaterials] = copy;
    return (int)s->nmaterials++;
}

int scene_find_medium(const scene *s, const char *name) {
    for (size_t i = 0; i < s->nmedia; ++i)
        if (strcmp(s->medium_names[i], name) == 0) return (int)i;
    return -1;
}

static int add_medium(scene *s, const char *name, medium m) {
    vec3 c[3] = {m.sigma_a, m.sigma_s, m.emission};
    for (int i = 0; i < 3; ++i)
        if (!vis_finite(c[i]) || c[i].x < 0.0f || c[i].y < 0.0f || c[i].z < 0.0f) return -1;
    if (!(fabsf(m.g) < 1.0f) || m.kind < 0 || m.kind >= MEDIUM_KIND_COUNT) return -1;
    if (scene_find_medium(s, name) >= 0) return -1;
    if (GROW(s->media, s->cap_media, s->nmedia + 1)) return -1;
    char **names = realloc(s->medium_names, s->cap_media * sizeof(char *));
    if (!names) return -1;
    s->medium_names = names;
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, name, len + 1);
    if (m.kind == MEDIUM_HOMOGENEOUS) m.majorant = vmaxc(vadd(m.sigma_a, m.sigma_s));
    s->media[s->nmedia] = m;
    s->medium_names[s->nmedia] = copy;
    return (int)s->nmedia++;
}
int scene_add_medium(scene *s, const char *name, medium m) {
    if (m.kind != MEDIUM_HOMOGENEOUS) return -1; /* grids: scene_add_grid_medium, scene_add_nanovdb_medium */
    return add_medium(s, name, m);
}

float *scene_reserve_voxels(scene *s, size_t n) {
    if (n > (size_t)UINT32_MAX - s->nvoxels) return NULL;
    if (GROW(s->voxels, s->cap_voxels, s->nvoxels + n)) return NULL;
    return s->voxels + s->nvoxels;
}
void scene_commit_voxels(scene *s, size_t n) { s->nvoxels += n; }

/* The voxel range [lo, hi] (clamped to n voxels) a trilinear lookup can read anywhere in grid
 * coordinates [a, b] of the unit cube (media/grid.h, grid_axis). */
static void grid_support(double a, double b, uint32_t n, uint32_t *lo, uint32_t *hi) {
    double va = a * n - 0.5, vb = b * n - 0.5;
    long l = (long)floor(va), h = (long)floor(vb) + 1;
    *lo = (uint32_t)(l < 0 ? 0 : (l > (long)n - 1 ? (long)n - 1 : l));
    *hi = (uint32_t)(h < 0 ? 0 : (h > (long)n - 1 ? (long)n - 1 : h));
}

size_t scene_majorant_res(medium *m) {
    size_t nm = 1;
    for (int a = 0; a < 3; ++a) {
        uint32_t r = (m->res[a] + GRID_MAJORANT_VOXELS - 1) / GRID_MAJORANT_VOXELS;
        m->mres[a] = r < GRID_MAJORANT_MAX_RES ? r : GRID_MAJORANT_MAX_RES;
        nm *= m->mres[a];
    }
    return nm;
}

int scene_add_grid_medium(scene *s, const char *name, medium m) {
    if (m.kind != MEDIUM_GRID) return -1;
    uint64_t nv = 1;
    for (int a = 0; a < 3; ++a) {
        if (m.res[a] == 0) return -1;
        nv *= m.res[a];
    }
    if (nv > s->nvoxels || m.density_grid > s->nvoxels - nv) return -1;
    if (m.albedo_grid != MEDIUM_NO_GRID && (3 * nv > s->nvoxels || m.albedo_grid > s->nvoxels - 3 * nv)) return -1;
    for (int i = 0; i < 12; ++i)
        if (!isfinite(m.to_grid[i])) return -1;
    const float *d = s->voxels + m.density_grid;
    for (uint64_t i = 0; i < nv; ++i)
        if (!(d[i] >= 0.0f) || !isfinite(d[i])) return -1;
    if (m.albedo_grid != MEDIUM_NO_GRID)
        for (uint64_t i = 0; i < 3 * nv; ++i)
            if (!isfinite(s->voxels[m.albedo_grid + i])) return -1;
    size_t nm = scene_majorant_res(&m);
    float *mg = scene_reserve_voxels(s, nm);
    if (!mg) return -1;
    d = s->voxels + m.density_grid; /* reserving may have moved the voxels */
    float dmax = 0.0f;
    for (uint32_t cz = 0; cz < m.mres[2]; ++cz)
        for (uint32_t cy = 0; cy < m.mres[1]; ++cy)
            for (uint32_t cx = 0; cx < m.mres[0]; ++cx) {
                uint32_t lo[3], hi[3], c[3] = {cx, cy, cz};
                for (int a = 0; a < 3; ++a)
                    grid_support((double)c[a] / m.mres[a], (double)(c[a] + 1) / m.mres[a], m.res[a], &lo[a], &hi[a]);
                float mx = 0.0f;
                for (uint32_t z = lo[2]; z <= hi[2]; ++z)
                    for (uint32_t y = lo[1]; y <= hi[1]; ++y)
                        for (uint32_t x = lo[0]; x <= hi[0]; ++x) {
                            float v = d[((size_t)z * m.res[1] + y) * m.res[0] + x];
                            mx = v > mx ? v : mx;
                        }
                mg[((size_t)cz * m.mres[1] + cy) * m.mres[0] + cx] = mx;
                dmax = mx > dmax ? mx : dmax;
            }
    m.majorant_grid = (uint32_t)s->nvoxels;
    m.majorant = dmax * vmaxc(vadd(m.sigma_a, m.sigma_s));
    scene_commit_voxels(s, nm);
    int i = add_medium(s, name, m);
    if (i < 0) s->nvoxels -= nm;
    return i;
}

uint32_t *scene_reserve_nanovdb(scene *s, size_t nwords, size_t *off) {
    size_t o = (s->nnanovdb + 7u) & ~(size_t)7u;
    if (nwords > (size_t)UINT32_MAX || o > (size_t)UINT32_MAX - nwords) return NULL;
    if (GROW(s->nanovdb, s->cap_nanovdb, o + nwords)) return NULL;
    memset(s->nanovdb + s->nnanovdb, 0, (o - s->nnanovdb) * sizeof(uint32_t));
    *off = o;
    return s->nanovdb + o;
}
void scene_commit_nanovdb(scene *s, size_t end) { s->nnanovdb = end; }

int scene_add_nanovdb_medium(scene *s, const char *name, medium m) {
    if (m.kind != MEDIUM_NANOVDB || m.density_grid >= s->nnanovdb || (m.density_grid & 7u)) return -1;
    m.albedo_grid = MEDIUM_NO_GRID;
    uint64_t nm = 1;
    for (int a = 0; a < 3; ++a) {
        if (m.res[a] == 0 || m.mres[a] == 0) return -1;
        nm *= m.mres[a];
    }
    if (nm > s->nvoxels || m.majorant_grid > s->nvoxels - nm) return -1;
    for (int i = 0; i < 12; ++i)
        if (!isfinite(m.to_grid[i])) return -1;
    float dmax = 0.0f;
    for (uint64_t i = 0; i < nm; ++i) {
        float v = s->voxels[m.majorant_grid + i];
        if (!(v >= 0.0f) || !isfinite(v)) return -1;
        dmax = v > dmax ? v : dmax;
    }
    m.majorant = dmax * vmaxc(vadd(m.sigma_a, m.sigma_s));
    return add_medium(s, name, m);
}

/* The copy of material mat bound to media (inside, outside), made once. */
static int32_t bound_material(scene *s, int32_t mat, int inside, int outside) {
    if (mat < 0) return mat;
    material m = s->materials[mat];
    if (inside < 0) inside = m.medium_inside;
    if (m.medium_inside == inside && m.medium_outside == outside) return mat;
    char name[600];
    snprintf(name, sizeof name, "%.500s|%d|%d", s->material_names[mat], inside, outside);
    int found = scene_find_material(s, name);
    if (found >= 0) return found;
    m.medium_inside = inside;
    m.medium_outside = outside;
    return scene_add_material(s, name, m);
}

int scene_bind_media(scene *s, size_t first_triangle, size_t first_sphere, size_t first_quad, int inside, int outside) {
    int32_t last = -2, bound = -1;
    for (size_t i = first_triangle; i < s->ntriangles; ++i) {
        if (s->triangles[i].material != last) {
            last = s->triangles[i].material;
            bound = bound_material(s, last, inside, outside);
            if (bound < 0 && last >= 0) return -1;
        }
        s->triangles[i].material = bound;
    }
    for (size_t i = first_sphere; i < s->nspheres; ++i) {
        int32_t b = bound_material(s, s->spheres[i].material, inside, outside);
        if (b < 0) return -1;
        s->spheres[i].material = b;
    }
    for (size_t i = first_quad; i < s->nquads; ++i) {
        int32_t b = bound_material(s, s->quads[i].material, inside, outside);
        if (b < 0) return -1;
        s->quads[i].material = b;
    }
    return 0;
}

int scene_add_texture(scene *s, texture t, const float *texels) {
    if (GROW(s->textures, s->cap_textures, s->ntextures + 1)) return -1;
    if (texels) {
        size_t n = (size_t)t.width * (size_t)t.height * 3u;
        if (GROW(s->texels, s->cap_texels, s->ntexels + n)) return -1;
        if (texels != s->texels + s->ntexels) /* not already in place (scene_take_image_texture) */
            memcpy(s->texels + s->ntexels, texels, n * sizeof(float));
        t.offset = (uint32_t)s->ntexels;
        s->ntexels += n;
    }
    s->textures[s->ntextures] = t;
    return (int)s->ntextures++;
}

/* An image texture's record; its two colours (what a lookup outside the image and the
 * light-sampling estimates use) are the image's mean, from the texel sums of its `pixels`. */
static texture image_texture(int width, int height, const double sum[3], size_t pixels) {
    texture t;
    memset(&t, 0, sizeof t);
    t.kind = TEX_IMAGE;
    t.width = width;
    t.height = height;
    t.scale = 1.0f;
    double np = pixels ? (double)pixels : 1.0;
    t.a = v3((float)(sum[0] / np), (float)(sum[1] / np), (float)(sum[2] / np));
    t.b = t.a;
    return t;
}

int scene_add_image_texture(scene *s, int width, int height, const float *rgb) {
    size_t n = (size_t)width * (size_t)height * 3u;
    if (s->ntexels + n > (size_t)UINT32_MAX) return -2;
    double sum[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i += 3)
        for (int c = 0; c < 3; ++c) sum[c] += rgb[i + (size_t)c];
    return scene_add_texture(s, image_texture(width, height, sum, n / 3u), rgb);
}

int scene_take_image_texture(scene *s, image *img) {
    if (s->cap_texels == 0 && img->rgb) { /* the first float image becomes the store: no copy */
        s->texels = img->rgb;
        s->cap_texels = (size_t)img->width * (size_t)img->height * 3u;
        img->rgb = NULL;
    }
    int idx = scene_add_image_texture(s, img->width, img->height, img->rgb ? img->rgb : s->texels);
    image_free(img);
    return idx;
}

unsigned char *scene_reserve_texels8(void *sv, int width, int height) {
    scene *s = sv;
    size_t n = (size_t)width * (size_t)height * 3u;
    if (width <= 0 || height <= 0 || s->ntexels8 + n > (size_t)UINT32_MAX) return NULL;
    if (GROW(s->texels8, s->cap_texels8, s->ntexels8 + n)) return NULL;
    return s->texels8 + s->ntexels8;
}

int scene_add_image_texture8(scene *s, int width, int height, int encoding) {
    size_t n = (size_t)width * (size_t)height * 3u;
    if (!s->texel8_lut) {
        s->texel8_lut = malloc(TEXEL8_LUT_SIZE * sizeof(float));
        if (!s->texel8_lut) return -1;
        memcpy(s->texel8_lut, image_srgb8_table(), 256 * sizeof(float));
        /* the expression glTF's float textures used, so that linear maps look up the same values */
        for (int i = 0; i < 256; ++i) s->texel8_lut[256 + i] = (float)i / 255.0f;
    }
    const float *lut = s->texel8_lut + 256 * (encoding - TEXEL8_SRGB);
    const uint8_t *rgb8 = s->texels8 + s->ntexels8;
    double sum[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i += 3)
        for (int c = 0; c < 3; ++c) sum[c] += lut[rgb8[i + (size_t)c]];
    texture t = image_texture(width, height, sum, n / 3u);
    t.texel8 = encoding;
    t.offset = (uint32_t)s->ntexels8;
    if (GROW(s->textures, s->cap_textures, s->ntextures + 1)) return -1;
    s->ntexels8 += n;
    s->textures[s->ntextures] = t;
    return (int)s->ntextures++;
}

vec3 scene_texel(const scene *s, const texture *t, size_t i) {
    if (t->texel8) {
        const uint8_t *q = s->texels8 + t->offset + 3 * i;
        const float *lut = s->texel8_lut + 256 * (t->texel8 - TEXEL8_SRGB);
        return v3(lut[q[0]], lut[q[1]], lut[q[2]]);
    }
    const float *p = s->texels + t->offset + 3 * i;
    return v3(p[0], p[1], p[2]);
}

/* ---- transforms ---------------------------------------------------------------------------- */
xform xform_identity(void) {
    xform x;
    memset(&x, 0, sizeof(x));
    x.m[0][0] = x.m[1][1] = x.m[2][2] = 1.0f;
    return x;
}

xform xform_mul(const xform *a, const xform *b) {
    xform r;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
            float v = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] + a->m[i][2] * b->m[2][j];
            r.m[i][j] = v + (j == 3 ? a->m[i][3] : 0.0f);
        }
    }
    return r;
}

static xform rotation_axis(int axis, float deg) {
    xform r = xform_identity();
    double a = (double)deg * 3.14159265358979323846 / 180.0;
    float c = (float)cos(a), s = (float)sin(a);
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    r.m[i][i] = c;
    r.m[i][j] = -s;
    r.m[j][i] = s;
    r.m[j][j] = c;
    return r;
}

xform xform_trs(vec3 t, vec3 r, vec3 sc) {
    xform m = rotation_axis(0, r.x);
    xform ry = rotation_axis(1, r.y), rz = rotation_axis(2, r.z);
    m = xform_mul(&m, &ry);
    m = xform_mul(&m, &rz);
    for (int i = 0; i < 3; ++i) {
        m.m[i][0] *= sc.x;
        m.m[i][1] *= sc.y;
        m.m[i][2] *= sc.z;
    }
    m.m[0][3] = t.x;
    m.m[1][3] = t.y;
    m.m[2][3] = t.z;
    return m;
}

int xform_invert(const xform *x, xform *inv) {
    double a[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a[i][j] = x->m[i][j];
    double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    if (!(fabs(det) > 1e-30) || !isfinite(det)) return -1;
    double id = 1.0 / det, r[3][3];
    r[0][0] = (a[1][1] * a[2][2] - a[1][2] * a[2][1]) * id;
    r[0][1] = (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * id;
    r[0][2] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * id;
    r[1][0] = (a[1][2] * a[2][0] - a[1][0] * a[2][2]) * id;
    r[1][1] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * id;
    r[1][2] = (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * id;
    r[2][0] = (a[1][0] * a[2][1] - a[1][1] * a[2][0]) * id;
    r[2][1] = (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * id;
    r[2][2] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * id;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) inv->m[i][j] = (float)r[i][j];
        inv->m[i][3] = (float)-(r[i][0] * x->m[0][3] + r[i][1] * x->m[1][3] + r[i][2] * x->m[2][3]);
    }
    return 0;
}

/* ---- primitives ------------------------------------------------------------------------------ */
/* Surface area of the ellipsoid with semi-axes a, b, c (Knud Thomsen's formula, <= 1.1% error).
 * Used only to weight light selection, so the approximation costs variance, never bias. */
static float ellipsoid_area(const xform *m) {
    /* semi-axes: singular values of the linear part times 0.5; approximate by column lengths,
     * exact for T*R*S transforms */
    double ax[3];
    for (int j = 0; j < 3; ++j)
        ax[j] = 0.5 * sqrt((double)m->m[0][j] * m->m[0][j] + (double)m->m[1][j] * m->m[1][j] +
                           (double)m->m[2][j] * m->m[2][j]);
    const double p = 1.6075;
    double t = (pow(ax[0] * ax[1], p) + pow(ax[0] * ax[2], p) + pow(ax[1] * ax[2], p)) / 3.0;
    return (float)(4.0 * 3.14159265358979323846 * pow(t, 1.0 / p));
}

int scene_add_sphere(scene *s, xform to_world, int material) {
    sphere sp;
    sp.to_world = to_world;
    if (xform_invert(&to_world, &sp.to_object)) return -1;
    sp.area = ellipsoid_area(&to_world);
    sp.material = material;
    if (GROW(s->spheres, s->cap_spheres, s->nspheres + 1)) return -1;
    s->spheres[s->nspheres++] = sp;
    return 0;
}

/* out = a x b in double (scene_add_quad's (s, t) vectors) */
static void cross_d(const double a[3], const double b[3], double out[3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

int scene_add_quad(scene *s, vec3 o, vec3 u, vec3 v, int material) {
    vec3 n = vcross(u, v);
    float len = vlen(n);
    if (!(len > 0.0f) || !isfinite(len)) return -1;
    quad q;
    q.o = o;
    q.u = u;
    q.v = v;
    q.n = vscale(n, 1.0f / len);
    /* (s, t) of a point as two dot products (quad.su, quad.sv): (p x v).N = p.(v x N) and
     * (u x p).N = p.(N x u), over |N|^2; in double so that s and t round once, in the test */
    double ud[3] = {u.x, u.y, u.z}, vd[3] = {v.x, v.y, v.z}, nd[3], sd[3], td[3];
    cross_d(ud, vd, nd);
    cross_d(vd, nd, sd);
    cross_d(nd, ud, td);
    double n2 = nd[0] * nd[0] + nd[1] * nd[1] + nd[2] * nd[2];
    q.su = v3((float)(sd[0] / n2), (float)(sd[1] / n2), (float)(sd[2] / n2));
    q.sv = v3((float)(td[0] / n2), (float)(td[1] / n2), (float)(td[2] / n2));
    q.material = material;
    if (GROW(s->quads, s->cap_quads, s->nquads + 1)) return -1;
    s->quads[s->nquads++] = q;
    return 0;
}

static int add_punctual(scene *s, int kind, vec3 p, vec3 intensity) {
    if (!vis_finite(p) || !vis_finite(intensity) || intensity.x < 0.0f || intensity.y < 0.0f || intensity.z < 0.0f)
        return -1;
    light l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.p = p;
    l.intensity = intensity;
    if (GROW(s->punctual, s->cap_punctual, s->npunctual + 1)) return -1;
    s->punctual[s->npunctual++] = l;
    return 0;
}
int scene_add_point_light(scene *s, vec3 position, vec3 intensity) {
    return add_punctual(s, LIGHT_POINT, position, intensity);
}
int scene_add_spot_light(scene *s, vec3 position, vec3 axis, vec3 intensity, float inner_deg, float outer_deg,
                         int falloff) {
    float len = vlen(axis);
    if (!(len > 0.0f) || !isfinite(len) || !(outer_deg > 0.0f) || !(outer_deg <= 90.0f) || !(inner_deg >= 0.0f) ||
        !(inner_deg <= outer_deg) || falloff < 0 || falloff >= SPOT_FALLOFF_COUNT)
        return -1;
    if (add_punctual(s, LIGHT_SPOT, position, intensity)) return -1;
    light *l = &s->punctual[s->npunctual - 1];
    l->axis = vscale(axis, 1.0f / len);
    l->cos_inner = cosf(inner_deg * 3.14159265f / 180.0f);
    l->cos_outer = cosf(outer_deg * 3.14159265f / 180.0f);
    l->falloff = falloff;
    return 0;
}
int scene_add_directional_light(scene *s, vec3 direction, vec3 irradiance) {
    float len = vlen(direction);
    if (!(len > 0.0f) || !isfinite(len)) return -1;
    return add_punctual(s, LIGHT_DIRECTIONAL, vscale(direction, 1.0f / len), irradiance);
}

/* The tangent array exists once some mesh has tangents; it grows with the vertex capacity and
 * vertices without a tangent have w = 0. */
static int resize_tangents(scene *s, size_t old_cap) {
    float *t = realloc(s->tangents, s->cap_vertices * 4u * sizeof(float));
    if (!t) return -1;
    if (!s->tangents) old_cap = 0;
    memset(t + 4u * old_cap, 0, (s->cap_vertices - old_cap) * 4u * sizeof(float));
    s->tangents = t;
    return 0;
}

/* Room for nv more vertices (positions, normals and uvs share one capacity) and nt triangles. */
static int reserve_mesh(scene *s, size_t nv, size_t nt) {
    size_t cap = s->cap_vertices;
    if (GROW(s->positions, s->cap_vertices, s->nvertices + nv)) return -1;
    if (s->cap_vertices != cap || !s->normals) {
        vec3 *nn = realloc(s->normals, s->cap_vertices * sizeof(vec3));
        if (!nn) return -1;
        s->normals = nn;
        vec2 *uu = realloc(s->uvs, s->cap_vertices * sizeof(vec2));
        if (!uu) return -1;
        s->uvs = uu;
        if (s->tangents && resize_tangents(s, cap)) return -1;
    }
    return GROW(s->triangles, s->cap_triangles, s->ntriangles + nt);
}

int scene_add_mesh(scene *s, const vec3 *pos, const vec3 *nrm, const vec2 *uv, size_t nverts, const uint32_t *indices,
                   const int *tri_materials, size_t ntris, xform to_world, int material) {
    xform inv;
    if (xform_invert(&to_world, &inv)) return -1;
    if (reserve_mesh(s, nverts, ntris)) return -1;
    size_t base = s->nvertices;
    for (size_t i = 0; i < nverts; ++i) {
        s->positions[base + i] = xform_point(&to_world, pos[i]);
        /* zero normal = "none": the kernel falls back to the geometric normal */
        s->normals[base + i] = nrm ? vnorm(xform_normal_by_inverse(&inv, nrm[i])) : v3s(0.0f);
        if (nrm && !vis_finite(s->normals[base + i])) s->normals[base + i] = v3s(0.0f);
        s->uvs[base + i] = uv ? uv[i] : v2(0.0f, 0.0f);
    }
    if (nrm) s->has_normals = 1;
    if (uv) s->has_uvs = 1;
    s->nvertices += nverts;
    for (size_t t = 0; t < ntris; ++t) {
        triangle tr;
        for (int k = 0; k < 3; ++k) tr.v[k] = (uint32_t)(base + indices[3 * t + (size_t)k]);
        tr.material = tri_materials ? tri_materials[t] : material;
        s->triangles[s->ntriangles++] = tr;
    }
    return 0;
}

int scene_set_tangents(scene *s, size_t v0, const float *tangents, size_t n, xform to_world) {
    if (v0 + n > s->nvertices) return -1;
    if (!s->tangents && resize_tangents(s, 0)) return -1;
    const xform *m = &to_world;
    float det = m->m[0][0] * (m->m[1][1] * m->m[2][2] - m->m[1][2] * m->m[2][1]) -
                m->m[0][1] * (m->m[1][0] * m->m[2][2] - m->m[1][2] * m->m[2][0]) +
                m->m[0][2] * (m->m[1][0] * m->m[2][1] - m->m[1][1] * m->m[2][0]);
    for (size_t i = 0; i < n; ++i) {
        const float *t = tangents + 4u * i;
        vec3 w = xform_vector(&to_world, v3(t[0], t[1], t[2]));
        float l = vlen(w);
        float *d = s->tangents + 4u * (v0 + i);
        if (!(l > 0.0f) || !isfinite(l) || !isfinite(t[3]) || t[3] == 0.0f) {
            d[0] = d[1] = d[2] = d[3] = 0.0f;
            continue;
        }
        d[0] = w.x / l;
        d[1] = w.y / l;
        d[2] = w.z / l;
        /* a mirroring transform flips the handedness */
        d[3] = (t[3] < 0.0f) != (det < 0.0f) ? -1.0f : 1.0f;
    }
    s->has_tangents = 1;
    return 0;
}

int scene_copy_triangles(scene *s, size_t v0, size_t nv, size_t t0, size_t nt, xform m, int material, int reverse) {
    xform m_inv;
    if (xform_invert(&m, &m_inv)) return -1;
    if (reserve_mesh(s, nv, nt)) return -1;
    size_t base = s->nvertices;
    for (size_t i = 0; i < nv; ++i) {
        s->positions[base + i] = xform_point(&m, s->positions[v0 + i]);
        vec3 n = s->normals[v0 + i];
        s->normals[base + i] = vis_black(n) ? n : vnorm(xform_normal_by_inverse(&m_inv, n));
        s->uvs[base + i] = s->uvs[v0 + i];
    }
    s->nvertices += nv;
    if (s->tangents && scene_set_tangents(s, base, s->tangents + 4u * v0, nv, m)) return -1;
    for (size_t t = 0; t < nt; ++t) {
        triangle tr = s->triangles[t0 + t];
        for (int k = 0; k < 3; ++k) tr.v[k] = (uint32_t)(tr.v[k] - v0 + base);
        if (reverse) {
            uint32_t x = tr.v[1];
            tr.v[1] = tr.v[2];
            tr.v[2] = x;
        }
        if (material >= 0) tr.material = material;
        s->triangles[s->ntriangles++] = tr;
    }
    return 0;
}

int scene_instance_mesh(scene *s, size_t v0, size_t nv, size_t t0, size_t nt, xform placed, xform to_world) {
    xform placed_inv;
    if (xform_invert(&placed, &placed_inv)) return -1;
    xform m = xform_mul(&to_world, &placed_inv); /* from the first placement to the new one */
    int mesh = -1;
    for (size_t i = 0; i < s->nmeshes; ++i)
        if (s->meshes[i].t0 == t0 && s->meshes[i].nt == nt) mesh = (int)i;
    if (mesh < 0) { /* the first instance: the range becomes a mesh, placed where it was too */
        mesh = scene_add_instanced_mesh(s, t0, nt, v0, nv);
        if (mesh < 0 || scene_add_instance(s, mesh, xform_identity(), -1, 0)) return -1;
    }
    return scene_add_instance(s, mesh, m, -1, 0);
}

int scene_add_cube(scene *s, xform to_world, int material) {
    /* 8 corners; faces wound counter-clockwise seen from outside so normals point out. */
    static const float c[8][3] = {{-.5f, -.5f, -.5f}, {.5f, -.5f, -.5f}, {.5f, .5f, -.5f}, {-.5f, .5f, -.5f},
                                  {-.5f, -.5f, .5f},  {.5f, -.5f, .5f},  {.5f, .5f, .5f},  {-.5f, .5f, .5f}};
    static const uint32_t idx[36] = {0, 3, 2, 0, 2, 1, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                     3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};
    vec3 p[8];
    for (int i = 0; i < 8; ++i) p[i] = v3(c[i][0], c[i][1], c[i][2]);
    /* A mirroring transform (negative determinant) flips winding: swap to keep faces outward. */
    xform inv;
    if (xform_invert(&to_world, &inv)) return -1;
    const xform *m = &to_world;
    float det = m->m[0][0] * (m->m[1][1] * m->m[2][2] - m->m[1][2] * m->m[2][1]) -
                m->m[0][1] * (m->m[1][0] * m->m[2][2] - m->m[1][2] * m->m[2][0]) +
                m->m[0][2] * (m->m[1][0] * m->m[2][1] - m->m[1][1] * m->m[2][0]);
    uint32_t id2[36];
    for (int i = 0; i < 36; i += 3) {
        id2[i] = idx[i];
        id2[i + 1] = det < 0 ? idx[i + 2] : idx[i + 1];
        id2[i + 2] = det < 0 ? idx[i + 1] : idx[i + 2];
    }
    return scene_add_mesh(s, p, NULL, NULL, 8, id2, NULL, 12, to_world, material);
}

/* ---- image memory budgets ------------------------------------------------------------------ */
int scene_textures_memory_check(const scene *s, const char *name, char *err, size_t errlen) {
    double bytes = (double)s->ntexels8 + 4.0 * (double)s->ntexels;
    return image_memory_fits(bytes, name, "the scene's textures with this one", "in all", err, errlen);
}

int scene_env_memory_check(const scene *s, int tex, const char *name, char *err, size_t errlen) {
    const texture *t = &s->textures[tex];
    double w = (double)t->width, h = (double)t->height;
    double texels = w * h * 3.0 * (t->texel8 ? 1.0 : 4.0);
    /* build_env_distribution's: the two cdfs and a double per row while building them */
    double tables = ((h + 1.0) + h * (w + 1.0)) * (double)sizeof(float) + h * (double)sizeof(double);
    char what[160];
    snprintf(what, sizeof what, "a %dx%d environment map (%s)", t->width, t->height, t->texel8 ? "8-bit" : "float");
    return image_memory_fits(texels + tables, name, what, "with its sampling tables", err, errlen);
}
