package dev.laneway.engine.forward;

/**
 * The model's final norm as a forward leaves it to be applied: after a step, state buffer {@code buffer} holds each
 * row's hidden state before it, which {@link #apply} normalises as the forward's own RMSNorm does before the head.
 */
public record FinalNorm(String buffer, float[] weights, float eps) {

    /** Row {@code row} of {@code hidden}, normalised, into {@code out}. */
    public void apply(float[] hidden, int row, float[] out) {
        int dim = weights.length;
        int o = row * dim;
        float ss = 0f;
        for (int i = 0; i < dim; i++) {
            ss += hidden[o + i] * hidden[o + i];
        }
        float inv = (float) (1.0 / Math.sqrt(ss / dim + eps));
        for (int i = 0; i < dim; i++) {
            out[i] = hidden[o + i] * inv * weights[i];
        }
    }
}
