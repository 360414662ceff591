/* glTF 2.0 import (.gltf with external or embedded buffers, .glb) through tinygltf (Debian's
 * libtinygltf-dev), behind the C interface of scene.h: scene_load_gltf, scene_load_gltf_memory,
 * scene_load_gltf_scene. The only C++ file of the library; nothing C++ crosses the interface
 * (every entry point catches all exceptions).
 *
 * What is read: the default scene's node hierarchy (matrix or TRS), triangle meshes (indexed or
 * not; triangle strips and fans are triangulated; points and lines are skipped with a warning)
 * with POSITION, NORMAL, TEXCOORD_0 and TANGENT; materials (pbrMetallicRoughness with its base
 * colour, metallic-roughness, normal and emissive maps, alphaMode MASK as a cutout,
 * KHR_materials_emissive_strength, KHR_materials_transmission + KHR_materials_ior as rough glass,
 * KHR_materials_clearcoat as a coated PBR lobe, KHR_materials_dispersion as a Cauchy glass,
 * KHR_materials_sheen and KHR_materials_specular as the PBR lobe's layers, KHR_materials_volume
 * on a solid transmissive material as an absorbing medium inside it);
 * textures with their samplers' wrap modes; the first perspective camera; KHR_lights_punctual;
 * EXT_mesh_gpu_instancing (each instance a placement of the node's mesh: true instancing).
 * Everything read from the file is validated here (accessor bounds, strides, index ranges), not
 * trusted to the parser. A texture whose image is missing or cannot be decoded gives one warning
 * naming it and the material renders with its factors. */
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <string>
#include <vector>

#include <tiny_gltf.h>
#include <stb/stb_image.h>

extern "C" {
#include "image/image.h"
#include "scene/scene.h"
#include "scene/material.h"
#include "import/import.h"
#include "util/file.h"
}
#include "util/log.h"

namespace {

const size_t MAX_FILE_BYTES = size_t(1) << 31; // buffers and images read from disk
const int MAX_IMAGE_SIDE = 16384;
const size_t MAX_IMAGE_PIXELS = size_t(1) << 27;
const int MAX_NODE_DEPTH = 256;
const size_t MAX_NODE_VISITS = size_t(1) << 22; // a DAG that instances a node many times

struct load_error {
    std::string msg;
};
[[noreturn]] void fail(const std::string &m) { throw load_error{m}; }

std::string str_index(const char *what, size_t i) { return std::string(what) + "[" + std::to_string(i) + "]"; }

/* A budget read from the environment (a positive integer), else its default. */
size_t env_budget(const char *var, size_t fallback) {
    const char *e = std::getenv(var);
    char *end = nullptr;
    unsigned long long v = e && *e ? std::strtoull(e, &end, 10) : 0;
    return e && *e && !*end && v > 0 ? size_t(v) : fallback;
}

/* ---- file access: no shell expansion, regular files only, each file read once, a budget on the
 * bytes handed to buffers[] and images[] (each entry holds its own copy), and no access at all
 * for in-memory loads ---- */
struct fs_ctx {
    bool allow = false;
    std::map<std::string, std::vector<unsigned char>> read; /* by path: each URI read once */
    size_t delivered = 0;                                   /* bytes handed out, copies included */
    size_t budget = env_budget("CAUSTIC_GLTF_MAX_BUFFER_BYTES", MAX_FILE_BYTES);
};
bool fs_exists(const std::string &path, void *u) {
    if (!static_cast<fs_ctx *>(u)->allow) return false;
    char why[256];
    FILE *f = file_open_regular(path.c_str(), 0, why, sizeof why);
    if (!f) return false;
    std::fclose(f);
    return true;
}
std::string fs_expand(const std::string &path, void *) { return path; }
bool fs_read(std::vector<unsigned char> *out, std::string *err, const std::string &path, void *u) {
    fs_ctx *c = static_cast<fs_ctx *>(u);
    if (!c->allow) {
        if (err) *err += "external file \"" + path + "\" (not read from an in-memory file)\n";
        return false;
    }
    auto it = c->read.find(path);
    if (it == c->read.end()) {
        char why[256];
        FILE *f = file_open_regular(path.c_str(), (long long)MAX_FILE_BYTES, why, sizeof why);
        if (!f) {
            if (err) *err += "\"" + path + "\": " + why + "\n";
            return false;
        }
        bool ok = std::fseek(f, 0, SEEK_END) == 0;
        long n = ok ? std::ftell(f) : -1;
        std::vector<unsigned char> bytes;
        ok = ok && n >= 0 && std::fseek(f, 0, SEEK_SET) == 0;
        if (ok) {
            bytes.resize(size_t(n));
            ok = n == 0 || std::fread(bytes.data(), 1, size_t(n), f) == size_t(n);
        }
        std::fclose(f);
        if (!ok) {
            if (err) *err += "cannot read \"" + path + "\"\n";
            return false;
        }
        it = c->read.emplace(path, std::move(bytes)).first;
    }
    if (c->delivered + it->second.size() > c->budget) {
        if (err)
            *err += "budget: " + std::to_string(c->delivered + it->second.size()) +
                    " bytes of external buffers and images (each buffers[] entry a copy), limit " +
                    std::to_string(c->budget) + ", set CAUSTIC_GLTF_MAX_BUFFER_BYTES\n";
        return false;
    }
    c->delivered += it->second.size();
    *out = it->second;
    return true;
}
bool fs_write(std::string *err, const std::string &, const std::vector<unsigned char> &, void *) {
    if (err) *err += "writing is not supported\n";
    return false;
}

/* Images: decoded by stb_image (Debian's libstb) to 8-bit RGBA after checking the size, so a
 * crafted header cannot ask for gigabytes: what the decode and the 8-bit texture take (stb's RGBA,
 * tinygltf's copy of it, 3 bytes a texel stored) must fit the image memory cap
 * (CAUSTIC_IMAGE_MEMORY), else the file fails with that message. An image that cannot be decoded
 * is left empty (the material then renders with its factors, with a warning) instead of failing
 * the whole file. */
bool image_loader(tinygltf::Image *img, const int index, std::string *err, std::string *, int, int,
                  const unsigned char *bytes, int size, void *) {
    img->image.clear();
    img->width = img->height = -1;
    int w = 0, h = 0, c = 0;
    if (size <= 0 || !stbi_info_from_memory(bytes, size, &w, &h, &c)) return true;
    if (w <= 0 || h <= 0 || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE || size_t(w) * size_t(h) > MAX_IMAGE_PIXELS)
        return true;
    char what[96], msg[512];
    std::snprintf(what, sizeof what, "a %dx%d image", w, h);
    if (image_memory_fits(double(w) * double(h) * 11.0, str_index("images", size_t(index)).c_str(), what, "to decode",
                          msg, sizeof msg)) {
        if (err) *err += std::string(msg) + "\n";
        return false;
    }
    unsigned char *p = stbi_load_from_memory(bytes, size, &w, &h, &c, 4);
    if (!p) return true;
    img->image.assign(p, p + size_t(w) * size_t(h) * 4u);
    stbi_image_free(p);
    img->width = w;
    img->height = h;
    img->component = 4;
    img->bits = 8;
    img->pixel_type = TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE;
    return true;
}

/* ---- accessors ---------------------------------------------------------------------------- */
int component_bytes(int type) {
    switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_INT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;
    }
}
int type_components(int type) {
    switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    default: return 0;
    }
}

