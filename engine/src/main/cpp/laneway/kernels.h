// Laneway's native CPU kernels: the functions NativeLibrary.java binds. Each operation exists three times, compiled for
// plain x86-64 (the portable path), for AVX2 + FMA + F16C, and for AVX-512 with VNNI and VBMI, and the caller picks
// one per call (NativeKernels holds the choice, made once from CPUID). The library itself is built for plain x86-64,
// so it loads on any 64-bit x86 machine; only the chosen path may use newer instructions.
#pragma once

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from a self-initialized "undefined" register, which -Wall reports falsely.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "laneway/common.h"
#include "laneway/pool.h"

// Portable path: whatever the baseline target offers (SSE2 on x86-64).
namespace laneway { namespace scalar {
#define LW_ISA 0
#include "laneway/ops.inc"
#undef LW_ISA
}}

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi2")
namespace laneway { namespace avx2 {
#define LW_ISA 1
#include "laneway/ops.inc"
#undef LW_ISA
}}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512vbmi")
namespace laneway { namespace avx512 {
#define LW_ISA 2
#include "laneway/ops.inc"
#undef LW_ISA
}}
#pragma GCC pop_options

#define LW_DISPATCH(isa, call)              \
    switch (isa) {                          \
        case laneway::AVX512: avx512::call; break; \
        case laneway::AVX2: avx2::call; break;     \
        default: scalar::call; break;       \
    }

namespace laneway {

// The best path this CPU runs: 2 = AVX-512 (F, BW, VL, DQ, VNNI, VBMI), 1 = AVX2 (+ FMA, F16C), 0 = portable.
inline int bestIsa() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni")
        && __builtin_cpu_supports("avx512vbmi")) {
        return AVX512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")
        && __builtin_cpu_supports("bmi2")) {
        return AVX2;
    }
    return SCALAR;
}

// Whether the CPU has the AVX-512 BF16 extension (reported in the kernels' name; the BF16 kernels widen to float).
inline bool hasAvx512Bf16() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16");
}

inline long long createPool(int threads) { return (long long)(intptr_t) new Pool(threads); }
inline void destroyPool(long long pool) { delete (Pool*)(intptr_t)pool; }
inline Pool& poolOf(long long pool) { return *(Pool*)(intptr_t)pool; }

// w is in the container's layout, or in the compact layout (see common.h) when `compact`; `streaming` (a Streaming)
// says how quantized weights are read (see nextGroup in tiles.inc).
inline void matmul(long long pool, int isa, int layout, const signed char* w, int rows, int cols, bool compact,
                   int streaming, const float* x, float* out, int batch) {
    LW_DISPATCH(isa, matmul(poolOf(pool), layout, (const uint8_t*)w, rows, cols, compact, false, streaming, x, out,
                            batch))
}

// How weights that stream from memory are read fastest on this CPU (see nextGroup in tiles.inc): prefetched into L2 on
// AMD's cores with AVX-512 (Zen 4 and later), prefetched into L1 elsewhere, which won on Intel's cores and on AMD's
// Zen 2.
inline int preferredStreaming() {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") && __builtin_cpu_supports("avx512f") ? PREFETCHED_TO_L2 : PREFETCHED;
}

// Bytes of the last-level cache (0 if unknown).
inline long long lastLevelCacheBytes() {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? l3 : sysconf(_SC_LEVEL2_CACHE_SIZE) > 0 ? sysconf(_SC_LEVEL2_CACHE_SIZE) : 0;
}

// Bytes of the compact layout of a rows × cols Q8 or q4_1 matrix, or of the lanes layout of a Q4_K one (its tiles').
inline long long compactBytes(int layout, int rows, int cols) {
    const long long tileRows = (rows + kTileRows - 1) / kTileRows;
    if (layout == TILES_Q4_K) return tileRows * (roundUp(cols, kTileCols) / kTileCols) * tileBytes(layout);
    return tileRows * ((cols + kGroup - 1) / kGroup) * compactGroupBytes(layout);
}

