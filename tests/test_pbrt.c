/* The pbrt-v4 reader (src/import/pbrt*.c) on small hand-written files: every transform directive,
 * the graphics state, Include/Import (also gzip), named materials and textures, objects and
 * instances, shapes, lights and spectra, the camera's field of view on the shorter axis, pbrt's
 * handedness, which side of a surface emits, and one-line errors that name file and line. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "import/import.h"
#include "import/pbrt_internal.h"
#include "scene/material.h"
#include "scene/scene.h"
#include "kernel/media/grid.h"
#include "kernel/microfacet.h"
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define PI_T 3.14159265358979323846

static char g_tmp[256];

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static const char *write_tmp(const char *name, const char *content) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "wb");
    if (!f) exit(2);
    fwrite(content, 1, strlen(content), f);
    fclose(f);
    return path;
}

typedef struct warnings {
    int n;
    char text[8192];
} warnings;
static void collect(void *user, const char *msg) {
    warnings *w = user;
    w->n++;
    size_t used = strlen(w->text);
    snprintf(w->text + used, sizeof w->text - used, "%s\n", msg);
}

static warnings g_w;
static char g_err[1024];

static scene *load_opts(const char *name, const char *content, int strict) {
    const char *path = write_tmp(name, content);
    scene_load_opts o;
    memset(&o, 0, sizeof o);
    memset(&g_w, 0, sizeof g_w);
    o.warn = collect;
    o.warn_user = &g_w;
    o.strict = strict;
    scene *s = NULL;
    g_err[0] = '\0';
    if (scene_load_file(&s, path, &o, g_err, sizeof g_err)) return NULL;
    return s;
}
static scene *load(const char *name, const char *content) { return load_opts(name, content, 0); }

/* a camera that is right-handed as caustic's (no mirror): pbrt's usual "Scale -1 1 1" */
#define CAM "Scale -1 1 1\nLookAt 0 0 10  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" 40\n"
#define TRI "Shape \"trianglemesh\" \"point3 P\" [1 0 0  0 1 0  0 0 1] \"integer indices\" [0 1 2]\n"

static int near3(vec3 a, double x, double y, double z) {
    return fabs(a.x - x) < 1e-4 && fabs(a.y - y) < 1e-4 && fabs(a.z - z) < 1e-4;
}

static void test_settings(void) {
    scene *s =
        load("settings.pbrt", "Film \"rgb\" \"integer xresolution\" 64 \"integer yresolution\" 32 \"string filename\" "
                              "\"x.exr\"\nSampler \"halton\" \"integer pixelsamples\" 7\nIntegrator \"path\" "
                              "\"integer maxdepth\" [3]\n" CAM "WorldBegin\n" TRI);
    CHECK(s != NULL, "settings: %s", g_err);
    if (!s) return;
    CHECK(s->camera.width == 64 && s->camera.height == 32, "resolution %dx%d", s->camera.width, s->camera.height);
    CHECK(s->spp == 7 && s->max_depth == 3, "spp %d depth %d", s->spp, s->max_depth);
    CHECK(s->integrator_hint == 0, "path: no integrator named");
    CHECK_NEAR(s->camera.fovy_deg, 40.0, 1e-4, "landscape: pbrt's fov is the vertical one");
    CHECK(near3(s->camera.eye, 0, 0, 10), "eye");
    CHECK(near3(s->positions[0], 1, 0, 0), "a right-handed camera is not mirrored");
    scene_destroy(s);
    /* portrait: pbrt's fov spans the shorter axis, the horizontal one */
    s = load("portrait.pbrt",
             "Film \"rgb\" \"integer xresolution\" 32 \"integer yresolution\" 64\n" CAM "WorldBegin\n" TRI);
    CHECK(s != NULL, "portrait: %s", g_err);
    if (s) {
        double want = 2 * atan(tan(20.0 * PI_T / 180) * 2.0) * 180 / PI_T;
        CHECK_NEAR(s->camera.fovy_deg, want, 1e-3, "portrait fov");
        scene_destroy(s);
    }
    s = load("bdpt.pbrt", "Integrator \"bdpt\"\n" CAM "WorldBegin\n" TRI);
    CHECK(s && s->integrator_hint == CAUSTIC_INTEGRATOR_BDPT + 1, "bdpt names caustic's: %s", g_err);
    if (s) scene_destroy(s);
    s = load("bdptlens.pbrt",
             "Integrator \"bdpt\"\nLookAt 0 0 5 0 0 0 0 1 0\nCamera \"perspective\" \"float lensradius\" 0.1\n"
             "WorldBegin\n" TRI);
    CHECK(s && s->integrator_hint == 0 && strstr(g_w.text, "lens"), "bdpt with a lens: path tracing: %s", g_w.text);
    if (s) scene_destroy(s);
    /* pbrt's own left-handed LookAt: mirrored, the eye and view kept */
    s = load("lefthanded.pbrt", "LookAt 0 0 10  0 0 0  0 1 0\nCamera \"perspective\"\nWorldBegin\n" TRI);
    CHECK(s != NULL, "left-handed camera: %s", g_err);
    if (s) {
        CHECK(near3(s->camera.eye, 0, 0, 10) && near3(s->positions[0], -1, 0, 0), "mirror x: %g", s->positions[0].x);
        scene_destroy(s);
    }
}

static void test_transforms(void) {
    scene *s = load("xf.pbrt",
                    CAM "WorldBegin\n"
                        "AttributeBegin\nTranslate 1 2 3\nScale 2 2 2\nRotate 90 0 0 1\n" TRI "AttributeEnd\n"
                        "AttributeBegin\nTransform [1 0 0 0  0 1 0 0  0 0 1 0  5 6 7 1]\n" TRI "AttributeEnd\n"
                        "AttributeBegin\nTranslate 1 0 0\nConcatTransform [2 0 0 0  0 2 0 0  0 0 2 0  0 0 0 1]\n" TRI
                        "Identity\n" TRI "AttributeEnd\n" TRI
                        "CoordinateSystem \"here\"\nTranslate 9 9 9\nCoordSysTransform \"here\"\n" TRI
                        "CoordSysTransform \"camera\"\n" TRI);
    CHECK(s != NULL, "transforms: %s", g_err);
    if (!s) return;
    CHECK(s->ntriangles == 7, "%zu triangles", s->ntriangles);
    /* T(1,2,3) S(2) Rz(90): (1,0,0) -> (0,1,0)*2 + t */
    CHECK(near3(s->positions[0], 1, 4, 3), "translate scale rotate: %g %g %g", s->positions[0].x, s->positions[0].y,
          s->positions[0].z);
    CHECK(near3(s->positions[3], 6, 6, 7), "Transform is read transposed: %g %g %g", s->positions[3].x,
          s->positions[3].y, s->positions[3].z);
    CHECK(near3(s->positions[6], 3, 0, 0), "ConcatTransform: %g", s->positions[6].x);
    CHECK(near3(s->positions[9], 1, 0, 0), "Identity");
    CHECK(near3(s->positions[12], 1, 0, 0), "AttributeEnd restores");
    CHECK(near3(s->positions[15], 1, 0, 0), "CoordSysTransform");
    /* camera space: the camera at z = 10 looking down -z, with x flipped by the Scale -1 */
    CHECK(near3(s->positions[20], 0, 0, 9), "CoordSysTransform \"camera\": %g %g %g", s->positions[20].x,
          s->positions[20].y, s->positions[20].z);
    scene_destroy(s);
}

