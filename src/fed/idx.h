/* Reader for IDX files (the MNIST format), plain or gzip-compressed.
 *
 * Memory is bounded by what the input holds: the size the header claims is checked against the
 * bytes available before anything is allocated (a raw file must be exactly header + data; a
 * gzip file cannot inflate to more than IDX_GZ_MAX_RATIO times its compressed size), gzip data
 * is inflated incrementally into a buffer that grows only as decoded bytes arrive, and reading
 * stops after max_items items. */
#ifndef FED_IDX_H
#define FED_IDX_H

#include <stddef.h>
#include <stdint.h>

/* deflate's best case is 1032:1; a claim beyond that cannot be backed by the file */
#define IDX_GZ_MAX_RATIO 1032u

typedef struct {
    uint32_t count;    /* items loaded (<= declared when max_items cut it) */
    uint32_t declared; /* items the header declares */
    uint32_t rows;     /* 1 for label files */
    uint32_t cols;     /* 1 for label files */
    uint8_t *data;     /* count*rows*cols bytes */
} idx_array;

/* Loads an unsigned-byte IDX file with `ndims` dimensions (3 for images, 1 for labels).
 * Validates magic, dimensions, that the data length matches exactly and, for gzip, the stream's
 * integrity and that nothing but further gzip members follows it. max_items > 0 keeps only the
 * first max_items items and stops reading there (a gzip file's remainder is then not checked).
 * Returns 0 on success; otherwise writes a message naming the file into err. */
int idx_load(const char *path, int ndims, uint32_t max_items, idx_array *out, char *err, size_t errlen);
/* The same on a file image in memory; `name` is used in messages (fuzzing, tests). */
int idx_load_mem(const char *name, const uint8_t *bytes, size_t len, int ndims, uint32_t max_items, idx_array *out,
                 char *err, size_t errlen);
void idx_free(idx_array *a);

#endif
