/* Scene files of every kind a user brings: caustic/CIS 5650 JSON, the older CIS 565 text format
 * (converted to JSON by scene_text.c), a bare model for a quick look (OBJ, PLY; glTF plugs in
 * at scene_load_mesh_file), and other renderers' formats, recognised and refused by name. Each
 * path ends in the JSON loader, so one set of rules (and of messages) applies to all of them. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "scene/scene.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SCENE_FILE (256L << 20)

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

static int ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m) return 0;
    for (size_t i = 0; i < m; ++i)
        if (tolower((unsigned char)s[n - m + i]) != tolower((unsigned char)suffix[i])) return 0;
    return 1;
}

/* ---- meshes by extension ---------------------------------------------------------------------- */
int scene_load_mesh_file(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    if (!ends_with_ci(path, ".obj") && !ends_with_ci(path, ".ply") && !ends_with_ci(path, ".gltf") &&
        !ends_with_ci(path, ".glb")) {
        const char *base = strrchr(path, '/');
        snprintf(err, errlen, "\"%.64s\": unsupported mesh format (use Wavefront .obj, .ply, .gltf or .glb)",
                 base ? base + 1 : path);
        text_one_line(err);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) != 0) { /* a missing file is missing, whatever its format */
        int e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        text_one_line(err);
        return -1;
    }
    if (ends_with_ci(path, ".obj")) return scene_load_obj(s, path, to_world, material, err, errlen);
    if (ends_with_ci(path, ".ply")) return scene_load_ply(s, path, to_world, material, err, errlen);
    if (ends_with_ci(path, ".gltf") || ends_with_ci(path, ".glb"))
        return scene_load_gltf(s, path, to_world, material, 0, err, errlen);
    const char *base = strrchr(path, '/');
    snprintf(err, errlen, "\"%.64s\": unsupported mesh format (use Wavefront .obj, .ply, .gltf or .glb)",
             base ? base + 1 : path);
    text_one_line(err);
    return -1;
}

/* ---- reading ----------------------------------------------------------------------------------- */
/* The whole file, NUL-terminated (it may contain NULs: *size says how long it is). */
static char *read_all(const char *path, size_t *size, char *err, size_t errlen) {
    char why[256];
    char *text = file_read_all(path, MAX_SCENE_FILE, size, why, sizeof why);
    if (!text) snprintf(err, errlen, "%s: %s", path, why);
    return text;
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (!dir) return NULL;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return dir;
}

/* ---- what kind of file ------------------------------------------------------------------------- */
typedef enum {
    FMT_JSON,
    FMT_CIS_TEXT,
    FMT_OBJ,
    FMT_PLY,
    FMT_GLTF,
    FMT_GLB,
    FMT_PBRT,
    FMT_MITSUBA,
    FMT_LUXCORE,
    FMT_UNKNOWN
} file_format;

static const char *skip_space_and_comments(const char *p, const char *end) {
    for (;;) {
        while (p < end && isspace((unsigned char)*p)) ++p;
        if (p + 1 < end && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n') ++p;
            continue;
        }
        if (p < end && *p == '#') {
            while (p < end && *p != '\n') ++p;
            continue;
        }
        return p;
    }
}

static int starts_word_ci(const char *p, const char *end, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(end - p) < n) return 0;
    for (size_t i = 0; i < n; ++i)
        if (toupper((unsigned char)p[i]) != toupper((unsigned char)w[i])) return 0;
    return (size_t)(end - p) == n || !isalnum((unsigned char)p[n]);
}

static int contains_n(const char *text, size_t n, const char *needle) {
    size_t m = strlen(needle);
    if (n > 1 << 20) n = 1 << 20; /* the head of the file decides */
    for (size_t i = 0; i + m <= n; ++i)
        if (memcmp(text + i, needle, m) == 0) return 1;
    return 0;
}

