package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Compact copies of padded quantized matrices, found by identity (a matrix's equality compares its contents).
 * Lookups read an immutable map; additions replace it.
 */
final class CompactCopies {
    private volatile Map<Matrix, Long> copies = new IdentityHashMap<>();
    private boolean freed;

    static boolean worthIt(Matrix w) {
        return (w.layout() == Matrix.Layout.TILES_Q8 || w.layout() == Matrix.Layout.TILES_Q4_1)
                && w.cols() % Matrix.TILE_COLS != 0;
    }

    long of(Matrix w) {
        Long address = copies.get(w);
        return address != null ? address : add(w);
    }

    private synchronized long add(Matrix w) {
        Long existing = copies.get(w);
        if (existing != null) {
            return existing;
        }
        if (freed) {
            throw new IllegalStateException("kernels closed");
        }
        long address = NativeLibrary.repackCompact(w.layout().ordinal(), w.data(), w.rows(), w.cols());
        if (address == 0) {
            throw new OutOfMemoryError(w.name() + ": no memory for a compact copy of "
                    + NativeLibrary.compactBytes(w.layout().ordinal(), w.rows(), w.cols()) + " bytes");
        }
        Map<Matrix, Long> next = new IdentityHashMap<>(copies);
        next.put(w, address);
        copies = next;
        return address;
    }

    synchronized void free() {
        copies.values().forEach(NativeLibrary::freeCompact);
        copies = new IdentityHashMap<>();
        freed = true;
    }
}
