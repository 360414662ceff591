/* Shared bits of the caustic command-line client. */
#ifndef CAUSTIC_CLI_H
#define CAUSTIC_CLI_H

#include "caustic.h"

/* Exit statuses: 0 success, 1 runtime failure (I/O, out of memory), 2 bad input or usage,
 * 130 interrupted (a checkpoint/partial image was saved). */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

/* Progress bar on stderr: redrawn in place on a terminal, plain lines otherwise. */
typedef struct progress_bar {
    int tty, quiet;
    double last_print;
    const char *label;
} progress_bar;
void progress_init(progress_bar *pb, const char *label, int quiet);
void progress_update(progress_bar *pb, const caustic_progress *p);
void progress_finish(progress_bar *pb);
/* The progress line for a terminal of `columns` columns (bar shortened or dropped to fit in
 * columns - 1), or without a bar and a width limit (columns <= 0, logs); its length. */
int progress_line(const caustic_progress *p, const char *label, int columns, char *out, size_t n);
/* h:mm:ss */
void progress_format_time(double seconds, char *buf, size_t n);

int cmd_bench(int argc, char **argv);
int cmd_bench_integrators(int argc, char **argv); /* caustic bench --integrator */
int cmd_tonemap(int argc, char **argv);           /* caustic tonemap (tonemap_cmd.c) */
/* Several scenes or --frames: each rank of an mpirun job renders its share of the frames by
 * calling render_one with one frame's arguments (frames.c); frame f of N turns the camera by
 * orbit * f / N degrees (--orbit D, default 360). */
int render_frames(int argc, char **argv, const char *const *scenes, int nscenes, int frames, const char *output,
                  double orbit, int (*render_one)(int argc, char **argv));
/* SCENE's name + .png (main.c). */
void frames_default_output(const char *scene, char *out, size_t n);

#endif
