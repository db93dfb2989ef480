package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.LayerWeights;
import dev.laneway.engine.kernels.Rope;

/**
 * A transformer layer readied for {@link NativeKernels#runLayer}: its weights' addresses and small vectors in native
 * memory, made once by {@link NativeKernels#fuse} and freed when those kernels close. Holding it keeps the weights'
 * buffers, which the native copy points into, reachable.
 */
public final class FusedLayer {
    final NativeKernels owner;
    /** The native part; swapped once for one that reads copies made in the background ({@link BackgroundCopies}). */
    volatile long handle;
    /** Whether {@link #handle} is the one that reads the background copies. */
    volatile boolean readsCopies;
    private final LayerWeights weights;
    private final LayerShape shape;
    private final Rope rope;

    FusedLayer(NativeKernels owner, long handle, LayerWeights weights, LayerShape shape, Rope rope) {
        this.owner = owner;
        this.handle = handle;
        this.weights = weights;
        this.shape = shape;
        this.rope = rope;
    }

    public LayerWeights weights() {
        return weights;
    }

    public LayerShape shape() {
        return shape;
    }

    public Rope rope() {
        return rope;
    }
}
