/* OBJ/MTL loader tests: crafted files (written into a mkdtemp directory) for every quirk the
 * loader handles, the MTL -> material mapping, JPEG/PNG textures, bad input, the JSON mesh
 * object with and without MATERIAL, and (when ../shared/assets is there) every OBJ asset with
 * its load time. Exit status: 0 when every check passed. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "cpu/isa.h"
#include "import/mtl.h"
#include "image/image.h"
#include "testing.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

static char g_tmp[256];

static void tpath(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", g_tmp, name); }

static void write_file(const char *name, const void *data, size_t size) {
    char p[512];
    tpath(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", p);
        exit(2);
    }
    if (size) fwrite(data, 1, size, f);
    fclose(f);
}
static void write_text(const char *name, const char *text) { write_file(name, text, strlen(text)); }

static int contains(const char *s, const char *needle) { return !needle || strstr(s, needle) != NULL; }

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Loads tmp/name with MTL materials (material < 0) and options; returns rc. */
static int load(scene *s, const char *name, int material, obj_options *opt, char *err, size_t errlen) {
    char p[512];
    tpath(p, sizeof p, name);
    obj_options local;
    memset(&local, 0, sizeof local);
    local.quiet = 1;
    return scene_load_obj_ex(s, p, xform_identity(), material, opt ? opt : &local, err, errlen);
}

/* The loaders' warning sink, printing as the CLI does (these tests read the lines back). */
static void warn_to_stderr(void *user, const char *msg) {
    (void)user;
    fprintf(stderr, "warning: %s\n", msg);
}

/* The last warnings, kept (concatenated) to be read back. */
static char kept[2048];
static void keep_warning(void *user, const char *msg) {
    (void)user;
    size_t n = strlen(kept);
    snprintf(kept + n, sizeof kept - n, "%s\n", msg);
}

static scene *load_ok(const char *name, const char *text, size_t tris, obj_options *opt) {
    if (text) write_text(name, text);
    scene *s = scene_create();
    s->warn = warn_to_stderr;
    char err[512] = "";
    int rc = load(s, name, -1, opt, err, sizeof err);
    CHECK(rc == 0, "%s: %s", name, err);
    CHECK(s->ntriangles == tris, "%s: %zu triangles, want %zu", name, s->ntriangles, tris);
    return s;
}

static void load_bad(const char *name, const char *text, size_t len, const char *n1, const char *n2) {
    write_file(name, text, len ? len : strlen(text));
    scene *s = scene_create();
    char err[512] = "";
    int rc = load(s, name, -1, NULL, err, sizeof err);
    CHECK(rc == -1, "%s: expected failure", name);
    CHECK(s->ntriangles == 0 && s->nvertices == 0, "%s: a failed load must not add geometry", name);
    CHECK(contains(err, n1) && contains(err, n2), "%s: message lacks \"%s\" / \"%s\": %s", name, n1, n2 ? n2 : "", err);
    CHECK(!strchr(err, '\n'), "%s: message must be one line", name);
    scene_destroy(s);
}

static const material *tri_mat(const scene *s, size_t t) { return &s->materials[s->triangles[t].material]; }

/* ---- geometry ------------------------------------------------------------------------------- */
static void test_geometry(void) {
    scene *s;
    s = load_ok("tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 1, NULL);
    scene_destroy(s);
    s = load_ok("quad.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n", 2, NULL);
    CHECK(s->nvertices == 4, "quad: 4 vertices, got %zu", s->nvertices);
    scene_destroy(s);
    s = load_ok("ngon.obj", "v 0 0 0\nv 1 0 0\nv 1.5 1 0\nv 0.5 2 0\nv -0.5 1 0\nv -0.6 0.5 0\nf 1 2 3 4 5 6\n", 4,
                NULL);
    scene_destroy(s);
    /* negative indices refer back from the end so far, including across v/vt/vn */
    s = load_ok("neg.obj",
                "v 9 9 9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nvn 0 0 1\n"
                "f -3/-3/-1 -2/-2/-1 -1/-1/-1\nv 5 5 0\nf -4 -3 -1\n",
                2, NULL);
    CHECK(s->positions[s->triangles[0].v[0]].x == 0.0f && s->positions[s->triangles[0].v[1]].x == 1.0f,
          "negative indices");
    CHECK(s->positions[s->triangles[1].v[2]].x == 5.0f, "negative index after more vertices");
    CHECK(s->uvs[s->triangles[0].v[1]].x == 1.0f, "negative vt");
    scene_destroy(s);
    /* every corner form, CRLF, no final newline, comments after numbers, groups, extra v values */
    s = load_ok("forms.obj",
                "# test\r\no obj\r\ng a b\r\ns 1\r\nv 0 0 0 1\r\nv 1 0 0\r\nv 1 1 0 0.2 0.3 0.4\r\nv 0 1 0 # c\r\n"
                "vt 0 0\r\nvt 1 0 0\r\nvt 1 1\r\nvn 0 0 1\r\ns off\r\n"
                "f 1 2 3\r\nf 1/1 3/3 4/2\r\ng\r\nf 1//1 2//1 3//1\r\nf 1/1/1 2/2/1 4/3/1",
                4, NULL);
    CHECK(s->has_uvs && s->has_normals, "forms: uvs and normals");
    scene_destroy(s);
    /* unsupported statements are counted, not errors */
    obj_options o;
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    s = load_ok("unknown.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\np 1\nvp 0.5\ncstype bezier\nf 1 2 3\n", 1, &o);
    CHECK(o.warn_unknown == 4, "unknown statements counted: %zu", o.warn_unknown);
    scene_destroy(s);
    /* degenerate triangles: skipped and counted, in one warning line */
    memset(&o, 0, sizeof o);
    char p[512];
    tpath(p, sizeof p, "stderr.txt");
    fflush(stderr);
    int saved = dup(2), fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2);
    s = load_ok("degen.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 4\nf 1 2 4\nf 4 4 4\n", 1, &o);
    fflush(stderr);
    if (fd >= 0) {
        dup2(saved, 2);
        close(fd);
    }
    close(saved);
    CHECK(o.warn_degenerate == 3, "degenerate count %zu", o.warn_degenerate);
    CHECK(s->nvertices == 3, "degenerate triangles add no vertices: %zu", s->nvertices);
    scene_destroy(s);
    FILE *f = fopen(p, "r");
    int lines = 0;
    char buf[512] = "";
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            lines++;
            snprintf(buf, sizeof buf, "%s", line);
        }
        fclose(f);
    }
    CHECK(lines == 1 && contains(buf, "degen.obj") && contains(buf, "3 degenerate"), "one warning line: %d: %s", lines,
          buf);
}

