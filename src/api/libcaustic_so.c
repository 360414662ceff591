/* libcaustic.so is the whole libcaustic archive (linked in whole, CMakeLists.txt) with only the
 * caustic_* symbols exported (libcaustic.map); a shared library needs one source of its own. */
#include "caustic.h"

typedef int caustic_so_unit;
