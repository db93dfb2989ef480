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
}
