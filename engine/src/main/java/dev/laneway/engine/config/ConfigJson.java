package dev.laneway.engine.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.JsonObjects;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Reads and writes a Hugging Face {@code config.json} as a {@link ModelConfig}. Required: model_type, hidden_size,
 * num_hidden_layers, num_attention_heads, intermediate_size, vocab_size, max_position_embeddings and rms_norm_eps.
 * Defaults otherwise follow the Hugging Face configs: num_key_value_heads = num_attention_heads, head_dim =
 * hidden_size / num_attention_heads, rope_theta 10000, tie_word_embeddings false, attention_bias false (true for
 * qwen2, whose q, k and v projections always have biases), hidden_act silu.
 */
public final class ConfigJson {
    /** The config's file name in a model or container directory. */
    public static final String FILE_NAME = "config.json";

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    private ConfigJson() {
    }

    /** Reads {@code config.json} in a directory, or the given file. */
    public static ModelConfig read(Path fileOrDir) throws IOException {
        Path file = Files.isDirectory(fileOrDir) ? fileOrDir.resolve(FILE_NAME) : fileOrDir;
        return parse(file, Files.readAllBytes(file));
    }

    /** Parses config JSON; {@code file} names the source in messages. */
    public static ModelConfig parse(Path file, byte[] json) throws FormatException {
        JsonNode root = JsonObjects.read(file, json, "a JSON object of config fields");
        Fields f = new Fields(file, root);
        String modelType = f.requiredString("model_type");
        if (f.present("text_config") != null) {
            throw f.unsupported("text_config", "a multimodal model's config is not supported (its text model's is)");
        }
        if (f.present("rope_parameters") != null) {
            throw f.unsupported("rope_parameters", "give rope_theta and rope_scaling");
        }
        if (modelType.equals("gemma3_text")) {
            modelType = "gemma3";  // as Gemma 3 1B's checkpoint names it
        }
        int hidden = f.requiredInt("hidden_size");
        int heads = f.requiredInt("num_attention_heads");
        int layers = f.requiredInt("num_hidden_layers");
        Optional<Architecture> arch = Architecture.of(modelType);
        boolean gemma = arch.map(Architecture::gemma).orElse(false);
        boolean capped = arch.map(Architecture::attentionSoftcap).orElse(false);
        if (gemma && !capped && f.present("attn_logit_softcapping") != null) {
            throw new FormatException(file, "config.json field attn_logit_softcapping is not supported for "
                    + modelType);
        }
        Architecture.Window window = arch.map(Architecture::window).orElse(Architecture.Window.NONE);
        Architecture.Defaults defaults = arch.map(Architecture::defaults).orElse(Architecture.Defaults.NONE);
        double ropeTheta = f.optionalDouble("rope_theta", 10000.0);
        int maxPositions = f.requiredInt("max_position_embeddings");
        Map<String, Object> ropeScaling = f.rawObject("rope_scaling");
        String scalingType = String.valueOf(ropeScaling.getOrDefault("rope_type", ropeScaling.get("type")));
        if (scalingType.equals("longrope") || scalingType.equals("su")) {
            ropeScaling = longrope(ropeScaling, f.optionalInt("original_max_position_embeddings"), maxPositions);
        }
        String act = f.optionalString(gemma ? "hidden_activation" : "hidden_act",
                arch.map(Architecture::activation).orElse("silu"));
        try {
            return new ModelConfig(
                    modelType,
                    hidden,
                    layers,
                    heads,
                    f.optionalInt("num_key_value_heads").orElse(heads),
                    // with no heads, ModelConfig names num_attention_heads rather than head_dim
                    f.optionalInt("head_dim").orElse(heads > 0 ? hidden / heads : 1),
                    f.requiredInt("intermediate_size"),
                    f.requiredInt("vocab_size"),
                    maxPositions,
                    ropeTheta,
                    f.requiredDouble("rms_norm_eps"),
                    f.optionalBoolean("tie_word_embeddings", gemma),
                    f.optionalBoolean("attention_bias", arch.map(Architecture::qkvBias).orElse(false)),
                    act,
                    f.optionalInt("bos_token_id"),
                    f.intOrList("eos_token_id"),
                    ropeScaling,
                    window != Architecture.Window.NONE
                            ? f.optionalInt("sliding_window").orElse(defaults.slidingWindow()) : 0,
                    window == Architecture.Window.PATTERN ? slidingWindowPattern(f, layers, defaults.windowPattern())
                            : 1,
                    window == Architecture.Window.PATTERN
                            ? f.optionalDouble("rope_local_base_freq", defaults.localRopeTheta(ropeTheta)) : ropeTheta,
                    gemma ? f.optionalDouble("query_pre_attn_scalar", defaults.queryPreAttnScalar()) : 0,
                    gemma ? f.optionalDouble("final_logit_softcapping", defaults.finalLogitSoftcap()) : 0,
                    f.optionalDouble("partial_rotary_factor", 1.0),
                    experts(f, arch),
                    capped ? f.optionalDouble("attn_logit_softcapping", defaults.attentionSoftcap()) : 0);
        } catch (IllegalArgumentException e) {
            throw new FormatException(file, e.getMessage());
        }
    }

