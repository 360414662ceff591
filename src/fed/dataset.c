#include "dataset.h"

#include "idx.h"
#include "rng.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- locating files -------------------------------------------------------------------- */

static int name_matches(const char *name, const char *const *needles) {
    for (; *needles; needles++)
        if (strstr(name, *needles)) return 1;
    return 0;
}

int data_find_files(const char *dir, data_paths *p, char *err, size_t errlen) {
    static const char *const pat_tri[] = {"train-images", NULL};
    static const char *const pat_trl[] = {"train-labels", NULL};
    static const char *const pat_tei[] = {"t10k-images", "test-images", NULL};
    static const char *const pat_tel[] = {"t10k-labels", "test-labels", NULL};
    const char *const *pats[4] = {pat_tri, pat_trl, pat_tei, pat_tel};
    char *slots[4] = {p->train_images, p->train_labels, p->test_images, p->test_labels};
    static const char *what[4] = {"*train-images*", "*train-labels*", "*t10k-images* or *test-images*",
                                  "*t10k-labels* or *test-labels*"};
    int preset[4];
    for (int k = 0; k < 4; k++) preset[k] = slots[k][0] != 0;
    if (dir && *dir) {
        DIR *d = opendir(dir);
        if (!d) {
            snprintf(err, errlen, "--data %s: cannot open directory", dir);
            return -1;
        }
        /* Prefer the uncompressed file when both exist (faster); names sorted for determinism. */
        char best[4][1024] = {{0}};
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            for (int k = 0; k < 4; k++) {
                if (preset[k] || !name_matches(e->d_name, pats[k])) continue;
                size_t len = strlen(e->d_name);
                int is_gz = len > 3 && strcmp(e->d_name + len - 3, ".gz") == 0;
                int best_gz = best[k][0] && strlen(best[k]) > 3 && strcmp(best[k] + strlen(best[k]) - 3, ".gz") == 0;
                if (!best[k][0] || (best_gz && !is_gz) || (best_gz == is_gz && strcmp(e->d_name, best[k]) < 0))
                    snprintf(best[k], sizeof best[k], "%s", e->d_name);
            }
        }
        closedir(d);
        for (int k = 0; k < 4; k++) {
            if (preset[k] || !best[k][0]) continue;
            if (snprintf(slots[k], 1024, "%s/%s", dir, best[k]) >= 1024) {
                snprintf(err, errlen, "--data %s: path too long", dir);
                return -1;
            }
        }
    }
    for (int k = 0; k < 4; k++) {
        if (!slots[k][0]) {
            if (dir && *dir)
                snprintf(err, errlen, "--data %s: no file matching %s", dir, what[k]);
            else
                snprintf(err, errlen,
                         "no data: give --data DIR or all four of --train-images, "
                         "--train-labels, --test-images, --test-labels");
            return -1;
        }
    }
    return 0;
}

/* ---- loading ----------------------------------------------------------------------------- */

int dataset_load(const char *images, const char *labels, uint32_t max_items, dataset *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    idx_array im, lb;
    if (idx_load(images, 3, max_items, &im, err, errlen) != 0) return -1;
    if (idx_load(labels, 1, max_items, &lb, err, errlen) != 0) {
        idx_free(&im);
        return -1;
    }
    if (im.declared != lb.declared) {
        snprintf(err, errlen, "%s has %u images but %s has %u labels", images, im.declared, labels, lb.declared);
        goto fail;
    }
    for (uint32_t i = 0; i < lb.count; i++) {
        if (lb.data[i] >= NUM_CLASSES) {
            snprintf(err, errlen, "%s: label %u of item %u is outside 0..9", labels, lb.data[i], i);
            goto fail;
        }
    }
    out->n = (int)im.count;
    out->rows = (int)im.rows;
    out->cols = (int)im.cols;
    out->dim = out->rows * out->cols;
    out->x = malloc(sizeof(float) * (size_t)out->n * (size_t)out->dim);
    if (!out->x) {
        snprintf(err, errlen, "%s: out of memory", images);
        goto fail;
    }
    size_t total = (size_t)out->n * (size_t)out->dim;
    for (size_t i = 0; i < total; i++) out->x[i] = im.data[i] * (1.0f / 255.0f);
    out->y = lb.data; /* take ownership */
    idx_free(&im);
    return 0;
fail:
    idx_free(&im);
    idx_free(&lb);
    return -1;
}

