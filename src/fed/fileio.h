/* File helpers: atomic writes (temp file + rename), whole-file reads, mkdir -p, clock. */
#ifndef FED_FILEIO_H
#define FED_FILEIO_H

#include <stddef.h>

double now_seconds(void);
int mkdir_p(const char *path, char *err, size_t errlen);
/* Writes data to path.tmp.PID, fsyncs, renames over path: readers never see a partial file. */
int write_file_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen);
/* Files read whole (checkpoints, the run's CSV and JSON) are at most this large. */
#define FED_READ_MAX (256LL << 20)
/* Returns a NUL-terminated malloc'd buffer, or NULL (errno set) if the file cannot be read: not
 * there, not a regular file (EINVAL: a FIFO or device is refused without blocking), larger than
 * FED_READ_MAX (EFBIG). */
char *read_file(const char *path, size_t *n);
int file_exists(const char *path);

/* Growable text buffer, e.g. a CSV log that is rewritten atomically after every row. */
typedef struct {
    char *s;
    size_t len, cap;
} textbuf;
int tb_printf(textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tb_free(textbuf *t);

/* CSV log kept in memory and rewritten atomically: a crash never leaves a torn row. */
typedef struct {
    char path[1100];
    textbuf buf;
} csvlog;
/* Starts the log with header. When keep_upto >= 0 and the file exists, rows whose first
 * column (round or epoch) is <= keep_upto are kept: that is how --resume drops rows of a
 * round that was not checkpointed. */
int csvlog_open(csvlog *l, const char *path, const char *header, long keep_upto);
int csvlog_flush(csvlog *l, char *err, size_t errlen);
void csvlog_close(csvlog *l);

#endif
