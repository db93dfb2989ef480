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
 * @param rope          RoPE frequencies per rotated pair; their pairs rotate the head's first {@link #rotaryDim()}
 *                      elements (all of them unless partial rotary)
 * @param contextLength positions a generation may use
 * @param attentionScale the factor on q·k
 * @param sliding       the layers that attend through a sliding window, and their RoPE
 * @param experts       the experts of each layer's mixture, 0 for a dense MLP ({@code ffn} is then each expert's
 *                      width)
 * @param attentionSoftcap Gemma 2's cap on attention scores (softcap · tanh(s / softcap)), 0 for none
 */
public record Dims(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn, int vocab, float rmsEps,
                   RopeFrequencies rope, int contextLength, float attentionScale, SlidingWindow sliding,
                   int experts, float attentionSoftcap) {
    /**
     * Layers that attend to the {@code size} most recent positions only, and rotate with {@code rope}: Gemma 3's
     * all but the last of every {@code period} layers, or every layer ({@code period} 0, Phi-3's).
     */
    public record SlidingWindow(int size, int period, RopeFrequencies rope) {
        /** No layer has a window. */
        public static final SlidingWindow NONE = new SlidingWindow(0, 1, null);

        /** A window on every layer, which rotates as the model does. */
        public static SlidingWindow everyLayer(int size, RopeFrequencies rope) {
            return new SlidingWindow(size, 0, rope);
        }

        public boolean covers(int layer) {
            return size > 0 && (period == 0 || layer % period < period - 1);
        }
    }

    /** Sizes of a model with full attention in every layer, scaled by 1 / √headDim. */
    public Dims(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn, int vocab, float rmsEps,
                RopeFrequencies rope, int contextLength) {
        this(hidden, layers, heads, kvHeads, headDim, ffn, vocab, rmsEps, rope, contextLength,
                (float) (1.0 / Math.sqrt(headDim)), SlidingWindow.NONE, 0, 0f);
    }

    public Dims {
        if (hidden < 1 || layers < 1 || heads < 1 || kvHeads < 1 || headDim < 1 || ffn < 1 || vocab < 1
                || contextLength < 1 || heads % kvHeads != 0 || rope.pairs() * 2 > headDim || experts < 0) {
            throw new IllegalArgumentException("inconsistent model dimensions: " + this);
        }
    }

    /** Sizes of a model with plain RoPE of base {@code ropeTheta}. */
    public Dims(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn, int vocab, float rmsEps,
                double ropeTheta, int contextLength) {
        this(hidden, layers, heads, kvHeads, headDim, ffn, vocab, rmsEps, RopeFrequencies.plain(ropeTheta, headDim),
                contextLength);
    }

    /** The elements of each head that RoPE rotates, from the first. */
    public int rotaryDim() {
        return rope.pairs() * 2;
    }

    public int qDim() {
        return heads * headDim;
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    /** Whether every layer attends fully, rotates alike and scales by 1 / √headDim: what the fused layers compute. */
    public boolean uniformLayers() {
        return sliding.size() == 0 && attentionScale == (float) (1.0 / Math.sqrt(headDim)) && attentionSoftcap == 0;
    }
}
