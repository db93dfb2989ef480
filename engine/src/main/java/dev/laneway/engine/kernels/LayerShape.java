package dev.laneway.engine.kernels;

/**
 * The shape of one transformer layer of a dense llama-family model, from its config.
 *
 * @param hidden    model width
 * @param attention query heads, KV heads, head size and the score scale
 * @param ffn       feed-forward width
 * @param eps       RMSNorm epsilon
 */
public record LayerShape(int hidden, AttentionShape attention, int ffn, float eps) {
    public LayerShape {
        if (hidden < 1 || ffn < 1) {
            throw new IllegalArgumentException("bad layer shape: hidden " + hidden + ", ffn " + ffn);
        }
    }

    /**
     * Floats of working memory a fused layer needs for {@code batch} tokens: the normed input, q, k, v, the
     * attention output, and the two feed-forward halves, each {@code batch} rows.
     */
    public long workFloats(int batch) {
        return (long) batch * (hidden + 2L * attention.qDim() + 2L * attention.kvDim() + 2L * ffn);
    }

    /** The columns of the layer's projections, q, k, v, o, gate, up, down in that order (their inputs' widths). */
    public int[] projectionInputs() {
        return new int[] {hidden, hidden, hidden, attention.qDim(), hidden, hidden, ffn};
    }

    /** The rows of the layer's projections, in the same order (their outputs' widths). */
    public int[] projectionOutputs() {
        return new int[] {attention.qDim(), attention.kvDim(), attention.kvDim(), hidden, ffn, ffn, hidden};
    }
}