void dataset_free(dataset *d) {
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

/* ---- transforms -------------------------------------------------------------------------- */

const char *transform_name(int t) {
    static const char *names[TF_COUNT] = {"identity", "rot90", "rot180", "rot270", "hflip", "vflip"};
    return (t >= 0 && t < TF_COUNT) ? names[t] : "?";
}

/* Source pixel of output pixel (r,c). Rotations are clockwise and assume rows == cols
 * (callers check). */
static int source_pixel(int t, int rows, int cols, int r, int c) {
    int sr = r, sc = c;
    switch (t) {
    case TF_ROT90:
        sr = rows - 1 - c;
        sc = r;
        break;
    case TF_ROT180:
        sr = rows - 1 - r;
        sc = cols - 1 - c;
        break;
    case TF_ROT270:
        sr = c;
        sc = cols - 1 - r;
        break;
    case TF_HFLIP: sc = cols - 1 - c; break;
    case TF_VFLIP: sr = rows - 1 - r; break;
    default: break;
    }
    return sr * cols + sc;
}

void transform_perm(int t, int rows, int cols, int *perm) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) perm[r * cols + c] = source_pixel(t, rows, cols, r, c);
}

void transform_apply(int t, int rows, int cols, const float *in, float *out) {
    if (t == TF_IDENTITY) {
        memcpy(out, in, sizeof(float) * (size_t)rows * (size_t)cols);
        return;
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) out[r * cols + c] = in[source_pixel(t, rows, cols, r, c)];
}

int dataset_gather(const dataset *src, const int *idx, const int *tf, int n, dataset *out) {
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rows = src->rows;
    out->cols = src->cols;
    out->dim = src->dim;
    out->x = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)src->dim);
    out->y = malloc((size_t)(n > 0 ? n : 1));
    if (!out->x || !out->y) {
        dataset_free(out);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        int i = idx ? idx[k] : k;
        transform_apply(tf ? tf[k] : TF_IDENTITY, src->rows, src->cols, src->x + (size_t)i * src->dim,
                        out->x + (size_t)k * src->dim);
        out->y[k] = src->y[i];
    }
    return 0;
}

/* ---- partitions -------------------------------------------------------------------------- */

int partition_parse(const char *s, partition_spec *out) {
    out->alpha = 0;
    if (strcmp(s, "paper") == 0) {
        out->kind = PART_PAPER;
        return 0;
    }
    if (strcmp(s, "iid") == 0) {
        out->kind = PART_IID;
        return 0;
    }
    if (strncmp(s, "dirichlet:", 10) == 0) {
        char *end;
        double a = strtod(s + 10, &end);
        if (end == s + 10 || *end || !(a > 0.0) || a > 1e6) return -1;
        out->kind = PART_DIRICHLET;
        out->alpha = a;
        return 0;
    }
    return -1;
}

