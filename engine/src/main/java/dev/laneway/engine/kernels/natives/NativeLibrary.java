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

    /** {@code stage}: copy quantized weights through L1, for weights that stream from memory. */
    @CriticalRegion
    static native void matmul(long pool, int isa, int layout, ByteBuffer w, int rows, int cols,
            @Cast("bool") boolean compact, @Cast("bool") boolean stage, float[] x, float[] out, int batch);

    /** The same product on a compact copy made by {@link #repackCompact}. */
    @CriticalRegion
    static native void matmulCompact(long pool, int isa, int layout, long w, int rows, int cols,
            @Cast("bool") boolean stage, float[] x, float[] out, int batch);

    /** Bytes of the last-level cache, 0 if unknown. */
    static native long lastLevelCacheBytes();

    static native long compactBytes(int layout, int rows, int cols);

    /** A compact copy of a Q8 or q4_1 tiled matrix in native memory: its address, or 0 if out of memory. */
    static native long repackCompact(int layout, ByteBuffer tiles, int rows, int cols);

    static native void freeCompact(long address);

    @CriticalRegion
    static native void row(int layout, ByteBuffer w, int cols, int row, float[] out, int offset);

    @CriticalRegion
    static native void rmsnorm(int isa, float[] out, float[] x, float[] weight, int dim, int batch, float eps);

    @CriticalRegion
    static native void rope(int isa, float[] x, int batch, int heads, int startPos, int headDim, int rotaryDim,
            @Cast("bool") boolean interleaved, float[] cos, float[] sin);

    @CriticalRegion
    static native void attention(long pool, int isa, float[] out, float[] q, float[] keys, float[] values, int batch,
            int startPos, int heads, int kvHeads, int headDim, float scale);

    @CriticalRegion
    static native void siluMul(long pool, int isa, float[] gate, float[] up, int n);

    @CriticalRegion
    static native void add(int isa, float[] x, float[] y, int n);

    static native long streamRead(long pool, int isa, ByteBuffer data, long bytes);

    @CriticalRegion
    static native void addBias(int isa, float[] x, float[] bias, int n, int batch);
}
