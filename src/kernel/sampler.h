/* Sample generators. Every value depends only on (pixel, sample index, dimension, seed), never
 * on thread or schedule, so images are bit-identical for any thread count.
 *   random      PCG32 stream per pixel sample.
 *   stratified  jittered strata over the pixel's spp per dimension (pair), strata order
 *               permuted per dimension, Cranley-Patterson rotated per pixel.
 *   sobol       2D Sobol (0,2)-sequence per draw (padded, Burley 2020): the sample index is
 *               shuffled by a nested uniform scramble and the values Owen-scrambled, with one
 *               hash of (pixel, dimension) per draw; 1D draws compute one coordinate only.
 *
 * Dimensions: the camera's SAMPLE_DIMS_CAMERA draws, then SAMPLE_DIMS_BOUNCE per bounce (light,
 * BSDF, roulette: the SAMPLE_DIM_* offsets below). Media draw from a block of their own
 * (sampler_medium_1d: far above any bounce's, and without advancing s->dim), so a scene without
 * media draws exactly the numbers it drew before media existed.
 *
 * Cost (the sampler runs five times per bounce): every Sobol operation is a few integer
 * instructions, no loops. Bit reversal is one instruction on the GPU (__brev) and a byte swap
 * plus three swaps on the CPU; the second Sobol dimension is the Pascal matrix mod 2, applied
 * with five shift-xor steps (see sobol_dim1_rev); the scrambles are one hash-based permutation
 * each (nested_perm). On the CPU's AVX2 level a bounce's five draws (seven values) and the
 * camera's two are computed together over eight 32-bit lanes (sampler_bounce, sampler_camera):
 * the same integer operations, so the same bits as the scalar draws. */
#ifndef CAUSTIC_KERNEL_SAMPLER_H
#define CAUSTIC_KERNEL_SAMPLER_H

#include "rng.h"
#include "vec.h"

typedef enum sampler_type { SAMPLER_RANDOM = 0, SAMPLER_STRATIFIED = 1, SAMPLER_SOBOL = 2 } sampler_type;

/* The per-sample dimension budget (a draw is one dimension, 1D or 2D). The camera's draws: pixel
 * position, lens position. A bounce's, at these offsets from its first dimension: light
 * selection (1D) and position (2D), BSDF lobe (1D) and direction (2D), Russian roulette (1D).
 * Changing the surface counts changes every image; a medium never does (SAMPLE_DIM_MEDIA_BASE). */
#define SAMPLE_DIMS_CAMERA     2u
#define SAMPLE_DIMS_LIGHT      2u /* light pick, light position */
#define SAMPLE_DIMS_BSDF       2u /* lobe, direction */
#define SAMPLE_DIMS_RR         1u /* Russian roulette */
#define SAMPLE_DIMS_BOUNCE     (SAMPLE_DIMS_LIGHT + SAMPLE_DIMS_BSDF + SAMPLE_DIMS_RR)
#define SAMPLE_DIM_LIGHT_PICK  0u
#define SAMPLE_DIM_LIGHT       1u
#define SAMPLE_DIM_LOBE        (SAMPLE_DIMS_LIGHT + 0u)
#define SAMPLE_DIM_BSDF        (SAMPLE_DIMS_LIGHT + 1u)
#define SAMPLE_DIM_RR          (SAMPLE_DIMS_LIGHT + SAMPLE_DIMS_BSDF)
/* Media: SAMPLE_DIMS_MEDIUM draws per media event (the channel, the distance, NEE's light and
 * the phase direction: kernel/medium.h, medium_dims) at SAMPLE_DIM_MEDIA_BASE + depth * SAMPLE_DIMS_MEDIUM + k, and past those a stream
 * per bounce for the unbounded draws of delta and ratio tracking (sampler_medium_stream). The
 * base lies above every bounce's surface dimensions (depth < SAMPLE_MEDIA_MAX_DEPTH). */
#define SAMPLE_DIMS_MEDIUM     8u
#define SAMPLE_MEDIA_MAX_DEPTH 65536u
#define SAMPLE_DIM_MEDIA_BASE  (SAMPLE_DIMS_CAMERA + SAMPLE_DIMS_BOUNCE * SAMPLE_MEDIA_MAX_DEPTH)

