/* The Mitsuba XML reader (src/import/mitsuba.c): small hand-written scenes per feature and per
 * error, loaded through scene_load_file (so the table of formats picks the reader), and
 * `test_mitsuba corpus DIR`: every mi3-* / mi05-* scene of ../shared/scenes-real loads and
 * renders small; its mean is printed next to Mitsuba's reference (ref-mitsuba.exr). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "image/image.h"
#include "import/import.h"
#include "import/mitsuba_internal.h"
#include "scene/material.h"
#include "scene/scene.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int failures;
#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                                      \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static char dir[256];
static char warnings[8192];
static int nwarnings;

static void on_warn(void *user, const char *msg) {
    (void)user;
    nwarnings++;
    size_t n = strlen(warnings);
    snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
}

static void put(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        perror(p);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* Loads NAME from the temp dir: 0 and *out, or -1 with err. */
static int load(const char *name, scene **out, char *err, size_t errlen, int strict, const char *const *defs, int nd) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    warnings[0] = '\0';
    nwarnings = 0;
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    o.strict = strict;
    o.warn = on_warn;
    o.defines = defs;
    o.ndefines = nd;
    return scene_load_file(out, p, &o, err, errlen);
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

#define SENSOR                                                                                                         \
    "<sensor type=\"perspective\"><float name=\"fov\" value=\"90\"/><string name=\"fov_axis\" value=\"y\"/>"           \
    "<transform name=\"to_world\"><lookat origin=\"0,0,5\" target=\"0,0,0\" up=\"0,1,0\"/></transform>"                \
    "<film type=\"hdrfilm\"><integer name=\"width\" value=\"64\"/><integer name=\"height\" value=\"32\"/></film>"      \
    "<sampler type=\"independent\"><integer name=\"sample_count\" value=\"$spp\"/></sampler></sensor>"

static void test_basic(void) {
    put("basic.xml", "<scene version=\"3.0.0\">\n"
                     "<default name=\"spp\" value=\"7\"/>\n"
                     "<integrator type=\"path\"><integer name=\"max_depth\" value=\"5\"/></integrator>\n" SENSOR "\n"
                     "<bsdf type=\"diffuse\" id=\"red\"><rgb name=\"reflectance\" value=\"0.8, 0.1, 0.1\"/></bsdf>\n"
                     "<shape type=\"rectangle\"><ref id=\"red\"/>\n"
                     "  <transform name=\"to_world\"><scale x=\"2\"/><translate z=\"-1\"/></transform></shape>\n"
                     "<shape type=\"sphere\"><point name=\"center\" x=\"1\" y=\"2\" z=\"3\"/>"
                     "<float name=\"radius\" value=\"0.5\"/>"
                     "<emitter type=\"area\"><spectrum name=\"radiance\" value=\"4\"/></emitter></shape>\n"
                     "<shape type=\"cube\"><bsdf type=\"dielectric\"><string name=\"int_ior\" value=\"diamond\"/>"
                     "<string name=\"ext_ior\" value=\"vacuum\"/></bsdf></shape>\n"
                     "<emitter type=\"point\"><point name=\"position\" value=\"0,3,0\"/>"
                     "<rgb name=\"intensity\" value=\"10\"/></emitter>\n"
                     "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("basic.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "basic: %s\n", err);
        return;
    }
    CHECK(s->spp == 7);
    CHECK(s->max_depth == 4); /* Mitsuba's max_depth 5 counts segments: 4 bounces */
    CHECK(s->camera.width == 64 && s->camera.height == 32);
    CHECK(near(s->camera.fovy_deg, 90.0, 1e-4));
    CHECK(near(s->camera.eye.z, 5, 1e-6) && near(s->camera.lookat.z, 4, 1e-6));
    CHECK(s->nquads == 1 && s->nspheres == 1 && s->ntriangles == 12 && s->npunctual == 1);
    /* rectangle [-1,1]^2 scaled x2 in x, then moved to z = -1: u spans 4 along x */
    CHECK(near(s->quads[0].o.x, -2, 1e-6) && near(s->quads[0].o.z, -1, 1e-6) && near(s->quads[0].u.x, 4, 1e-6));
    CHECK(near(s->quads[0].n.z, 1, 1e-6));
    int red = -1, glass = -1, emit = -1;
    for (size_t i = 0; i < s->nmaterials; ++i) {
        if (s->materials[i].kind == MAT_DIFFUSE && near(s->materials[i].albedo.x, 0.8, 1e-6)) red = (int)i;
        if (s->materials[i].kind == MAT_DIELECTRIC) glass = (int)i;
        if (s->materials[i].emission.x > 0) emit = (int)i;
    }
    CHECK(red >= 0 && glass >= 0 && emit >= 0);
    if (glass >= 0) CHECK(near(s->materials[glass].ior, 2.419, 1e-5));
    if (emit >= 0) CHECK(near(s->materials[emit].emission.y, 4, 1e-6) && s->materials[emit].two_sided == 0);
    /* sphere of radius 0.5 at (1,2,3): caustic's unit-diameter sphere scaled by 1 */
    CHECK(near(s->spheres[0].to_world.m[0][3], 1, 1e-6) && near(s->spheres[0].to_world.m[0][0], 1, 1e-6));
    scene_destroy(s);

    /* a spot keeps Mitsuba's falloff (linear in the angle from beam_width to cutoff_angle) */
    put("spot.xml", "<scene version=\"3.0.0\"><default name=\"spp\" value=\"4\"/>" SENSOR
                    "<emitter type=\"spot\"><float name=\"cutoff_angle\" value=\"30\"/>"
                    "<float name=\"beam_width\" value=\"10\"/><rgb name=\"intensity\" value=\"1\"/></emitter>"
                    "<shape type=\"rectangle\"/></scene>\n");
    rc = load("spot.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0 && s->npunctual == 1 && s->punctual[0].falloff == SPOT_FALLOFF_LINEAR_ANGLE &&
          near(s->punctual[0].cos_inner, cos(10 * 3.14159265358979 / 180), 1e-5));
    if (!rc) scene_destroy(s);

    /* -D overrides the default; fov_axis x converts to the vertical angle */
    const char *defs[] = {"spp=3"};
    rc = load("basic.xml", &s, err, sizeof err, 0, defs, 1);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(s->spp == 3 && nwarnings == 0);
        scene_destroy(s);
    }
    const char *typo[] = {"sp=3"};
    rc = load("basic.xml", &s, err, sizeof err, 0, typo, 1);
    CHECK(rc == 0 && strstr(warnings, "-D sp: the scene has no $sp"));
    if (rc == 0) scene_destroy(s);
}

