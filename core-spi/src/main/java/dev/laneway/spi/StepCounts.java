package dev.laneway.spi;

/**
 * What a model's forward steps have done since it opened, for the serving metrics: a step is one forward over a batch
 * of rows from one or more sequences, so {@code sequences / steps} is how many ran together and {@code tokens / steps}
 * how many rows each step computed.
 *
 * @param steps     forward steps run
 * @param sequences sequences in them, summed over the steps
 * @param tokens    rows (prompt tokens and generated ones) in them, summed over the steps
 */
public record StepCounts(long steps, long sequences, long tokens) {
    public static final StepCounts NONE = new StepCounts(0, 0, 0);

    /** The sum of two models' counts. */
    public StepCounts plus(StepCounts other) {
        return new StepCounts(steps + other.steps, sequences + other.sequences, tokens + other.tokens);
    }
}