typedef struct sampler {
    int type;
    uint32_t pixel_seed; /* hash of pixel and user seed */
    uint32_t index;      /* sample index within the pixel */
    uint32_t rev_index;  /* index with its bits reversed (Sobol) */
    uint32_t dim;        /* next dimension (one per draw, 1D or 2D) */
    uint32_t spp;        /* strata count for the stratified sampler */
    pcg32 rng;           /* per-sample stream: random sampler and jitter (not seeded for Sobol) */
} sampler;

KFN uint32_t reverse_bits32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __brev(x);
#else
#if defined(__GNUC__)
    x = __builtin_bswap32(x);
#else
    x = (x << 16) | (x >> 16);
    x = ((x & 0x00ff00ffu) << 8) | ((x & 0xff00ff00u) >> 8);
#endif
    x = ((x & 0x0f0f0f0fu) << 4) | ((x & 0xf0f0f0f0u) >> 4);
    x = ((x & 0x33333333u) << 2) | ((x & 0xccccccccu) >> 2);
    x = ((x & 0x55555555u) << 1) | ((x & 0xaaaaaaaau) >> 1);
    return x;
#endif
}

KFN sampler sampler_start(int type, uint32_t px, uint32_t py, uint32_t index, uint32_t seed, uint32_t spp) {
    sampler s;
    s.type = type;
    s.pixel_seed = hash_combine(hash_combine(hash_u32(px), py), seed);
    s.index = index;
    s.rev_index = reverse_bits32(index);
    s.dim = 0;
    s.spp = spp > 0 ? spp : 1;
    if (type == SAMPLER_SOBOL) {
        s.rng.state = 0u;
        s.rng.inc = 0u;
    } else
        s.rng = pcg32_seed(hash_u64(((uint64_t)s.pixel_seed << 32) | index), s.pixel_seed);
    return s;
}

/* Sobol dimension 1 with the index's bits in the reversed order it is scrambled in: its
 * generator is the Pascal matrix mod 2, whose entry (j, k) is C(k, j) mod 2 = [j & k == j]
 * (Lucas), so bit j of the result is the xor of the index bits k that contain j: a superset
 * transform, five shift-xor steps. sobol_dim1(i) = reverse_bits32(sobol_dim1_rev(i)). */
KFN uint32_t sobol_dim1_rev(uint32_t i) {
    i ^= (i >> 1) & 0x55555555u;
    i ^= (i >> 2) & 0x33333333u;
    i ^= (i >> 4) & 0x0f0f0f0fu;
    i ^= (i >> 8) & 0x00ff00ffu;
    i ^= (i >> 16) & 0x0000ffffu;
    return i;
}
/* First two Sobol dimensions as 32-bit fixed point: dimension 0 is the van der Corput radical
 * inverse, dimension 1 has direction numbers v_k = v_{k-1} ^ (v_{k-1} >> 1), v_0 = 2^31. */
KFN uint32_t sobol_dim0(uint32_t i) { return reverse_bits32(i); }
KFN uint32_t sobol_dim1(uint32_t i) { return reverse_bits32(sobol_dim1_rev(i)); }

/* A hash-based permutation of 32-bit words in which bit k of the result depends only on bits
 * <= k of the input (multiplication carries upward only): on bit-reversed values it is a nested
 * uniform (Owen) scramble (Laine and Karras 2011; this is N. Vegdahl's improved variant, also
 * used by pbrt-v4). */
KFN uint32_t nested_perm(uint32_t x, uint32_t seed) {
    x ^= x * 0x3d20adeau;
    x += seed;
    x *= (seed >> 16) | 1u;
    x ^= x * 0x05526c56u;
    x ^= x * 0x53a22864u;
    return x;
}

/* A Sobol draw's randomness: hashes of (pixel, dimension), independent of the sample index:
 * one seeds the index shuffle, one the x coordinate's value scramble and a hash of that one the
 * y coordinate's (two hashes of keys that differ by a constant xor were not independent enough:
 * the coordinates of one unshuffled sample across pixels must be jointly uniform, test_sampler). */
#define SOBOL_DIM_KEY 0x9e3779b9u
#define SOBOL_SEED_X  0x2c1b3c6du
#define SOBOL_SEED_Y  0x297a2d39u
KFN uint32_t sobol_draw_key(const sampler *s, uint32_t dim) { return s->pixel_seed ^ (dim * SOBOL_DIM_KEY); }
KFN uint32_t sobol_draw_hash(const sampler *s, uint32_t dim) { return hash_u32(sobol_draw_key(s, dim)); }
/* The shuffled index, bit-reversed: Burley's nested uniform scramble of the index (so every
 * prefix of 2^m samples is still one aligned block of the sequence: a (0,m,2)-net), kept in the
 * reversed order in which the values are scrambled (dimension 0 reversed is the index itself).
 * The first draw (the camera's pixel position) keeps the index unshuffled: the others' shuffles
 * decorrelate them from it, and the first ray waits for it (a shorter chain of operations). */
