/* Rank 0's unit queue: each pass's jobs (tiles, or iterations), the speed model that sizes and
 * places units (next_unit), backup copies of late units, and the pass loop that hands units out
 * and takes results into the film (dist_pass). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"
#include "util/timer.h"

/* ---- rank 0 ----------------------------------------------------------------------------------- */
/* What the pass still has to hand out: a rectangle of the image and the samples [begin, end) its
 * pixels need (units take rows off its top), or one iteration (bidirectional). */
typedef struct job {
    int x0, y0, w, h, tile; /* tile: its index in the grid, for its cost (path tracing) */
    uint32_t begin, end;
} job;

/* A unit given out: its job, its rectangle and samples; when it was given, when its result is
 * expected, and whether its rank was idle then (its round trip less its rendering is then the
 * rank's latency); whether a backup copy went to another rank (backup_unit), and whether a
 * result is in (the other copy's is then dropped). */
typedef struct unit {
    int job, x0, y0, w, h;
    uint32_t begin, end;
    double given, eta;
    int timed, backed, done;
} unit;

/* The longest a CPU rank's unit should take at its measured speed: the end of a pass waits for at
 * most this long (passes last pass_seconds, many units per rank). A unit's messages cost well
 * under a millisecond and are hidden behind the rendering of the next unit. */
#define UNIT_SECONDS 0.25

/* The message for unit `id` into *buf (grown as needed); its length. */
static size_t unit_write(const dist *b, const kpass *pass, const unit *u, int id, int first, unsigned char **buf,
                         size_t *cap) {
    size_t len = sizeof(unit_msg) + (b->bidir ? 0 : dist_tile_bytes(u->w, u->h));
    if (len > *cap) {
        unsigned char *q = realloc(*buf, len);
        if (!q) return 0;
        *buf = q;
        *cap = len;
    }
    unit_msg m = {
        .pass = *pass,
        .id = id,
        .x0 = u->x0,
        .y0 = u->y0,
        .w = u->w,
        .h = u->h,
        .first = first,
    };
    m.pass.sample_begin = u->begin;
    m.pass.sample_end = u->end;
    memcpy(*buf, &m, sizeof m);
    if (!b->bidir) {
        kfilm tv = dist_tile_view(*buf + sizeof m, u->w, u->h);
        dist_tile_copy(&b->film, &tv, u->x0, u->y0, 1);
    }
    return len;
}

typedef struct pass_state {
    job *jobs;
    size_t njobs, open; /* open: jobs with rows not handed out */
    unit *units;        /* every unit of the pass, in the order given */
    size_t nunits, units_cap, inflight, returned;
    size_t applied;       /* bidirectional: iterations added to the film */
    float **pending;      /* bidirectional: iterations that came before their predecessors */
    int *holds;           /* per rank: the units in flight there, oldest first (AHEAD_MAX each) */
    int *nholds;          /* per rank: how many */
    double *hold_seconds; /* per rank and hold: the unit's predicted rendering time */
    double *free_at;      /* per rank: when it is predicted to have rendered what it holds */
    char *given;          /* per rank: had a unit in this pass */
} pass_state;

/* The work of one pixel sample of a tile for a device kind (0 CPU, 1 GPU) in the speed model's
 * unit: an average pixel sample is about 1; a tile's cost is measured by the kind's units, 1 until
 * then (and for iterations). */
static double pixel_cost(const dist *b, int kind, int tile) {
    double c = b->bidir ? 0.0 : b->tile_cost[kind * b->ntiles + tile];
    return c > 0.0 ? c : 1.0;
}

/* The work of one row of job j's pixels over its samples, for a device kind. */
static double row_work(const dist *b, const job *j, int kind) {
    return pixel_cost(b, kind, j->tile) * (double)j->w * (double)(j->end - j->begin);
}

