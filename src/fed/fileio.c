#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mkdir_p(const char *path, char *err, size_t errlen) {
    char tmp[1024];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "%s: cannot create directory: %s", tmp, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", path);
        return -1;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    const char *p = data;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: rename failed: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

char *read_file(const char *path, size_t *n) {
    /* a regular file of at most FED_READ_MAX bytes: a FIFO would block the open (O_NONBLOCK, then
     * refused), /dev/zero never ends */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    int why = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : st.st_size > FED_READ_MAX ? EFBIG : 0;
    if (why) {
        close(fd);
        errno = why;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (buf) len = fread(buf, 1, cap - 1, f);
    int bad = ferror(f) || fgetc(f) != EOF; /* grew while read: refused */
    fclose(f);
    if (!buf || bad) {
        free(buf);
        errno = buf ? EIO : ENOMEM;
        return NULL;
    }
    buf[len] = 0;
    if (n) *n = len;
    return buf;
}

int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int tb_printf(textbuf *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return -1;
    if (t->len + (size_t)need + 1 > t->cap) {
        size_t nc = t->cap ? t->cap : 4096;
        while (nc < t->len + (size_t)need + 1) nc *= 2;
        char *ns = realloc(t->s, nc);
        if (!ns) return -1;
        t->s = ns;
        t->cap = nc;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)need;
    return 0;
}

void tb_free(textbuf *t) {
    free(t->s);
    memset(t, 0, sizeof *t);
}

int csvlog_open(csvlog *l, const char *path, const char *header, long keep_upto) {
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    if (tb_printf(&l->buf, "%s\n", header) != 0) return -1;
    if (keep_upto < 0) return 0;
    char *old = read_file(path, NULL);
    if (!old) return 0;
    char *line = strchr(old, '\n'); /* skip the old header */
    while (line && *++line) {
        char *end = strchr(line, '\n');
        if (!end) break; /* a row without newline was torn: drop it */
        *end = 0;
        char *after;
        long step = strtol(line, &after, 10);
        if (after != line && step <= keep_upto) tb_printf(&l->buf, "%s\n", line);
        line = end;
    }
    free(old);
    return 0;
}

int csvlog_flush(csvlog *l, char *err, size_t errlen) {
    return write_file_atomic(l->path, l->buf.s, l->buf.len, err, errlen);
}

void csvlog_close(csvlog *l) { tb_free(&l->buf); }