KFN uint32_t sobol_shuffled(const sampler *s, uint32_t dim, uint32_t h) {
    return dim == 0u ? s->index : reverse_bits32(nested_perm(s->rev_index, h));
}
KFN uint32_t sobol_seed_x(const sampler *s, uint32_t dim) { return hash_u32(sobol_draw_key(s, dim) ^ SOBOL_SEED_X); }
KFN uint32_t sobol_seed_y(const sampler *s, uint32_t dim) { return hash_u32(sobol_seed_x(s, dim) ^ SOBOL_SEED_Y); }
KFN float sobol_x(const sampler *s, uint32_t dim, uint32_t idx) {
    return u32_to_unit_float(reverse_bits32(nested_perm(idx, sobol_seed_x(s, dim))));
}
KFN float sobol_y(const sampler *s, uint32_t dim, uint32_t idx) {
    uint32_t seed = sobol_seed_y(s, dim);
    return u32_to_unit_float(reverse_bits32(nested_perm(sobol_dim1_rev(idx), seed)));
}
/* Draw `dim` of the current sample (no dimension is consumed): its shuffled index, then the
 * value or the point at that index. The batched draws below compute their 2D draws' indices
 * first, as they did before these helpers: ptxas schedules the GPU's megakernels by that order
 * (the draws in call order were 1-2 % slower on rtow, cornell-glass and the Cornell box: H200,
 * docs/performance-log.md, 2026-11-28, "merged main on an H200"). */
KFN uint32_t sobol_index(const sampler *s, uint32_t dim) { return sobol_shuffled(s, dim, sobol_draw_hash(s, dim)); }
KFN vec2 sobol_point(const sampler *s, uint32_t dim, uint32_t idx) {
    return v2(sobol_x(s, dim, idx), sobol_y(s, dim, idx));
}
KFN float sobol_1d_at(const sampler *s, uint32_t dim) { return sobol_x(s, dim, sobol_index(s, dim)); }

/* Random bijection of [0, n) (cycle-walking an invertible hash on the next power of two). */
KFN uint32_t permute_index(uint32_t i, uint32_t n, uint32_t seed) {
    if (n <= 1u) return 0u;
    uint32_t w = n - 1u;
    w |= w >> 1;
    w |= w >> 2;
    w |= w >> 4;
    w |= w >> 8;
    w |= w >> 16;
    do {
        i ^= seed & w;
        i = (i * 0x9e3779b1u) & w; /* odd multiplier: bijective mod 2^k */
        i ^= (i & w) >> 3;
        i = (i + (seed >> 8)) & w;
        i = (i * 0x2c1b3c6du + 0x12345u) & w; /* odd: bijective */
        i ^= (i & w) >> 5;
    } while (i >= n);
    return i;
}

KFN vec2 stratified_2d(sampler *s) {
    uint32_t pair_seed = hash_combine(s->pixel_seed, s->dim);
    uint32_t sx = (uint32_t)sqrtf((float)s->spp);
    if (sx < 1u) sx = 1u;
    uint32_t sy = s->spp / sx, n = sx * sy;
    uint32_t round = s->index / n;
    /* strata order depends on the dimension only, so all pixels share the pattern... */
    uint32_t stratum = permute_index(s->index % n, n, hash_combine((s->dim + 1u) * 0x9e3779b9u, round));
    /* ...and a per-pixel Cranley-Patterson rotation decorrelates neighbouring pixels. The
     * shift is quantised to whole strata: a fractional shift would split strata across the
     * wrap-around and lose stratification on integrands that are not periodic. */
    uint32_t shift_x = hash_u32(pair_seed) % sx, shift_y = hash_u32(pair_seed ^ 0x5bd1e995u) % sy;
    float jx = pcg32_float(&s->rng), jy = pcg32_float(&s->rng);
    float x = ((float)((stratum % sx + shift_x) % sx) + jx) / (float)sx;
    float y = ((float)((stratum / sx + shift_y) % sy) + jy) / (float)sy;
    return v2(kmin(x, 0.99999994f), kmin(y, 0.99999994f));
}