static void test_transforms_fov(void) {
    put("xf.xml", "<scene version=\"3.0.0\">\n"
                  "<sensor type=\"thinlens\"><float name=\"fov\" value=\"60\"/>"
                  "<float name=\"aperture_radius\" value=\"0.1\"/><float name=\"focus_distance\" value=\"4\"/>"
                  "<film type=\"hdrfilm\"><integer name=\"width\" value=\"200\"/>"
                  "<integer name=\"height\" value=\"100\"/></film></sensor>\n"
                  /* translate then rotate 90 about z: (1,0,0) -> (0,1,0) */
                  "<shape type=\"sphere\"><transform name=\"to_world\"><translate x=\"1\"/>"
                  "<rotate z=\"1\" angle=\"90\"/></transform></shape>\n"
                  "<shape type=\"sphere\"><transform name=\"to_world\">"
                  "<matrix value=\"1 0 0 5  0 1 0 6  0 0 1 7  0 0 0 1\"/></transform></shape>\n"
                  "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("xf.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "xf: %s\n", err);
        return;
    }
    CHECK(near(s->spheres[0].to_world.m[0][3], 0, 1e-5) && near(s->spheres[0].to_world.m[1][3], 1, 1e-5));
    CHECK(near(s->spheres[1].to_world.m[2][3], 7, 1e-6));
    /* fov 60 along x at 2:1 -> vertical 2 atan(tan 30 / 2) */
    double want = 2 * atan(tan(30 * K_PI / 180) / 2) * 180 / K_PI;
    CHECK(near(s->camera.fovy_deg, want, 1e-3));
    CHECK(near(s->camera.aperture_radius, 0.1, 1e-6) && near(s->camera.focus_distance, 4, 1e-6));
    CHECK(s->max_depth == 1024 && s->spp == 4); /* Mitsuba's defaults: max_depth -1, 4 samples */
    scene_destroy(s);
}

static void test_include_upgrade_warnings(void) {
    put("inc_part.xml", "<scene version=\"3.0.0\"><default name=\"col\" value=\"0.25\"/>\n"
                        "<bsdf type=\"roughconductor\" id=\"gold\"><string name=\"material\" value=\"Au\"/>"
                        "<float name=\"alpha\" value=\"0.04\"/><string name=\"distribution\" value=\"ggx\"/></bsdf>\n"
                        "</scene>\n");
    put("old.xml", "<scene version=\"0.5.0\">\n"
                   "<integrator type=\"path\"><integer name=\"maxDepth\" value=\"3\"/></integrator>\n"
                   "<sensor type=\"perspective\"><float name=\"fov\" value=\"45\"/>"
                   "<string name=\"fovAxis\" value=\"y\"/><transform name=\"toWorld\">"
                   "<lookAt origin=\"0,0,5\" target=\"0,0,0\" up=\"0,1,0\"/></transform>"
                   "<sampler type=\"ldsampler\"><integer name=\"sampleCount\" value=\"9\"/></sampler></sensor>\n"
                   "<include filename=\"inc_part.xml\"/>\n"
                   "<shape type=\"sphere\"><ref id=\"gold\"/></shape>\n"
                   "<shape type=\"sphere\"><bsdf type=\"dielectric\"><float name=\"intIOR\" value=\"1.33\"/>"
                   "</bsdf></shape>\n"
                   "<shape type=\"sphere\"><bsdf type=\"diffuse\"><rgb name=\"reflectance\" value=\"$col\"/>"
                   "</bsdf><float name=\"mystery\" value=\"1\"/></shape>\n"
                   "<shape type=\"disk\"/><shape type=\"disk\"/><shape type=\"hair\"/>\n"
                   "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("old.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "old: %s\n", err);
        return;
    }
    CHECK(s->spp == 9 && s->max_depth == 2 && near(s->camera.fovy_deg, 45, 1e-4));
    int gold = 0, water = 0, grey = 0;
    /* a named metal is Mitsuba's RGB index (its RGB variants' meaning), not the spectral fit the
     * pbrt-v4 reader takes (material_metal_lookup_spectral) */
    vec3 au_eta, au_k;
    CHECK(material_metal_lookup("Au", &au_eta, &au_k, NULL) == 0);
    for (size_t i = 0; i < s->nmaterials; ++i) {
        const material *m = &s->materials[i];
        if (m->kind == MAT_CONDUCTOR && m->complex_ior && m->eta.x == au_eta.x && m->eta.z == au_eta.z &&
            m->k.x == au_k.x && m->k.y == au_k.y && near(m->alpha, 0.04, 1e-6))
            gold = 1;
        if (m->kind == MAT_DIELECTRIC && near(m->ior, 1.33 / 1.000277, 1e-5)) water = 1;
        if (m->kind == MAT_DIFFUSE && near(m->albedo.x, 0.25, 1e-6)) grey = 1;
    }
    CHECK(gold && water && grey);
    CHECK(s->ntriangles == 2 * 64); /* two tessellated disks */
    /* the coverage summary: one line per feature with its count, each naming FILE:LINE */
    if (!strstr(warnings, "old.xml:8: shape")) fprintf(stderr, "%s", warnings);
    CHECK(strstr(warnings, "old.xml:8: shape \"disk\": caustic has no analytic disk") != NULL);
    CHECK(strstr(warnings, "(and 1 more like it)") != NULL);
    CHECK(strstr(warnings, "shape \"hair\": caustic has no such shape") != NULL);
    CHECK(strstr(warnings, "parameter \"mystery\" is not used") != NULL);
    scene_destroy(s);
    /* --strict: the first warning is the error */
    rc = load("old.xml", &s, err, sizeof err, 1, NULL, 0);
    CHECK(rc != 0 && strstr(err, "old.xml:") != NULL);
    if (rc == 0) scene_destroy(s);
}

