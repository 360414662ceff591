/* caustic._caustic: the CPython C API over caustic.h (no C++, no numpy headers).
 *
 * A thin layer: python/caustic/__init__.py gives it the Python shape (keyword options, numpy
 * arrays, progress bars). Images leave as bytearrays of float32 (a copy, which numpy wraps
 * without a second one: numpy.frombuffer); arrays come in through the buffer protocol (C-contiguous
 * float32 / uint32, checked here). Every call that renders, loads, saves or denoises releases the
 * GIL. While a render runs in the main thread SIGINT stops it after the pass under way (the
 * renderer's progress callback, between passes, sees the flag the handler set) and the call then
 * raises KeyboardInterrupt with the samples taken kept in the film; the renderer can go on.
 * (caustic_cancel is not used: it leaves a renderer cancelled for good.) Errors raise
 * caustic.Error with caustic's own one-line message; the library's warnings (its log callback,
 * scene-load warnings) become Python warnings (caustic.CausticWarning) after the call. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "caustic.h"

#define ERRLEN 1024

static PyObject *CausticError;   /* caustic.Error (RuntimeError) */
static PyObject *CausticWarning; /* caustic.CausticWarning (UserWarning) */

/* ---- the library's log lines, gathered from any thread, turned into warnings with the GIL ---- */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_log[8192];
static size_t g_log_len;

static void log_append(const char *msg) {
    pthread_mutex_lock(&g_log_lock);
    size_t n = strlen(msg);
    if (g_log_len + n + 2 < sizeof g_log) {
        memcpy(g_log + g_log_len, msg, n);
        g_log_len += n;
        g_log[g_log_len++] = '\n';
        g_log[g_log_len] = 0;
    }
    pthread_mutex_unlock(&g_log_lock);
}
static void on_log(void *user, const char *msg) {
    (void)user;
    log_append(msg);
}

/* With the GIL: each gathered line as a warning; -1 if a warning filter made it an error. */
static int flush_log(void) {
    char buf[sizeof g_log];
    pthread_mutex_lock(&g_log_lock);
    memcpy(buf, g_log, g_log_len + 1);
    g_log_len = 0;
    g_log[0] = 0;
    pthread_mutex_unlock(&g_log_lock);
    char *line = buf;
    while (*line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (*line && PyErr_WarnEx(CausticWarning, line, 1) < 0) return -1;
        if (!nl) break;
        line = nl + 1;
    }
    return 0;
}

static PyObject *fail(const char *err) {
    PyObject *exc = PyErr_Occurred();
    if (!exc) PyErr_SetString(CausticError, err && *err ? err : "caustic: unknown error");
    return NULL;
}

/* ---- SIGINT while a render runs without the GIL ----------------------------------------------- */
static unsigned long g_main_thread; /* threading.main_thread().ident */
static volatile sig_atomic_t g_sig_hit;
static void on_sigint(int sig) {
    (void)sig;
    g_sig_hit = 1;
}
typedef struct {
    int installed;
    struct sigaction old;
} sigint_guard;
/* Only the main thread receives Python's SIGINT; elsewhere Ctrl-C stays Python's. */
static void sigint_begin(sigint_guard *g) {
    g->installed = 0;
    if (PyThread_get_thread_ident() != g_main_thread) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    g_sig_hit = 0;
    if (sigaction(SIGINT, &sa, &g->old) == 0) g->installed = 1;
}
/* Restores Python's handler; 1 if Ctrl-C came meanwhile. */
static int sigint_end(sigint_guard *g) {
    if (!g->installed) return 0;
    sigaction(SIGINT, &g->old, NULL);
    int hit = g_sig_hit;
    g_sig_hit = 0;
    return hit;
}

