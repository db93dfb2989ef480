package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The weights these kernels have multiplied by, counted once each. While they fit in the last-level cache, a
 * product reads its weights in place (they stay cached from one token to the next); once they outgrow it, weights
 * stream from memory on every token, and the products read them the way that keeps more reads in flight on this CPU
 * ({@link Streaming}): staged or prefetched, which reads memory 1.2–1.5 times faster than in place (docs/kernels.md),
 * and would make cached weights slower to read (the measurements are in docs/performance.md).
 */
final class WeightFootprint {
    private final long cacheBytes;
    private volatile Map<Matrix, Boolean> seen = new IdentityHashMap<>();
    private volatile long bytes;

    WeightFootprint(long cacheBytes) {
        this.cacheBytes = cacheBytes > 0 ? cacheBytes : 32L << 20;
    }

    /** Counts w if it is new; whether the weights counted so far outgrow the cache. */
    boolean streams(Matrix w) {
        if (!seen.containsKey(w)) {
            add(w);
        }
        return bytes > cacheBytes;
    }

    private synchronized void add(Matrix w) {
        if (seen.containsKey(w)) {
            return;
        }
        Map<Matrix, Boolean> next = new IdentityHashMap<>(seen);
        next.put(w, Boolean.TRUE);
        seen = next;
        bytes += w.layout().bytes(w.rows(), w.cols());
    }
}