/* A one-shape .serialized (version 4): a quad of 2 triangles, single precision, with normals. */
static void write_serialized(const char *name) {
    unsigned char raw[512];
    size_t n = 0;
    uint32_t flags = 0x1 | 0x1000;
    memcpy(raw + n, &flags, 4), n += 4;
    memcpy(raw + n, "quad", 5), n += 5;
    uint64_t nv = 4, nt = 2;
    memcpy(raw + n, &nv, 8), n += 8;
    memcpy(raw + n, &nt, 8), n += 8;
    float p[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, nn[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    memcpy(raw + n, p, sizeof p), n += sizeof p;
    memcpy(raw + n, nn, sizeof nn), n += sizeof nn;
    uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    memcpy(raw + n, idx, sizeof idx), n += sizeof idx;
    unsigned char z[1024];
    uLongf zn = sizeof z;
    compress(z, &zn, raw, n);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    unsigned char hdr[4] = {0x1C, 0x04, 4, 0};
    fwrite(hdr, 1, 4, f);
    fwrite(z, 1, zn, f);
    uint64_t off = 0;
    uint32_t count = 1;
    fwrite(&off, 8, 1, f);
    fwrite(&count, 4, 1, f);
    fclose(f);
}

static void test_serialized_instances(void) {
    write_serialized("quad.serialized");
    put("ser.xml", "<scene version=\"3.0.0\">\n"
                   "<shape type=\"serialized\"><string name=\"filename\" value=\"quad.serialized\"/>"
                   "<boolean name=\"flip_normals\" value=\"true\"/></shape>\n"
                   "<shape type=\"shapegroup\" id=\"g\"><shape type=\"serialized\">"
                   "<string name=\"filename\" value=\"quad.serialized\"/></shape></shape>\n"
                   "<shape type=\"instance\"><ref id=\"g\"/><transform name=\"to_world\"><translate x=\"10\"/>"
                   "</transform></shape>\n"
                   "<shape type=\"instance\"><ref id=\"g\"/><transform name=\"to_world\"><translate x=\"20\"/>"
                   "</transform></shape>\n"
                   "<shape type=\"serialized\"><string name=\"filename\" value=\"quad.serialized\"/>"
                   "<integer name=\"shape_index\" value=\"1\"/></shape>\n"
                   "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("ser.xml", &s, err, sizeof err, 0, NULL, 0);
    /* shape_index 1 of a one-shape file is the error, naming the line */
    if (!(rc != 0 && strstr(err, "ser.xml:6:"))) fprintf(stderr, "ser: %s\n", err);
    CHECK(rc != 0 && strstr(err, "ser.xml:6:") && strstr(err, "shape_index 1"));
    put("ser.xml", "<scene version=\"3.0.0\">\n"
                   "<shape type=\"serialized\"><string name=\"filename\" value=\"quad.serialized\"/>"
                   "<boolean name=\"flip_normals\" value=\"true\"/></shape>\n"
                   "<shape type=\"shapegroup\" id=\"g\"><shape type=\"serialized\">"
                   "<string name=\"filename\" value=\"quad.serialized\"/></shape></shape>\n"
                   "<shape type=\"instance\"><ref id=\"g\"/><transform name=\"to_world\"><translate x=\"10\"/>"
                   "</transform></shape>\n"
                   "<shape type=\"instance\"><ref id=\"g\"/><transform name=\"to_world\"><translate x=\"20\"/>"
                   "</transform></shape>\n"
                   "</scene>\n");
    rc = load("ser.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "ser: %s\n", err);
        return;
    }
    /* the group is one mesh (its quad held once) placed by both instances (true instancing) */
    CHECK(s->ntriangles == 4 && s->nvertices == 8 && s->nmeshes == 1 && s->nplacements == 2);
    CHECK(s->triangles[0].v[1] == 2 && near(s->normals[0].z, -1, 1e-6));             /* flipped */
    CHECK(s->nplacements == 2 && near(s->placements[1].to_world.m[0][3], 20, 1e-6)); /* the second instance */
    scene_destroy(s);
}

/* Mitsuba's envmap u = atan2(x, -z) / 2pi (wrapped); caustic's is that plus one half: an
 * unrotated map comes out shifted by half its width; rotated 90 degrees about y, by a quarter
 * more. A textured area light keeps its texture as the emission map, one-sided. */
static void test_envmap_area(void) {
    char p[512];
    snprintf(p, sizeof p, "%s/env.pfm", dir);
    FILE *f = fopen(p, "wb");
    fprintf(f, "PF\n8 2\n-1.0\n");
    for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 8; ++x) {
            float v[3] = {(float)(x + 1), (float)(x + 1), (float)(x + 1)};
            fwrite(v, 4, 3, f);
        }
    fclose(f);
    put("env.xml", "<scene version=\"3.0.0\"><emitter type=\"envmap\"><string name=\"filename\" value=\"env.pfm\"/>"
                   "<float name=\"scale\" value=\"2\"/></emitter>\n"
                   "<shape type=\"rectangle\"><emitter type=\"area\"><texture name=\"radiance\" type=\"checkerboard\"/>"
                   "</emitter></shape></scene>\n");
    put("env90.xml", "<scene version=\"3.0.0\"><emitter type=\"envmap\"><string name=\"filename\" value=\"env.pfm\"/>"
                     "<transform name=\"to_world\"><rotate y=\"1\" angle=\"90\"/></transform></emitter></scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("env.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "env: %s\n", err);
        return;
    }
    CHECK(s->env_tex >= 0 && near(s->env_radiance.x, 2, 1e-6));
    if (s->env_tex >= 0) {
        const texture *t = &s->textures[s->env_tex];
        CHECK(t->width == 8 && near(scene_texel(s, t, 0).x, 5, 1e-6) && near(scene_texel(s, t, 5).x, 2, 1e-6));
    }
    int em = -1;
    for (size_t i = 0; i < s->nmaterials; ++i)
        if (s->materials[i].maps & MAP_EMISSION) em = (int)i;
    CHECK(em >= 0 && s->materials[em].two_sided == 0);
    scene_destroy(s);
    rc = load("env90.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc == 0) {
        const texture *t = &s->textures[s->env_tex];
        /* caustic's column 0 looks along +z (u = 0); rotated +90 about y, the map's local
         * direction there is -x: Mitsuba u = atan2(-1, 0) / 2pi = 0.75 (column 6, value 7) */
        vec3 c = scene_texel(s, t, 0);
        if (!near(c.x, 7, 0.6)) fprintf(stderr, "env90: texel 0 = %g\n", c.x);
        CHECK(near(c.x, 7, 0.6));
        scene_destroy(s);
    }
}

/* Spectra to RGB: a constant 1 over 360-830 nm is XYZ (1,1,1), linear sRGB (1.205, 0.948, 0.909),
 * written as pairs and as a .spd file; 0.x's three-number spectrum is RGB. */
static void test_spectra(void) {
    put("flat.spd", "# a flat spectrum\n360 1\n600 1\n830 1\n");
    put("spec.xml",
        "<scene version=\"3.0.0\">\n"
        "<shape type=\"sphere\"><emitter type=\"area\"><spectrum name=\"radiance\" value=\"360:1, 830:1\"/>"
        "</emitter></shape>\n"
        "<shape type=\"sphere\"><emitter type=\"area\"><spectrum name=\"radiance\" filename=\"flat.spd\"/>"
        "</emitter></shape>\n"
        "<shape type=\"sphere\"><emitter type=\"area\"><spectrum name=\"radiance\" value=\"0.1, 0.2, 0.3\"/>"
        "</emitter></shape>\n</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("spec.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "spec: %s\n", err);
        return;
    }
    int flat = 0, rgb = 0;
    for (size_t i = 0; i < s->nmaterials; ++i) {
        vec3 e = s->materials[i].emission;
        if (near(e.x, 1.205, 0.03) && near(e.y, 0.948, 0.03) && near(e.z, 0.909, 0.03)) flat++;
        if (near(e.x, 0.1, 1e-6) && near(e.y, 0.2, 1e-6) && near(e.z, 0.3, 1e-6)) rgb++;
    }
    CHECK(flat == 2 && rgb == 1);
    scene_destroy(s);
}