static file_format detect(const char *path, const char *text, size_t n) {
    if (n >= 4 && memcmp(text, "glTF", 4) == 0) return FMT_GLB;
    if (ends_with_ci(path, ".glb")) return FMT_GLB;
    if (ends_with_ci(path, ".gltf")) return FMT_GLTF;
    if (ends_with_ci(path, ".obj")) return FMT_OBJ;
    if (ends_with_ci(path, ".ply") || (n >= 4 && memcmp(text, "ply", 3) == 0 && (text[3] == '\n' || text[3] == '\r')))
        return FMT_PLY;
    if (ends_with_ci(path, ".pbrt")) return FMT_PBRT;
    if (ends_with_ci(path, ".scn") || ends_with_ci(path, ".cfg")) return FMT_LUXCORE;
    const char *end = text + n;
    const char *p = skip_space_and_comments(text, end);
    if (p < end && *p == '{')
        return contains_n(text, n, "\"asset\"") && contains_n(text, n, "\"version\"") ? FMT_GLTF : FMT_JSON;
    if (p < end && *p == '<') return contains_n(text, n, "<scene") ? FMT_MITSUBA : FMT_UNKNOWN;
    static const char *const pbrt_words[] = {"LookAt",  "Camera",     "WorldBegin", "Film",
                                             "Sampler", "Integrator", "Shape",      "AttributeBegin",
                                             "Import",  "Include",    "Transform",  NULL};
    static const char *const cis_words[] = {"MATERIAL", "CAMERA", "OBJECT", NULL};
    for (int i = 0; cis_words[i]; ++i)
        if (starts_word_ci(p, end, cis_words[i])) return FMT_CIS_TEXT;
    if (p < end && (starts_word_ci(p, end, "scene.camera") || starts_word_ci(p, end, "scene.objects") ||
                    contains_n(text, n, "scene.camera.") || contains_n(text, n, "scene.objects.")))
        return FMT_LUXCORE;
    for (int i = 0; pbrt_words[i]; ++i)
        if (p < end && strncmp(p, pbrt_words[i], strlen(pbrt_words[i])) == 0) return FMT_PBRT;
    if (ends_with_ci(path, ".txt")) return FMT_CIS_TEXT;
    if (ends_with_ci(path, ".xml")) return FMT_MITSUBA;
    return FMT_UNKNOWN;
}

/* ---- quick look -------------------------------------------------------------------------------- */
/* JSON strings: the model path is the only free text that goes into a generated scene. */
static void json_escape(char *out, size_t n, const char *s) {
    size_t j = 0;
    for (; *s && j + 7 < n; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[j++] = '\\';
            out[j++] = (char)c;
        } else if (c < 0x20)
            j += (size_t)snprintf(out + j, n - j, "\\u%04x", c);
        else
            out[j++] = (char)c;
    }
    out[j] = '\0';
}

char *scene_quicklook_json(const char *model_path, int is_ply, vec3 lo, vec3 hi, const camera_desc *cam) {
    vec3 c = vscale(vadd(lo, hi), 0.5f), ext = vsub(hi, lo);
    float r = 0.5f * vlen(ext);
    if (!(r > 0.0f) || !isfinite(r)) r = 1.0f;
    /* a 3/4 view from the front right and a little above, the bounding sphere filling ~80 % of a
     * 40 degree vertical view (FOVY is the half angle, as in the course) */
    const float half_fov = 20.0f * 3.14159265f / 180.0f;
    float dist = r / sinf(half_fov) * 1.15f;
    vec3 dir = vnorm(v3(0.55f, 0.35f, 1.0f));
    vec3 eye = vadd(c, vscale(dir, dist));
    /* a ground plane under the model unless the model is flat in y (a floor plan, a terrain) */
    int ground = ext.y > 0.02f * r;
    float gy = lo.y, gs = 40.0f * r;
    char file[4200];
    json_escape(file, sizeof file, model_path);
    size_t cap = 8192 + strlen(file);
    char *out = malloc(cap);
    if (!out) return NULL;
    /* the model file's own camera (a glTF camera) where it has one */
    int rw = cam ? cam->width : 800, rh = cam ? cam->height : 600;
    float fovy = cam ? 0.5f * cam->fovy_deg : 20.0f;
    vec3 look = cam ? cam->lookat : c, up = cam ? cam->up : v3(0, 1, 0);
    if (cam) eye = cam->eye;
    int n =
        snprintf(out, cap,
                 "{\n"
                 "  \"Materials\": {\n"
                 "    \"model\": {\"TYPE\": \"Diffuse\", \"RGB\": [0.7, 0.7, 0.7]},\n"
                 "    \"ground\": {\"TYPE\": \"Diffuse\", \"RGB\": [0.5, 0.5, 0.5]}\n"
                 "  },\n"
                 "  \"Camera\": {\n"
                 "    \"RES\": [%d, %d], \"FOVY\": %.6g, \"ITERATIONS\": 128, \"DEPTH\": 8, \"FILE\": \"quicklook\",\n"
                 "    \"EYE\": [%.6g, %.6g, %.6g], \"LOOKAT\": [%.6g, %.6g, %.6g], \"UP\": [%.6g, %.6g, %.6g]\n"
                 "  },\n"
                 "  \"Environment\": {\"RGB\": [0.5, 0.5, 0.5], \"EMITTANCE\": 1.0},\n"
                 "  \"Lights\": [\n"
                 "    {\"TYPE\": \"directional\", \"DIRECTION\": [-0.45, -1.0, -0.6], \"RGB\": [2.5, 2.4, 2.2]}\n"
                 "  ],\n"
                 "  \"Objects\": [\n"
                 "    {\"TYPE\": \"mesh\", \"FILE\": \"%s\"%s}%s",
                 rw, rh, fovy, eye.x, eye.y, eye.z, look.x, look.y, look.z, up.x, up.y, up.z, file,
                 is_ply ? ", \"MATERIAL\": \"model\"" : "", ground ? ",\n" : "\n");
    if (n < 0 || (size_t)n >= cap) {
        free(out);
        return NULL;
    }
    if (ground) {
        int m = snprintf(out + n, cap - (size_t)n,
                         "    {\"TYPE\": \"plane\", \"MATERIAL\": \"ground\", \"TRANS\": [%.6g, %.6g, %.6g], "
                         "\"ROTAT\": [-90, 0, 0], \"SCALE\": [%.6g, %.6g, 1]}\n",
                         c.x, gy, c.z, gs, gs);
        if (m < 0 || (size_t)m >= cap - (size_t)n) {
            free(out);
            return NULL;
        }
        n += m;
    }
    int m = snprintf(out + n, cap - (size_t)n, "  ]\n}\n");
    if (m < 0 || (size_t)m >= cap - (size_t)n) {
        free(out);
        return NULL;
    }
    return out;
}

