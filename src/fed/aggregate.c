#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int aggregator_parse(const char *s, aggregator_kind *out) {
    static const struct { const char *name; aggregator_kind k; } tab[] = {
        {"fedavg", AGG_FEDAVG}, {"fedavg-weighted", AGG_FEDAVG_WEIGHTED},
        {"fedavgm", AGG_FEDAVGM}, {"fedprox", AGG_FEDPROX}};
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

const char *update_check(const float *p, size_t n, size_t expected_n) {
    if (n != expected_n) return "wrong number of parameters";
    for (size_t i = 0; i < n; i++) {
        if (isnan(p[i])) return "contains NaN";
        if (isinf(p[i])) return "contains Inf";
    }
    return NULL;
}

void aggregate_mean(const float *const *updates, const double *weights, int k, size_t n,
                    float *out) {
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

void aggregate_server_step(aggregator_kind k, float *global, const float *avg, float *momentum,
                           float beta, float server_lr, size_t n) {
    if (k != AGG_FEDAVGM || !momentum) {
        memcpy(global, avg, sizeof(float) * n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        momentum[i] = beta * momentum[i] + (global[i] - avg[i]);
        global[i] -= server_lr * momentum[i];
    }
}
