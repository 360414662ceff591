/* Standalone driver shared by the fuzz targets: built without libFuzzer (any compiler), it runs
 * LLVMFuzzerTestOneInput once on each file named, or on every file in each directory named, so
 * ctest can replay a corpus as a smoke test. Exits 1 if an input was unreadable or none ran.
 * Include it at the end of a target after defining FUZZ_DRIVER_NAME. */
#ifndef CAUSTIC_FUZZ_DRIVER_H
#define CAUSTIC_FUZZ_DRIVER_H
#if !defined(CAUSTIC_LIBFUZZER) && !defined(FUZZ_LIBFUZZER)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", FUZZ_DRIVER_NAME, path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            fclose(f);
            return -1;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, errors = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: %s: not found\n", FUZZ_DRIVER_NAME, argv[i]);
            ++errors;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            errors += run_file(argv[i]) != 0;
            ++files;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            ++errors;
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            errors += run_file(path) != 0;
            ++files;
        }
        closedir(d);
    }
    printf("%s: ran %d inputs, %d unreadable\n", FUZZ_DRIVER_NAME, files, errors);
    return errors || files == 0 ? 1 : 0;
}
#endif
#endif
