package dev.laneway.engine.kernels.natives;

import java.nio.ByteBuffer;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.CriticalRegion;
import org.bytedeco.javacpp.annotation.Namespace;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The JNI surface of the native kernels ({@code src/main/cpp/laneway/kernels.h}), generated and compiled by JavaCPP at
 * build time. Arrays are passed with {@code GetPrimitiveArrayCritical} (no copy); weights as direct buffers. Callers
 * check every size first: nothing here checks bounds.
 */
@Platform(include = "laneway/kernels.h")
@Namespace("laneway")
final class NativeLibrary {
    private NativeLibrary() {
    }

    /** 2 = AVX-512 with VNNI and VBMI, 1 = AVX2 with FMA and F16C, 0 = neither. */
    static native int bestIsa();

    static native boolean hasAvx512Bf16();

    static native long createPool(int threads);

    static native void destroyPool(long pool);

    /** {@code streaming}: how quantized weights are read, a {@link Streaming} ordinal. */
    @CriticalRegion
    static native void matmul(long pool, int isa, int layout, ByteBuffer w, int rows, int cols,
            @Cast("bool") boolean compact, int streaming, float[] x, float[] out, int batch);

    /** The same product on a copy made by {@link #repackCompact}, or by {@link #repackLanes} when {@code lanes}. */
    @CriticalRegion
    static native void matmulCompact(long pool, int isa, int layout, long w, int rows, int cols,
            @Cast("bool") boolean lanes, int streaming, float[] x, float[] out, int batch);

    /** The {@link Streaming} ordinal that reads streamed weights fastest on this CPU. */
    static native int preferredStreaming();

    /** Bytes of the last-level cache, 0 if unknown. */
    static native long lastLevelCacheBytes();

    static native long compactBytes(int layout, int rows, int cols);

    /** Memory for one model's weight copies, freed all at once by {@link #destroyArena}. */
    static native long createArena();

    static native void destroyArena(long arena);

    /** A compact copy of a Q8 or q4_1 tiled matrix in the arena: its address, or 0 if out of memory. */
    static native long repackCompact(long arena, int layout, ByteBuffer tiles, int rows, int cols);

    /** A lanes copy of a Q8 or q4_1 tiled matrix (AVX-512 only) in the arena, made on the pool; 0 if out of memory. */
    static native long repackLanes(long pool, long arena, int layout, ByteBuffer tiles, int rows, int cols);

    /** Lowers the calling thread's priority below all normal threads' (nice 19). */
    static native void deferToOthers();

    /** Gives back the process's pages of {@code bytes} bytes a copy replaced, if they are a file's shared mapping. */
    static native void releaseMapped(ByteBuffer data, long bytes);

    @CriticalRegion
    static native void row(int layout, ByteBuffer w, int cols, int row, float[] out, int offset);

    @CriticalRegion
    static native void rmsnorm(int isa, float[] out, float[] x, float[] weight, int dim, int batch, float eps);

    @CriticalRegion
    /** RoPE on the rows of {@code x} from element {@code offset} on. */
    static native void rope(int isa, float[] x, int offset, int batch, int heads, int startPos, int headDim,
            int rotaryDim, @Cast("bool") boolean interleaved, float[] cos, float[] sin);

    /**
     * Attention of the query rows from element {@code rowOffset} of q and out, over keys and values from
     * {@code kvOffset}; {@code window} > 0 limits each query to that many most recent positions, {@code softcap} > 0
     * caps each score s at softcap · tanh(s / softcap).
     */
    @CriticalRegion
    static native void attention(long pool, int isa, float[] out, float[] q, int rowOffset, float[] keys,
            float[] values, int kvOffset, int batch, int startPos, int heads, int kvHeads, int headDim, float scale,
            int window, float softcap);

    /** Attention over half-precision keys and values (bits in {@code short}s). */
    @CriticalRegion
    static native void attentionHalf(long pool, int isa, float[] out, float[] q, int rowOffset, short[] keys,
            short[] values, int kvOffset, int batch, int startPos, int heads, int kvHeads, int headDim, float scale,
            int window, float softcap);

    /** Attention over eight-bit keys and values ({@code q8_0} blocks; {@code kvOffset} counts elements). */
    @CriticalRegion
    static native void attentionQ8(long pool, int isa, float[] out, float[] q, int rowOffset, byte[] keys,
            byte[] values, int kvOffset, int batch, int startPos, int heads, int kvHeads, int headDim, float scale,
            int window, float softcap);

    @CriticalRegion
    static native void siluMul(long pool, int isa, float[] gate, float[] up, int n);

    /** GeGLU's product from llama.cpp's half-precision GELU table (see {@code Gelu}). */
    @CriticalRegion
    static native void geluMul(long pool, int isa, float[] gate, float[] up, int n);

    @CriticalRegion
    static native void add(int isa, float[] x, float[] y, int n);

    /** The address of a direct buffer's first byte (at its position). */
    static native long bufferAddress(ByteBuffer data);

    /**
     * A fused layer in native memory: {@code matrices} holds seven rows (wq, wk, wv, wo, gate, up, down) of layout,
     * address, rows, cols, compact, lanes and streaming; {@code shape} hidden, heads, kvHeads, headDim, ffn, rotaryDim,
     * interleaved, has biases, has q/k norms. Unused vectors may be empty. Freed by {@link #destroyFusedLayer}.
     */
    static native long createFusedLayer(long[] matrices, int[] shape, float eps, float scale, float[] attnNorm,
            float[] ffnNorm, float[] qBias, float[] kBias, float[] vBias, float[] qNorm, float[] kNorm);

    static native void destroyFusedLayer(long layer);

    /** The output head in native memory: the matrix as one row of {@link #createFusedLayer}'s, the final norm. */
    static native long createFusedHead(long[] matrix, float[] norm, float eps);

    static native void destroyFusedHead(long head);

    /** The logits of {@code count} chosen rows of x. */
    @CriticalRegion
    static native void fusedHead(long pool, int isa, long head, float[] x, int[] rows, int count, float[] work,
            float[] logits);

    /**
     * One fused layer over a float cache, on {@code segmentCount} segments of the batch: quadruples of first row,
     * rows, first position and the cache offset of the segment's sequence; with {@code loraCount} LoRA jobs
     * ({@link NativeKernels#LORA_FIELDS} each) and their rows' scales ({@code batch} per job).
     */
    @CriticalRegion
    static native void fusedLayer(long pool, int isa, long layer, float[] x, float[] work, float[] keys,
            float[] values, float[] cos, float[] sin, int batch, int[] segments, int segmentCount, long[] lora,
            float[] loraScales, int loraCount);

    /** One fused layer over a half-precision cache. */
    @CriticalRegion
    static native void fusedLayerHalf(long pool, int isa, long layer, float[] x, float[] work, short[] keys,
            short[] values, float[] cos, float[] sin, int batch, int[] segments, int segmentCount, long[] lora,
            float[] loraScales, int loraCount);

    /** One fused layer over an eight-bit cache. */
    @CriticalRegion
    static native void fusedLayerQ8(long pool, int isa, long layer, float[] x, float[] work, byte[] keys,
            byte[] values, float[] cos, float[] sin, int batch, int[] segments, int segmentCount, long[] lora,
            float[] loraScales, int loraCount);

    static native long streamRead(long pool, int isa, ByteBuffer data, long bytes);

    @CriticalRegion
    static native void addBias(int isa, float[] x, float[] bias, int n, int batch);
}
