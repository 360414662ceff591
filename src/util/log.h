/* The library's one channel for messages that are not errors of the call that meets them
 * (a GPU that hands over to the CPU, a film that could not be read back, profiles): they go to
 * the callback the caller set with caustic_set_log, or nowhere. The library never prints. */
#ifndef CAUSTIC_UTIL_LOG_H
#define CAUSTIC_UTIL_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

/* One line (printf-style, no trailing newline). */
void lib_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The callback set with caustic_set_log (NULL: none) and its user pointer. */
typedef void (*lib_log_fn)(void *user, const char *message);
lib_log_fn lib_log_get(void **user);

#ifdef __cplusplus
}
#endif
#endif
