// Shared definitions: weight layouts (numbered as Matrix.Layout's ordinals), tile geometry, 16-bit float conversions,
// and the activation quantization used by the int8 kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace laneway {

enum Layout { F32 = 0, F16 = 1, BF16 = 2, TILES_Q8 = 3, TILES_Q4_1 = 4, TILES_Q4_K = 5 };
enum Isa { SCALAR = 0, AVX2 = 1, AVX512 = 2 };

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