/* ---- small converters ------------------------------------------------------------------------ */
static int get_vec3(PyObject *o, double v[3], const char *what) {
    PyObject *seq = PySequence_Fast(o, what);
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 3) {
        PyErr_Format(PyExc_ValueError, "%s: expected 3 numbers, got %zd", what, PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        v[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (v[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}
static PyObject *vec3(const double v[3]) { return Py_BuildValue("(ddd)", v[0], v[1], v[2]); }

/* A C-contiguous buffer of `itemsize`-byte items whose count is a multiple of `per` (0: any). */
static int get_buffer(PyObject *o, Py_buffer *view, Py_ssize_t itemsize, char fmt, Py_ssize_t per, const char *what) {
    if (PyObject_GetBuffer(o, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    int ok = view->itemsize == itemsize && (f[0] == fmt || (fmt == 'I' && (f[0] == 'L' && itemsize == 4))) && !f[1];
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous array of %s, got format '%s'", what,
                     fmt == 'f' ? "float32" : "uint32", view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    Py_ssize_t n = view->len / itemsize;
    if (per > 0 && n % per) {
        PyErr_Format(PyExc_ValueError, "%s: %zd values is not a multiple of %zd", what, n, per);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int parse_look(const char *tonemap, double exposure, caustic_look *look) {
    caustic_look_init(look);
    if (tonemap && caustic_parse_tonemap(tonemap, &look->tonemap)) {
        PyErr_Format(PyExc_ValueError, "tonemap: unknown tone map '%s' (clamp, aces, agx)", tonemap);
        return -1;
    }
    look->exposure = (float)exposure;
    return 0;
}

/* ================================ Scene ======================================================== */
typedef struct {
    PyObject_HEAD caustic_scene *scene;
    int busy;
} SceneObject;
static PyTypeObject SceneType;

static void scene_dealloc(SceneObject *self) {
    if (self->scene) caustic_scene_free(self->scene);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *scene_wrap(caustic_scene *s) {
    SceneObject *o = PyObject_New(SceneObject, &SceneType);
    if (!o) {
        caustic_scene_free(s);
        return NULL;
    }
    o->scene = s;
    o->busy = 0;
    return (PyObject *)o;
}

/* warnings of a scene load, gathered while the GIL is released */
static void on_load_warning(void *user, const char *msg) {
    (void)user;
    log_append(msg);
}

static PyObject *mod_load_scene(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"path_or_name", "strict", "dump_scene", NULL};
    PyObject *path_obj;
    int strict = 0;
    const char *dump = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|pz", kwlist, PyUnicode_FSConverter, &path_obj, &strict, &dump))
        return NULL;
    caustic_load_options lo;
    caustic_load_options_init(&lo);
    lo.strict = strict;
    lo.warning = on_load_warning;
    lo.dump_scene = dump;
    caustic_scene *s = NULL;
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_scene_load_ex(&s, PyBytes_AS_STRING(path_obj), &lo, err, sizeof err);
    Py_END_ALLOW_THREADS Py_DECREF(path_obj);
    if (flush_log() < 0) {
        if (!rc) caustic_scene_free(s);
        return NULL;
    }
    if (rc) return fail(err);
    return scene_wrap(s);
}

static PyObject *mod_new_scene(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    caustic_scene *s = NULL;
    char err[ERRLEN] = "";
    if (caustic_scene_create(&s, err, sizeof err)) return fail(err);
    return scene_wrap(s);
}

static PyObject *scene_stats(SceneObject *self, PyObject *noargs) {
    (void)noargs;
    caustic_scene_stats st;
    caustic_scene_stats_get(self->scene, &st);
    return Py_BuildValue(
        "{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:(fff),s:(fff),s:n,s:n,s:i,s:i,s:i,s:d,s:d,s:d,s:n,s:i,s:i,s:i,s:i}",
        "triangles", (Py_ssize_t)st.triangles, "spheres", (Py_ssize_t)st.spheres, "quads", (Py_ssize_t)st.quads,
        "primitives", (Py_ssize_t)st.primitives, "materials", (Py_ssize_t)st.materials, "textures",
        (Py_ssize_t)st.textures, "lights", (Py_ssize_t)st.lights, "vertices", (Py_ssize_t)st.vertices, "bounds_lo",
        st.bounds_lo[0], st.bounds_lo[1], st.bounds_lo[2], "bounds_hi", st.bounds_hi[0], st.bounds_hi[1],
        st.bounds_hi[2], "bvh_nodes", (Py_ssize_t)st.bvh_nodes, "bvh_leaves", (Py_ssize_t)st.bvh_leaves, "bvh_width",
        st.bvh_width, "bvh_max_depth", st.bvh_max_depth, "bvh_max_leaf", st.bvh_max_leaf, "bvh_sah_cost",
        st.bvh_sah_cost, "bvh_wide_sah_cost", st.bvh_wide_sah_cost, "bvh_build_seconds", st.bvh_build_seconds,
        "memory_bytes", (Py_ssize_t)st.memory_bytes, "width", st.width, "height", st.height, "spp", st.spp, "max_depth",
        st.max_depth);
}

static PyObject *camera_to_dict(const caustic_camera *c) {
    PyObject *eye = vec3(c->eye), *at = vec3(c->lookat), *up = vec3(c->up);
    PyObject *d = NULL;
    if (eye && at && up)
        d = Py_BuildValue("{s:O,s:O,s:O,s:d,s:d,s:d}", "eye", eye, "lookat", at, "up", up, "fov_y", c->fov_y,
                          "lens_radius", c->lens_radius, "focus_distance", c->focus_distance);
    Py_XDECREF(eye);
    Py_XDECREF(at);
    Py_XDECREF(up);
    return d;
}

/* Keys of `d` that are given replace those of `c`. */
static int camera_from_dict(PyObject *d, caustic_camera *c) {
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError,
                        "camera: expected a dict (eye, lookat, up, fov_y, lens_radius, focus_distance)");
        return -1;
    }
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &val)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) {
            PyErr_SetString(PyExc_TypeError, "camera: keys must be strings");
            return -1;
        }
        double *dst = NULL;
        if (!strcmp(k, "eye")) {
            if (get_vec3(val, c->eye, "camera eye")) return -1;
        } else if (!strcmp(k, "lookat")) {
            if (get_vec3(val, c->lookat, "camera lookat")) return -1;
        } else if (!strcmp(k, "up")) {
            if (get_vec3(val, c->up, "camera up")) return -1;
        } else if (!strcmp(k, "fov_y"))
            dst = &c->fov_y;
        else if (!strcmp(k, "lens_radius"))
            dst = &c->lens_radius;
        else if (!strcmp(k, "focus_distance"))
            dst = &c->focus_distance;
        else {
            PyErr_Format(PyExc_KeyError,
                         "camera: unknown key '%s' (eye, lookat, up, fov_y, lens_radius, focus_distance)", k);
            return -1;
        }
        if (dst) {
            double v = PyFloat_AsDouble(val);
            if (v == -1.0 && PyErr_Occurred()) return -1;
            *dst = v;
        }
    }
    return 0;
}

static PyObject *scene_get_camera(SceneObject *self, PyObject *noargs) {
    (void)noargs;
    caustic_camera c;
    caustic_scene_get_camera(self->scene, &c);
    return camera_to_dict(&c);
}
static PyObject *scene_set_camera(SceneObject *self, PyObject *d) {
    caustic_camera c;
    caustic_scene_get_camera(self->scene, &c);
    if (camera_from_dict(d, &c)) return NULL;
    char err[ERRLEN] = "";
    if (caustic_scene_set_camera(self->scene, &c, err, sizeof err)) return fail(err);
    Py_RETURN_NONE;
}
static PyObject *scene_orbit(SceneObject *self, PyObject *arg) {
    double deg = PyFloat_AsDouble(arg);
    if (deg == -1.0 && PyErr_Occurred()) return NULL;
    char err[ERRLEN] = "";
    if (caustic_scene_orbit(self->scene, deg, err, sizeof err)) return fail(err);
    Py_RETURN_NONE;
}

static PyObject *scene_add_material(SceneObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"kind",     "color",     "emission", "roughness",      "ior", "metallic", "specular",
                             "exponent", "two_sided", "metal",    "coat_roughness", NULL};
    static const char *const kinds[] = {"diffuse",
                                        "mirror",
                                        "conductor",
                                        "glass",
                                        "emitter",
                                        "phong",
                                        "pbr",
                                        "rough_glass",
                                        "coated",
                                        "thin_dielectric",
                                        "diffuse_transmission",
                                        "interface"};
    _Static_assert(sizeof kinds / sizeof kinds[0] == CAUSTIC_MATERIAL_KIND_COUNT,
                   "python/_caustic.c: one name per caustic_material_kind");
    const char *kind = "diffuse";
    PyObject *color = NULL, *emission = NULL, *specular = NULL;
    caustic_material m;
    caustic_material_init(&m);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sOOfffOfpzf", kwlist, &kind, &color, &emission, &m.roughness, &m.ior,
                                     &m.metallic, &specular, &m.exponent, &m.two_sided, &m.metal, &m.coat_roughness))
        return NULL;
    int k = -1;
    for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++)
        if (!strcmp(kind, kinds[i])) k = i;
    if (k < 0) {
        PyErr_Format(PyExc_ValueError,
                     "material kind '%s': expected diffuse, mirror, conductor, glass, emitter, phong, pbr, "
                     "rough_glass, coated, thin_dielectric, diffuse_transmission or interface",
                     kind);
        return NULL;
    }
    m.kind = (caustic_material_kind)k;
    double v[3];
    if (color && color != Py_None) {
        if (get_vec3(color, v, "material color")) return NULL;
        for (int i = 0; i < 3; i++) m.color[i] = (float)v[i];
    }
    if (emission && emission != Py_None) {
        if (get_vec3(emission, v, "material emission")) return NULL;
        for (int i = 0; i < 3; i++) m.emission[i] = (float)v[i];
    }
    if (specular && specular != Py_None) {
        if (get_vec3(specular, v, "material specular")) return NULL;
        for (int i = 0; i < 3; i++) m.specular[i] = (float)v[i];
    }
    char err[ERRLEN] = "";
    int id = caustic_scene_add_material(self->scene, &m, err, sizeof err);
    if (id < 0) return fail(err);
    return PyLong_FromLong(id);
}

