#ifndef FED_REPORT_H
#define FED_REPORT_H
#include "config.h"
/* fedtrain report RUN_DIR: draws the paper's figures as PNG with gnuplot into RUN_DIR/figures. */
int run_report(fed_config *cfg);
#endif
