package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.plan.Plan;

import java.util.List;

/**
 * The activations of one generation stream: every plan buffer for up to {@code maxBatch} tokens, and the KV cache.
 * Allocated once per stream and reused by every generation on it; the cache grows as positions are used.
 */
public final class ForwardState {
    final float[][] buffers;
    final KvCache cache;
    final int maxBatch;
    final int[] tokens;
    private final int contextLength;

    ForwardState(List<Plan.Dim> bufferDims, Dims dims, int maxBatch, KvCache.Precision kv) {
        this(lengths(bufferDims, dims, maxBatch), dims, maxBatch, kv);
    }

    /** Buffers of the given lengths, in floats. */
    ForwardState(long[] lengths, Dims dims, int maxBatch, KvCache.Precision kv) {
        this.maxBatch = maxBatch;
        this.buffers = new float[lengths.length][];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = new float[Math.toIntExact(lengths[i])];
        }
        this.cache = KvCache.onDemand(dims.layers(), dims.contextLength(), dims.kvDim(), kv);
        this.tokens = new int[maxBatch];
        this.contextLength = dims.contextLength();
    }

    /**
     * Checks a forward call's batch of {@code n} tokens at positions {@code startPos ..} against this state, and takes
     * the batch's tokens from {@code tokens[offset ..]}.
     */
    void take(int[] tokens, int offset, int n, int startPos) {
        if (n < 1 || n > maxBatch) {
            throw new IllegalArgumentException("batch of " + n + " tokens, expected 1 to " + maxBatch);
        }
        if (startPos < 0 || startPos + n > contextLength) {
            throw new IllegalArgumentException("positions " + startPos + ".." + (startPos + n - 1)
                    + " exceed the context of " + contextLength);
        }
        cache.reserve(startPos + n);
        System.arraycopy(tokens, offset, this.tokens, 0, n);
    }

    private static long[] lengths(List<Plan.Dim> bufferDims, Dims dims, int maxBatch) {
        long[] lengths = new long[bufferDims.size()];
        for (int i = 0; i < lengths.length; i++) {
            // Logits are computed for the batch's last token only.
            int rows = bufferDims.get(i) == Plan.Dim.VOCAB ? 1 : maxBatch;
            lengths[i] = (long) rows * size(bufferDims.get(i), dims);
        }
        return lengths;
    }

    static int size(Plan.Dim dim, Dims dims) {
        return switch (dim) {
            case HIDDEN -> dims.hidden();
            case Q -> dims.qDim();
            case KV -> dims.kvDim();
            case FFN -> dims.ffn();
            case VOCAB -> dims.vocab();
        };
    }

    /** The most tokens one forward call takes. */
    public int maxBatch() {
        return maxBatch;
    }
}
