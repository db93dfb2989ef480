package dev.laneway.runtime.api;

/**
 * One choice's work so far, as a stream reports it while it runs: how far its prompt has been computed and in what
 * time, and how many tokens have been generated since. Written and read on the model's engine loop thread, which
 * both generates the choice and writes its chunks.
 */
final class ChoiceClock {
    private int total;
    private int cached;
    private int processed;
    private long promptNanos;
    private long promptDoneAt;
    private int generated;

    /** The prompt's progress, as the engine tells it (see {@code TokenSink.promptProgress}). */
    void prompt(int total, int cached, int processed, long nanos) {
        this.total = total;
        this.cached = cached;
        this.processed = processed;
        this.promptNanos = nanos;
        if (processed == total) {
            promptDoneAt = System.nanoTime();
        }
    }

    /** One more token generated. */
    void generated() {
        generated++;
    }

    PromptProgress progress() {
        return new PromptProgress(total, cached, processed, promptNanos / 1_000_000);
    }

    /** The timings so far: as {@link Timings#of} reports a finished choice, with the generation still running. */
    Timings timings() {
        long predictedNanos = generated > 0 ? System.nanoTime() - promptDoneAt : 0;
        return Timings.of(cached, processed - cached, promptNanos, generated, Math.max(0, generated - 1),
                predictedNanos);
    }
}
