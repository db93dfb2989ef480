package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.RopeFrequencies;

/**
 * The sizes the forward pass needs.
 *
 * @param hidden        model width
 * @param layers        transformer layers
 * @param heads         query heads
 * @param kvHeads       key/value heads
 * @param headDim       elements per head
 * @param ffn           feed-forward width
 * @param vocab         vocabulary size
 * @param rmsEps        RMSNorm epsilon
 * @param rope          RoPE frequencies per rotated pair
 * @param contextLength positions a generation may use
 */
public record Dims(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn, int vocab, float rmsEps,
                   RopeFrequencies rope, int contextLength) {
    public Dims {
        if (hidden < 1 || layers < 1 || heads < 1 || kvHeads < 1 || headDim < 1 || ffn < 1 || vocab < 1
                || contextLength < 1 || heads % kvHeads != 0 || rope.pairs() * 2 != headDim) {
            throw new IllegalArgumentException("inconsistent model dimensions: " + this);
        }
    }

    /** Sizes of a model with plain RoPE of base {@code ropeTheta}. */
    public Dims(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn, int vocab, float rmsEps,
                double ropeTheta, int contextLength) {
        this(hidden, layers, heads, kvHeads, headDim, ffn, vocab, rmsEps, RopeFrequencies.plain(ropeTheta, headDim),
                contextLength);
    }

    public int qDim() {
        return heads * headDim;
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    /** A copy with another context length. */
    public Dims withContextLength(int contextLength) {
        return new Dims(hidden, layers, heads, kvHeads, headDim, ffn, vocab, rmsEps, rope, contextLength);
    }
}