/* When the pass is predicted to end: no earlier than the ranks with a measured rate render what
 * they hold and the jobs left between them (each job's pixel samples over the ranks' summed
 * pixel samples per second on its tile, each kind at its own cost), nor than the last unit in
 * flight. */
static double pass_end(const dist *b, const pass_state *ps, double now) {
    double rates[2] = {0.0, 0.0}, held = 0.0, end = now;
    for (int r = 0; r < dist_g.size; ++r) {
        rates[(int)b->gpu[r]] += b->rate[r];
        if (b->rate[r] > 0.0 && ps->free_at[r] > now) held += b->rate[r] * (ps->free_at[r] - now);
        for (int i = 0; i < ps->nholds[r]; ++i) {
            double eta = ps->units[ps->holds[r * AHEAD_MAX + i]].eta;
            end = eta > end ? eta : end;
        }
    }
    double t = now + held / (rates[0] + rates[1]);
    for (size_t k = 0; k < ps->njobs; ++k) {
        const job *j = &ps->jobs[k];
        if (j->h <= 0) continue;
        double per_s = 0.0; /* the ranks' pixel samples per second on this job's tile */
        for (int kind = 0; kind < 2; ++kind) per_s += rates[kind] / pixel_cost(b, kind, j->tile);
        t += (double)j->h * j->w * (j->end - j->begin) / per_s;
    }
    return t > end ? t : end;
}

/* The next unit for rank r: its index in ps->units, -1 where it should take none now, -2 when out
 * of memory. The job with the most work left goes first. A unit holds every sample the pass still
 * needs of its pixels (so no unit waits for another), and a CPU rank takes only some rows of the
 * job: what it renders in UNIT_SECONDS at its measured rate (as much work as one sample of the
 * whole job until the rate is measured). A GPU takes the job whole (its float tile would round
 * where a unit ends: its units follow the passes, which are cut alike by count).
 * A rank takes a unit only where its result is predicted back by the pass's predicted end (a CPU
 * rank's rows cut to fit), or where no other rank would finish it sooner: a slow rank beside fast
 * ones renders what it finishes in time and leaves the rest to them, so it never holds a pass up,
 * and ranks alike take units as they come. */
static int next_unit(const dist *b, pass_state *ps, int r) {
    const double now = timer_now(), rate = b->rate[r], lat = b->latency[r];
    const int kind = b->gpu[r], rows_cut = !b->bidir && !kind;
    const double start = ps->free_at[r] > now ? ps->free_at[r] : now;
    const double t_end = rate > 0.0 ? pass_end(b, ps, now) : 0.0;
    job *best = NULL;
    double best_left = 0.0;
    int best_rows = 0;
    for (size_t k = 0; k < ps->njobs; ++k) {
        job *j = &ps->jobs[k];
        if (j->h <= 0) continue;
        const double row = row_work(b, j, kind), left = row * j->h;
        if (best && left <= best_left) continue;
        int rows = j->h;
        if (rate <= 0.0) {
            /* its speed unknown, a CPU rank's first unit is one row (and nothing is queued behind
             * it: wants_unit), so that a slow rank cannot hold the first pass up */
            if (rows_cut) rows = 1;
        } else {
            if (rows_cut) {
                double most = rate * UNIT_SECONDS / row;
                if (most < rows) rows = most < 1.0 ? 1 : (int)most;
            }
            double fin = start + lat + rows * row / rate;
            if (fin > t_end && rows_cut) {
                /* no shorter than a quarter of a unit: at the end of a pass, ranks alike would
                 * otherwise cut ever shorter units towards the predicted end */
                double fit = (t_end - start - lat) * rate / row, least = rate * UNIT_SECONDS / 4.0 / row;
                if (fit >= 1.0 && fit >= least) {
                    rows = (int)fit < rows ? (int)fit : rows;
                    fin = start + lat + rows * row / rate;
                }
            }
            if (fin > t_end) {
                double alt = HUGE_VAL; /* the soonest another rank would finish the unit */
                for (int s = 0; s < dist_g.size; ++s) {
                    if (s == r || b->rate[s] <= 0.0 || (s > 0 && !b->ready[s])) continue;
                    double t = (ps->free_at[s] > now ? ps->free_at[s] : now) + b->latency[s] +
                               rows * row_work(b, j, b->gpu[s]) / b->rate[s];
                    alt = t < alt ? t : alt;
                }
                if (fin > alt) continue;
            }
        }
        best = j;
        best_left = left;
        best_rows = rows;
    }
    if (!best) return -1;
    if (ps->nunits == ps->units_cap) {
        size_t cap = ps->units_cap ? 2 * ps->units_cap : 64;
        unit *u = realloc(ps->units, cap * sizeof *u);
        if (!u) return -2;
        ps->units = u;
        ps->units_cap = cap;
    }
    double seconds = rate > 0.0 ? best_rows * row_work(b, best, kind) / rate : 0.0;
    unit *u = &ps->units[ps->nunits];
    *u = (unit){
        .job = (int)(best - ps->jobs),
        .x0 = best->x0,
        .y0 = best->y0,
        .w = best->w,
        .h = best_rows,
        .begin = best->begin,
        .end = best->end,
        .given = now,
        .eta = start + lat + seconds,
        .timed = ps->nholds[r] == 0 && b->stale[r] == 0,
    };
    best->y0 += best_rows;
    best->h -= best_rows;
    if (best->h == 0) ps->open--;
    ps->inflight++;
    ps->hold_seconds[r * AHEAD_MAX + ps->nholds[r]] = seconds; /* the caller adds the hold */
    ps->free_at[r] = start + seconds;
    return (int)ps->nunits++;
}

