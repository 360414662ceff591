/* Writes a small synthetic MNIST-format data set (learnable, asymmetric class patterns plus
 * noise) so that end-to-end tests run without any download.
 * usage: fed_mkdata OUTDIR NTRAIN NTEST [SEED]  (train images gzip-compressed, rest raw) */
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int write_set(const char *dir, const char *prefix, int n, int gz, rng_t *r) {
    size_t ib = 16 + (size_t)n * 784, lb = 8 + (size_t)n;
    uint8_t *im = calloc(ib, 1), *lab = calloc(lb, 1);
    if (!im || !lab) return 1;
    im[2] = 8;
    im[3] = 3;
    be32(im + 4, (uint32_t)n);
    be32(im + 8, 28);
    be32(im + 12, 28);
    lab[2] = 8;
    lab[3] = 1;
    be32(lab + 4, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int k = (int)rng_below(r, 10);
        lab[8 + i] = (uint8_t)k;
        uint8_t *px = im + 16 + (size_t)i * 784;
        /* class k: a bar in an L-shape whose position depends on k; jitter of 1 pixel */
        int jr = (int)rng_below(r, 3) - 1, jc = (int)rng_below(r, 3) - 1;
        int row = 3 + 2 * k + jr, col0 = 2 + (k % 3) * 3 + jc;
        for (int c = col0; c < col0 + 12 && c < 28; c++) px[row * 28 + c] = 230;
        for (int rr = row; rr < row + 8 && rr < 28; rr++) px[rr * 28 + col0] = 200;
        for (int p = 0; p < 784; p++) {
            int v = px[p] + (int)rng_below(r, 40);
            px[p] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte%s", dir, prefix, gz ? ".gz" : "");
    gzFile f = gzopen(path, gz ? "wb" : "wbT");
    if (!f || gzwrite(f, im, (unsigned)ib) != (int)ib) return 1;
    gzclose(f);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, prefix);
    FILE *fl = fopen(path, "wb");
    if (!fl || fwrite(lab, 1, lb, fl) != lb) return 1;
    fclose(fl);
    free(im);
    free(lab);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: fed_mkdata OUTDIR NTRAIN NTEST [SEED]\n");
        return 2;
    }
    rng_t r;
    rng_seed(&r, argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
    if (write_set(argv[1], "train", atoi(argv[2]), 1, &r) || write_set(argv[1], "t10k", atoi(argv[3]), 0, &r)) {
        fprintf(stderr, "fed_mkdata: cannot write into %s\n", argv[1]);
        return 1;
    }
    return 0;
}