// Native memory for one model's weight copies (compact and lanes), handed out in order from chunks that the kernel is
// asked to back with 2 MiB pages, and freed all at once. A product reads its weights every token, and on 4 KiB pages
// a model's weights take thousands of TLB entries per token (docs/performance.md). One chunk holds many small
// matrices, so a page is not rounded up per matrix.
class CopyArena {
public:
    ~CopyArena() {
        for (const Chunk& c : chunks_) munmap(c.start, c.size);
    }

    // `bytes` of 64-byte aligned memory, or nullptr if out of memory. Thread-safe.
    uint8_t* take(size_t bytes) {
        bytes = (bytes + 63) / 64 * 64;
        std::lock_guard<std::mutex> lock(lock_);
        if (bytes > kChunkBytes / 2) return newChunk(bytes);  // a large copy alone, the open chunk kept
        if (bytes > left_) {
            next_ = newChunk(kChunkBytes);
            left_ = next_ == nullptr ? 0 : kChunkBytes;
            if (next_ == nullptr) return nullptr;
        }
        uint8_t* p = next_;
        next_ += bytes;
        left_ -= bytes;
        return p;
    }

private:
    static constexpr size_t kPageBytes = 2 << 20;
    static constexpr size_t kChunkBytes = 16 * kPageBytes;

    // Mapped directly rather than from malloc, whose free keeps large blocks for reuse once it has raised its mapping
    // threshold: unmapped here, a closed model's copies go back to the system at once.
    uint8_t* newChunk(size_t bytes) {
        const size_t size = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
        void* m = mmap(nullptr, size + kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return nullptr;
        // aligned to a huge page; the slack before and after is given back
        uint8_t* start = (uint8_t*)(((uintptr_t)m + kPageBytes - 1) / kPageBytes * kPageBytes);
        size_t head = (size_t)(start - (uint8_t*)m);
        if (head > 0) munmap(m, head);
        if (kPageBytes - head > 0) munmap(start + size, kPageBytes - head);
#ifdef MADV_HUGEPAGE
        madvise(start, size, MADV_HUGEPAGE);  // a request: without transparent huge pages the memory is still usable
#endif
        chunks_.push_back(Chunk{start, size});
        return start;
    }

    struct Chunk {
        void* start;
        size_t size;
    };

    std::mutex lock_;
    std::vector<Chunk> chunks_;
    uint8_t* next_ = nullptr;
    size_t left_ = 0;
};

inline long long createArena() { return (long long)(intptr_t) new CopyArena(); }
inline void destroyArena(long long arena) { delete (CopyArena*)(intptr_t)arena; }

// Copies tiles into a new compact copy (compactBytes long) in the arena; returns its address, 0 if out of memory.
inline long long repackCompact(long long arena, int layout, const signed char* tiles, int rows, int cols) {
    uint8_t* dst = ((CopyArena*)(intptr_t)arena)->take((size_t)compactBytes(layout, rows, cols));
    if (dst == nullptr) return 0;
    repack(Weights(layout, (const uint8_t*)tiles, rows, cols, false), dst);
    return (long long)(intptr_t)dst;
}

// Whether [p, p + n) lies inside one shared mapping of a file, as a container's weights do: such pages can be dropped
// from this process and come back, unchanged, from the page cache when read again.
inline bool inSharedFileMapping(const void* p, size_t n) {
#ifdef __linux__
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (maps == nullptr) return false;
    const uintptr_t from = (uintptr_t)p, to = from + n;
    bool shared = false;
    char line[512];
    while (std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long lo, hi, offset, inode;
        unsigned major, minor;
        char perms[8];
        if (std::sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &offset, &major, &minor, &inode) != 7) {
            continue;  // the rest of a long line
        }
        if (from >= lo && to <= hi) {
            shared = std::strlen(perms) == 4 && perms[3] == 's' && inode != 0;
            break;
        }
    }
    std::fclose(maps);
    return shared;
#else
    (void)p;
    (void)n;
    return false;
#endif
}