static int tri_faces(const scene *s, size_t t, vec3 dir) {
    const triangle *tr = &s->triangles[t];
    vec3 a = s->positions[tr->v[0]], b = s->positions[tr->v[1]], c = s->positions[tr->v[2]];
    return vdot(vcross(vsub(b, a), vsub(c, a)), dir) > 0;
}

static void test_orientation(void) {
    /* a quad facing +z (counter-clockwise seen from +z); ReverseOrientation and a mirroring Scale
     * each flip the side an area light emits from, as in pbrt */
    const char *q = "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0] \"integer indices\" [0 1 2]\n";
    char text[2048];
    snprintf(text, sizeof text,
             CAM "WorldBegin\nAreaLightSource \"diffuse\" \"rgb L\" [1 1 1]\n%s"
                 "AttributeBegin\nReverseOrientation\n%sAttributeEnd\n"
                 "AttributeBegin\nScale 1 1 -1\n%sAttributeEnd\n"
                 "AttributeBegin\nReverseOrientation\nScale 1 1 -1\n%sAttributeEnd\n"
                 "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0] \"normal N\" [0 0 -1 0 0 -1 0 0 -1]\n",
             q, q, q, q);
    scene *s = load("orient.pbrt", text);
    CHECK(s != NULL, "orientation: %s", g_err);
    if (!s) return;
    vec3 z = v3(0, 0, 1);
    CHECK(s->ntriangles == 5, "%zu", s->ntriangles);
    CHECK(tri_faces(s, 0, z), "as given: +z");
    CHECK(!tri_faces(s, 1, z), "ReverseOrientation: -z");
    CHECK(!tri_faces(s, 2, z), "a transform that swaps handedness flips it (the normal transforms): -z");
    CHECK(tri_faces(s, 3, z), "both: +z");
    CHECK(!tri_faces(s, 4, z), "normals decide: -z");
    CHECK(s->materials[s->triangles[0].material].emission.x == 1.0f, "emits L");
    scene_destroy(s);
}

static void write_gz(const char *name, const char *content) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    gzFile f = gzopen(path, "wb");
    if (!f) exit(2);
    gzwrite(f, content, (unsigned)strlen(content));
    gzclose(f);
}

static void test_include(void) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/sub", g_tmp);
    if (access(dir, F_OK) != 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        if (system(cmd) != 0) return;
    }
    write_tmp("sub/geo.pbrt", "Include \"more.pbrt\"\n" TRI); /* relative to sub/ */
    write_tmp("sub/more.pbrt", "MakeNamedMaterial \"gold\" \"string type\" \"conductor\" \"spectrum eta\" "
                               "\"metal-Au-eta\" \"spectrum k\" \"metal-Au-k\"\n");
    write_gz("sub/zipped.pbrt.gz", "NamedMaterial \"gold\"\n" TRI);
    scene *s = load("inc.pbrt", CAM "WorldBegin\nInclude \"sub/geo.pbrt\"\nImport \"sub/zipped.pbrt.gz\"\n");
    CHECK(s != NULL, "include: %s", g_err);
    if (s) {
        CHECK(s->ntriangles == 2, "%zu triangles", s->ntriangles);
        const material *m = &s->materials[s->triangles[1].material];
        CHECK(m->kind == MAT_CONDUCTOR && m->albedo.x > 0.9f && m->albedo.z < 0.5f && m->complex_ior && m->k.x > 2,
              "gold from its named spectra: a complex IOR: %d %g %g", m->kind, m->albedo.x, m->albedo.z);
        CHECK(s->materials[s->triangles[0].material].kind == MAT_DIFFUSE, "pbrt's default material is diffuse");
        scene_destroy(s);
    }
    /* an error inside an included file names that file and its line */
    write_tmp("sub/bad.pbrt",
              "\n\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0] \"integer indices\" [0 1 7]\n");
    s = load("incbad.pbrt", CAM "WorldBegin\nInclude \"sub/bad.pbrt\"\n");
    CHECK(s == NULL && contains(g_err, "sub/bad.pbrt:3:") && contains(g_err, "out of range") && !strchr(g_err, '\n'),
          "%s", g_err);
    s = load("incmissing.pbrt", CAM "WorldBegin\n\nInclude \"nothere.pbrt\"\n");
    CHECK(s == NULL && contains(g_err, "incmissing.pbrt:6:") && contains(g_err, "nothere.pbrt"), "%s", g_err);
    write_tmp("sub/self.pbrt", "Include \"self.pbrt\"\n");
    s = load("incself.pbrt", CAM "WorldBegin\nInclude \"sub/self.pbrt\"\n");
    CHECK(s == NULL && contains(g_err, "itself"), "%s", g_err);
}

