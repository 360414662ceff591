#define _POSIX_C_SOURCE 200809L
/* IDX loader: good raw and gzip files load; malformed ones fail with a message naming the file. */
#include "check.h"
#include "dataset.h"
#include "idx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/fedtest-idx-XXXXXX";

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static void write_raw(const char *name, const uint8_t *d, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(d, 1, n, f);
    fclose(f);
}

static void write_gz(const char *name, const uint8_t *d, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gzFile f = gzopen(path, "wb");
    gzwrite(f, d, (unsigned)n);
    gzclose(f);
}

/* images: count x 4 x 4 */
static size_t make_images(uint8_t *b, uint32_t count, uint32_t declared) {
    b[0] = 0; b[1] = 0; b[2] = 8; b[3] = 3;
    be32(b + 4, declared);
    be32(b + 8, 4);
    be32(b + 12, 4);
    for (uint32_t i = 0; i < count * 16; i++) b[16 + i] = (uint8_t)(i * 3);
    return 16 + (size_t)count * 16;
}

static int load_fails_with(const char *name, int ndims, const char *needle) {
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    idx_array a;
    int rc = idx_load(path, ndims, &a, err, sizeof err);
    if (rc == 0) {
        idx_free(&a);
        fprintf(stderr, "  %s loaded but should fail\n", name);
        return 0;
    }
    if (!strstr(err, name) || !strstr(err, needle)) {
        fprintf(stderr, "  %s: message '%s' lacks file name or '%s'\n", name, err, needle);
        return 0;
    }
    return 1;
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    uint8_t buf[4096];
    size_t n = make_images(buf, 5, 5);
    write_raw("good-images.idx3", buf, n);
    write_gz("good-images.idx3.gz", buf, n);
    uint8_t lab[8 + 5] = {0, 0, 8, 1, 0, 0, 0, 5, 1, 2, 3, 4, 9};
    write_raw("good-labels.idx1", lab, sizeof lab);

    char path[256], err[512];
    idx_array a;
    snprintf(path, sizeof path, "%s/good-images.idx3", dir);
    CHECK(idx_load(path, 3, &a, err, sizeof err) == 0);
    CHECK(a.count == 5 && a.rows == 4 && a.cols == 4 && a.data[17] == 51);
    idx_free(&a);
    snprintf(path, sizeof path, "%s/good-images.idx3.gz", dir);
    CHECK(idx_load(path, 3, &a, err, sizeof err) == 0);
    CHECK(a.count == 5 && a.data[79] == (uint8_t)(79 * 3));
    idx_free(&a);

    /* dataset_load scales pixels and checks labels */
    dataset d;
    char ip[256], lp[256];
    snprintf(ip, sizeof ip, "%s/good-images.idx3.gz", dir);
    snprintf(lp, sizeof lp, "%s/good-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, &d, err, sizeof err) == 0);
    CHECK(d.n == 5 && d.dim == 16 && d.y[4] == 9);
    CHECK_NEAR(d.x[1], 3.0 / 255.0, 1e-7);
    dataset_free(&d);

    /* malformed files */
    uint8_t bad[4096];
    memcpy(bad, buf, n);
    bad[2] = 0x0D; /* float element type */
    write_raw("type-images.idx3", bad, n);
    CHECK(load_fails_with("type-images.idx3", 3, "unsigned byte"));
    memcpy(bad, buf, n);
    bad[0] = 0x1f;
    write_raw("magic-images.idx3", bad, n);
    CHECK(load_fails_with("magic-images.idx3", 3, "magic"));
    write_raw("trunc-images.idx3", buf, n - 7);
    CHECK(load_fails_with("trunc-images.idx3", 3, "truncated"));
    write_gz("trunc-images.idx3.gz", buf, n - 7);
    CHECK(load_fails_with("trunc-images.idx3.gz", 3, "truncated"));
    write_raw("short-header.idx3", buf, 10);
    CHECK(load_fails_with("short-header.idx3", 3, "header"));
    memcpy(bad, buf, n);
    bad[n] = 1;
    write_raw("trailing-images.idx3", bad, n + 1);
    CHECK(load_fails_with("trailing-images.idx3", 3, "trailing"));
    CHECK(load_fails_with("good-labels.idx1", 3, "dimensions")); /* labels given as images */
    memcpy(bad, buf, n);
    be32(bad + 4, 0);
    write_raw("zero-images.idx3", bad, 16);
    CHECK(load_fails_with("zero-images.idx3", 3, "count"));
    memcpy(bad, buf, n);
    be32(bad + 8, 100000);
    write_raw("huge-images.idx3", bad, n);
    CHECK(load_fails_with("huge-images.idx3", 3, "size"));
    CHECK(load_fails_with("missing-file.idx3", 3, "cannot open"));
    /* corrupt gzip: valid gzip header, garbage body */
    uint8_t gzbad[64] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    for (int i = 10; i < 64; i++) gzbad[i] = (uint8_t)(i * 37);
    write_raw("corrupt-images.idx3.gz", gzbad, sizeof gzbad);
    CHECK(load_fails_with("corrupt-images.idx3.gz", 3, ""));

    /* count mismatch and bad label value */
    uint8_t lab4[8 + 4] = {0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3, 4};
    write_raw("four-labels.idx1", lab4, sizeof lab4);
    snprintf(lp, sizeof lp, "%s/four-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, &d, err, sizeof err) != 0 && strstr(err, "labels"));
    uint8_t lab10[8 + 5] = {0, 0, 8, 1, 0, 0, 0, 5, 1, 2, 3, 4, 10};
    write_raw("ten-labels.idx1", lab10, sizeof lab10);
    snprintf(lp, sizeof lp, "%s/ten-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, &d, err, sizeof err) != 0 && strstr(err, "outside 0..9"));

    /* file discovery by name pattern, explicit override kept */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/set", dir);
    {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "mkdir -p %s && touch %s/train-images-idx3-ubyte.gz %s/train-labels-idx1-ubyte.gz "
                 "%s/t10k-images-idx3-ubyte.gz %s/t10k-labels-idx1-ubyte.gz %s/t10k-labels-idx1-ubyte",
                 sub, sub, sub, sub, sub, sub);
        CHECK(system(cmd) == 0);
    }
    data_paths p;
    memset(&p, 0, sizeof p);
    snprintf(p.test_images, sizeof p.test_images, "/explicit/test-images");
    CHECK(data_find_files(sub, &p, err, sizeof err) == 0);
    CHECK(strstr(p.train_images, "train-images-idx3-ubyte.gz") != NULL);
    CHECK(strcmp(p.test_images, "/explicit/test-images") == 0);
    CHECK(strstr(p.test_labels, "t10k-labels-idx1-ubyte") && !strstr(p.test_labels, ".gz"));
    memset(&p, 0, sizeof p);
    CHECK(data_find_files(dir, &p, err, sizeof err) != 0 && strstr(err, "train-images") != NULL);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    CHECK_DONE();
}
