package dev.laneway.engine.kernels.natives;

import java.util.ArrayList;
import java.util.List;

/** The native copies of the fused layers one {@link NativeKernels} made, freed with it. */
final class FusedLayers {
    private final List<Long> handles = new ArrayList<>();
    private boolean freed;

    synchronized void add(long handle) {
        if (freed) {
            NativeLibrary.destroyFusedLayer(handle);
            throw new IllegalStateException("kernels closed");
        }
        handles.add(handle);
    }

    synchronized void free() {
        handles.forEach(NativeLibrary::destroyFusedLayer);
        handles.clear();
        freed = true;
    }
}
