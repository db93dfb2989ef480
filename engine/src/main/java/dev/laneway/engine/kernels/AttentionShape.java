package dev.laneway.engine.kernels;

/**
 * The shape of one attention layer.
 *
 * @param heads   query heads
 * @param kvHeads key/value heads (equal to {@code heads} without grouped-query attention)
 * @param headDim elements per head
 * @param scale   the factor on q·k, usually 1 / sqrt(headDim)
 * @param window  a query at position p attends to positions {@code p − window + 1 .. p} only; 0 for all of them
 */
public record AttentionShape(int heads, int kvHeads, int headDim, float scale, int window) {
    /** A shape that attends to every earlier position. */
    public AttentionShape(int heads, int kvHeads, int headDim, float scale) {
        this(heads, kvHeads, headDim, scale, 0);
    }

    public AttentionShape {
        if (window < 0) {
            throw new IllegalArgumentException("negative attention window " + window);
        }
        if (heads < 1 || kvHeads < 1 || headDim < 1 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("bad attention shape: " + heads + " heads, " + kvHeads
                    + " kv heads, head dim " + headDim);
        }
    }

    /** The first position a query at {@code pos} attends to. */
    public int firstPosition(int pos) {
        return window > 0 && pos >= window ? pos - window + 1 : 0;
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    public int qDim() {
        return heads * headDim;
    }
}
