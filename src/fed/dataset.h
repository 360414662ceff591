/* MNIST-format data sets in memory: locating the files, loading, image transforms,
 * client partitions and the evaluation sets of the paper. */
#ifndef FED_DATASET_H
#define FED_DATASET_H

#include <stddef.h>
#include <stdint.h>

#define NUM_CLASSES 10

typedef struct {
    int n; /* samples */
    int rows, cols;
    int dim;    /* rows*cols */
    float *x;   /* n*dim, pixels scaled to [0,1] */
    uint8_t *y; /* n labels in 0..9 */
} dataset;

typedef struct {
    char train_images[1024], train_labels[1024], test_images[1024], test_labels[1024];
} data_paths;

/* Finds the four files in dir by the usual MNIST names; fields already set are kept
 * (explicit overrides). Returns 0, or -1 with a message naming what is missing. */
int data_find_files(const char *dir, data_paths *p, char *err, size_t errlen);

/* Loads an image file and its label file; checks counts agree and labels are 0..9.
 * max_items > 0 loads only the first max_items samples (reading stops there). */
int dataset_load(const char *images, const char *labels, uint32_t max_items, dataset *out, char *err, size_t errlen);
void dataset_free(dataset *d);

/* ---- transforms (the paper's Table I) ------------------------------------------------ */
typedef enum { TF_IDENTITY, TF_ROT90, TF_ROT180, TF_ROT270, TF_HFLIP, TF_VFLIP, TF_COUNT } transform_id;
const char *transform_name(int t);
/* perm[i] = source pixel of output pixel i; rotations need square images. */
void transform_perm(int t, int rows, int cols, int *perm);
void transform_apply(int t, int rows, int cols, const float *in, float *out);

/* New data set made of src[idx[k]] with transform t[k] applied (t == NULL: identity). */
int dataset_gather(const dataset *src, const int *idx, const int *tf, int n, dataset *out);

/* ---- partitions ------------------------------------------------------------------------ */
typedef enum { PART_PAPER, PART_IID, PART_DIRICHLET } partition_kind;
typedef struct {
    partition_kind kind;
    double alpha; /* dirichlet only */
} partition_spec;
int partition_parse(const char *s, partition_spec *out);

typedef struct {
    int n;
    int *idx;      /* indices into the training set */
    int transform; /* applied to every sample of this client */
} client_shard;

/* Splits n_train samples among nclients; deterministic in seed. Shards are disjoint.
 * paper: equal shards, client c gets transform c % 6. iid: equal shards, identity.
 * dirichlet: per-class proportions ~ Dir(alpha), identity. */
int partition_make(const partition_spec *spec, const dataset *train, int nclients, uint64_t seed, client_shard *shards,
                   char *err, size_t errlen);
void partition_free(client_shard *shards, int nclients);

/* Test set split into six equal consecutive parts, part k transformed with transform k. */
int dataset_transformed_test(const dataset *test, dataset *out);
/* Whole test set with one transform. */
int dataset_with_transform(const dataset *src, int t, dataset *out);

#endif
