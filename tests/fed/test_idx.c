#define _POSIX_C_SOURCE 200809L
/* IDX loader: good raw and gzip files load; malformed ones fail with a message naming the file. */
#include "check.h"
#include "dataset.h"
#include "fileio.h"
#include "idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/fedtest-idx-XXXXXX";

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
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
    b[0] = 0;
    b[1] = 0;
    b[2] = 8;
    b[3] = 3;
    be32(b + 4, declared);
    be32(b + 8, 4);
    be32(b + 12, 4);
    for (uint32_t i = 0; i < count * 16; i++) b[16 + i] = (uint8_t)(i * 3);
    return 16 + (size_t)count * 16;
}

static char err_last[512]; /* load_fails_with's message */

static int load_fails_with(const char *name, int ndims, const char *needle) {
    char path[256], *err = err_last;
    err[0] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    idx_array a;
    int rc = idx_load(path, ndims, 0, &a, err, sizeof err_last);
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

    char path[256], err[512], cmd2[1024];
    idx_array a;
    snprintf(path, sizeof path, "%s/good-images.idx3", dir);
    CHECK(idx_load(path, 3, 0, &a, err, sizeof err) == 0);
    CHECK(a.count == 5 && a.rows == 4 && a.cols == 4 && a.data[17] == 51);
    idx_free(&a);
    snprintf(path, sizeof path, "%s/good-images.idx3.gz", dir);
    CHECK(idx_load(path, 3, 0, &a, err, sizeof err) == 0);
    CHECK(a.count == 5 && a.data[79] == (uint8_t)(79 * 3));
    idx_free(&a);

    /* dataset_load scales pixels and checks labels */
    dataset d;
    char ip[256], lp[256];
    snprintf(ip, sizeof ip, "%s/good-images.idx3.gz", dir);
    snprintf(lp, sizeof lp, "%s/good-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, 0, &d, err, sizeof err) == 0);
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

    /* gzip: trailing garbage after the stream is refused; a second gzip member is data */
    {
        snprintf(path, sizeof path, "%s/good-images.idx3.gz", dir);
        FILE *g = fopen(path, "rb");
        uint8_t gzb[4096];
        size_t gn = fread(gzb, 1, sizeof gzb - 16, g);
        fclose(g);
        memcpy(gzb + gn, "garbage!", 8);
        write_raw("garbage-images.idx3.gz", gzb, gn + 8);
        CHECK(load_fails_with("garbage-images.idx3.gz", 3, "trailing garbage"));
        /* the same images split over two members */
        char p2[256];
        write_gz("part1.gz", buf, 40);
        write_gz("part2.gz", buf + 40, n - 40);
        snprintf(cmd2, sizeof cmd2, "cat %s/part1.gz %s/part2.gz > %s/two-members.idx3.gz", dir, dir, dir);
        CHECK(system(cmd2) == 0);
        snprintf(p2, sizeof p2, "%s/two-members.idx3.gz", dir);
        CHECK(idx_load(p2, 3, 0, &a, err, sizeof err) == 0 && a.count == 5 && a.data[79] == (uint8_t)(79 * 3));
        idx_free(&a);
    }

    /* max_items: only the first items are read and kept */
    snprintf(path, sizeof path, "%s/good-images.idx3.gz", dir);
    CHECK(idx_load(path, 3, 2, &a, err, sizeof err) == 0 && a.count == 2 && a.declared == 5 &&
          a.data[31] == (uint8_t)(31 * 3));
    idx_free(&a);
    CHECK(dataset_load(ip, lp, 3, &d, err, sizeof err) == 0 && d.n == 3 && d.y[2] == 3);
    dataset_free(&d);

    /* Claims checked against the bytes present before allocating. With the address space
     * limited to 1 GiB (not under ASan, which reserves terabytes of shadow), a reader that
     * allocates what the header claims fails with "out of memory" instead. */
#ifndef __SANITIZE_ADDRESS__
    struct rlimit rl_old, rl;
    CHECK(getrlimit(RLIMIT_AS, &rl_old) == 0);
    rl = rl_old;
    rl.rlim_cur = 1ul << 30;
    CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
#endif
    /* a 25-byte raw file whose header claims 5.5M 28x28 images (4.3 GB) */
    memset(bad, 0, 25);
    bad[2] = 8;
    bad[3] = 3;
    be32(bad + 4, 5500000);
    be32(bad + 8, 28);
    be32(bad + 12, 28);
    write_raw("claim-images.idx3", bad, 25);
    CHECK(load_fails_with("claim-images.idx3", 3, "holds only 9"));
    /* the same header gzipped: far more than 40-odd compressed bytes can inflate to */
    write_gz("claim-images.idx3.gz", bad, 25);
    CHECK(load_fails_with("claim-images.idx3.gz", 3, "can hold"));
    /* a real gzip bomb: 2,000,000 zero images (1.57 GB) in ~1.5 MB; the first 100 load */
    {
        snprintf(path, sizeof path, "%s/bomb-images.idx3.gz", dir);
        gzFile g = gzopen(path, "wb1");
        be32(bad + 4, 2000000);
        gzwrite(g, bad, 16);
        static uint8_t zeros[1 << 20];
        for (unsigned long long left = 2000000ull * 784; left > 0;) {
            unsigned k = left > sizeof zeros ? (unsigned)sizeof zeros : (unsigned)left;
            gzwrite(g, zeros, k);
            left -= k;
        }
        gzclose(g);
        CHECK(idx_load(path, 3, 100, &a, err, sizeof err) == 0 && a.count == 100 && a.declared == 2000000);
        idx_free(&a);
        /* without a limit it is a legitimate 1.57 GB (12 GB once converted and copied): over the
         * reader's 256 MiB cap, refused before any of it is decoded, with the way out named */
        CHECK(load_fails_with("bomb-images.idx3.gz", 3, "exceed the limit of 256 MiB"));
        CHECK(strstr(err_last, "--limit-train") && strstr(err_last, "FEDTRAIN_IDX_MAX_MB"));
    }
#ifndef __SANITIZE_ADDRESS__
    setrlimit(RLIMIT_AS, &rl_old);
#endif

    /* count mismatch and bad label value */
    uint8_t lab4[8 + 4] = {0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3, 4};
    write_raw("four-labels.idx1", lab4, sizeof lab4);
    snprintf(lp, sizeof lp, "%s/four-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, 0, &d, err, sizeof err) != 0 && strstr(err, "labels"));
    uint8_t lab10[8 + 5] = {0, 0, 8, 1, 0, 0, 0, 5, 1, 2, 3, 4, 10};
    write_raw("ten-labels.idx1", lab10, sizeof lab10);
    snprintf(lp, sizeof lp, "%s/ten-labels.idx1", dir);
    CHECK(dataset_load(ip, lp, 0, &d, err, sizeof err) != 0 && strstr(err, "outside 0..9"));

    /* file discovery by name pattern, explicit override kept */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/set", dir);
    {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s && touch %s/train-images-idx3-ubyte.gz %s/train-labels-idx1-ubyte.gz "
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

    /* inputs that are not regular files are refused at once: a FIFO without a writer (whose
     * open would block), a device that never ends */
    {
        char fifo[300];
        snprintf(fifo, sizeof fifo, "%s/fifo-images.idx3", dir);
        CHECK(mkfifo(fifo, 0600) == 0);
        CHECK(load_fails_with("fifo-images.idx3", 3, "not a regular file"));
        CHECK(idx_load("/dev/zero", 3, 0, &a, err, sizeof err) != 0 && strstr(err, "not a regular file"));
        size_t n = 0;
        CHECK(read_file(fifo, &n) == NULL && errno == EINVAL);
        CHECK(read_file("/dev/zero", &n) == NULL && errno == EINVAL);
    }

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    CHECK_DONE();
}
