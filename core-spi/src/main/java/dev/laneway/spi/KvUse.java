package dev.laneway.spi;

/**
 * How much of a model's KV cache its running generations hold, for the serving metrics (the gauge a load-aware router
 * reads): {@code used} positions of the {@code capacity} its streams have together. A conversation kept for reuse
 * after its generation ended is not counted: it gives way to the next prompt.
 *
 * @param used     positions held by running generations
 * @param capacity positions of every stream together; 0 where the model does not say
 */
public record KvUse(long used, long capacity) {
    public static final KvUse NONE = new KvUse(0, 0);

    public KvUse {
        if (used < 0 || capacity < 0) {
            throw new IllegalArgumentException("used and capacity must not be negative");
        }
    }

    /** The fraction in use, from 0 to 1 (0 where the capacity is not known). */
    public double fraction() {
        return capacity == 0 ? 0 : Math.min(1, (double) used / capacity);
    }

    /** Two models' use together. */
    public KvUse plus(KvUse other) {
        return new KvUse(used + other.used, capacity + other.capacity);
    }
}
