/* The CPU's path-tracing loop over a rectangle of pixels, included by the two kernel TUs of an
 * ISA level: kernel_cpu.c (surfaces only, KERNEL_MEDIA 0) and kernel_cpu_media.c (KERNEL_MEDIA 1:
 * scenes with participating media), each after kernel/kernel.h with its own features. */
#ifndef CAUSTIC_CPU_RENDER_RECT_H
#define CAUSTIC_CPU_RENDER_RECT_H

#include "cpu/render_cpu.h"
#include "kernel/kernel.h"

/* Render pixels [x0,x1) x [y0,y1) of the image into the pass's film (whose top-left pixel is
 * (p->x0, p->y0)). Every pixel sums its samples in index order, so the result does not depend on
 * which thread runs it or how passes were cut. A pixel continues from its own count: one that
 * already holds samples of the pass (a distributed work unit finished before a checkpoint) is not
 * given them twice. */
static void render_rect(const cpu_pass *p, int x0, int y0, int x1, int y1, cpu_pass_stats *st) {
    kpass pass = p->pass;
    const kfilm film = p->film;
    for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
            size_t pix = (size_t)(y - p->y0) * (size_t)film.width + (size_t)(x - p->x0);
            film_pixel f = film_pixel_load(&film, pix);
            if (f.n < p->pass.sample_begin) continue; /* adaptive sampling stopped this pixel earlier */
            uint32_t n0 = f.n, r = 0, sr = 0, b = 0;
            pass.sample_begin = f.n;
            film_aov a;
            if (film.aov) film_aov_load(&film, pix, &a);
            film_trace_pixel(p->scene, &pass, x, y, &f, film.aov ? &a : NULL, &r, &sr, &b, p->scene->node_layout);
            film_pixel_store(&film, pix, &f);
            if (film.aov) film_aov_store(&film, pix, &a);
            st->samples += f.n - n0;
            st->bad_samples += b;
            st->rays += r;
            st->shadow_rays += sr;
        }
    }
}

#endif
