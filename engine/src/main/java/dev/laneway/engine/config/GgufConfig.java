package dev.laneway.engine.config;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.quant.Dequant;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A {@link ModelConfig} from a GGUF file's metadata. Keys are prefixed by {@code general.architecture}: llama,
 * mistral (a llama), qwen2, qwen3, gemma2, gemma3, phi3 and qwen3moe. Phi-3's longrope factors, stored as the tensors
 * {@code rope_factors_short.weight} and {@code rope_factors_long.weight}, become its rope_scaling. Tied embeddings
 * are inferred from the absence of {@code output.weight}, and q/k/v biases from {@code blk.0.attn_q.bias}.
 */
public final class GgufConfig {
    private GgufConfig() {
    }

    /** Phi-3's longrope factors: tensors in a GGUF file, {@code rope_scaling} lists in config.json. */
    public static final String SHORT_FACTORS = "rope_factors_short.weight";
    public static final String LONG_FACTORS = "rope_factors_long.weight";
    /** The tensors this reads into the config, which a container then does not keep as tensors. */
    public static final List<String> CONFIG_TENSORS = List.of(SHORT_FACTORS, LONG_FACTORS);

    public static ModelConfig from(GgufFile gguf) throws FormatException {
        String arch = gguf.string("general.architecture").orElseThrow(() -> missing(gguf, "general.architecture"));
        if (!Architecture.ggufNames().contains(arch)) {
            throw new FormatException(gguf.path(), "general.architecture is \"" + arch + "\"; supported: "
                    + String.join(", ", Architecture.ggufNames()));
        }
        String p = arch + ".";
        Experts experts = experts(gguf, p, arch);
        Architecture architecture = Architecture.ofGguf(arch, experts.present()).orElseThrow(() ->
                new FormatException(gguf.path(), "a " + arch + " file " + (experts.present() ? "with" : "without")
                        + " experts is not supported"));
        Architecture.Defaults defaults = architecture.defaults();
        int hidden = requiredInt(gguf, p + "embedding_length");
        int heads = requiredInt(gguf, p + "attention.head_count");
        if (heads == 0) {
            // before a head's width is derived from it
            throw new FormatException(gguf.path(), "GGUF metadata " + p + "attention.head_count is 0, expected at"
                    + " least one attention head");
        }
        int kvHeads = optionalInt(gguf, p + "attention.head_count_kv").orElse(heads);
        boolean partialRotary = architecture.partialRotary();
        // Phi-3's rope.dimension_count is the rotated part of a head, not its size
        int headDim = optionalInt(gguf, p + "attention.key_length").orElse(partialRotary ? hidden / heads
                : optionalInt(gguf, p + "rope.dimension_count").orElse(hidden / heads));
        int vocab = optionalInt(gguf, p + "vocab_size")
                .orElse(gguf.array("tokenizer.ggml.tokens").map(GgufArray::length).orElse(0));
        if (vocab == 0) {
            throw missing(gguf, p + "vocab_size or tokenizer.ggml.tokens");
        }
        boolean gemma = architecture.gemma();
        boolean pattern = architecture.window() == Architecture.Window.PATTERN;
        int layers = requiredInt(gguf, p + "block_count");
        int window = architecture.window() != Architecture.Window.NONE
                ? optionalInt(gguf, p + "attention.sliding_window").orElse(defaults.slidingWindow()) : 0;
        if (pattern && gguf.get(p + "attention.sliding_window_pattern").orElse(null) instanceof GgufArray) {
            throw new FormatException(gguf.path(), p + "attention.sliding_window_pattern as a per-layer array is not "
                    + "supported");
        }
        int period = pattern ? optionalInt(gguf, p + "attention.sliding_window_pattern")
                .orElse(defaults.windowPattern()) : 1;
        double ropeTheta = gguf.number(p + "rope.freq_base").orElse(10000.0);
        double localTheta = pattern ? gguf.number(p + "rope.freq_base_swa").orElse(defaults.localRopeTheta(ropeTheta))
                : ropeTheta;
        // llama.cpp's Gemma 3 27B (62 layers) and Gemma 2 27B (46) scale queries by 1/√(hidden / heads), the others
        // by 1/√head_dim
        double queryScalar = gemma && layers == (architecture.attentionSoftcap() ? 46 : 62)
                ? (double) (hidden / heads) : 0;
        double softcap = gemma ? gguf.number(p + "final_logit_softcapping").orElse(defaults.finalLogitSoftcap()) : 0;
        double attentionCap = architecture.attentionSoftcap()
                ? gguf.number(p + "attn_logit_softcapping").orElse(defaults.attentionSoftcap()) : 0;
        for (String unsupported : new String[]{"attn_logit_softcapping", "attention.value_length_swa",
                "attention.key_length_swa", "rope.dimension_count_swa"}) {
            if (gguf.get(p + unsupported).isPresent()
                    && !(architecture.attentionSoftcap() && unsupported.startsWith("attn_logit"))) {
                throw new FormatException(gguf.path(), p + unsupported + " is not supported");
            }
        }
        OptionalInt rotary = optionalInt(gguf, p + "rope.dimension_count");
        if (rotary.isPresent() && rotary.getAsInt() != headDim && !partialRotary) {
            throw new FormatException(gguf.path(), p + "rope.dimension_count " + rotary.getAsInt()
                    + " rotates part of a head of " + headDim + "; partial rotary embedding is not supported");
        }
        OptionalInt valueLength = optionalInt(gguf, p + "attention.value_length");
        if (valueLength.isPresent() && valueLength.getAsInt() != headDim) {
            throw new FormatException(gguf.path(), p + "attention.value_length " + valueLength.getAsInt()
                    + " differs from the key length " + headDim + "; not supported");
        }
        List<Integer> eos = new ArrayList<>();
        optionalInt(gguf, "tokenizer.ggml.eos_token_id").ifPresent(eos::add);
        String modelType = architecture.modelType();
        try {
            return new ModelConfig(
                    modelType,
                    hidden,
                    layers,
                    heads,
                    kvHeads,
                    headDim,
                    requiredInt(gguf, p + "feed_forward_length"),
                    vocab,
                    requiredInt(gguf, p + "context_length"),
                    ropeTheta,
                    gguf.number(p + "attention.layer_norm_rms_epsilon")
                            .orElseThrow(() -> missing(gguf, p + "attention.layer_norm_rms_epsilon")),
                    gguf.tensor("output.weight").isEmpty(),
                    gguf.tensor("blk.0.attn_q.bias").isPresent(),
                    architecture.activation(),
                    optionalInt(gguf, "tokenizer.ggml.bos_token_id"),
                    eos,
                    partialRotary && gguf.tensor(LONG_FACTORS).isPresent() ? longrope(gguf, p)
                            : ropeScaling(gguf, p, arch),
                    window,
                    period,
                    localTheta,
                    queryScalar,
                    softcap,
                    rotary.isPresent() ? (double) rotary.getAsInt() / headDim : 1.0,
                    experts,
                    attentionCap);
        } catch (IllegalArgumentException e) {
            throw new FormatException(gguf.path(), e.getMessage());
        }
    }