/* Where an accessor's elements are: a base pointer, a stride and a count, all checked against the
 * buffer. Returns a null base for an accessor without a buffer view (all zeros). */
struct view {
    const unsigned char *base;
    size_t stride, count;
    int ctype, ncomp;
    bool normalized;
};
view accessor_view(const tinygltf::Model &m, int index, const std::string &where) {
    if (index < 0 || size_t(index) >= m.accessors.size())
        fail(where + ": accessor " + std::to_string(index) + " does not exist");
    const tinygltf::Accessor &a = m.accessors[size_t(index)];
    std::string ap = str_index("accessors", size_t(index));
    if (a.sparse.isSparse) fail(ap + ": sparse accessors are not supported");
    view v;
    v.ctype = a.componentType;
    v.ncomp = type_components(a.type);
    v.count = a.count;
    v.normalized = a.normalized;
    int cb = component_bytes(a.componentType);
    if (cb == 0 || v.ncomp == 0) fail(ap + ": unsupported componentType or type");
    size_t elem = size_t(cb) * size_t(v.ncomp);
    if (a.count > (size_t(1) << 31)) fail(ap + ": count " + std::to_string(a.count) + " is too large");
    v.base = nullptr;
    v.stride = elem;
    if (a.bufferView < 0) return v;
    if (size_t(a.bufferView) >= m.bufferViews.size())
        fail(ap + ": bufferView " + std::to_string(a.bufferView) + " does not exist");
    const tinygltf::BufferView &bv = m.bufferViews[size_t(a.bufferView)];
    std::string bp = str_index("bufferViews", size_t(a.bufferView));
    if (bv.buffer < 0 || size_t(bv.buffer) >= m.buffers.size())
        fail(bp + ": buffer " + std::to_string(bv.buffer) + " does not exist");
    const tinygltf::Buffer &b = m.buffers[size_t(bv.buffer)];
    if (bv.byteOffset > b.data.size() || bv.byteLength > b.data.size() - bv.byteOffset)
        fail(bp + ": byteOffset + byteLength (" + std::to_string(bv.byteOffset) + " + " +
             std::to_string(bv.byteLength) + ") exceed the buffer's " + std::to_string(b.data.size()) + " bytes");
    if (bv.byteStride != 0) {
        if (bv.byteStride < elem || bv.byteStride > 252 || bv.byteStride % size_t(cb) != 0)
            fail(bp + ": byteStride " + std::to_string(bv.byteStride) + " does not fit " + ap + "'s elements");
        v.stride = bv.byteStride;
    }
    if (a.count > 0) {
        size_t last = a.byteOffset;
        bool ok = a.byteOffset <= bv.byteLength;
        if (ok && a.count > 1) ok = (a.count - 1) <= (bv.byteLength - a.byteOffset) / v.stride;
        if (ok) last += (a.count - 1) * v.stride;
        if (!ok || last > bv.byteLength || elem > bv.byteLength - last)
            fail(ap + ": " + std::to_string(a.count) + " elements from byteOffset " + std::to_string(a.byteOffset) +
                 " run past " + bp + " (" + std::to_string(bv.byteLength) + " bytes)");
    }
    v.base = b.data.data() + bv.byteOffset + a.byteOffset;
    return v;
}

float read_component(const unsigned char *p, int ctype, bool normalized) {
    switch (ctype) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return normalized ? float(p[0]) / 255.0f : float(p[0]);
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
        float f = float(int8_t(p[0]));
        return normalized ? std::fmax(f / 127.0f, -1.0f) : f;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
        uint16_t u;
        std::memcpy(&u, p, 2);
        return normalized ? float(u) / 65535.0f : float(u);
    }
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
        int16_t u;
        std::memcpy(&u, p, 2);
        return normalized ? std::fmax(float(u) / 32767.0f, -1.0f) : float(u);
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: {
        uint32_t u;
        std::memcpy(&u, p, 4);
        return float(u);
    }
    default: {
        int32_t u;
        std::memcpy(&u, p, 4);
        return float(u);
    }
    }
}

/* Reads an attribute of `ncomp` components per element as floats (floats, or normalized integers
 * where the glTF spec allows them). */
std::vector<float> read_floats(const tinygltf::Model &m, int index, int ncomp, bool allow_normalized,
                               const std::string &where) {
    view v = accessor_view(m, index, where);
    if (v.ncomp != ncomp)
        fail(where + ": expected " + std::to_string(ncomp) + " components, the accessor has " +
             std::to_string(v.ncomp));
    if (v.ctype != TINYGLTF_COMPONENT_TYPE_FLOAT &&
        !(allow_normalized && v.normalized &&
          (v.ctype == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE || v.ctype == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT ||
           v.ctype == TINYGLTF_COMPONENT_TYPE_BYTE || v.ctype == TINYGLTF_COMPONENT_TYPE_SHORT)))
        fail(where + ": unsupported component type " + std::to_string(v.ctype));
    std::vector<float> out(v.count * size_t(ncomp), 0.0f);
    if (!v.base) return out;
    int cb = component_bytes(v.ctype);
    for (size_t i = 0; i < v.count; ++i)
        for (int c = 0; c < ncomp; ++c) {
            float f = read_component(v.base + i * v.stride + size_t(c * cb), v.ctype, v.normalized);
            if (!std::isfinite(f)) fail(where + ": element " + std::to_string(i) + " is not finite");
            out[i * size_t(ncomp) + size_t(c)] = f;
        }
    return out;
}

std::vector<uint32_t> read_indices(const tinygltf::Model &m, int index, const std::string &where) {
    view v = accessor_view(m, index, where);
    if (v.ncomp != 1 ||
        (v.ctype != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE && v.ctype != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
         v.ctype != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT))
        fail(where + ": indices must be unsigned byte, short or int scalars");
    std::vector<uint32_t> out(v.count, 0u);
    if (!v.base) return out;
    for (size_t i = 0; i < v.count; ++i) {
        const unsigned char *p = v.base + i * v.stride;
        if (v.ctype == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE)
            out[i] = p[0];
        else if (v.ctype == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) {
            uint16_t u;
            std::memcpy(&u, p, 2);
            out[i] = u;
        } else
            std::memcpy(&out[i], p, 4);
    }
    return out;
}

/* ---- transforms: glTF matrices are column-major 4x4 ------------------------------------------ */
xform node_local(const tinygltf::Node &n, const std::string &where) {
    xform x = xform_identity();
    if (n.matrix.size() == 16) {
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 4; ++j) x.m[i][j] = float(n.matrix[size_t(j * 4 + i)]);
    } else {
        if (!n.matrix.empty()) fail(where + ".matrix: expected 16 numbers");
        double t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
        if (n.translation.size() == 3)
            for (int i = 0; i < 3; ++i) t[i] = n.translation[size_t(i)];
        else if (!n.translation.empty())
            fail(where + ".translation: expected 3 numbers");
        if (n.rotation.size() == 4)
            for (int i = 0; i < 4; ++i) q[i] = n.rotation[size_t(i)];
        else if (!n.rotation.empty())
            fail(where + ".rotation: expected 4 numbers");
        if (n.scale.size() == 3)
            for (int i = 0; i < 3; ++i) s[i] = n.scale[size_t(i)];
        else if (!n.scale.empty())
            fail(where + ".scale: expected 3 numbers");
        double ql = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(ql > 0.0) || !std::isfinite(ql)) fail(where + ".rotation: not a unit quaternion");
        double X = q[0] / ql, Y = q[1] / ql, Z = q[2] / ql, W = q[3] / ql;
        double r[3][3] = {{1 - 2 * (Y * Y + Z * Z), 2 * (X * Y - Z * W), 2 * (X * Z + Y * W)},
                          {2 * (X * Y + Z * W), 1 - 2 * (X * X + Z * Z), 2 * (Y * Z - X * W)},
                          {2 * (X * Z - Y * W), 2 * (Y * Z + X * W), 1 - 2 * (X * X + Y * Y)}};
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) x.m[i][j] = float(r[i][j] * s[j]);
            x.m[i][3] = float(t[i]);
        }
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
            if (!std::isfinite(x.m[i][j])) fail(where + ": transform is not finite");
    return x;
}

