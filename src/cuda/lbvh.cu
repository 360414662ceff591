// GPU LBVH builder (Karras 2012, "Maximizing parallelism in the construction of BVHs, octrees
// and k-d trees"): 63-bit Morton codes of the primitive centroids, CUB radix sort, one thread
// per inner node emits the binary hierarchy, bounds are propagated bottom-up with atomics (the
// second child to arrive at a node computes it). The binary tree is then relabelled so that
// siblings are adjacent, subtrees of at most LBVH_LEAF primitives become leaves, and the host's
// shared collapse (bvh_collapse, src/accel/bvh.c: the 4-wide tree of least SAH cost, leaves
// counted per primitive as the host's GPU tree counts them) turns it into the 4-wide nodes and
// leaf blocks that the shared traversal reads.
#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cuda/cuda_internal.h"
extern "C" {
#include "accel/bvh.h"
}
#include "util/timer.h"

#define LBVH_LEAF 4
static_assert(LBVH_LEAF <= BVH_MAX_LEAF_BLOCKS * BVH_LEAF_WIDTH, "LBVH leaf too large for the traversal stack");

// Spreads the low 21 bits of x to every third bit.
__device__ __forceinline__ uint64_t spread3(uint64_t x) {
    x &= 0x1fffffull;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

__global__ void lbvh_morton(const vec3 *lo, const vec3 *hi, uint32_t n, vec3 origin, vec3 scale, uint64_t *keys,
                            uint32_t *vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec3 c = vscale(vadd(lo[i], hi[i]), 0.5f);
    float q = 2097151.0f; // 2^21 - 1
    uint64_t x = (uint64_t)kclamp((c.x - origin.x) * scale.x * q, 0.0f, q);
    uint64_t y = (uint64_t)kclamp((c.y - origin.y) * scale.y * q, 0.0f, q);
    uint64_t z = (uint64_t)kclamp((c.z - origin.z) * scale.z * q, 0.0f, q);
    keys[i] = spread3(x) << 2 | spread3(y) << 1 | spread3(z);
    vals[i] = i;
}

// Common prefix length of the keys at i and j (the index breaks ties between equal keys);
// -1 outside [0, n).
__device__ __forceinline__ int lbvh_delta(const uint64_t *k, int n, int i, int j) {
    if (j < 0 || j >= n) return -1;
    uint64_t a = k[i], b = k[j];
    return a == b ? 64 + __clz((unsigned)(i ^ j)) : __clzll((long long)(a ^ b));
}

// Inner node i (of n - 1). Child references: < n - 1 an inner node, else leaf (ref - (n - 1)).
__global__ void lbvh_hierarchy(const uint64_t *k, int n, int *left, int *right, int *first, int *last, int *parent) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1) return;
    int d = lbvh_delta(k, n, i, i + 1) - lbvh_delta(k, n, i, i - 1) >= 0 ? 1 : -1;
    int dmin = lbvh_delta(k, n, i, i - d);
    int lmax = 2;
    while (lbvh_delta(k, n, i, i + lmax * d) > dmin) lmax *= 2;
    int l = 0;
    for (int t = lmax / 2; t >= 1; t /= 2)
        if (lbvh_delta(k, n, i, i + (l + t) * d) > dmin) l += t;
    int j = i + l * d;
    int dnode = lbvh_delta(k, n, i, j);
    int s = 0;
    for (int t = (l + 1) / 2;; t = (t + 1) / 2) {
        if (lbvh_delta(k, n, i, i + (s + t) * d) > dnode) s += t;
        if (t == 1) break;
    }
    int gamma = i + s * d + (d < 0 ? -1 : 0);
    int lo = i < j ? i : j, hi = i < j ? j : i;
    int lc = lo == gamma ? (n - 1) + gamma : gamma;
    int rc = hi == gamma + 1 ? (n - 1) + gamma + 1 : gamma + 1;
    left[i] = lc;
    right[i] = rc;
    first[i] = lo;
    last[i] = hi;
    parent[lc] = i;
    parent[rc] = i;
}