/* Smoothing of the speed model: each measurement counts half. */
static double smooth(double old, double now) { return old > 0.0 ? 0.5 * (old + now) : now; }

/* Takes a result (from rank r) into the film: 0, or -1 with err. The result of a unit whose other
 * copy came first (backup_unit), in this pass or an earlier one, only frees its rank. */
static int take_result(dist *b, pass_state *ps, int r, const unsigned char *msg, size_t len, backend_stats *st,
                       char *err, size_t errlen) {
    result_msg res;
    if (len < sizeof res) {
        snprintf(err, errlen, "rank %d sent a short result (%zu bytes)", r, len);
        return -1;
    }
    memcpy(&res, msg, sizeof res);
    if (res.status) {
        snprintf(err, errlen, "rank %d: %s", r, res.err);
        return -1;
    }
    if (b->stale[r] > 0) { /* an earlier pass's (results come in order) */
        b->stale[r]--;
        b->since[r] = timer_now();
        b->rendering += res.seconds;
        return 0;
    }
    int *h = &ps->holds[r * AHEAD_MAX];
    if (ps->nholds[r] == 0 || res.id != h[0]) {
        snprintf(err, errlen, "rank %d returned unit %d, not %d", r, res.id, ps->nholds[r] ? h[0] : -1);
        return -1;
    }
    unit *u = &ps->units[res.id];
    size_t npix = (size_t)b->width * b->height;
    size_t want = sizeof res + (b->bidir ? 3 * npix * sizeof(float) : dist_tile_bytes(u->w, u->h));
    if (len != want) {
        snprintf(err, errlen, "rank %d returned %zu bytes, not %zu", r, len, want);
        return -1;
    }
    const int first = !u->done; /* else the other copy's result is in the film */
    if (first && b->bidir) {
        ps->pending[u->job] = malloc(3 * npix * sizeof(float));
        if (!ps->pending[u->job]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(ps->pending[u->job], msg + sizeof res, 3 * npix * sizeof(float));
        /* iterations reach the film in index order, as in one process (film_add_iteration) */
        for (; ps->applied < ps->njobs && ps->pending[ps->applied]; ++ps->applied) {
            const float *c = ps->pending[ps->applied];
            for (size_t i = 0; i < npix; ++i)
                film_add_iteration(&b->film, i, v3(c[3 * i], c[3 * i + 1], c[3 * i + 2]), NULL);
            free(ps->pending[ps->applied]);
            ps->pending[ps->applied] = NULL;
        }
    } else if (first) {
        kfilm tv = dist_tile_view((unsigned char *)msg + sizeof res, u->w, u->h);
        dist_tile_copy(&b->film, &tv, u->x0, u->y0, 0);
    }
    if (first) {
        st->rays += res.rays;
        st->shadow_rays += res.shadow_rays;
        st->bad_samples += res.bad;
        st->samples += res.samples;
        u->done = 1;
        ps->inflight--;
        ps->returned++;
    }
    b->rendering += res.seconds;
    b->idle += res.idle;
    if (res.seconds > b->slowest) b->slowest = res.seconds;
    /* the speed model: the tile's cost at the rank's rate so far, then the rank's rate at that cost */
    const job *j = &ps->jobs[u->job];
    const double now = timer_now(), pixel_samples = (double)(u->end - u->begin) * u->w * u->h;
    if (first) b->rank_samples[r] += (uint64_t)pixel_samples;
    if (res.seconds > 0.0 && pixel_samples > 0.0) {
        double *cost = b->bidir ? NULL : &b->tile_cost[b->gpu[r] * b->ntiles + j->tile];
        if (cost && b->rate[r] > 0.0) *cost = smooth(*cost, res.seconds * b->rate[r] / pixel_samples);
        b->rate[r] = smooth(b->rate[r], pixel_samples * pixel_cost(b, b->gpu[r], j->tile) / res.seconds);
    }
    /* (a backed-up unit's "given" is its first copy's) */
    if (u->timed && !u->backed && now - u->given > res.seconds)
        b->latency[r] = smooth(b->latency[r], now - u->given - res.seconds);
    double *hs = &ps->hold_seconds[r * AHEAD_MAX];
    memmove(h, h + 1, (AHEAD_MAX - 1) * sizeof *h);
    memmove(hs, hs + 1, (AHEAD_MAX - 1) * sizeof *hs);
    ps->nholds[r]--;
    /* what it still holds started when this unit ended, its latency ago */
    ps->free_at[r] = now;
    if (ps->nholds[r] > 0) ps->free_at[r] -= b->latency[r];
    for (int i = 0; i < ps->nholds[r]; ++i) ps->free_at[r] += hs[i];
    b->since[r] = now;
    return 0;
}

/* Whether rank r takes another unit now (next_unit then decides which, if any): an idle rank
 * always, and one that overlaps units a second (both render at once: no wait); one with more
 * work queued only while every rank can still find a job (at the end of a pass units go to idle
 * ranks), and never before its speed is measured (its first unit back). */
static int wants_unit(const dist *b, const pass_state *ps, int r) {
    const unsigned held = (unsigned)ps->nholds[r] + b->stale[r]; /* an earlier pass's too */
    if (held >= (unsigned)(b->overlap[r] ? AHEAD_MAX : AHEAD) || (r > 0 && !b->ready[r])) return 0;
    if (b->rate[r] <= 0.0 && held > 0) return 0;
    return held == 0 || (b->overlap[r] && held == 1) || ps->open > (size_t)dist_g.size;
}

/* A backup copy for rank r, idle once every job of the pass is handed out: the unit in flight at
 * another rank that r is predicted to finish soonest before its holder does, by more than r's
 * latency (a slow rank's last rows of a pass, which a GPU renders in milliseconds; a unit queued
 * behind another). Its index, or -1. A unit overdue at its holder is taken to need a quarter of
 * its predicted time more. Both copies render the same samples from the same sums (the film keeps
 * a unit's pixels until a result comes back), so whichever comes first is the result (on CPUs the
 * other's bit for bit; between a GPU and a CPU within float rounding, as any of their units) and
 * the other is dropped: the pass ends with its fastest ranks, not with the slowest unit. */
static int backup_unit(const dist *b, pass_state *ps, int r) {
    const double now = timer_now(), rate = b->rate[r];
    if (rate <= 0.0 || ps->open > 0) return -1;
    int best = -1;
    double best_gain = 0.0, best_seconds = 0.0;
    for (int s = 0; s < dist_g.size; ++s)
        for (int i = 0; s != r && i < ps->nholds[s]; ++i) {
            const int k = ps->holds[s * AHEAD_MAX + i];
            const unit *u = &ps->units[k];
            if (u->done || u->backed) continue;
            double held = u->eta > now ? u->eta : now + 0.25 * ps->hold_seconds[s * AHEAD_MAX + i];
            double seconds = (double)(u->end - u->begin) * u->w * u->h *
                             pixel_cost(b, b->gpu[r], ps->jobs[u->job].tile) / rate,
                   gain = held - (now + b->latency[r] + seconds);
            if (gain > b->latency[r] && gain > best_gain) {
                best = k;
                best_gain = gain;
                best_seconds = seconds;
            }
        }
    if (best < 0) return -1;
    ps->units[best].backed = 1;
    ps->hold_seconds[r * AHEAD_MAX + ps->nholds[r]] = best_seconds; /* the caller adds the hold */
    ps->free_at[r] = (ps->free_at[r] > now ? ps->free_at[r] : now) + best_seconds;
    return best;
}

/* The unit for rank r: a new one (next_unit), or a backup copy (backup_unit). */
static int pick_unit(const dist *b, pass_state *ps, int r, int backup) {
    return backup ? backup_unit(b, ps, r) : next_unit(b, ps, r);
}

/* Gives rank r (> 0) a unit: its message into the rank's next send buffer, sent without waiting
 * (the send completes while the rank renders). 1 when given, 0 when none (or the buffer is still
 * in use), -1 on error. */
static int give_remote(dist *b, const kpass *pass, pass_state *ps, int r, int backup, char *err, size_t errlen) {
    size_t i = (size_t)r * QUEUE + b->nsent[r] % QUEUE;
    int done = 1;
    if (b->sreq[i] != MPI_REQUEST_NULL && MPI_Test(&b->sreq[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        snprintf(err, errlen, "sending to rank %d failed", r);
        return -1;
    }
    if (!done) return 0;
    int k = pick_unit(b, ps, r, backup);
    if (k == -1) return 0;
    size_t len = k < 0 ? 0 : unit_write(b, pass, &ps->units[k], k, !ps->given[r], &b->sbuf[i], &b->scap[i]);
    if (!len) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (MPI_Isend(b->sbuf[i], (int)len, MPI_BYTE, r, TAG_UNIT, MPI_COMM_WORLD, &b->sreq[i]) != MPI_SUCCESS) {
        snprintf(err, errlen, "sending to rank %d failed", r);
        return -1;
    }
    b->nsent[r]++;
    if (ps->nholds[r] == 0 && b->stale[r] == 0) b->since[r] = timer_now();
    ps->holds[r * AHEAD_MAX + ps->nholds[r]++] = k;
    ps->given[r] = 1;
    b->bytes += len;
    return 1;
}

/* Gives rank 0's runner a unit. 1 when given, 0 when none (or its next slot is in use), -1 on
 * error. */
static int give_local(dist *b, const kpass *pass, pass_state *ps, int backup, char *err, size_t errlen) {
    slot *s = dist_runner_free_slot(&b->run);
    if (!s) return 0;
    int k = pick_unit(b, ps, 0, backup);
    if (k == -1) return 0;
    s->inlen = k < 0 ? 0 : unit_write(b, pass, &ps->units[k], k, !ps->given[0], &s->in, &s->incap);
    if (!s->inlen) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ps->holds[ps->nholds[0]++] = k;
    ps->given[0] = 1;
    dist_runner_post(&b->run, s);
    return 1;
}

int dist_pass(void *p, const kpass *pass, backend_stats *st, char *err, size_t errlen) {
    dist *b = p;
    memset(st, 0, sizeof *st);
    const double t_pass = timer_now();
    const kfilm *f = &b->film;
    /* this pass's jobs: what the film does not hold yet */
    job *jobs = NULL;
    size_t njobs = 0;
    if (b->bidir) {
        uint32_t first = f->count[0] > pass->sample_begin ? f->count[0] : pass->sample_begin;
        jobs = calloc(first < pass->sample_end ? pass->sample_end - first : 1, sizeof *jobs);
        for (uint32_t i = first; jobs && i < pass->sample_end; ++i)
            jobs[njobs++] = (job){.w = b->width, .h = b->height, .begin = i, .end = i + 1};
    } else {
        int t = b->tile, tx = (b->width + t - 1) / t, ty = (b->height + t - 1) / t;
        jobs = calloc((size_t)tx * ty, sizeof *jobs);
        for (int k = 0; jobs && k < tx * ty; ++k) {
            job j = {.x0 = (k % tx) * t, .y0 = (k / tx) * t, .tile = k};
            j.w = j.x0 + t < b->width ? t : b->width - j.x0;
            j.h = j.y0 + t < b->height ? t : b->height - j.y0;
            /* a tile continues from its smallest count (pixels that hold more skip ahead,
             * pixels that adaptive sampling stopped stay stopped) */
            uint32_t least = UINT32_MAX;
            for (int y = j.y0; y < j.y0 + j.h; ++y)
                for (int x = j.x0; x < j.x0 + j.w; ++x) {
                    uint32_t c = f->count[(size_t)y * b->width + x];
                    least = c < least ? c : least;
                }
            j.begin = least > pass->sample_begin ? least : pass->sample_begin;
            j.end = pass->sample_end;
            if (j.begin < j.end) jobs[njobs++] = j;
        }
    }
    size_t n = (size_t)dist_g.size;
    pass_state ps = {
        .jobs = jobs,
        .njobs = njobs,
        .open = njobs,
        .pending = b->bidir ? calloc(njobs ? njobs : 1, sizeof(float *)) : NULL,
        .holds = malloc(n * AHEAD_MAX * sizeof(int)),
        .nholds = calloc(n, sizeof(int)),
        .hold_seconds = calloc(n * AHEAD_MAX, sizeof(double)),
        .free_at = calloc(n, sizeof(double)),
        .given = calloc(n, 1),
    };
    int rc = 0;
    if (!jobs || !ps.holds || !ps.nholds || !ps.hold_seconds || !ps.free_at || !ps.given || (b->bidir && !ps.pending)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    while (rc == 0 && (ps.open > 0 || ps.inflight > 0)) {
        if (dist_interrupted()) {
            /* Ctrl-C (mpirun's SIGTERM, or a signal to rank 0): the pass stops at once with the
             * units that came back, as after caustic_cancel; the render ends, the CLI saves the
             * checkpoint and the image and every rank leaves the job normally (status 130) */
            st->stopped = 1;
            dist_g.stopped = 1;
            break;
        }
        int progress = 0;
        /* rank 0's runner: its results, then units to keep it busy */
        slot *s;
        while (rc == 0 && (s = dist_runner_done(&b->run))) {
            if (s->outlen == 0) {
                snprintf(err, errlen, "rank 0: out of memory for a result");
                rc = -1;
            } else if (take_result(b, &ps, 0, s->out, s->outlen, st, err, errlen)) {
                rc = -1;
            }
            dist_runner_retire(&b->run, s, SLOT_FREE);
            b->units_local++;
            progress = 1;
        }
        while (rc == 0 && wants_unit(b, &ps, 0)) {
            int given = give_local(b, pass, &ps, 0, err, errlen);
            if (given < 0) rc = -1;
            if (given <= 0) break;
        }
        /* the other ranks: first those that wait, then a unit ahead for each */
        for (int ahead = 0; ahead < 2 && rc == 0; ++ahead)
            for (int r = 1; r < dist_g.size && rc == 0; ++r) {
                if (!wants_unit(b, &ps, r) || (ahead == 0) != (ps.nholds[r] == 0)) continue;
                double t0 = timer_now();
                int given = give_remote(b, pass, &ps, r, 0, err, errlen);
                if (given < 0) rc = -1;
                b->coord += timer_now() - t0;
                progress |= given > 0;
            }
        /* every job handed out: idle ranks take backup copies of units that are late elsewhere */
        for (int r = 0; r < dist_g.size && rc == 0 && ps.open == 0 && ps.inflight > 0; ++r) {
            if (ps.nholds[r] > 0 || b->stale[r] > 0 || (r > 0 && !b->ready[r])) continue;
            double t0 = timer_now();
            int given =
                r == 0 ? give_local(b, pass, &ps, 1, err, errlen) : give_remote(b, pass, &ps, r, 1, err, errlen);
            if (given < 0) rc = -1;
            if (r > 0) b->coord += timer_now() - t0;
            if (given > 0) b->backups++;
            progress |= given > 0;
        }
        if (rc) break;
        /* take whatever came back */
        int flag = 0;
        MPI_Status ms;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS) {
            snprintf(err, errlen, "MPI_Iprobe failed");
            rc = -1;
            break;
        }
        if (!flag) {
            double now = timer_now(), limit = dist_unit_timeout(b);
            for (int r = 1; r < dist_g.size && !rc; ++r)
                if ((ps.nholds[r] > 0 || b->stale[r] > 0) && now - b->since[r] > limit) {
                    snprintf(err, errlen,
                             "rank %d stopped answering (no result for %.0f s); stopping with the %zu "
                             "work units that came back",
                             r, now - b->since[r], ps.returned);
                    rc = -1;
                }
            /* short naps while rank 0's runner waits for a unit, longer ones while it renders */
            if (!rc && !progress) dist_nap_for(dist_runner_busy(&b->run) ? 1000000 : 200000);
            continue;
        }
        double t0 = timer_now();
        size_t len;
        if (dist_recv_probed(&ms, &b->buf, &b->cap, &len, err, errlen)) {
            rc = -1;
            break;
        }
        int r = ms.MPI_SOURCE;
        if (ms.MPI_TAG == TAG_HELLO && len >= sizeof(hello_msg)) {
            hello_msg h;
            memcpy(&h, b->buf, sizeof h);
            b->ready[r] = 1;
            b->gpu[r] = h.threads == 0;
            b->overlap[r] = h.overlap != 0;
            b->threads += h.threads;
            continue;
        }
        if (ms.MPI_TAG != TAG_RESULT) {
            snprintf(err, errlen, "rank %d sent an unexpected message (tag %d, %zu bytes)", r, ms.MPI_TAG, len);
            rc = -1;
            break;
        }
        if (take_result(b, &ps, r, b->buf, len, st, err, errlen)) {
            rc = -1;
            break;
        }
        b->coord += timer_now() - t0;
        b->units_remote++;
        b->bytes += len;
    }
    if (rc) dist_g.failed = 1;
    /* what ranks still hold are copies whose other copy came first: their results are dropped */
    for (int r = 0; r < dist_g.size && rc == 0 && !st->stopped; ++r) b->stale[r] += (unsigned)ps.nholds[r];
    b->wall += timer_now() - t_pass;
    if (ps.pending) {
        for (size_t i = 0; i < njobs; ++i) free(ps.pending[i]);
        free(ps.pending);
    }
    free(ps.units);
    free(ps.holds);
    free(ps.nholds);
    free(ps.hold_seconds);
    free(ps.free_at);
    free(ps.given);
    free(jobs);
    return rc;
}