/* ---- normals -------------------------------------------------------------------------------- */
static void test_normals(void) {
    /* a cube without normals: 90 degree edges stay hard (60 degree threshold): 24 vertices,
     * each with its face's normal */
    const char *cube = "v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
                       "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 4 8 7 3\nf 1 5 8 4\nf 2 3 7 6\n";
    scene *s = load_ok("cube.obj", cube, 12, NULL);
    CHECK(s->nvertices == 24, "cube: %zu vertices, want 24 (split at hard edges)", s->nvertices);
    int ok = 1;
    for (size_t t = 0; t < s->ntriangles; ++t) {
        vec3 a = s->positions[s->triangles[t].v[0]], b = s->positions[s->triangles[t].v[1]],
             c = s->positions[s->triangles[t].v[2]];
        vec3 fn = vnorm(vcross(vsub(b, a), vsub(c, a)));
        for (int k = 0; k < 3; ++k) ok &= vdot(fn, s->normals[s->triangles[t].v[k]]) > 0.9999f;
        ok &= vdot(fn, vnorm(a)) > 0.0f; /* outward */
    }
    CHECK(ok, "cube: corner normals are the (outward) face normals");
    scene_destroy(s);
    /* a shallow roof (two faces 2 x 10 degrees apart): one smooth shared edge */
    const char *roof = "v -1 0 0\nv 0 0.1763 0\nv 1 0 0\nv -1 0 1\nv 0 0.1763 1\nv 1 0 1\n"
                       "f 1 5 2\nf 1 4 5\nf 2 6 3\nf 2 5 6\n";
    s = load_ok("roof.obj", roof, 4, NULL);
    CHECK(s->nvertices == 6, "roof: %zu vertices, want 6 (smooth)", s->nvertices);
    size_t ridge = 0;
    for (size_t v = 0; v < s->nvertices; ++v)
        if (s->positions[v].x == 0.0f) {
            ridge++;
            /* area-weighted: the side with two triangles at this corner pulls a little */
            CHECK(fabsf(s->normals[v].x) < 0.1f && s->normals[v].y > 0.99f, "ridge normal is about straight up");
        }
    CHECK(ridge == 2, "roof: two ridge vertices, got %zu", ridge);
    scene_destroy(s);
    obj_options o;
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    o.smooth_angle_deg = 10.0f; /* now the 20 degree ridge is a hard edge */
    s = load_ok("roof.obj", NULL, 4, &o);
    CHECK(s->nvertices == 8, "roof at 10 degrees: %zu vertices, want 8", s->nvertices);
    scene_destroy(s);
    /* file normals are kept as given */
    s = load_ok("given.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 1 0\nf 1//1 2//1 3//1\n", 1, NULL);
    CHECK(s->normals[0].y == 1.0f, "given normal kept");
    scene_destroy(s);
}

/* ---- textures ------------------------------------------------------------------------------- */
static int write_jpeg(const char *name, int w, int h, const unsigned char rgb[3], int gray) {
    char p[512];
    tpath(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = gray ? 1 : 3;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 100, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)w * 3);
    for (int x = 0; x < w; ++x) memcpy(row + (gray ? x : 3 * x), rgb, gray ? 1 : 3);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    fclose(f);
    return 0;
}

