/* libcaustic: scenes loaded from files or built-in names, wrapped, freed and counted. */
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
#include "import/import.h"
#include "kernel/adaptive_depth.h"
#include "kernel/camera.h"
#include "kernel/sampler.h"
#include "kernel/vcm.h"
#include "scene/scene.h"
#include "util/file.h"
#include "util/log.h"
#include "util/timer.h"

const char *const *caustic_builtin_scenes(void) { return scene_builtin_names(); }

int caustic_scene_load(caustic_scene **out, const char *path, char *err, size_t errlen) {
    return caustic_scene_load_ex(out, path, NULL, err, errlen);
}

void caustic_load_options_init(caustic_load_options *o) { memset(o, 0, sizeof *o); }

int caustic_scene_load_ex(caustic_scene **out, const char *path, const caustic_load_options *o, char *err,
                          size_t errlen) {
    *out = NULL;
    scene *s = NULL;
    struct stat st;
    int rc;
    int stat_errno = stat(path, &st) == 0 ? 0 : errno;
    if (stat_errno == 0) {
        char *json = NULL;
        void *log_user = NULL;
        lib_log_fn log_fn = lib_log_get(&log_user);
        int own = o && o->warning;
        scene_load_opts so = {o ? o->strict : 0,
                              own ? o->warning : log_fn,
                              own ? o->warning_user : log_user,
                              o && (o->dump_scene || o->ndefines > 0) ? &json : NULL,
                              0,
                              o ? o->defines : NULL,
                              o ? o->ndefines : 0,
                              NULL};
        int defines_taken = 0;
        so.defines_taken = &defines_taken;
        rc = scene_load_file(&s, path, &so, err, errlen);
        if (rc == 0 && o && o->ndefines > 0 && !defines_taken && !json) {
            /* a glTF file with its own lights or camera, a pbrt scene: read directly, no JSON in
             * between whose keys -D could name */
            snprintf(err, errlen,
                     "%s: -D cannot override keys of this scene (it is read straight into caustic: a glTF file with "
                     "its own lights or camera, or a pbrt scene, has no caustic JSON keys to override)",
                     path);
            rc = -1;
        }
        /* read straight into caustic (pbrt, Mitsuba, glTF with lights): written from the scene */
        if (rc == 0 && o && o->dump_scene && !json && scene_to_json(s, o->dump_scene, &json, err, errlen)) rc = -1;
        if (rc == 0 && json && o->dump_scene && scene_dump_json(o->dump_scene, json, err, errlen)) rc = -1;
        free(json);
    } else {
        const char *const *names = scene_builtin_names();
        int builtin = 0;
        for (int i = 0; names[i]; ++i) builtin |= strcmp(names[i], path) == 0;
        const char *text = builtin ? scene_builtin_json(path) : NULL;
        if (builtin && o && (o->dump_scene || o->ndefines > 0) && !text) {
            snprintf(err, errlen, "builtin:%s: %s: this built-in scene is made in code and has no JSON form", path,
                     o->dump_scene ? "--dump-scene cannot write it" : "-D cannot override its keys");
            return -1;
        }
        if (builtin && text && o && (o->dump_scene || o->ndefines > 0)) {
            /* the JSON built-ins through the loader with the overrides, and written out as asked */
            char source[64], *json = NULL;
            snprintf(source, sizeof source, "builtin:%s", path);
            int own = o->warning != NULL;
            void *log_user = NULL;
            lib_log_fn log_fn = lib_log_get(&log_user);
            scene_load_opts so = {o->strict,
                                  own ? o->warning : log_fn,
                                  own ? o->warning_user : log_user,
                                  o->ndefines > 0 ? &json : NULL,
                                  0,
                                  o->defines,
                                  o->ndefines,
                                  NULL};
            rc = scene_load_json_text_opts(&s, text, source, NULL, &so, err, errlen);
            if (rc == 0 && o->dump_scene && scene_dump_json(o->dump_scene, json ? json : text, err, errlen)) rc = -1;
            free(json);
        } else if (builtin) {
            rc = scene_load_builtin(&s, path, err, errlen);
        } else if (stat_errno != ENOENT) {
            /* the file is there but cannot be reached (a symlink loop, a permission): say why */
            snprintf(err, errlen, "%s: %s", path, strerror(stat_errno));
            return -1;
        } else {
            const char *sug = caustic_suggest(path, names);
            if (sug)
                snprintf(err, errlen, "%s: no such file or built-in scene (did you mean '%s'?)", path, sug);
            else
                snprintf(err, errlen,
                         "%s: no such file or built-in scene (built-ins: cornell, cornell-glass, rtow, smallvcm0-3)",
                         path);
            return -1;
        }
    }
    if (rc) {
        scene_destroy(s);
        return -1;
    }
    return api_scene_wrap(out, s, err, errlen);
}

