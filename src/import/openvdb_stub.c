/* openvdb_to_nanovdb without OpenVDB (src/import/openvdb.cpp is built when libopenvdb-dev is
 * found: CMake option CAUSTIC_OPENVDB). */
#include <stdio.h>

#include "import/import.h"

int openvdb_to_nanovdb(const char *path, const char *grid_name, unsigned char **data, size_t *n, char *err,
                       size_t errlen) {
    (void)grid_name;
    *data = NULL;
    *n = 0;
    snprintf(err, errlen, "%s: caustic was built without OpenVDB (libopenvdb-dev): convert the .vdb to .nvdb", path);
    return -1;
}