KFN vec2 sampler_2d(sampler *s) {
    if (s->type == SAMPLER_SOBOL) {
        uint32_t d = s->dim++;
        return sobol_point(s, d, sobol_index(s, d));
    }
    if (s->type == SAMPLER_STRATIFIED) {
        vec2 u = stratified_2d(s);
        s->dim++;
        return u;
    }
    s->dim++;
    float x = pcg32_float(&s->rng);
    float y = pcg32_float(&s->rng);
    return v2(x, y);
}

KFN float sampler_1d(sampler *s) {
    if (s->type == SAMPLER_SOBOL) { return sobol_1d_at(s, s->dim++); }
    if (s->type == SAMPLER_RANDOM) {
        s->dim++;
        return pcg32_float(&s->rng);
    }
    return sampler_2d(s).x;
}

/* ---- several draws at once --------------------------------------------------------------------
 * sampler_camera and sampler_bounce draw what the path tracer needs at the camera and at each
 * bounce, in the order of the calls they replace (so any sampler gives the same numbers as
 * those calls). With AVX2, Sobol's draws run over eight 32-bit lanes: lane l computes the
 * coordinate (x or y) of draw s->dim + off[l] with the scalar draws' integer operations. */
#if KERNEL_SIMD_AVX2
KFN __m256i simd_bswap32(__m256i x) {
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7,
                                                   6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12));
}
/* GFNI bit matrices (one byte's affine transform): the bit reversal, and the bit reversal
 * followed by sobol_dim1_rev's three steps within a byte (shifts 1, 2, 4). */
#define GF2_REVERSE      0x8040201008040201ULL
#define GF2_REVERSE_DIM1 0xff5533110f050301ULL
KFN __m256i simd_reverse_bits32(__m256i x) {
#if KERNEL_SIMD_AVX512
    /* GFNI: each byte's bits reversed by one affine transform (the anti-diagonal bit matrix) */
    return simd_bswap32(_mm256_gf2p8affine_epi64_epi8(x, _mm256_set1_epi64x((long long)GF2_REVERSE), 0));
#endif
    /* byte swap within each lane, then each byte's bits by two nibble lookups */
    const __m256i rev_hi = _mm256_setr_epi8(0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15, 0, 8, 4, 12, 2, 10, 6,
                                            14, 1, 9, 5, 13, 3, 11, 7, 15);
    const __m256i rev_lo = _mm256_slli_epi16(rev_hi, 4); /* no carries: entries < 16 */
    const __m256i nib = _mm256_set1_epi8(0x0f);
    x = simd_bswap32(x);
    __m256i lo = _mm256_and_si256(x, nib), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
    return _mm256_or_si256(_mm256_shuffle_epi8(rev_lo, lo), _mm256_shuffle_epi8(rev_hi, hi));
}
KFN __m256i simd_mul32(__m256i a, uint32_t c) { return _mm256_mullo_epi32(a, _mm256_set1_epi32((int)c)); }
KFN __m256i simd_xorshr(__m256i x, int n) { return _mm256_xor_si256(x, _mm256_srli_epi32(x, n)); }
KFN __m256i simd_nested_perm(__m256i x, __m256i seed) {
    x = _mm256_xor_si256(x, simd_mul32(x, 0x3d20adeau));
    x = _mm256_add_epi32(x, seed);
    x = _mm256_mullo_epi32(x, _mm256_or_si256(_mm256_srli_epi32(seed, 16), _mm256_set1_epi32(1)));
    x = _mm256_xor_si256(x, simd_mul32(x, 0x05526c56u));
    return _mm256_xor_si256(x, simd_mul32(x, 0x53a22864u));
}
KFN __m256i simd_hash(__m256i x) { /* hash_u32 */
    x = simd_mul32(simd_xorshr(x, 16), 0x7feb352du);
    x = simd_mul32(simd_xorshr(x, 15), 0x846ca68bu);
    return simd_xorshr(x, 16);
}
/* A batch's per-lane seeds, hashes of (pixel, dimension) only: lane l's index shuffle (h) and
 * value scramble (vseed) for coordinate ymask[l] ? y : x of draw dim + off[l]. */
