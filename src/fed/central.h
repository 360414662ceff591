#ifndef FED_CENTRAL_H
#define FED_CENTRAL_H
#include "config.h"
/* Returns the process exit status (0, or 2 on bad input). */
int run_central(fed_config *cfg);
#endif