int partition_make(const partition_spec *spec, const dataset *train, int nclients, uint64_t seed, client_shard *shards,
                   char *err, size_t errlen) {
    if (nclients < 1 || nclients > train->n) {
        snprintf(err, errlen, "--clients %d: need between 1 and %d (training samples)", nclients, train->n);
        return -1;
    }
    if (spec->kind == PART_PAPER && train->rows != train->cols) {
        snprintf(err, errlen, "--partition paper: rotations need square images, got %dx%d", train->rows, train->cols);
        return -1;
    }
    memset(shards, 0, sizeof(client_shard) * (size_t)nclients);
    rng_t r;
    rng_seed(&r, rng_mix(seed, 0x9a27, 1));
    int *perm = malloc(sizeof(int) * (size_t)train->n);
    if (!perm) return -1;
    for (int i = 0; i < train->n; i++) perm[i] = i;
    rng_shuffle_int(&r, perm, (size_t)train->n);

    if (spec->kind != PART_DIRICHLET) {
        int per = train->n / nclients; /* equal shards; the remainder is left out, as in the paper */
        for (int c = 0; c < nclients; c++) {
            shards[c].n = per;
            shards[c].idx = malloc(sizeof(int) * (size_t)per);
            if (!shards[c].idx) goto oom;
            memcpy(shards[c].idx, perm + (size_t)c * per, sizeof(int) * (size_t)per);
            shards[c].transform = spec->kind == PART_PAPER ? c % TF_COUNT : TF_IDENTITY;
        }
        free(perm);
        return 0;
    }
    /* Dirichlet label skew: each class is split among clients in Dir(alpha) proportions. */
    for (int c = 0; c < nclients; c++) {
        shards[c].idx = malloc(sizeof(int) * (size_t)train->n);
        if (!shards[c].idx) goto oom;
        shards[c].transform = TF_IDENTITY;
    }
    double *p = malloc(sizeof(double) * (size_t)nclients);
    if (!p) goto oom;
    for (int k = 0; k < NUM_CLASSES; k++) {
        int cnt = 0;
        for (int i = 0; i < train->n; i++) cnt += train->y[perm[i]] == k;
        double sum = 0;
        for (int c = 0; c < nclients; c++) sum += p[c] = rng_gamma(&r, spec->alpha);
        int taken = 0, seen = 0;
        double cum = 0;
        for (int c = 0; c < nclients; c++) {
            cum += sum > 0 ? p[c] / sum : 1.0 / nclients;
            int upto = c == nclients - 1 ? cnt : (int)(cum * cnt + 0.5);
            if (upto > cnt) upto = cnt;
            /* assign class-k samples number taken..upto-1 (in shuffled order) to client c */
            for (; seen < train->n && taken < upto; seen++) {
                int i = perm[seen];
                if (train->y[i] != k) continue;
                shards[c].idx[shards[c].n++] = i;
                taken++;
            }
        }
    }
    free(p);
    free(perm);
    for (int c = 0; c < nclients; c++) {
        if (shards[c].n == 0) {
            snprintf(err, errlen,
                     "--partition dirichlet:%g: client %d received no samples; use a larger alpha "
                     "or fewer clients",
                     spec->alpha, c);
            partition_free(shards, nclients);
            return -1;
        }
    }
    return 0;
oom:
    free(perm);
    partition_free(shards, nclients);
    snprintf(err, errlen, "out of memory while partitioning");
    return -1;
}

void partition_free(client_shard *shards, int nclients) {
    for (int c = 0; c < nclients; c++) {
        free(shards[c].idx);
        shards[c].idx = NULL;
        shards[c].n = 0;
    }
}

int dataset_transformed_test(const dataset *test, dataset *out) {
    int *tf = malloc(sizeof(int) * (size_t)(test->n > 0 ? test->n : 1));
    if (!tf) return -1;
    for (int k = 0; k < TF_COUNT; k++) {
        int lo = (int)((long long)test->n * k / TF_COUNT), hi = (int)((long long)test->n * (k + 1) / TF_COUNT);
        for (int i = lo; i < hi; i++) tf[i] = k;
    }
    int rc = dataset_gather(test, NULL, tf, test->n, out);
    free(tf);
    return rc;
}

int dataset_with_transform(const dataset *src, int t, dataset *out) {
    int *tf = malloc(sizeof(int) * (size_t)(src->n > 0 ? src->n : 1));
    if (!tf) return -1;
    for (int i = 0; i < src->n; i++) tf[i] = t;
    int rc = dataset_gather(src, NULL, tf, src->n, out);
    free(tf);
    return rc;
}
