/* PLY reader tests: crafted files written by the test into a temporary directory (ASCII, binary
 * little/big endian, every scalar type, normals/UVs, extra properties, unknown elements with
 * lists, n-gons, CRLF, and every error and skip case), then the Stanford bunny and the binary
 * dragon from ../shared/assets when that folder exists (CAUSTIC_ASSETS overrides its path). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "scene/scene.h"
#include "import/import.h"
#include "testing.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int scene_load_ply(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen);
int scene_load_ply_memory(scene *s, const void *data, size_t size, const char *name, xform to_world, int material,
                          char *err, size_t errlen);

static char g_dir[256];

/* ---- building files ------------------------------------------------------------------------- */
typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void putf(buf *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(b, tmp, (size_t)n);
}

enum { I8, U8, I16, U16, I32, U32, F32, F64, NTYPES };
static const char *const tname[NTYPES] = {"char", "uchar", "short", "ushort", "int", "uint", "float", "double"};
static const char *const tname2[NTYPES] = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64"};

/* One binary value of type t, little (be = 0) or big endian. */
static void putv(buf *b, int t, double x, int be) {
    unsigned char raw[8];
    size_t n;
    switch (t) {
    case I8: {
        int8_t v = (int8_t)x;
        memcpy(raw, &v, n = 1);
        break;
    }
    case U8: {
        uint8_t v = (uint8_t)x;
        memcpy(raw, &v, n = 1);
        break;
    }
    case I16: {
        int16_t v = (int16_t)x;
        memcpy(raw, &v, n = 2);
        break;
    }
    case U16: {
        uint16_t v = (uint16_t)x;
        memcpy(raw, &v, n = 2);
        break;
    }
    case I32: {
        int32_t v = (int32_t)x;
        memcpy(raw, &v, n = 4);
        break;
    }
    case U32: {
        uint32_t v = (uint32_t)x;
        memcpy(raw, &v, n = 4);
        break;
    }
    case F32: {
        float v = (float)x;
        memcpy(raw, &v, n = 4);
        break;
    }
    default: {
        double v = x;
        memcpy(raw, &v, n = 8);
        break;
    }
    }
    if (be)
        for (size_t i = 0; i < n / 2; ++i) {
            unsigned char c = raw[i];
            raw[i] = raw[n - 1 - i];
            raw[n - 1 - i] = c;
        }
    put(b, raw, n);
}

static const char *write_file(const char *name, const buf *b) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (b->n && fwrite(b->p, 1, b->n, f) != b->n)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
    return path;
}

/* ---- loading ---------------------------------------------------------------------------------- */
typedef struct result {
    int rc;
    char err[512];
    char warn[512]; /* what the loader printed on stderr */
    scene *s;
} result;

/* The loaders' warning sink, printing as the CLI does (load() reads the lines back). */
static void warn_to_stderr(void *user, const char *msg) {
    (void)user;
    fprintf(stderr, "%s\n", msg);
}

