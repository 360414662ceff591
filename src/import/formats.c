/* The table of scene formats: each row says how to recognise a file (extension, first bytes) and
 * which reader loads it, or why it is refused. The CLI's recognition and refusal messages,
 * `caustic info`, the quick look and --dump-scene all go through scene_load_file, so one row is
 * all a new format needs besides its reader (docs/extending.md ("A scene format")). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "import/import.h"
#include "import/params.h"
#include "scene/material.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SCENE_FILE (256L << 20)

/* ---- recognising --------------------------------------------------------------------------------- */
static int has_extension(const char *path, const char *extensions) {
    for (const char *p = extensions; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char ext[32];
        if (len < sizeof ext) {
            memcpy(ext, p, len);
            ext[len] = '\0';
            if (prm_ends_with_ci(path, ext)) return 1;
        }
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

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

/* The first character that is not space or a comment. */
static const char *first_token(const char *head, size_t n) { return skip_space_and_comments(head, head + n); }

static int detect_json(const char *path, const char *head, size_t n) {
    const char *p = first_token(head, n);
    if (p < head + n && *p == '{') return FORMAT_CONTENT_STRONG;
    return prm_ends_with_ci(path, ".json") ? FORMAT_EXT_WEAK : FORMAT_NO;
}

static int detect_gltf(const char *path, const char *head, size_t n) {
    if (n >= 4 && memcmp(head, "glTF", 4) == 0) return FORMAT_SURE;
    if (has_extension(path, ".gltf|.glb")) return FORMAT_SURE;
    const char *p = first_token(head, n);
    /* a glTF document without its extension: its asset block says so */
    if (p < head + n && *p == '{' && contains_n(head, n, "\"asset\"") && contains_n(head, n, "\"version\""))
        return FORMAT_CONTENT_STRONG + 5;
    return FORMAT_NO;
}

static int detect_obj(const char *path, const char *head, size_t n) {
    (void)head;
    (void)n;
    return prm_ends_with_ci(path, ".obj") ? FORMAT_SURE : FORMAT_NO;
}

static int detect_ply(const char *path, const char *head, size_t n) {
    if (prm_ends_with_ci(path, ".ply")) return FORMAT_SURE;
    return n >= 4 && memcmp(head, "ply", 3) == 0 && (head[3] == '\n' || head[3] == '\r') ? FORMAT_SURE : FORMAT_NO;
}

/* The course's text format opens with one of its block words (any case). */
static int detect_cis_text(const char *path, const char *head, size_t n) {
    static const char *const words[] = {"MATERIAL", "CAMERA", "OBJECT", NULL};
    const char *p = first_token(head, n);
    for (int i = 0; words[i]; ++i)
        if (starts_word_ci(p, head + n, words[i])) return FORMAT_CONTENT_STRONG;
    return prm_ends_with_ci(path, ".txt") ? FORMAT_EXT_WEAK : FORMAT_NO;
}

static int detect_pbrt(const char *path, const char *head, size_t n) {
    static const char *const words[] = {"LookAt", "Camera",         "WorldBegin", "Film",    "Sampler",   "Integrator",
                                        "Shape",  "AttributeBegin", "Import",     "Include", "Transform", NULL};
    if (has_extension(path, ".pbrt|.pbrt.gz")) return FORMAT_SURE;
    const char *p = first_token(head, n);
    for (int i = 0; words[i]; ++i)
        if (p < head + n && (size_t)(head + n - p) >= strlen(words[i]) && strncmp(p, words[i], strlen(words[i])) == 0)
            return FORMAT_CONTENT; /* after the course's words, which share CAMERA */
    return FORMAT_NO;
}

static int detect_mitsuba(const char *path, const char *head, size_t n) {
    const char *p = first_token(head, n);
    if (p < head + n && *p == '<' && contains_n(head, n, "<scene")) return FORMAT_CONTENT_STRONG;
    return prm_ends_with_ci(path, ".xml") ? FORMAT_EXT_WEAK : FORMAT_NO;
}

static int detect_luxcore(const char *path, const char *head, size_t n) {
    if (has_extension(path, ".scn|.cfg")) return FORMAT_SURE;
    const char *p = first_token(head, n);
    if (p < head + n && (starts_word_ci(p, head + n, "scene.camera") || starts_word_ci(p, head + n, "scene.objects") ||
                         contains_n(head, n, "scene.camera.") || contains_n(head, n, "scene.objects.")))
        return FORMAT_CONTENT + 5; /* between the course's words and pbrt's */
    return FORMAT_NO;
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
     * 40 degree vertical view (written as the JSON's half-angle FOVY) */
    const double fov_full = 40.0;
    const float half_fov = (float)(0.5 * fov_full) * 3.14159265f / 180.0f;
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
    double fovy = json_fovy_from_full(cam ? cam->fovy_deg : fov_full);
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

/* ---- loading ------------------------------------------------------------------------------------- */
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

/* JSON text to a scene, handed out as JSON as well when asked (--dump-scene). */
static int load_json_text(scene **out, const char *json, const scene_source *src, const scene_load_opts *opts,
                          char *err, size_t errlen) {
    int rc = scene_load_json_text_opts(out, json, src->path, src->dir, opts, err, errlen);
    if (rc == 0 && hand_out_json(opts, json, err, errlen)) {
        scene_destroy(*out);
        *out = NULL;
        rc = -1;
    }
    return rc;
}

static int refuse_nul(const scene_source *src, char *err, size_t errlen) {
    const char *nul = memchr(src->text, '\0', src->size);
    if (!nul) return 0;
    return file_error(err, errlen, src->path, text_line_at(src->text, nul),
                      "file contains a NUL byte (not a text file?)");
}

static int load_json(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    if (refuse_nul(src, err, errlen)) return -1;
    /* cJSON's syntax error names the line; an unknown text format reads as malformed JSON */
    return load_json_text(out, src->text, src, opts, err, errlen);
}

static int load_cis_text(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    if (refuse_nul(src, err, errlen)) return -1;
    char *json = scene_text_to_json(src->text, src->size, src->path, src->dir, err, errlen);
    if (!json) return -1;
    int rc = load_json_text(out, json, src, opts, err, errlen);
    free(json);
    return rc;
}

/* The file's camera and lights (gltf.cpp); a file without lights gets the quick look's rig that
 * OBJ and PLY get (environment, key light, ground), around its own materials and through its own
 * camera where it has one: the scene read again through that JSON (with --dump-scene's JSON and -D). */
static int load_json_text(scene **out, const char *json, const scene_source *src, const scene_load_opts *opts,
                          char *err, size_t errlen);
static int load_gltf(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    int lit = 0, has_camera = 0;
    if (scene_load_gltf_scene_ex(out, src->path, &lit, &has_camera, err, errlen)) return -1;
    if (lit) return 0;
    vec3 lo = v3s(INFINITY), hi = v3s(-INFINITY);
    for (size_t i = 0; i < (*out)->nvertices; ++i) {
        vec3 p = (*out)->positions[i];
        lo = v3(fminf(lo.x, p.x), fminf(lo.y, p.y), fminf(lo.z, p.z));
        hi = v3(fmaxf(hi.x, p.x), fmaxf(hi.y, p.y), fmaxf(hi.z, p.z));
    }
    camera_desc cam = (*out)->camera;
    scene_destroy(*out);
    *out = NULL;
    char *abs = realpath(src->path, NULL);
    char *json = scene_quicklook_json(abs ? abs : src->path, 0, lo, hi, has_camera ? &cam : NULL);
    free(abs);
    if (!json) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        return -1;
    }
    int rc = load_json_text(out, json, src, opts, err, errlen);
    free(json);
    return rc;
}

static int mesh_gltf(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    return scene_load_gltf(s, path, to_world, material, 0, err, errlen);
}

/* Bounds of a model file, by loading it into a scratch scene. */
static int model_bounds(const char *path, vec3 *lo, vec3 *hi, char *err, size_t errlen) {
    scene *t = scene_create();
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    /* a PLY has no materials of its own: any one will do for its bounds */
    int mat = prm_ends_with_ci(path, ".ply") ? scene_add_material(t, "model", material_default(MAT_DIFFUSE)) : -1;
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

/* A model alone: a quick look at it (its warnings come again when the scene itself is loaded). */
static int load_quicklook(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen) {
    vec3 lo, hi;
    if (model_bounds(src->path, &lo, &hi, err, errlen)) return -1;
    char *abs = realpath(src->path, NULL);
    int is_ply = scene_format_detect(src->path, src->text, src->size)->load_mesh == scene_load_ply;
    char *json = scene_quicklook_json(abs ? abs : src->path, is_ply, lo, hi, NULL);
    free(abs);
    if (!json) {
        snprintf(err, errlen, "%s: out of memory", src->path);
        return -1;
    }
    int rc = load_json_text(out, json, src, opts, err, errlen);
    free(json);
    return rc;
}

/* ---- the table -----------------------------------------------------------------------------------
 * A format is a row. Its reader lives in its own file (src/import/NAME.c, picked up by CMake's
 * glob) and declares its detect and load functions here, above the table (or in import.h). A format
 * caustic recognises but does not read has a NULL load and a refusal. docs/extending.md ("A scene
 * format") has the recipe. */
int pbrt_load(scene **out, const scene_source *src, const scene_load_opts *opts, char *err, size_t errlen); /* pbrt.c */
/* first match of the highest score wins: keep more specific formats above the ones they resemble */
static const scene_format formats[] = {
    {"caustic JSON", ".json", detect_json, load_json, NULL, NULL},
    {"glTF 2.0", ".gltf|.glb", detect_gltf, load_gltf, mesh_gltf, NULL},
    {"Wavefront OBJ", ".obj", detect_obj, load_quicklook, scene_load_obj, NULL},
    {"PLY", ".ply", detect_ply, load_quicklook, scene_load_ply, NULL},
    {"CIS 565 text", ".txt", detect_cis_text, load_cis_text, NULL, NULL},
    {"pbrt", ".pbrt|.pbrt.gz", detect_pbrt, pbrt_load, NULL, NULL},
    {"Mitsuba XML", ".xml", detect_mitsuba, mitsuba_load, NULL, NULL},
    {"LuxCore", ".scn|.cfg", detect_luxcore, NULL, NULL, "caustic has no LuxCore reader"},
    {NULL, NULL, NULL, NULL, NULL, NULL}};

const scene_format *scene_formats(void) { return formats; }

const scene_format *scene_format_detect(const char *path, const char *head, size_t n) {
    const scene_format *best = &formats[0]; /* unknown text: JSON, whose syntax error names the line */
    int best_score = FORMAT_NO;
    for (const scene_format *f = formats; f->name; ++f) {
        int score = f->detect(path, head, n);
        if (score > best_score) {
            best = f;
            best_score = score;
        }
    }
    return best;
}

const scene_format *scene_format_by_extension(const char *path) {
    for (const scene_format *f = formats; f->name; ++f)
        if (has_extension(path, f->extensions)) return f;
    return NULL;
}

/* ".obj, .ply, .gltf or .glb": the extensions of the rows that pass `want`. */
static void list_extensions(char *out, size_t n, int (*want)(const scene_format *)) {
    char all[256] = "";
    size_t used = 0;
    for (const scene_format *f = formats; f->name; ++f)
        if (want(f)) {
            int w = snprintf(all + used, sizeof all - used, "%s%s", used ? "|" : "", f->extensions);
            if (w < 0 || (size_t)w >= sizeof all - used) break;
            used += (size_t)w;
        }
    /* a|b|c -> "a, b or c" */
    size_t j = 0;
    const char *last = strrchr(all, '|');
    for (const char *c = all; *c && j + 5 < n; ++c) {
        if (*c != '|') {
            out[j++] = *c;
            continue;
        }
        const char *sep = c == last ? " or " : ", ";
        for (; *sep && j + 1 < n; ++sep) out[j++] = *sep;
    }
    out[j] = '\0';
}
static int is_mesh_format(const scene_format *f) { return f->load_mesh != NULL; }

int scene_load_mesh_file(scene *s, const char *path, xform to_world, int material, char *err, size_t errlen) {
    const scene_format *f = scene_format_by_extension(path);
    if (!f || !f->load_mesh) {
        const char *base = strrchr(path, '/');
        char list[200];
        list_extensions(list, sizeof list, is_mesh_format);
        snprintf(err, errlen, "\"%.64s\": unsupported mesh format (use %s)", base ? base + 1 : path, list);
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
    return f->load_mesh(s, path, to_world, material, err, errlen);
}

/* "caustic JSON, glTF 2.0, ...": the formats with a reader. */
static void readable_formats(char *out, size_t n) {
    size_t used = 0;
    out[0] = '\0';
    for (const scene_format *f = formats; f->name && used + 1 < n; ++f) {
        if (!f->load) continue;
        int w = snprintf(out + used, n - used, "%s%s", used ? ", " : "", f->name);
        if (w < 0) break;
        used += (size_t)w;
    }
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

int scene_load_file(scene **out, const char *path, const scene_load_opts *opts, char *err, size_t errlen) {
    *out = NULL;
    if (opts && opts->json_out) *opts->json_out = NULL;
    size_t n = 0;
    char why[256];
    char *text = file_read_all(path, MAX_SCENE_FILE, &n, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, why);
        text_one_line(err);
        return -1;
    }
    const scene_format *f = scene_format_detect(path, text, n);
    int rc = -1;
    if (!f->load) {
        char list[256];
        readable_formats(list, sizeof list);
        snprintf(err, errlen, "%s: this is a %s scene; caustic does not read it: %s (it reads %s)", path, f->name,
                 f->refusal, list);
    } else {
        char *dir = dir_of(path);
        scene_source src = {path, dir, text, n};
        rc = f->load(out, &src, opts, err, errlen);
        free(dir);
    }
    if (rc && err && errlen) text_one_line(err);
    free(text);
    return rc;
}

/* ---- writing --------------------------------------------------------------------------------------- */
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
