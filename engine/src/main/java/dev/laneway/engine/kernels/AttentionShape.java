package dev.laneway.engine.kernels;

/**
 * The shape of one attention layer.
 *
 * @param heads   query heads
 * @param kvHeads key/value heads (equal to {@code heads} without grouped-query attention)
 * @param headDim elements per head
 * @param scale   the factor on q·k, usually 1 / sqrt(headDim)
 * @param window  a query at position p attends to positions {@code p − window + 1 .. p} only; 0 for all of them
 * @param softcap each score s becomes softcap · tanh(s / softcap) before the softmax (Gemma 2); 0 for none
 */
public record AttentionShape(int heads, int kvHeads, int headDim, float scale, int window, float softcap) {
    /** A shape that attends to every earlier position. */
    public AttentionShape(int heads, int kvHeads, int headDim, float scale) {
        this(heads, kvHeads, headDim, scale, 0, 0f);
    }

    /** A shape without soft-capping. */
    public AttentionShape(int heads, int kvHeads, int headDim, float scale, int window) {
        this(heads, kvHeads, headDim, scale, window, 0f);
    }

    public AttentionShape {
        if (window < 0 || !(softcap >= 0) || Float.isInfinite(softcap)) {
            throw new IllegalArgumentException("attention window " + window + " or soft cap " + softcap
                    + " out of range");
        }
        if (heads < 1 || kvHeads < 1 || headDim < 1 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("bad attention shape: " + heads + " heads, " + kvHeads
                    + " kv heads, head dim " + headDim);
        }
    }

    /** A scaled score as the softmax takes it: soft-capped when the shape says so. */
    public float capped(float score) {
        return softcap > 0 ? softcap * (float) Math.tanh(score / softcap) : score;
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