// Copies a Q8, q4_1 or Q4_K matrix (its tiles) into a new lanes copy (compactBytes long, see common.h) in the arena,
// for the AVX-512 path, the pool's threads sharing the work; returns its address, 0 if out of memory. The CPU must run
// the AVX-512 path.
inline long long repackLanes(long long pool, long long arena, int layout, const signed char* tiles, int rows,
                             int cols) {
    uint8_t* dst = ((CopyArena*)(intptr_t)arena)->take((size_t)compactBytes(layout, rows, cols));
    if (dst == nullptr) return 0;
    avx512::repackLanes(poolOf(pool), Weights(layout, (const uint8_t*)tiles, rows, cols, false), dst);
    return (long long)(intptr_t)dst;
}

// Puts the calling thread behind every thread of normal priority (nice 19), for work that can wait for idle cores: on
// a machine with as many busy threads as cores it then barely runs.
inline void deferToOthers() {
#ifdef __linux__
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
}

// Gives back this process's pages of `bytes` bytes that a copy has replaced, when they are a file's shared mapping (a
// container's weights): the copy then does not double the weights' resident memory, and whatever reads them again
// finds them in the page cache. Other memory (a buffer the process allocated) is left alone: there, giving pages back
// would lose their contents.
inline void releaseMapped(const signed char* data, long long bytes) {
    if (bytes <= 0 || !inSharedFileMapping(data, (size_t)bytes)) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t first = ((uintptr_t)data + page - 1) & ~(page - 1);
    const uintptr_t end = ((uintptr_t)data + (size_t)bytes) & ~(page - 1);
    if (end > first) madvise((void*)first, end - first, MADV_DONTNEED);
}

// The product on a copy in the compact layout, or in the lanes layout (AVX-512 only) when `lanes`.
inline void matmulCompact(long long pool, int isa, int layout, long long w, int rows, int cols, bool lanes,
                          int streaming, const float* x, float* out, int batch) {
    LW_DISPATCH(isa, matmul(poolOf(pool), layout, (const uint8_t*)(intptr_t)w, rows, cols, true, lanes, streaming, x,
                            out, batch))
}

// Row r of a matrix as floats into out[offset ..].
inline void row(int layout, const signed char* w, int cols, int r, float* out, int offset) {
    const uint8_t* wb = (const uint8_t*)w;
    float* o = out + offset;
    if (layout == F32) {
        std::memcpy(o, (const float*)wb + (size_t)r * cols, sizeof(float) * cols);
        return;
    }
    if (layout == F16 || layout == BF16) {
        const uint16_t* p = (const uint16_t*)wb + (size_t)r * cols;
        for (int c = 0; c < cols; c++) o[c] = layout == F16 ? f16ToFloat(p[c]) : bf16ToFloat(p[c]);
        return;
    }
    const Weights tiles(layout, wb, r + 1, cols, false);
    float wf[32 * 32];
    for (int gc = 0; gc < tiles.groupsPerRow; gc++) {
        scalar::decodeGroup(layout, tiles.group(r / kTileRows, gc), wf);
        int c0 = gc * kGroup, n = cols - c0 < kGroup ? cols - c0 : kGroup;
        for (int c = 0; c < n; c++) o[c0 + c] = wf[c * 32 + r % kTileRows];
    }
}

inline void rmsnorm(int isa, float* out, const float* x, const float* weight, int dim, int batch, float eps) {
    LW_DISPATCH(isa, rmsnormRows(out, x, weight, dim, batch, eps))
}

inline void rope(int isa, float* x, int offset, int batch, int heads, int startPos, int headDim, int rotaryDim,
                 bool interleaved, const float* cosTable, const float* sinTable) {
    LW_DISPATCH(isa, ropeRows(x + offset, batch, heads, startPos, headDim, rotaryDim, interleaved, cosTable, sinTable))
}

