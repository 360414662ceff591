/* OIDN through its C API, loaded with dlopen. The few types and functions used are declared
 * here from OIDN's documented API (version 2): the library ships without headers in pyoidn. */
#define _POSIX_C_SOURCE 200809L

#include "image/denoise.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

/* ---- the part of OIDN's API that caustic uses ------------------------------------------------ */
typedef struct OIDNDeviceImpl *OIDNDevice;
typedef struct OIDNFilterImpl *OIDNFilter;
typedef struct OIDNBufferImpl *OIDNBuffer;
typedef enum {
    OIDN_DEVICE_TYPE_DEFAULT = 0,
    OIDN_DEVICE_TYPE_CPU = 1,
    OIDN_DEVICE_TYPE_SYCL = 2,
    OIDN_DEVICE_TYPE_CUDA = 3,
    OIDN_DEVICE_TYPE_HIP = 4,
    OIDN_DEVICE_TYPE_METAL = 5
} OIDNDeviceType;
typedef enum { OIDN_ERROR_NONE = 0 } OIDNError;
typedef enum { OIDN_FORMAT_FLOAT3 = 3 } OIDNFormat;

#define OIDN_FUNCTIONS(X)                                                                                              \
    X(OIDNDevice, oidnNewDevice, (OIDNDeviceType type))                                                                \
    X(void, oidnCommitDevice, (OIDNDevice device))                                                                     \
    X(void, oidnReleaseDevice, (OIDNDevice device))                                                                    \
    X(int, oidnGetDeviceInt, (OIDNDevice device, const char *name))                                                    \
    X(OIDNError, oidnGetDeviceError, (OIDNDevice device, const char **message))                                        \
    X(OIDNBuffer, oidnNewBuffer, (OIDNDevice device, size_t bytes))                                                    \
    X(void, oidnWriteBuffer, (OIDNBuffer buffer, size_t offset, size_t bytes, const void *src))                        \
    X(void, oidnReadBuffer, (OIDNBuffer buffer, size_t offset, size_t bytes, void *dst))                               \
    X(void, oidnReleaseBuffer, (OIDNBuffer buffer))                                                                    \
    X(OIDNFilter, oidnNewFilter, (OIDNDevice device, const char *type))                                                \
    X(void, oidnSetFilterImage,                                                                                        \
      (OIDNFilter filter, const char *name, OIDNBuffer buffer, OIDNFormat format, size_t width, size_t height,         \
       size_t offset, size_t pixel_stride, size_t row_stride))                                                         \
    X(void, oidnUnsetFilterImage, (OIDNFilter filter, const char *name))                                               \
    X(void, oidnSetFilterBool, (OIDNFilter filter, const char *name, bool value))                                      \
    X(void, oidnCommitFilter, (OIDNFilter filter))                                                                     \
    X(void, oidnExecuteFilter, (OIDNFilter filter))                                                                    \
    X(void, oidnReleaseFilter, (OIDNFilter filter))

static struct {
#define X(ret, name, args) ret(*name) args;
    OIDN_FUNCTIONS(X)
#undef X
} oidn;

static int g_loaded = 0; /* 0 not tried, 1 loaded, -1 failed */
static char g_error[1024];
static char g_path[512];

static void *try_open(const char *path, char *why, size_t n) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        size_t used = strlen(why);
        if (used < n) snprintf(why + used, n - used, "%s%s", used ? "; " : "", e ? e : path);
    }
    return h;
}

