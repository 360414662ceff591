#include "metrics.h"

#include <string.h>

void confusion_build(confusion *c, const uint8_t *truth, const uint8_t *pred, int n) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n; i++) {
        if (truth[i] < MET_CLASSES && pred[i] < MET_CLASSES) {
            c->cm[truth[i]][pred[i]]++;
            c->n++;
        }
    }
}

void metrics_compute(const confusion *c, class_metrics *m) {
    memset(m, 0, sizeof *m);
    long diag = 0;
    int present = 0;
    for (int k = 0; k < MET_CLASSES; k++) {
        long tp = c->cm[k][k], row = 0, col = 0;
        for (int j = 0; j < MET_CLASSES; j++) {
            row += c->cm[k][j];
            col += c->cm[j][k];
        }
        diag += tp;
        m->support[k] = row;
        m->precision[k] = col ? (double)tp / col : 0.0;
        m->recall[k] = row ? (double)tp / row : 0.0;
        double pr = m->precision[k] + m->recall[k];
        m->f1[k] = pr > 0 ? 2.0 * m->precision[k] * m->recall[k] / pr : 0.0;
        /* Macro averages over classes that occur in truth or predictions, like scikit-learn
         * does over the label set present. */
        if (row || col) {
            present++;
            m->macro_precision += m->precision[k];
            m->macro_recall += m->recall[k];
            m->macro_f1 += m->f1[k];
        }
        m->weighted_f1 += m->f1[k] * row;
    }
    if (present) {
        m->macro_precision /= present;
        m->macro_recall /= present;
        m->macro_f1 /= present;
    }
    m->accuracy = c->n ? (double)diag / c->n : 0.0;
    m->micro_f1 = m->accuracy;
    m->weighted_f1 = c->n ? m->weighted_f1 / c->n : 0.0;
}

void confusion_normalize(const confusion *c, double out[MET_CLASSES][MET_CLASSES]) {
    for (int k = 0; k < MET_CLASSES; k++) {
        long row = 0;
        for (int j = 0; j < MET_CLASSES; j++) row += c->cm[k][j];
        for (int j = 0; j < MET_CLASSES; j++) out[k][j] = row ? (double)c->cm[k][j] / row : 0.0;
    }
}
