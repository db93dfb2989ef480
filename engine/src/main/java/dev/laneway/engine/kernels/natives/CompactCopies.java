package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Copies of quantized matrices in another layout, in native memory, found by identity (a matrix's equality compares
 * its contents): the compact layout of padded matrices, or the lanes layout of the fused kernels. Lookups read an
 * immutable map; additions replace it.
 */
final class CompactCopies {
    /** Makes a copy: its address, or 0 when out of memory. */
    @FunctionalInterface
    interface Repack {
        long copy(int layout, java.nio.ByteBuffer tiles, int rows, int cols);
    }

    private final Repack repack;
    private volatile Map<Matrix, Long> copies = new IdentityHashMap<>();
    private boolean freed;

    CompactCopies(Repack repack) {
        this.repack = repack;
    }

    static boolean worthIt(Matrix w) {
        return (w.layout() == Matrix.Layout.TILES_Q8 || w.layout() == Matrix.Layout.TILES_Q4_1)
                && w.cols() % Matrix.TILE_COLS != 0;
    }

    /** Whether w has a copy already. */
    boolean has(Matrix w) {
        return copies.containsKey(w);
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
        long address = repack.copy(w.layout().ordinal(), w.data(), w.rows(), w.cols());
        if (address == 0) {
            throw new OutOfMemoryError(w.name() + ": no memory for a copy of "
                    + NativeLibrary.compactBytes(w.layout().ordinal(), w.rows(), w.cols()) + " bytes");
        }
        Map<Matrix, Long> next = new IdentityHashMap<>(copies);
        next.put(w, address);
        copies = next;
        return address;
    }

    /** Forgets the copies, whose memory the arena they came from frees; later lookups fail. */
    synchronized void free() {
        copies = new IdentityHashMap<>();
        freed = true;
    }
}
