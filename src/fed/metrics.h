/* Classification metrics from a confusion matrix: accuracy, per-class precision, recall,
 * F1 and support, and macro / micro / weighted averages. */
#ifndef FED_METRICS_H
#define FED_METRICS_H

#include <stdint.h>

#define MET_CLASSES 10

typedef struct {
    long cm[MET_CLASSES][MET_CLASSES]; /* cm[true][predicted] */
    long n;
} confusion;

typedef struct {
    double accuracy;
    double precision[MET_CLASSES], recall[MET_CLASSES], f1[MET_CLASSES];
    long support[MET_CLASSES];
    double macro_precision, macro_recall, macro_f1;
    double micro_f1; /* equals accuracy for single-label classification */
    double weighted_f1;
} class_metrics;

void confusion_build(confusion *c, const uint8_t *truth, const uint8_t *pred, int n);
/* Classes with no predictions (or no samples) get precision (recall) 0, as scikit-learn does. */
void metrics_compute(const confusion *c, class_metrics *m);
/* Row-normalised matrix: each true-class row sums to 1 (rows without samples stay 0). */
void confusion_normalize(const confusion *c, double out[MET_CLASSES][MET_CLASSES]);

#endif
