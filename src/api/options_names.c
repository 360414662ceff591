/* libcaustic: the names of the options (schedules, devices, GPU modes and trees, integrators,
 * samplers, AOVs), parsed and printed, and the devices described. */
#include "caustic.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "api/renderer.h"
#include "api/backend.h"
#include "api/checkpoint.h"
#include "api/film_host.h"
#include "cpu/isa.h"
#include "cpu/render_cpu.h"
#include "cuda/render_cuda.h"
#include "image/image.h"
#include "image/tonemap.h"
#include "kernel/adaptive_depth.h"
#include "kernel/camera.h"
#include "kernel/sampler.h"
#include "kernel/vcm.h"
#include "scene/scene.h"
#include "util/file.h"
#include "util/log.h"
#include "util/timer.h"

#define NAMES(a) (a), (int)(sizeof(a) / sizeof((a)[0]))
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))
static const char *const schedule_names[] = {"tiles", "rows", "rows-static", "pixels"};
static const char *const device_names[] = {"auto", "cpu", "cuda"};
static const char *const gpu_mode_names[] = {"mega", "wavefront"};
static const char *const gpu_bvh_names[] = {"sah", "lbvh", "cwbvh"};
static const char *const integrator_names[] = {"pt", "lt", "bdpt", "ppm", "bpm", "vcm"};
static const char *const sampler_names[] = {"random", "stratified", "sobol"};
static const char *const aov_names[] = {"albedo", "normal", "depth", "samples", "variance"};
_Static_assert(COUNT(schedule_names) == CAUSTIC_SCHEDULE_PIXELS + 1, "a name per caustic_schedule");
_Static_assert(COUNT(device_names) == CAUSTIC_DEVICE_CUDA + 1, "a name per caustic_device");
_Static_assert(COUNT(gpu_mode_names) == CAUSTIC_GPU_WAVEFRONT + 1, "a name per caustic_gpu_mode");
_Static_assert(COUNT(gpu_bvh_names) == CAUSTIC_GPU_BVH_CWBVH + 1, "a name per caustic_gpu_bvh");
_Static_assert(COUNT(integrator_names) == CAUSTIC_INTEGRATOR_VCM + 1, "a name per caustic_integrator");
_Static_assert(COUNT(sampler_names) == CAUSTIC_SAMPLER_SOBOL + 1, "a name per caustic_sampler");
_Static_assert(COUNT(aov_names) == CAUSTIC_AOV_COUNT, "a name per caustic_aov");

/* The public enums are passed to the library's internals by value (a cast): each pair agrees
 * member by member. */
#define SAME_VALUE(pub, internal) _Static_assert((int)(pub) == (int)(internal), #pub " == " #internal);
SAME_VALUE(CAUSTIC_SCHEDULE_TILES, CPU_TILES)
SAME_VALUE(CAUSTIC_SCHEDULE_ROWS, CPU_ROWS)
SAME_VALUE(CAUSTIC_SCHEDULE_ROWS_STATIC, CPU_ROWS_STATIC)
SAME_VALUE(CAUSTIC_SCHEDULE_PIXELS, CPU_PIXELS)
SAME_VALUE(CAUSTIC_SAMPLER_RANDOM, SAMPLER_RANDOM)
SAME_VALUE(CAUSTIC_SAMPLER_STRATIFIED, SAMPLER_STRATIFIED)
SAME_VALUE(CAUSTIC_SAMPLER_SOBOL, SAMPLER_SOBOL)
/* the bidirectional integrators are vcm_algorithm + 1 (backend_cpu.c, backend_cuda.c) */
SAME_VALUE(CAUSTIC_INTEGRATOR_LT - 1, VCM_ALG_LT)
SAME_VALUE(CAUSTIC_INTEGRATOR_BDPT - 1, VCM_ALG_BDPT)
SAME_VALUE(CAUSTIC_INTEGRATOR_PPM - 1, VCM_ALG_PPM)
SAME_VALUE(CAUSTIC_INTEGRATOR_BPM - 1, VCM_ALG_BPM)
SAME_VALUE(CAUSTIC_INTEGRATOR_VCM - 1, VCM_ALG_VCM)