/* ---- the importer --------------------------------------------------------------------------- */
struct importer {
    scene *s;
    const tinygltf::Model &m;
    std::string name; // the file, for messages and material names
    xform to_world;
    int override_material; // >= 0: every triangle gets it
    int flags;
    std::map<long long, int> textures; // (texture index, usage) -> scene texture
    std::map<int, int> materials;      // glTF material (-1: default) -> scene material
    std::vector<bool> warned_image;
    std::vector<bool> on_path; // nodes on the current path from the root (cycles)
    size_t visits = 0;
    size_t triangles = 0, instanced = 0; // added by this file; of them, copies of a primitive seen before
    size_t triangle_budget = env_budget("CAUSTIC_GLTF_MAX_TRIANGLES", size_t(1) << 25);
    std::set<const tinygltf::Primitive *> meshes_seen;
    /* where a primitive's triangles were added first: later nodes that reuse it place them again
     * (scene_instance_mesh: true instancing, no copy) */
    struct placed_prim {
        size_t v0, nv, t0, nt;
        xform placed;
    };
    std::map<const tinygltf::Primitive *, placed_prim> placed_prims;
    int lights = 0;
    bool have_camera = false;

    importer(scene *s_, const tinygltf::Model &m_) : s(s_), m(m_) {}

    /* to the loader's warning sink where a JSON scene set one, else to the library's log callback
     * (caustic_set_log): never printed here */
    void warn(const std::string &w) const {
        if (s->warn)
            scene_warn(s, "%s: %s", name.c_str(), w.c_str());
        else
            lib_log("caustic: warning: %s: %s", name.c_str(), w.c_str());
    }

    enum usage { USE_SRGB = 0, USE_LINEAR = 1, USE_ALPHA = 2 };
    /* A scene texture for glTF texture `ti` (sRGB colour, linear data or the alpha channel), or -1
     * with a warning when its image is missing. */
    int texture(int ti, int use, const std::string &where) {
        if (ti < 0 || size_t(ti) >= m.textures.size())
            fail(where + ".index: texture " + std::to_string(ti) + " does not exist");
        long long key = (long long)ti * 4 + use;
        auto it = textures.find(key);
        if (it != textures.end()) return it->second;
        const tinygltf::Texture &t = m.textures[size_t(ti)];
        int src = t.source;
        if (src < 0 || size_t(src) >= m.images.size()) {
            warn(str_index("textures", size_t(ti)) +
                 " has no image (KHR texture extensions are not supported); using the material's factors");
            return textures[key] = -1;
        }
        const tinygltf::Image &img = m.images[size_t(src)];
        if (img.image.empty() || img.width <= 0 || img.height <= 0 || img.component != 4 ||
            img.image.size() != size_t(img.width) * size_t(img.height) * 4u) {
            if (warned_image.size() < m.images.size()) warned_image.resize(m.images.size(), false);
            if (!warned_image[size_t(src)]) {
                warned_image[size_t(src)] = true;
                warn(str_index("images", size_t(src)) +
                     (img.uri.empty() ? std::string(" (embedded)") : " \"" + img.uri + "\"") +
                     " is missing or could not be decoded; rendering with the material's factors");
            }
            return textures[key] = -1;
        }
        /* kept at the source's precision: the 8-bit codes, sRGB colour or linear data, decoded on
         * lookup (the alpha channel, for a cutout, in all three) */
        size_t n = size_t(img.width) * size_t(img.height);
        if (s->ntexels8 + n * 3u > size_t(UINT32_MAX)) fail("textures exceed the 2^32-texel limit");
        unsigned char *rgb8 = scene_reserve_texels8(s, img.width, img.height);
        if (!rgb8) throw std::bad_alloc();
        for (size_t i = 0; i < n; ++i) {
            const unsigned char *p = &img.image[i * 4u];
            for (size_t c = 0; c < 3; ++c) rgb8[i * 3u + c] = use == USE_ALPHA ? p[3] : p[c];
        }
        int idx = scene_add_image_texture8(s, img.width, img.height, use == USE_SRGB ? TEXEL8_SRGB : TEXEL8_LINEAR);
        if (idx < 0) throw std::bad_alloc();
        /* one image memory budget per scene, across this file's images and the scene's others */
        char berr[512];
        if (scene_textures_memory_check(s, str_index("images", size_t(src)).c_str(), berr, sizeof berr)) fail(berr);
        ::texture &tx = s->textures[idx];
        if (t.sampler >= 0 && size_t(t.sampler) < m.samplers.size()) {
            const tinygltf::Sampler &sm = m.samplers[size_t(t.sampler)];
            auto wrap = [](int w) {
                return w == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE     ? TEX_WRAP_CLAMP
                       : w == TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT ? TEX_WRAP_MIRROR
                                                                    : TEX_WRAP_REPEAT;
            };
            tx.wrap_u = wrap(sm.wrapS);
            tx.wrap_v = wrap(sm.wrapT);
        }
        return textures[key] = idx;
    }

    static double ext_number(const tinygltf::ExtensionMap &ext, const char *name, const char *key, double def) {
        auto it = ext.find(name);
        if (it == ext.end() || !it->second.IsObject() || !it->second.Has(key)) return def;
        const tinygltf::Value &v = it->second.Get(key);
        return v.IsNumber() || v.IsInt() ? v.GetNumberAsDouble() : def;
    }
    static const tinygltf::Value *ext_object(const tinygltf::ExtensionMap &ext, const char *name, const char *key) {
        auto it = ext.find(name);
        if (it == ext.end() || !it->second.IsObject() || !it->second.Has(key)) return nullptr;
        const tinygltf::Value &v = it->second.Get(key);
        return v.IsObject() ? &v : nullptr;
    }
    static double clamp01(double x) { return std::isfinite(x) ? (x < 0 ? 0 : (x > 1 ? 1 : x)) : 0; }
    /* An extension's colour (an array of three numbers), each clamped into [0, hi]; def without it. */
    static vec3 ext_colour(const tinygltf::ExtensionMap &ext, const char *name, const char *key, vec3 def, double hi) {
        auto it = ext.find(name);
        if (it == ext.end() || !it->second.IsObject() || !it->second.Has(key)) return def;
        const tinygltf::Value &c = it->second.Get(key);
        if (!c.IsArray() || c.ArrayLen() != 3) return def;
        for (int k = 0; k < 3; ++k) {
            double x = c.Get(k).IsNumber() || c.Get(k).IsInt() ? c.Get(k).GetNumberAsDouble() : 0.0;
            (&def.x)[k] = float(std::isfinite(x) ? (x < 0 ? 0 : (x > hi ? hi : x)) : 0);
        }
        return def;
    }

