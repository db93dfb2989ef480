package dev.laneway.spi;

/**
 * How a prompt's hidden states, each after the model's final norm, become one embedding: their mean, the first
 * token's ({@code cls}) or the last token's (as llama.cpp's {@code --pooling} names them).
 */
public enum Pooling {
    MEAN, CLS, LAST;

    /** The pooling of a name ({@code mean}, {@code cls}, {@code last}), as llama.cpp spells it. */
    public static Pooling of(String name) {
        for (Pooling p : values()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("pooling must be mean, cls or last, was " + name);
    }
}
