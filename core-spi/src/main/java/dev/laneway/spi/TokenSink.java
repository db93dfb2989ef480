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
}
