package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix;

/**
 * The output head readied for {@link NativeKernels#runHead}: the head matrix and the final RMSNorm in native memory,
 * made once by {@link NativeKernels#fuseHead} and freed when those kernels close. Holding it keeps the head's buffer
 * reachable.
 */
public final class FusedHead {
    final NativeKernels owner;
    /** The native part; swapped once for one that reads copies made in the background ({@link BackgroundCopies}). */
    volatile long handle;
    private final Matrix weights;

    FusedHead(NativeKernels owner, long handle, Matrix weights) {
        this.owner = owner;
        this.handle = handle;
        this.weights = weights;
    }

    /** The head matrix, vocabulary × hidden. */
    public Matrix weights() {
        return weights;
    }
}