typedef struct sobol_seeds {
    __m256i h, vseed;
} sobol_seeds;
KFN sobol_seeds sobol_lane_seeds(uint32_t pixel_seed, uint32_t dim, __m256i off, __m256i ymask) {
    sobol_seeds sd;
    __m256i key = _mm256_add_epi32(_mm256_set1_epi32((int)(dim * SOBOL_DIM_KEY)), simd_mul32(off, SOBOL_DIM_KEY));
    key = _mm256_xor_si256(_mm256_set1_epi32((int)pixel_seed), key);
    sd.h = simd_hash(key);
    sd.vseed = simd_hash(_mm256_xor_si256(key, _mm256_set1_epi32((int)SOBOL_SEED_X)));
    sd.vseed = _mm256_blendv_epi8(sd.vseed, simd_hash(_mm256_xor_si256(sd.vseed, _mm256_set1_epi32((int)SOBOL_SEED_Y))),
                                  ymask);
    return sd;
}
/* lane l: coordinate ymask[l] ? y : x of draw s->dim + off[l], with the seeds sd of that
 * batch; out[l] as sobol_x / sobol_y (the lanes of draw 0 keep the index unshuffled,
 * sobol_shuffled). ymask is the same for both lanes of each 64-bit half (the GFNI matrices
 * apply per 64 bits). */
KFN void sobol_lanes_seeded(const sampler *s, const sobol_seeds *sd, __m256i off, __m256i ymask, float *out) {
    /* the shuffled index, bit-reversed */
    __m256i idx = simd_nested_perm(_mm256_set1_epi32((int)s->rev_index), sd->h);
    if (s->dim == 0u) {
        idx = _mm256_blendv_epi8(idx, _mm256_set1_epi32((int)s->rev_index),
                                 _mm256_cmpeq_epi32(off, _mm256_setzero_si256()));
    }
    /* reversed back; y lanes: sobol_dim1_rev (its steps commute; masked steps leave the x lanes
     * alone), at the avx512 level its steps within bytes in the reversal's affine transform */
#if KERNEL_SIMD_AVX512
    __m256i mat = _mm256_blendv_epi8(_mm256_set1_epi64x((long long)GF2_REVERSE),
                                     _mm256_set1_epi64x((long long)GF2_REVERSE_DIM1), ymask);
    idx = simd_bswap32(_mm256_gf2p8affine_epi64_epi8(idx, mat, 0));
#else
    idx = simd_reverse_bits32(idx);
    idx = _mm256_xor_si256(
        idx, _mm256_and_si256(_mm256_srli_epi32(idx, 1), _mm256_and_si256(ymask, _mm256_set1_epi32(0x55555555))));
    idx = _mm256_xor_si256(
        idx, _mm256_and_si256(_mm256_srli_epi32(idx, 2), _mm256_and_si256(ymask, _mm256_set1_epi32(0x33333333))));
    idx = _mm256_xor_si256(
        idx, _mm256_and_si256(_mm256_srli_epi32(idx, 4), _mm256_and_si256(ymask, _mm256_set1_epi32(0x0f0f0f0f))));
#endif
    idx = _mm256_xor_si256(
        idx, _mm256_and_si256(_mm256_srli_epi32(idx, 8), _mm256_and_si256(ymask, _mm256_set1_epi32(0x00ff00ff))));
    idx = _mm256_xor_si256(
        idx, _mm256_and_si256(_mm256_srli_epi32(idx, 16), _mm256_and_si256(ymask, _mm256_set1_epi32(0x0000ffff))));
    __m256i v = simd_reverse_bits32(simd_nested_perm(idx, sd->vseed));
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 8)), _mm256_set1_ps(1.0f / 16777216.0f));
    _mm256_storeu_ps(out, f);
}
#endif

/* ---- seeds kept across a pixel's samples -----------------------------------------------------
 * A batch's seeds depend on (pixel, dimension) only, and a pixel's samples draw the same batches
 * (the camera's, then bounce 0, 1, ...), so the CPU keeps them per pixel (film_trace_pixel):
 * slot k holds batch k's, keyed by the pixel's seed and the batch's first dimension and kind.
 * Their three chained hashes then leave the chain that each draw waits for. The GPU and callers
 * without one pass NULL. */
#define SAMPLER_CACHE_SLOTS 16
typedef struct sampler_cache {
#if KERNEL_SIMD_AVX2
    uint32_t pixel_seed[SAMPLER_CACHE_SLOTS], key[SAMPLER_CACHE_SLOTS];
    sobol_seeds seeds[SAMPLER_CACHE_SLOTS];
#else
    uint32_t unused; /* (no lanes: nothing to keep) */
#endif
} sampler_cache;

