#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"

void progress_init(progress_bar *pb, const char *label, int quiet) {
    pb->tty = isatty(STDERR_FILENO);
    pb->quiet = quiet;
    pb->last_print = -1e9;
    pb->label = label;
}

void progress_update(progress_bar *pb, const caustic_progress *p) {
    if (pb->quiet) return;
    double now = cli_now();
    /* terminals: up to 10 redraws/s; logs: one line every 2 s */
    if (now - pb->last_print < (pb->tty ? 0.1 : 2.0) && p->fraction < 1.0) return;
    pb->last_print = now;
    double eta = p->fraction > 0.0 ? p->elapsed * (1.0 - p->fraction) / p->fraction : 0.0;
    const int width = 30;
    int filled = (int)(p->fraction * width + 0.5);
    char bar[64];
    for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
    bar[width] = 0;
    if (pb->tty)
        fprintf(stderr, "\r%s [%s] %5.1f%%  %d/%d spp  %.1fs elapsed  ETA %.1fs  %.2f Msamples/s \033[K",
                pb->label, bar, 100.0 * p->fraction, p->spp_done, p->spp_target, p->elapsed, eta,
                p->samples_per_second * 1e-6);
    else
        fprintf(stderr, "%s %5.1f%%  %d/%d spp  %.1fs elapsed  ETA %.1fs  %.2f Msamples/s\n", pb->label,
                100.0 * p->fraction, p->spp_done, p->spp_target, p->elapsed, eta, p->samples_per_second * 1e-6);
    fflush(stderr);
}

void progress_finish(progress_bar *pb) {
    if (!pb->quiet && pb->tty) fputc('\n', stderr);
}
