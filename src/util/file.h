/* Files as the library reads and writes them: a whole regular file into memory, a file replaced
 * atomically (temporary + rename), and the one error format, "PATH:LINE: problem". */
#ifndef CAUSTIC_UTIL_FILE_H
#define CAUSTIC_UTIL_FILE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The whole file, NUL-terminated (it may hold NULs itself: *size says how long it is). stat
 * comes first: opening a FIFO blocks and a device (/dev/zero) never ends. Files larger than max
 * bytes are refused. On failure NULL, with the problem, without the path, in why ("cannot open:
 * No such file or directory", "not a regular file", "file too large (N bytes, at most M)", "out
 * of memory", "read error"). */
char *file_read_all(const char *path, long long max, size_t *size, char *why, size_t whylen);

/* Opens path for reading ("rb") only where it is a regular file: a FIFO is opened without
 * blocking and refused, as is a device (/dev/zero, which never ends) or a directory; files larger
 * than max bytes (max > 0) are refused. NULL on failure, with the problem, without the path, in
 * why ("cannot open: REASON", "not a regular file", "file too large (N bytes, at most M)"). */
FILE *file_open_regular(const char *path, long long max, char *why, size_t whylen);

/* Replaces path atomically: `write` fills a temporary file next to it (PATH.tmp.PID; it returns 0,
 * or nonzero with its own message in err), which is then flushed, synced and renamed over path.
 * On any failure path is untouched, the temporary removed, and err holds the writer's message or
 * "PATH: <what>: <reason>" (what: e.g. "cannot write checkpoint"). */
typedef int (*file_write_fn)(FILE *f, void *user, char *err, size_t errlen);
int file_write_atomic(const char *path, const char *what, file_write_fn write, void *user, char *err, size_t errlen);
/* Removes PATH.tmp.PID files that file_write_atomic of a process that no longer exists left
 * behind (killed mid-write); file_write_atomic calls it. Returns how many it removed. */
int file_remove_stale_temps(const char *path);

/* Before a long job: can path be written (replaced atomically) later? Its directory must exist
 * and be writable, and path must not be a directory. 0, or -1 with "PATH: <what>: <reason>". */
int file_check_writable(const char *path, const char *what, char *err, size_t errlen);

/* The parsers' error line: "PATH:LINE: problem" ("PATH: problem" for line 0), made one printable
 * line whatever the path holds. err may be NULL (errlen 0). Returns -1, for `return file_error(...)`. */
int file_error(char *err, size_t errlen, const char *path, size_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
int file_error_v(char *err, size_t errlen, const char *path, size_t line, const char *fmt, va_list ap);

/* The 1-based line of text on which `at` lies. */
size_t text_line_at(const char *text, const char *at);

#endif