KFN void sampler_cache_init(sampler_cache *c) {
#if KERNEL_SIMD_AVX2
    for (int k = 0; k < SAMPLER_CACHE_SLOTS; ++k) c->key[k] = 0xffffffffu;
#else
    c->unused = 0u;
#endif
}

#if KERNEL_SIMD_AVX2
/* The batch at s->dim with lanes (off, ymask); `bounce` tells the two layouts apart. Batch k
 * starts at dimension 0 (the camera's) or SAMPLE_DIMS_CAMERA + SAMPLE_DIMS_BOUNCE (k - 1) (bounce
 * k - 1's). */
KFN void sobol_lanes(const sampler *s, sampler_cache *c, int bounce, __m256i off, __m256i ymask, float *out) {
    uint32_t k = (s->dim + SAMPLE_DIMS_BOUNCE - SAMPLE_DIMS_CAMERA) / SAMPLE_DIMS_BOUNCE,
             key = s->dim << 1 | (uint32_t)bounce;
    if (c && k < SAMPLER_CACHE_SLOTS) {
        if (c->key[k] != key || c->pixel_seed[k] != s->pixel_seed) {
            c->seeds[k] = sobol_lane_seeds(s->pixel_seed, s->dim, off, ymask);
            c->key[k] = key;
            c->pixel_seed[k] = s->pixel_seed;
        }
        sobol_lanes_seeded(s, &c->seeds[k], off, ymask, out);
        return;
    }
    sobol_seeds sd = sobol_lane_seeds(s->pixel_seed, s->dim, off, ymask);
    sobol_lanes_seeded(s, &sd, off, ymask, out);
}
#endif

/* The camera's draws: pixel position, then lens position (c: the pixel's seeds, or NULL). */
KFN void sampler_camera(sampler *s, sampler_cache *c, vec2 *u_pixel, vec2 *u_lens) {
#if KERNEL_SIMD_AVX2
    if (s->type == SAMPLER_SOBOL) {
        float u[8];
        sobol_lanes(s, c, 0, _mm256_setr_epi32(0, 1, 0, 1, 0, 1, 0, 1), _mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1),
                    u);
        s->dim += SAMPLE_DIMS_CAMERA;
        *u_pixel = v2(u[0], u[2]);
        *u_lens = v2(u[1], u[3]);
        return;
    }
#else
    if (s->type == SAMPLER_SOBOL) { /* the two draws of sampler_2d below after one test of the type */
        uint32_t d = s->dim, i0 = sobol_index(s, d), i1 = sobol_index(s, d + 1u);
        s->dim += SAMPLE_DIMS_CAMERA;
        *u_pixel = sobol_point(s, d, i0);
        *u_lens = sobol_point(s, d + 1u, i1);
        return;
    }
#endif
    (void)c;
    *u_pixel = sampler_2d(s);
    *u_lens = sampler_2d(s);
}

/* A bounce's draws (SAMPLE_DIMS_BOUNCE): light selection (1D), light position (2D), BSDF lobe
 * (1D), BSDF direction (2D), Russian roulette (1D). */
typedef struct bounce_samples {
    float light_pick;
    vec2 light;
    float lobe;
    vec2 bsdf;
    float rr;
} bounce_samples;

/* (for a bounce that draws nothing: it ends the path before using them) */
KFN bounce_samples bounce_samples_none(void) {
    bounce_samples b;
    b.light_pick = b.lobe = b.rr = 0.0f;
    b.light = b.bsdf = v2(0.0f, 0.0f);
    return b;
}