/* The index of n in names, or -1. */
static int parse_name(const char *n, const char *const *names, int count) {
    for (int i = 0; i < count; ++i)
        if (!strcmp(n, names[i])) return i;
    return -1;
}

int caustic_parse_schedule(const char *n, caustic_schedule *out) {
    int i = parse_name(n, NAMES(schedule_names));
    if (i < 0) return -1;
    *out = (caustic_schedule)i;
    return 0;
}

int caustic_parse_device(const char *n, caustic_device *out) {
    int i = parse_name(n, NAMES(device_names));
    if (i < 0) return -1;
    *out = (caustic_device)i;
    return 0;
}

int caustic_options_set_device(caustic_options *o, const char *spec) {
    if (strncmp(spec, "cuda:", 5) != 0) {
        if (caustic_parse_device(spec, &o->device)) return -1;
        o->ngpus = 0;
        return 0;
    }
    int gpus[CAUSTIC_MAX_GPUS], n = 0;
    const char *c = spec + 5;
    for (;;) {
        char *end;
        if (*c < '0' || *c > '9' || n == CAUSTIC_MAX_GPUS) return -1;
        long g = strtol(c, &end, 10);
        if (g > 4096) return -1;
        gpus[n++] = (int)g;
        if (*end == 0) break;
        if (*end != ',') return -1;
        c = end + 1;
    }
    o->device = CAUSTIC_DEVICE_CUDA;
    o->ngpus = n;
    memcpy(o->gpus, gpus, (size_t)n * sizeof(int));
    return 0;
}

void caustic_describe_devices(char *buf, size_t n) { cuda_describe_devices(buf, n); }

const char *caustic_cpu_isa(char *err, size_t errlen) {
    static char desc[96];
    if (cpu_isa_check(err, errlen)) return NULL;
    const cpu_kernels *k = cpu_kernels_get();
    snprintf(desc, sizeof desc, "%s (%s)", k->name, k->desc);
    return desc;
}

int caustic_parse_gpu_mode(const char *n, caustic_gpu_mode *out) {
    int i = parse_name(n, NAMES(gpu_mode_names));
    if (i < 0) return -1;
    *out = (caustic_gpu_mode)i;
    return 0;
}

int caustic_parse_gpu_bvh(const char *n, caustic_gpu_bvh *out) {
    int i = parse_name(n, NAMES(gpu_bvh_names));
    if (i < 0) return -1;
    *out = (caustic_gpu_bvh)i;
    return 0;
}

int caustic_parse_integrator(const char *n, caustic_integrator *out) {
    int i = parse_name(n, NAMES(integrator_names));
    if (i < 0) return -1;
    *out = (caustic_integrator)i;
    return 0;
}
const char *caustic_integrator_name(caustic_integrator i) {
    return (int)i >= 0 && (int)i < (int)(sizeof integrator_names / sizeof integrator_names[0]) ? integrator_names[i]
                                                                                               : "?";
}

/* ---- AOVs ------------------------------------------------------------------------------------ */
int caustic_parse_aovs(const char *list, unsigned *mask) {
    unsigned m = 0;
    const char *p = list;
    if (!p) return -1;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < CAUSTIC_AOV_COUNT; ++i)
            if (strlen(aov_names[i]) == len && !strncmp(p, aov_names[i], len)) found = i;
        if (found < 0) return -1;
        m |= CAUSTIC_AOV_MASK(found);
        if (!p[len]) break;
        p += len + 1;
    }
    *mask = m;
    return 0;
}

const char *caustic_aov_name(caustic_aov a) { return (int)a >= 0 && a < CAUSTIC_AOV_COUNT ? aov_names[a] : "?"; }

int caustic_aov_channels(caustic_aov a) {
    return a == CAUSTIC_AOV_ALBEDO || a == CAUSTIC_AOV_NORMAL ? 3 : (int)a >= 0 && a < CAUSTIC_AOV_COUNT ? 1 : 0;
}

int caustic_parse_sampler(const char *n, caustic_sampler *out) {
    int i = parse_name(n, NAMES(sampler_names));
    if (i < 0) return -1;
    *out = (caustic_sampler)i;
    return 0;
}

/* Picks the first backend of the table that supports the renderer and starts it. A GPU backend
 * that fails to start hands over to the next entry unless the device was asked for. */