// Attention of the query rows at rowOffset (elements) of q and out, over one sequence's keys and values at kvOffset;
// window > 0 limits each query to that many most recent positions.
inline void attention(long long pool, int isa, float* out, const float* q, int rowOffset, const float* keys,
                      const float* values, int kvOffset, int batch, int startPos, int heads, int kvHeads, int headDim,
                      float scale, int window, float softcap) {
    LW_DISPATCH(isa, attention(poolOf(pool), out + rowOffset, q + rowOffset, keys + kvOffset, values + kvOffset, batch,
                               startPos, heads, kvHeads, headDim, scale, window, softcap))
}

// Attention over a half-precision KV cache, with llama.cpp's numerics (see elementwise.inc).
inline void attentionHalf(long long pool, int isa, float* out, const float* q, int rowOffset, const short* keys,
                          const short* values, int kvOffset, int batch, int startPos, int heads, int kvHeads,
                          int headDim, float scale, int window, float softcap) {
    LW_DISPATCH(isa, attentionHalf(poolOf(pool), out + rowOffset, q + rowOffset, (const uint16_t*)keys + kvOffset,
                                   (const uint16_t*)values + kvOffset, batch, startPos, heads, kvHeads, headDim,
                                   scale, window, softcap))
}

// Attention over an eight-bit KV cache (q8_0 blocks; kvOffset counts elements).
inline void attentionQ8(long long pool, int isa, float* out, const float* q, int rowOffset, const signed char* keys,
                        const signed char* values, int kvOffset, int batch, int startPos, int heads, int kvHeads,
                        int headDim, float scale, int window, float softcap) {
    const size_t at = scalar::q8Bytes((size_t)kvOffset);
    LW_DISPATCH(isa, attentionQ8(poolOf(pool), out + rowOffset, q + rowOffset, (const uint8_t*)keys + at,
                                 (const uint8_t*)values + at, batch, startPos, heads, kvHeads, headDim, scale, window,
                                 softcap))
}

inline void geluMul(long long pool, int isa, float* gate, const float* up, int n) {
    LW_DISPATCH(isa, geluMul(poolOf(pool), gate, up, n))
}

inline void siluMul(long long pool, int isa, float* gate, const float* up, int n) {
    LW_DISPATCH(isa, siluMul(poolOf(pool), gate, up, n))
}

inline void add(int isa, float* x, const float* y, int n) { LW_DISPATCH(isa, addRange(x, y, 0, n)) }

inline void addBias(int isa, float* x, const float* bias, int n, int batch) {
    for (int b = 0; b < batch; b++) {
        LW_DISPATCH(isa, addRange(x + (size_t)b * n, bias, 0, n))
    }
}

// The address of a direct buffer's first byte (weights stay where the container's mapping put them).
inline long long bufferAddress(const signed char* data) { return (long long)(intptr_t)data; }

// A fused layer, readied from: `matrices`, seven matrices (wq, wk, wv, wo, gate, up, down) of kMatrixFields each;
// `shape`: hidden, heads, kvHeads, headDim, ffn, rotaryDim, interleaved, whether the q/k/v biases are given, whether
// the per-head q/k norms are; and the vectors (unused ones may be empty). Returns its handle.
inline long long createFusedLayer(const long long* matrices, const int* shape, float eps, float scale,
                                  const float* attnNorm, const float* ffnNorm, const float* qBias,
                                  const float* kBias, const float* vBias, const float* qNorm, const float* kNorm) {
    FusedLayer* l = new FusedLayer();
    MatrixRef* refs[7] = {&l->wq, &l->wk, &l->wv, &l->wo, &l->gate, &l->up, &l->down};
    for (int j = 0; j < 7; j++) *refs[j] = matrixRef(matrices + kMatrixFields * j);
    l->hidden = shape[0];
    l->heads = shape[1];
    l->kvHeads = shape[2];
    l->headDim = shape[3];
    l->ffn = shape[4];
    l->rotaryDim = shape[5];
    l->interleaved = shape[6] != 0;
    l->eps = eps;
    l->scale = scale;
    l->attnNorm.assign(attnNorm, attnNorm + l->hidden);
    l->ffnNorm.assign(ffnNorm, ffnNorm + l->hidden);
    if (shape[7] != 0) {
        l->qBias.assign(qBias, qBias + l->qDim());
        l->kBias.assign(kBias, kBias + l->kvDim());
        l->vBias.assign(vBias, vBias + l->kvDim());
    }
    if (shape[8] != 0) {
        l->qNorm.assign(qNorm, qNorm + l->headDim);
        l->kNorm.assign(kNorm, kNorm + l->headDim);
    }
    return (long long)(intptr_t)l;
}

