/* caustic serve in a build without CivetWeb: says what it needs. */
#include <stdio.h>

#include "cli.h"
#include "view.h"

int cmd_serve(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "caustic serve needs libcivetweb-dev (Debian: apt-get install libcivetweb-dev; scripts/deps.sh "
                    "installs it), then a rebuild: this caustic was built without it\n");
    return EXIT_USAGE;
}
