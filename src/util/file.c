/* util/file.h: whole-file reading, atomic replacement, the error-line format. */
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"

FILE *file_open_regular(const char *path, long long max, char *why, size_t whylen) {
    /* O_NONBLOCK: opening a FIFO without a writer returns at once (then refused below) */
    int fd = path && *path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd < 0) {
        snprintf(why, whylen, "cannot open: %s", path && *path ? strerror(errno) : "empty path");
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "not a regular file");
        close(fd);
        return NULL;
    }
    if (max > 0 && (long long)st.st_size > max) {
        snprintf(why, whylen, "file too large (%lld bytes, at most %lld)", (long long)st.st_size, max);
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        close(fd);
    }
    return f;
}

char *file_read_all(const char *path, long long max, size_t *size, char *why, size_t whylen) {
    FILE *f = file_open_regular(path, max, why, whylen);
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *text = malloc(n + 1);
    if (!text) {
        fclose(f);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    size_t got = fread(text, 1, n, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || got != n) {
        free(text);
        snprintf(why, whylen, "read error");
        return NULL;
    }
    text[n] = '\0';
    *size = n;
    return text;
}

/* path's directory ("." for a bare name) into dir, and where its file name starts. */
static const char *split_dir(const char *path, char *dir, size_t n) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, n, ".");
        return path;
    }
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    snprintf(dir, n, "%.*s", (int)len, path);
    return slash + 1;
}

int file_remove_stale_temps(const char *path) {
    char dir[4096];
    const char *base = split_dir(path, dir, sizeof dir);
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        /* BASE.tmp.PID, PID all digits, of a process that is gone (kill 0: ESRCH) */
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp.", 5) != 0) continue;
        const char *digits = n + blen + 5;
        char *end;
        errno = 0;
        long pid = strtol(digits, &end, 10);
        if (digits[0] < '0' || digits[0] > '9' || *end || errno || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", dir, n);
        removed += remove(full) == 0;
    }
    closedir(d);
    return removed;
}

int file_check_writable(const char *path, const char *what, char *err, size_t errlen) {
    char dir[4096];
    split_dir(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return file_error(err, errlen, path, 0, "%s: directory %s: %s", what, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return file_error(err, errlen, path, 0, "%s: %s is not a directory", what, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return file_error(err, errlen, path, 0, "%s: directory %s: %s", what, dir, strerror(errno));
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return file_error(err, errlen, path, 0, "%s: is a directory", what);
    return 0;
}

int file_write_atomic(const char *path, const char *what, file_write_fn write, void *user, char *err, size_t errlen) {
    file_remove_stale_temps(path);
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    if (!tmp) return file_error(err, errlen, path, 0, "%s: out of memory", what);
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(tmp);
        return file_error(err, errlen, path, 0, "%s: %s", what, strerror(e));
    }
    if (err && errlen) err[0] = '\0';
    errno = 0;
    int rc = write(f, user, err, errlen);
    int e = 0;
    if (rc != 0 && !(err && errlen && err[0])) e = errno ? errno : EIO; /* a writer without a message */
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)) {
        e = errno ? errno : EIO;
        rc = -1;
    }
    if (fclose(f) != 0 && rc == 0) {
        e = errno ? errno : EIO;
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        e = errno;
        rc = -1;
    }
    if (rc != 0) {
        remove(tmp);
        if (e) file_error(err, errlen, path, 0, "%s: %s", what, strerror(e));
    }
    free(tmp);
    return rc ? -1 : 0;
}

int file_error_v(char *err, size_t errlen, const char *path, size_t line, const char *fmt, va_list ap) {
    if (!err || !errlen) return -1;
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (line)
        snprintf(err, errlen, "%s:%zu: %s", path, line, msg);
    else
        snprintf(err, errlen, "%s: %s", path, msg);
    text_one_line(err);
    return -1;
}

int file_error(char *err, size_t errlen, const char *path, size_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    file_error_v(err, errlen, path, line, fmt, ap);
    va_end(ap);
    return -1;
}

size_t text_line_at(const char *text, const char *at) {
    size_t line = 1;
    for (const char *c = text; c < at; ++c) line += *c == '\n';
    return line;
}
