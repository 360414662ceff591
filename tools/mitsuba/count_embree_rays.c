/* Counts the rays Mitsuba 3's llvm variants hand to Embree, for rays per sample beside caustic's
 * (docs/performance-log.md, 2026-11-28, branch `bound18`): preloaded, it stands in for Mitsuba's
 * own Embree entry points
 * mitsuba::rtcIntersect16 / rtcOccluded16 (ray_intersect and ray_test of the JIT kernel), counts the
 * active lanes of each packet (valid[i] == -1) and calls the real ones; the totals go to stderr at
 * exit. The script renders a warm-up image first, so the counts cover two renders.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/count_embree_rays.so tools/mitsuba/count_embree_rays.c -ldl
 *   LD_PRELOAD=/tmp/count_embree_rays.so python tools/mitsuba/caustic_to_mitsuba.py SCENE.json --spp N --res WxH
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MI_INTERSECT16 _ZN7mitsuba14rtcIntersect16EPKiPNS_10RTCSceneTyEPNS_19RTCIntersectContextEPNS_11RTCRayHit16E
#define MI_OCCLUDED16  _ZN7mitsuba13rtcOccluded16EPKiPNS_10RTCSceneTyEPNS_19RTCIntersectContextEPNS_8RTCRay16E
#define STR_(x)        #x
#define STR(x)         STR_(x)

typedef void (*packet_fn)(const int *valid, void *scene, void *context, void *rays);
static unsigned long long calls[2], rays[2];

/* Mitsuba's Python module opens its libembree3.so RTLD_LOCAL, so RTLD_NEXT cannot see it: look the
 * symbol up in the library already loaded. */
static packet_fn real(const char *name) {
    void *h = dlopen("libembree3.so", RTLD_NOW | RTLD_NOLOAD);
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        fprintf(stderr, "count_embree_rays: %s not found in the loaded libembree3.so\n", name);
        abort();
    }
    packet_fn f; /* dlsym's object pointer as a function pointer, the way POSIX allows */
    memcpy(&f, &p, sizeof f);
    return f;
}

static void count(int k, const int *valid) {
    calls[k]++;
    for (int i = 0; i < 16; ++i) rays[k] += valid[i] == -1;
}

void MI_INTERSECT16(const int *valid, void *scene, void *context, void *rays16) {
    static packet_fn f;
    if (!f) f = real(STR(MI_INTERSECT16));
    count(0, valid);
    f(valid, scene, context, rays16);
}

void MI_OCCLUDED16(const int *valid, void *scene, void *context, void *rays16) {
    static packet_fn f;
    if (!f) f = real(STR(MI_OCCLUDED16));
    count(1, valid);
    f(valid, scene, context, rays16);
}

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "count_embree_rays: intersect16 calls %llu rays %llu; occluded16 calls %llu rays %llu\n", calls[0],
            rays[0], calls[1], rays[1]);
}
