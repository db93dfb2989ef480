// Shared definitions: weight layouts (numbered as Matrix.Layout's ordinals), tile geometry, 16-bit float conversions,
// and the activation quantization used by the int8 kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace laneway {

enum Layout { F32 = 0, F16 = 1, BF16 = 2, TILES_Q8 = 3, TILES_Q4_1 = 4, TILES_Q4_K = 5 };
enum Isa { SCALAR = 0, AVX2 = 1, AVX512 = 2 };

// How a product reads quantized weights (numbered as Streaming.java's ordinals). Weights that stay in the cache are
// read in place; weights that stream from memory are either copied through L1 a tile at a time (STAGED) or read in
// place with software prefetches a few KiB ahead, into L1 (PREFETCHED) or L2 (PREFETCHED_TO_L2). Which reads memory
// fastest depends on the CPU: see nextGroup in ops.inc.
enum Streaming { IN_PLACE = 0, STAGED = 1, PREFETCHED = 2, PREFETCHED_TO_L2 = 3 };

constexpr int kTileRows = 32;
constexpr int kTileCols = 256;
constexpr int kGroup = 32;                       // columns sharing one scale
constexpr int kGroups = kTileCols / kGroup;      // groups per tile

inline int tileBytes(int layout) {
    switch (layout) {
        case TILES_Q8: return 8704;
        case TILES_Q4_1: return 5120;
        case TILES_Q4_K: return 4736;
        default: return 0;
    }
}

inline int roundUp(int n, int multiple) { return (n + multiple - 1) / multiple * multiple; }