/* Mitsuba 0.x plugins with a clear meaning: phong, the scale texture, coatings (caustic's Coated
 * kind over the nested base). */
static void test_old_plugins(void) {
    put("oldp.xml",
        "<scene version=\"0.5.0\">\n"
        "<shape type=\"sphere\"><bsdf type=\"phong\"><srgb name=\"diffuseReflectance\" value=\"1, 1, 1\"/>"
        "<rgb name=\"specularReflectance\" value=\"0.25\"/><float name=\"exponent\" value=\"90\"/></bsdf></shape>\n"
        "<shape type=\"sphere\"><bsdf type=\"diffuse\"><texture type=\"scale\" name=\"reflectance\">"
        "<float name=\"scale\" value=\"0.5\"/><rgb name=\"texture\" value=\"0.6\"/></texture></bsdf></shape>\n"
        "<shape type=\"sphere\"><bsdf type=\"roughcoating\"><bsdf type=\"diffuse\">"
        "<rgb name=\"reflectance\" value=\"0.125\"/></bsdf></bsdf></shape>\n"
        "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("oldp.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "oldp: %s\n", err);
        return;
    }
    int phong = 0, scaled = 0, coated = 0;
    for (size_t i = 0; i < s->nmaterials; ++i) {
        const material *m = &s->materials[i];
        if (m->kind == MAT_PHONG && near(m->specular.x, 0.25, 1e-6) && near(m->exponent, 90, 1e-6)) phong = 1;
        if (m->kind == MAT_DIFFUSE && near(m->albedo.x, 0.3, 1e-6)) scaled = 1;
        if (m->kind == MAT_COATED && m->coat_base == COAT_BASE_DIFFUSE && near(m->albedo.x, 0.125, 1e-6) &&
            m->coat_alpha > 0)
            coated = 1;
    }
    CHECK(phong && scaled && coated);
    scene_destroy(s);
}

/* thindielectric is caustic's ThinDielectric; bumpmap is caustic's bump map with its scale. */
static void test_thin_bump(void) {
    put("tb.xml", "<scene version=\"3.0.0\">\n"
                  "<shape type=\"sphere\"><bsdf type=\"thindielectric\"><float name=\"int_ior\" value=\"1.6\"/>"
                  "<float name=\"ext_ior\" value=\"1\"/></bsdf></shape>\n"
                  "<shape type=\"sphere\"><bsdf type=\"bumpmap\"><texture type=\"checkerboard\"/>"
                  "<float name=\"scale\" value=\"0.02\"/><bsdf type=\"diffuse\"/></bsdf></shape>\n</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("tb.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "tb: %s\n", err);
        return;
    }
    int thin = 0, bump = 0;
    for (size_t i = 0; i < s->nmaterials; ++i) {
        const material *m = &s->materials[i];
        if (m->kind == MAT_THIN_DIELECTRIC && near(m->ior, 1.6, 1e-6)) thin = 1;
        if (m->kind == MAT_DIFFUSE && (m->maps & MAP_BUMP)) bump = 1;
    }
    if (!(thin && bump && nwarnings == 1)) fprintf(stderr, "tb: thin %d bump %d warnings: %s\n", thin, bump, warnings);
    CHECK(thin && bump && nwarnings == 1);
    scene_destroy(s);
}

/* principled with a checkerboard metallic: one procedural metallic-roughness map (glTF layout, G
 * roughness, B metallic) so that the pattern renders, without the "texture's mean" warning (the one
 * warning: the missing sensor) */
