package dev.laneway.engine.forward;

/** Runs each step of a forward call; a device lane runs them as kernel runs on its context, with deadlines. */
@FunctionalInterface
public interface StepRunner {
    /** Runs every step directly on the calling thread. */
    StepRunner DIRECT = (info, step, state, batch, startPos) -> step.run(state, batch, startPos);

    /** Runs {@code step} on {@code batch} tokens at {@code startPos}; {@code info} says what it is. */
    void run(StepInfo info, Step step, ForwardState state, int batch, int startPos);
}
