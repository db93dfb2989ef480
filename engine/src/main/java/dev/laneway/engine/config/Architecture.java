package dev.laneway.engine.config;

import java.util.List;
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
 * @param experts    the MLP is a mixture of experts
 * @param window     which layers a {@code sliding_window} covers
 * @param partialRotary RoPE may rotate part of each head ({@code partial_rotary_factor})
 * @param attentionSoftcap attention scores may be soft-capped ({@code attn_logit_softcapping})
 * @param interleavedGguf llama.cpp's converter reorders the q/k rows of its GGUF files (llama-architecture files)
 */
public record Architecture(String modelType, String hfClass, boolean qkvBias, boolean qkNorm, boolean gemma,
                           boolean experts, Window window, boolean partialRotary, boolean attentionSoftcap,
                           boolean interleavedGguf) {
    /** Which layers attend through a sliding window. */
    public enum Window {
        /** None: the architecture has no window. */
        NONE,
        /** All but every {@code sliding_window_pattern}-th layer (Gemma). */
        PATTERN,
        /** Every layer (Phi-3). */
        EVERY_LAYER
    }

    private static final List<Architecture> ALL = List.of(
            dense("llama", "LlamaForCausalLM", false, false, true),
            dense("mistral", "MistralForCausalLM", false, false, true),
            dense("qwen2", "Qwen2ForCausalLM", true, false, false),
            dense("qwen3", "Qwen3ForCausalLM", false, true, false),
            new Architecture("phi3", "Phi3ForCausalLM", false, false, false, false, Window.EVERY_LAYER, true, false,
                    false),
            new Architecture("gemma2", "Gemma2ForCausalLM", false, false, true, false, Window.PATTERN, false, true,
                    false),
            new Architecture("gemma3", "Gemma3ForCausalLM", false, true, true, false, Window.PATTERN, false, false,
                    false),
            new Architecture("qwen3_moe", "Qwen3MoeForCausalLM", false, true, false, true, Window.NONE, false, false,
                    false),
            new Architecture("mixtral", "MixtralForCausalLM", false, false, false, true, Window.NONE, false, false,
                    true));

    private static Architecture dense(String modelType, String hfClass, boolean qkvBias, boolean qkNorm,
                                      boolean interleavedGguf) {
        return new Architecture(modelType, hfClass, qkvBias, qkNorm, false, false, Window.NONE, false, false,
                interleavedGguf);
    }

    /** The architecture of a {@code model_type}, if Laneway serves it. */
    public static Optional<Architecture> of(String modelType) {
        return ALL.stream().filter(a -> a.modelType.equals(modelType)).findFirst();
    }

    /** The {@code model_type}s of the architectures that have a property, e.g. for a message. */
    public static List<String> named(Predicate<Architecture> property) {
        return ALL.stream().filter(property).map(Architecture::modelType).toList();
    }

    /** Every architecture's {@code model_type}. */
    public static List<String> all() {
        return named(a -> true);
    }

    /**
     * Whether its layer is the llama family's (attention with optional biases or q/k norms, a SwiGLU MLP): the layer
     * the fused forward runs, and the one the standard plans vary.
     */
    public boolean llamaLayer() {
        return !gemma && !experts;
    }

    /** The MLP's activation, as {@code hidden_act} names it. */
    public String activation() {
        return gemma ? "gelu_pytorch_tanh" : "silu";
    }
}
