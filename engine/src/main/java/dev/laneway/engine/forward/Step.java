package dev.laneway.engine.forward;

/** One compiled piece of a forward pass: runs on {@code batch} tokens at positions {@code startPos ..}. */
@FunctionalInterface
public interface Step {
    void run(ForwardState state, int batch, int startPos);
}
