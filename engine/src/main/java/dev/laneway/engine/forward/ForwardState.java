package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.plan.Plan;

import java.util.List;

/**
 * The activations of one generation stream: every plan buffer for up to {@code maxBatch} tokens, and the KV cache.
 * Allocated once per stream and reused by every generation on it.
 */
public final class ForwardState {
    final float[][] buffers;
    final KvCache cache;
    final int maxBatch;
    final int[] tokens;

    ForwardState(List<Plan.Dim> bufferDims, Dims dims, int maxBatch, KvCache.Precision kv) {
        this.maxBatch = maxBatch;
        this.buffers = new float[bufferDims.size()][];
        for (int i = 0; i < buffers.length; i++) {
            // Logits are computed for the batch's last token only.
            int rows = bufferDims.get(i) == Plan.Dim.VOCAB ? 1 : maxBatch;
            buffers[i] = new float[Math.multiplyExact(rows, size(bufferDims.get(i), dims))];
        }
        this.cache = new KvCache(dims.layers(), dims.contextLength(), dims.kvDim(), kv);
        this.tokens = new int[maxBatch];
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
