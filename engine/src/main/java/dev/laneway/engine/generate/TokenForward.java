package dev.laneway.engine.generate;

/** Runs tokens through a model and gives the logits after the last of them. */
@FunctionalInterface
public interface TokenForward {
    /**
     * Runs {@code tokens[offset .. offset + n)} at positions {@code startPos ..}, filling the KV cache.
     *
     * @return the logits after the last token, valid until the next call
     */
    float[] forward(int[] tokens, int offset, int n, int startPos);
}