static void test_principled_checker(void) {
    put("pc.xml", "<scene version=\"3.0.0\">\n"
                  "<shape type=\"sphere\"><bsdf type=\"principled\"><float name=\"roughness\" value=\"0.15\"/>"
                  "<texture name=\"metallic\" type=\"checkerboard\"><float name=\"color0\" value=\"0.7\"/>"
                  "<float name=\"color1\" value=\"0.1\"/></texture></bsdf></shape>\n</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("pc.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "pc: %s\n", err);
        return;
    }
    int found = 0;
    for (size_t i = 0; i < s->nmaterials; ++i) {
        const material *m = &s->materials[i];
        if (m->kind != MAT_PBR || !(m->maps & MAP_METALLIC_ROUGHNESS)) continue;
        const texture *t = &s->textures[m->mr_tex];
        found = t->kind == TEX_CHECKER && near(t->a.y, 0.15, 1e-6) && near(t->b.y, 0.15, 1e-6) &&
                near(t->a.z, 0.7, 1e-6) && near(t->b.z, 0.1, 1e-6) && near(m->metallic, 1.0, 1e-6) &&
                near(m->alpha, 1.0, 1e-6);
    }
    if (!found || nwarnings != 1) fprintf(stderr, "pc: map %d, warnings: %s\n", found, warnings);
    CHECK(found && nwarnings == 1);
    scene_destroy(s);
}

static void expect_error(const char *name, const char *text, const char *want1, const char *want2) {
    put(name, text);
    scene *s = NULL;
    char err[1024] = "";
    int rc = load(name, &s, err, sizeof err, 0, NULL, 0);
    int ok = rc != 0 && strstr(err, want1) && (!want2 || strstr(err, want2)) && !strchr(err, '\n');
    if (!ok)
        fprintf(stderr, "%s: rc %d, message \"%s\" (wanted \"%s\"%s%s)\n", name, rc, err, want1, want2 ? ", " : "",
                want2 ? want2 : "");
    CHECK(ok);
    if (rc == 0) scene_destroy(s);
}

static void test_errors(void) {
    expect_error("e_xml.xml", "<scene version=\"3.0.0\">\n<shape type=\"sphere\">\n</scene>\n",
                 "e_xml.xml:3:", "not well-formed");
    expect_error("e_ref.xml", "<scene version=\"3.0.0\">\n<shape type=\"sphere\">\n<ref id=\"nope\"/></shape></scene>",
                 "e_ref.xml:3:", "no object has this id");
    expect_error("e_param.xml",
                 "<scene version=\"3.0.0\">\n\n<shape type=\"sphere\"><float name=\"radius\" "
                 "value=\"$r\"/></shape></scene>",
                 "e_param.xml:3:", "$r is not a parameter");
    expect_error("e_num.xml",
                 "<scene version=\"3.0.0\"><shape type=\"sphere\">\n<float name=\"radius\" "
                 "value=\"big\"/></shape></scene>",
                 "e_num.xml:2:", "not a number");
    expect_error("e_ior.xml",
                 "<scene version=\"3.0.0\"><shape type=\"sphere\"><bsdf type=\"dielectric\">\n"
                 "<string name=\"int_ior\" value=\"diamon\"/></bsdf></shape></scene>",
                 "e_ior.xml:2:", "did you mean \"diamond\"");
    expect_error("e_inc.xml", "<scene version=\"3.0.0\">\n<include filename=\"missing.xml\"/></scene>",
                 "e_inc.xml:2:", "missing.xml");
    expect_error("e_self.xml", "<scene version=\"3.0.0\">\n<include filename=\"e_self.xml\"/></scene>",
                 "e_self.xml:2:", "includes");
    expect_error("e_root.xml", "<?xml version=\"1.0\"?>\n<scene_x/>", "e_root.xml:2:", "<scene>");
    expect_error("e_obj.xml",
                 "<scene version=\"3.0.0\">\n<shape type=\"obj\"><string name=\"filename\" "
                 "value=\"nothere.obj\"/></shape></scene>",
                 "e_obj.xml:2:", "nothere.obj");
    expect_error("e_fov.xml",
                 "<scene version=\"3.0.0\"><sensor type=\"perspective\">\n<string name=\"fov_axis\" "
                 "value=\"z\"/><float name=\"fov\" value=\"40\"/></sensor><shape type=\"sphere\"/></scene>",
                 "e_fov.xml:1:", "fov_axis \"z\"");
    expect_error("e_dup.xml",
                 "<scene version=\"3.0.0\">\n<bsdf type=\"diffuse\" id=\"a\"/>\n<bsdf type=\"diffuse\" "
                 "id=\"a\"/><shape type=\"sphere\"/></scene>",
                 "e_dup.xml:3:", "id \"a\" is given twice (also at line 2)");
    expect_error("e_loop.xml",
                 "<scene version=\"3.0.0\">\n<texture type=\"checkerboard\" id=\"t\"><ref name=\"color0\" "
                 "id=\"t\"/></texture>\n<shape type=\"sphere\"><bsdf type=\"diffuse\"><ref "
                 "name=\"reflectance\" id=\"t\"/></bsdf></shape></scene>",
                 "e_loop.xml:", "nested deeper");
    {
        /* a .serialized whose counts promise more than it holds: refused before allocating */
        char path[512];
        unsigned char raw[64] = {0};
        uint32_t flags = 0x1000;
        uint64_t nv = 1u << 29, nt = 1u << 29;
        memcpy(raw, &flags, 4);
        raw[4] = 0; /* empty name */
        memcpy(raw + 5, &nv, 8);
        memcpy(raw + 13, &nt, 8);
        unsigned char z[256];
        uLongf zn = sizeof z;
        compress(z, &zn, raw, 21);
        snprintf(path, sizeof path, "%s/huge.serialized", dir);
        FILE *f = fopen(path, "wb");
        unsigned char hdr[4] = {0x1C, 0x04, 4, 0};
        uint64_t off = 0;
        uint32_t count = 1;
        fwrite(hdr, 1, 4, f);
        fwrite(z, 1, zn, f);
        fwrite(&off, 8, 1, f);
        fwrite(&count, 4, 1, f);
        fclose(f);
    }
    expect_error("e_huge.xml",
                 "<scene version=\"3.0.0\">\n<shape type=\"serialized\"><string name=\"filename\" "
                 "value=\"huge.serialized\"/></shape></scene>",
                 "e_huge.xml:2:", "truncated");
    expect_error("e_empty.xml", "<scene version=\"3.0.0\">\n</scene>", "e_empty.xml", "nothing caustic can render");
}

