/* Partitions: disjoint, equal where promised, deterministic in the seed, paper transforms. */
#include "check.h"
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
    dataset d = {0};
    d.n = 1203;
    d.rows = d.cols = 2;
    d.dim = 4;
    d.x = calloc((size_t)d.n * 4, sizeof(float));
    d.y = malloc((size_t)d.n);
    for (int i = 0; i < d.n; i++) d.y[i] = (uint8_t)(i % 10);
    char err[256];
    partition_spec sp;
    CHECK(partition_parse("paper", &sp) == 0 && sp.kind == PART_PAPER);
    CHECK(partition_parse("dirichlet:0.5", &sp) == 0 && sp.kind == PART_DIRICHLET && sp.alpha == 0.5);
    CHECK(partition_parse("dirichlet:-1", &sp) != 0);
    CHECK(partition_parse("dirichlet:", &sp) != 0);
    CHECK(partition_parse("noniid", &sp) != 0);

    const char *specs[] = {"paper", "iid", "dirichlet:0.3", "dirichlet:100"};
    for (int s = 0; s < 4; s++) {
        for (int nc = 1; nc <= 13; nc += 3) {
            partition_parse(specs[s], &sp);
            client_shard sh[13], sh2[13];
            int rc = partition_make(&sp, &d, nc, 42, sh, err, sizeof err);
            if (rc != 0) { /* dirichlet may legitimately leave a client empty */
                CHECK(sp.kind == PART_DIRICHLET);
                continue;
            }
            int *seen = calloc((size_t)d.n, sizeof(int));
            int total = 0, dup = 0;
            for (int c = 0; c < nc; c++) {
                total += sh[c].n;
                for (int i = 0; i < sh[c].n; i++) dup += seen[sh[c].idx[i]]++ != 0;
                if (sp.kind != PART_DIRICHLET) CHECK(sh[c].n == d.n / nc);
                CHECK(sh[c].transform == (sp.kind == PART_PAPER ? c % TF_COUNT : TF_IDENTITY));
            }
            CHECK(dup == 0);
            if (sp.kind == PART_DIRICHLET) CHECK(total == d.n);
            CHECK(partition_make(&sp, &d, nc, 42, sh2, err, sizeof err) == 0);
            for (int c = 0; c < nc; c++)
                CHECK(sh2[c].n == sh[c].n && memcmp(sh2[c].idx, sh[c].idx, sizeof(int) * (size_t)sh[c].n) == 0);
            partition_free(sh2, nc);
            partition_free(sh, nc);
            free(seen);
        }
    }
    /* small alpha gives skewed labels: most of a client's samples in few classes */
    partition_parse("dirichlet:0.1", &sp);
    client_shard sh[4];
    if (partition_make(&sp, &d, 4, 7, sh, err, sizeof err) == 0) {
        int cnt[10] = {0}, mx = 0;
        for (int i = 0; i < sh[0].n; i++) cnt[d.y[sh[0].idx[i]]]++;
        for (int k = 0; k < 10; k++)
            if (cnt[k] > mx) mx = cnt[k];
        CHECK(mx > sh[0].n / 5);
        partition_free(sh, 4);
    }
    CHECK(partition_make(&sp, &d, 5000, 1, sh, err, sizeof err) != 0 && strstr(err, "--clients"));

    /* transformed test set: six consecutive parts */
    dataset t = {0}, tt;
    t.n = 12;
    t.rows = t.cols = 2;
    t.dim = 4;
    t.x = malloc(sizeof(float) * 48);
    t.y = calloc(12, 1);
    for (int i = 0; i < 48; i++) t.x[i] = (float)(i % 4);
    CHECK(dataset_transformed_test(&t, &tt) == 0);
    CHECK(tt.x[0] == 0 && tt.x[1] == 1);                       /* part 0 identity */
    CHECK(tt.x[2 * 4 + 0] == 2.0f && tt.x[2 * 4 + 2] == 3.0f); /* part 1 rot90 clockwise */
    CHECK(tt.x[10 * 4 + 0] == 2.0f);                           /* part 5 vflip: (0,0) <- (1,0) */
    dataset_free(&tt);
    dataset_free(&t);
    dataset_free(&d);
    CHECK_DONE();
}