    /**
     * A mixture of experts, as llama.cpp reads it: {@code expert_count} and {@code expert_used_count}; each expert's
     * width from {@code expert_feed_forward_length} (Qwen3-MoE) or {@code feed_forward_length} (a llama file with
     * experts, Mixtral); the chosen experts' weights renormalised (llama.cpp does for both). A gating function, weight
     * scale or shared expert it also reads is refused by name.
     */
    private static Experts experts(GgufFile gguf, String p, String arch) throws FormatException {
        int count = optionalInt(gguf, p + "expert_count").orElse(0);
        List<Architecture> named = Architecture.allOfGguf(arch);
        if (count == 0) {
            if (named.stream().allMatch(Architecture::experts)) {
                throw missing(gguf, p + "expert_count");
            }
            return Experts.NONE;
        }
        Architecture.Mixture mixture = named.stream().map(Architecture::mixture).filter(Objects::nonNull).findFirst()
                .orElseThrow(() -> new FormatException(gguf.path(), p + "expert_count " + count + ": experts of a "
                        + arch + " model are not supported (supported for "
                        + String.join(" and ", Architecture.ggufNamesWithExperts()) + ")"));
        for (String unsupported : new String[]{"expert_shared_count", "expert_weights_scale", "expert_gating_func",
                "expert_weights_norm", "expert_group_count"}) {
            if (gguf.get(p + unsupported).isPresent()) {
                throw new FormatException(gguf.path(), p + unsupported + " is not supported");
            }
        }
        try {
            return new Experts(count, requiredInt(gguf, p + "expert_used_count"),
                    requiredInt(gguf, p + mixture.ggufWidthKey()), true);
        } catch (IllegalArgumentException e) {
            throw new FormatException(gguf.path(), e.getMessage());
        }
    }

    /**
     * Phi-3's longrope, as llama.cpp applies it: the short or long factors (by the context served against
     * {@code rope.scaling.original_context_length}, else the trained context) and {@code rope.scaling.attn_factor}
     * on q and k.
     */
    private static Map<String, Object> longrope(GgufFile gguf, String p) throws FormatException {
        var shortFactors = gguf.tensor(SHORT_FACTORS).orElseThrow(() -> new FormatException(gguf.path(),
                LONG_FACTORS + " without " + SHORT_FACTORS));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rope_type", "longrope");
        m.put("short_factor", factors(Dequant.toFloat(shortFactors)));
        m.put("long_factor", factors(Dequant.toFloat(gguf.tensor(LONG_FACTORS).orElseThrow())));
        m.put("original_max_position_embeddings", optionalInt(gguf, p + "rope.scaling.original_context_length")
                .orElse(requiredInt(gguf, p + "context_length")));
        m.put("attention_factor", gguf.number(p + "rope.scaling.attn_factor").orElse(1.0));
        for (String unsupported : new String[]{"type", "factor", "yarn_log_multiplier", "yarn_ext_factor"}) {
            if (gguf.get(p + "rope.scaling." + unsupported).isPresent()) {
                throw new FormatException(gguf.path(), p + "rope.scaling." + unsupported + " beside longrope factors"
                        + " is not supported");
            }
        }
        return m;
    }

