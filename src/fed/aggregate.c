#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int aggregator_parse(const char *s, aggregator_kind *out) {
    static const struct {
        const char *name;
        aggregator_kind k;
    } tab[] = {{"fedavg", AGG_FEDAVG},
               {"fedavg-weighted", AGG_FEDAVG_WEIGHTED},
               {"fedavgm", AGG_FEDAVGM},
               {"fedprox", AGG_FEDPROX}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(s, tab[i].name) == 0) {
            *out = tab[i].k;
            return 0;
        }
    return -1;
}

const char *aggregator_name(aggregator_kind k) {
    switch (k) {
    case AGG_FEDAVG: return "fedavg";
    case AGG_FEDAVG_WEIGHTED: return "fedavg-weighted";
    case AGG_FEDAVGM: return "fedavgm";
    case AGG_FEDPROX: return "fedprox";
    }
    return "?";
}

void aggregate_mean(const float *const *updates, const double *weights, int k, size_t n, float *out) {
    double wsum = 0.0;
    for (int i = 0; i < k; i++) wsum += weights ? weights[i] : 1.0;
    /* Blocks keep the double accumulator in cache. */
    enum { BLK = 4096 };
    double acc[BLK];
    for (size_t lo = 0; lo < n; lo += BLK) {
        size_t m = n - lo < BLK ? n - lo : BLK;
        memset(acc, 0, sizeof(double) * m);
        for (int i = 0; i < k; i++) {
            double w = (weights ? weights[i] : 1.0) / wsum;
            const float *u = updates[i] + lo;
            for (size_t j = 0; j < m; j++) acc[j] += w * u[j];
        }
        for (size_t j = 0; j < m; j++) out[lo + j] = (float)acc[j];
    }
}

void aggregate_server_step(aggregator_kind k, float *global, const float *avg, float *momentum, float beta,
                           float server_lr, size_t n) {
    if (k != AGG_FEDAVGM || !momentum) {
        memcpy(global, avg, sizeof(float) * n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        momentum[i] = beta * momentum[i] + (global[i] - avg[i]);
        global[i] -= server_lr * momentum[i];
    }
}

int robust_parse(const char *s, robust_kind *kind, float *trim) {
    if (strcmp(s, "mean") == 0 || strcmp(s, "none") == 0) {
        *kind = ROBUST_MEAN;
        return 0;
    }
    if (strcmp(s, "median") == 0) {
        *kind = ROBUST_MEDIAN;
        return 0;
    }
    char *end;
    if (strncmp(s, "trimmed:", 8) == 0) {
        double f = strtod(s + 8, &end);
        if (end == s + 8 || *end || !(f >= 0.0 && f < 0.5)) return -1;
        *kind = ROBUST_TRIMMED;
        *trim = (float)f;
        return 0;
    }
    return -1;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Per coordinate: sort the k client values, drop `cut` at each end, mean the rest. */
static void sorted_combine(const float *const *updates, int k, size_t n, int cut, int median, float *out) {
    float *v = malloc(sizeof(float) * (size_t)k);
    if (!v) { /* cannot happen for k <= 4096 clients in practice; fall back to the mean */
        aggregate_mean(updates, NULL, k, n, out);
        return;
    }
    for (size_t j = 0; j < n; j++) {
        for (int i = 0; i < k; i++) v[i] = updates[i][j];
        qsort(v, (size_t)k, sizeof(float), cmp_float);
        if (median) {
            out[j] = k % 2 ? v[k / 2] : (float)(0.5 * ((double)v[k / 2 - 1] + v[k / 2]));
        } else {
            double acc = 0;
            for (int i = cut; i < k - cut; i++) acc += v[i];
            out[j] = (float)(acc / (k - 2 * cut));
        }
    }
    free(v);
}

void aggregate_median(const float *const *updates, int k, size_t n, float *out) {
    sorted_combine(updates, k, n, 0, 1, out);
}

void aggregate_trimmed_mean(const float *const *updates, int k, size_t n, float trim, float *out) {
    int cut = (int)floor((double)trim * k);
    if (2 * cut >= k) cut = (k - 1) / 2;
    sorted_combine(updates, k, n, cut, 0, out);
}

double aggregate_clip(float *update, const float *global, size_t n, float max_norm) {
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)update[i] - global[i];
        s += d * d;
    }
    double norm = sqrt(s);
    if (max_norm > 0 && norm > max_norm) {
        double f = max_norm / norm;
        for (size_t i = 0; i < n; i++) update[i] = (float)(global[i] + f * ((double)update[i] - global[i]));
    }
    return norm;
}
