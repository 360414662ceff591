/* The backend table and what its entries share. */
#include "api/backend.h"
#include "kernel/bidir_limits.h"

#include <stdio.h>

/* The distributed layer first (it supports a render only under mpirun with several ranks, and
 * renders through the entries after it on every rank); then the layer over several GPUs of the
 * process (only where --device names or finds more than one), over the GPU entries after it; then
 * the GPU entries: with --device auto a GPU renders when one works, else the CPU entry after. */
const backend_ops *const backend_table[] = {
#ifdef CAUSTIC_HAVE_MPI
    &backend_dist,
#endif
    &backend_multi, &backend_cuda_pt, &backend_cuda_bidir, &backend_cpu_pt, &backend_cpu_bidir, NULL};

int backend_bidir_limits(const backend_desc *d, int media_ok, char *err, size_t errlen) {
    const caustic_options *o = d->opt;
    bidir_request q = bidir_request_of(&d->cam, kscene_features(&d->scene->k));
    q.emissive_media = kscene_emissive_media(&d->scene->k);
    q.grid_media = kscene_grid_media(&d->scene->k);
    q.media_ok = media_ok;
    q.adaptive = o->adaptive;
    q.adaptive_depth = o->adaptive_depth != 0;
    q.clamp = o->clamp;
    const char *why = bidir_refusal(&q);
    if (!why) return 0;
    snprintf(err, errlen, "--integrator %s %s", caustic_integrator_name(o->integrator), why);
    return -1;
}
