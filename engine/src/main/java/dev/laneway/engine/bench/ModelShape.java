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
 * @param headDim elements per head (hidden / heads for llama shapes; Gemma's are wider)
 * @param arch    the GGUF architecture: llama, gemma2, gemma3, phi3, qwen3 or qwen3moe
 * @param experts     a mixture's experts, 0 for a dense MLP ({@code ffn} is then each expert's width)
 * @param expertsUsed the experts each token runs through
 */
public record ModelShape(int hidden, int layers, int heads, int kvHeads, int ffn, int vocab, int context, int headDim,
                         String arch, int experts, int expertsUsed) {
    /** A dense shape. */
    public ModelShape(int hidden, int layers, int heads, int kvHeads, int ffn, int vocab, int context, int headDim,
                      String arch) {
        this(hidden, layers, heads, kvHeads, ffn, vocab, context, headDim, arch, 0, 0);
    }

    /** A llama shape, whose heads split the hidden width. */
    public ModelShape(int hidden, int layers, int heads, int kvHeads, int ffn, int vocab, int context) {
        this(hidden, layers, heads, kvHeads, ffn, vocab, context, hidden / heads, "llama");
    }

    /** The shape of stories15M (llama2.c's TinyStories model). */
    public static final ModelShape STORIES_15M = new ModelShape(288, 6, 6, 6, 768, 32000, 2048);
    /** A tiny shape for reference outputs kept as test resources. */
    public static final ModelShape TINY = new ModelShape(64, 2, 4, 2, 160, 512, 512);
    /** A tiny shape whose matrices' rows are whole 256-element super-blocks, for the K-quants. */
    public static final ModelShape TINY_WIDE = new ModelShape(256, 2, 4, 2, 512, 512, 512);
    /** The shape of Llama-3.2-1B, with a 32,000-token vocabulary. */
    public static final ModelShape LLAMA_1B = new ModelShape(2048, 16, 32, 8, 8192, 32000, 4096);

    /** The tiny shape as a Gemma 2 model, with a 4-position window on every other layer and low soft caps. */
    public static final ModelShape TINY_GEMMA2 = new ModelShape(64, 2, 4, 2, 160, 512, 512, 16, "gemma2");
    /** The tiny shape as a Gemma 3 model, with a 4-position sliding window on every other layer. */
    public static final ModelShape TINY_GEMMA3 = new ModelShape(64, 2, 4, 2, 160, 512, 512, 16, "gemma3");
    /** The shape of Gemma-3-1B (its 262,144-token vocabulary included). */
    public static final ModelShape GEMMA3_1B = new ModelShape(1152, 26, 4, 1, 6912, 262144, 4096, 256, "gemma3");

    /** The tiny shape as a Phi-3 model: fused projections, three quarters of each head rotated. */
    public static final ModelShape TINY_PHI3 = new ModelShape(64, 2, 4, 2, 160, 512, 512, 16, "phi3");
    /** The shape of Phi-4-mini (its 200,064-token vocabulary included). */
    public static final ModelShape PHI4_MINI = new ModelShape(3072, 32, 24, 8, 8192, 200064, 4096, 128, "phi3");

    /** The tiny shape as a dense Qwen3 model (q/k norms, heads of their own width). */
    public static final ModelShape TINY_QWEN3 = new ModelShape(64, 2, 4, 2, 160, 512, 512, 16, "qwen3");
    /** The tiny shape as a Qwen3-MoE model: 8 experts of width 32, 2 per token. */
    public static final ModelShape TINY_QWEN3MOE = new ModelShape(64, 2, 4, 2, 32, 512, 512, 16, "qwen3moe", 8, 2);
    /** The tiny shape as a Mixtral model (a llama file with experts): 4 experts of width 32, 2 per token. */
    public static final ModelShape TINY_MIXTRAL = new ModelShape(64, 2, 4, 2, 32, 512, 512, 16, "llama", 4, 2);
    /** The shape of Qwen3-30B-A3B: 128 experts of width 768, 8 per token (its 151,936-token vocabulary included). */
    public static final ModelShape QWEN3_30B_A3B = new ModelShape(2048, 48, 32, 4, 768, 151936, 4096, 128, "qwen3moe",
            128, 8);

    /** The same shape with {@code n} layers. */
    public ModelShape withLayers(int n) {
        return new ModelShape(hidden, n, heads, kvHeads, ffn, vocab, context, headDim, arch, experts, expertsUsed);
    }

    /** Elements of each head that RoPE rotates: Phi-3's three quarters, all of the others'. */
    public int rotaryDim() {
        return arch.equals("phi3") ? headDim * 3 / 4 : headDim;
    }

    /** Width of the query projection: heads × head dim. */
    public int qDim() {
        return heads * headDim;
    }

    /**
     * A named shape: {@code tiny}, {@code stories15m}, {@code 1b}, {@code tiny-gemma2}, {@code tiny-gemma3},
     * {@code gemma3-1b}, {@code tiny-phi3}, {@code phi4-mini}, {@code tiny-qwen3}, {@code tiny-qwen3moe}, {@code tiny-mixtral} or
     * {@code qwen3-30b-a3b}; {@code NAME:N} is the shape with N layers (e.g. {@code qwen3-30b-a3b:12}).
     */
    public static ModelShape named(String name) {
        int colon = name.indexOf(':');
        if (colon > 0) {
            return named(name.substring(0, colon)).withLayers(Integer.parseInt(name.substring(colon + 1)));
        }
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "tiny" -> TINY;
            case "tiny-wide" -> TINY_WIDE;
            case "stories15m" -> STORIES_15M;
            case "1b", "llama-1b" -> LLAMA_1B;
            case "tiny-gemma2" -> TINY_GEMMA2;
            case "tiny-gemma3" -> TINY_GEMMA3;
            case "gemma3-1b" -> GEMMA3_1B;
            case "tiny-phi3" -> TINY_PHI3;
            case "phi4-mini" -> PHI4_MINI;
            case "tiny-qwen3" -> TINY_QWEN3;
            case "tiny-qwen3moe" -> TINY_QWEN3MOE;
            case "tiny-mixtral" -> TINY_MIXTRAL;
            case "qwen3-30b-a3b" -> QWEN3_30B_A3B;
            default -> throw new IllegalArgumentException("unknown shape '" + name + "' (known: tiny, tiny-wide, stories15m, "
                    + "1b, tiny-gemma2, tiny-gemma3, gemma3-1b, tiny-phi3, phi4-mini, tiny-qwen3, tiny-qwen3moe, "
                    + "tiny-mixtral, qwen3-30b-a3b; NAME:LAYERS)");
        };
    }
}
