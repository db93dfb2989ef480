package dev.laneway.engine.kernels;

/**
 * The shape of one attention layer.
 *
 * @param heads   query heads
 * @param kvHeads key/value heads (equal to {@code heads} without grouped-query attention)
 * @param headDim elements per head
 * @param scale   the factor on q·k, usually 1 / sqrt(headDim)
 */
public record AttentionShape(int heads, int kvHeads, int headDim, float scale) {
    public AttentionShape {
        if (heads < 1 || kvHeads < 1 || headDim < 1 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("bad attention shape: " + heads + " heads, " + kvHeads
                    + " kv heads, head dim " + headDim);
        }
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    public int qDim() {
        return heads * headDim;
    }
}
