/* caustic render with several scenes or --frames N: the list of frames (scene x turntable step)
 * spread over the ranks of an mpirun job, each frame rendered by one rank as a single-process
 * render and written once, to its own file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

/* This process's rank and the job's size as mpirun states them (no MPI needed: frames are
 * independent, the split is fixed), else 0 of 1. */
static void job_rank(int *rank, int *size) {
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (!r) r = getenv("PMIX_RANK");
    *rank = r ? atoi(r) : 0;
    *size = n ? atoi(n) : 1;
    if (*size < 1 || *rank < 0 || *rank >= *size) {
        *rank = 0;
        *size = 1;
    }
}

/* OUTPUT (or the scene's name + .png) with the frame number before the extension. */
static int frame_name(const char *output, const char *scene, int frame, int frames, char *out, size_t n) {
    char base[1024];
    if (output)
        snprintf(base, sizeof base, "%s", output);
    else
        frames_default_output(scene, base, sizeof base);
    if (frames <= 1) return snprintf(out, n, "%s", base) >= (int)n ? -1 : 0;
    const char *dot = strrchr(base, '.');
    int stem = dot ? (int)(dot - base) : (int)strlen(base);
    return snprintf(out, n, "%.*s.%04d%s", stem, base, frame, dot ? dot : "") >= (int)n ? -1 : 0;
}

int render_frames(int argc, char **argv, const char *const *scenes, int nscenes, int frames, const char *output,
                  double orbit, int (*render_one)(int argc, char **argv)) {
    if (nscenes > 1 && output) {
        fprintf(stderr, "caustic render: with several scenes each image is named after its scene (drop -o)\n");
        return EXIT_USAGE;
    }
    int rank, size;
    job_rank(&rank, &size);
    /* the arguments of one frame: the shared options, then --orbit DEG -o NAME SCENE */
    char **av = malloc(((size_t)argc + 6) * sizeof *av);
    if (!av) {
        fprintf(stderr, "caustic: out of memory\n");
        return EXIT_RUNTIME;
    }
    int status = 0, total = nscenes * frames;
    for (int job = rank; job < total; job += size) {
        int s = job / frames, f = job % frames, n = 0;
        for (int i = 0; i < argc; ++i) {
            int is_scene = 0;
            for (int k = 0; k < nscenes; ++k) is_scene |= argv[i] == scenes[k];
            if (is_scene) continue;
            /* the options this loop sets per frame, in either form (--frames N, --frames=N) */
            const cli_option *o = argv[i][0] == '-' ? cli_find_option(cli_render_options, argv[i]) : NULL;
            if (o && (!strcmp(o->name, "--frames") || !strcmp(o->name, "--output") || !strcmp(o->name, "--orbit"))) {
                if (!strchr(argv[i], '=')) ++i;
                continue;
            }
            av[n++] = argv[i];
        }
        char deg[64], name[1100];
        snprintf(deg, sizeof deg, "%.17g", orbit * f / frames);
        if (frame_name(output, scenes[s], f, frames, name, sizeof name)) {
            fprintf(stderr, "caustic render: output name too long\n");
            status = EXIT_USAGE;
            break;
        }
        av[n++] = "--orbit";
        av[n++] = deg;
        av[n++] = "-o";
        av[n++] = name;
        av[n++] = (char *)scenes[s];
        av[n] = NULL;
        fprintf(stderr, "caustic: rank %d of %d: frame %d of %d (%s, orbit %s deg) -> %s\n", rank, size, job + 1, total,
                scenes[s], deg, name);
        int rc = render_one(n, av);
        if (rc && !status) status = rc;
        if (rc == EXIT_USAGE || rc == EXIT_INTERRUPTED) break;
    }
    free(av);
    return status;
}
