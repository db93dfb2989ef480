package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;

/**
 * A forward pass a lane can run: it computes a {@link Batch} of tokens as a sequence of steps that the lane submits to
 * its device context. The per-op forward ({@link PlanForward}) is one; routes with fused kernels bring others.
 */
public interface LaneForward {

    /** The model's sizes. */
    Dims dims();

    /** Floats from one row of logits to the next (the head's rows: the vocabulary, or more when it is padded). */
    default int logitsStride() {
        return dims().vocab();
    }

    /** Fresh activations and a one-slot KV cache, for batches of up to {@code maxBatch} tokens of one sequence. */
    default ForwardState newState(int maxBatch, KvCache.Precision kv) {
        return newState(maxBatch, 1, 1, kv);
    }

    /**
     * Fresh activations and a KV cache of {@code maxSequences} slots, for batches of up to {@code maxBatch} tokens of
     * which up to {@code maxLogits} want logits (a row per sequence, more where drafted tokens are verified).
     */
    ForwardState newState(int maxBatch, int maxSequences, int maxLogits, KvCache.Precision kv);

    /**
     * The steps of a forward call over {@code state}, bound to it: run in order, after {@link ForwardState#prepare()},
     * they compute the state's {@link ForwardState#batch() batch}, and {@link #logits} holds its logits. A device lane
     * binds them once and runs each as a kernel run on its context.
     */
    java.util.List<BoundStep> bind(ForwardState state);

    /**
     * The logits the batch's segments asked for, one row of {@link #logitsStride()} each in their order (a view into
     * the state, valid until the next call).
     */
    float[] logits(ForwardState state);

    /** Runs the state's batch on the calling thread, every step directly, and returns its logits. */
    default float[] forward(ForwardState state) {
        state.prepare();
        for (BoundStep step : bind(state)) {
            step.work().run();
        }
        return logits(state);
    }

    /**
     * Runs {@code n} tokens of the sequence in slot 0 at positions {@code startPos ..} on the calling thread, and
     * returns the logits of the last token (a view into the state, valid until the next call).
     */
    default float[] forward(ForwardState state, int[] tokens, int offset, int n, int startPos) {
        state.batch().clear().add(0, startPos, tokens, offset, n, 1);
        return forward(state);
    }

    /**
     * Where a step leaves the rows' hidden states before the final norm, and that norm; empty when this forward
     * cannot give them (then the model gives no embeddings).
     */
    default java.util.Optional<FinalNorm> finalNorm() {
        return java.util.Optional.empty();
    }

    /** Whether {@link #shiftContext} can drop positions of a slot's KV cache. */
    default boolean shiftsContext() {
        return false;
    }

    /**
     * Drops positions {@code keep .. keep + discard} of {@code slot}'s KV cache, whose first {@code used} positions
     * are filled; the later ones move down into their place, as llama-server's context shift does.
     *
     * @throws UnsupportedOperationException when this forward cannot ({@link #shiftsContext})
     */
    default void shiftContext(KvCache cache, int slot, int keep, int discard, int used) {
        throw new UnsupportedOperationException("this model's forward cannot shift its context");
    }

    /**
     * Checks that this forward can apply {@code adapter} to rows that ask for it: it multiplies by the adapter's
     * matrices, at their shapes.
     *
     * @throws IllegalArgumentException      naming a matrix that does not fit
     * @throws UnsupportedOperationException when this forward applies no adapters
     */
    default void checkAdapter(dev.laneway.engine.lora.LoraAdapter adapter) {
        throw new UnsupportedOperationException("this model's forward does not apply LoRA adapters");
    }

    /** A state buffer by name, for diagnostics; null when there is none. */
    float[] buffer(ForwardState state, String name);
}
