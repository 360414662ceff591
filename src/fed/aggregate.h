/* Server-side aggregation of client models: (weighted) averaging, robust combinations,
 * clipping, and the server step of FedAvg / FedAvgM / FedProx. Validation of an update is
 * update_accept (update.h). */
#ifndef FED_AGGREGATE_H
#define FED_AGGREGATE_H

#include <stddef.h>

typedef enum { AGG_FEDAVG, AGG_FEDAVG_WEIGHTED, AGG_FEDAVGM, AGG_FEDPROX } aggregator_kind;

int aggregator_parse(const char *s, aggregator_kind *out);
const char *aggregator_name(aggregator_kind k);

/* out = sum_i w_i * u_i / sum_i w_i, accumulated in double so the order of clients
 * hardly matters; weights NULL means a plain mean. k must be >= 1. */
void aggregate_mean(const float *const *updates, const double *weights, int k, size_t n, float *out);

/* Robust combination of client models (--robust): the plain/weighted mean, the coordinate-
 * wise median, or the coordinate-wise mean after dropping the `trim` fraction of largest and
 * smallest values (trimmed mean; at least one value is kept). */
typedef enum { ROBUST_MEAN, ROBUST_MEDIAN, ROBUST_TRIMMED } robust_kind;
int robust_parse(const char *s, robust_kind *kind, float *trim);
void aggregate_median(const float *const *updates, int k, size_t n, float *out);
void aggregate_trimmed_mean(const float *const *updates, int k, size_t n, float trim, float *out);

/* Norm clipping (--clip-norm): scales update - global to L2 norm <= max_norm in place.
 * Returns the norm before clipping. */
double aggregate_clip(float *update, const float *global, size_t n, float max_norm);

/* Applies the averaged client models to the global model.
 * fedavg, fedavg-weighted, fedprox: global = avg.
 * fedavgm: m = beta*m + (global - avg); global -= server_lr * m. */
void aggregate_server_step(aggregator_kind k, float *global, const float *avg, float *momentum, float beta,
                           float server_lr, size_t n);

#endif