/* Loads `b` through a file named `name`, capturing stderr. Caller frees r->s. */
static result load(const char *name, const buf *b) {
    result r;
    memset(&r, 0, sizeof r);
    const char *path = write_file(name, b);
    char wpath[512];
    snprintf(wpath, sizeof wpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(wpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    r.s = scene_create();
    r.s->warn = warn_to_stderr;
    r.rc = scene_load_ply(r.s, path, xform_identity(), 0, r.err, sizeof r.err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(wpath, "rb");
    if (f) {
        size_t n = fread(r.warn, 1, sizeof r.warn - 1, f);
        r.warn[n] = '\0';
        fclose(f);
    }
    /* the in-memory entry point must agree */
    scene *s2 = scene_create();
    char err2[512] = "";
    fflush(stderr);
    saved = dup(2);
    fd = open("/dev/null", O_WRONLY);
    dup2(fd, 2);
    close(fd);
    int rc2 = scene_load_ply_memory(s2, b->p, b->n, path, xform_identity(), 0, err2, sizeof err2);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK(rc2 == r.rc && s2->ntriangles == r.s->ntriangles && (r.rc == 0 || strcmp(err2, r.err) == 0),
          "%s: file and memory loads differ (%d/%d, %zu/%zu tris, '%s' vs '%s')", name, r.rc, rc2, r.s->ntriangles,
          s2->ntriangles, r.err, err2);
    scene_destroy(s2);
    return r;
}

static void expect_ok(const char *name, const buf *b, size_t ntris, size_t nverts, result *out) {
    result r = load(name, b);
    CHECK(r.rc == 0, "%s: load failed: %s", name, r.err);
    if (r.rc == 0) {
        CHECK(r.s->ntriangles == ntris, "%s: %zu triangles, expected %zu", name, r.s->ntriangles, ntris);
        CHECK(r.s->nvertices == nverts, "%s: %zu vertices, expected %zu", name, r.s->nvertices, nverts);
    }
    if (out)
        *out = r;
    else
        scene_destroy(r.s);
}

/* The load must fail with a one-line message starting with the path and containing `what`. */
static void expect_err(const char *name, const buf *b, const char *what) {
    result r = load(name, b);
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s/%s: ", g_dir, name);
    CHECK(r.rc == -1, "%s: loaded, expected an error containing '%s'", name, what);
    if (r.rc == -1) {
        CHECK(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s: message does not start with the path: '%s'", name,
              r.err);
        CHECK(strstr(r.err, what) != NULL, "%s: message '%s' lacks '%s'", name, r.err, what);
        CHECK(strchr(r.err, '\n') == NULL, "%s: message has a newline", name);
        CHECK(r.s->ntriangles == 0, "%s: failed load left %zu triangles in the scene", name, r.s->ntriangles);
    }
    scene_destroy(r.s);
}

static int tri_is(const scene *s, size_t t, uint32_t a, uint32_t b, uint32_t c) {
    return t < s->ntriangles && s->triangles[t].v[0] == a && s->triangles[t].v[1] == b && s->triangles[t].v[2] == c;
}

static int vec_near(vec3 a, vec3 b) {
    return fabsf(a.x - b.x) < 1e-5f && fabsf(a.y - b.y) < 1e-5f && fabsf(a.z - b.z) < 1e-5f;
}

static const char *fmt_name(int f) { return f == 0 ? "ascii" : f == 1 ? "binary_little_endian" : "binary_big_endian"; }

/* ---- crafted valid files ------------------------------------------------------------------------ */
/* Unit square in z=0 plus one apex, as a quad + a triangle; x,y,z of type `ty`, every other type
 * as an extra property, face list with count type `ct` and item type `it`. */
static void test_types(void) {
    static const double P[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 2}};
    for (int f = 0; f < 3; ++f)
        for (int ty = 0; ty < NTYPES; ++ty) {
            int ct = ty < F32 ? ty : U8; /* list counts must be integers */
            int it = (ty + 3) % NTYPES;  /* any item type, floats included */
            buf b = {0};
            putf(&b, "ply\nformat %s 1.0\ncomment types %d\n", fmt_name(f), ty);
            putf(&b, "element vertex 5\n");
            for (int t = 0; t < NTYPES; ++t) {
                if (t == ty) putf(&b, "property %s x\nproperty %s y\nproperty %s z\n", tname[t], tname2[t], tname[t]);
                putf(&b, "property %s extra%d\n", (t & 1) ? tname2[t] : tname[t], t);
            }
            putf(&b,
                 "element face 2\nproperty %s before\nproperty list %s %s vertex_indices\nproperty %s "
                 "after\nend_header\n",
                 tname[ty], tname2[ct], tname[it], tname2[(ty + 5) % NTYPES]);
            for (int v = 0; v < 5; ++v) {
                for (int t = 0; t < NTYPES; ++t) {
                    if (t == ty)
                        for (int k = 0; k < 3; ++k) {
                            if (f == 0)
                                putf(&b, "%g ", P[v][k]);
                            else
                                putv(&b, ty, P[v][k], f == 2);
                        }
                    double extra = t == I8 ? -7 : 100 + t; /* negative char, big-ish others */
                    if (f == 0)
                        putf(&b, "%g ", extra);
                    else
                        putv(&b, t, extra, f == 2);
                }
                if (f == 0) putf(&b, "\n");
            }
            static const int faces[2][5] = {{4, 0, 1, 2, 3}, {3, 0, 1, 4, 0}};
            for (int k = 0; k < 2; ++k) {
                if (f == 0) {
                    putf(&b, "9 %d", faces[k][0]);
                    for (int j = 1; j <= faces[k][0]; ++j) putf(&b, " %d", faces[k][j]);
                    putf(&b, " 8\n");
                } else {
                    putv(&b, ty, 9, f == 2);
                    putv(&b, ct, faces[k][0], f == 2);
                    for (int j = 1; j <= faces[k][0]; ++j) putv(&b, it, faces[k][j], f == 2);
                    putv(&b, (ty + 5) % NTYPES, 8, f == 2);
                }
            }
            char name[64];
            snprintf(name, sizeof name, "types_%s_%s.ply", fmt_name(f), tname[ty]);
            result r;
            expect_ok(name, &b, 3, 5, &r);
            if (r.rc == 0) {
                int ok = 1;
                for (int v = 0; v < 5; ++v)
                    ok &= vec_near(r.s->positions[v], v3((float)P[v][0], (float)P[v][1], (float)P[v][2]));
                CHECK(ok, "%s: positions differ", name);
                CHECK(tri_is(r.s, 0, 0, 1, 2) && tri_is(r.s, 1, 0, 2, 3) && tri_is(r.s, 2, 0, 1, 4),
                      "%s: wrong triangles", name);
                CHECK(!r.s->has_normals && !r.s->has_uvs, "%s: invented normals/uvs", name);
            }
            scene_destroy(r.s);
            free(b.p);
        }
}

/* Normals and each UV naming, plus colour/confidence properties, in all three formats. */
static void test_normals_uvs(void) {
    static const char *const uvn[3][2] = {{"u", "v"}, {"s", "t"}, {"texture_u", "texture_v"}};
    for (int f = 0; f < 3; ++f)
        for (int k = 0; k < 3; ++k) {
            buf b = {0};
            putf(&b, "ply\nformat %s 1.0\nobj_info made by test_ply\nelement vertex 3\n", fmt_name(f));
            putf(&b,
                 "property float confidence\nproperty float x\nproperty float y\nproperty float z\n"
                 "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar alpha\n"
                 "property float nx\nproperty float ny\nproperty float nz\n"
                 "property float %s\nproperty float %s\nproperty float intensity\n",
                 uvn[k][0], uvn[k][1]);
            putf(&b, "element face 1\nproperty list uchar uint vertex_index\nend_header\n");
            static const float V[3][14] = {
                {0.5f, 0, 0, 0, 255, 128, 0, 255, 0, 0, 2, 0.0f, 0.0f, 0.25f},
                {0.5f, 1, 0, 0, 1, 2, 3, 4, 0, 0, 1, 1.0f, 0.0f, 0.25f},
                {0.5f, 0, 1, 0, 9, 9, 9, 9, 0, 3, 4, 0.5f, 0.75f, 0.25f},
            };
            for (int v = 0; v < 3; ++v) {
                for (int j = 0; j < 14; ++j) {
                    int t = (j >= 4 && j <= 7) ? U8 : F32;
                    if (f == 0)
                        putf(&b, j ? " %g" : "%g", (double)V[v][j]);
                    else
                        putv(&b, t, V[v][j], f == 2);
                }
                if (f == 0) putf(&b, "\n");
            }
            if (f == 0)
                putf(&b, "3 0 1 2\n");
            else {
                putv(&b, U8, 3, f == 2);
                for (int j = 0; j < 3; ++j) putv(&b, U32, j, f == 2);
            }
            char name[64];
            snprintf(name, sizeof name, "attrs_%s_%s.ply", fmt_name(f), uvn[k][0]);
            result r;
            expect_ok(name, &b, 1, 3, &r);
            if (r.rc == 0) {
                CHECK(r.s->has_normals && r.s->has_uvs, "%s: normals/uvs not loaded", name);
                CHECK(vec_near(r.s->normals[0], v3(0, 0, 1)) && vec_near(r.s->normals[2], v3(0, 0.6f, 0.8f)),
                      "%s: normals wrong", name);
                CHECK(vec_near(r.s->positions[1], v3(1, 0, 0)), "%s: position wrong", name);
                CHECK(fabsf(r.s->uvs[1].x - 1.0f) < 1e-6f && fabsf(r.s->uvs[2].y - 0.75f) < 1e-6f, "%s: uvs wrong",
                      name);
            }
            scene_destroy(r.s);
            free(b.p);
        }
    /* only two of the three normal components: no normals, still loads */
    buf b = {0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "property float nx\nproperty float ny\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
         "0 0 0 1 0\n1 0 0 1 0\n0 1 0 1 0\n3 0 1 2\n");
    result r;
    expect_ok("partial_normals.ply", &b, 1, 3, &r);
    if (r.rc == 0) CHECK(!r.s->has_normals, "partial normals were used");
    scene_destroy(r.s);
    free(b.p);
}

/* Unknown elements (with list properties, with no properties, fixed-size) before, between and
 * after vertex and face; faces before vertices. */
static void test_unknown_elements(void) {
    for (int f = 0; f < 3; ++f) {
        int be = f == 2;
        buf b = {0};
        putf(&b, "ply\r\nformat %s 1.0\r\ncomment CRLF header\r\n", fmt_name(f));
        putf(&b, "element material 2\r\nproperty uchar ambient_red\r\nproperty float shininess\r\n");
        putf(&b, "element face 3\r\nproperty uchar flags\r\nproperty list uchar float texcoord\r\n"
                 "property list int short vertex_indices\r\nproperty list ushort double weights\r\n");
        putf(&b, "element empty 1000000000000\r\n");
        putf(&b, "element edge 2\r\nproperty list uint int vertex_pair\r\nproperty int crease\r\n");
        putf(&b, "element vertex 6\r\nproperty double x\r\nproperty double y\r\nproperty double z\r\n"
                 "property list uchar uchar tags\r\n");
        putf(&b, "element range_grid 3\r\nproperty list uchar int vertex_indices\r\nend_header\r\n");
        /* material */
        for (int i = 0; i < 2; ++i) {
            if (!f)
                putf(&b, "%d 0.5\r\n", 7 + i);
            else {
                putv(&b, U8, 7 + i, be);
                putv(&b, F32, 0.5, be);
            }
        }
        /* faces: triangle, hexagon, 2-gon (skipped) */
        static const int faces[3][7] = {{3, 0, 1, 2}, {6, 0, 1, 2, 3, 4, 5}, {2, 0, 1}};
        for (int k = 0; k < 3; ++k) {
            if (!f) {
                putf(&b, "1 4 0.1 0.2 0.3 0.4 %d", faces[k][0]);
                for (int j = 1; j <= faces[k][0]; ++j) putf(&b, " %d", faces[k][j]);
                putf(&b, " 2 1.5 2.5\r\n");
            } else {
                putv(&b, U8, 1, be);
                putv(&b, U8, 4, be);
                for (int j = 0; j < 4; ++j) putv(&b, F32, 0.1 * (j + 1), be);
                putv(&b, I32, faces[k][0], be);
                for (int j = 1; j <= faces[k][0]; ++j) putv(&b, I16, faces[k][j], be);
                putv(&b, U16, 2, be);
                putv(&b, F64, 1.5, be);
                putv(&b, F64, 2.5, be);
            }
        }
        /* edges */
        for (int k = 0; k < 2; ++k) {
            if (!f)
                putf(&b, "2 %d %d -1\r\n", k, k + 1);
            else {
                putv(&b, U32, 2, be);
                putv(&b, I32, k, be);
                putv(&b, I32, k + 1, be);
                putv(&b, I32, -1, be);
            }
        }
        /* vertices: a hexagon in the plane z = 1 */
        for (int v = 0; v < 6; ++v) {
            double a = v * 3.14159265358979 / 3;
            if (!f)
                putf(&b, "%.17g %.17g 1 3 1 2 3\r\n", cos(a), sin(a));
            else {
                putv(&b, F64, cos(a), be);
                putv(&b, F64, sin(a), be);
                putv(&b, F64, 1, be);
                putv(&b, U8, 3, be);
                putv(&b, U8, 1, be);
                putv(&b, U8, 2, be);
                putv(&b, U8, 3, be);
            }
        }
        /* range_grid: its vertex_indices list is not the face's */
        for (int k = 0; k < 3; ++k) {
            if (!f)
                putf(&b, "%d%s\r\n", k ? 1 : 0, k ? " 99" : "");
            else {
                putv(&b, U8, k ? 1 : 0, be);
                if (k) putv(&b, I32, 99, be);
            }
        }
        char name[64];
        snprintf(name, sizeof name, "unknown_%s.ply", fmt_name(f));
        result r;
        expect_ok(name, &b, 1 + 4, 6, &r);
        if (r.rc == 0) {
            CHECK(tri_is(r.s, 0, 0, 1, 2) && tri_is(r.s, 1, 0, 1, 2) && tri_is(r.s, 2, 0, 2, 3) &&
                      tri_is(r.s, 3, 0, 3, 4) && tri_is(r.s, 4, 0, 4, 5),
                  "%s: fan triangulation wrong", name);
            CHECK(vec_near(r.s->positions[3], v3(-1, 0, 1)), "%s: vertex 3 wrong", name);
            CHECK(strstr(r.warn, "skipped 1 faces with fewer than 3 vertices") != NULL, "%s: warning '%s'", name,
                  r.warn);
        }
        scene_destroy(r.s);
        free(b.p);
    }
}

/* CRLF bodies, blank lines, tabs, numbers in exponent form. */
static void test_ascii_quirks(void) {
    buf b = {0};
    putf(&b, "ply\r\nformat ascii 1.0\r\n\r\ncomment a\tcomment\r\nelement vertex 4\r\nproperty float x\r\n"
             "property float y\r\nproperty float z\r\nelement face 1\r\nproperty list uchar int vertex_indices\r\n"
             "end_header\r\n0 0 0\r\n1e0\t0   0 \r\n\r\n1 1.0E+00 0\r\n0 1 -0e-3\r\n4 0 1 2 3\r\n");
    expect_ok("ascii_crlf.ply", &b, 2, 4, NULL);
    /* no newline at the very end */
    b.n -= 2;
    expect_ok("ascii_no_final_newline.ply", &b, 2, 4, NULL);
    free(b.p);
}

/* ASCII numbers must read exactly as strtod reads them, whatever path the parser takes. */
static void test_ascii_precision(void) {
    enum { N = 3000 };
    static char strs[N][3][40];
    uint64_t st = 12345;
    buf b = {0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex %d\nproperty double x\nproperty double y\nproperty double z\n"
         "element face %d\nproperty list uchar int vertex_indices\nend_header\n",
         N, N / 3);
    for (int i = 0; i < N; ++i) {
        for (int k = 0; k < 3; ++k) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = st >> 11;
            int form = (int)(r % 6), digits = 1 + (int)((r >> 3) % 19),
                point = (int)((r >> 8) % (uint64_t)(digits + 1));
            char *o = strs[i][k];
            int n = 0;
            if (r & (1ull << 20)) o[n++] = '-';
            for (int d = 0; d < digits; ++d) {
                if (d == point && form != 0) o[n++] = '.';
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                o[n++] = (char)('0' + (st >> 60) % 10);
            }
            if (form == 5) n += snprintf(o + n, 8, "e%d", (int)(st >> 40) % 30 - 15);
            o[n] = '\0';
            if (fabs(strtod(o, NULL)) > 1e14) { /* the reader refuses coordinates beyond 1e15 */
                memmove(o + 2, o, (size_t)n + 1);
                o[0] = '0';
                o[1] = '.';
                for (char *c = o + 2; *c; ++c)
                    if (*c == '.' || *c == '-' || *c == 'e') *c = '7';
            }
            putf(&b, k ? " %s" : "%s", o);
        }
        putf(&b, "\n");
    }
    for (int t = 0; t < N / 3; ++t) putf(&b, "3 %d %d %d\n", 3 * t, 3 * t + 1, 3 * t + 2);
    result r = load("precision.ply", &b);
    CHECK(r.rc == 0, "precision.ply: %s", r.err);
    if (r.rc == 0) {
        int bad = 0;
        for (int i = 0; i < N && bad < 5; ++i) {
            vec3 p = r.s->positions[i];
            float want[3], got[3] = {p.x, p.y, p.z};
            for (int k = 0; k < 3; ++k) {
                want[k] = (float)strtod(strs[i][k], NULL);
                if (want[k] != got[k]) { /* == : the transform turns -0 into +0 */
                    bad++;
                    CHECK(0, "'%s' read as %.9g, strtod gives %.9g", strs[i][k], (double)got[k], (double)want[k]);
                }
            }
        }
    }
    scene_destroy(r.s);
    free(b.p);
}

/* Degenerate triangles and short faces: skipped and counted in one warning line. */
static void test_skips(void) {
    buf b = {0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 6\nproperty list uchar int vertex_indices\nend_header\n"
             "0 0 0\n1 0 0\n0 1 0\n2 0 0\n0 0 0\n"
             "3 0 1 2\n3 0 1 3\n3 0 0 2\n3 0 4 1\n1 2\n0\n");
    result r;
    expect_ok("skips.ply", &b, 1, 5, &r);
    CHECK(strstr(r.warn, "skips.ply: skipped 2 faces with fewer than 3 vertices, 3 degenerate triangles\n") != NULL,
          "warning was '%s'", r.warn);
    CHECK(strchr(r.warn, '\n') == strrchr(r.warn, '\n'), "more than one warning line: '%s'", r.warn);
    scene_destroy(r.s);
    free(b.p);
    /* nothing skipped: no warning */
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
    expect_ok("clean.ply", &b, 1, 3, &r);
    CHECK(r.warn[0] == '\0', "warning without a reason: '%s'", r.warn);
    scene_destroy(r.s);
    free(b.p);
}

/* ---- errors ----------------------------------------------------------------------------------- */
static buf tri_header(const char *fmt, const char *vtype, const char *listtype) {
    buf b = {0};
    putf(&b,
         "ply\nformat %s 1.0\nelement vertex 3\nproperty %s x\nproperty %s y\nproperty %s z\n"
         "element face 1\nproperty list %s vertex_indices\nend_header\n",
         fmt, vtype, vtype, vtype, listtype);
    return b;
}

static void test_errors(void) {
    buf b;
    /* header problems */
    b = (buf){0};
    putf(&b, "PLY\nformat ascii 1.0\nend_header\n");
    expect_err("magic.ply", &b, "not a PLY file");
    free(b.p);
    b = (buf){0};
    expect_err("empty.ply", &b, "not a PLY file");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n");
    expect_err("no_end_header.ply", &b, "missing end_header");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\ncomment ");
    for (int i = 0; i < 100000; ++i) put(&b, "x", 1);
    putf(&b, "\nend_header\n");
    expect_err("long_line.ply", &b, "header line 3: header line too long");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\ncomment ");
    for (int i = 0; i < 100000; ++i) put(&b, "x", 1);
    expect_err("long_line_eof.ply", &b, "header line too long");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 2.0\nend_header\n");
    expect_err("version.ply", &b, "unsupported format version");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat binary_middle_endian 1.0\nend_header\n");
    expect_err("fmt.ply", &b, "unknown format");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nelement vertex 3\nend_header\n");
    expect_err("noformat.ply", &b, "no 'format' line");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty flot x\nend_header\n");
    expect_err("type.ply", &b, "header line 4: unknown property type 'flot'");
    free(b.p);
    b = tri_header("ascii", "float", "float int");
    expect_err("float_count.ply", &b, "not an integer type");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nproperty float x\nend_header\n");
    expect_err("orphan.ply", &b, "property before any element");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex -3\nend_header\n");
    expect_err("negcount.ply", &b, "not a non-negative integer");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nfoo bar\nend_header\n");
    expect_err("keyword.ply", &b, "unknown header keyword 'foo'");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\ncomment a");
    put(&b, "\0", 1);
    putf(&b, "b\nend_header\n");
    expect_err("nul_header.ply", &b, "NUL byte in the header");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0\n0 0\n0 0\n3 0 1 2\n");
    expect_err("no_z.ply", &b, "no property 'z'");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float "
             "z\nend_header\n0 0 0\n1 0 0\n0 1 0\n");
    expect_err("no_faces.ply", &b, "no 'face' element");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3\n");
    expect_err("scalar_indices.ply", &b, "is not a list");
    free(b.p);

    /* counts the file cannot hold: refused before allocating */
    b = (buf){0};
    putf(&b,
         "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\nproperty float x\n"
         "property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n");
    for (int i = 0; i < 100; ++i) putv(&b, F32, 0, 0);
    expect_err("huge_count.ply", &b, "count 1000000000 is more than the file can hold");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 999999999999999999\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 "
             "0\n3 0 1 2\n");
    expect_err("huge_faces_ascii.ply", &b, "more than the file can hold");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nelement junk 1\nproperty double a\nproperty "
             "double b\nproperty double c\nproperty double d\nproperty double e\n"
             "property double f\nproperty double g\nproperty double h\nproperty double i\nproperty double j\nproperty "
             "double k\nproperty double l\nend_header\n"
             "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
    expect_err("junk_count.ply", &b, "element 'junk' count 1 is more than the file can hold");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3000000000\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n");
    expect_err("too_many_verts.ply", &b, "too many vertices");
    free(b.p);

    /* truncated bodies, every format */
    static const char *const fmts[3] = {"ascii", "binary_little_endian", "binary_big_endian"};
    for (int f = 0; f < 3; ++f) {
        buf full = tri_header(fmts[f], "float", "uchar int");
        size_t hdr = full.n;
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k) {
                if (!f)
                    putf(&full, "%d%s", k == v, k == 2 ? "\n" : " ");
                else
                    putv(&full, F32, k == v, f == 2);
            }
        if (!f)
            putf(&full, "3 0 1 2\n");
        else {
            putv(&full, U8, 3, f == 2);
            for (int j = 0; j < 3; ++j) putv(&full, I32, j, f == 2);
        }
        char name[64];
        snprintf(name, sizeof name, "full_%s.ply", fmts[f]);
        expect_ok(name, &full, 1, 3, NULL);
        /* cut it at every byte of the body: each must fail cleanly (a cut ASCII body that still
         * holds whole numbers can parse; any other outcome is an error) */
        for (size_t cut = hdr; cut < full.n - (f ? 0 : 1); ++cut) {
            buf t = {0};
            put(&t, full.p, cut);
            snprintf(name, sizeof name, "cut_%s_%zu.ply", fmts[f], cut);
            result r = load(name, &t);
            if (f)
                CHECK(r.rc == -1 && (strstr(r.err, "unexpected end of file") || strstr(r.err, "more than")),
                      "%s: rc %d '%s'", name, r.rc, r.err);
            else
                CHECK(r.rc == -1 || (cut >= full.n - 2), "%s: rc %d", name, r.rc);
            scene_destroy(r.s);
            free(t.p);
        }
        free(full.p);
    }
    b = tri_header("binary_little_endian", "float", "uchar int");
    for (int i = 0; i < 9; ++i) putv(&b, F32, i % 4 == 0, 0);
    putv(&b, U8, 3, 0);
    putv(&b, I32, 0, 0);
    expect_err("cut_list.ply", &b,
               "element 'face' record 0: list 'vertex_indices' count 3 is more than the rest of the file holds");
    free(b.p);

    /* bad indices name the face record */
    const char *vbody = "0 0 0\n1 0 0\n0 1 0\n";
    b = (buf){0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "element face 3\nproperty list uchar int vertex_indices\nend_header\n%s3 0 1 2\n3 0 1 2\n3 0 1 3\n",
         vbody);
    expect_err("index_range.ply", &b, "element 'face' record 2: vertex index 3 out of range (3 vertices)");
    free(b.p);
    b = (buf){0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "element face 2\nproperty list uchar int vertex_indices\nend_header\n%s3 0 1 2\n3 0 -1 2\n",
         vbody);
    expect_err("index_neg.ply", &b, "element 'face' record 1: vertex index -1 out of range");
    free(b.p);
    b = (buf){0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "element face 1\nproperty list uchar float vertex_indices\nend_header\n%s3 0 1.5 2\n",
         vbody);
    expect_err("index_frac.ply", &b, "record 0: vertex index 1.5 is not an integer");
    free(b.p);
    for (int f = 1; f < 3; ++f) {
        b = tri_header(fmts[f], "float", "uchar int");
        for (int i = 0; i < 9; ++i) putv(&b, F32, i % 4 == 0, f == 2);
        putv(&b, U8, 3, f == 2);
        putv(&b, I32, 0, f == 2);
        putv(&b, I32, -5, f == 2);
        putv(&b, I32, 1, f == 2);
        expect_err(f == 1 ? "index_neg_le.ply" : "index_neg_be.ply", &b,
                   "element 'face' record 0: vertex index -5 out of range");
        free(b.p);
        b = tri_header(fmts[f], "float", "uint uint");
        for (int i = 0; i < 9; ++i) putv(&b, F32, i % 4 == 0, f == 2);
        putv(&b, U32, 4294967295.0, f == 2);
        putv(&b, U32, 0, f == 2);
        expect_err(f == 1 ? "list_huge_le.ply" : "list_huge_be.ply", &b,
                   "count 4294967295 is more than the rest of the file holds");
        free(b.p);
        b = tri_header(fmts[f], "float", "int int");
        for (int i = 0; i < 9; ++i) putv(&b, F32, i % 4 == 0, f == 2);
        putv(&b, I32, -3, f == 2);
        putv(&b, I32, 0, f == 2);
        expect_err(f == 1 ? "list_neg_le.ply" : "list_neg_be.ply", &b, "negative count");
        free(b.p);
    }
    b = (buf){0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "element face 1\nproperty list uint int vertex_indices\nend_header\n%s4000000000 0 1 2\n",
         vbody);
    expect_err("list_huge_ascii.ply", &b, "promises 4000000000 items, the line has 3");
    free(b.p);
    b = (buf){0};
    putf(&b,
         "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
         "element face 1\nproperty list int int vertex_indices\nend_header\n%s-3 0 1 2\n",
         vbody);
    expect_err("list_neg_ascii.ply", &b, "is not a non-negative integer");
    free(b.p);

    /* NaN / Inf positions, ASCII and binary */
    const char *bad[3] = {"nan", "inf", "-1e300"};
    for (int i = 0; i < 3; ++i) {
        b = (buf){0};
        putf(&b,
             "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 %s 0\n0 1 0\n3 0 1 2\n",
             bad[i]);
        char name[64];
        snprintf(name, sizeof name, "nonfinite_%d.ply", i);
        expect_err(name, &b, "element 'vertex' record 1: position");
        free(b.p);
    }
    for (int f = 1; f < 3; ++f) {
        b = tri_header(fmts[f], "float", "uchar int");
        for (int i = 0; i < 9; ++i) putv(&b, F32, i == 5 ? (f == 1 ? NAN : -INFINITY) : (i % 4 == 0), f == 2);
        putv(&b, U8, 3, f == 2);
        for (int j = 0; j < 3; ++j) putv(&b, I32, j, f == 2);
        expect_err(f == 1 ? "nan_le.ply" : "inf_be.ply", &b, "element 'vertex' record 1: position");
        free(b.p);
    }

    /* ASCII shape errors */
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0\n0 1 0\n3 0 1 2\n");
    expect_err("few_values.ply", &b, "element 'vertex' record 1: too few values");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0 7\n0 1 0\n3 0 1 2\n");
    expect_err("many_values.ply", &b, "element 'vertex' record 1: more values");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0x 0\n0 1 0\n3 0 1 2\n");
    expect_err("not_number.ply", &b, "'0x' is not a number");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0              \n");
    expect_err("ascii_eof.ply", &b, "element 'face' record 0: unexpected end of file");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2");
    put(&b, "\0", 1);
    expect_err("ascii_nul.ply", &b, "is not a number");
    free(b.p);

    /* nothing to render */
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n2 0 0\n3 0 1 2\n");
    expect_err("all_degenerate.ply", &b, "all 1 triangles are degenerate");
    free(b.p);
    b = (buf){0};
    putf(&b, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 0\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n2 0 0\n");
    expect_err("zero_faces.ply", &b, "no faces");
    free(b.p);

    /* binary garbage after a valid header, and pure garbage; must fail, never crash */
    uint64_t st = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 200; ++k) {
        b = k & 1
                ? tri_header(k & 2 ? "binary_big_endian" : "binary_little_endian", tname[(k / 4) % NTYPES], "int uint")
                : (buf){0};
        if (!(k & 1)) putf(&b, "ply\n");
        for (int i = 0; i < 64 + k; ++i) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            unsigned char c = (unsigned char)(st >> 56);
            put(&b, &c, 1);
        }
        char name[64];
        snprintf(name, sizeof name, "garbage_%d.ply", k);
        result r = load(name, &b);
        CHECK(r.rc == -1 || r.rc == 0, "%s", name);
        CHECK(r.rc == 0 || (r.err[0] && !strchr(r.err, '\n')), "%s: bad message '%s'", name, r.err);
        scene_destroy(r.s);
        free(b.p);
    }

    /* not a file */
    scene *s = scene_create();
    char err[512];
    CHECK(scene_load_ply(s, "/nonexistent/x.ply", xform_identity(), 0, err, sizeof err) == -1 &&
              strstr(err, "/nonexistent/x.ply: cannot open") == err,
          "missing file: '%s'", err);
    CHECK(scene_load_ply(s, g_dir, xform_identity(), 0, err, sizeof err) == -1 && strstr(err, "not a regular file"),
          "directory: '%s'", err);
    scene_destroy(s);
}

