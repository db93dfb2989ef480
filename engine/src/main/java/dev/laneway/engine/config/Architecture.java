package dev.laneway.engine.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The architectures Laneway serves, by Hugging Face {@code model_type}, and what sets each one's layer apart: the one
 * place that says it. The config reader checks a model's fields against it, the plans are built from it, and packing
 * reads it for names and row orders.
 *
 * @param modelType  the Hugging Face {@code model_type}
 * @param hfClass    the Hugging Face class a config.json names in {@code architectures}
 * @param qkvBias    the q, k and v projections have biases (Qwen2)
 * @param qkNorm     q and k are RMS-normalised per head before RoPE (Qwen3, Gemma 3)
 * @param gemma      Gemma's layer: GeGLU, norms before and after attention and the MLP stored as 1 + w, the
 *                   embedding scaled by √hidden
 * @param mixture    how its mixture of experts is configured and stored, or null for a dense MLP
 * @param window     which layers a {@code sliding_window} covers
 * @param partialRotary RoPE may rotate part of each head ({@code partial_rotary_factor})
 * @param attentionSoftcap attention scores may be soft-capped ({@code attn_logit_softcapping})
 * @param interleavedGguf llama.cpp's converter reorders the q/k rows of its GGUF files (llama-architecture files)
 * @param fusedProjections q, k and v are stored as one tensor, and the MLP's gate and up rows as another (Phi-3's
 *                   {@code qkv_proj} and {@code gate_up_proj}, llama.cpp's {@code attn_qkv} and {@code ffn_up}), which
 *                   packing splits; such a model has no q/k/v biases nor q/k norms
 * @param ggufName   the {@code general.architecture} of its GGUF files
 * @param defaults   the values its configs may leave out
 */