static void test_errors(void) {
    struct {
        const char *text, *want1, *want2;
    } cases[] = {
        {CAM "WorldBegin\nShap \"sphere\"\n", "bad.pbrt:5:", "did you mean \"Shape\""},
        {CAM "WorldBegin\nShape \"sphere\" \"float radius\" [1\n", "bad.pbrt:", "ends inside"},
        {CAM "WorldBegin\nNamedMaterial \"nope\"\n", "bad.pbrt:5:", "no material named"},
        {CAM "WorldBegin\nShape \"sphere\" \"float radius\n", "bad.pbrt:5:", "unterminated string"},
        {CAM "WorldBegin\nTranslate 1 2\nShape \"sphere\"\n", "bad.pbrt:6:", "not a number"},
        {CAM "WorldBegin\nShape \"sphere\" \"floot radius\" 2\n", "bad.pbrt:5:", "unknown parameter type"},
        {CAM "WorldBegin\nAttributeEnd\n", "bad.pbrt:5:", "without a matching begin"},
        {CAM "\n", "bad.pbrt", "no WorldBegin"},
        {CAM "WorldBegin\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1]\n",
         "bad.pbrt:5:", "expected a multiple"},
        {CAM "WorldBegin\nObjectInstance \"x\"\n", "bad.pbrt:5:", "no object named"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        scene *s = load("bad.pbrt", cases[i].text);
        CHECK(s == NULL && contains(g_err, cases[i].want1) && contains(g_err, cases[i].want2) && !strchr(g_err, '\n'),
              "case %zu: %s", i, g_err);
        if (s) scene_destroy(s);
    }
    /* --strict: what is approximated is an error */
    scene *s = load_opts("strict.pbrt", CAM "WorldBegin\nMaterial \"measured\"\n" TRI, 1);
    CHECK(s == NULL && contains(g_err, "strict.pbrt:5:") && contains(g_err, "measured"), "%s", g_err);
}

static void test_objects_and_shapes(void) {
    scene *s = load("obj.pbrt", CAM "WorldBegin\nObjectBegin \"t\"\nTranslate 0 0 1\n" TRI "ObjectEnd\n"
                                    "ObjectInstance \"t\"\nTranslate 10 0 0\nObjectInstance \"t\"\n"
                                    "Shape \"loopsubdiv\" \"integer levels\" 2 \"point3 P\" [0 0 0 1 0 0 0 1 0 0 0 1] "
                                    "\"integer indices\" [0 2 1 0 1 3 0 3 2 1 2 3]\n"
                                    "Shape \"bilinearmesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0 1 1 0]\n"
                                    "Shape \"sphere\" \"float radius\" 2\n"
                                    "Shape \"disk\" \"float radius\" 1\nShape \"cylinder\"\n"
                                    "Shape \"sphere\" \"float zmax\" 0.5\n");
    CHECK(s != NULL, "objects: %s", g_err);
    if (!s) return;
    /* the object's triangle is held once, in its space, and placed twice (true instancing) */
    CHECK(near3(s->positions[0], 1, 0, 1) && s->nmeshes == 1 && s->nplacements == 2 &&
              fabsf(s->placements[0].to_world.m[0][3]) < 1e-6f && fabsf(s->placements[1].to_world.m[0][3] - 10) < 1e-5f,
          "instances placed: %g, %zu meshes, %zu placements", s->positions[0].x, s->nmeshes, s->nplacements);
    size_t want = 1 + 4 * 16 + 2 + 2 * 64 + 2 * 64 + 2 * 64 * 32;
    CHECK(s->ntriangles == want, "%zu triangles, want %zu", s->ntriangles, want);
    CHECK(s->nspheres == 1, "a whole sphere is caustic's sphere");
    CHECK(contains(g_w.text, "tessellated"), "tessellation is said");
    scene_destroy(s);
}

static void test_plymesh(void) {
    const char *ply = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                      "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n"
                      "4 0 1 2 3\n";
    write_tmp("quad.ply", ply);
    write_gz("quad.ply.gz", ply);
    scene *s = load("ply.pbrt", CAM "WorldBegin\nShape \"plymesh\" \"string filename\" \"quad.ply\"\nTranslate 0 0 5\n"
                                    "Shape \"plymesh\" \"string filename\" \"quad.ply.gz\"\n");
    CHECK(s != NULL, "plymesh: %s", g_err);
    if (s) {
        CHECK(s->ntriangles == 4 && near3(s->positions[4], 0, 0, 5), "%zu triangles", s->ntriangles);
        scene_destroy(s);
    }
    s = load("plybad.pbrt", CAM "WorldBegin\nShape \"plymesh\" \"string filename\" \"none.ply\"\n");
    CHECK(s == NULL && contains(g_err, "plybad.pbrt:5:") && contains(g_err, "none.ply"), "%s", g_err);
}

static void test_lights_and_spectra(void) {
    vec3 bb = pbrt_blackbody_rgb(6500);
    CHECK_NEAR(pbrt_luminance(bb), 1.0, 1e-3, "blackbody luminance");
    CHECK(fabs(bb.x - bb.z) < 0.15, "6500 K is near white: %g %g %g", bb.x, bb.y, bb.z);
    vec3 warm = pbrt_blackbody_rgb(2700);
    CHECK(warm.x > warm.z * 2, "2700 K is warm");
    double lam[2] = {300, 900}, val[2] = {1, 1};
    vec3 flat = pbrt_spd_to_rgb(lam, val, 2);
    CHECK(flat.x > 0 && fabs(flat.x / flat.y - 1) < 0.4 && fabs(flat.z / flat.y - 1) < 0.4,
          "a flat spectrum (illuminant E) is near white: %g %g %g", flat.x, flat.y, flat.z);
    scene *s = load("lights.pbrt",
                    CAM "WorldBegin\n"
                        "LightSource \"point\" \"rgb I\" [1 2 3] \"float scale\" 2 \"point3 from\" [1 2 3]\n"
                        "LightSource \"spot\" \"blackbody I\" 3000 \"point3 from\" [0 5 0] \"point3 to\" [0 0 0]\n"
                        "LightSource \"distant\" \"rgb L\" [1 1 1] \"point3 from\" [0 1 0] \"point3 to\" [0 0 0]\n"
                        "LightSource \"infinite\" \"rgb L\" [0.1 0.2 0.3]\n"
                        "AttributeBegin\nAreaLightSource \"diffuse\" \"blackbody L\" 5000 \"float scale\" 4 "
                        "\"bool twosided\" true\n" TRI "AttributeEnd\n" TRI);
    CHECK(s != NULL, "lights: %s", g_err);
    if (!s) return;
    CHECK(s->npunctual == 3, "%zu punctual", s->npunctual);
    CHECK(near3(s->punctual[0].p, 1, 2, 3) && near3(s->punctual[0].intensity, 2, 4, 6), "point light");
    CHECK(near3(s->env_radiance, 0.1, 0.2, 0.3), "constant infinite light");
    CHECK(s->punctual[1].kind == LIGHT_SPOT && s->punctual[1].falloff == SPOT_FALLOFF_SMOOTHSTEP,
          "a spot keeps pbrt-v4's smoothstep falloff");
    const material *e = &s->materials[s->triangles[0].material];
    CHECK_NEAR(pbrt_luminance(e->emission), 4.0, 1e-2, "area light: luminance 1 times scale");
    CHECK(e->two_sided == 1, "twosided");
    CHECK(s->materials[s->triangles[1].material].emission.x == 0, "AttributeEnd ends the area light");
    scene_destroy(s);
    /* power: W over pi * area (a triangle of area 0.5), and a sphere of radius 2 */
    s = load("power.pbrt", CAM "WorldBegin\nAreaLightSource \"diffuse\" \"float power\" 10\n"
                               "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0] \"integer indices\" [0 1 2]\n"
                               "Shape \"sphere\" \"float radius\" 2\n");
    CHECK(s != NULL, "power: %s", g_err);
    if (s) {
        CHECK_NEAR(s->materials[s->triangles[0].material].emission.y, 10 / (PI_T * 0.5), 1e-3, "power on a triangle");
        CHECK_NEAR(s->materials[s->spheres[0].material].emission.y, 10 / (PI_T * 16 * PI_T), 1e-4, "power on a sphere");
        scene_destroy(s);
    }
}

static void test_materials_and_textures(void) {
    scene *s =
        load("mats.pbrt", CAM
             "WorldBegin\n"
             "Texture \"checks\" \"spectrum\" \"checkerboard\" \"float uscale\" 4 \"float vscale\" 4 "
             "\"rgb tex1\" [1 0 0] \"rgb tex2\" [0 0 1]\n"
             "Texture \"half\" \"spectrum\" \"scale\" \"rgb tex\" [0.5 0.5 0.5] \"float scale\" 0.5\n"
             "Material \"diffuse\" \"texture reflectance\" \"checks\"\n" TRI
             "Material \"diffuse\" \"texture reflectance\" \"half\"\n" TRI
             "Material \"dielectric\" \"float eta\" 1.33\n" TRI "Material \"dielectric\" \"float roughness\" 0.3\n" TRI
             "Material \"coateddiffuse\" \"rgb reflectance\" [0.2 0.3 0.4]\n" TRI
             "Material \"coatedconductor\" \"spectrum conductor.eta\" \"metal-Ag-eta\" \"spectrum conductor.k\" "
             "\"metal-Ag-k\" \"float interface.roughness\" 0.01\n" TRI
             "MakeNamedMaterial \"a\" \"string type\" \"diffuse\" \"rgb reflectance\" [1 0 0]\n"
             "MakeNamedMaterial \"b\" \"string type\" \"diffuse\" \"rgb reflectance\" [0 1 0]\n"
             "Material \"mix\" \"string materials\" [\"a\" \"b\"] \"float amount\" 0.8\n" TRI
             "Material \"interface\"\n" TRI "Material \"hair\"\n" TRI "Material \"hair\"\n" TRI);
    CHECK(s != NULL, "materials: %s", g_err);
    if (!s) return;
    const material *m0 = &s->materials[s->triangles[0].material];
    CHECK(m0->albedo_tex >= 0 && s->textures[m0->albedo_tex].kind == TEX_CHECKER, "checkerboard texture");
    CHECK(near3(s->materials[s->triangles[1].material].albedo, 0.25, 0.25, 0.25), "scale texture of constants");
    CHECK(s->materials[s->triangles[2].material].kind == MAT_DIELECTRIC &&
              fabs(s->materials[s->triangles[2].material].ior - 1.33) < 1e-5,
          "dielectric eta");
    CHECK(s->materials[s->triangles[3].material].kind == MAT_ROUGH_GLASS, "rough dielectric");
    const material *cd = &s->materials[s->triangles[4].material];
    CHECK(cd->kind == MAT_COATED && cd->coat_base == COAT_BASE_DIFFUSE && near3(cd->albedo, 0.2, 0.3, 0.4) &&
              fabs(cd->coat_tint.x - exp(-0.02)) < 1e-4,
          "coateddiffuse -> Coated over diffuse, the layer's tint from thickness 0.01");
    const material *cc = &s->materials[s->triangles[5].material];
    CHECK(cc->kind == MAT_COATED && cc->coat_base == COAT_BASE_CONDUCTOR && cc->complex_ior && cc->coat_alpha > 0,
          "coatedconductor -> Coated over a silver conductor, a rough coat");
    CHECK(near3(s->materials[s->triangles[6].material].albedo, 0, 1, 0), "mix: the heavier one");
    CHECK(s->ntriangles == 9, "interface shapes are no surface: %zu", s->ntriangles);
    CHECK(contains(g_w.text, "material \"hair\"") && contains(g_w.text, "(and 1 more like it)"),
          "one warning per feature, counted: %s", g_w.text);
    CHECK(contains(g_w.text, "mats.pbrt:11:") || contains(g_w.text, "mats.pbrt:"), "warnings name file:line");
    scene_destroy(s);
}

/* pbrt-v4's metals are spectral: a named metal (metal-XX-eta / metal-XX-k, and the conductor's
 * default, copper) becomes the table's index fitted to the spectrally integrated Fresnel
 * (material_metal_lookup_spectral), not Mitsuba's RGB projection of eta and k (the Mitsuba reader
 * and JSON keep that); a constant "reflectance" is pbrt's eta 1, k = 2 sqrt(r) / sqrt(1 - r) per
 * channel, whose F0 is r; rgb eta and k stay as given. */
static void test_named_metals(void) {
    scene *s =
        load("metals.pbrt", CAM "WorldBegin\n"
                                "Material \"conductor\" \"spectrum eta\" \"metal-Cu-eta\" \"spectrum k\" "
                                "\"metal-Cu-k\"\n" TRI "Material \"conductor\"\n" TRI
                                "Material \"conductor\" \"spectrum eta\" \"metal-Au-eta\" \"spectrum k\" "
                                "\"metal-Au-k\" \"float roughness\" 0.2\n" TRI
                                "Material \"coatedconductor\" \"spectrum conductor.eta\" \"metal-Ag-eta\" "
                                "\"spectrum conductor.k\" \"metal-Ag-k\"\n" TRI
                                "Material \"conductor\" \"rgb reflectance\" [0.9 0.6 0.3]\n" TRI
                                "Material \"conductor\" \"rgb eta\" [0.2 0.9 1.1] \"rgb k\" [3.9 2.4 2.1]\n" TRI);
    CHECK(s != NULL, "metals: %s", g_err);
    if (!s) return;
    CHECK(s->ntriangles == 6, "six triangles: %zu", s->ntriangles);
    const char *metal[4] = {"Cu", "Cu", "Au", "Ag"};
    for (int i = 0; i < 4 && s->ntriangles == 6; ++i) {
        const material *m = &s->materials[s->triangles[i].material];
        vec3 eta, k, eta_m, k_m;
        CHECK(material_metal_lookup_spectral(metal[i], &eta, &k, NULL) == 0 &&
                  material_metal_lookup(metal[i], &eta_m, &k_m, NULL) == 0,
              "metal %s in the table", metal[i]);
        CHECK(m->complex_ior && near3(m->eta, eta.x, eta.y, eta.z) && near3(m->k, k.x, k.y, k.z),
              "triangle %d (%s): the spectral fit's eta (%g %g %g) and k (%g %g %g), got (%g %g %g) (%g %g %g)", i,
              metal[i], eta.x, eta.y, eta.z, k.x, k.y, k.z, m->eta.x, m->eta.y, m->eta.z, m->k.x, m->k.y, m->k.z);
        /* the two sets differ: the check above tells which one the reader took */
        CHECK(fabs(eta.x - eta_m.x) + fabs(eta.y - eta_m.y) + fabs(k.x - k_m.x) > 0.02,
              "metal %s: the spectral fit equals Mitsuba's RGB index", metal[i]);
    }
    if (s->ntriangles == 6) {
        const material *r = &s->materials[s->triangles[4].material];
        double rr[3] = {0.9, 0.6, 0.3};
        vec3 f0 = fresnel_conductor(1.0f, r->eta, r->k);
        CHECK(r->complex_ior && near3(r->eta, 1, 1, 1) &&
                  near3(r->k, 2 * sqrt(rr[0] / (1 - rr[0])), 2 * sqrt(rr[1] / (1 - rr[1])),
                        2 * sqrt(rr[2] / (1 - rr[2]))) &&
                  near3(f0, rr[0], rr[1], rr[2]),
              "reflectance [0.9 0.6 0.3]: eta 1, k 2 sqrt(r / (1 - r)), F0 r; got eta %g k (%g %g %g) F0 (%g %g %g)",
              r->eta.x, r->k.x, r->k.y, r->k.z, f0.x, f0.y, f0.z);
        const material *e = &s->materials[s->triangles[5].material];
        CHECK(e->complex_ior && near3(e->eta, 0.2, 0.9, 1.1) && near3(e->k, 3.9, 2.4, 2.1), "rgb eta and k as given");
    }
    scene_destroy(s);
}

static void test_image_and_alpha(void) {
    /* a 2x2 PFM (linear float) as an imagemap, and a float checkerboard as a shape's alpha */
    char path[512];
    snprintf(path, sizeof path, "%s/img.pfm", g_tmp);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fprintf(f, "PF\n2 2\n-1.0\n");
    float px[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
    fwrite(px, sizeof px[0], 12, f);
    fclose(f);
    scene *s =
        load("img.pbrt", CAM "WorldBegin\n"
                             "Texture \"im\" \"spectrum\" \"imagemap\" \"string filename\" \"img.pfm\"\n"
                             "Texture \"cut\" \"float\" \"checkerboard\" \"float uscale\" 2 \"float vscale\" 2 "
                             "\"float tex1\" 1 \"float tex2\" 0\n"
                             "Material \"diffuse\" \"texture reflectance\" \"im\"\n"
                             "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0] \"point2 uv\" [0 0 1 0 1 1] "
                             "\"texture alpha\" \"cut\"\n");
    CHECK(s != NULL, "imagemap and alpha: %s", g_err);
    if (!s) return;
    const material *m = &s->materials[s->triangles[0].material];
    CHECK(m->albedo_tex >= 0 && s->textures[m->albedo_tex].kind == TEX_IMAGE && s->textures[m->albedo_tex].width == 2,
          "imagemap reflectance");
    CHECK((m->maps & MAP_OPACITY) && m->alpha_cutoff > 0 && s->textures[m->alpha_tex].kind == TEX_CHECKER,
          "alpha texture: a cut-out");
    CHECK(s->uvs[1].x == 1.0f && s->uvs[1].y == 0.0f, "uv kept");
    scene_destroy(s);
    /* displacement by a scaled float image: caustic's bump map of that scale, on a tessellated sphere */
    s = load("bump.pbrt", CAM "WorldBegin\nTexture \"h\" \"float\" \"imagemap\" \"string filename\" \"img.pfm\"\n"
                              "Texture \"sh\" \"float\" \"scale\" \"texture tex\" \"h\" \"float scale\" -0.1\n"
                              "Material \"diffuse\" \"texture displacement\" \"sh\"\nShape \"sphere\"\n"
                              "Material \"thindielectric\" \"float eta\" 1.3\n" TRI
                              "Material \"diffusetransmission\" \"rgb transmittance\" [0.5 0.5 0.5]\n" TRI);
    CHECK(s != NULL, "bump: %s", g_err);
    if (!s) return;
    m = &s->materials[s->triangles[0].material];
    CHECK(s->nspheres == 0 && (m->maps & MAP_BUMP) && fabs(m->normal_scale + 0.1) < 1e-6, "bump map: %d %g", m->maps,
          m->normal_scale);
    CHECK(s->materials[s->triangles[s->ntriangles - 2].material].kind == MAT_THIN_DIELECTRIC, "thindielectric");
    CHECK(s->materials[s->triangles[s->ntriangles - 1].material].kind == MAT_DIFFUSE_TRANSMISSION,
          "diffusetransmission");
    scene_destroy(s);
    s = load("imgbad.pbrt",
             CAM "WorldBegin\nTexture \"im\" \"spectrum\" \"imagemap\" \"string filename\" \"no.png\"\n");
    CHECK(s == NULL && contains(g_err, "imgbad.pbrt:5:") && contains(g_err, "no.png"), "%s", g_err);
}

static void test_pbrt_v3(void) {
    /* files written for pbrt-v3 load: its material names, "area" lights, rgb scales, two-value blackbodies */
    scene *s = load("v3.pbrt", CAM "WorldBegin\nLightSource \"infinite\" \"rgb L\" [1 1 1] \"rgb scale\" [2 2 2]\n"
                                   "Material \"matte\" \"rgb Kd\" [0.1 0.2 0.3]\n" TRI
                                   "Material \"glass\" \"float index\" 1.4\n" TRI
                                   "AreaLightSource \"area\" \"blackbody L\" [6500 3]\n" TRI);
    CHECK(s != NULL, "pbrt-v3 file: %s", g_err);
    if (!s) return;
    CHECK(near3(s->env_radiance, 2, 2, 2), "rgb scale");
    CHECK(near3(s->materials[s->triangles[0].material].albedo, 0.1, 0.2, 0.3), "matte Kd");
    CHECK(s->materials[s->triangles[1].material].kind == MAT_DIELECTRIC &&
              fabs(s->materials[s->triangles[1].material].ior - 1.4) < 1e-5,
          "glass index");
    CHECK_NEAR(pbrt_luminance(s->materials[s->triangles[2].material].emission), 3.0, 0.01, "blackbody T, scale");
    scene_destroy(s);
}

/* Media: MakeNamedMedium homogeneous (sigma_a, sigma_s, scale, g, Le, preset), MediumInterface on
 * shapes (an "interface" sphere bounds its medium; a shape whose sides are equal bounds none) and
 * at the Camera (its outside), subsurface as a dielectric around its medium (named measured media,
 * reflectance + mfp through the inversion), and cloud media: one warning, rendered without them. */
static void test_media(void) {
    scene *s =
        load("media.pbrt", "MakeNamedMedium \"fog\" \"string type\" \"homogeneous\" \"rgb sigma_a\" [0.1 0.2 0.3]\n"
                           "  \"rgb sigma_s\" [1 2 3] \"float scale\" 2 \"float g\" 0.3 \"rgb Le\" [0.5 0.5 0.5]\n"
                           "MakeNamedMedium \"k\" \"string type\" \"homogeneous\" \"string preset\" \"Ketchup\"\n"
                           "MakeNamedMedium \"grid\" \"string type\" \"cloud\"\n"
                           "MediumInterface \"\" \"fog\"\n" CAM "WorldBegin\n"
                           "AttributeBegin MediumInterface \"fog\" \"\" Material \"interface\"\n"
                           "  Shape \"sphere\" \"float radius\" 5 AttributeEnd\n"
                           "AttributeBegin MediumInterface \"k\" \"k\" Material \"diffuse\" " TRI "AttributeEnd\n"
                           "AttributeBegin MediumInterface \"grid\" \"fog\" Material \"dielectric\"\n"
                           "  Shape \"sphere\" \"float radius\" 1 AttributeEnd\n"
                           "AttributeBegin Material \"subsurface\" \"string name\" \"Skin1\" \"float scale\" 10\n"
                           "  Shape \"sphere\" \"float radius\" 2 AttributeEnd\n"
                           "AttributeBegin Material \"subsurface\" \"rgb reflectance\" [0.8 0.8 0.8]\n"
                           "  \"rgb mfp\" [1 2 0.5] \"float eta\" 1.4 \"float roughness\" 0.1\n"
                           "  Shape \"sphere\" \"float radius\" 3 AttributeEnd\n");
    CHECK(s != NULL, "media: %s", g_err);
    if (!s) return;
    int fog = scene_find_medium(s, "fog"), k = scene_find_medium(s, "k");
    CHECK(fog >= 0 && k >= 0 && scene_find_medium(s, "grid") < 0, "media by name (the cloud one not made)");
    if (fog < 0 || k < 0) {
        scene_destroy(s);
        return;
    }
    CHECK(near3(s->media[fog].sigma_a, 0.2, 0.4, 0.6) && near3(s->media[fog].sigma_s, 2, 4, 6), "scale multiplies");
    CHECK(fabsf(s->media[fog].g - 0.3f) < 1e-6f && near3(s->media[fog].emission, 0.5, 0.5, 0.5), "g, Le");
    CHECK(near3(s->media[k].sigma_s, 0.18, 0.07, 0.03) && near3(s->media[k].sigma_a, 0.061, 0.97, 1.45), "preset");
    CHECK(s->camera.medium == fog + 1, "the camera's medium is the MediumInterface's outside (%d)", s->camera.medium);
    CHECK(s->nspheres == 4, "%zu spheres (the interface sphere bounds fog: kept)", s->nspheres);
    const material *mi = &s->materials[s->spheres[0].material];
    CHECK(mi->kind == MAT_INTERFACE && mi->medium_inside == fog + 1 && mi->medium_outside == 0 &&
              !(mi->alpha_cutoff > 0.0f),
          "interface sphere: fog inside, vacuum outside, not cut out (kind %d, %d %d)", mi->kind, mi->medium_inside,
          mi->medium_outside);
    const material *mt = &s->materials[s->triangles[0].material];
    CHECK(mt->medium_inside == 0 && mt->medium_outside == 0, "equal sides: no boundary");
    const material *mg = &s->materials[s->spheres[1].material];
    CHECK(mg->kind == MAT_DIELECTRIC && mg->medium_inside == 0 && mg->medium_outside == fog + 1,
          "a cloud medium renders as the vacuum (%d %d)", mg->medium_inside, mg->medium_outside);
    const material *ms = &s->materials[s->spheres[2].material];
    CHECK(ms->kind == MAT_DIELECTRIC && ms->medium_inside > 0 && fabsf(ms->ior - 1.33f) < 1e-6f,
          "subsurface: a dielectric of eta 1.33 around its medium (kind %d)", ms->kind);
    if (ms->medium_inside > 0)
        CHECK(near3(s->media[ms->medium_inside - 1].sigma_s, 7.4, 8.8, 10.1), "Skin1 times scale 10");
    const material *mr = &s->materials[s->spheres[3].material];
    CHECK(mr->kind == MAT_ROUGH_GLASS && mr->medium_inside > 0 && fabsf(mr->ior - 1.4f) < 1e-6f,
          "rough subsurface: rough glass (kind %d)", mr->kind);
    if (mr->medium_inside > 0) {
        vec3 sa, ss;
        material_subsurface_medium(v3s(0.8f), v3(1, 2, 0.5f), 0.0f, &sa, &ss);
        const medium *m = &s->media[mr->medium_inside - 1];
        CHECK(fabsf(m->sigma_a.y - sa.y) < 1e-6f && fabsf(m->sigma_s.z - ss.z) < 1e-5f, "reflectance + mfp");
    }
    CHECK(strstr(g_w.text, "cloud") != NULL && strstr(g_w.text, "without the medium") != NULL,
          "the cloud medium's warning: %s", g_w.text);
    CHECK(strstr(g_w.text, "random walk") != NULL, "subsurface says what it renders: %s", g_w.text);
    scene_destroy(s);
    s = load("media_bad.pbrt", "MakeNamedMedium \"a\" \"string type\" \"homogeneous\" \"string preset\" \"Skin9\"\n" CAM
                               "WorldBegin\n" TRI);
    CHECK(s == NULL && strstr(g_err, "media_bad.pbrt:1") && strstr(g_err, "Skin9"), "unknown preset: %s", g_err);
    if (s) scene_destroy(s);
}

/* pbrt's grid density at pbrt-local point x of [p0, p1] = [0, 1]^3 scaled by ext (SampledGrid:
 * voxel i at (i + 0.5) / n, trilinear, voxels outside the grid read 0), for a grid of res n */
static double pbrt_grid_ref(const double *v, const int n[3], const double u[3]) {
    int i0[3];
    double f[3];
    for (int a = 0; a < 3; ++a) {
        double s = u[a] * n[a] - 0.5;
        i0[a] = (int)floor(s);
        f[a] = s - i0[a];
    }
    double sum = 0;
    for (int c = 0; c < 8; ++c) {
        int i[3] = {i0[0] + (c & 1), i0[1] + ((c >> 1) & 1), i0[2] + ((c >> 2) & 1)};
        double w = 1;
        int inside = 1;
        for (int a = 0; a < 3; ++a) {
            w *= (c >> a) & 1 ? f[a] : 1 - f[a];
            inside &= i[a] >= 0 && i[a] < n[a];
        }
        if (inside) sum += w * v[(i[2] * n[1] + i[1]) * n[0] + i[0]];
    }
    return sum;
}

/* caustic's density (kernel/media/grid.h) of grid medium m at world point p */
static double caustic_grid_at(const scene *s, const medium *m, vec3 p) {
    kscene k;
    memset(&k, 0, sizeof k);
    k.voxels = s->voxels;
    return grid_density(&k, m, grid_point(m, p));
}

/* a small render of a pbrt file (24 x 24, spp samples), its image malloc'd into *img */
static int render_file(const char *path, int spp, float **img, int *w, int *h) {
    caustic_scene *cs = NULL;
    char err[512];
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    if (caustic_scene_load_ex(&cs, path, &lo, err, sizeof err)) {
        CHECK(0, "render %s: %s", path, err);
        return -1;
    }
    caustic_options o;
    caustic_options_init(&o);
    o.width = 24;
    o.height = 24;
    o.spp = spp;
    o.threads = 2;
    o.seed = 5;
    o.max_depth = 16;
    caustic_renderer *r = caustic_renderer_create(cs, &o, err, sizeof err);
    CHECK(r != NULL, "renderer: %s", err);
    if (!r) {
        caustic_scene_free(cs);
        return -1;
    }
    caustic_render(r, NULL, NULL, NULL, 0);
    const float *im = caustic_image(r, w, h);
    size_t n = (size_t)*w * (size_t)*h * 3;
    *img = malloc(n * sizeof **img);
    if (*img) memcpy(*img, im, n * sizeof **img);
    caustic_renderer_free(r);
    caustic_scene_free(cs);
    return *img ? 0 : -1;
}

/* Grid media: uniformgrid's res, transform (the CTM at MakeNamedMedium), coefficients and pbrt's
 * voxel convention (the density at chosen points equals pbrt's SampledGrid lookup, faces included);
 * rgbgrid as density (sigma_t's largest channel) and albedo, warned where extinction is chromatic;
 * a constant uniformgrid renders as the homogeneous medium; errors name file and line. */
static void test_grid_media(void) {
    scene *s =
        load("grid.pbrt", CAM "WorldBegin\n"
                              "AttributeBegin Translate 10 0 0 Scale 2 1 1\n"
                              "MakeNamedMedium \"g\" \"string type\" \"uniformgrid\" \"integer nx\" 2 "
                              "\"integer ny\" 3 \"integer nz\" 1\n"
                              "  \"float density\" [1 3  2 4  0.5 6] \"point3 p0\" [0 -1 0] \"point3 p1\" [1 2 "
                              "1]\n"
                              "  \"rgb sigma_a\" [0.1 0.2 0.3] \"rgb sigma_s\" [1 1 2] \"float scale\" 2 \"float "
                              "g\" -0.4\n"
                              "AttributeEnd\n"
                              "MakeNamedMedium \"c\" \"string type\" \"rgbgrid\" \"integer nx\" 2\n"
                              "  \"rgb sigma_a\" [0.5 0.5 0.5  1 1 1] \"rgb sigma_s\" [0.5 0.5 0.5  1 2 3]\n"
                              "MakeNamedMedium \"v\" \"string type\" \"cloud\"\n" TRI);
    CHECK(s != NULL, "grid media: %s", g_err);
    if (!s) return;
    int g = scene_find_medium(s, "g"), c = scene_find_medium(s, "c");
    CHECK(g >= 0 && c >= 0 && scene_find_medium(s, "v") < 0, "uniformgrid and rgbgrid made, cloud not (%d %d)", g, c);
    if (g < 0 || c < 0) {
        scene_destroy(s);
        return;
    }
    const medium *m = &s->media[g];
    CHECK(m->kind == MEDIUM_GRID && m->albedo_grid == MEDIUM_NO_GRID, "uniformgrid: a grid medium, no albedo grid");
    CHECK(m->res[0] == 4 && m->res[1] == 5 && m->res[2] == 3, "res: the file's 2 3 1 with a border (%u %u %u)",
          m->res[0], m->res[1], m->res[2]);
    CHECK(near3(m->sigma_a, 0.2, 0.4, 0.6) && near3(m->sigma_s, 2, 2, 4) && fabsf(m->g + 0.4f) < 1e-6f,
          "coefficients times scale, g");
    /* pbrt-local (x, y, z) in [0,1]x[-1,2]x[0,1]; world = (10 + 2x, y, z) */
    static const double dv[6] = {1, 3, 2, 4, 0.5, 6};
    static const int n3[3] = {2, 3, 1};
    static const double pts[][3] = {{0.25, 0.5, 0.5},   {0.75, 1.5, 0.5},  {0.5, 0.0, 0.5},   {0.02, -0.9, 0.1},
                                    {0.99, 1.97, 0.93}, {0.0, 0.5, 0.5},   {0.6, 2.0, 0.5},   {0.3, 0.7, 0.0},
                                    {0.5, 0.5, 1.0},    {0.13, 1.1, 0.27}, {0.81, -0.3, 0.66}};
    int bad = 0;
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; ++i) {
        double u[3] = {pts[i][0], (pts[i][1] + 1.0) / 3.0, pts[i][2]};
        double want = pbrt_grid_ref(dv, n3, u);
        double got = caustic_grid_at(s, m, v3((float)(10 + 2 * pts[i][0]), (float)pts[i][1], (float)pts[i][2]));
        if (fabs(got - want) > 1e-4) {
            bad++;
            printf("uniformgrid at (%g %g %g): caustic %g, pbrt %g\n", pts[i][0], pts[i][1], pts[i][2], got, want);
        }
    }
    CHECK(bad == 0, "the density equals pbrt-v4's SampledGrid lookup at %d of %zu points",
          (int)(sizeof pts / sizeof pts[0]) - bad, sizeof pts / sizeof pts[0]);
    double out = caustic_grid_at(s, m, v3(10 - 1.0f, 0.5f, 0.5f));
    CHECK(out == 0.0, "no density a voxel outside [p0, p1] (%g)", out);
    /* rgbgrid: voxel 0 grey (sigma_t 1), voxel 1 sigma_t (2 3 4): density 4, albedo sigma_s / 4 */
    const medium *mc = &s->media[c];
    CHECK(mc->kind == MEDIUM_GRID && mc->albedo_grid != MEDIUM_NO_GRID && mc->res[0] == 4 && mc->res[1] == 3,
          "rgbgrid: density and albedo grids (res %u %u %u)", mc->res[0], mc->res[1], mc->res[2]);
    CHECK(near3(vadd(mc->sigma_a, mc->sigma_s), 1, 1, 1), "rgbgrid: sigma_t 1 per unit density");
    /* voxel centres in world: x = 0.25 and 0.75 of [0, 1] */
    CHECK_NEAR(caustic_grid_at(s, mc, v3(0.25f, 0.5f, 0.5f)), 1.0, 1e-5, "rgbgrid density, grey voxel");
    CHECK_NEAR(caustic_grid_at(s, mc, v3(0.75f, 0.5f, 0.5f)), 4.0, 1e-5, "rgbgrid density: sigma_t's largest channel");
    size_t a1 = mc->albedo_grid + 3u * ((1u * 3u + 1u) * 4u + 2u); /* file voxel 1 = stored (2, 1, 1) */
    CHECK(fabsf(s->voxels[a1] - 0.25f) < 1e-6f && fabsf(s->voxels[a1 + 1] - 0.5f) < 1e-6f &&
              fabsf(s->voxels[a1 + 2] - 0.75f) < 1e-6f,
          "rgbgrid albedo sigma_s / density (%g %g %g)", s->voxels[a1], s->voxels[a1 + 1], s->voxels[a1 + 2]);
    CHECK(contains(g_w.text, "differs between RGB channels in 1 of 2 voxels") && contains(g_w.text, "50.0%"),
          "the chromatic extinction warning: %s", g_w.text);
    CHECK(contains(g_w.text, "\"cloud\"") && contains(g_w.text, "without the medium"), "cloud: %s", g_w.text);
    scene_destroy(s);

    /* a grid medium made before WorldBegin takes the mirror the camera decides there (pbrt's plain
     * LookAt: mirrored) as one made after it */
    s = load("grid_mirror.pbrt",
             "MakeNamedMedium \"a\" \"string type\" \"uniformgrid\" \"float density\" [1] \"point3 p0\" [1 2 3]\n"
             "LookAt 1 2 10  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" 40\nWorldBegin\n"
             "MakeNamedMedium \"b\" \"string type\" \"uniformgrid\" \"float density\" [1] \"point3 p0\" [1 2 3]\n"
             "  \"point3 p1\" [1 1 1]\n" TRI);
    CHECK(s == NULL && contains(g_err, "grid_mirror.pbrt:1") && contains(g_err, "p1 is not above p0 on axis x"),
          "p1 (default 1 1 1) not above p0: %s", g_err);
    if (s) scene_destroy(s);
    s = load("grid_mirror.pbrt",
             "MakeNamedMedium \"a\" \"string type\" \"uniformgrid\" \"float density\" [1] \"point3 p1\" [1 2 3]\n"
             "LookAt 1 2 10  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" 40\nWorldBegin\n"
             "MakeNamedMedium \"b\" \"string type\" \"uniformgrid\" \"float density\" [1] \"point3 p1\" [1 2 3]\n" TRI);
    CHECK(s != NULL, "grid media before and after WorldBegin: %s", g_err);
    if (s) {
        const medium *ma = &s->media[scene_find_medium(s, "a")], *mb = &s->media[scene_find_medium(s, "b")];
        float worst = 0.0f;
        for (int i = 0; i < 12; ++i) worst = fmaxf(worst, fabsf(ma->to_grid[i] - mb->to_grid[i]));
        CHECK(worst < 1e-5f, "before WorldBegin: the same place as after it, mirror included (differs by %g)", worst);
        scene_destroy(s);
    }

    /* errors name file and line */
    s = load("grid_bad.pbrt", CAM "WorldBegin\nMakeNamedMedium \"g\" \"string type\" \"uniformgrid\"\n"
                                  "  \"integer nx\" 2 \"float density\" [1 2 3]\n");
    CHECK(s == NULL && contains(g_err, "grid_bad.pbrt:6") && contains(g_err, "3 \"density\" values") &&
              contains(g_err, "= 2 expected"),
          "wrong density count: %s", g_err);
    if (s) scene_destroy(s);
    s = load("grid_bad2.pbrt", CAM "WorldBegin\nMakeNamedMedium \"g\" \"string type\" \"rgbgrid\"\n"
                                   "  \"rgb sigma_a\" [1 2]\n");
    CHECK(s == NULL && contains(g_err, "grid_bad2.pbrt:6") && contains(g_err, "multiple of 3"), "rgb count: %s", g_err);
    if (s) scene_destroy(s);
    s = load("grid_bad3.pbrt", CAM "WorldBegin\nMakeNamedMedium \"g\" \"string type\" \"uniformgrid\"\n"
                                   "  \"float density\" [1] \"point3 p0\" [0 0 0] \"point3 p1\" [1 0 1]\n");
    CHECK(s == NULL && contains(g_err, "grid_bad3.pbrt:") && contains(g_err, "axis y"), "empty bounds: %s", g_err);
    if (s) scene_destroy(s);

        /* a constant-density uniformgrid (bounds reaching past the sphere that holds it by more than half
     * a voxel) renders as the homogeneous medium: the mean of the difference within noise */
#define GRID_SCENE(MEDIUM)                                                                                             \
    "LookAt 0 0 -4  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" 40\nWorldBegin\n"                               \
    "LightSource \"infinite\" \"rgb L\" [1 1 1]\n" MEDIUM                                                              \
    "AttributeBegin MediumInterface \"m\" \"\" Material \"interface\" Shape \"sphere\" \"float radius\" 1.2 "          \
    "AttributeEnd\n"                                                                                                   \
    "AttributeBegin Translate 0 0 0.5 Material \"diffuse\" \"rgb reflectance\" [0.7 0.5 0.3] Shape \"sphere\" "        \
    "\"float radius\" 0.4 AttributeEnd\n"
    const char *hom = write_tmp("hom.pbrt", GRID_SCENE("MakeNamedMedium \"m\" \"string type\" \"homogeneous\" \"rgb "
                                                       "sigma_a\" [0.2 0.4 0.8] \"rgb sigma_s\" [1.5 1 0.5]\n"));
    char hp[512];
    snprintf(hp, sizeof hp, "%s", hom);
    const char *grd =
        write_tmp("grd.pbrt", GRID_SCENE("MakeNamedMedium \"m\" \"string type\" \"uniformgrid\" \"integer nx\" 2 "
                                         "\"integer ny\" 2 \"integer nz\" 2 \"float density\" [2 2 2 2 2 2 2 2]\n"
                                         "  \"point3 p0\" [-3 -3 -3] \"point3 p1\" [3 3 3] \"rgb sigma_a\" [0.1 0.2 "
                                         "0.4] \"rgb sigma_s\" [0.75 0.5 0.25]\n"));
    float *a = NULL, *b = NULL;
    int w = 0, h = 0;
    if (render_file(hp, 64, &a, &w, &h) == 0 && render_file(grd, 64, &b, &w, &h) == 0) {
        for (int ch = 0; ch < 3; ++ch) {
            double sum = 0, sum2 = 0, ma = 0;
            size_t n = (size_t)w * (size_t)h;
            for (size_t i = 0; i < n; ++i) {
                double d = (double)b[3 * i + (size_t)ch] - a[3 * i + (size_t)ch];
                sum += d;
                sum2 += d * d;
                ma += a[3 * i + (size_t)ch];
            }
            double mean = sum / n, se = sqrt(fmax(0.0, sum2 / n - mean * mean) / (n - 1.0));
            printf("grid - homogeneous, channel %d: %.5f (standard error %.5f; homogeneous mean %.4f)\n", ch, mean, se,
                   ma / n);
            CHECK(fabs(mean) < 4.0 * se + 1e-4, "constant uniformgrid renders as homogeneous (channel %d)", ch);
        }
    }
    free(a);
    free(b);
#undef GRID_SCENE
}

/* nanovdb media: the grid file's own map placed by the CTM at MakeNamedMedium (pbrt-v4's
 * NanoVDBMedium: medium space is the grid's world space), sigma_a/sigma_s (default 1) times scale;
 * the same lookups as a scene JSON NanoVDB medium of the file moved by the same translation; a
 * missing file names file:line; a temperature parameter warns. */
#ifndef CAUSTIC_SOURCE_DIR
#define CAUSTIC_SOURCE_DIR "."
#endif
static void test_nanovdb_media(void) {
#if !defined(CAUSTIC_HAVE_NANOVDB)
    printf("test_nanovdb_media: SKIP (built without libnanovdb-dev)\n");
#else
    char text[2048], path[1024];
    snprintf(path, sizeof path, "%s/tests/data/media/cloud24.nvdb", CAUSTIC_SOURCE_DIR);
    for (int moved = 0; moved < 2; ++moved) {
        snprintf(text, sizeof text,
                 CAM "WorldBegin\nAttributeBegin %s\n"
                     "MakeNamedMedium \"c\" \"string type\" \"nanovdb\" \"string filename\" \"%s\"\n"
                     "  \"rgb sigma_a\" [0.5 1 2] \"float scale\" 3 \"float g\" 0.25 \"float Lescale\" 2\n"
                     "AttributeEnd\n" TRI,
                 moved ? "Translate 1 2 3" : "", path);
        scene *s = load("nvdb.pbrt", text);
        CHECK(s != NULL, "nanovdb medium: %s", g_err);
        if (!s) return;
        int c = scene_find_medium(s, "c");
        CHECK(c >= 0 && s->media[c].kind == MEDIUM_NANOVDB, "a NanoVDB medium (%d)", c);
        if (c >= 0) {
            const medium *m = &s->media[c];
            CHECK(near3(m->sigma_a, 1.5, 3, 6) && near3(m->sigma_s, 3, 3, 3) && fabsf(m->g - 0.25f) < 1e-6f,
                  "sigma_a times scale, sigma_s's default 1 times scale, g");
            static medium base; /* the unmoved medium's map */
            if (!moved)
                base = *m;
            else {
                /* grid(p + t) moved == grid(p) unmoved, at a few points */
                int same = 1;
                static const float pts[3][3] = {{0, 0, 0}, {0.3f, -0.2f, 0.7f}, {-1.5f, 2.0f, 0.25f}};
                for (int i = 0; i < 3; ++i) {
                    vec3 p = v3(pts[i][0], pts[i][1], pts[i][2]), q = vadd(p, v3(1, 2, 3));
                    vec3 a = grid_point(&base, p), b = grid_point(m, q);
                    same &= fabsf(a.x - b.x) < 1e-4f && fabsf(a.y - b.y) < 1e-4f && fabsf(a.z - b.z) < 1e-4f;
                }
                CHECK(same, "Translate moves the grid with the CTM at MakeNamedMedium");
            }
        }
        CHECK(strstr(g_w.text, "temperature grid") != NULL, "Lescale: the emission not rendered is said (%s)",
              g_w.text);
        scene_destroy(s);
    }
    scene *s = load("nvdb_missing.pbrt", CAM "WorldBegin\nMakeNamedMedium \"c\" \"string type\" \"nanovdb\" "
                                             "\"string filename\" \"no_such.nvdb\"\n" TRI);
    CHECK(s == NULL && strstr(g_err, "nvdb_missing.pbrt:") && strstr(g_err, "no_such.nvdb"),
          "a missing grid file names file:line and the file (%s)", g_err);
    if (s) scene_destroy(s);
#endif
}

int main(void) {
    snprintf(g_tmp, sizeof g_tmp, "/tmp/caustic_test_pbrt_%d", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", g_tmp);
    if (system(cmd) != 0) return 2;
    test_settings();
    test_transforms();
    test_orientation();
    test_include();
    test_errors();
    test_objects_and_shapes();
    test_plymesh();
    test_image_and_alpha();
    test_pbrt_v3();
    test_lights_and_spectra();
    test_materials_and_textures();
    test_named_metals();
    test_media();
    test_grid_media();
    test_nanovdb_media();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return test_result("test_pbrt");
}