static void test_detect(void) {
    const char *xml = "<?xml version=\"1.0\"?>\n<scene version=\"3.0.0\">";
    const scene_format *f = scene_format_detect("a.xml", xml, strlen(xml));
    CHECK(f && !strcmp(f->name, "Mitsuba XML") && f->load != NULL);
    f = scene_format_detect("scene.txt", xml, strlen(xml)); /* by its content, whatever the name */
    CHECK(f && !strcmp(f->name, "Mitsuba XML"));
}

/* ---- the corpus ---------------------------------------------------------------------------------- */
static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* every scene .xml under root (not fragments/ or includes of other scenes) */
static void find_xml(const char *root, char out[][1024], int *n, int max) {
    DIR *d = opendir(root);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && *n < max) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        struct stat st;
        if (stat(p, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            if (strcmp(e->d_name, "fragments") && strcmp(e->d_name, "common")) find_xml(p, out, n, max);
        } else if (has_suffix(e->d_name, ".xml"))
            snprintf(out[(*n)++], 1024, "%s", p);
    }
    closedir(d);
}

static int corpus(const char *base, int spp) {
    DIR *d = opendir(base);
    if (!d) {
        printf("test_mitsuba corpus: %s is absent: skipped\n", base);
        return 77;
    }
    char scenes[64][256];
    int ns = 0;
    struct dirent *e;
    while ((e = readdir(d)) && ns < 64)
        if (!strncmp(e->d_name, "mi3-", 4) || !strncmp(e->d_name, "mi05-", 5))
            snprintf(scenes[ns++], 256, "%s", e->d_name);
    closedir(d);
    int bad = 0;
    printf("| scene | file | loads | warnings | ref res | spp | caustic mean | Mitsuba mean | ratio |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ns; ++i) {
        char root[300], files[16][1024];
        int nf = 0;
        snprintf(root, sizeof root, "%.40s/%.250s", base, scenes[i]);
        find_xml(root, files, &nf, 16);
        char refp[800];
        snprintf(refp, sizeof refp, "%s/ref-mitsuba.exr", root);
        image ref;
        char err[1024];
        int have_ref = image_load(&ref, refp, err, sizeof err) == 0;
        double refmean = have_ref ? image_luminance_mean(&ref) : NAN;
        for (int k = 0; k < nf; ++k) {
            caustic_load_options lo;
            caustic_load_options_init(&lo);
            warnings[0] = '\0';
            nwarnings = 0;
            lo.warning = on_warn;
            caustic_scene *sc = NULL;
            const char *shown = files[k] + strlen(root) + 1;
            if (caustic_scene_load_ex(&sc, files[k], &lo, err, sizeof err)) {
                printf("| %s | %s | **no**: %s | | | | | | |\n", scenes[i], shown, err);
                bad++;
                continue;
            }
            caustic_options o;
            caustic_options_init(&o);
            o.spp = spp;
            o.threads = 1;
            if (have_ref) {
                o.width = ref.width;
                o.height = ref.height;
            }
            caustic_renderer *r = caustic_renderer_create(sc, &o, err, sizeof err);
            double mean = NAN;
            if (r && caustic_render(r, NULL, NULL, err, sizeof err) == 0) {
                int w, h;
                const float *px = caustic_image(r, &w, &h);
                image im = {w, h, (float *)px};
                mean = image_luminance_mean(&im);
            } else {
                printf("| %s | %s | yes, render failed: %s | | | | | | |\n", scenes[i], shown, err);
                bad++;
            }
            if (r) caustic_renderer_free(r);
            caustic_scene_free(sc);
            if (isnan(mean)) continue;
            /* the scenes whose features caustic has (or approximates closely: docs/corpus.md) must
             * keep their mean within 4 % of Mitsuba's (measured 0.4-2 % at 64 spp) */
            static const char *const matching[] = {"mi3-infinite-mirrors", "mi3-bsdf-sphere-grid", "mi3-various-shapes",
                                                   "mi3-bumpmap-sphere", NULL};
            int must = 0;
            for (int m = 0; matching[m]; ++m) must |= !strcmp(matching[m], scenes[i]);
            int off = must && have_ref && !(fabs(mean / refmean - 1.0) <= 0.04);
            bad += off;
            printf("| %s | %s | yes | %d | %dx%d | %d | %.4f | %.4f | %.3f%s |\n", scenes[i], shown, nwarnings,
                   have_ref ? ref.width : 0, have_ref ? ref.height : 0, spp, mean, refmean, mean / refmean,
                   off ? " **more than 4 % off**" : "");
            fflush(stdout);
        }
        if (have_ref) image_free(&ref);
    }
    return bad ? 1 : 0;
}

/* Media: a homogeneous medium (sigma_t x scale, albedo, hg g) referenced as a shape's interior
 * and the sensor's medium, a null BSDF bounding it (an Interface, kept), a dielectric with an
 * interior (absorbing glass), a null BSDF bounding nothing (left out), and a heterogeneous medium
 * of a constant sigma_t (one warning: a homogeneous medium in its shape). */