// Leaf j starts at its primitive's box and climbs; at each inner node the first arrival stops,
// the second (which sees both children done) computes the union and goes on.
__global__ void lbvh_bounds(const vec3 *plo, const vec3 *phi, const uint32_t *order, int n, const int *left,
                            const int *right, const int *parent, unsigned *flags, float *nb) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    int node = (n - 1) + j;
    vec3 a = plo[order[j]], b = phi[order[j]];
    float *o = nb + 6 * (size_t)node;
    o[0] = a.x;
    o[1] = a.y;
    o[2] = a.z;
    o[3] = b.x;
    o[4] = b.y;
    o[5] = b.z;
    while (node != 0) {
        int p = parent[node];
        __threadfence();
        if (atomicAdd(&flags[p], 1u) == 0u) return;
        __threadfence();
        const float *l = nb + 6 * (size_t)left[p], *r = nb + 6 * (size_t)right[p];
        float *q = nb + 6 * (size_t)p;
        for (int c = 0; c < 3; ++c) {
            q[c] = fminf(__ldcg(l + c), __ldcg(r + c));
            q[3 + c] = fmaxf(__ldcg(l + 3 + c), __ldcg(r + 3 + c));
        }
        node = p;
    }
}

extern "C" void cuda_bvh_out_free(cuda_bvh_out *o) {
    if (!o) return;
    free(o->nodes);
    free(o->prim_ids);
    free(o->leaves);
    memset(o, 0, sizeof *o);
}

static int depth4(const bvh4_node *nodes, uint32_t at) {
    int d = 0;
    for (int c = 0; c < BVH4_WIDTH; ++c)
        if (nodes[at].count[c] == 0 && nodes[at].child[c] != 0) {
            int x = depth4(nodes, nodes[at].child[c]);
            if (x > d) d = x;
        }
    return d + 1;
}

namespace {
struct dev_bufs {
    vec3 *lo = nullptr, *hi = nullptr;
    uint64_t *keys = nullptr, *keys2 = nullptr;
    uint32_t *vals = nullptr, *vals2 = nullptr;
    int *left = nullptr, *right = nullptr, *first = nullptr, *last = nullptr, *parent = nullptr;
    unsigned *flags = nullptr;
    float *nb = nullptr;
    void *temp = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    ~dev_bufs() {
        cudaFree(lo);
        cudaFree(hi);
        cudaFree(keys);
        cudaFree(keys2);
        cudaFree(vals);
        cudaFree(vals2);
        cudaFree(left);
        cudaFree(right);
        cudaFree(first);
        cudaFree(last);
        cudaFree(parent);
        cudaFree(flags);
        cudaFree(nb);
        cudaFree(temp);
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
    }
};
} // namespace

