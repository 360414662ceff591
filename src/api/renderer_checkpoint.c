/* libcaustic: checkpoints of a renderer (the format: api/checkpoint.c): written to a temporary
 * file and renamed, read back into the film. */
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

/* ---- checkpoints (api/checkpoint.c): written to a temp file and renamed ---------------------- */
static void ckpt_settings_of(const caustic_renderer *r, ckpt_settings *st) {
    memset(st, 0, sizeof *st);
    st->pass = r->pass;
    st->pass.sample_begin = st->pass.sample_end = 0;
    /* the stratified sampler's pattern and --adaptive-depth's weights depend on the spp target;
     * the rest does not, so a render may resume with a higher target */
    if (!(r->pass.sampler == (int32_t)CAUSTIC_SAMPLER_STRATIFIED || r->opt.adaptive_depth)) st->pass.spp_total = 0;
    st->integrator = (int32_t)r->opt.integrator;
    st->merge_radius = r->opt.merge_radius;
    st->merge_alpha = r->opt.merge_alpha;
    st->merge_everywhere = r->opt.merge_everywhere;
    st->aov_planes = r->film.aov != NULL;
    ckpt_scene_hash(&r->scene->s->k, st->scene);
}

static int write_checkpoint(FILE *f, void *user, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    const caustic_renderer *r = user;
    ckpt_settings st;
    ckpt_settings_of(r, &st);
    ckpt_state state = {r->spp_done, r->spp_target, r->seconds, r->rays, r->bad, r->samples};
    return ckpt_write(f, &st, &state, &r->film); /* the flush that follows names an error */
}

int caustic_checkpoint_save(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    if (api_sync_film(r, err, errlen)) return -1;
    return file_write_atomic(path, "cannot write checkpoint", write_checkpoint, r, err, errlen);
}

int caustic_check_writable(const char *path, const char *what, char *err, size_t errlen) {
    return file_check_writable(path, what, err, errlen);
}

int caustic_checkpoint_load(caustic_renderer *r, const char *path, char *err, size_t errlen) {
    char why[256];
    FILE *f = file_open_regular(path, 0, why, sizeof why);
    if (!f) {
        snprintf(err, errlen, "%s: checkpoint: %s", path, why);
        return -1;
    }
    ckpt_settings mine;
    ckpt_settings_of(r, &mine);
    ckpt_state st;
    int rc = ckpt_read(f, path, &mine, r->spp_target, &r->film, &st, err, errlen);
    fclose(f);
    if (rc) return -1;
    if (r->ops->write_film(r->backend, &r->film, err, errlen)) return -1;
    r->film_stale = 0;
    r->spp_done = st.spp_done;
    r->seconds = st.seconds;
    r->rays = st.rays;
    r->shadow_rays = 0;
    r->bad = st.bad;
    r->samples = st.samples;
    return 0;
}
