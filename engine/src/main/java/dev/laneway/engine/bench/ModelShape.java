package dev.laneway.engine.bench;

/**
 * The shape of a llama-family model, for random-weight benchmark models.
 *
 * @param hidden  model width
 * @param layers  transformer layers
 * @param heads   query heads
 * @param kvHeads key/value heads
 * @param ffn     feed-forward width
 * @param vocab   vocabulary size
 * @param context context length
 */
public record ModelShape(int hidden, int layers, int heads, int kvHeads, int ffn, int vocab, int context) {
    /** The shape of stories15M (llama2.c's TinyStories model). */
    public static final ModelShape STORIES_15M = new ModelShape(288, 6, 6, 6, 768, 32000, 2048);
    /** A tiny shape for reference outputs kept as test resources. */
    public static final ModelShape TINY = new ModelShape(64, 2, 4, 2, 160, 512, 512);
    /** The shape of Llama-3.2-1B, with a 32,000-token vocabulary. */
    public static final ModelShape LLAMA_1B = new ModelShape(2048, 16, 32, 8, 8192, 32000, 4096);

    public int headDim() {
        return hidden / heads;
    }

    /** A named shape: {@code tiny}, {@code stories15m} or {@code 1b}. */
    public static ModelShape named(String name) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "tiny" -> TINY;
            case "stories15m" -> STORIES_15M;
            case "1b", "llama-1b" -> LLAMA_1B;
            default -> throw new IllegalArgumentException("unknown shape '" + name + "' (known: tiny, stories15m, 1b)");
        };
    }
}