static PyObject *scene_add_sphere(SceneObject *self, PyObject *args) {
    PyObject *c;
    double radius;
    int mat;
    double center[3];
    if (!PyArg_ParseTuple(args, "Odi", &c, &radius, &mat) || get_vec3(c, center, "sphere center")) return NULL;
    char err[ERRLEN] = "";
    int id = caustic_scene_add_sphere(self->scene, center, radius, mat, err, sizeof err);
    if (id < 0) return fail(err);
    return PyLong_FromLong(id);
}

static PyObject *scene_add_quad(SceneObject *self, PyObject *args) {
    PyObject *c, *u, *v;
    int mat;
    double corner[3], du[3], dv[3];
    if (!PyArg_ParseTuple(args, "OOOi", &c, &u, &v, &mat) || get_vec3(c, corner, "quad corner") ||
        get_vec3(u, du, "quad u") || get_vec3(v, dv, "quad v"))
        return NULL;
    char err[ERRLEN] = "";
    int id = caustic_scene_add_quad(self->scene, corner, du, dv, mat, err, sizeof err);
    if (id < 0) return fail(err);
    return PyLong_FromLong(id);
}

/* add_mesh(positions, indices, material, normals=None, uvs=None): float32 xyz, uint32 triples */
static PyObject *scene_add_mesh(SceneObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"positions", "indices", "material", "normals", "uvs", NULL};
    PyObject *po, *io, *no = Py_None, *uo = Py_None;
    int mat;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOi|OO", kwlist, &po, &io, &mat, &no, &uo)) return NULL;
    Py_buffer pb, ib, nb, ub;
    int have_n = no != Py_None, have_u = uo != Py_None;
    if (get_buffer(po, &pb, 4, 'f', 3, "positions")) return NULL;
    if (get_buffer(io, &ib, 4, 'I', 3, "indices")) {
        PyBuffer_Release(&pb);
        return NULL;
    }
    if (have_n && get_buffer(no, &nb, 4, 'f', 3, "normals")) {
        PyBuffer_Release(&pb);
        PyBuffer_Release(&ib);
        return NULL;
    }
    if (have_u && get_buffer(uo, &ub, 4, 'f', 2, "uvs")) {
        PyBuffer_Release(&pb);
        PyBuffer_Release(&ib);
        if (have_n) PyBuffer_Release(&nb);
        return NULL;
    }
    size_t nv = (size_t)pb.len / 12u, nt = (size_t)ib.len / 12u;
    char err[ERRLEN] = "";
    int id = -1;
    if (have_n && (size_t)nb.len / 12u != nv)
        PyErr_Format(PyExc_ValueError, "add_mesh: %zu normals for %zu vertices", (size_t)nb.len / 12u, nv);
    else if (have_u && (size_t)ub.len / 8u != nv)
        PyErr_Format(PyExc_ValueError, "add_mesh: %zu uvs for %zu vertices", (size_t)ub.len / 8u, nv);
    else {
        Py_BEGIN_ALLOW_THREADS id = caustic_scene_add_mesh(
            self->scene, pb.buf, have_n ? nb.buf : NULL, have_u ? ub.buf : NULL, nv, ib.buf, nt, mat, err, sizeof err);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&pb);
    PyBuffer_Release(&ib);
    if (have_n) PyBuffer_Release(&nb);
    if (have_u) PyBuffer_Release(&ub);
    if (id < 0) return fail(err);
    return PyLong_FromLong(id);
}

static PyObject *scene_add_point_light(SceneObject *self, PyObject *args) {
    PyObject *p, *i;
    double pos[3], inten[3];
    if (!PyArg_ParseTuple(args, "OO", &p, &i) || get_vec3(p, pos, "light position") ||
        get_vec3(i, inten, "light intensity"))
        return NULL;
    char err[ERRLEN] = "";
    int id = caustic_scene_add_point_light(self->scene, pos, inten, err, sizeof err);
    if (id < 0) return fail(err);
    return PyLong_FromLong(id);
}

static PyObject *scene_set_environment(SceneObject *self, PyObject *arg) {
    double rgb[3];
    if (get_vec3(arg, rgb, "environment radiance")) return NULL;
    char err[ERRLEN] = "";
    if (caustic_scene_set_environment(self->scene, rgb, err, sizeof err)) return fail(err);
    Py_RETURN_NONE;
}

static PyObject *scene_set_render_defaults(SceneObject *self, PyObject *args) {
    int w, h, spp, depth;
    if (!PyArg_ParseTuple(args, "iiii", &w, &h, &spp, &depth)) return NULL;
    char err[ERRLEN] = "";
    if (caustic_scene_set_render_defaults(self->scene, w, h, spp, depth, err, sizeof err)) return fail(err);
    Py_RETURN_NONE;
}

