package dev.laneway.engine.kernels.natives;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/** The native copies of the fused layers and heads one {@link NativeKernels} made, freed with it. */
final class FusedParts {
    private final List<Runnable> frees = new ArrayList<>();
    private boolean freed;

    /** Takes charge of {@code handle}, which {@code destroy} frees. */
    synchronized void add(long handle, LongConsumer destroy) {
        if (freed) {
            destroy.accept(handle);
            throw new IllegalStateException("kernels closed");
        }
        frees.add(() -> destroy.accept(handle));
    }

    synchronized void free() {
        frees.forEach(Runnable::run);
        frees.clear();
        freed = true;
    }
}