    int material(int mi) {
        if (override_material >= 0) return override_material;
        auto it = materials.find(mi);
        if (it != materials.end()) return it->second;
        std::string mname = name + "#" + (mi < 0 ? std::string("default") : std::to_string(mi));
        int found = scene_find_material(s, mname.c_str());
        if (found >= 0) return materials[mi] = found; // the same file placed again
        // glTF's defaults: white, metallic 1, roughness 1 (the constructor's opacity and normal scale 1)
        material_kind kind = MAT_PBR;
        material_params mat = material_params_default(kind);
        mat.rgb = v3s(1.0f);
        mat.metallic = 1.0;
        mat.roughness = 1.0;
        int volume_medium = 0; /* KHR_materials_volume's absorbing interior (a medium reference) */
        if (mi >= 0) {
            if (size_t(mi) >= m.materials.size()) fail("material " + std::to_string(mi) + " does not exist");
            const tinygltf::Material &g = m.materials[size_t(mi)];
            std::string mp = str_index("materials", size_t(mi));
            const tinygltf::PbrMetallicRoughness &pbr = g.pbrMetallicRoughness;
            if (pbr.baseColorFactor.size() == 4) {
                mat.rgb = v3(float(clamp01(pbr.baseColorFactor[0])), float(clamp01(pbr.baseColorFactor[1])),
                             float(clamp01(pbr.baseColorFactor[2])));
                mat.opacity = float(clamp01(pbr.baseColorFactor[3]));
            }
            mat.metallic = float(clamp01(pbr.metallicFactor));
            mat.roughness = clamp01(pbr.roughnessFactor); // GGX alpha = roughness^2, rounded once
            auto texcoord = [&](int tc, const std::string &where) {
                if (tc != 0) warn(where + ".texCoord " + std::to_string(tc) + ": only TEXCOORD_0 is read; using it");
            };
            if (pbr.baseColorTexture.index >= 0) {
                std::string w = mp + ".pbrMetallicRoughness.baseColorTexture";
                texcoord(pbr.baseColorTexture.texCoord, w);
                mat.albedo_tex = texture(pbr.baseColorTexture.index, USE_SRGB, w);
            }
            if (pbr.metallicRoughnessTexture.index >= 0) {
                std::string w = mp + ".pbrMetallicRoughness.metallicRoughnessTexture";
                texcoord(pbr.metallicRoughnessTexture.texCoord, w);
                int t = texture(pbr.metallicRoughnessTexture.index, USE_LINEAR, w);
                mat.mr_tex = t;
            }
            if (g.normalTexture.index >= 0) {
                std::string w = mp + ".normalTexture";
                texcoord(g.normalTexture.texCoord, w);
                int t = texture(g.normalTexture.index, USE_LINEAR, w);
                if (t >= 0) {
                    mat.normal_tex = t;
                    mat.normal_scale = std::isfinite(g.normalTexture.scale) ? float(g.normalTexture.scale) : 1.0f;
                }
            }
            double strength = ext_number(g.extensions, "KHR_materials_emissive_strength", "emissiveStrength", 1.0);
            if (!(strength >= 0.0) || !(strength <= 1e7))
                fail(mp + ": emissiveStrength " + std::to_string(strength) + " is out of range");
            if (g.emissiveFactor.size() == 3) {
                vec3 e =
                    v3(float(clamp01(g.emissiveFactor[0]) * strength), float(clamp01(g.emissiveFactor[1]) * strength),
                       float(clamp01(g.emissiveFactor[2]) * strength));
                mat.emission = e;
            }
            if (!vis_black(mat.emission) && g.emissiveTexture.index >= 0) {
                std::string w = mp + ".emissiveTexture";
                texcoord(g.emissiveTexture.texCoord, w);
                int t = texture(g.emissiveTexture.index, USE_SRGB, w);
                mat.emission_tex = t;
            }
            if (g.alphaMode == "MASK" || g.alphaMode == "BLEND") {
                if (g.alphaMode == "BLEND")
                    warn(mp + ".alphaMode BLEND is rendered as MASK with alphaCutoff 0.5 (no blending)");
                double cut = g.alphaMode == "MASK" ? g.alphaCutoff : 0.5;
                if (!(cut >= 0.0) || !std::isfinite(cut))
                    fail(mp + ".alphaCutoff " + std::to_string(cut) + " is out of range");
                if (cut > 0.0) {
                    mat.alpha_cutoff = float(cut);
                    if (pbr.baseColorTexture.index >= 0) {
                        int t = texture(pbr.baseColorTexture.index, USE_ALPHA,
                                        mp + ".pbrMetallicRoughness.baseColorTexture");
                        mat.alpha_tex = t;
                    }
                }
            }
            double transmission = ext_number(g.extensions, "KHR_materials_transmission", "transmissionFactor", 0.0);
            if (transmission > 0.0) {
                double ior = ext_number(g.extensions, "KHR_materials_ior", "ior", 1.5);
                if (!(ior >= 1.0) || !(ior <= 10.0))
                    fail(mp + ": KHR_materials_ior ior " + std::to_string(ior) + " is out of range [1, 10]");
                if (transmission < 1.0)
                    warn(mp + ": transmissionFactor " + std::to_string(transmission) +
                         " is rendered as fully transmissive glass");
                if (ext_object(g.extensions, "KHR_materials_transmission", "transmissionTexture"))
                    warn(mp + ": transmissionTexture is not read");
                kind = MAT_ROUGH_GLASS;
                mat.ior = ior == 1.0 ? 1.0001f : float(ior);
                /* KHR_materials_dispersion: dispersion = 20 / V_d, a Cauchy glass (kernel/spectral.h) */
                double disp = ext_number(g.extensions, "KHR_materials_dispersion", "dispersion", 0.0);
                if (!(disp >= 0.0) || disp > 100.0)
                    fail(mp + ": KHR_materials_dispersion dispersion " + std::to_string(disp) +
                         " is out of range [0, 100]");
                if (disp > 0.0) mat.dispersion = material_cauchy_b(mat.ior, 20.0 / disp);
                /* KHR_materials_volume with thicknessFactor 0 states a thin wall: a glass sheet
                 * (without the extension the spec means thin-walled too; caustic keeps solid glass
                 * there, as it always did) */
                auto vol = g.extensions.find("KHR_materials_volume");
                if (vol != g.extensions.end() &&
                    ext_number(g.extensions, "KHR_materials_volume", "thicknessFactor", 0.0) == 0.0) {
                    if (mat.roughness > 0.0)
                        warn(mp + ": a thin-walled transmission is rendered smooth (ThinDielectric): roughness " +
                             std::to_string(mat.roughness) + " ignored");
                    kind = MAT_THIN_DIELECTRIC;
                    if (mat.dispersion > 0.0) warn(mp + ": KHR_materials_dispersion on a thin wall is not rendered");
                }
                /* KHR_materials_volume on a solid (thicknessFactor > 0): an absorbing interior,
                 * sigma_a = -ln(attenuationColor) / attenuationDistance (the spec's Beer-Lambert,
                 * distances in world units); the boundary binds it inside (kernel/medium.h) */
                double adist = ext_number(g.extensions, "KHR_materials_volume", "attenuationDistance", INFINITY);
                if (kind != MAT_THIN_DIELECTRIC && vol != g.extensions.end() && std::isfinite(adist)) {
                    if (!(adist > 0.0)) fail(mp + ": KHR_materials_volume attenuationDistance must be > 0");
                    double ac[3] = {1.0, 1.0, 1.0};
                    if (vol->second.IsObject() && vol->second.Has("attenuationColor")) {
                        const tinygltf::Value &v = vol->second.Get("attenuationColor");
                        if (!v.IsArray() || v.ArrayLen() != 3)
                            fail(mp + ": KHR_materials_volume attenuationColor must be 3 numbers");
                        for (int c = 0; c < 3; ++c) {
                            const tinygltf::Value &x = v.Get(c);
                            ac[c] = x.IsNumber() || x.IsInt() ? x.GetNumberAsDouble() : -1.0;
                            if (!(ac[c] >= 0.0 && ac[c] <= 1.0))
                                fail(mp + ": KHR_materials_volume attenuationColor must be in [0, 1]");
                        }
                    }
                    if (ext_object(g.extensions, "KHR_materials_volume", "thicknessTexture"))
                        warn(mp +
                             ": KHR_materials_volume thicknessTexture is not read (ray tracing needs no thickness)");
                    ::medium md;
                    std::memset(&md, 0, sizeof md);
                    md.kind = MEDIUM_HOMOGENEOUS;
                    float sa[3];
                    for (int c = 0; c < 3; ++c) /* a colour of 0: opaque within a tiny distance */
                        sa[c] = float(-std::log(ac[c] > 1e-6 ? ac[c] : 1e-6) / adist);
                    md.sigma_a = v3(sa[0], sa[1], sa[2]);
                    if (vmaxc(md.sigma_a) > 0.0f) {
                        int mid = scene_add_medium(s, mname.c_str(), md);
                        if (mid < 0) fail(mp + ": KHR_materials_volume: cannot add its medium");
                        volume_medium = mid + 1;
                    }
                }
            }
            /* KHR_materials_diffuse_transmission on a dielectric base: the Lambertian lobe split
             * between reflection (1 - factor) and transmission (factor x colour), both of the base
             * colour; the specular layer above it is not rendered (said once) */
            double dt =
                ext_number(g.extensions, "KHR_materials_diffuse_transmission", "diffuseTransmissionFactor", 0.0);
            if (dt > 0.0 && transmission <= 0.0) {
                if (mat.metallic > 0.0)
                    warn(mp + ": KHR_materials_diffuse_transmission on a metallic material is not read");
                else {
                    dt = clamp01(dt);
                    vec3 tc = v3s(1.0f);
                    auto it = g.extensions.find("KHR_materials_diffuse_transmission");
                    if (it->second.IsObject() && it->second.Has("diffuseTransmissionColorFactor")) {
                        const tinygltf::Value &c = it->second.Get("diffuseTransmissionColorFactor");
                        if (c.IsArray() && c.ArrayLen() == 3)
                            for (int k = 0; k < 3; ++k)
                                (&tc.x)[k] = float(clamp01(
                                    c.Get(k).IsNumber() || c.Get(k).IsInt() ? c.Get(k).GetNumberAsDouble() : 1.0));
                    }
                    warn(mp + ": KHR_materials_diffuse_transmission is rendered as DiffuseTransmission without "
                              "the specular layer above it");
                    kind = MAT_DIFFUSE_TRANSMISSION;
                    mat.transmittance = vscale(vmul(mat.rgb, tc), float(dt));
                    mat.rgb = vscale(mat.rgb, float(1.0 - dt));
                }
            }
            /* KHR_materials_sheen and KHR_materials_specular: PBR's layers (materials/pbr.h) */
            if (kind == MAT_PBR) {
                mat.sheen = ext_colour(g.extensions, "KHR_materials_sheen", "sheenColorFactor", v3s(0.0f), 1.0);
                mat.sheen_roughness =
                    clamp01(ext_number(g.extensions, "KHR_materials_sheen", "sheenRoughnessFactor", 0.0));
                mat.spec_weight = clamp01(ext_number(g.extensions, "KHR_materials_specular", "specularFactor", 1.0));
                mat.spec_tint =
                    ext_colour(g.extensions, "KHR_materials_specular", "specularColorFactor", v3s(1.0f), 1e3);
                for (const char *t : {"sheenColorTexture", "sheenRoughnessTexture"})
                    if (ext_object(g.extensions, "KHR_materials_sheen", t))
                        warn(mp + ": KHR_materials_sheen " + t + " is not read (the factor is used)");
                for (const char *t : {"specularTexture", "specularColorTexture"})
                    if (ext_object(g.extensions, "KHR_materials_specular", t))
                        warn(mp + ": KHR_materials_specular " + t + " is not read (the factor is used)");
            }
            /* KHR_materials_clearcoat: a coat of weight clearcoatFactor over the metallic-roughness
             * lobe (materials/coated.h), IOR from KHR_materials_ior (1.5) */
            double clearcoat = ext_number(g.extensions, "KHR_materials_clearcoat", "clearcoatFactor", 0.0);
            if (clearcoat > 0.0 && kind == MAT_PBR) {
                double cr = ext_number(g.extensions, "KHR_materials_clearcoat", "clearcoatRoughnessFactor", 0.0);
                double ior = ext_number(g.extensions, "KHR_materials_ior", "ior", 1.5);
                if (!(clearcoat <= 1.0) || !(cr >= 0.0) || !(cr <= 1.0))
                    fail(mp + ": KHR_materials_clearcoat clearcoatFactor / clearcoatRoughnessFactor out of [0, 1]");
                if (!(ior >= 1.0) || !(ior <= 10.0))
                    fail(mp + ": KHR_materials_ior ior " + std::to_string(ior) + " is out of range [1, 10]");
                for (const char *t : {"clearcoatTexture", "clearcoatRoughnessTexture", "clearcoatNormalTexture"})
                    if (ext_object(g.extensions, "KHR_materials_clearcoat", t))
                        warn(mp + ": KHR_materials_clearcoat " + t + " is not read");
                kind = MAT_COATED;
                mat.coat_base = COAT_BASE_PBR;
                mat.coat_weight = clearcoat;
                mat.coat_roughness = cr;
                mat.ior = ior;
            }
        }
        ::material m = material_from_params(kind, &mat);
        m.medium_inside = volume_medium;
        int idx = scene_add_material(s, mname.c_str(), m);
        if (idx < 0) throw std::bad_alloc();
        return materials[mi] = idx;
    }