inline float bf16ToFloat(uint16_t bits) {
    uint32_t u = (uint32_t)bits << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline float f16ToFloat(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000 | (mant << 13);
    } else if (exp == 0) {
        float v = mant * 0x1p-24f;  // zero or subnormal
        return sign ? -v : v;
    } else {
        u = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Float to IEEE half-precision bits, rounding to nearest even as the F16C instructions (and Floats.floatToF16) do.
inline uint16_t floatToF16(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint32_t sign = (bits >> 16) & 0x8000;
    const int exp = (bits >> 23) & 0xff;
    uint32_t mant = bits & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
    const int e = exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {  // a subnormal half, or zero
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000;
        const int shift = 14 - e;
        uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;  // a carry into the exponent rounds up correctly
    return (uint16_t)(sign | half);
}

// GELU in its tanh form over every half-precision input, each result rounded to half precision: llama.cpp's CPU
// table (Gelu.java builds the same one). Built once, on first use.
inline const float* geluTable() {
    static const std::vector<float> table = [] {
        std::vector<float> t(1 << 16);
        for (uint32_t bits = 0; bits < t.size(); bits++) {
            const float x = f16ToFloat((uint16_t)bits);
            const float g = 0.5f * x * (1.f + std::tanh(0.7978845608f * x * (1.f + 0.044715f * x * x)));
            t[bits] = f16ToFloat(floatToF16(g));
        }
        return t;
    }();
    return table.data();
}

// Where one 32-row × 32-column group of a quantized matrix lies. In the container's tiles (docs/container.md) a group's scales
// and codes are spread over its tile; the compact layout (see repack) keeps each group in one block.
struct GroupRef {
    const uint8_t* scales;  // Q8: 32 bf16 steps; q4_1: 32 bf16 scales; Q4_K: 32 u8 scales
    const uint8_t* zeros;   // q4_1: 32 bf16 zero points; Q4_K: 32 u8 minima
    const uint8_t* codes;   // Q8: 32 columns × 32 int8; q4_1: rows 0-15, 32 columns × 8 bytes of nibbles; Q4_K: 32
                            // columns × 16 bytes of nibbles (rows 2k and 2k + 1 in byte k)
    size_t halfStride;      // q4_1: bytes from the codes of rows 0-15 to those of rows 16-31
    const uint8_t* rowScales;  // Q4_K: the tile's 32 bf16 S, then its 32 bf16 M
};

// The compact layout, made once from the tiles (repack) for matrices whose columns are not a multiple of 256, so that
// a product reads only bytes it uses, in order: tile row i holds its groups gc = 0 .. ceil(cols / 32) - 1 one after
// another, each one block. Q8 block (1088 B): 32 bf16 steps, then 32 columns × 32 int8 codes. q4_1 block (640 B): 32
// bf16 scales, 32 bf16 zeros, then the nibbles of rows 0-15 and of rows 16-31 (32 columns × 8 bytes each, as in the
// tile).
inline int compactGroupBytes(int layout) { return layout == TILES_Q8 ? 1088 : layout == TILES_Q4_1 ? 640 : 0; }

// The lanes layout (AVX-512 only, see repackLanes in vnni.inc): the compact layout with each group's codes stored in
// the order the VNNI product consumes them, so a product loads them instead of transposing every group again. Same
// block sizes as the compact layout; q4_1 blocks keep two lane registers per 64 bytes, one in each nibble. Q4_K
// (whose rows are whole super-blocks of 256 columns, so never padded) keeps its tiles' size and addressing, each tile
// laid out in reading order instead: S and M (bf16, 128 bytes) first, so that a product streaming through the tiles
// finds them in the bytes it has prefetched, then group after group 32 u8 scales, 32 u8 minima and the codes as
// q4_1's (576 bytes per group).
constexpr int kQ4kLaneGroupBytes = 576;

// A quantized matrix in the container's tiles, the compact layout, or the lanes layout.
struct Weights {
    int layout;
    const uint8_t* data;
    int rows, cols;
    bool compact;                   // compact addressing (the compact and the lanes layouts)
    bool lanes;                     // codes in lane order
    int tilesPerRow, groupsPerRow;  // tiles of the padded row; groups holding columns below cols

    Weights(int layout, const uint8_t* data, int rows, int cols, bool compact, bool lanes = false)
        : layout(layout), data(data), rows(rows), cols(cols), compact(layout != TILES_Q4_K && (compact || lanes)),
          lanes(lanes),
          tilesPerRow(roundUp(cols, kTileCols) / kTileCols), groupsPerRow((cols + kGroup - 1) / kGroup) {}

    // Bytes of one tile row: rows 32·i .. 32·i + 31 over all columns, contiguous in every layout.
    size_t rowBytes() const {
        return compact ? (size_t)groupsPerRow * compactGroupBytes(layout) : (size_t)tilesPerRow * tileBytes(layout);
    }

    // The first byte of group gc (a column group of the row) in tile row i: where its data starts in memory order.
    const uint8_t* start(int i, int gc) const {
        if (compact) return data + ((size_t)i * groupsPerRow + gc) * compactGroupBytes(layout);
        return data + ((size_t)i * tilesPerRow + gc / kGroups) * tileBytes(layout);
    }

    GroupRef group(int i, int gc) const {
        const uint8_t* p = start(i, gc);
        if (compact) {
            if (layout == TILES_Q8) return {p, nullptr, p + 64, 0, nullptr};
            return {p, p + 64, p + 128, 256, nullptr};
        }
        int g = gc % kGroups;
        switch (layout) {
            case TILES_Q8: return {p + g * 64, nullptr, p + 512 + g * 1024, 0, nullptr};
            case TILES_Q4_1: return {p + g * 64, p + 512 + g * 64, p + 1024 + g * 256, 8 * 256, nullptr};
            default:  // Q4_K
                if (lanes) {
                    const uint8_t* b = p + 128 + g * kQ4kLaneGroupBytes;
                    return {b, b + 32, b + 64, 0, p};
                }
                return {p + g * 32, p + 256 + g * 32, p + 512 + g * 512, 0, p + 4608};  // codes of column c at c·16
        }
    }
};

// A weight matrix as the products read it: its layout and size, its bytes (the container's, a compact copy, or a
// lanes copy), and how its quantized tiles are read (a Streaming).
struct MatrixRef {
    int layout;
    const uint8_t* data;
    int rows, cols;
    bool compact, lanes;
    int streaming;
};

// A matrix as Java describes it: layout, address, rows, cols, compact, lanes, streaming.
constexpr int kMatrixFields = 7;
inline MatrixRef matrixRef(const long long* m) {
    return MatrixRef{(int)m[0], (const uint8_t*)(intptr_t)m[1], (int)m[2], (int)m[3], m[4] != 0, m[5] != 0, (int)m[6]};
}

// One transformer layer of a dense llama-family model, readied once for the fused layer (fusedLayer in ops.inc): its
// weights as the products read them, copies of its small vectors, and its shape from the model's config.
struct FusedLayer {
    MatrixRef wq, wk, wv, wo, gate, up, down;
    std::vector<float> attnNorm, ffnNorm;    // [hidden]
    std::vector<float> qBias, kBias, vBias;  // Qwen2: [qDim], [kvDim], [kvDim]; empty otherwise
    std::vector<float> qNorm, kNorm;         // Qwen3: [headDim] each; empty otherwise
    int hidden, heads, kvHeads, headDim, ffn, rotaryDim;
    bool interleaved;                        // RoPE pairs (2i, 2i + 1), else (i, i + rotaryDim / 2)
    float eps, scale;

    int qDim() const { return heads * headDim; }
    int kvDim() const { return kvHeads * headDim; }
};

// The output head, readied once: the head matrix (vocab × hidden) and the final RMSNorm.
struct FusedHead {
    MatrixRef w;
    std::vector<float> norm;  // [hidden]
    float eps;
};

// Floats of working memory a fused layer needs for `batch` tokens: xb, q, k, v, att, hb and hb2, one after another.
inline size_t fusedWorkFloats(const FusedLayer& l, int batch) {
    return (size_t)batch * (l.hidden + 2 * l.qDim() + 2 * l.kvDim() + 2 * l.ffn);
}

// Copies a tiled Q8 or q4_1 matrix into the compact layout; dst holds rows / 32 (rounded up) × groupsPerRow blocks.
inline void repack(const Weights& tiles, uint8_t* dst) {
    const int gb = compactGroupBytes(tiles.layout);
    const int tileRows = (tiles.rows + kTileRows - 1) / kTileRows;
    for (int i = 0; i < tileRows; i++) {
        for (int gc = 0; gc < tiles.groupsPerRow; gc++) {
            GroupRef src = tiles.group(i, gc);
            uint8_t* out = dst + ((size_t)i * tiles.groupsPerRow + gc) * gb;
            std::memcpy(out, src.scales, 64);
            if (tiles.layout == TILES_Q8) {
                std::memcpy(out + 64, src.codes, 1024);
            } else {
                std::memcpy(out + 64, src.zeros, 64);
                std::memcpy(out + 128, src.codes, 256);
                std::memcpy(out + 384, src.codes + src.halfStride, 256);
            }
        }
    }
}

// Scratch memory owned by the calling thread, grown when a call needs more and then reused: no allocation in steady
// state.
template <class T>
T* threadScratch(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

// Activations quantized for the int8 kernels, one tile-padded row per batch row: per 32-column group a float step d,
// int8 codes q = round(x / d) with d = max|x| / 127, and the sum of the group's codes (for zero points and for the
// unsigned-weight correction).
struct QuantizedRows {
    int8_t* q = nullptr;      // [batch][paddedCols]
    float* d = nullptr;       // [batch][paddedCols / 32]
    int32_t* sum = nullptr;   // [batch][paddedCols / 32]
    int paddedCols = 0;
};

}  // namespace laneway
