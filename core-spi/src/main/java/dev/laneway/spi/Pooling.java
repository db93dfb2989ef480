package dev.laneway.spi;

/**
 * How a prompt's hidden states, each after the model's final norm, become one embedding: their mean, the first
 * token's ({@code cls}) or the last token's, or for a reranker ({@code rank}) the last token's through the model's
 * ranking head, whose softmaxed outputs the vector then is, the first of them the relevance score (as llama.cpp's
 * {@code --pooling} names them).
 */
public enum Pooling {
    MEAN, CLS, LAST, RANK;

    /** The pooling of a name ({@code mean}, {@code cls}, {@code last}, {@code rank}), as llama.cpp spells it. */
    public static Pooling of(String name) {
        for (Pooling p : values()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("pooling must be mean, cls, last or rank, was " + name);
    }
}
