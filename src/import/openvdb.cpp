// OpenVDB .vdb grids converted to NanoVDB on load: the one file that uses OpenVDB's C++ API
// (libopenvdb-dev) and nanovdb's converter (nanovdb/util/OpenToNanoVDB.h), behind the C
// interface openvdb_to_nanovdb (src/import/import.h). The caller (src/import/nvdb.c) checks and
// loads the NanoVDB grid's bytes as it does an .nvdb file's.
#include <openvdb/openvdb.h>
#include <openvdb/io/File.h>

#include <nanovdb/util/OpenToNanoVDB.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

extern "C" int openvdb_to_nanovdb(const char *path, const char *grid_name, unsigned char **data, size_t *n, char *err,
                                  size_t errlen);

int openvdb_to_nanovdb(const char *path, const char *grid_name, unsigned char **data, size_t *n, char *err,
                       size_t errlen) {
    *data = nullptr;
    *n = 0;
    try {
        static std::once_flag once;
        std::call_once(once, [] { openvdb::initialize(); });
        openvdb::io::File file(path);
        file.open(false);
        std::string names;
        openvdb::GridBase::Ptr base;
        for (auto it = file.beginName(); it != file.endName(); ++it) {
            if (it.gridName() == grid_name) base = file.readGrid(it.gridName());
            names += (names.empty() ? "\"" : ", \"") + it.gridName() + "\"";
        }
        file.close();
        if (!base) {
            std::snprintf(err, errlen, "%s: no grid named \"%s\" (the file has %s)", path, grid_name,
                          names.empty() ? "none" : names.c_str());
            return -1;
        }
        openvdb::FloatGrid::Ptr grid = openvdb::gridPtrCast<openvdb::FloatGrid>(base);
        if (!grid) {
            std::snprintf(err, errlen, "%s: grid \"%s\" holds %s values, caustic reads float grids", path, grid_name,
                          base->valueType().c_str());
            return -1;
        }
        auto handle = nanovdb::openToNanoVDB(*grid);
        *data = static_cast<unsigned char *>(std::malloc(handle.size() ? handle.size() : 1));
        if (!*data) {
            std::snprintf(err, errlen, "%s: out of memory converting grid \"%s\"", path, grid_name);
            return -1;
        }
        std::memcpy(*data, handle.data(), handle.size());
        *n = handle.size();
        return 0;
    } catch (const std::exception &e) {
        std::free(*data);
        *data = nullptr;
        std::snprintf(err, errlen, "%s: OpenVDB: %s", path, e.what());
        return -1;
    }
}
