package dev.laneway.spi;

/** Receives generated tokens as they are chosen. */
@FunctionalInterface
public interface TokenSink {
    /**
     * Takes one token.
     *
     * @return {@code true} to go on, {@code false} to stop the generation now (a stop string, a client gone)
     */
    boolean accept(GeneratedToken token);

    /**
     * Whether the consumer has gone (a client that disconnected): a generation that has not started then never does,
     * and a running one ends at the next step, before its next token, even while its prompt is still being computed.
     */
    default boolean cancelled() {
        return false;
    }

    /**
     * How far the prompt has been computed: {@code processed} of its {@code total} tokens are in the KV cache, the
     * first {@code cached} of them served from what the cache already held, after {@code nanos} of work on it. Told
     * after each chunk is computed, the first time preceded by where the prompt stood before it ({@code processed ==
     * cached}, no time).
     */
    default void promptProgress(int total, int cached, int processed, long nanos) {
    }
}
