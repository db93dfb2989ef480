package dev.laneway.spi;

/** Receives progress while a model is packed. */
@FunctionalInterface
public interface PackProgress {
    /** Ignores progress. */
    PackProgress NONE = (what, done, total) -> { };

    /**
     * @param what  what is being done, e.g. a tensor name
     * @param done  units done so far
     * @param total units in all
     */
    void update(String what, long done, long total);

    /** Something the user should know about the container being written (not an error); ignored by default. */
    default void note(String message) {
    }
}