/* Bounds of a model file, by loading it into a scratch scene. */
static int model_bounds(const char *path, const scene_load_opts *opts, vec3 *lo, vec3 *hi, char *err, size_t errlen) {
    scene *t = scene_create();
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    (void)opts; /* its warnings come again when the scene itself is loaded */
    material m;
    memset(&m, 0, sizeof m);
    m.albedo_tex = -1;
    int mat = ends_with_ci(path, ".ply") ? scene_add_material(t, "model", m) : -1;
    int rc = scene_load_mesh_file(t, path, xform_identity(), mat, err, errlen);
    if (rc == 0) {
        *lo = v3s(INFINITY);
        *hi = v3s(-INFINITY);
        for (size_t i = 0; i < t->nvertices; ++i) {
            vec3 p = t->positions[i];
            *lo = v3(fminf(lo->x, p.x), fminf(lo->y, p.y), fminf(lo->z, p.z));
            *hi = v3(fmaxf(hi->x, p.x), fmaxf(hi->y, p.y), fmaxf(hi->z, p.z));
        }
        if (t->nvertices == 0) {
            snprintf(err, errlen, "%s: the model has no vertices", path);
            rc = -1;
        }
    }
    scene_destroy(t);
    return rc;
}

/* ---- entry -------------------------------------------------------------------------------------- */
static int hand_out_json(const scene_load_opts *opts, const char *json, char *err, size_t errlen) {
    if (!opts || !opts->json_out) return 0;
    if (*opts->json_out) return 0; /* the loader's, with the -D overrides applied */
    size_t n = strlen(json);
    *opts->json_out = malloc(n + 1);
    if (!*opts->json_out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(*opts->json_out, json, n + 1);
    return 0;
}

int scene_load_file(scene **out, const char *path, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    if (opts && opts->json_out) *opts->json_out = NULL;
    size_t n = 0;
    char *text = read_all(path, &n, err, errlen);
    if (!text) {
        text_one_line(err);
        return -1;
    }
    file_format f = detect(path, text, n);
    const char *nul = memchr(text, '\0', n);
    char *dir = dir_of(path);
    int rc = -1;
    switch (f) {
    case FMT_PBRT:
        snprintf(err, errlen,
                 "%s: this is a pbrt scene; caustic does not read pbrt files (it reads CIS 5650 JSON "
                 "and text scenes, OBJ/PLY models and glTF 2.0 files)",
                 path);
        break;
    case FMT_MITSUBA:
        snprintf(err, errlen,
                 "%s: this is a Mitsuba XML scene; caustic does not read Mitsuba files (it reads CIS "
                 "5650 JSON and text scenes, OBJ/PLY models and glTF 2.0 files)",
                 path);
        break;
    case FMT_LUXCORE:
        snprintf(err, errlen,
                 "%s: this is a LuxCore scene (.scn/.cfg); caustic does not read LuxCore files (it "
                 "reads CIS 5650 JSON and text scenes, OBJ/PLY models and glTF 2.0 files)",
                 path);
        break;
    case FMT_GLB:
    case FMT_GLTF: {
        /* the file's camera and lights (gltf.cpp); a file without lights gets the quick look's rig
         * that OBJ and PLY models get (environment, key light, ground), around its own materials
         * and through its own camera where it has one: the scene read again through that JSON */
        int lit = 0, has_camera = 0;
        rc = scene_load_gltf_scene_ex(out, path, &lit, &has_camera, err, errlen);
        if (rc || lit) break;
        vec3 lo = v3s(INFINITY), hi = v3s(-INFINITY);
        for (size_t i = 0; i < (*out)->nvertices; ++i) {
            lo = vmin(lo, (*out)->positions[i]);
            hi = vmax(hi, (*out)->positions[i]);
        }
        camera_desc cam = (*out)->camera;
        scene_destroy(*out);
        *out = NULL;
        rc = -1;
        char *abs = realpath(path, NULL);
        char *json = scene_quicklook_json(abs ? abs : path, 0, lo, hi, has_camera ? &cam : NULL);
        free(abs);
        if (!json) {
            snprintf(err, errlen, "%s: out of memory", path);
            break;
        }
        rc = scene_load_json_text_opts(out, json, path, dir, opts, err, errlen);
        if (rc == 0 && hand_out_json(opts, json, err, errlen)) {
            scene_destroy(*out);
            *out = NULL;
            rc = -1;
        }
        free(json);
        break;
    }
    case FMT_OBJ:
    case FMT_PLY: {
        vec3 lo, hi;
        if (model_bounds(path, opts, &lo, &hi, err, errlen)) break;
        char *abs = realpath(path, NULL);
        char *json = scene_quicklook_json(abs ? abs : path, f == FMT_PLY, lo, hi, NULL);
        free(abs);
        if (!json) {
            snprintf(err, errlen, "%s: out of memory", path);
            break;
        }
        rc = scene_load_json_text_opts(out, json, path, dir, opts, err, errlen);
        if (rc == 0 && hand_out_json(opts, json, err, errlen)) {
            scene_destroy(*out);
            *out = NULL;
            rc = -1;
        }
        free(json);
        break;
    }
    case FMT_CIS_TEXT: {
        if (nul) {
            file_error(err, errlen, path, text_line_at(text, nul), "file contains a NUL byte (not a text file?)");
            break;
        }
        char *json = scene_text_to_json(text, n, path, dir, err, errlen);
        if (!json) break;
        rc = scene_load_json_text_opts(out, json, path, dir, opts, err, errlen);
        if (rc == 0 && hand_out_json(opts, json, err, errlen)) {
            scene_destroy(*out);
            *out = NULL;
            rc = -1;
        }
        free(json);
        break;
    }
    case FMT_JSON:
    case FMT_UNKNOWN:
        if (nul) {
            file_error(err, errlen, path, text_line_at(text, nul), "file contains a NUL byte (not a text file?)");
            break;
        }
        /* cJSON's syntax error names the line; an unknown text format reads as malformed JSON */
        rc = scene_load_json_text_opts(out, text, path, dir, opts, err, errlen);
        if (rc == 0 && hand_out_json(opts, text, err, errlen)) {
            scene_destroy(*out);
            *out = NULL;
            rc = -1;
        }
        break;
    }
    if (rc && err && errlen) text_one_line(err);
    free(dir);
    free(text);
    return rc;
}

static int write_text(FILE *f, void *user, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    const char *text = user;
    size_t len = strlen(text);
    return fwrite(text, 1, len, f) == len ? 0 : -1; /* the flush that follows names the error */
}

int scene_dump_json(const char *path, const char *json, char *err, size_t errlen) {
    return file_write_atomic(path, "cannot write", write_text, (void *)json, err, errlen);
}