static void test_jpeg(void) {
    const unsigned char col[3] = {200, 100, 50};
    CHECK(write_jpeg("c.jpg", 16, 8, col, 0) == 0, "write jpeg");
    char p[512], err[512] = "";
    tpath(p, sizeof p, "c.jpg");
    image img;
    CHECK(image_load(&img, p, err, sizeof err) == 0, "jpeg load: %s", err);
    if (img.rgb) {
        CHECK(img.width == 16 && img.height == 8, "jpeg size %dx%d", img.width, img.height);
        CHECK_NEAR(img.rgb[0], image_srgb_decode(200.0f / 255.0f), 0.02, "jpeg red decoded from sRGB");
        CHECK_NEAR(img.rgb[2], image_srgb_decode(50.0f / 255.0f), 0.01, "jpeg blue");
        image_free(&img);
    }
    const unsigned char g[3] = {128, 128, 128};
    write_jpeg("g.jpg", 5, 3, g, 1);
    tpath(p, sizeof p, "g.jpg");
    CHECK(image_load(&img, p, err, sizeof err) == 0 && img.rgb[0] == img.rgb[1], "gray jpeg: %s", err);
    image_free(&img);
    /* truncated and garbage JPEGs: clean errors naming the file */
    tpath(p, sizeof p, "c.jpg");
    FILE *f = fopen(p, "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    for (size_t cut = 3; cut < n; cut += (cut < 40 ? 1 : n / 7)) {
        write_file("cut.jpg", buf, cut);
        tpath(p, sizeof p, "cut.jpg");
        err[0] = '\0';
        int rc = image_load(&img, p, err, sizeof err);
        CHECK(rc == -1 && contains(err, "cut.jpg") && img.rgb == NULL, "truncated jpeg (%zu bytes): %s", cut, err);
        if (rc == 0) image_free(&img);
    }
    unsigned char junk[300];
    junk[0] = 0xFF, junk[1] = 0xD8, junk[2] = 0xFF;
    for (size_t i = 3; i < sizeof junk; ++i) junk[i] = (unsigned char)(i * 131u + 7u);
    write_file("junk.jpg", junk, sizeof junk);
    tpath(p, sizeof p, "junk.jpg");
    CHECK(image_load(&img, p, err, sizeof err) == -1 && contains(err, "junk.jpg"), "garbage jpeg: %s", err);
    /* corrupt the middle of the entropy data: must not crash (may decode or fail) */
    if (n > 200) {
        for (size_t i = n / 2; i < n / 2 + 40; ++i) buf[i] ^= 0x5a;
        write_file("flip.jpg", buf, n);
        tpath(p, sizeof p, "flip.jpg");
        if (image_load(&img, p, err, sizeof err) == 0) image_free(&img);
    }
}

