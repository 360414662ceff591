/* Each transform is a permutation of pixels; rot90 four times, rot90∘rot270, and each flip
 * twice are the identity; rot180 equals hflip∘vflip. */
#include "check.h"
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#define N 28

static int is_permutation(const int *p, int n) {
    int *seen = calloc((size_t)n, sizeof(int));
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]]++) ok = 0;
    }
    free(seen);
    return ok;
}

int main(void) {
    int perm[N * N];
    for (int t = 0; t < TF_COUNT; t++) {
        transform_perm(t, N, N, perm);
        CHECK(is_permutation(perm, N * N));
        int identity = 1;
        for (int i = 0; i < N * N; i++) identity &= perm[i] == i;
        CHECK(identity == (t == TF_IDENTITY));
    }
    float img[N * N], a[N * N], b[N * N];
    for (int i = 0; i < N * N; i++) img[i] = (float)i;
    memcpy(a, img, sizeof a);
    for (int k = 0; k < 4; k++) {
        transform_apply(TF_ROT90, N, N, a, b);
        memcpy(a, b, sizeof a);
        if (k < 3) CHECK(memcmp(a, img, sizeof a) != 0);
    }
    CHECK(memcmp(a, img, sizeof a) == 0);
    transform_apply(TF_ROT90, N, N, img, a);
    transform_apply(TF_ROT270, N, N, a, b);
    CHECK(memcmp(b, img, sizeof b) == 0);
    for (int t = TF_HFLIP; t <= TF_VFLIP; t++) {
        transform_apply(t, N, N, img, a);
        transform_apply(t, N, N, a, b);
        CHECK(memcmp(b, img, sizeof b) == 0);
    }
    transform_apply(TF_HFLIP, N, N, img, a);
    transform_apply(TF_VFLIP, N, N, a, b);
    transform_apply(TF_ROT180, N, N, img, a);
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* clockwise: the top-left pixel moves to the top-right corner */
    transform_apply(TF_ROT90, N, N, img, a);
    CHECK(a[N - 1] == img[0]);
    transform_apply(TF_HFLIP, N, N, img, a);
    CHECK(a[0] == img[N - 1]);
    CHECK(strcmp(transform_name(TF_ROT270), "rot270") == 0);
    CHECK_DONE();
}
