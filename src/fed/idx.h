/* Reader for IDX files (the MNIST format), plain or gzip-compressed. */
#ifndef FED_IDX_H
#define FED_IDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t count;   /* first dimension */
    uint32_t rows;    /* 1 for label files */
    uint32_t cols;    /* 1 for label files */
    uint8_t *data;    /* count*rows*cols bytes */
} idx_array;

/* Loads an unsigned-byte IDX file with `ndims` dimensions (3 for images, 1 for labels).
 * Validates magic, dimensions and that the data length matches exactly.
 * Returns 0 on success; otherwise writes a message naming the file into err. */
int idx_load(const char *path, int ndims, idx_array *out, char *err, size_t errlen);
void idx_free(idx_array *a);

#endif