static PyMethodDef scene_methods[] = {
    {"stats", (PyCFunction)scene_stats, METH_NOARGS, "stats() -> dict: counts, bounds, BVH, memory, settings."},
    {"get_camera", (PyCFunction)scene_get_camera, METH_NOARGS, "get_camera() -> dict"},
    {"set_camera", (PyCFunction)scene_set_camera, METH_O, "set_camera(dict): keys given replace the camera's."},
    {"orbit", (PyCFunction)scene_orbit, METH_O, "orbit(degrees): turn the camera about its look-at point."},
    {"add_material", (PyCFunction)(void (*)(void))scene_add_material, METH_VARARGS | METH_KEYWORDS,
     "add_material(kind='diffuse', color, emission, roughness, ior, metallic, specular, exponent, two_sided) -> int"},
    {"add_sphere", (PyCFunction)scene_add_sphere, METH_VARARGS, "add_sphere(center, radius, material) -> int"},
    {"add_quad", (PyCFunction)scene_add_quad, METH_VARARGS, "add_quad(corner, u, v, material) -> int"},
    {"add_mesh", (PyCFunction)(void (*)(void))scene_add_mesh, METH_VARARGS | METH_KEYWORDS,
     "add_mesh(positions, indices, material, normals=None, uvs=None) -> int (float32 / uint32 buffers)"},
    {"add_point_light", (PyCFunction)scene_add_point_light, METH_VARARGS,
     "add_point_light(position, intensity) -> int"},
    {"set_environment", (PyCFunction)scene_set_environment, METH_O, "set_environment(rgb): a constant sky."},
    {"set_render_defaults", (PyCFunction)scene_set_render_defaults, METH_VARARGS,
     "set_render_defaults(width, height, spp, max_depth)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject SceneType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "caustic._caustic.Scene",
    .tp_basicsize = sizeof(SceneObject),
    .tp_dealloc = (destructor)scene_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A caustic scene (the low-level handle; see caustic.Scene).",
    .tp_methods = scene_methods,
};

/* ================================ Renderer ===================================================== */
typedef struct {
    PyObject_HEAD caustic_renderer *r;
    PyObject *scene; /* keeps the SceneObject alive */
    int busy;
    atomic_int stop; /* cancel(): stop after the pass under way */
} RendererObject;
static PyTypeObject RendererType;

static void renderer_dealloc(RendererObject *self) {
    if (self->r) caustic_renderer_free(self->r);
    Py_XDECREF(self->scene);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* An enum-valued option given by name. */
static int opt_enum(PyObject *v, const char *key, int (*parse)(const char *, int *), int *out, const char *choices) {
    const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (!s || parse(s, out)) {
        PyErr_Format(PyExc_ValueError, "option %s: expected one of %s", key, choices);
        return -1;
    }
    return 0;
}
#define ENUM_PARSER(name, type, fn)                                                                                    \
    static int name(const char *s, int *out) {                                                                         \
        type t;                                                                                                        \
        if (fn(s, &t)) return -1;                                                                                      \
        *out = (int)t;                                                                                                 \
        return 0;                                                                                                      \
    }
ENUM_PARSER(p_schedule, caustic_schedule, caustic_parse_schedule)
ENUM_PARSER(p_sampler, caustic_sampler, caustic_parse_sampler)
ENUM_PARSER(p_integrator, caustic_integrator, caustic_parse_integrator)
ENUM_PARSER(p_gpu_mode, caustic_gpu_mode, caustic_parse_gpu_mode)
ENUM_PARSER(p_gpu_bvh, caustic_gpu_bvh, caustic_parse_gpu_bvh)

static int opt_int(PyObject *v, const char *key, int *out) {
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "option %s: expected an integer", key);
        return -1;
    }
    if (x < INT32_MIN || x > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "option %s: %ld is out of range", key, x);
        return -1;
    }
    *out = (int)x;
    return 0;
}
static int opt_float(PyObject *v, const char *key, double *out) {
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "option %s: expected a number", key);
        return -1;
    }
    *out = x;
    return 0;
}

#define OPTION_KEYS                                                                                                    \
    "width, height, spp, time_limit, threads, seed, max_depth, schedule, sampler, device, clamp, adaptive, "           \
    "adaptive_min_spp, integrator, merge_radius, merge_alpha, merge_everywhere, gpu_mode, gpu_bvh, adaptive_depth, "   \
    "aovs"

static int options_from_dict(PyObject *d, caustic_options *o) {
    caustic_options_init(o);
    if (!d || d == Py_None) return 0;
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &v)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) return -1;
        double f;
        int e, rc = 0;
        if (!strcmp(k, "width"))
            rc = opt_int(v, k, &o->width);
        else if (!strcmp(k, "height"))
            rc = opt_int(v, k, &o->height);
        else if (!strcmp(k, "spp"))
            rc = opt_int(v, k, &o->spp);
        else if (!strcmp(k, "threads"))
            rc = opt_int(v, k, &o->threads);
        else if (!strcmp(k, "max_depth"))
            rc = opt_int(v, k, &o->max_depth);
        else if (!strcmp(k, "adaptive_min_spp"))
            rc = opt_int(v, k, &o->adaptive_min_spp);
        else if (!strcmp(k, "merge_everywhere"))
            o->merge_everywhere = PyObject_IsTrue(v), rc = o->merge_everywhere < 0;
        else if (!strcmp(k, "adaptive_depth"))
            o->adaptive_depth = PyObject_IsTrue(v), rc = o->adaptive_depth < 0;
        else if (!strcmp(k, "seed")) {
            unsigned long long s = PyLong_AsUnsignedLongLong(v);
            if (PyErr_Occurred() || s > UINT32_MAX) {
                PyErr_Clear();
                PyErr_SetString(PyExc_ValueError, "option seed: expected an integer in [0, 2^32)");
                return -1;
            }
            o->seed = (uint32_t)s;
        } else if (!strcmp(k, "time_limit")) {
            if (!(rc = opt_float(v, k, &f))) o->time_limit = f;
        } else if (!strcmp(k, "clamp")) {
            if (!(rc = opt_float(v, k, &f))) o->clamp = (float)f;
        } else if (!strcmp(k, "adaptive")) {
            if (!(rc = opt_float(v, k, &f))) o->adaptive = (float)f;
        } else if (!strcmp(k, "merge_radius")) {
            if (!(rc = opt_float(v, k, &f))) o->merge_radius = (float)f;
        } else if (!strcmp(k, "merge_alpha")) {
            if (!(rc = opt_float(v, k, &f))) o->merge_alpha = (float)f;
        } else if (!strcmp(k, "schedule")) {
            if (!(rc = opt_enum(v, k, p_schedule, &e, "tiles, rows, rows-static, pixels"))) o->schedule = e;
        } else if (!strcmp(k, "sampler")) {
            if (!(rc = opt_enum(v, k, p_sampler, &e, "random, stratified, sobol"))) o->sampler = e;
        } else if (!strcmp(k, "integrator")) {
            if (!(rc = opt_enum(v, k, p_integrator, &e, "pt, lt, bdpt, ppm, bpm, vcm"))) o->integrator = e;
        } else if (!strcmp(k, "gpu_mode")) {
            if (!(rc = opt_enum(v, k, p_gpu_mode, &e, "mega, wavefront"))) o->gpu_mode = e;
        } else if (!strcmp(k, "gpu_bvh")) {
            if (!(rc = opt_enum(v, k, p_gpu_bvh, &e, "sah, lbvh, cwbvh"))) o->gpu_bvh = e;
        } else if (!strcmp(k, "device")) {
            const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
            if (!s || caustic_options_set_device(o, s)) {
                PyErr_SetString(PyExc_ValueError, "option device: expected auto, cpu, cuda or cuda:I,J,...");
                return -1;
            }
        } else if (!strcmp(k, "aovs")) {
            const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
            if (!s || caustic_parse_aovs(s, &o->aovs)) {
                PyErr_SetString(
                    PyExc_ValueError,
                    "option aovs: expected comma-separated names of albedo, normal, depth, samples, variance");
                return -1;
            }
        } else {
            PyErr_Format(PyExc_TypeError, "unknown option '%s' (options: " OPTION_KEYS ")", k);
            return -1;
        }
        if (rc) return -1;
    }
    return 0;
}