    void primitive(const tinygltf::Primitive &p, const xform &world, const std::string &where) {
        int mode = p.mode < 0 ? TINYGLTF_MODE_TRIANGLES : p.mode;
        if (mode != TINYGLTF_MODE_TRIANGLES && mode != TINYGLTF_MODE_TRIANGLE_STRIP &&
            mode != TINYGLTF_MODE_TRIANGLE_FAN) {
            warn(where + ": mode " + std::to_string(mode) + " (points or lines) is skipped");
            return;
        }
        auto again = placed_prims.find(&p);
        if (again != placed_prims.end()) { /* a mesh that another node placed: an instance of it */
            const placed_prim &q = again->second;
            instanced += q.nt;
            if (scene_instance_mesh(s, q.v0, q.nv, q.t0, q.nt, q.placed, world))
                fail(where + ": singular node transform (it cannot be inverted), or out of memory");
            return;
        }
        auto pos_it = p.attributes.find("POSITION");
        if (pos_it == p.attributes.end()) fail(where + ".attributes: no POSITION");
        std::vector<float> pos = read_floats(m, pos_it->second, 3, false, where + ".attributes.POSITION");
        size_t nv = pos.size() / 3u;
        if (nv > PRIM_INDEX_MASK) fail(where + ": too many vertices");
        std::vector<float> nrm, uv, tan;
        auto get = [&](const char *attr, int nc, bool norm, std::vector<float> &out) {
            auto it = p.attributes.find(attr);
            if (it == p.attributes.end()) return;
            out = read_floats(m, it->second, nc, norm, where + ".attributes." + attr);
            if (out.size() / size_t(nc) != nv)
                fail(where + ".attributes." + attr + ": " + std::to_string(out.size() / size_t(nc)) +
                     " elements, POSITION has " + std::to_string(nv));
        };
        get("NORMAL", 3, false, nrm);
        get("TEXCOORD_0", 2, true, uv);
        get("TANGENT", 4, false, tan);
        std::vector<uint32_t> idx;
        if (p.indices >= 0) {
            idx = read_indices(m, p.indices, where + ".indices");
        } else {
            idx.resize(nv);
            for (size_t i = 0; i < nv; ++i) idx[i] = uint32_t(i);
        }
        for (size_t i = 0; i < idx.size(); ++i)
            if (idx[i] >= nv)
                fail(where + ".indices: index " + std::to_string(idx[i]) + " >= the " + std::to_string(nv) +
                     " vertices");
        std::vector<uint32_t> tri;
        if (mode == TINYGLTF_MODE_TRIANGLES) {
            if (idx.size() % 3u)
                fail(where + ": " + std::to_string(idx.size()) + " indices are not a whole number of triangles");
            tri.swap(idx);
        } else if (idx.size() >= 3) {
            tri.reserve((idx.size() - 2) * 3u);
            for (size_t i = 2; i < idx.size(); ++i) {
                uint32_t a = mode == TINYGLTF_MODE_TRIANGLE_FAN ? idx[0] : idx[i - 2], b = idx[i - 1], c = idx[i];
                if (mode == TINYGLTF_MODE_TRIANGLE_STRIP && (i & 1u)) std::swap(a, b);
                tri.push_back(a);
                tri.push_back(b);
                tri.push_back(c);
            }
        }
        size_t nt = tri.size() / 3u;
        if (nt == 0) return;
        if (s->ntriangles + nt > PRIM_INDEX_MASK)
            fail(where + ": the scene would exceed " + std::to_string(PRIM_INDEX_MASK) + " triangles");
        /* the budget counts the triangles the file holds (a node that reuses a mesh places it
         * again without a copy: scene_instance_mesh above) */
        triangles += nt;
        meshes_seen.insert(&p);
        if (triangles > triangle_budget)
            fail(where + ": budget: " + std::to_string(triangles) + " triangles held (" + std::to_string(instanced) +
                 " more placed by instancing, not copied), limit " + std::to_string(triangle_budget) +
                 ", set CAUSTIC_GLTF_MAX_TRIANGLES");
        xform inv;
        if (xform_invert(&world, &inv)) fail(where + ": singular node transform (it cannot be inverted)");
        int mat = material(p.material);
        std::vector<vec3> P(nv), N;
        std::vector<vec2> UV;
        for (size_t i = 0; i < nv; ++i) P[i] = v3(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
        if (!nrm.empty()) {
            N.resize(nv);
            for (size_t i = 0; i < nv; ++i) N[i] = v3(nrm[3 * i], nrm[3 * i + 1], nrm[3 * i + 2]);
        }
        if (!uv.empty()) {
            UV.resize(nv);
            /* glTF's v runs down the image; caustic's (OBJ's) up */
            for (size_t i = 0; i < nv; ++i) UV[i] = v2(uv[2 * i], 1.0f - uv[2 * i + 1]);
        }
        size_t v0 = s->nvertices, t0 = s->ntriangles;
        if (scene_add_mesh(s, P.data(), N.empty() ? nullptr : N.data(), UV.empty() ? nullptr : UV.data(), nv,
                           tri.data(), nullptr, nt, world, mat))
            throw std::bad_alloc(); /* the transform was checked above */
        placed_prims[&p] = placed_prim{v0, nv, t0, nt, world};
        /* the glTF default of a positive handedness, where the file gives none for a normal-mapped mesh
         * is left to the kernel (tangents from the uvs) */
        if (!tan.empty() && scene_set_tangents(s, v0, tan.data(), nv, world)) throw std::bad_alloc();
    }

    /* EXT_mesh_gpu_instancing: the node's mesh placed once per instance (its TRANSLATION, ROTATION
     * and SCALE accessors, composed as a node's), each under the node's world transform; none
     * without the extension. The placements after the first are instances of the first
     * (primitive: scene_instance_mesh), so the mesh is held once. */
    std::vector<xform> gpu_instances(const tinygltf::Node &n, const xform &world, const std::string &np) {
        std::vector<xform> out;
        const tinygltf::Value *a = ext_object(n.extensions, "EXT_mesh_gpu_instancing", "attributes");
        if (!a) return out;
        std::string ap = np + ".extensions.EXT_mesh_gpu_instancing.attributes.";
        std::vector<float> T, R, S;
        size_t count = 0;
        bool any = false;
        auto get = [&](const char *name, int nc, bool norm, std::vector<float> &v) {
            if (!a->Has(name)) return;
            const tinygltf::Value &x = a->Get(name);
            if (!x.IsInt()) fail(ap + name + ": expected an accessor index");
            v = read_floats(m, x.Get<int>(), nc, norm, ap + name);
            size_t c = v.size() / size_t(nc);
            if (any && c != count)
                fail(ap + name + ": " + std::to_string(c) + " elements, another attribute has " +
                     std::to_string(count));
            count = c;
            any = true;
        };
        get("TRANSLATION", 3, false, T);
        get("ROTATION", 4, true, R);
        get("SCALE", 3, false, S);
        if (!any) return out;
        visits += count;
        if (visits > MAX_NODE_VISITS)
            fail(np + ": EXT_mesh_gpu_instancing places more than " + std::to_string(MAX_NODE_VISITS) + " instances");
        out.reserve(count);
        for (size_t i = 0; i < count; ++i) {
            tinygltf::Node t; /* the instance's TRS as a node's (node_local checks and composes it) */
            if (!T.empty()) t.translation = {T[3 * i], T[3 * i + 1], T[3 * i + 2]};
            if (!R.empty()) t.rotation = {R[4 * i], R[4 * i + 1], R[4 * i + 2], R[4 * i + 3]};
            if (!S.empty()) t.scale = {S[3 * i], S[3 * i + 1], S[3 * i + 2]};
            xform local = node_local(t, ap + "[" + std::to_string(i) + "]");
            out.push_back(xform_mul(&world, &local));
        }
        return out;
    }

    void node(int ni, const xform &parent, int depth) {
        if (ni < 0 || size_t(ni) >= m.nodes.size()) fail("node " + std::to_string(ni) + " does not exist");
        if (on_path.size() < m.nodes.size()) on_path.resize(m.nodes.size(), false);
        if (on_path[size_t(ni)]) fail(str_index("nodes", size_t(ni)) + ": the node hierarchy has a cycle");
        if (depth > MAX_NODE_DEPTH)
            fail(str_index("nodes", size_t(ni)) + ": the node hierarchy is deeper than " +
                 std::to_string(MAX_NODE_DEPTH));
        if (++visits > MAX_NODE_VISITS)
            fail("the node hierarchy instances more than " + std::to_string(MAX_NODE_VISITS) + " nodes");
        const tinygltf::Node &n = m.nodes[size_t(ni)];
        std::string np = str_index("nodes", size_t(ni));
        xform local = node_local(n, np);
        xform world = xform_mul(&parent, &local);
        if (n.mesh >= 0) {
            if (size_t(n.mesh) >= m.meshes.size())
                fail(np + ".mesh: mesh " + std::to_string(n.mesh) + " does not exist");
            const tinygltf::Mesh &mesh = m.meshes[size_t(n.mesh)];
            std::vector<xform> places = gpu_instances(n, world, np);
            if (places.empty()) places.push_back(world);
            for (const xform &w : places)
                for (size_t i = 0; i < mesh.primitives.size(); ++i)
                    primitive(mesh.primitives[i], w, str_index("meshes", size_t(n.mesh)) + str_index(".primitives", i));
        }
        if ((flags & GLTF_CAMERA) && !have_camera && n.camera >= 0 && size_t(n.camera) < m.cameras.size() &&
            m.cameras[size_t(n.camera)].type == "perspective")
            camera(m.cameras[size_t(n.camera)], world, np);
        if (flags & GLTF_LIGHTS) light(n, world, np);
        on_path[size_t(ni)] = true;
        for (int c : n.children) node(c, world, depth + 1);
        on_path[size_t(ni)] = false;
    }

    void camera(const tinygltf::Camera &c, const xform &world, const std::string &where) {
        double yfov = c.perspective.yfov;
        if (!(yfov > 0.0) || !(yfov < 3.1)) fail(where + ": camera yfov " + std::to_string(yfov) + " is out of range");
        vec3 eye = xform_point(&world, v3s(0.0f));
        vec3 fwd = xform_vector(&world, v3(0, 0, -1)), up = xform_vector(&world, v3(0, 1, 0));
        if (!(vlen(fwd) > 0.0f) || !(vlen(vcross(fwd, up)) > 0.0f)) fail(where + ": degenerate camera transform");
        camera_desc &d = s->camera;
        d.eye = eye;
        d.lookat = vadd(eye, vnorm(fwd));
        d.up = vnorm(up);
        d.fovy_deg = float(yfov * 180.0 / 3.14159265358979323846);
        d.aperture_radius = 0.0f;
        d.focus_distance = 0.0f;
        double aspect = c.perspective.aspectRatio;
        d.width = 800;
        d.height = aspect > 0.0 && std::isfinite(aspect)
                       ? int(std::lround(800.0 / std::fmin(std::fmax(aspect, 0.05), 20.0)))
                       : 800;
        have_camera = true;
    }

    void light(const tinygltf::Node &n, const xform &world, const std::string &where) {
        auto it = n.extensions.find("KHR_lights_punctual");
        if (it == n.extensions.end() || !it->second.IsObject() || !it->second.Has("light")) return;
        const tinygltf::Value &li = it->second.Get("light");
        if (!li.IsInt() && !li.IsNumber()) fail(where + ".extensions.KHR_lights_punctual.light: not a number");
        int l = li.GetNumberAsInt();
        if (l < 0 || size_t(l) >= m.lights.size())
            fail(where + ".extensions.KHR_lights_punctual.light: light " + std::to_string(l) + " does not exist");
        const tinygltf::Light &g = m.lights[size_t(l)];
        std::string lp = "extensions.KHR_lights_punctual" + str_index(".lights", size_t(l));
        vec3 col = v3s(1.0f);
        if (g.color.size() == 3)
            col = v3(float(clamp01(g.color[0])), float(clamp01(g.color[1])), float(clamp01(g.color[2])));
        if (!(g.intensity >= 0.0) || !(g.intensity <= 1e9))
            fail(lp + ".intensity " + std::to_string(g.intensity) + " is out of range");
        if (g.range > 0.0) warn(lp + ".range is ignored (lights fall off with the inverse square only)");
        vec3 power = vscale(col, float(g.intensity));
        vec3 pos = xform_point(&world, v3s(0.0f)), dir = xform_vector(&world, v3(0, 0, -1));
        int rc;
        if (g.type == "point") {
            rc = scene_add_point_light(s, pos, power);
        } else if (g.type == "directional") {
            rc = scene_add_directional_light(s, dir, power);
        } else if (g.type == "spot") {
            double inner = g.spot.innerConeAngle, outer = g.spot.outerConeAngle;
            if (!(inner >= 0.0) || !(outer > inner) || !(outer <= 3.14159265358979323846 / 2 + 1e-6))
                fail(lp + ".spot: cone angles " + std::to_string(inner) + ", " + std::to_string(outer) +
                     " are out of range (0 <= inner < outer <= pi/2)");
            rc =
                scene_add_spot_light(s, pos, dir, power, float(inner * 180.0 / 3.14159265358979323846),
                                     float(std::fmin(outer * 180.0 / 3.14159265358979323846, 90.0)), SPOT_FALLOFF_GLTF);
        } else {
            fail(lp + ".type \"" + g.type + "\" is not point, spot or directional");
        }
        if (rc) fail(lp + ": degenerate light (zero direction) or out of memory");
        lights++;
    }

    void run() {
        int sc = m.defaultScene >= 0 ? m.defaultScene : (m.scenes.empty() ? -1 : 0);
        if (sc >= 0 && size_t(sc) >= m.scenes.size()) fail("scene " + std::to_string(sc) + " does not exist");
        if (sc >= 0) {
            for (int n : m.scenes[size_t(sc)].nodes) node(n, to_world, 0);
        } else {
            /* no scene: every root node (one that no node lists as a child) */
            std::vector<bool> child(m.nodes.size(), false);
            for (const tinygltf::Node &n : m.nodes)
                for (int c : n.children)
                    if (c >= 0 && size_t(c) < child.size()) child[size_t(c)] = true;
            for (size_t i = 0; i < m.nodes.size(); ++i)
                if (!child[i]) node(int(i), to_world, 0);
        }
    }
};

bool ends_with_ci(const std::string &s, const char *suf) {
    size_t n = std::strlen(suf);
    if (s.size() < n) return false;
    for (size_t i = 0; i < n; ++i)
        if (std::tolower((unsigned char)s[s.size() - n + i]) != suf[i]) return false;
    return true;
}

/* What a failed load must undo: everything added to the scene after these counts. */
struct scene_mark {
    size_t ntriangles, nvertices, nmaterials, ntextures, ntexels, ntexels8, npunctual;
    int has_normals, has_uvs, has_tangents;
    camera_desc cam;
    size_t nmeshes, nplacements;
};
scene_mark mark(const scene *s) {
    scene_mark k = {s->ntriangles, s->nvertices, s->nmaterials,  s->ntextures, s->ntexels,
                    s->ntexels8,   s->npunctual, s->has_normals, s->has_uvs,   s->has_tangents,
                    s->camera,     s->nmeshes,   s->nplacements};
    return k;
}
void rollback(scene *s, const scene_mark &k) {
    s->nmeshes = k.nmeshes;
    s->nplacements = k.nplacements;
    s->ntriangles = k.ntriangles;
    s->nvertices = k.nvertices;
    for (size_t i = k.nmaterials; i < s->nmaterials; ++i) std::free(s->material_names[i]);
    s->nmaterials = k.nmaterials;
    s->ntextures = k.ntextures;
    s->ntexels = k.ntexels;
    s->ntexels8 = k.ntexels8;
    s->npunctual = k.npunctual;
    s->has_normals = k.has_normals;
    s->has_uvs = k.has_uvs;
    s->has_tangents = k.has_tangents;
    s->camera = k.cam;
}

int import(scene *s, const unsigned char *data, size_t size, const char *path, const char *base_dir, bool from_file,
           xform to_world, int material, int flags, bool *lights_out, char *err, size_t errlen) {
    std::string name = path;
    scene_mark k = mark(s);
    try {
        tinygltf::TinyGLTF loader;
        fs_ctx ctx;
        ctx.allow = from_file;
        tinygltf::FsCallbacks fs = {fs_exists, fs_expand, fs_read, fs_write, &ctx};
        loader.SetFsCallbacks(fs);
        loader.SetImageLoader(image_loader, nullptr);
        tinygltf::Model model;
        std::string terr, twarn;
        bool ok;
        std::vector<unsigned char> bytes;
        if (from_file) {
            std::string rerr;
            if (!fs_read(&bytes, &rerr, name, &ctx)) {
                while (!rerr.empty() && rerr.back() == '\n') rerr.pop_back();
                fail(rerr);
            }
            data = bytes.data();
            size = bytes.size();
        }
        /* one limit whether the bytes came from a file (fs_read) or from memory (a scene's
         * embedded model, the fuzzer) */
        if (size > MAX_FILE_BYTES)
            fail("file too large (" + std::to_string(size) + " bytes, at most " + std::to_string(MAX_FILE_BYTES) + ")");
        bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
        if (!glb && ends_with_ci(name, ".glb")) fail("not a binary glTF file (no \"glTF\" magic)");
        if (!glb && std::memchr(data, 0, size)) fail("not a glTF file (a NUL byte in JSON text)");
        std::string base = base_dir ? base_dir : "";
        if (glb)
            ok = loader.LoadBinaryFromMemory(&model, &terr, &twarn, data, unsigned(size), base,
                                             tinygltf::REQUIRE_VERSION);
        else
            ok = loader.LoadASCIIFromString(&model, &terr, &twarn, reinterpret_cast<const char *>(data), unsigned(size),
                                            base, tinygltf::REQUIRE_VERSION);
        if (!ok) {
            for (char &c : terr)
                if (c == '\n') c = ' ';
            while (!terr.empty() && terr.back() == ' ') terr.pop_back();
            fail(std::string(glb ? "glTF 2.0 binary: " : "glTF: ") +
                 (terr.empty() ? std::string("cannot parse") : terr));
        }
        for (const std::string &e : model.extensionsRequired)
            if (e != "KHR_lights_punctual" && e != "KHR_materials_emissive_strength" &&
                e != "KHR_materials_transmission" && e != "KHR_materials_ior" && e != "KHR_materials_clearcoat" &&
                e != "EXT_mesh_gpu_instancing" && e != "KHR_materials_volume")
                fail("requires the extension " + e + ", which caustic does not support");
        importer im(s, model);
        im.name = name;
        im.to_world = to_world;
        im.override_material = material;
        im.flags = flags;
        im.run();
        if (lights_out) *lights_out = im.lights > 0;
        if (s->ntriangles == k.ntriangles) fail("no triangles in the default scene");
        return 0;
    } catch (const load_error &e) {
        rollback(s, k);
        std::snprintf(err, errlen, "%s: %s", path, e.msg.c_str());
    } catch (const std::bad_alloc &) {
        rollback(s, k);
        std::snprintf(err, errlen, "%s: out of memory", path);
    } catch (const std::exception &e) {
        rollback(s, k);
        std::snprintf(err, errlen, "%s: glTF: %s", path, e.what());
    } catch (...) {
        rollback(s, k);
        std::snprintf(err, errlen, "%s: glTF: unexpected error", path);
    }
    return -1;
}

std::string dir_of(const char *path) {
    std::string p = path;
    size_t slash = p.find_last_of('/');
    return slash == std::string::npos ? std::string("") : p.substr(0, slash + 1);
}

} // namespace

