/* Fuzz target for the command line of `caustic render` (src/cli/options.c, src/cli/args.c) and
 * the -D overrides it hands the scene loader (src/scene/scene_load.c): the input is an argv,
 * its words separated by NUL bytes. Every word goes through the option parser (--opt=value,
 * --opt value, -DPATH=V, did-you-mean); every value through the number, size and name parsers
 * the render command uses; every -D override is applied to the built-in Cornell box's JSON and
 * the scene read; and the help, man page and completion are generated once.
 *
 * libFuzzer: scripts/fuzz.sh args 60 (clang; fuzz/README.md). Without CAUSTIC_LIBFUZZER the
 * standalone driver replays files (ctest's fuzz_smoke_args).
 *
 * Each input must parse or fail with a one-line message; nothing may crash or leak. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "caustic.h"
#include "cli/args.h"
#include "cli/options.h"
#include "import/import.h"
#include "scene/scene.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef CAUSTIC_LIBFUZZER
/* linked with the scene sources alone (scripts/fuzz.sh): the one entry of src/api options.c needs */
const char *const *caustic_builtin_scenes(void) { return scene_builtin_names(); }
#endif

static void one_line(const char *m) {
    if (!m[0] || strchr(m, '\n')) abort(); /* messages are one non-empty line */
}
static void drop_warning(void *user, const char *msg) {
    (void)user;
    one_line(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int generated;
    if (!generated) { /* the generated documents, once (they do not depend on the input) */
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            cli_print_render_help(null, 80);
            cli_print_main_help(null, 80);
            cli_print_man(null, "fuzz");
            cli_print_bash_completion(null);
            fclose(null);
        }
        generated = 1;
    }
    if (size > 4096) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[257];
    int argc = 0;
    for (size_t i = 0; i <= size && argc < 256;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;
    const char *defines[8];
    int ndefines = 0;
    for (int i = 0; i < argc;) {
        const cli_option *o;
        const char *v;
        char err[512];
        int before = i;
        int kind = cli_next(cli_render_options, argc, argv, &i, &o, &v, err, sizeof err);
        if (i <= before && kind >= 0) abort(); /* the parser always moves on */
        if (kind < 0) {
            one_line(err);
            break;
        }
        if (kind == 0 || !v) continue;
        long n;
        double d;
        int w, h;
        (void)parse_int(v, 0, 1 << 30, &n);
        (void)parse_double(v, -1e6, 1e6, &d);
        (void)parse_size(v, 1, 16384, &w, &h);
        (void)has_image_extension(v);
        const char *names[] = {"cornell", "cornell-glass", "rtow", NULL};
        (void)cli_did_you_mean(v, names);
        if (!strcmp(o->name, "-D") && ndefines < 8) defines[ndefines++] = v;
    }
    if (ndefines > 0) {
        scene *s = NULL;
        char err[1024];
        scene_load_opts so = {0, drop_warning, NULL, NULL, 0, defines, ndefines, NULL};
        if (scene_load_json_text_opts(&s, scene_builtin_json("cornell"), "builtin:cornell", NULL, &so, err,
                                      sizeof err) == 0)
            scene_destroy(s);
        else
            one_line(err);
    }
    free(text);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_args"
#include "driver.h"