static PyObject *renderer_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"scene", "options", NULL};
    PyObject *scene, *opts = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O", kwlist, &SceneType, &scene, &opts)) return NULL;
    if (opts != Py_None && !PyDict_Check(opts)) {
        PyErr_SetString(PyExc_TypeError, "options: expected a dict");
        return NULL;
    }
    caustic_options o;
    if (options_from_dict(opts, &o)) return NULL;
    char err[ERRLEN] = "";
    caustic_renderer *r;
    caustic_scene *cs = ((SceneObject *)scene)->scene;
    Py_BEGIN_ALLOW_THREADS r = caustic_renderer_create(cs, &o, err, sizeof err);
    Py_END_ALLOW_THREADS if (flush_log() < 0) {
        if (r) caustic_renderer_free(r);
        return NULL;
    }
    if (!r) return fail(err);
    RendererObject *self = (RendererObject *)type->tp_alloc(type, 0);
    if (!self) {
        caustic_renderer_free(r);
        return NULL;
    }
    self->r = r;
    atomic_init(&self->stop, 0);
    Py_INCREF(scene);
    self->scene = scene;
    return (PyObject *)self;
}

static int enter(RendererObject *self) {
    if (self->busy) {
        PyErr_SetString(CausticError, "this renderer is busy in another thread (one call at a time)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

typedef struct {
    PyObject *callback; /* Py_None: none */
    RendererObject *self;
    int failed; /* the callback raised */
} progress_ctx;

/* After each pass of caustic_render: stop for Ctrl-C or cancel(), else ask the Python callback. */
static int on_progress(void *user, const caustic_progress *p) {
    progress_ctx *ctx = user;
    if (g_sig_hit || atomic_load(&ctx->self->stop)) return 1;
    if (ctx->callback == Py_None) return 0;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    PyObject *res = PyObject_CallFunction(ctx->callback, "(iidddd)", p->spp_done, p->spp_target, p->elapsed,
                                          p->time_limit, p->fraction, p->samples_per_second);
    if (!res) {
        ctx->failed = 1;
        stop = 1;
    } else {
        stop = PyObject_IsTrue(res) == 1;
        Py_DECREF(res);
    }
    PyGILState_Release(g);
    return stop;
}

/* After a render call: KeyboardInterrupt if Ctrl-C stopped it, the callback's exception, the
 * library's message, else None. */
static PyObject *render_result(int rc, int interrupted, int cb_failed, const char *err) {
    if (cb_failed) { PyErr_Clear(); /* keep the callback's own: fetched again below */ }
    if (flush_log() < 0) return NULL;
    if (interrupted) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        return NULL;
    }
    if (rc) return fail(err);
    Py_RETURN_NONE;
}

/* render(progress=None): to the spp target or time limit; progress(spp_done, spp_target,
 * elapsed, time_limit, fraction, samples_per_second) after each pass, True stops. */
static PyObject *renderer_render(RendererObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"progress", NULL};
    PyObject *cb = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &cb)) return NULL;
    if (cb != Py_None && !PyCallable_Check(cb)) {
        PyErr_SetString(PyExc_TypeError, "progress: expected a callable or None");
        return NULL;
    }
    if (enter(self)) return NULL;
    progress_ctx ctx = {cb, self, 0};
    char err[ERRLEN] = "";
    int rc;
    sigint_guard sg;
    atomic_store(&self->stop, 0);
    sigint_begin(&sg);
    Py_BEGIN_ALLOW_THREADS rc = caustic_render(self->r, on_progress, &ctx, err, sizeof err);
    Py_END_ALLOW_THREADS int hit = sigint_end(&sg);
    self->busy = 0;
    if (ctx.failed) {
        /* the callback's exception is set: report it (Ctrl-C inside the callback included) */
        if (flush_log() < 0) return NULL;
        return NULL;
    }
    return render_result(rc, hit, 0, err);
}

/* passes(passes=1, spp=1) -> samples per pixel added (0 once the target is reached) */
static PyObject *renderer_passes(RendererObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"passes", "spp", NULL};
    int passes = 1, spp = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|ii", kwlist, &passes, &spp)) return NULL;
    if (enter(self)) return NULL;
    char err[ERRLEN] = "";
    int added = 0;
    sigint_guard sg;
    atomic_store(&self->stop, 0);
    sigint_begin(&sg);
    /* one pass at a time: Ctrl-C and cancel() are seen between them */
    Py_BEGIN_ALLOW_THREADS for (int i = 0; i < passes && !g_sig_hit && !atomic_load(&self->stop); i++) {
        int k = caustic_render_passes(self->r, 1, spp, err, sizeof err);
        if (k < 0) {
            added = -1;
            break;
        }
        if (k == 0) break;
        added += k;
    }
    Py_END_ALLOW_THREADS int hit = sigint_end(&sg);
    self->busy = 0;
    PyObject *res = render_result(added < 0, hit, 0, err);
    if (!res) return NULL;
    Py_DECREF(res);
    return PyLong_FromLong(added);
}

static PyObject *renderer_cancel(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    atomic_store(&self->stop, 1);
    Py_RETURN_NONE;
}

static PyObject *float_bytes(const float *src, size_t n) {
    PyObject *b = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(float)));
    if (b) memcpy(PyByteArray_AS_STRING(b), src, n * sizeof(float));
    return b;
}

/* image() -> (bytearray of float32, height, width, 3) */
static PyObject *renderer_image(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    if (enter(self)) return NULL;
    int w = 0, h = 0;
    const float *px;
    Py_BEGIN_ALLOW_THREADS px = caustic_image(self->r, &w, &h);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (flush_log() < 0) return NULL;
    PyObject *b = float_bytes(px, (size_t)w * (size_t)h * 3u);
    if (!b) return NULL;
    return Py_BuildValue("(Niii)", b, h, w, 3);
}

static PyObject *renderer_aov(RendererObject *self, PyObject *arg) {
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    unsigned mask = 0;
    if (!name || caustic_parse_aovs(name, &mask) || (mask & (mask - 1u))) {
        PyErr_SetString(PyExc_ValueError, "aov: expected one of albedo, normal, depth, samples, variance");
        return NULL;
    }
    caustic_aov a = CAUSTIC_AOV_ALBEDO;
    while (!(mask & CAUSTIC_AOV_MASK(a))) a = (caustic_aov)(a + 1);
    if (enter(self)) return NULL;
    int ch = 0, w = 0, h = 0;
    const float *px;
    Py_BEGIN_ALLOW_THREADS px = caustic_aov_image(self->r, a, &ch);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (flush_log() < 0) return NULL;
    if (!px) {
        PyErr_Format(CausticError, "AOV '%s' was not asked for: create the renderer with aovs='%s'", name, name);
        return NULL;
    }
    caustic_render_stats st;
    caustic_render_stats_get(self->r, &st);
    w = st.width;
    h = st.height;
    PyObject *b = float_bytes(px, (size_t)w * (size_t)h * (size_t)ch);
    if (!b) return NULL;
    return Py_BuildValue("(Niii)", b, h, w, ch);
}

