#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"

void progress_init(progress_bar *pb, const char *label, int quiet) {
    pb->tty = isatty(STDERR_FILENO);
    pb->quiet = quiet;
    pb->last_print = -1e9;
    pb->label = label;
}

/* Seconds as h:mm:ss ("-:--:--" when unknown or absurd). */
void progress_format_time(double s, char *buf, size_t n) {
    if (!(s >= 0.0) || s > 359999999.0) {
        snprintf(buf, n, "-:--:--");
        return;
    }
    long t = (long)(s + 0.5);
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* The terminal's width in columns (80 when it does not say). */
static int terminal_columns(void) {
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

int progress_line(const caustic_progress *p, const char *label, int columns, char *out, size_t n) {
    char el[32], eta[32];
    progress_format_time(p->elapsed, el, sizeof el);
    progress_format_time(p->fraction > 0.0 ? p->elapsed * (1.0 - p->fraction) / p->fraction : -1.0, eta, sizeof eta);
    char info[160];
    int ilen = snprintf(info, sizeof info, " %5.1f%% %d/%d spp %s ETA %s %.2f Ms/s", 100.0 * p->fraction, p->spp_done,
                        p->spp_target, el, eta, p->samples_per_second * 1e-6);
    if (columns <= 0) return snprintf(out, n, "%s%s", label, info);
    /* the last column stays empty: writing into it wraps some terminals to a new line */
    int room = columns - 1 - (int)strlen(label) - ilen - 3; /* " [" + "]" */
    if (room >= 10) {
        int width = room > 40 ? 40 : room;
        int filled = (int)(p->fraction * width + 0.5);
        char bar[48];
        for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
        bar[width] = 0;
        return snprintf(out, n, "%s [%s]%s", label, bar, info);
    }
    /* narrow: no bar, and the line cut to fit */
    int len = snprintf(out, n, "%s%s", label, info);
    int max = columns - 1 > 0 ? columns - 1 : 0;
    if (len > max && (size_t)max < n) {
        out[max] = 0;
        len = max;
    }
    return len;
}

void progress_update(progress_bar *pb, const caustic_progress *p) {
    if (pb->quiet) return;
    double now = cli_now();
    /* terminals: up to 10 redraws/s; logs: one line every 2 s */
    if (now - pb->last_print < (pb->tty ? 0.1 : 2.0) && p->fraction < 1.0) return;
    pb->last_print = now;
    char line[512];
    if (pb->tty) {
        progress_line(p, pb->label, terminal_columns(), line, sizeof line);
        fprintf(stderr, "\r%s\033[K", line);
    } else {
        progress_line(p, pb->label, 0, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

void progress_finish(progress_bar *pb) {
    if (!pb->quiet && pb->tty) fputc('\n', stderr);
}