static void test_media(void) {
    put("media.xml",
        "<scene version=\"3.0.0\">\n"
        "<medium type=\"homogeneous\" id=\"fog\"><rgb name=\"sigma_t\" value=\"0.5, 0.25, 1\"/>"
        "<float name=\"scale\" value=\"4\"/><rgb name=\"albedo\" value=\"0.5, 1, 0.25\"/>"
        "<phase type=\"hg\"><float name=\"g\" value=\"-0.4\"/></phase></medium>\n"
        "<medium type=\"homogeneous\" id=\"ink\"><float name=\"sigma_t\" value=\"2\"/>"
        "<float name=\"albedo\" value=\"0\"/></medium>\n"
        "<sensor type=\"perspective\"><ref id=\"fog\"/><transform name=\"to_world\">"
        "<lookat origin=\"0,0,5\" target=\"0,0,0\" up=\"0,1,0\"/></transform></sensor>\n"
        "<shape type=\"sphere\"><bsdf type=\"null\"/><ref name=\"interior\" id=\"fog\"/></shape>\n"
        "<shape type=\"cube\"><bsdf type=\"dielectric\"/><ref name=\"interior\" id=\"ink\"/>"
        "<ref name=\"exterior\" id=\"fog\"/></shape>\n"
        "<shape type=\"rectangle\"><bsdf type=\"null\"/></shape>\n"
        "<shape type=\"rectangle\"><bsdf type=\"diffuse\"/><medium type=\"heterogeneous\" name=\"interior\">"
        "<float name=\"scale\" value=\"1\"/></medium></shape>\n"
        "<emitter type=\"constant\"/>\n"
        "</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("media.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "media: %s\n", err);
        return;
    }
    CHECK(s->nmedia == 3);
    CHECK(s->nspheres == 1 && s->ntriangles == 12 && s->nquads == 1);
    if (s->nmedia == 3 && s->nspheres == 1 && s->ntriangles == 12) {
        const medium *f = &s->media[0], *k = &s->media[1];
        CHECK(near(f->sigma_s.x, 1.0, 1e-6) && near(f->sigma_a.x, 1.0, 1e-6) && near(f->sigma_s.y, 1.0, 1e-6) &&
              near(f->sigma_a.y, 0.0, 1e-6) && near(f->sigma_s.z, 1.0, 1e-6) && near(f->sigma_a.z, 3.0, 1e-6));
        CHECK(near(f->g, -0.4, 1e-6));
        CHECK(near(k->sigma_a.x, 2.0, 1e-6) && k->sigma_s.x == 0.0f);
        CHECK(s->camera.medium == 1);
        const material *ms = &s->materials[s->spheres[0].material];
        CHECK(ms->kind == MAT_INTERFACE && ms->medium_inside == 1 && ms->medium_outside == 0);
        const material *mc = &s->materials[s->triangles[0].material];
        CHECK(mc->kind == MAT_DIELECTRIC && mc->medium_inside == 2 && mc->medium_outside == 1);
        const material *mq = &s->materials[s->quads[0].material];
        CHECK(mq->kind == MAT_DIFFUSE && mq->medium_inside == 3 && mq->medium_outside == 0);
        CHECK(s->media[2].kind == MEDIUM_HOMOGENEOUS && near(s->media[2].sigma_s.x, 0.75, 1e-6));
    }
    CHECK(strstr(warnings, "heterogeneous") != NULL && strstr(warnings, "constant sigma_t") != NULL);
    scene_destroy(s);
}

/* Heterogeneous media over .vol grids (gridvolume): the density grid's resolution and placement
 * (to_world onto the unit cube; use_grid_bbox: the file's box first), the coefficients per unit
 * density (scale times albedo and 1 - albedo; an albedo grid: scale, 0), hg g; and the errors, each
 * naming the file and line of the gridvolume. */
static void write_grid(const char *name, uint32_t nx, uint32_t ny, uint32_t nz, uint32_t ch, float lo, float hi) {
    char path[512], err[512];
    uint32_t res[3] = {nx, ny, nz};
    float bbox[6] = {lo, lo, lo, hi, hi, hi};
    size_t n = (size_t)nx * ny * nz * ch;
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; ++i) v[i] = (float)(i % 7) / 7.0f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (vol_write(path, res, ch, bbox, v, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        failures++;
    }
    free(v);
}

static int maps_to(const medium *m, vec3 p, vec3 u) {
    const float *a = m->to_grid;
    vec3 g = v3(a[0] * p.x + a[1] * p.y + a[2] * p.z + a[3], a[4] * p.x + a[5] * p.y + a[6] * p.z + a[7],
                a[8] * p.x + a[9] * p.y + a[10] * p.z + a[11]);
    return near(g.x, u.x, 1e-5) && near(g.y, u.y, 1e-5) && near(g.z, u.z, 1e-5);
}

#define GRIDVOL(NAME, FILE, XF)                                                                                        \
    "<volume name=\"" NAME "\" type=\"gridvolume\"><string name=\"filename\" value=\"" FILE "\"/>" XF "</volume>"
#define MOVE "<transform name=\"to_world\"><translate value=\"0.5, 1, 1.5\"/><scale value=\"2\"/></transform>"

