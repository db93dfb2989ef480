package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.JavaKernels;

/**
 * The model's final norm as a forward leaves it to be applied: after a step, state buffer {@code buffer} holds each
 * row's hidden state before it, which {@link #apply} normalises as the forward's own RMSNorm does before the head.
 */
public record FinalNorm(String buffer, float[] weights, float eps) {
    private static final JavaKernels KERNELS = new JavaKernels();

    /** Row {@code row} of {@code hidden}, normalised, into {@code out}. */
    public void apply(float[] hidden, int row, float[] out) {
        int dim = weights.length;
        System.arraycopy(hidden, row * dim, out, 0, dim);
        KERNELS.rmsnorm(out, out, weights, dim, 1, eps);
    }
}
