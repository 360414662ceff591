// Converts a Mitsuba .vol density grid (1 channel, float32: tools/make_cloud_vol.py writes them)
// into a NanoVDB .nvdb file and an OpenVDB .vdb file holding the same float grid "density", for
// caustic's NanoVDB media (scene JSON "TYPE": "NanoVDB", docs/scene-format.md) and their tests.
//
//   caustic_vol_to_nvdb IN.vol OUT.nvdb [OUT.vdb] [--sparse] [--constant RES VALUE]
//
// Voxel (x, y, z) of the .vol is index (x, y, z) of the grid; the grid's map places voxel
// centres where the .vol's bounding box puts them (voxel i's cell is [lo + i h, lo + (i+1) h]).
// By default every voxel is active (zeros included), so that the active index box is the .vol's
// whole grid and caustic's unit cube is the .vol's (the tests compare lookups one to one);
// --sparse leaves zero voxels inactive (a fog volume's usual form; smaller files). --constant
// ignores IN.vol and writes a RES^3 grid of VALUE over the unit cube (slab tests).
#include <openvdb/openvdb.h>
#include <openvdb/io/File.h>

#include <nanovdb/util/IO.h>
#include <nanovdb/util/OpenToNanoVDB.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int fail(const char *msg, const char *path) {
    std::fprintf(stderr, "caustic_vol_to_nvdb: %s: %s\n", path, msg);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: caustic_vol_to_nvdb IN.vol OUT.nvdb [OUT.vdb] [--sparse] [--constant RES VALUE]\n");
        return 2;
    }
    const char *in = argv[1], *out = argv[2], *out_vdb = nullptr;
    bool sparse = false;
    int cres = 0;
    float cval = 0.0f;
    for (int i = 3; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--sparse"))
            sparse = true;
        else if (!std::strcmp(argv[i], "--constant") && i + 2 < argc) {
            cres = std::atoi(argv[i + 1]);
            cval = (float)std::atof(argv[i + 2]);
            i += 2;
        } else
            out_vdb = argv[i];
    }
    int32_t res[3];
    float bbox[6] = {0, 0, 0, 1, 1, 1};
    std::vector<float> v;
    if (cres > 0) {
        res[0] = res[1] = res[2] = cres;
        v.assign((size_t)cres * cres * cres, cval);
    } else {
        FILE *f = std::fopen(in, "rb");
        if (!f) return fail("cannot open", in);
        char magic[4];
        int32_t enc, ch;
        bool ok = std::fread(magic, 1, 4, f) == 4 && !std::memcmp(magic, "VOL\x03", 4) &&
                  std::fread(&enc, 4, 1, f) == 1 && enc == 1 && std::fread(res, 4, 3, f) == 3 &&
                  std::fread(&ch, 4, 1, f) == 1 && ch == 1 && std::fread(bbox, 4, 6, f) == 6 && res[0] > 0 &&
                  res[1] > 0 && res[2] > 0;
        if (ok) {
            v.resize((size_t)res[0] * res[1] * res[2]);
            ok = std::fread(v.data(), 4, v.size(), f) == v.size();
        }
        std::fclose(f);
        if (!ok) return fail("not a 1-channel float32 .vol grid", in);
    }
    openvdb::initialize();
    openvdb::FloatGrid::Ptr grid = openvdb::FloatGrid::create(0.0f);
    grid->setName("density");
    grid->setGridClass(openvdb::GRID_FOG_VOLUME);
    openvdb::Mat4d m = openvdb::Mat4d::identity();
    for (int a = 0; a < 3; ++a) {
        double h = (bbox[3 + a] - bbox[a]) / res[a];
        m(a, a) = h;
        m(3, a) = bbox[a] + 0.5 * h; // row-vector convention: translation in row 3
    }
    grid->setTransform(openvdb::math::Transform::createLinearTransform(m));
    auto acc = grid->getAccessor();
    for (int32_t z = 0; z < res[2]; ++z)
        for (int32_t y = 0; y < res[1]; ++y)
            for (int32_t x = 0; x < res[0]; ++x) {
                float d = v[((size_t)z * res[1] + y) * res[0] + x];
                if (d != 0.0f || !sparse) acc.setValueOn(openvdb::Coord(x, y, z), d);
            }
    if (out_vdb) {
        openvdb::io::File file(out_vdb);
        file.write({grid});
        file.close();
    }
    auto handle = nanovdb::openToNanoVDB(*grid);
    nanovdb::io::writeGrid(out, handle, nanovdb::io::Codec::NONE);
    std::printf("%s: %d x %d x %d voxels, %zu bytes of NanoVDB grid\n", out, res[0], res[1], res[2], handle.size());
    return 0;
}