static PyObject *renderer_sample_counts(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    if (enter(self)) return NULL;
    int w = 0, h = 0;
    const uint32_t *c;
    Py_BEGIN_ALLOW_THREADS c = caustic_sample_counts(self->r, &w, &h);
    Py_END_ALLOW_THREADS self->busy = 0;
    PyObject *b = PyByteArray_FromStringAndSize((const char *)c, (Py_ssize_t)w * h * 4);
    if (!b) return NULL;
    return Py_BuildValue("(Nii)", b, h, w);
}

static PyObject *renderer_stats(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    caustic_render_stats st;
    caustic_render_stats_get(self->r, &st);
    return Py_BuildValue("{s:d,s:i,s:K,s:K,s:K,s:K,s:i,s:i,s:i,s:s,s:z}", "seconds", st.seconds, "spp", st.spp,
                         "samples", (unsigned long long)st.samples, "rays", (unsigned long long)st.rays, "bad_samples",
                         (unsigned long long)st.bad_samples, "shadow_rays", (unsigned long long)st.shadow_rays,
                         "threads", st.threads, "width", st.width, "height", st.height, "device",
                         st.device ? st.device : "?", "kernel", st.kernel);
}

static PyObject *renderer_spp(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    return PyLong_FromLong(caustic_renderer_spp(self->r));
}

static PyObject *renderer_get_camera(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    caustic_camera c;
    caustic_renderer_get_camera(self->r, &c);
    return camera_to_dict(&c);
}
static PyObject *renderer_set_camera(RendererObject *self, PyObject *d) {
    caustic_camera c;
    caustic_renderer_get_camera(self->r, &c);
    if (camera_from_dict(d, &c) || enter(self)) return NULL;
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_renderer_set_camera(self->r, &c, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (rc) return fail(err);
    Py_RETURN_NONE;
}
static PyObject *renderer_set_resolution(RendererObject *self, PyObject *args) {
    int w, h;
    if (!PyArg_ParseTuple(args, "ii", &w, &h) || enter(self)) return NULL;
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_renderer_set_resolution(self->r, w, h, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (rc) return fail(err);
    Py_RETURN_NONE;
}
static PyObject *renderer_reset(RendererObject *self, PyObject *noargs) {
    (void)noargs;
    if (enter(self)) return NULL;
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_renderer_reset(self->r, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (rc) return fail(err);
    Py_RETURN_NONE;
}
static PyObject *renderer_pick_depth(RendererObject *self, PyObject *args) {
    int x, y;
    double d = 0;
    if (!PyArg_ParseTuple(args, "ii", &x, &y) || enter(self)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_renderer_pick_depth(self->r, x, y, &d);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (rc) Py_RETURN_NONE;
    return PyFloat_FromDouble(d);
}

/* save(path, tonemap=None, exposure=0.0, aovs=None): the image through a look (8-bit formats);
 * aovs: a comma list written beside a .png/.pfm (an .exr holds every computed AOV as layers) */
static PyObject *renderer_save(RendererObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "tonemap", "exposure", "aovs", NULL};
    PyObject *path_obj;
    const char *tm = NULL, *aovs = NULL;
    double ev = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|zdz", kwlist, PyUnicode_FSConverter, &path_obj, &tm, &ev, &aovs))
        return NULL;
    caustic_look look;
    unsigned mask = 0;
    if (parse_look(tm, ev, &look) ||
        (aovs && caustic_parse_aovs(aovs, &mask) && (PyErr_SetString(PyExc_ValueError, "aovs: unknown AOV name"), 1))) {
        Py_DECREF(path_obj);
        return NULL;
    }
    if (enter(self)) {
        Py_DECREF(path_obj);
        return NULL;
    }
    char err[ERRLEN] = "";
    int rc;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS rc = caustic_save_image_look(self->r, path, &look, err, sizeof err);
    if (!rc && mask) rc = caustic_save_aovs(self->r, path, mask, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    Py_DECREF(path_obj);
    if (flush_log() < 0) return NULL;
    if (rc) return fail(err);
    Py_RETURN_NONE;
}

/* rgb8(tonemap=None, exposure=0.0) -> (bytes, height, width): sRGB through the look (on the GPU there) */
static PyObject *renderer_rgb8(RendererObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"tonemap", "exposure", NULL};
    const char *tm = NULL;
    double ev = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zd", kwlist, &tm, &ev)) return NULL;
    caustic_look look;
    if (parse_look(tm, ev, &look) || enter(self)) return NULL;
    caustic_render_stats st;
    caustic_render_stats_get(self->r, &st);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)st.width * st.height * 3);
    if (!b) {
        self->busy = 0;
        return NULL;
    }
    char err[ERRLEN] = "";
    int rc;
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(b);
    Py_BEGIN_ALLOW_THREADS rc = caustic_image_rgb8(self->r, &look, dst, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (rc) {
        Py_DECREF(b);
        return fail(err);
    }
    return Py_BuildValue("(Nii)", b, st.height, st.width);
}

static PyObject *renderer_checkpoint(RendererObject *self, PyObject *args, int load) {
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj)) return NULL;
    if (enter(self)) {
        Py_DECREF(path_obj);
        return NULL;
    }
    char err[ERRLEN] = "";
    int rc;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS rc = load ? caustic_checkpoint_load(self->r, path, err, sizeof err)
                                     : caustic_checkpoint_save(self->r, path, err, sizeof err);
    Py_END_ALLOW_THREADS self->busy = 0;
    Py_DECREF(path_obj);
    if (rc) return fail(err);
    Py_RETURN_NONE;
}
static PyObject *renderer_save_checkpoint(RendererObject *self, PyObject *args) {
    return renderer_checkpoint(self, args, 0);
}
static PyObject *renderer_load_checkpoint(RendererObject *self, PyObject *args) {
    return renderer_checkpoint(self, args, 1);
}