int api_scene_wrap_unprepared(caustic_scene **out, scene *s, char *err, size_t errlen) {
    *out = NULL;
    /* a CAUSTIC_ISA this CPU or build lacks: refused here, before any kernel is chosen */
    if (cpu_isa_check(err, errlen)) {
        scene_destroy(s);
        return -1;
    }
    caustic_scene *cs = malloc(sizeof(*cs));
    if (!cs) {
        scene_destroy(s);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cs->s = s;
    *out = cs;
    return 0;
}

int api_scene_wrap(caustic_scene **out, scene *s, char *err, size_t errlen) {
    if (api_scene_wrap_unprepared(out, s, err, errlen)) return -1;
    /* Once per scene: its BVH at the width of the CPU kernels that trace it (every renderer over
     * the scene shares it; the GPU's tree is built on first use, scene_bvh). */
    if (scene_prepare(s, cpu_kernels_get()->bvh_width, err, errlen)) {
        caustic_scene_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

scene *api_scene_internal(caustic_scene *cs) { return cs->s; }

void caustic_scene_free(caustic_scene *s) {
    if (!s) return;
    scene_destroy(s->s);
    free(s);
}

int caustic_scene_stats_get(const caustic_scene *cs, caustic_scene_stats *st) {
    const scene *s = cs->s;
    memset(st, 0, sizeof(*st));
    st->triangles = s->ntriangles;
    st->spheres = s->nspheres;
    st->quads = s->nquads;
    st->primitives = s->ntriangles + s->nspheres + s->nquads;
    st->materials = s->nmaterials;
    st->textures = s->ntextures;
    st->lights = s->nlights + (vis_black(s->env_radiance) ? 0 : 1);
    st->media = s->nmedia;
    for (size_t i = 0; i < s->nmedia; ++i) st->grid_media += s->media[i].kind != MEDIUM_HOMOGENEOUS;
    st->voxel_bytes = s->nvoxels * sizeof(float) + s->nnanovdb * sizeof(uint32_t);
    st->camera_medium = s->camera.medium > 0 ? s->medium_names[s->camera.medium - 1] : NULL;
    st->vertices = s->nvertices;
    st->bounds_lo[0] = s->bounds_lo.x;
    st->bounds_lo[1] = s->bounds_lo.y;
    st->bounds_lo[2] = s->bounds_lo.z;
    st->bounds_hi[0] = s->bounds_hi.x;
    st->bounds_hi[1] = s->bounds_hi.y;
    st->bounds_hi[2] = s->bounds_hi.z;
    st->bvh_nodes = s->bvh.nwnodes;
    st->bvh_leaves = s->bvh.nleaves;
    st->bvh_width = s->bvh.width;
    st->bvh_max_depth = s->bvh.max_depth;
    st->bvh_max_leaf = s->bvh.max_leaf;
    st->bvh_sah_cost = s->bvh.sah_cost;
    st->bvh_wide_sah_cost = s->bvh.wide_sah_cost;
    st->bvh_build_seconds = s->bvh.build_seconds;
    st->instances = s->ninstances;
    st->instanced_meshes = s->nmeshes;
    st->placed_primitives = 0;
    if (s->ninstances) {
        size_t held = 0;
        for (size_t i = 0; i < s->nmeshes; ++i) held += s->meshes[i].nt;
        for (size_t i = 0; i < s->ninstances; ++i)
            st->placed_primitives +=
                s->instance_mesh[i] == SCENE_MESH_WORLD ? st->primitives - held : s->meshes[s->instance_mesh[i]].nt;
    }
    const kscene *k = &s->k;
    size_t bytes = s->bvh.nwnodes * bvh_wnode_size(s->bvh.width) + s->bvh.nleaf4 * sizeof(bvh_leaf4);
#define ARRAY_BYTES(type, name, count)                                                                                 \
    if (k->name) bytes += (size_t)(count) * sizeof(type);
    KSCENE_ARRAYS(ARRAY_BYTES)
#undef ARRAY_BYTES
    st->memory_bytes = bytes;
    st->width = s->camera.width;
    st->height = s->camera.height;
    st->spp = s->spp;
    st->max_depth = s->max_depth;
    st->integrator = s->integrator_hint - 1;
    return 0;
}