extern "C" int scene_gltf_supported(void) { return 1; }

extern "C" int scene_load_gltf(scene *s, const char *path, xform to_world, int material, int flags, char *err,
                               size_t errlen) {
    return import(s, nullptr, 0, path, dir_of(path).c_str(), true, to_world, material, flags, nullptr, err, errlen);
}

extern "C" int scene_load_gltf_memory(scene *s, const void *data, size_t size, const char *name, xform to_world,
                                      int material, int flags, char *err, size_t errlen) {
    return import(s, static_cast<const unsigned char *>(data), size, name, "", false, to_world, material, flags,
                  nullptr, err, errlen);
}

extern "C" int scene_load_gltf_scene(scene **out, const char *path, char *err, size_t errlen) {
    return scene_load_gltf_scene_ex(out, path, nullptr, nullptr, err, errlen);
}

extern "C" int scene_load_gltf_scene_ex(scene **out, const char *path, int *lit, int *has_camera, char *err,
                                        size_t errlen) {
    *out = nullptr;
    scene *s = scene_create();
    if (!s) {
        std::snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    bool lights = false;
    s->camera.width = 0;
    if (import(s, nullptr, 0, path, dir_of(path).c_str(), true, xform_identity(), -1, GLTF_CAMERA | GLTF_LIGHTS,
               &lights, err, errlen)) {
        scene_destroy(s);
        return -1;
    }
    if (lit) *lit = lights;
    if (has_camera) *has_camera = s->camera.width != 0;
    if (s->camera.width == 0) {
        /* no camera in the file: frame the bounds from the front (+z), a little above */
        vec3 lo = v3s(INFINITY), hi = v3s(-INFINITY);
        for (size_t i = 0; i < s->nvertices; ++i) {
            lo = vmin(lo, s->positions[i]);
            hi = vmax(hi, s->positions[i]);
        }
        vec3 c = vscale(vadd(lo, hi), 0.5f);
        float r = 0.5f * vlen(vsub(hi, lo));
        if (!(r > 0.0f)) r = 1.0f;
        camera_desc &d = s->camera;
        d.fovy_deg = 40.0f;
        float dist = 1.15f * r / std::sin(0.5f * d.fovy_deg * 3.14159265f / 180.0f);
        d.lookat = c;
        d.eye = vadd(c, vscale(vnorm(v3(0.0f, 0.35f, 1.0f)), dist));
        d.up = v3(0, 1, 0);
        d.width = d.height = 800;
    }
    /* without punctual lights a white sky of radiance 1 lights the model (emissive surfaces alone
     * rarely light a model that was made to be shown in a viewer's environment) */
    if (!lights) s->env_radiance = v3s(1.0f);
    *out = s;
    return 0;
}
