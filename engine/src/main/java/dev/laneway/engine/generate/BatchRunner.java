package dev.laneway.engine.generate;

import dev.laneway.engine.forward.Batch;

/** Runs batches through a model on a device context: fill {@link #batch()}, then {@link #run()}. */
public interface BatchRunner {
    /** The batch the next run computes. */
    Batch batch();

    /** Runs the batch and returns the logits its segments asked for, a row of {@link #logitsStride()} each. */
    float[] run();

    /** Floats from one row of logits to the next. */
    int logitsStride();
}
