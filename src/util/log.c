/* caustic_set_log and the library's log channel (util/log.h). */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "caustic.h"

static caustic_log_fn log_fn;
static void *log_user;

void caustic_set_log(caustic_log_fn fn, void *user) {
    log_fn = fn;
    log_user = user;
}

lib_log_fn lib_log_get(void **user) {
    if (user) *user = log_user;
    return log_fn;
}

void lib_log(const char *fmt, ...) {
    if (!log_fn) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_fn(log_user, line);
}