static PyMethodDef renderer_methods[] = {
    {"render", (PyCFunction)(void (*)(void))renderer_render, METH_VARARGS | METH_KEYWORDS,
     "render(progress=None): to the spp target or time limit (GIL released; Ctrl-C: KeyboardInterrupt after the "
     "pass)."},
    {"passes", (PyCFunction)(void (*)(void))renderer_passes, METH_VARARGS | METH_KEYWORDS,
     "passes(passes=1, spp=1) -> spp added."},
    {"cancel", (PyCFunction)renderer_cancel, METH_NOARGS,
     "cancel(): a render running in another thread stops after its pass under way."},
    {"image", (PyCFunction)renderer_image, METH_NOARGS, "image() -> (bytearray float32, h, w, 3): a copy."},
    {"aov", (PyCFunction)renderer_aov, METH_O, "aov(name) -> (bytearray float32, h, w, channels): a copy."},
    {"sample_counts", (PyCFunction)renderer_sample_counts, METH_NOARGS, "sample_counts() -> (bytearray uint32, h, w)"},
    {"stats", (PyCFunction)renderer_stats, METH_NOARGS, "stats() -> dict"},
    {"spp", (PyCFunction)renderer_spp, METH_NOARGS, "spp() -> samples per pixel taken"},
    {"get_camera", (PyCFunction)renderer_get_camera, METH_NOARGS, "get_camera() -> dict"},
    {"set_camera", (PyCFunction)renderer_set_camera, METH_O, "set_camera(dict): restarts the accumulation."},
    {"set_resolution", (PyCFunction)renderer_set_resolution, METH_VARARGS, "set_resolution(width, height)"},
    {"reset", (PyCFunction)renderer_reset, METH_NOARGS, "reset(): drop the samples taken."},
    {"pick_depth", (PyCFunction)renderer_pick_depth, METH_VARARGS, "pick_depth(x, y) -> float or None"},
    {"save", (PyCFunction)(void (*)(void))renderer_save, METH_VARARGS | METH_KEYWORDS,
     "save(path, tonemap=None, exposure=0.0, aovs=None)"},
    {"rgb8", (PyCFunction)(void (*)(void))renderer_rgb8, METH_VARARGS | METH_KEYWORDS,
     "rgb8(tonemap=None, exposure=0.0) -> (bytes, h, w)"},
    {"save_checkpoint", (PyCFunction)renderer_save_checkpoint, METH_VARARGS, "save_checkpoint(path)"},
    {"load_checkpoint", (PyCFunction)renderer_load_checkpoint, METH_VARARGS, "load_checkpoint(path)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RendererType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "caustic._caustic.Renderer",
    .tp_basicsize = sizeof(RendererObject),
    .tp_dealloc = (destructor)renderer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Renderer(scene, options=None): the low-level handle (see caustic.Renderer).",
    .tp_methods = renderer_methods,
    .tp_new = renderer_new,
};

/* ================================ images on their own ========================================== */
/* an (h, w, 3) float32 buffer */
static int get_rgb(PyObject *o, Py_buffer *b, int w, int h, const char *what) {
    if (get_buffer(o, b, 4, 'f', 3, what)) return -1;
    if (w <= 0 || h <= 0 || b->len != (Py_ssize_t)w * h * 12) {
        PyErr_Format(PyExc_ValueError, "%s: %zd floats is not %d x %d x 3", what, b->len / 4, h, w);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

static PyObject *mod_image_load(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj)) return NULL;
    caustic_rgb_image img = {0, 0, NULL};
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_image_load(&img, PyBytes_AS_STRING(path_obj), err, sizeof err);
    Py_END_ALLOW_THREADS Py_DECREF(path_obj);
    if (rc) return fail(err);
    PyObject *b = float_bytes(img.rgb, (size_t)img.width * img.height * 3u);
    int w = img.width, h = img.height;
    caustic_image_free(&img);
    if (!b) return NULL;
    return Py_BuildValue("(Niii)", b, h, w, 3);
}

/* image_save(rgb, width, height, path, tonemap=None, exposure=0.0, exr_float=False) */
static PyObject *mod_image_save(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"rgb", "width", "height", "path", "tonemap", "exposure", "exr_float", NULL};
    PyObject *o, *path_obj;
    int w, h, exr_float = 0;
    const char *tm = NULL;
    double ev = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiiO&|zdp", kwlist, &o, &w, &h, PyUnicode_FSConverter, &path_obj, &tm,
                                     &ev, &exr_float))
        return NULL;
    caustic_look look;
    Py_buffer b;
    if (parse_look(tm, ev, &look) || get_rgb(o, &b, w, h, "image")) {
        Py_DECREF(path_obj);
        return NULL;
    }
    caustic_rgb_image img = {w, h, b.buf};
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc =
        caustic_image_save(&img, PyBytes_AS_STRING(path_obj), &look, exr_float, err, sizeof err);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    Py_DECREF(path_obj);
    if (rc) return fail(err);
    Py_RETURN_NONE;
}

/* tonemap(rgb, width, height, tonemap=None, exposure=0.0) -> bytes (h*w*3 sRGB) */
static PyObject *mod_tonemap(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"rgb", "width", "height", "tonemap", "exposure", NULL};
    PyObject *o;
    int w, h;
    const char *tm = NULL;
    double ev = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oii|zd", kwlist, &o, &w, &h, &tm, &ev)) return NULL;
    caustic_look look;
    Py_buffer b;
    if (parse_look(tm, ev, &look) || get_rgb(o, &b, w, h, "image")) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)w * h * 3);
    if (out) {
        unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS caustic_tonemap_rgb8(&look, b.buf, (size_t)w * h, dst);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b);
    return out;
}

/* compare(a, b, width, height) -> dict(ae, rmse, psnr, ssim) */
static PyObject *mod_compare(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ao, *bo;
    int w, h;
    if (!PyArg_ParseTuple(args, "OOii", &ao, &bo, &w, &h)) return NULL;
    Py_buffer ab, bb;
    if (get_rgb(ao, &ab, w, h, "first image")) return NULL;
    if (get_rgb(bo, &bb, w, h, "second image")) {
        PyBuffer_Release(&ab);
        return NULL;
    }
    caustic_rgb_image a = {w, h, ab.buf}, b = {w, h, bb.buf};
    caustic_image_metrics m;
    char err[ERRLEN] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = caustic_image_compare(&a, &b, &m, err, sizeof err);
    Py_END_ALLOW_THREADS PyBuffer_Release(&ab);
    PyBuffer_Release(&bb);
    if (rc) return fail(err);
    return Py_BuildValue("{s:d,s:d,s:d,s:d}", "ae", m.ae, "rmse", m.rmse, "psnr", m.psnr, "ssim", m.ssim);
}

