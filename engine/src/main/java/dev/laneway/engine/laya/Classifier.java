package dev.laneway.engine.laya;

/** Puts a request's state (its prompt, or its messages' text) into one of {@link RequestClass#CHOICES}. */
public interface Classifier extends AutoCloseable {

    /**
     * @throws dev.laneway.spi.RouterException when the classifier fails for this state; the next call may succeed
     */
    Classification classify(String state);

    /** What it is, for the start-up line: {@code heuristic} or {@code scorer <dir>}. */
    String describe();

    /** Releases what it holds (a scorer's model). */
    @Override
    default void close() {
    }
}