KFN bounce_samples sampler_bounce(sampler *s, sampler_cache *c) {
    bounce_samples b;
#if KERNEL_SIMD_AVX2
    if (s->type == SAMPLER_SOBOL) {
        float u[8];
        /* lanes: the light pick, the light position's x and y, the direction's y, the lobe, the
         * direction's x, the roulette (twice) */
        sobol_lanes(s, c, 1,
                    _mm256_setr_epi32((int)SAMPLE_DIM_LIGHT_PICK, (int)SAMPLE_DIM_LIGHT, (int)SAMPLE_DIM_LIGHT,
                                      (int)SAMPLE_DIM_BSDF, (int)SAMPLE_DIM_LOBE, (int)SAMPLE_DIM_BSDF,
                                      (int)SAMPLE_DIM_RR, (int)SAMPLE_DIM_RR),
                    _mm256_setr_epi32(0, 0, -1, -1, 0, 0, 0, 0), u);
        s->dim += SAMPLE_DIMS_BOUNCE;
        b.light_pick = u[0];
        b.light = v2(u[1], u[2]);
        b.lobe = u[4];
        b.bsdf = v2(u[5], u[3]);
        b.rr = u[6];
        return b;
    }
#else
    if (s->type == SAMPLER_SOBOL) {
        /* the five draws of sampler_1d / sampler_2d below after one test of the type (the GPU's
         * megakernel tested it per draw) */
        uint32_t d = s->dim, i1 = sobol_index(s, d + SAMPLE_DIM_LIGHT), i3 = sobol_index(s, d + SAMPLE_DIM_BSDF);
        s->dim += SAMPLE_DIMS_BOUNCE;
        b.light_pick = sobol_1d_at(s, d + SAMPLE_DIM_LIGHT_PICK);
        b.light = sobol_point(s, d + SAMPLE_DIM_LIGHT, i1);
        b.lobe = sobol_1d_at(s, d + SAMPLE_DIM_LOBE);
        b.bsdf = sobol_point(s, d + SAMPLE_DIM_BSDF, i3);
        b.rr = sobol_1d_at(s, d + SAMPLE_DIM_RR);
        return b;
    }
#endif
    (void)c;
    b.light_pick = sampler_1d(s);
    b.light = sampler_2d(s);
    b.lobe = sampler_1d(s);
    b.bsdf = sampler_2d(s);
    b.rr = sampler_1d(s);
    return b;
}
/* The scalar draws above in the order sampler_bounce returns them: its layout must match the
 * offsets (the AVX2 lanes and the Sobol path name them; the generic path draws in this order). */
KSTATIC_ASSERT(SAMPLE_DIM_LIGHT_PICK == 0u && SAMPLE_DIM_LIGHT == 1u && SAMPLE_DIM_LOBE == 2u &&
                   SAMPLE_DIM_BSDF == 3u && SAMPLE_DIM_RR == 4u && SAMPLE_DIMS_BOUNCE == 5u,
               "sampler_bounce's generic draws follow the SAMPLE_DIM_* offsets: reorder them with the offsets");

/* ---- the media block -------------------------------------------------------------------------
 * Draw k (< SAMPLE_DIMS_MEDIUM) of bounce `depth` in the media block: a function of (pixel,
 * sample, dimension) only, and s is not advanced, so surface draws are the same with or without
 * media. Sobol: its own dimension of the sequence; random and stratified: a hash of the
 * dimension and the sample (their streams are not touched). */
KFN uint32_t sampler_medium_dim(uint32_t depth, uint32_t k) {
    return SAMPLE_DIM_MEDIA_BASE + depth * SAMPLE_DIMS_MEDIUM + k;
}
KFN float sampler_medium_1d(const sampler *s, uint32_t depth, uint32_t k) {
    uint32_t dim = sampler_medium_dim(depth, k);
    if (s->type == SAMPLER_SOBOL) return sobol_1d_at(s, dim);
    return u32_to_unit_float(hash_u32(hash_combine(hash_combine(s->pixel_seed, s->index), dim)));
}
KFN vec2 sampler_medium_2d(const sampler *s, uint32_t depth, uint32_t k) {
    uint32_t dim = sampler_medium_dim(depth, k);
    if (s->type == SAMPLER_SOBOL) return sobol_point(s, dim, sobol_index(s, dim));
    uint32_t h = hash_combine(hash_combine(s->pixel_seed, s->index), dim);
    return v2(u32_to_unit_float(hash_u32(h)), u32_to_unit_float(hash_u32(h ^ SOBOL_SEED_Y)));
}
/* A stream for bounce `depth`'s unbounded draws (null collisions of delta and ratio tracking):
 * seeded from the media block, independent of every other draw. */
KFN pcg32 sampler_medium_stream(const sampler *s, uint32_t depth) {
    uint32_t dim = sampler_medium_dim(depth, SAMPLE_DIMS_MEDIUM);
    return pcg32_seed(hash_u64(((uint64_t)hash_combine(s->pixel_seed, dim) << 32) | s->index), dim);
}

#endif