    /**
     * Gemma's period of sliding-window layers: {@code sliding_window_pattern} (default 6, Gemma 2's 2), or the period
     * that {@code layer_types} repeats (every layer {@code sliding_attention} but each period-th,
     * {@code full_attention}). Layer types that do not repeat so, or that disagree with a pattern also given, are
     * refused.
     */
    private static int slidingWindowPattern(Fields f, int layers, int fallback) throws FormatException {
        JsonNode types = f.present("layer_types");
        if (types == null) {
            return f.optionalInt("sliding_window_pattern").orElse(fallback);
        }
        if (!types.isArray() || types.size() != layers) {
            throw f.unsupported("layer_types", "expected one type for each of the " + layers + " layers");
        }
        int period = 0;
        for (int i = 0; i < layers && period == 0; i++) {
            if (types.get(i).asText().equals("full_attention")) {
                period = i + 1;
            }
        }
        for (int i = 0; i < layers; i++) {
            String type = types.get(i).asText();
            boolean full = period > 0 && i % period == period - 1;
            if (!type.equals(full ? "full_attention" : "sliding_attention")) {
                throw f.unsupported("layer_types", "layer " + i + " is \"" + type + "\"; supported: sliding-window"
                        + " layers with every n-th layer full_attention, n the same throughout");
            }
        }
        if (period == 0) {
            throw f.unsupported("layer_types", "no layer is full_attention");
        }
        OptionalInt pattern = f.optionalInt("sliding_window_pattern");
        if (pattern.isPresent() && pattern.getAsInt() != period) {
            throw f.unsupported("layer_types", "they repeat every " + period + " layers, sliding_window_pattern says "
                    + pattern.getAsInt());
        }
        return period;
    }

    /**
     * The mixture of experts of a config whose architecture has one: its own fields for the number of experts, an
     * expert's width and the renormalisation ({@link Architecture.Mixture}), {@code num_experts_per_tok}, and every
     * layer sparse. Dense layers between sparse ones and shared experts are refused by name.
     */
    private static Experts experts(Fields f, Optional<Architecture> arch) throws FormatException {
        Architecture.Mixture mixture = arch.map(Architecture::mixture).orElse(null);
        if (mixture == null) {
            return Experts.NONE;
        }
        if (f.optionalInt("decoder_sparse_step").orElse(1) != 1) {
            throw f.unsupported("decoder_sparse_step", "dense layers between sparse ones are not supported");
        }
        JsonNode dense = f.present("mlp_only_layers");
        if (dense != null && !(dense.isArray() && dense.isEmpty())) {
            throw f.unsupported("mlp_only_layers", "dense layers between sparse ones are not supported");
        }
        if (f.present("shared_expert_intermediate_size") != null) {
            throw f.unsupported("shared_expert_intermediate_size", "shared experts are not supported");
        }
        boolean normalize = mixture.normalizeKey() == null || f.optionalBoolean(mixture.normalizeKey(), false);
        return new Experts(f.requiredInt(mixture.countKey()), f.requiredInt("num_experts_per_tok"),
                f.requiredInt(mixture.widthKey()), normalize);
    }

