/* Embree 3 as the reference CPU tracer for `caustic-bench-rays` (single-ray API, the same rays).
 * Compiled only when Debian's libembree-dev is present; otherwise the stub below reports none. */
#include "bench_rays.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef CAUSTIC_HAVE_EMBREE
#include <embree3/rtcore.h>

struct ext_tracer {
    RTCDevice device;
    RTCScene scene;
};

ext_tracer *ext_tracer_create(const vec3 *pos, size_t nverts, const uint32_t *idx, size_t ntris, char *name,
                              size_t namelen) {
    ext_tracer *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->device = rtcNewDevice(NULL);
    if (!t->device) {
        free(t);
        return NULL;
    }
    t->scene = rtcNewScene(t->device);
    RTCGeometry g = rtcNewGeometry(t->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), nverts);
    unsigned *ix = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), ntris);
    for (size_t i = 0; i < nverts; ++i) {
        v[3 * i] = pos[i].x;
        v[3 * i + 1] = pos[i].y;
        v[3 * i + 2] = pos[i].z;
    }
    for (size_t i = 0; i < 3 * ntris; ++i) ix[i] = idx[i];
    rtcCommitGeometry(g);
    rtcAttachGeometry(t->scene, g);
    rtcReleaseGeometry(g);
    rtcSetSceneBuildQuality(t->scene, RTC_BUILD_QUALITY_HIGH);
    rtcCommitScene(t->scene);
    snprintf(name, namelen, "embree %d.%d.%d", RTC_VERSION_MAJOR, RTC_VERSION_MINOR, RTC_VERSION_PATCH);
    return t;
}

size_t ext_tracer_trace(ext_tracer *t, const ray_set *rs, size_t begin, size_t end, double *tsum) {
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    size_t hits = 0;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) {
        if (rs->any_hit) {
            struct RTCRay r;
            r.org_x = rs->o[3 * i];
            r.org_y = rs->o[3 * i + 1];
            r.org_z = rs->o[3 * i + 2];
            r.dir_x = rs->d[3 * i];
            r.dir_y = rs->d[3 * i + 1];
            r.dir_z = rs->d[3 * i + 2];
            r.tnear = 0.0f;
            r.tfar = rs->tmax[i];
            r.time = 0;
            r.mask = 0xffffffffu;
            r.id = 0;
            r.flags = 0;
            rtcOccluded1(t->scene, &ctx, &r);
            hits += r.tfar < 0.0f;
        } else {
            struct RTCRayHit rh;
            rh.ray.org_x = rs->o[3 * i];
            rh.ray.org_y = rs->o[3 * i + 1];
            rh.ray.org_z = rs->o[3 * i + 2];
            rh.ray.dir_x = rs->d[3 * i];
            rh.ray.dir_y = rs->d[3 * i + 1];
            rh.ray.dir_z = rs->d[3 * i + 2];
            rh.ray.tnear = 0.0f;
            rh.ray.tfar = rs->tmax[i];
            rh.ray.time = 0;
            rh.ray.mask = 0xffffffffu;
            rh.ray.id = 0;
            rh.ray.flags = 0;
            rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
            rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
            rtcIntersect1(t->scene, &ctx, &rh);
            if (rh.hit.geomID != RTC_INVALID_GEOMETRY_ID) {
                hits++;
                sum += rh.ray.tfar;
            }
        }
    }
    *tsum += sum;
    return hits;
}

void ext_tracer_free(ext_tracer *t) {
    if (!t) return;
    rtcReleaseScene(t->scene);
    rtcReleaseDevice(t->device);
    free(t);
}
#else
ext_tracer *ext_tracer_create(const vec3 *pos, size_t nverts, const uint32_t *idx, size_t ntris, char *name,
                              size_t namelen) {
    (void)pos;
    (void)nverts;
    (void)idx;
    (void)ntris;
    snprintf(name, namelen, "none");
    return NULL;
}
size_t ext_tracer_trace(ext_tracer *t, const ray_set *rs, size_t b, size_t e, double *tsum) {
    (void)t;
    (void)rs;
    (void)b;
    (void)e;
    (void)tsum;
    return 0;
}
void ext_tracer_free(ext_tracer *t) { (void)t; }
#endif