    private static List<Double> factors(float[] f) {
        List<Double> list = new ArrayList<>();
        for (float v : f) {
            list.add((double) v);
        }
        return list;
    }

    /** {@code rope.scaling.*} as a Hugging Face rope_scaling object; empty when there is none. */
    private static Map<String, Object> ropeScaling(GgufFile gguf, String p, String arch) throws FormatException {
        Map<String, Object> m = new LinkedHashMap<>();
        if (gguf.tensor(SHORT_FACTORS).isPresent() || gguf.tensor(LONG_FACTORS).isPresent()) {
            throw new FormatException(gguf.path(), "longrope factor tensors (" + SHORT_FACTORS + ", " + LONG_FACTORS
                    + ") of a " + arch + " model are not supported (supported for phi3, both together)");
        }
        Optional<String> type = gguf.string(p + "rope.scaling.type");
        if (type.isEmpty() || type.get().equals("none")) {
            Optional<Double> attn = gguf.number(p + "rope.scaling.attn_factor");
            if (attn.isPresent() && attn.get().doubleValue() != 1.0) {
                // llama.cpp scales q and k by it whatever the scaling; computing without it would be wrong
                throw new FormatException(gguf.path(), p + "rope.scaling.attn_factor " + attn.get()
                        + " without a scaling type is not supported");
            }
            return m;
        }
        if (type.get().equals("longrope")) {
            throw new FormatException(gguf.path(), p + "rope.scaling.type longrope is supported only as Phi-3's "
                    + SHORT_FACTORS + " and " + LONG_FACTORS + " tensors");
        }
        m.put("rope_type", type.get());
        gguf.number(p + "rope.scaling.factor").ifPresent(f -> m.put("factor", f));
        OptionalInt original = optionalInt(gguf, p + "rope.scaling.original_context_length");
        if (original.isPresent()) {
            m.put("original_max_position_embeddings", original.getAsInt());
        }
        gguf.number(p + "rope.scaling.yarn_beta_fast").ifPresent(b -> m.put("beta_fast", b));
        gguf.number(p + "rope.scaling.yarn_beta_slow").ifPresent(b -> m.put("beta_slow", b));
        // llama.cpp multiplies q and k by attn_factor (on top of YaRN's own magnitude), whatever the type
        Optional<Double> attn = gguf.number(p + "rope.scaling.attn_factor");
        if (attn.isPresent() && attn.get().doubleValue() != 1.0) {
            if (!type.get().equals("yarn")) {
                throw new FormatException(gguf.path(), p + "rope.scaling.attn_factor " + attn.get() + " of a "
                        + type.get() + " scaling is not supported");
            }
            double factor = gguf.number(p + "rope.scaling.factor").orElse(1.0);
            m.put("attention_factor", RopeFrequencies.yarnMagnitude(factor) * attn.get().doubleValue());
        }
        for (String unsupported : new String[]{"yarn_log_multiplier", "yarn_ext_factor", "yarn_attn_factor",
                "alpha"}) {
            if (gguf.get(p + "rope.scaling." + unsupported).isPresent()) {
                throw new FormatException(gguf.path(), p + "rope.scaling." + unsupported + " is not supported");
            }
        }
        return m;
    }

    private static FormatException missing(GgufFile gguf, String key) {
        return new FormatException(gguf.path(), "missing GGUF metadata key " + key);
    }

    private static int requiredInt(GgufFile gguf, String key) throws FormatException {
        return optionalInt(gguf, key).orElseThrow(() -> missing(gguf, key));
    }

    private static OptionalInt optionalInt(GgufFile gguf, String key) throws FormatException {
        Optional<Object> v = gguf.get(key);
        if (v.isEmpty()) {
            return OptionalInt.empty();
        }
        if (!(v.get() instanceof Integer || v.get() instanceof Long) || ((Number) v.get()).longValue() < 0
                || ((Number) v.get()).longValue() > Integer.MAX_VALUE) {
            throw new FormatException(gguf.path(), "GGUF metadata " + key + " is " + describe(v.get())
                    + ", expected a non-negative integer");
        }
        return OptionalInt.of(((Number) v.get()).intValue());
    }

    private static String describe(Object v) {
        return v instanceof GgufArray a ? "an array of " + a.length() + " " + a.elementType() : String.valueOf(v);
    }
}
