/* Fuzz target for fedtrain's command line (src/fed/config.c: config_parse): the input is an argv
 * after the program name, its words separated by NUL bytes. Every command line must be taken
 * (status 0, or 1 for --help/--version) or refused with status 2 and a message; nothing may
 * crash, read past a word or leave a string field unterminated.
 *
 * libFuzzer: scripts/fuzz.sh fed_args 60 (clang; fuzz/README.md; -close_fd_mask=3 silences the
 * refusals and usage config_parse prints, not libFuzzer's reports). Without FUZZ_LIBFUZZER the
 * standalone driver replays files (ctest: fuzz_smoke_fed_args). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[130];
    int argc = 0;
    argv[argc++] = "fedtrain";
    for (size_t i = 0; i <= size && argc < 128;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;
    fed_config c;
    int rc = config_parse(argc, argv, &c);
    if (rc < 0 || rc > 2) abort();
    free(text);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_fed_args"
#include "driver.h"