    /**
     * A longrope scaling with what Phi-3's config.json says beside it made explicit: the original context (a
     * top-level {@code original_max_position_embeddings}, else the trained context) and the context's extension
     * {@code factor} (max_position_embeddings / original), from which the default attention factor follows. The
     * scaling then means the same in a container whose context is cut.
     */
    private static Map<String, Object> longrope(Map<String, Object> scaling, OptionalInt original,
                                                int maxPositions) {
        Map<String, Object> m = new LinkedHashMap<>(scaling);
        if (original.isPresent()) {
            // as Hugging Face computes it: the top-level field decides the factor
            m.put("original_max_position_embeddings", original.getAsInt());
            m.put("factor", (double) maxPositions / original.getAsInt());
        } else {
            m.putIfAbsent("original_max_position_embeddings", maxPositions);
        }
        return m;
    }

    /** The config as Hugging Face config.json text. */
    public static String toJson(ModelConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        c.architecture().ifPresent(a -> m.put("architectures", List.of(a.hfClass())));
        m.put("model_type", c.modelType());
        m.put("hidden_size", c.hiddenSize());
        m.put("num_hidden_layers", c.numHiddenLayers());
        m.put("num_attention_heads", c.numAttentionHeads());
        m.put("num_key_value_heads", c.numKeyValueHeads());
        m.put("head_dim", c.headDim());
        m.put("intermediate_size", c.intermediateSize());
        m.put("vocab_size", c.vocabSize());
        m.put("max_position_embeddings", c.maxPositionEmbeddings());
        m.put("rope_theta", c.ropeTheta());
        m.put("rms_norm_eps", c.rmsNormEps());
        m.put("tie_word_embeddings", c.tieWordEmbeddings());
        m.put("attention_bias", c.attentionBias());
        boolean gemma = c.architecture().map(Architecture::gemma).orElse(false);
        m.put(gemma ? "hidden_activation" : "hidden_act", c.hiddenAct());
        if (gemma) {
            m.put("sliding_window", c.slidingWindow());
            m.put("sliding_window_pattern", c.slidingWindowPattern());
            m.put("rope_local_base_freq", c.ropeLocalTheta());
            m.put("query_pre_attn_scalar", c.queryPreAttnScalar() > 0 ? c.queryPreAttnScalar() : c.headDim());
            boolean capped = c.architecture().map(Architecture::attentionSoftcap).orElse(false);  // Gemma 2
            m.put("final_logit_softcapping", c.finalLogitSoftcapping() > 0 || capped ? c.finalLogitSoftcapping() : null);
            if (capped) {
                m.put("attn_logit_softcapping", c.attnLogitSoftcapping());
            }
        }
        if (c.slidesEveryLayer()) {
            m.put("sliding_window", c.slidingWindow() > 0 ? c.slidingWindow() : null);
        }
        Architecture.Mixture mixture = c.architecture().map(Architecture::mixture).orElse(null);
        if (mixture != null) {
            Experts experts = c.experts();
            m.put(mixture.countKey(), experts.count());
            m.put("num_experts_per_tok", experts.perToken());
            m.put(mixture.widthKey(), experts.ffn());
            if (mixture.normalizeKey() != null) {
                m.put(mixture.normalizeKey(), experts.normalize());
            }
        }
        if (c.partialRotaryFactor() != 1) {
            m.put("partial_rotary_factor", c.partialRotaryFactor());
        }
        m.put("bos_token_id", c.bosTokenId().isPresent() ? c.bosTokenId().getAsInt() : null);
        m.put("eos_token_id", c.eosTokenIds().size() == 1 ? c.eosTokenIds().get(0)
                : c.eosTokenIds().isEmpty() ? null : c.eosTokenIds());
        m.put("rope_scaling", c.ropeScaling().isEmpty() ? null : c.ropeScaling());
        try {
            return JSON.writeValueAsString(m) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes {@code config.json} into a directory, or to the given file. */
    public static void write(ModelConfig c, Path fileOrDir) throws IOException {
        Path file = Files.isDirectory(fileOrDir) ? fileOrDir.resolve(FILE_NAME) : fileOrDir;
        Files.writeString(file, toJson(c));
    }

    /** Typed access to the fields of one config, with errors that name the file and field. */
    private record Fields(Path file, JsonNode root) {
        private JsonNode present(String field) {
            JsonNode v = root.get(field);
            return v == null || v.isNull() ? null : v;
        }

        private FormatException unsupported(String field, String why) {
            return new FormatException(file, "config.json field " + field + " " + root.get(field) + ": " + why);
        }

        private FormatException missing(String field) {
            return new FormatException(file, "missing required config.json field " + field);
        }

        /** A number like 1e999 reads as infinity, which config.json could not be written back with. */
        private FormatException tooLarge(String field) {
            return new FormatException(file, "config.json field " + field + " holds a number too large for a double"
                    + " (it reads as infinity)");
        }

        private FormatException wrong(String field, JsonNode v, String expected) {
            return new FormatException(file, "config.json field " + field + " is " + v + ", expected " + expected);
        }

        String requiredString(String field) throws FormatException {
            JsonNode v = present(field);
            if (v == null) {
                throw missing(field);
            }
            if (!v.isTextual()) {
                throw wrong(field, v, "a string");
            }
            return v.textValue();
        }

        String optionalString(String field, String fallback) throws FormatException {
            return present(field) == null ? fallback : requiredString(field);
        }

        int requiredInt(String field) throws FormatException {
            JsonNode v = present(field);
            if (v == null) {
                throw missing(field);
            }
            return toInt(field, v);
        }

        OptionalInt optionalInt(String field) throws FormatException {
            JsonNode v = present(field);
            return v == null ? OptionalInt.empty() : OptionalInt.of(toInt(field, v));
        }

        private int toInt(String field, JsonNode v) throws FormatException {
            if (!v.isIntegralNumber() || !v.canConvertToInt()) {
                throw wrong(field, v, "an integer");
            }
            return v.intValue();
        }

        double requiredDouble(String field) throws FormatException {
            JsonNode v = present(field);
            if (v == null) {
                throw missing(field);
            }
            if (!v.isNumber()) {
                throw wrong(field, v, "a number");
            }
            if (!Double.isFinite(v.doubleValue())) {
                throw tooLarge(field);
            }
            return v.doubleValue();
        }

        double optionalDouble(String field, double fallback) throws FormatException {
            return present(field) == null ? fallback : requiredDouble(field);
        }

        boolean optionalBoolean(String field, boolean fallback) throws FormatException {
            JsonNode v = present(field);
            if (v == null) {
                return fallback;
            }
            if (!v.isBoolean()) {
                throw wrong(field, v, "true or false");
            }
            return v.booleanValue();
        }

        List<Integer> intOrList(String field) throws FormatException {
            JsonNode v = present(field);
            List<Integer> ids = new ArrayList<>();
            if (v == null) {
                return ids;
            }
            if (v.isArray()) {
                for (JsonNode e : v) {
                    ids.add(toInt(field, e));
                }
            } else {
                ids.add(toInt(field, v));
            }
            return ids;
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> rawObject(String field) throws FormatException {
            JsonNode v = present(field);
            if (v == null) {
                return Map.of();
            }
            if (!v.isObject()) {
                throw wrong(field, v, "an object or null");
            }
            // kept as written, to be written again: every number in it must have a JSON form
            Deque<JsonNode> nodes = new ArrayDeque<>(List.of(v));
            while (!nodes.isEmpty()) {
                JsonNode n = nodes.pop();
                if (n.isNumber() && !Double.isFinite(n.doubleValue())) {
                    throw tooLarge(field);
                }
                n.forEach(nodes::push);
            }
            return JSON.convertValue(v, LinkedHashMap.class);
        }
    }
}