static void test_grid_media(void) {
    write_grid("d432.vol", 4, 3, 2, 1, 0.0f, 1.0f);
    write_grid("a432.vol", 4, 3, 2, 3, 0.0f, 1.0f);
    write_grid("box.vol", 2, 2, 2, 1, -2.0f, 2.0f);
    write_grid("rgb.vol", 2, 2, 2, 3, 0.0f, 1.0f);
    put("grid.xml",
        "<scene version=\"3.0.0\">\n"
        "<medium type=\"heterogeneous\" id=\"cloud\">" GRIDVOL("sigma_t", "d432.vol", MOVE) GRIDVOL(
            "albedo", "a432.vol",
            MOVE) "<float name=\"scale\" value=\"5\"/>"
                  "<phase type=\"hg\"><float name=\"g\" value=\"0.25\"/></phase></medium>\n"
                  "<medium type=\"heterogeneous\" id=\"smoke\">" GRIDVOL(
                      "sigma_t", "box.vol",
                      "<boolean name=\"use_grid_bbox\" value=\"true\"/>") "<float name=\"albedo\" "
                                                                          "value=\"0.6\"/><float name=\"scale\" "
                                                                          "value=\"10\"/></medium>\n"
                                                                          "<shape type=\"cube\"><bsdf "
                                                                          "type=\"null\"/><ref name=\"interior\" "
                                                                          "id=\"cloud\"/></shape>\n"
                                                                          "<shape type=\"sphere\"><bsdf "
                                                                          "type=\"null\"/><ref name=\"interior\" "
                                                                          "id=\"smoke\"/></shape>\n"
                                                                          "<emitter type=\"constant\"/>\n</scene>\n");
    scene *s = NULL;
    char err[1024];
    int rc = load("grid.xml", &s, err, sizeof err, 0, NULL, 0);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "grid: %s\n", err);
        return;
    }
    CHECK(s->nmedia == 2 && !strstr(warnings, "not used") && !strstr(warnings, "medium"));
    if (s->nmedia == 2) {
        const medium *c = &s->media[0], *k = &s->media[1];
        CHECK(c->kind == MEDIUM_GRID && c->res[0] == 4 && c->res[1] == 3 && c->res[2] == 2);
        CHECK(c->albedo_grid != MEDIUM_NO_GRID && near(c->g, 0.25, 1e-6));
        CHECK(near(c->sigma_s.x, 5.0, 1e-6) && near(c->sigma_s.z, 5.0, 1e-6) && c->sigma_a.x == 0.0f);
        /* to_world: translate, then scale 2: the unit cube onto [1, 3] x [2, 4] x [3, 5] */
        CHECK(maps_to(c, v3(1, 2, 3), v3(0, 0, 0)) && maps_to(c, v3(3, 4, 5), v3(1, 1, 1)));
        CHECK(k->kind == MEDIUM_GRID && k->res[0] == 2 && k->albedo_grid == MEDIUM_NO_GRID);
        CHECK(near(k->sigma_s.y, 6.0, 1e-5) && near(k->sigma_a.y, 4.0, 1e-5) && k->g == 0.0f);
        /* use_grid_bbox: the file's box [-2, 2]^3 is the unit cube */
        CHECK(maps_to(k, v3(-2, -2, -2), v3(0, 0, 0)) && maps_to(k, v3(2, 0, 2), v3(1, 0.5f, 1)));
        const material *mc = &s->materials[s->triangles[0].material];
        CHECK(mc->kind == MAT_INTERFACE && mc->medium_inside == 1);
    }
    scene_destroy(s);
    /* a grid that to_world turns: Mitsuba fills the world-axis box around it, caustic does not (one
     * warning); a quarter turn permutes the axes: none */
    const char *turns[2] = {"30", "90"};
    for (int i = 0; i < 2; ++i) {
        char xml[1024];
        snprintf(xml, sizeof xml,
                 "<scene version=\"3.0.0\"><medium type=\"heterogeneous\" id=\"m\">" GRIDVOL(
                     "sigma_t", "d432.vol",
                     "<transform name=\"to_world\"><rotate y=\"1\" angle=\"%s\"/></transform>") "</medium><shape "
                                                                                                "type=\"sphere\"><bsdf "
                                                                                                "type=\"null\"/><ref "
                                                                                                "name=\"interior\" "
                                                                                                "id=\"m\"/></shape>"
                                                                                                "<emitter "
                                                                                                "type=\"constant\"/></"
                                                                                                "scene>",
                 turns[i]);
        put("turn.xml", xml);
        rc = load("turn.xml", &s, err, sizeof err, 0, NULL, 0);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "turn: %s\n", err);
            continue;
        }
        CHECK(s->nmedia == 1 && (strstr(warnings, "rotates or shears") != NULL) == (i == 0));
        scene_destroy(s);
    }
    expect_error("e_vol.xml",
                 "<scene version=\"3.0.0\"><medium type=\"heterogeneous\" id=\"m\">\n"
                 "<volume name=\"sigma_t\" type=\"gridvolume\"><string name=\"filename\" value=\"nothere.vol\"/>"
                 "</volume></medium>\n<shape type=\"sphere\"><ref name=\"interior\" id=\"m\"/></shape></scene>",
                 "e_vol.xml:2:", "nothere.vol");
    expect_error("e_vol3.xml",
                 "<scene version=\"3.0.0\"><medium type=\"heterogeneous\" id=\"m\">\n" GRIDVOL(
                     "sigma_t", "rgb.vol", "") "</medium>\n<shape type=\"sphere\"/></scene>",
                 "e_vol3.xml:2:", "a density grid has 1");
    expect_error("e_volplace.xml",
                 "<scene version=\"3.0.0\"><medium type=\"heterogeneous\" id=\"m\">" GRIDVOL(
                     "sigma_t", "d432.vol", MOVE) "\n" GRIDVOL("albedo", "a432.vol",
                                                               "") "</medium>\n<shape type=\"sphere\"/></scene>",
                 "e_volplace.xml:2:", "placed unlike");
    expect_error("e_volnofile.xml",
                 "<scene version=\"3.0.0\"><medium type=\"heterogeneous\" id=\"m\">\n"
                 "<volume name=\"sigma_t\" type=\"gridvolume\"/></medium><shape type=\"sphere\"/></scene>",
                 "e_volnofile.xml:2:", "without filename");
}

int main(int argc, char **argv) {
    if (!mx_available()) {
        printf("test_mitsuba: caustic was built without libexpat (libexpat1-dev): skipped\n");
        return 77;
    }
    if (argc >= 3 && !strcmp(argv[1], "corpus")) return corpus(argv[2], argc >= 4 ? atoi(argv[3]) : 16);
    snprintf(dir, sizeof dir, "/tmp/test_mitsuba.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_detect();
    test_basic();
    test_media();
    test_grid_media();
    test_transforms_fov();
    test_include_upgrade_warnings();
    test_serialized_instances();
    test_envmap_area();
    test_spectra();
    test_old_plugins();
    test_thin_bump();
    test_principled_checker();
    test_errors();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    if (failures) fprintf(stderr, "test_mitsuba: %d failures\n", failures);
    return failures ? 1 : 0;
}