int denoise_load(char *err, size_t errlen) {
    if (g_loaded == 0) {
        g_loaded = -1;
        char why[768] = "";
        void *h = NULL;
        const char *env = getenv("CAUSTIC_OIDN_LIB");
        if (env && strcmp(env, "none") == 0) {
            snprintf(g_error, sizeof g_error, "Open Image Denoise disabled (CAUSTIC_OIDN_LIB=none)");
        } else {
            const char *candidates[3];
            int nc = 0;
            if (env && *env) candidates[nc++] = env;
            /* by name first: an installed binary or libcaustic.so finds the copy under its prefix
             * through its $ORIGIN-relative RUNPATH (then the system's path); a build-tree binary
             * has none and takes the set-up's directory */
            if (!env || !*env) candidates[nc++] = "libOpenImageDenoise.so.2";
#ifdef CAUSTIC_OIDN_DIR
            char builtin[480];
            snprintf(builtin, sizeof builtin, "%s/libOpenImageDenoise.so.2", CAUSTIC_OIDN_DIR);
            if (!env || !*env) candidates[nc++] = builtin;
#endif
            for (int i = 0; i < nc && !h; i++)
                if ((h = try_open(candidates[i], why, sizeof why)))
                    snprintf(g_path, sizeof g_path, "%s", candidates[i]);
            if (!h)
                snprintf(g_error, sizeof g_error,
                         "Open Image Denoise not found (%s); scripts/deps.sh fetches it into third_party/oidn, "
                         "or set CAUSTIC_OIDN_LIB",
                         why);
        }
        if (h) {
            int missing = 0;
#define X(ret, name, args)                                                                                             \
    {                                                                                                                  \
        void *sym = dlsym(h, #name);                                                                                   \
        if (!sym && !missing++) snprintf(g_error, sizeof g_error, "%s: no symbol %s (not OIDN 2?)", g_path, #name);    \
        memcpy(&oidn.name, &sym, sizeof sym);                                                                          \
    }
            OIDN_FUNCTIONS(X)
#undef X
            if (missing) {
                dlclose(h);
                g_path[0] = 0;
            } else
                g_loaded = 1;
        }
    }
    if (g_loaded == 1) return 0;
    image__set_err(err, errlen, "%s", g_error);
    return -1;
}

const char *denoise_library_path(void) { return g_loaded == 1 ? g_path : NULL; }

/* ---- denoiser ------------------------------------------------------------------------------- */
struct denoiser {
    OIDNDevice device;
    OIDNFilter filter;
    OIDNBuffer color, albedo, normal, output;
    int width, height, has_albedo, has_normal;
    char device_name[16];
};

/* OIDN's pending error as a message; 0 when there is none */
static int device_error(denoiser *d, const char *what, char *err, size_t errlen) {
    const char *msg = NULL;
    if (oidn.oidnGetDeviceError(d->device, &msg) == OIDN_ERROR_NONE) return 0;
    image__set_err(err, errlen, "Open Image Denoise: %s: %s", what, msg ? msg : "unknown error");
    return -1;
}

denoiser *denoiser_create(denoise_device device, char *err, size_t errlen) {
    if (denoise_load(err, errlen)) return NULL;
    denoiser *d = calloc(1, sizeof *d);
    if (!d) {
        image__set_err(err, errlen, "out of memory");
        return NULL;
    }
    OIDNDeviceType type = device == DENOISE_DEVICE_CPU    ? OIDN_DEVICE_TYPE_CPU
                          : device == DENOISE_DEVICE_CUDA ? OIDN_DEVICE_TYPE_CUDA
                                                          : OIDN_DEVICE_TYPE_DEFAULT;
    d->device = oidn.oidnNewDevice(type);
    if (!d->device) {
        image__set_err(err, errlen, "Open Image Denoise: no %s device",
                       device == DENOISE_DEVICE_CUDA  ? "CUDA"
                       : device == DENOISE_DEVICE_CPU ? "CPU"
                                                      : "supported");
        free(d);
        return NULL;
    }
    oidn.oidnCommitDevice(d->device);
    if (device_error(d, "device", err, errlen)) {
        denoiser_free(d);
        return NULL;
    }
    int t = oidn.oidnGetDeviceInt(d->device, "type");
    static const char *const names[] = {"default", "cpu", "sycl", "cuda", "hip", "metal"};
    snprintf(d->device_name, sizeof d->device_name, "%s", t >= 0 && t <= 5 ? names[t] : "?");
    d->filter = oidn.oidnNewFilter(d->device, "RT");
    if (device_error(d, "filter", err, errlen)) {
        denoiser_free(d);
        return NULL;
    }
    return d;
}

const char *denoiser_device_name(const denoiser *d) { return d ? d->device_name : "none"; }

static void release_buffers(denoiser *d) {
    OIDNBuffer *b[4] = {&d->color, &d->albedo, &d->normal, &d->output};
    for (int i = 0; i < 4; i++)
        if (*b[i]) {
            oidn.oidnReleaseBuffer(*b[i]);
            *b[i] = NULL;
        }
    d->width = d->height = 0;
}

int denoiser_run(denoiser *d, const float *color, const denoise_guides *guides, int width, int height, float *out,
                 char *err, size_t errlen) {
    if (width <= 0 || height <= 0) {
        image__set_err(err, errlen, "denoise: empty image");
        return -1;
    }
    const float *albedo = guides ? guides->albedo : NULL;
    const float *normal = guides && albedo ? guides->normal : NULL;
    size_t bytes = (size_t)width * (size_t)height * 3u * sizeof(float);
    int reconfigure =
        width != d->width || height != d->height || !albedo != !d->has_albedo || !normal != !d->has_normal;
    if (reconfigure) {
        release_buffers(d);
        d->color = oidn.oidnNewBuffer(d->device, bytes);
        d->output = oidn.oidnNewBuffer(d->device, bytes);
        if (albedo) d->albedo = oidn.oidnNewBuffer(d->device, bytes);
        if (normal) d->normal = oidn.oidnNewBuffer(d->device, bytes);
        if (device_error(d, "buffers", err, errlen)) {
            release_buffers(d);
            return -1;
        }
        oidn.oidnSetFilterImage(d->filter, "color", d->color, OIDN_FORMAT_FLOAT3, (size_t)width, (size_t)height, 0, 0,
                                0);
        oidn.oidnSetFilterImage(d->filter, "output", d->output, OIDN_FORMAT_FLOAT3, (size_t)width, (size_t)height, 0, 0,
                                0);
        if (albedo)
            oidn.oidnSetFilterImage(d->filter, "albedo", d->albedo, OIDN_FORMAT_FLOAT3, (size_t)width, (size_t)height,
                                    0, 0, 0);
        else
            oidn.oidnUnsetFilterImage(d->filter, "albedo");
        if (normal)
            oidn.oidnSetFilterImage(d->filter, "normal", d->normal, OIDN_FORMAT_FLOAT3, (size_t)width, (size_t)height,
                                    0, 0, 0);
        else
            oidn.oidnUnsetFilterImage(d->filter, "normal");
        oidn.oidnSetFilterBool(d->filter, "hdr", true);
        oidn.oidnCommitFilter(d->filter);
        if (device_error(d, "filter set-up", err, errlen)) {
            release_buffers(d);
            return -1;
        }
        d->width = width;
        d->height = height;
        d->has_albedo = albedo != NULL;
        d->has_normal = normal != NULL;
    }
    oidn.oidnWriteBuffer(d->color, 0, bytes, color);
    if (albedo) oidn.oidnWriteBuffer(d->albedo, 0, bytes, albedo);
    if (normal) oidn.oidnWriteBuffer(d->normal, 0, bytes, normal);
    oidn.oidnExecuteFilter(d->filter);
    if (device_error(d, "denoising", err, errlen)) return -1;
    oidn.oidnReadBuffer(d->output, 0, bytes, out);
    return device_error(d, "reading the result", err, errlen);
}

void denoiser_free(denoiser *d) {
    if (!d) return;
    release_buffers(d);
    if (d->filter) oidn.oidnReleaseFilter(d->filter);
    if (d->device) oidn.oidnReleaseDevice(d->device);
    free(d);
}
