package dev.laneway.engine.kernels;

/**
 * The operations the forward pass is made of. Two implementations: {@link JavaKernels}, plain and obviously correct,
 * the oracle; and the native kernels, fast. The choice is made once when a model is opened and passed in.
 *
 * <p>Activations are heap {@code float[]} arrays holding {@code batch} rows one after another; {@code offset}
 * arguments are element offsets into them. Implementations must be safe to call from several threads at once on
 * different arrays, and must not allocate per call.
 */
public interface Kernels {

    /** A short name for logs, e.g. {@code java} or {@code native-avx512}. */
    String name();

    /**
     * Readies a weight matrix before its first use (a loader calls it once per matrix at load time); returns the bytes
     * of memory that took. Implementations that need nothing do nothing, as here.
     */
    default long prepare(Matrix w) {
        return 0;
    }

    /**
     * Matrix product: for each of {@code batch} input rows, {@code out[b·w.rows() + r] = Σ_c w[r, c] · x[b·w.cols() + c]}.
     */
    void matmul(Matrix w, float[] x, float[] out, int batch);

    /**
     * Row {@code row} of {@code w}, dequantized into {@code out[offset .. offset + w.cols())} (embedding lookup).
     */
    void row(Matrix w, int row, float[] out, int offset);

    /**
     * RMSNorm of each of {@code batch} rows of {@code dim} elements: {@code out = x · weight / sqrt(mean(x²) + eps)}.
     * {@code out} may be {@code x}.
     */
    void rmsnorm(float[] out, float[] x, float[] weight, int dim, int batch, float eps);

    /**
     * Rotary position embedding, in place, on {@code batch} rows of {@code heads · headDim} elements; row b is at
     * position {@code startPos + b}.
     */
    default void rope(float[] x, int batch, int heads, int startPos, Rope rope) {
        rope(x, 0, batch, heads, startPos, rope);
    }

    /**
     * Rotary position embedding, in place, on rows {@code firstRow .. firstRow + rows} of {@code heads · headDim}
     * elements; row {@code firstRow + b} is at position {@code startPos + b}.
     */
    void rope(float[] x, int firstRow, int rows, int heads, int startPos, Rope rope);

    /** {@link #attention(float[], float[], int, int, KvCache.Layer, int, int, AttentionShape)} of slot 0 from row 0. */
    default void attention(float[] out, float[] q, KvCache.Layer cache, int batch, int startPos, AttentionShape shape) {
        attention(out, q, 0, batch, cache, 0, startPos, shape);
    }

    /**
     * Causal attention for query rows {@code firstRow .. firstRow + rows} at positions {@code startPos ..} of the
     * sequence in {@code slot}: each query head attends over that slot's cached keys and values of positions
     * {@code 0 .. its own} (or the last {@code shape.window()} of them), grouped-query style (query head h reads KV head h / (heads / kvHeads)). The same rows of
     * {@code out} receive {@code heads · headDim} elements each.
     */
    void attention(float[] out, float[] q, int firstRow, int rows, KvCache.Layer cache, int slot, int startPos,
                   AttentionShape shape);

    /** SwiGLU's product, in place: {@code gate[i] = silu(gate[i]) · up[i]} for {@code i < n}. */
    void siluMul(float[] gate, float[] up, int n);

    /** GeGLU's product, in place: {@code gate[i] = gelu(gate[i]) · up[i]} for {@code i < n}, as {@link Gelu}. */
    void geluMul(float[] gate, float[] up, int n);

    /** {@code x[i] += y[i]} for {@code i < n}. */
    void add(float[] x, float[] y, int n);

    /** Adds {@code bias} to each of {@code batch} rows of {@code bias.length} elements of {@code x}. */
    void addBias(float[] x, float[] bias, int batch);
}
