package dev.laneway.engine.kernels.natives;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * How the quantized products read weights that stream from memory (weights that fit in the last-level cache are
 * always read in place). Ordinals are the native library's. Which is faster depends on the CPU, so the default is the
 * native library's choice for it ({@link NativeKernels#preferredStreaming()}), unless the system property
 * {@value #PROPERTY} (or the environment variable {@code LANEWAY_STREAMING}) names one; docs/kernels.md has the
 * measurements.
 */
public enum Streaming {
    /** Computed straight from the weights, no help: what cache-resident weights get. */
    IN_PLACE,
    /** Copied through a buffer in L1 a tile at a time, and computed from there (one row; a batch reads prefetched). */
    STAGED,
    /** Computed in place, with software prefetches into L1 a few KiB ahead along each tile row (faster on Intel's). */
    PREFETCHED,
    /** As {@link #PREFETCHED}, the prefetches into L2 (faster on AMD's cores with AVX-512). */
    PREFETCHED_TO_L2;

    /** The system property naming the way streamed weights are read: one of {@link #KNOWN}'s labels. */
    public static final String PROPERTY = "laneway.streaming";

    /** The ways a setting may name: all but {@link #IN_PLACE}, which only cache-resident weights get. */
    static final List<Streaming> KNOWN = List.of(STAGED, PREFETCHED, PREFETCHED_TO_L2);

    /** The name used in settings and benchmark reports: {@code in-place}, {@code staged}, {@code prefetched-to-l2}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * The way {@link #PROPERTY} or {@code LANEWAY_STREAMING} names, if either is set.
     *
     * @throws IllegalArgumentException when the setting names none of {@link #KNOWN}
     */
    static Optional<Streaming> configured() {
        String value = System.getProperty(PROPERTY);
        if (value == null || value.isBlank()) {
            value = System.getenv("LANEWAY_STREAMING");
        }
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String name = value.trim().toLowerCase(Locale.ROOT);
        for (Streaming s : KNOWN) {
            if (s.label().equals(name)) {
                return Optional.of(s);
            }
        }
        throw new IllegalArgumentException(PROPERTY + ": unknown way of reading weights '" + value.trim()
                + "' (known: " + String.join(", ", KNOWN.stream().map(Streaming::label).toList()) + ")");
    }
}
