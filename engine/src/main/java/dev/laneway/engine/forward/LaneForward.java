package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;

/**
 * A forward pass a lane can run: it computes positions as a sequence of steps that the lane submits to its device
 * context. The per-op forward ({@link PlanForward}) is one; routes with fused kernels bring others.
 */
public interface LaneForward {

    /** The model's sizes. */
    Dims dims();

    /** Fresh activations and KV cache for one stream, for batches of up to {@code maxBatch} tokens. */
    ForwardState newState(int maxBatch, KvCache.Precision kv);

    /**
     * Runs {@code n} tokens at positions {@code startPos ..}, each step through {@code runner}, and returns the logits
     * of the last token (a view into the state, valid until the next call).
     */
    float[] forward(ForwardState state, int[] tokens, int offset, int n, int startPos, StepRunner runner);

    /** A state buffer by name, for diagnostics; null when there is none. */
    float[] buffer(ForwardState state, String name);
}