public record Architecture(String modelType, String hfClass, boolean qkvBias, boolean qkNorm, boolean gemma,
                           Mixture mixture, Window window, boolean partialRotary, boolean attentionSoftcap,
                           boolean interleavedGguf, boolean fusedProjections, String ggufName, Defaults defaults) {
    /** Which layers attend through a sliding window. */
    public enum Window {
        /** None: the architecture has no window. */
        NONE,
        /** All but every {@code sliding_window_pattern}-th layer (Gemma). */
        PATTERN,
        /** Every layer (Phi-3). */
        EVERY_LAYER
    }

    /**
     * What a config.json or a GGUF file's metadata may leave out, as Hugging Face's and llama.cpp's readers default it
     * (they agree).
     *
     * @param slidingWindow     positions a window covers
     * @param windowPattern     every how many layers one attends without the window
     * @param localRopeTheta    the window layers' RoPE base; NaN: the model's one base
     * @param finalLogitSoftcap the cap on the logits, 0 for none
     * @param attentionSoftcap  the cap on the attention scores, 0 for none
     * @param queryPreAttnScalar config.json's {@code query_pre_attn_scalar}, 0 for the head size (llama.cpp's GGUF
     *                          reader has no such key: it decides by the layer count)
     */
    public record Defaults(int slidingWindow, int windowPattern, double localRopeTheta, double finalLogitSoftcap,
                           double attentionSoftcap, double queryPreAttnScalar) {
        static final Defaults NONE = new Defaults(0, 1, Double.NaN, 0, 0, 0);

        /** The window layers' RoPE base for a model whose base is {@code ropeTheta}. */
        public double localRopeTheta(double ropeTheta) {
            return Double.isNaN(localRopeTheta) ? ropeTheta : localRopeTheta;
        }
    }

    /**
     * Where the two families of mixtures differ: the config.json fields that size them, the GGUF key of an expert's
     * width, and the names a checkpoint gives its experts.
     *
     * @param countKey       config.json's number of experts
     * @param widthKey       config.json's width of one expert's MLP
     * @param normalizeKey   config.json's switch for renormalising the chosen experts' weights (default false), or
     *                       null where they always are
     * @param ggufWidthKey   the GGUF key, after the architecture's prefix, of one expert's width
     * @param sparseMoeBlock a checkpoint names the MLP {@code block_sparse_moe} and an expert's gate, up and down
     *                       projections {@code w1}, {@code w3} and {@code w2} (Mixtral)
     */
    public record Mixture(String countKey, String widthKey, String normalizeKey, String ggufWidthKey,
                          boolean sparseMoeBlock) {
        static final Mixture QWEN3_MOE = new Mixture("num_experts", "moe_intermediate_size", "norm_topk_prob",
                "expert_feed_forward_length", false);
        static final Mixture MIXTRAL = new Mixture("num_local_experts", "intermediate_size", null,
                "feed_forward_length", true);
    }

    /** GGUF architecture names that are another's: llama.cpp reads a {@code mistral} file as a llama. */
    private static final Map<String, String> GGUF_ALIASES = Map.of("mistral", "llama");

    private static final List<Architecture> ALL = List.of(
            dense("llama", "LlamaForCausalLM", false, false, true, "llama"),
            dense("mistral", "MistralForCausalLM", false, false, true, null),
            dense("qwen2", "Qwen2ForCausalLM", true, false, false, "qwen2"),
            dense("qwen3", "Qwen3ForCausalLM", false, true, false, "qwen3"),
            new Architecture("phi3", "Phi3ForCausalLM", false, false, false, null, Window.EVERY_LAYER, true, false,
                    false, true, "phi3", Defaults.NONE),
            // Gemma 2: a 4096-position window on every other layer, one RoPE base for both kinds of layer, attention
            // scores capped at 50 and logits at 30, scores scaled by 1/√256
            new Architecture("gemma2", "Gemma2ForCausalLM", false, false, true, null, Window.PATTERN, false, true,
                    false, false, "gemma2", new Defaults(4096, 2, Double.NaN, 30, 50, 256)),
            new Architecture("gemma3", "Gemma3ForCausalLM", false, true, true, null, Window.PATTERN, false, false,
                    false, false, "gemma3", new Defaults(0, 6, 10000, 0, 0, 0)),
            new Architecture("qwen3_moe", "Qwen3MoeForCausalLM", false, true, false, Mixture.QWEN3_MOE, Window.NONE,
                    false, false, false, false, "qwen3moe", Defaults.NONE),
            // a llama GGUF file with experts
            new Architecture("mixtral", "MixtralForCausalLM", false, false, false, Mixture.MIXTRAL, Window.NONE,
                    false, false, true, false, "llama", Defaults.NONE));

    private static Architecture dense(String modelType, String hfClass, boolean qkvBias, boolean qkNorm,
                                      boolean interleavedGguf, String ggufName) {
        return new Architecture(modelType, hfClass, qkvBias, qkNorm, false, null, Window.NONE, false, false,
                interleavedGguf, false, ggufName, Defaults.NONE);
    }

    /** The architecture of a {@code model_type}, if Laneway serves it. */
    public static Optional<Architecture> of(String modelType) {
        return ALL.stream().filter(a -> a.modelType.equals(modelType)).findFirst();
    }

    /**
     * The architecture of a GGUF file of {@code general.architecture} {@code name}, with or without experts (a llama
     * file with experts is a Mixtral), if Laneway serves it.
     */
    public static Optional<Architecture> ofGguf(String name, boolean experts) {
        List<Architecture> named = allOfGguf(name);
        return named.stream().filter(a -> named.size() == 1 || a.experts() == experts).findFirst();
    }

    /** The architectures whose GGUF files are named {@code name} (an alias or not). */
    public static List<Architecture> allOfGguf(String name) {
        String canonical = GGUF_ALIASES.getOrDefault(name, name);
        return ALL.stream().filter(a -> canonical.equals(a.ggufName)).toList();
    }

    /** The {@code general.architecture} names Laneway reads, e.g. for a message. */
    public static List<String> ggufNames() {
        List<String> names = new ArrayList<>();
        for (Architecture a : ALL) {
            if (a.ggufName != null && !names.contains(a.ggufName)) {
                names.add(a.ggufName);
                GGUF_ALIASES.forEach((alias, name) -> {
                    if (name.equals(a.ggufName)) {
                        names.add(alias);
                    }
                });
            }
        }
        return names;
    }

    /** The {@code general.architecture} names of the files whose MLP may be a mixture of experts. */
    public static List<String> ggufNamesWithExperts() {
        return ALL.stream().filter(Architecture::experts).map(Architecture::ggufName).distinct().toList();
    }

    /** The {@code model_type}s of the architectures that have a property, e.g. for a message. */
    public static List<String> named(Predicate<Architecture> property) {
        return ALL.stream().filter(property).map(Architecture::modelType).toList();
    }

    /** Every architecture's {@code model_type}. */
    public static List<String> all() {
        return named(a -> true);
    }

    /** Whether the MLP is a mixture of experts. */
    public boolean experts() {
        return mixture != null;
    }

    /**
     * Whether its layer is the llama family's (attention with optional biases or q/k norms, a SwiGLU MLP): the layer
     * the fused forward runs, and the one the standard plans vary.
     */
    public boolean llamaLayer() {
        return !gemma && mixture == null;
    }

    /** The MLP's activation, as {@code hidden_act} names it. */
    public String activation() {
        return gemma ? "gelu_pytorch_tanh" : "silu";
    }
}