// Builds the LBVH into host arrays (4-wide nodes, leaf blocks, primitive ids in leaf order).
static int lbvh_build_host(const kscene *s, cudaStream_t st, cuda_bvh_out *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    size_t np = kscene_nprims(s);
    if (np == 0) return 0;
    if (np >= (1u << 30)) {
        snprintf(err, errlen, "LBVH: too many primitives (%zu)", np);
        return -1;
    }
    int n = (int)np;
    std::vector<vec3> lo(np), hi(np);
    std::vector<uint32_t> ids(np);
    kscene_prim_bounds(s, lo.data(), hi.data(), ids.data());
    vec3 blo = v3s(INFINITY), bhi = v3s(-INFINITY);
    for (size_t i = 0; i < np; ++i) {
        vec3 c = vscale(vadd(lo[i], hi[i]), 0.5f);
        blo = vmin(blo, c);
        bhi = vmax(bhi, c);
    }
    vec3 ext = vsub(bhi, blo), scale;
    scale.x = ext.x > 0.0f ? 1.0f / ext.x : 0.0f;
    scale.y = ext.y > 0.0f ? 1.0f / ext.y : 0.0f;
    scale.z = ext.z > 0.0f ? 1.0f / ext.z : 0.0f;

    double t0 = timer_now();
    dev_bufs d;
    CUDA_TRY(cudaMalloc(&d.lo, np * sizeof(vec3)));
    CUDA_TRY(cudaMalloc(&d.hi, np * sizeof(vec3)));
    CUDA_TRY(cudaMalloc(&d.keys, np * sizeof(uint64_t)));
    CUDA_TRY(cudaMalloc(&d.keys2, np * sizeof(uint64_t)));
    CUDA_TRY(cudaMalloc(&d.vals, np * sizeof(uint32_t)));
    CUDA_TRY(cudaMalloc(&d.vals2, np * sizeof(uint32_t)));
    size_t ni = np > 1 ? np - 1 : 1;
    CUDA_TRY(cudaMalloc(&d.left, ni * sizeof(int)));
    CUDA_TRY(cudaMalloc(&d.right, ni * sizeof(int)));
    CUDA_TRY(cudaMalloc(&d.first, ni * sizeof(int)));
    CUDA_TRY(cudaMalloc(&d.last, ni * sizeof(int)));
    CUDA_TRY(cudaMalloc(&d.parent, 2 * np * sizeof(int)));
    CUDA_TRY(cudaMalloc(&d.flags, ni * sizeof(unsigned)));
    CUDA_TRY(cudaMalloc(&d.nb, 2 * np * 6 * sizeof(float)));
    size_t temp_bytes = 0;
    CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d.keys, d.keys2, d.vals, d.vals2, n, 0, 63, st));
    CUDA_TRY(cudaMalloc(&d.temp, temp_bytes));
    CUDA_TRY(cudaEventCreate(&d.e0));
    CUDA_TRY(cudaEventCreate(&d.e1));
    CUDA_TRY(cudaMemcpyAsync(d.lo, lo.data(), np * sizeof(vec3), cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaMemcpyAsync(d.hi, hi.data(), np * sizeof(vec3), cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaMemsetAsync(d.flags, 0, ni * sizeof(unsigned), st));
    CUDA_TRY(cudaEventRecord(d.e0, st));
    unsigned g = (unsigned)((np + 255) / 256);
    lbvh_morton<<<g, 256, 0, st>>>(d.lo, d.hi, (uint32_t)n, blo, scale, d.keys, d.vals);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cub::DeviceRadixSort::SortPairs(d.temp, temp_bytes, d.keys, d.keys2, d.vals, d.vals2, n, 0, 63, st));
    if (n > 1) {
        lbvh_hierarchy<<<g, 256, 0, st>>>(d.keys2, n, d.left, d.right, d.first, d.last, d.parent);
        CUDA_TRY(cudaGetLastError());
    }
    lbvh_bounds<<<g, 256, 0, st>>>(d.lo, d.hi, d.vals2, n, d.left, d.right, d.parent, d.flags, d.nb);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaEventRecord(d.e1, st));
    std::vector<int> left(ni), right(ni), first(ni), last(ni);
    std::vector<float> nb(2 * np * 6);
    std::vector<uint32_t> order(np);
    CUDA_TRY(cudaMemcpyAsync(order.data(), d.vals2, np * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
    CUDA_TRY(cudaMemcpyAsync(nb.data(), d.nb, (2 * np - 1) * 6 * sizeof(float), cudaMemcpyDeviceToHost, st));
    if (n > 1) {
        CUDA_TRY(cudaMemcpyAsync(left.data(), d.left, ni * sizeof(int), cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaMemcpyAsync(right.data(), d.right, ni * sizeof(int), cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaMemcpyAsync(first.data(), d.first, ni * sizeof(int), cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaMemcpyAsync(last.data(), d.last, ni * sizeof(int), cudaMemcpyDeviceToHost, st));
    }
    CUDA_TRY(cudaStreamSynchronize(st));
    float ms = 0.0f;
    CUDA_TRY(cudaEventElapsedTime(&ms, d.e0, d.e1));
    out->gpu_seconds = ms * 1e-3;

    // Relabel: siblings adjacent (bvh_node layout), small subtrees become leaves.
    double tc = timer_now();
    std::vector<bvh_node> bin;
    bin.reserve(2 * np);
    bin.resize(1);
    std::vector<std::pair<int, uint32_t>> stack; // (Karras node, slot)
    size_t nleaves = 0;
    int root = n > 1 ? 0 : (n - 1); // a single primitive: the root is leaf 0
    stack.push_back(std::make_pair(root, 0u));
    while (!stack.empty()) {
        int x = stack.back().first;
        uint32_t slot = stack.back().second;
        stack.pop_back();
        const float *b = &nb[6 * (size_t)x];
        bvh_node bn;
        bn.lo = v3(b[0], b[1], b[2]);
        bn.hi = v3(b[3], b[4], b[5]);
        if (x >= n - 1) {
            bn.index = (uint32_t)(x - (n - 1));
            bn.count = 1;
            nleaves++;
        } else if (last[x] - first[x] + 1 <= LBVH_LEAF) {
            bn.index = (uint32_t)first[x];
            bn.count = (uint32_t)(last[x] - first[x] + 1);
            nleaves++;
        } else {
            uint32_t c = (uint32_t)bin.size();
            bin.resize(bin.size() + 2);
            bn.index = c;
            bn.count = 0;
            stack.push_back(std::make_pair(left[x], c));
            stack.push_back(std::make_pair(right[x], c + 1));
        }
        bin[slot] = bn;
    }
    out->nodes = (bvh4_node *)malloc(bin.size() * sizeof(bvh4_node));
    out->prim_ids = (uint32_t *)malloc(np * sizeof(uint32_t));
    out->leaves = (bvh_leaf4 *)malloc(bvh_leaf4_bound(nleaves, np) * sizeof(bvh_leaf4));
    if (!out->nodes || !out->prim_ids || !out->leaves) {
        cuda_bvh_out_free(out);
        snprintf(err, errlen, "LBVH: out of memory");
        return -1;
    }
    for (size_t i = 0; i < np; ++i) out->prim_ids[i] = ids[order[i]];
    out->nnodes = bvh_collapse(bin.data(), bin.size(), out->prim_ids, s->triangles, BVH4_WIDTH, CUDA_SAH_LANES,
                               out->nodes, out->leaves, &out->nleaf4);
    if (out->nnodes == 0) {
        cuda_bvh_out_free(out);
        snprintf(err, errlen, "LBVH: out of memory");
        return -1;
    }
    out->nprims = np;
    out->max_depth = depth4(out->nodes, 0);
    out->collapse_seconds = timer_now() - tc;
    out->total_seconds = timer_now() - t0;
    if (out->nnodes > (size_t)BVH_MAX_REF + 1 || out->nleaf4 > (size_t)BVH_MAX_REF + 1) {
        snprintf(err, errlen, "LBVH: %zu nodes / %zu leaf blocks, more than the traversal can address", out->nnodes,
                 out->nleaf4);
        cuda_bvh_out_free(out);
        return -1;
    }
    if (out->max_depth > BVH_MAX_DEPTH) {
        snprintf(err, errlen, "LBVH: the 4-wide tree is %d levels deep, more than the traversal stack allows (%d)",
                 out->max_depth, BVH_MAX_DEPTH);
        cuda_bvh_out_free(out);
        return -1;
    }
    return 0;
}

extern "C" int cuda_lbvh_build(const kscene *s, cuda_bvh_out *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (cuda_device_count() == 0) {
        snprintf(err, errlen, "no CUDA device available");
        return -1;
    }
    cudaStream_t st;
    CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int rc = lbvh_build_host(s, st, out, err, errlen);
    cudaStreamDestroy(st);
    return rc;
}

int lbvh_build_device(cuda_renderer *r, const kscene *s, cuda_bvh_out *out_host, char *err, size_t errlen) {
    cuda_bvh_out o;
    double t0 = timer_now();
    if (lbvh_build_host(s, r->stream, &o, err, errlen)) return -1;
    void *nodes = NULL, *leaves = NULL;
    if (o.nnodes) {
        cudaError_t e = cudaMalloc(&nodes, o.nnodes * sizeof(bvh4_node));
        if (e == cudaSuccess && cuda_own_buffer(r, nodes, "nodes", err, errlen)) {
            cuda_bvh_out_free(&o);
            return -1;
        }
        if (e == cudaSuccess) e = cudaMalloc(&leaves, o.nleaf4 * sizeof(bvh_leaf4));
        if (e == cudaSuccess && cuda_own_buffer(r, leaves, "leaves", err, errlen)) {
            cuda_bvh_out_free(&o);
            return -1;
        }
        if (e == cudaSuccess) e = cudaMemcpy(nodes, o.nodes, o.nnodes * sizeof(bvh4_node), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(leaves, o.leaves, o.nleaf4 * sizeof(bvh_leaf4), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            snprintf(err, errlen, "CUDA: uploading the LBVH: %s", cudaGetErrorString(e));
            cuda_bvh_out_free(&o);
            return -1;
        }
    }
    r->k.nodes = (const bvh4_node *)nodes;
    r->k.leaves = (const bvh_leaf4 *)leaves;
    r->k.nnodes = (uint32_t)o.nnodes;
    r->k.nleaf4 = (uint32_t)o.nleaf4;
    r->bvh_build_seconds = timer_now() - t0;
    o.total_seconds = r->bvh_build_seconds;
    if (out_host)
        *out_host = o;
    else
        cuda_bvh_out_free(&o);
    return 0;
}