/* ---- real assets ------------------------------------------------------------------------------------ */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void test_asset(const char *root, const char *rel, size_t ntris, size_t nverts, const float lo[3],
                       const float hi[3], int normals) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    scene *s = scene_create();
    char err[512];
    double t0 = now();
    int rc = scene_load_ply(s, path, xform_identity(), 0, err, sizeof err);
    double dt = now() - t0;
    CHECK(rc == 0, "%s: %s", rel, err);
    if (rc == 0) {
        printf("  %s: %zu triangles, %zu vertices in %.1f ms\n", rel, s->ntriangles, s->nvertices, dt * 1e3);
        CHECK(s->ntriangles == ntris, "%s: %zu triangles, expected %zu", rel, s->ntriangles, ntris);
        CHECK(s->nvertices == nverts, "%s: %zu vertices, expected %zu", rel, s->nvertices, nverts);
        CHECK(s->has_normals == normals && !s->has_uvs, "%s: attributes", rel);
        vec3 a = s->positions[0], b = a;
        for (size_t i = 0; i < s->nvertices; ++i) {
            a = vmin(a, s->positions[i]);
            b = vmax(b, s->positions[i]);
        }
        /* the README lists bounds to 4 decimals */
        CHECK_NEAR(a.x, lo[0], 6e-5, "bbox min x");
        CHECK_NEAR(a.y, lo[1], 6e-5, "bbox min y");
        CHECK_NEAR(a.z, lo[2], 6e-5, "bbox min z");
        CHECK_NEAR(b.x, hi[0], 6e-5, "bbox max x");
        CHECK_NEAR(b.y, hi[1], 6e-5, "bbox max y");
        CHECK_NEAR(b.z, hi[2], 6e-5, "bbox max z");
        if (strstr(rel, "dragon")) {
            /* the OBJ twin (dragon_100k.obj, README: (-7.0467, 0, -3.1513)..(7.0467, 9.9399, 3.1513)) is the same
             * mesh uncentred and 5.2084x larger: the extents must agree up to that one uniform scale */
            const double obj_ext[3] = {2 * 7.0467, 9.9399, 2 * 3.1513};
            vec3 e = vsub(b, a);
            double sc = obj_ext[0] / e.x;
            CHECK(fabs(sc - 5.2084) < 0.005, "dragon scale %.5f, README says about 5.2084", sc);
            CHECK(fabs(obj_ext[1] / e.y - sc) < 2e-3 * sc && fabs(obj_ext[2] / e.z - sc) < 2e-3 * sc,
                  "dragon extents (%g %g %g) are not the OBJ's scaled uniformly", e.x, e.y, e.z);
            CHECK(fabs(a.x + b.x) < 1e-4 && fabs(a.y + b.y) < 1e-4 && fabs(a.z + b.z) < 1e-4, "dragon not centred");
        }
    }
    scene_destroy(s);
}

static void test_assets(void) {
    const char *root = getenv("CAUSTIC_ASSETS");
    if (!root) root = "/work/shared/assets";
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("  %s not found: skipping the asset checks\n", root);
        return;
    }
    const float blo[3] = {-0.0947f, 0.033f, -0.0619f}, bhi[3] = {0.061f, 0.1873f, 0.0588f};
    test_asset(root, "bunny/ply/bun_zipper.ply", 69451, 35947, blo, bhi, 0);
    const float dlo[3] = {-1.3529f, -0.9542f, -0.605f}, dhi[3] = {1.3529f, 0.9542f, 0.605f};
    test_asset(root, "dragon/dragon_100k_binary.ply", 100000, 50000, dlo, dhi, 1);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "%s/caustic_ply_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_types();
    test_normals_uvs();
    test_unknown_elements();
    test_ascii_quirks();
    test_ascii_precision();
    test_skips();
    test_errors();
    test_assets();
    /* remove the crafted files, unless they are wanted (e.g. as fuzzing seeds) */
    if (getenv("CAUSTIC_PLY_KEEP")) {
        printf("  crafted files kept in %s\n", g_dir);
        return test_result("test_ply");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return test_result("test_ply");
}