/* denoise(color, width, height, albedo=None, normal=None, device='auto') -> bytearray float32 */
static PyObject *mod_denoise(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"color", "width", "height", "albedo", "normal", "device", NULL};
    PyObject *co, *ao = Py_None, *no = Py_None;
    int w, h;
    const char *dev = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oii|OOs", kwlist, &co, &w, &h, &ao, &no, &dev)) return NULL;
    caustic_denoise_device d;
    if (!strcmp(dev, "auto"))
        d = CAUSTIC_DENOISE_AUTO;
    else if (!strcmp(dev, "cpu"))
        d = CAUSTIC_DENOISE_CPU;
    else if (!strcmp(dev, "cuda"))
        d = CAUSTIC_DENOISE_CUDA;
    else {
        PyErr_SetString(PyExc_ValueError, "denoise device: expected auto, cpu or cuda");
        return NULL;
    }
    if (no != Py_None && ao == Py_None) {
        PyErr_SetString(PyExc_ValueError, "denoise: a normal guide needs an albedo guide too");
        return NULL;
    }
    Py_buffer cb, ab, nb;
    if (get_rgb(co, &cb, w, h, "color")) return NULL;
    if (ao != Py_None && get_rgb(ao, &ab, w, h, "albedo")) {
        PyBuffer_Release(&cb);
        return NULL;
    }
    if (no != Py_None && get_rgb(no, &nb, w, h, "normal")) {
        PyBuffer_Release(&cb);
        PyBuffer_Release(&ab);
        return NULL;
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)w * h * 12);
    char err[ERRLEN] = "";
    int rc = -1;
    if (out) {
        float *dst = (float *)PyByteArray_AS_STRING(out);
        const float *alb = ao != Py_None ? ab.buf : NULL, *nrm = no != Py_None ? nb.buf : NULL;
        Py_BEGIN_ALLOW_THREADS caustic_denoiser *dn = caustic_denoiser_create_on(d, err, sizeof err);
        if (dn) {
            rc = caustic_denoise(dn, cb.buf, alb, nrm, w, h, dst, err, sizeof err);
            caustic_denoiser_free(dn);
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&cb);
    if (ao != Py_None) PyBuffer_Release(&ab);
    if (no != Py_None) PyBuffer_Release(&nb);
    if (!out) return NULL;
    if (flush_log() < 0 || rc) {
        Py_DECREF(out);
        return PyErr_Occurred() ? NULL : fail(err);
    }
    return out;
}

static PyObject *mod_denoise_available(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    char err[ERRLEN] = "";
    if (caustic_denoise_load(err, sizeof err)) return Py_BuildValue("(Os)", Py_False, err);
    return Py_BuildValue("(Os)", Py_True, "");
}

static PyObject *mod_version(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyUnicode_FromString(caustic_version());
}

static PyObject *mod_builtin_scenes(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    PyObject *l = PyList_New(0);
    for (const char *const *n = caustic_builtin_scenes(); l && *n; n++) {
        PyObject *s = PyUnicode_FromString(*n);
        if (!s || PyList_Append(l, s)) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    return l;
}

static PyObject *mod_devices(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    char buf[4096] = "";
    Py_BEGIN_ALLOW_THREADS caustic_describe_devices(buf, sizeof buf);
    Py_END_ALLOW_THREADS return PyUnicode_FromString(buf);
}

static PyObject *mod_cpu_isa(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    char err[ERRLEN] = "";
    const char *isa = caustic_cpu_isa(err, sizeof err);
    if (!isa) return fail(err);
    return PyUnicode_FromString(isa);
}

static PyMethodDef module_methods[] = {
    {"load_scene", (PyCFunction)(void (*)(void))mod_load_scene, METH_VARARGS | METH_KEYWORDS,
     "load_scene(path_or_name, strict=False, dump_scene=None) -> Scene"},
    {"new_scene", (PyCFunction)mod_new_scene, METH_NOARGS, "new_scene() -> Scene (empty)"},
    {"image_load", (PyCFunction)mod_image_load, METH_VARARGS, "image_load(path) -> (bytearray float32, h, w, 3)"},
    {"image_save", (PyCFunction)(void (*)(void))mod_image_save, METH_VARARGS | METH_KEYWORDS,
     "image_save(rgb, width, height, path, tonemap=None, exposure=0.0, exr_float=False)"},
    {"tonemap", (PyCFunction)(void (*)(void))mod_tonemap, METH_VARARGS | METH_KEYWORDS,
     "tonemap(rgb, width, height, tonemap=None, exposure=0.0) -> bytes"},
    {"compare", (PyCFunction)mod_compare, METH_VARARGS, "compare(a, b, width, height) -> dict"},
    {"denoise", (PyCFunction)(void (*)(void))mod_denoise, METH_VARARGS | METH_KEYWORDS,
     "denoise(color, width, height, albedo=None, normal=None, device='auto') -> bytearray float32"},
    {"denoise_available", (PyCFunction)mod_denoise_available, METH_NOARGS, "denoise_available() -> (bool, why)"},
    {"version", (PyCFunction)mod_version, METH_NOARGS, "version() -> str"},
    {"builtin_scenes", (PyCFunction)mod_builtin_scenes, METH_NOARGS, "builtin_scenes() -> list of str"},
    {"devices", (PyCFunction)mod_devices, METH_NOARGS, "devices() -> str: one line per CUDA device (or why none)"},
    {"cpu_isa", (PyCFunction)mod_cpu_isa, METH_NOARGS, "cpu_isa() -> str: the CPU kernels' ISA level"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef caustic_module = {PyModuleDef_HEAD_INIT,
                                            "caustic._caustic",
                                            "caustic's C API (low level; use the caustic package).",
                                            -1,
                                            module_methods,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL};

PyMODINIT_FUNC PyInit__caustic(void) {
    if (PyType_Ready(&SceneType) < 0 || PyType_Ready(&RendererType) < 0) return NULL;
    PyObject *m = PyModule_Create(&caustic_module);
    if (!m) return NULL;
    CausticError = PyErr_NewExceptionWithDoc("caustic.Error", "A caustic failure; the message is caustic's own.",
                                             PyExc_RuntimeError, NULL);
    CausticWarning = PyErr_NewExceptionWithDoc("caustic.CausticWarning", "A warning of caustic's (a log line).",
                                               PyExc_UserWarning, NULL);
    if (!CausticError || !CausticWarning || PyModule_AddObjectRef(m, "Error", CausticError) < 0 ||
        PyModule_AddObjectRef(m, "CausticWarning", CausticWarning) < 0 ||
        PyModule_AddObjectRef(m, "Scene", (PyObject *)&SceneType) < 0 ||
        PyModule_AddObjectRef(m, "Renderer", (PyObject *)&RendererType) < 0 ||
        PyModule_AddIntConstant(m, "OPTIONS_SIZE", (long)sizeof(caustic_options)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
    g_main_thread = ident ? PyLong_AsUnsignedLong(ident) : 0;
    Py_XDECREF(ident);
    Py_XDECREF(main);
    Py_XDECREF(threading);
    if (PyErr_Occurred()) {
        Py_DECREF(m);
        return NULL;
    }
    caustic_set_log(on_log, NULL);
    return m;
}