inline void destroyFusedLayer(long long layer) { delete (FusedLayer*)(intptr_t)layer; }

// The output head, readied: the head matrix (kMatrixFields), the final norm's weight and epsilon. Returns its handle.
inline long long createFusedHead(const long long* matrix, const float* norm, float eps) {
    const MatrixRef w = matrixRef(matrix);
    return (long long)(intptr_t) new FusedHead{w, std::vector<float>(norm, norm + w.cols), eps};
}

inline void destroyFusedHead(long long head) { delete (FusedHead*)(intptr_t)head; }

// The logits of the chosen rows of x ([batch][hidden]): each normed into work, times the head.
inline void fusedHead(long long pool, int isa, long long head, const float* x, const int* rows, int count, float* work,
                      float* logits) {
    const FusedHead& h = *(const FusedHead*)(intptr_t)head;
    LW_DISPATCH(isa, fusedHead(poolOf(pool), h, x, rows, count, work, logits))
}

// One fused layer over a float cache, or a half-precision one (keys and values as 16-bit patterns), on the batch's
// segments (see fusedLayer in layer.inc).
// `lora` holds loraCount jobs of the batch's LoRA adapters (kLoraFields each, see layer.inc), loraScales a row of
// `batch` scales per job.
inline void fusedLayer(long long pool, int isa, long long layer, float* x, float* work, float* keys, float* values,
                       const float* cosTable, const float* sinTable, int batch, const int* segments,
                       int segmentCount, const long long* lora, const float* loraScales, int loraCount) {
    const FusedLayer& l = *(const FusedLayer*)(intptr_t)layer;
    LW_DISPATCH(isa, fusedLayer(poolOf(pool), l, x, work, keys, values, nullptr, nullptr, nullptr, nullptr, cosTable,
                                sinTable, batch, segments, segmentCount, lora, loraScales, loraCount))
}

inline void fusedLayerHalf(long long pool, int isa, long long layer, float* x, float* work, short* keys,
                           short* values, const float* cosTable, const float* sinTable, int batch,
                           const int* segments, int segmentCount, const long long* lora, const float* loraScales,
                           int loraCount) {
    const FusedLayer& l = *(const FusedLayer*)(intptr_t)layer;
    LW_DISPATCH(isa, fusedLayer(poolOf(pool), l, x, work, nullptr, nullptr, (uint16_t*)keys, (uint16_t*)values,
                                nullptr, nullptr, cosTable, sinTable, batch, segments, segmentCount, lora, loraScales,
                                loraCount))
}

inline void fusedLayerQ8(long long pool, int isa, long long layer, float* x, float* work, signed char* keys,
                         signed char* values, const float* cosTable, const float* sinTable, int batch,
                         const int* segments, int segmentCount, const long long* lora, const float* loraScales,
                         int loraCount) {
    const FusedLayer& l = *(const FusedLayer*)(intptr_t)layer;
    LW_DISPATCH(isa, fusedLayer(poolOf(pool), l, x, work, nullptr, nullptr, nullptr, nullptr, (uint8_t*)keys,
                                (uint8_t*)values, cosTable, sinTable, batch, segments, segmentCount, lora, loraScales,
                                loraCount))
}

inline long long streamRead(long long pool, int isa, const signed char* data, long long bytes) {
    long long sum;
    switch (isa) {
        case AVX512: sum = avx512::streamRead(poolOf(pool), (const uint8_t*)data, bytes); break;
        case AVX2: sum = avx2::streamRead(poolOf(pool), (const uint8_t*)data, bytes); break;
        default: sum = scalar::streamRead(poolOf(pool), (const uint8_t*)data, bytes); break;
    }
    return sum;
}

}  // namespace laneway