/* ---- materials ------------------------------------------------------------------------------ */
static void test_materials(void) {
    char p[512];
    tpath(p, sizeof p, "mat");
    mkdir(p, 0700);
    tpath(p, sizeof p, "mat/Tex");
    mkdir(p, 0700);
    /* 2x2 PNG texture, and a JPEG one whose name differs in case from the MTL's reference */
    image img;
    image_init(&img, 2, 2);
    for (int i = 0; i < 12; ++i) img.rgb[i] = 0.5f;
    char err[512] = "";
    tpath(p, sizeof p, "mat/Tex/wood.png");
    CHECK(image_save(&img, p, 0, err, sizeof err) == 0, "save png: %s", err);
    image_free(&img);
    const unsigned char col[3] = {255, 255, 255};
    write_jpeg("mat/Tex/Stone.JPG", 8, 8, col, 0);
    write_text("mat/a.mtl", "# first library\n"
                            "Ka 1 1 1\n" /* before any newmtl: ignored, counted */
                            "newmtl diffuse\nKd 0.5 0.25 0.125\nKs 0 0 0\nillum 2\n"
                            "newmtl lamp\nKd 0 0 0\nKe 17 12 4\n"
                            "newmtl glass\nKd 0.01 0.01 0.01\nNi 1.33\nillum 7\nTf 0.1 0.1 0.1\n"
                            "newmtl clear\nNi 1.6\nd 0.2\n"
                            "newmtl gold\nKd 1 0.8 0.3\nPm 1\nPr 0.5\nmap_Pr Tex/rough.png\n"
                            "newmtl chrome\nKd 0.9 0.9 0.9\nPm 0.9\n"
                            "newmtl mirror\nKd 0.01 0.01 0.01\nKs 0.95 0.95 0.95\nillum 5\n"
                            "newmtl polished\nKd 0.2 0.2 0.2\nKs 0.8 0.7 0.6\nillum 3\n"
                            "newmtl wood\nKd 1 1 1\nmap_Kd -bm 1 -o 0 0 -s 1 1 1 Tex\\wood.png\nmap_bump Tex/none.png\n"
                            "newmtl stone\r\nKd 0.8 0.8 0.8\r\nmap_Kd tex/stone.jpg\r\n"
                            "newmtl missing\nKd 0.3 0.6 0.9\nmap_Kd Tex/nothere.png\n"
                            "newmtl bright\nKd 2 -1 0.5\n");
    write_text("mat/b.mtl", "newmtl other\nKd 0.1 0.2 0.3\nnewmtl diffuse\nKd 0.7 0.7 0.7\n");
    const char *names[] = {"diffuse",  "lamp", "glass", "clear",   "gold",   "chrome", "mirror",
                           "polished", "wood", "stone", "missing", "bright", "other",  "undefined"};
    char obj[4096];
    int k = snprintf(obj, sizeof obj,
                     "mtllib mat/a.mtl\nmtllib mat/b.mtl mat/a.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\n"
                     "vt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n");
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
        k += snprintf(obj + k, sizeof obj - (size_t)k, "usemtl %s\nf 1/1 2/2 3/3\n", names[i]);
    obj_options o;
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    scene *s = load_ok("mats.obj", obj, 15, &o);
    if (s->ntriangles == 15) {
        const material *m = tri_mat(s, 0);
        CHECK(m->kind == MAT_DIFFUSE && m->albedo.x == 0.8f, "no usemtl: default grey");
        m = tri_mat(s, 1); /* each library is read once, in first-mention order; the later one wins */
        CHECK(m->kind == MAT_DIFFUSE && fabsf(m->albedo.x - 0.7f) < 1e-6f, "later mtllib wins: %g", m->albedo.x);
        m = tri_mat(s, 2);
        CHECK(m->emission.x == 17.0f && m->emission.z == 4.0f, "Ke -> emission");
        m = tri_mat(s, 3);
        CHECK(m->kind == MAT_DIELECTRIC && fabsf(m->ior - 1.33f) < 1e-6f && m->albedo.x == 1.0f,
              "illum 7 -> dielectric with IOR Ni");
        m = tri_mat(s, 4);
        CHECK(m->kind == MAT_DIELECTRIC && fabsf(m->ior - 1.6f) < 1e-6f, "d < 1 and Ni > 1 -> dielectric");
        m = tri_mat(s, 5);
        CHECK(m->kind == MAT_CONDUCTOR && fabsf(m->alpha - 0.25f) < 1e-6f && m->albedo.y == 0.8f,
              "Pm -> conductor, alpha = Pr^2, F0 = Kd");
        m = tri_mat(s, 6);
        CHECK(m->kind == MAT_MIRROR && m->albedo.x == 0.9f, "Pm without Pr -> mirror");
        m = tri_mat(s, 7);
        CHECK(m->kind == MAT_MIRROR && m->albedo.x == 0.95f, "illum 5 -> mirror with Ks");
        m = tri_mat(s, 8);
        CHECK(m->kind == MAT_MIRROR && m->albedo.z == 0.6f, "illum 3 + Ks -> mirror");
        m = tri_mat(s, 9);
        CHECK(m->kind == MAT_DIFFUSE && m->albedo_tex >= 0, "map_Kd with options and a backslash");
        if (m->albedo_tex >= 0) {
            const texture *t = &s->textures[m->albedo_tex];
            CHECK(t->kind == TEX_IMAGE && t->width == 2 && t->height == 2, "png texture");
            CHECK(t->texel8 == TEXEL8_SRGB && fabsf(scene_texel(s, t, 0).x - 0.5f) < 0.01f,
                  "8-bit png texels decoded: %g", scene_texel(s, t, 0).x);
        }
        m = tri_mat(s, 10);
        CHECK(m->albedo_tex >= 0 && s->textures[m->albedo_tex].width == 8, "jpeg map found case-insensitively");
        m = tri_mat(s, 11);
        CHECK(m->albedo_tex == -1 && fabsf(m->albedo.y - 0.6f) < 1e-6f, "missing texture: Kd fallback");
        m = tri_mat(s, 12);
        CHECK(m->albedo.x == 1.0f && m->albedo.y == 0.0f && m->albedo.z == 0.5f, "Kd clamped to [0,1]");
        m = tri_mat(s, 13);
        CHECK(fabsf(m->albedo.z - 0.3f) < 1e-6f, "second library");
        m = tri_mat(s, 14);
        CHECK(m->kind == MAT_DIFFUSE && m->albedo.x == 0.8f, "undefined material: default grey");
        CHECK(s->triangles[14].material == s->triangles[0].material, "one default material");
    }
    CHECK(o.warn_missing_material == 1, "missing materials counted: %zu", o.warn_missing_material);
    /* Tex/nothere.png and the bump map Tex/none.png */
    CHECK(o.warn_missing_texture == 2, "missing textures counted: %zu", o.warn_missing_texture);
    CHECK(o.warn_unknown == 1, "unknown MTL statements counted: %zu", o.warn_unknown); /* Ka before newmtl */
    /* loading the same file again (instancing) reuses materials and textures */
    size_t nm = s->nmaterials, nt = s->ntextures;
    char e2[512] = "";
    CHECK(load(s, "mats.obj", -1, NULL, e2, sizeof e2) == 0, "second load: %s", e2);
    CHECK(s->nmaterials == nm && s->ntextures == nt, "second load shares materials (%zu/%zu) and textures",
          s->nmaterials, nm);
    /* an explicit material overrides everything, and the MTL is not even read */
    material red;
    memset(&red, 0, sizeof red);
    red.albedo_tex = -1;
    red.albedo = v3(1, 0, 0);
    int ri = scene_add_material(s, "red", red);
    size_t before = s->ntriangles;
    CHECK(load(s, "mats.obj", ri, NULL, e2, sizeof e2) == 0, "override: %s", e2);
    int all = 1;
    for (size_t t = before; t < s->ntriangles; ++t) all &= s->triangles[t].material == ri;
    CHECK(all, "override material on every face");
    scene_destroy(s);
    /* a missing mtllib: warning, default material */
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    s = load_ok("nomtl.obj", "mtllib nowhere.mtl\nusemtl x\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 1, &o);
    CHECK(o.warn_missing_material == 1 && tri_mat(s, 0)->albedo.x == 0.8f, "missing MTL: default");
    scene_destroy(s);
    /* MTL syntax errors name the MTL file and line */
    write_text("bad.mtl", "newmtl a\nKd 0.5 0.5 0.5\nKd 0.5 abc 0.5\n");
    load_bad("badmtl.obj", "mtllib bad.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 0,
             "bad.mtl:3:", "\"abc\" is not a number");
    /* numbers written with commas (an exporter's dialect): "Kd 0.98, 0.98, 0.98" */
    write_text("comma.mtl", "newmtl a\nKd 0.98, 0.5 ,0.25\nKs 0.1,0.1,0.1\nNi 1.5,\n");
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    s = load_ok("commamtl.obj", "mtllib comma.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 1, &o);
    CHECK(fabsf(tri_mat(s, 0)->albedo.x - 0.98f) < 1e-6f && fabsf(tri_mat(s, 0)->albedo.y - 0.5f) < 1e-6f &&
              fabsf(tri_mat(s, 0)->albedo.z - 0.25f) < 1e-6f,
          "Kd with commas: %g %g %g", tri_mat(s, 0)->albedo.x, tri_mat(s, 0)->albedo.y, tri_mat(s, 0)->albedo.z);
    scene_destroy(s);
    write_text("comma2.mtl", "newmtl a\nKd 0.5 ,, 0.5 0.5\n");
    load_bad("comma2mtl.obj", "mtllib comma2.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 0,
             "comma2.mtl:2:", "is not a number");
    write_text("nan.mtl", "newmtl a\nNi nan\n");
    load_bad("nanmtl.obj", "mtllib nan.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 0, "nan.mtl:2:", "Ni");
    write_file("nul.mtl", "newmtl a\nKd 1 \0 1\n", 18);
    load_bad("nulmtl.obj", "mtllib nul.mtl\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 0, "nul.mtl:2:", "NUL");
    /* one image memory budget per scene: two 48x48 textures fit the cap one at a time, not together */
    {
        image big;
        CHECK(image_init(&big, 48, 48) == 0, "image");
        for (int i = 0; i < 48 * 48 * 3; ++i) big.rgb[i] = (float)(i % 7) / 7.0f;
        char bp[512], berr[512] = "";
        tpath(bp, sizeof bp, "big1.png");
        CHECK(image_save(&big, bp, 0, berr, sizeof berr) == 0, "save: %s", berr);
        tpath(bp, sizeof bp, "big2.png");
        CHECK(image_save(&big, bp, 0, berr, sizeof berr) == 0, "save: %s", berr);
        image_free(&big);
        write_text("budget.mtl", "newmtl a\nmap_Kd big1.png\nnewmtl b\nmap_Kd big2.png\n");
        const char *two = "mtllib budget.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n"
                          "usemtl a\nf 1/1 2/2 3/3\nusemtl b\nf 1/1 2/2 3/3\n";
        setenv("CAUSTIC_IMAGE_MEMORY", "10K", 1);
        load_bad("budget.obj", two, 0, "big2.png: the scene's textures with this one needs 14 KiB in all",
                 "over the limit of 10 KiB");
        setenv("CAUSTIC_IMAGE_MEMORY", "16K", 1);
        obj_options bo;
        memset(&bo, 0, sizeof bo);
        bo.quiet = 1;
        scene *bs = load_ok("budget.obj", NULL, 2, &bo);
        CHECK(bs->ntextures == 2, "both textures under a raised cap: %zu", (size_t)bs->ntextures);
        scene_destroy(bs);
        unsetenv("CAUSTIC_IMAGE_MEMORY");
    }
    /* a library outside the model's folder (any file on the system): refused without repeating
     * a word of its content */
    {
        char d[512];
        tpath(d, sizeof d, "sub");
        mkdir(d, 0755);
    }
    write_text("secret.txt", "root:SECRET-CONTENT:0:0\n");
    {
        char name[] = "sub/out.obj";
        write_text(name, "mtllib ../secret.txt\nusemtl a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
        obj_options o;
        memset(&o, 0, sizeof o);
        scene *s2 = scene_create();
        s2->warn = keep_warning;
        kept[0] = 0;
        char err[512] = "";
        CHECK(load(s2, name, -1, &o, err, sizeof err) == 0 &&
                  contains(kept, "../secret.txt is outside the model's folder: not read") &&
                  !contains(kept, "SECRET") && !contains(kept, "root:") && !contains(err, "SECRET"),
              "an MTL outside the model's folder: %s / %s", kept, err);
        scene_destroy(s2);
    }
}

/* ---- bad input ------------------------------------------------------------------------------ */
static void test_bad(void) {
    load_bad("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", 0, "range.obj:4:", "vertex index 9 out of range");
    load_bad("negrange.obj", "v 0 0 0\nf -1 -2 -3\n", 0, "negrange.obj:2:", "out of range");
    load_bad("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 0, "zero.obj:4:", "index 0 is invalid");
    load_bad("vtrange.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1 2/1 3/1\n", 0, "vtrange.obj:4:", "texture coordinate");
    load_bad("vnrange.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//2 3//1\n", 0, "vnrange.obj:5:", "normal");
    load_bad("nan.obj", "v 0 0 0\nv nan 0 0\n", 0, "nan.obj:2:", "not a finite");
    load_bad("nanvn.obj", "vn 0 -nan 0\n", 0, "nanvn.obj:1:", "not a finite");
    load_bad("inf.obj", "v 0 0 0\nv 1 1e999 0\n", 0, "inf.obj:2:", "not a finite");
    load_bad("garbage.obj", "v 0 0 0\nv 1 abc 0\n", 0, "garbage.obj:2:", "\"abc\" is not a number");
    load_bad("hexish.obj", "v 0 0 0\nv 1 0x 0\n", 0, "hexish.obj:2:", "not a number");
    load_bad("short.obj", "v 0 0\n", 0, "short.obj:1:", "needs 3 numbers");
    load_bad("trunc.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2", 0, "trunc.obj:4:", "needs at least 3");
    load_bad("corner.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", 0, "corner.obj:4:", "face corner \"x\"");
    load_bad("bigidx.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n", 0, "bigidx.obj:4:", NULL);
    load_bad("slashes.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n", 0, "slashes.obj:4:", "too many '/'");
    load_bad("empty.obj", "", 0, "empty.obj", "no faces");
    load_bad("alldegen.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", 0, "alldegen.obj", "degenerate");
    load_bad("usemtl.obj", "usemtl\n", 0, "usemtl.obj:1:", "usemtl without");
    load_bad("binary.obj", "v 0 0 0\n\x01\x02\0\xff\n", 13, "binary.obj:2:", "NUL");
    char p[512];
    tpath(p, sizeof p, "adir.obj");
    mkdir(p, 0700);
    scene *s = scene_create();
    char err[512] = "";
    CHECK(load(s, "adir.obj", -1, NULL, err, sizeof err) == -1 && contains(err, "not a regular file"), "dir: %s", err);
    CHECK(scene_load_obj(s, "/nonexistent/x.obj", xform_identity(), -1, err, sizeof err) == -1 &&
              contains(err, "x.obj") && contains(err, "cannot open"),
          "missing: %s", err);
    scene_destroy(s);
    /* pseudo-random binary garbage: never crashes, fails cleanly or loads */
    unsigned char junk[2048];
    uint32_t x = 12345;
    for (int round = 0; round < 50; ++round) {
        size_t n = 1 + (size_t)(x % sizeof junk);
        for (size_t i = 0; i < n; ++i) {
            x = x * 1664525u + 1013904223u;
            unsigned c = x >> 24;
            /* mostly OBJ-ish bytes so parsing gets somewhere */
            static const char alpha[] = "vtnf /-0123456789.e\n\r#";
            junk[i] = (c & 3) ? (unsigned char)alpha[c % (sizeof alpha - 1)] : (unsigned char)c;
        }
        write_file("junk.obj", junk, n);
        s = scene_create();
        err[0] = '\0';
        int rc = load(s, "junk.obj", -1, NULL, err, sizeof err);
        CHECK(rc == 0 || (err[0] && !strchr(err, '\n')), "junk %d: one-line error", round);
        scene_destroy(s);
    }
}

/* ---- JSON mesh objects ---------------------------------------------------------------------- */
static void test_json(void) {
    char p[512];
    tpath(p, sizeof p, "sc");
    mkdir(p, 0700);
    tpath(p, sizeof p, "sc/m");
    mkdir(p, 0700);
    write_text("sc/m/box.mtl", "newmtl lamp\nKd 0.5 0.5 0.5\nKe 5 5 5\nnewmtl wall\nKd 0.2 0.4 0.6\n");
    write_text("sc/m/box.obj", "mtllib box.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nusemtl wall\nf 1 2 3\n"
                               "usemtl lamp\nf 2 4 3\n");
    write_text(
        "sc/scene.json",
        "{\"Materials\": {\"white\": {\"TYPE\": \"Diffuse\", \"RGB\": [1,1,1]}},\n"
        " \"Camera\": {\"RES\": [8,8], \"FOVY\": 30, \"EYE\": [0,0,5], \"LOOKAT\": [0,0,0]},\n"
        " \"Objects\": [{\"TYPE\": \"mesh\", \"FILE\": \"m/box.obj\"},\n"
        "             {\"TYPE\": \"mesh\", \"FILE\": \"m/box.obj\", \"MATERIAL\": \"white\", \"TRANS\": [3,0,0]}]}\n");
    tpath(p, sizeof p, "sc/scene.json");
    scene *s = NULL;
    char err[512] = "";
    int rc = scene_load_json_file(&s, p, err, sizeof err);
    CHECK(rc == 0, "json mesh without MATERIAL: %s", err);
    if (rc == 0) {
        CHECK(s->ntriangles == 4, "json: 4 triangles, got %zu", s->ntriangles);
        int white = scene_find_material(s, "white");
        CHECK(s->materials[s->triangles[0].material].albedo.z == 0.6f, "json: MTL material kept");
        CHECK(s->materials[s->triangles[1].material].emission.x == 5.0f, "json: MTL emitter kept");
        CHECK(s->triangles[2].material == white && s->triangles[3].material == white, "json: MATERIAL overrides");
        char perr[256];
        CHECK(scene_prepare(s, cpu_kernels_get()->bvh_width, perr, sizeof perr) == 0 && s->nlights == 1,
              "json: the Ke face is a light");
        scene_destroy(s);
    }
    /* a cube without MATERIAL is still an error */
    write_text("sc/bad.json", "{\"Camera\": {\"RES\": [8,8], \"FOVY\": 30, \"EYE\": [0,0,5], \"LOOKAT\": [0,0,0]},\n"
                              " \"Objects\": [{\"TYPE\": \"cube\"}]}\n");
    tpath(p, sizeof p, "sc/bad.json");
    s = NULL;
    CHECK(scene_load_json_file(&s, p, err, sizeof err) == -1 && contains(err, "MATERIAL"), "cube needs MATERIAL: %s",
          err);
}

/* ---- the shared assets ---------------------------------------------------------------------- */
static const char *assets_dir(void) {
    static char dir[1024];
    const char *cands[3] = {getenv("CAUSTIC_ASSETS"), NULL, "/work/shared/assets"};
#ifdef CAUSTIC_SOURCE_DIR
    static char b[1024];
    snprintf(b, sizeof b, "%s/../shared/assets", CAUSTIC_SOURCE_DIR);
    cands[1] = b;
#endif
    for (int i = 0; i < 3; ++i) {
        struct stat st;
        if (!cands[i]) continue;
        snprintf(dir, sizeof dir, "%s/sponza/sponza.obj", cands[i]);
        if (stat(dir, &st) == 0) {
            snprintf(dir, sizeof dir, "%s", cands[i]);
            return dir;
        }
    }
    return NULL;
}

static void test_assets(void) {
    const char *dir = assets_dir();
    if (!dir) {
        printf("test_obj: shared assets not found (set CAUSTIC_ASSETS): asset checks skipped\n");
        return;
    }
    static const struct {
        const char *file;
        size_t tris;
        int textures;
        int lights;
    } A[] = {
        {"bunny/bunny.obj", 69451, 0, 0},
        {"teapot/teapot.obj", 15704, 1, 0},
        {"teapot/teapot-newell.obj", 6320, 0, 0},
        {"dragon/dragon_100k.obj", 100000, 0, 0},
        {"lucy/lucy_100k.obj", 99970, 0, 0},
        /* 66,450 minus 6 zero-area triangles; 12 colour textures and the 11 height maps of its 36
         * bump/map_bump lines */
        {"sponza/sponza.obj", 66444, 23, 0},
        {"cornell-box/CornellBox-Original.obj", 36, 0, 2},
        {"cornell-box/CornellBox-Mirror.obj", 36, 0, 2},
        {"cornell-box/CornellBox-Sphere.obj", 2188, 0, 2},
        {"cornell-box/CornellBox-Glossy.obj", 1112, 0, 0},       /* its MTL lacks "light" */
        {"cornell-box/CornellBox-Glossy-Floor.obj", 1112, 0, 0}, /* byte-identical to Glossy */
        {"cornell-box/CornellBox-Water.obj", 7088, 0, 2},
        {"cornell-box/water.obj", 4900, 0, 0},
        {"cornell-box/CornellBox-Empty-CO.obj", 12, 0, 2},
        {"cornell-box/CornellBox-Empty-RG.obj", 12, 0, 2},
        {"cornell-box/CornellBox-Empty-White.obj", 12, 0, 2},
        {"cornell-box/CornellBox-Empty-Squashed.obj", 12, 0, 2},
    };
    for (size_t i = 0; i < sizeof A / sizeof *A; ++i) {
        char p[1200], err[512] = "";
        snprintf(p, sizeof p, "%s/%s", dir, A[i].file);
        scene *s = scene_create();
        obj_options o;
        memset(&o, 0, sizeof o);
        o.quiet = 1;
        double t0 = now_ms();
        int rc = scene_load_obj_ex(s, p, xform_identity(), -1, &o, err, sizeof err);
        double t1 = now_ms();
        CHECK(rc == 0, "%s: %s", A[i].file, err);
        CHECK(s->ntriangles == A[i].tris, "%s: %zu triangles, want %zu", A[i].file, s->ntriangles, A[i].tris);
        CHECK((int)s->ntextures == A[i].textures, "%s: %zu textures, want %d", A[i].file, s->ntextures, A[i].textures);
        CHECK(o.warn_missing_texture == 0, "%s: missing textures", A[i].file);
        int lights = 0;
        for (size_t t = 0; t < s->ntriangles; ++t) lights += tri_mat(s, t)->emission.x > 0.0f;
        CHECK(lights == A[i].lights, "%s: %d emissive triangles, want %d", A[i].file, lights, A[i].lights);
        int finite = 1;
        for (size_t v = 0; v < s->nvertices; ++v)
            finite &= vis_finite(s->normals[v]) && fabsf(vlen(s->normals[v]) - 1.0f) < 1e-3f;
        CHECK(finite, "%s: unit normals everywhere", A[i].file);
        printf("test_obj: %-42s %7zu tris %7zu verts %2zu mats %2zu tex  %7.1f ms\n", A[i].file, s->ntriangles,
               s->nvertices, s->nmaterials, s->ntextures, t1 - t0);
        if (strstr(A[i].file, "Mirror")) {
            int mirror = 0;
            for (size_t t = 0; t < s->ntriangles; ++t) mirror += tri_mat(s, t)->kind == MAT_MIRROR;
            CHECK(mirror == 12, "Mirror box: tall box is a mirror (%d)", mirror);
        }
        scene_destroy(s);
    }
    /* sponza-original.mtl references textures in the wrong case; the loader finds them anyway.
     * Build tmp/sp/{sponza.obj -> original, sponza.mtl = sponza-original.mtl, textures -> original} */
    char sp[512];
    tpath(sp, sizeof sp, "sp");
    mkdir(sp, 0700);
    char src[1200], dst[1200];
    const char *tex[] = {"00_skap.JPG",       "01_STUB.JPG",
                         "01_S_ba.JPG",       "01_S_kap.JPG",
                         "01_St_kp.JPG",      "KAMEN-stup.JPG",
                         "KAMEN.JPG",         "prozor1.JPG",
                         "reljef.JPG",        "sp_luk.JPG",
                         "vrata_ko.JPG",      "vrata_kr.JPG",
                         "x01_st.JPG",        "sponza.obj",
                         "01_STUB-bump.jpg",  "01_S_kap-bump.jpg",
                         "01_St_kp-bump.jpg", "KAMEN-bump.jpg",
                         "reljef-bump.jpg",   "sp_luk-bump.JPG",
                         "x01_st-bump.jpg",   NULL};
    for (int i = 0; tex[i]; ++i) {
        snprintf(src, sizeof src, "%s/sponza/%s", dir, tex[i]);
        snprintf(dst, sizeof dst, "%s/%s", sp, tex[i]);
        if (symlink(src, dst) != 0) CHECK(0, "symlink %s", dst);
    }
    snprintf(src, sizeof src, "%s/sponza/sponza-original.mtl", dir);
    snprintf(dst, sizeof dst, "%s/sponza.mtl", sp);
    if (symlink(src, dst) != 0) CHECK(0, "symlink %s", dst);
    scene *s = scene_create();
    obj_options o;
    memset(&o, 0, sizeof o);
    o.quiet = 1;
    char err[512] = "";
    snprintf(dst, sizeof dst, "%s/sponza.obj", sp);
    CHECK(scene_load_obj_ex(s, dst, xform_identity(), -1, &o, err, sizeof err) == 0, "sponza-original: %s", err);
    CHECK(s->ntextures == 23 && o.warn_missing_texture == 0, "sponza-original: %zu textures, %zu missing", s->ntextures,
          o.warn_missing_texture);
    /* the bump lines: height maps read linearly, with MTL's unit */
    size_t bumped = 0;
    for (size_t m = 0; m < s->nmaterials; ++m)
        if (s->materials[m].maps & MAP_BUMP) {
            bumped++;
            CHECK(s->textures[s->materials[m].normal_tex].texel8 == TEXEL8_LINEAR &&
                      fabsf(s->materials[m].normal_scale - (float)MTL_BUMP_UNIT) < 1e-7f,
                  "sponza-original: %s: a height map is linear data of scale %g", s->material_names[m],
                  (double)s->materials[m].normal_scale);
        }
    CHECK(bumped >= 11, "sponza-original: %zu materials with a bump map", bumped);
    scene_destroy(s);
}

static void rm_rf(const char *path) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "test_obj: could not remove %s\n", path);
}

int main(void) {
    const char *tmpdir = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/caustic_test_obj_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    test_geometry();
    test_normals();
    test_jpeg();
    test_materials();
    test_bad();
    test_json();
    test_assets();
    rm_rf(g_tmp);
    return test_result("test_obj");
}
