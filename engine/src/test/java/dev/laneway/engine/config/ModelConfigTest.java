package dev.laneway.engine.config;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.testing.GgufBuilder;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ModelConfigTest {
    private static final String MINIMAL = """
            {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
             "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 32768, "rms_norm_eps": 1e-6
            """;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void readsTheTinyStoriesConfig() throws IOException {
        ModelConfig c = ConfigJson.read(Shared.tinystoriesCheckpoint());
        assertEquals("llama", c.modelType());
        assertEquals(128, c.hiddenSize());
        assertEquals(2, c.numHiddenLayers());
        assertEquals(8, c.numAttentionHeads());
        assertEquals(4, c.numKeyValueHeads());
        assertEquals(16, c.headDim());
        assertEquals(384, c.intermediateSize());
        assertEquals(2048, c.vocabSize());
        assertEquals(512, c.maxPositionEmbeddings());
        assertEquals(10000.0, c.ropeTheta());
        assertEquals(1e-6, c.rmsNormEps());
        assertTrue(c.tieWordEmbeddings());
        assertFalse(c.attentionBias());
        assertEquals(OptionalInt.of(1), c.bosTokenId());
        assertEquals(List.of(2), c.eosTokenIds());
        assertTrue(c.ropeScaling().isEmpty());
        assertEquals(64, c.kvDim());
        assertEquals(128, c.queryDim());
    }

    @Test
    void fillsHuggingFaceDefaults() throws FormatException {
        ModelConfig c = parse(MINIMAL + "}");
        assertEquals(14, c.numKeyValueHeads());
        assertEquals(64, c.headDim());
        assertEquals(10000.0, c.ropeTheta());
        assertFalse(c.tieWordEmbeddings());
        assertTrue(c.attentionBias()); // qwen2 always has q, k, v biases
        assertEquals("silu", c.hiddenAct());
        assertTrue(c.bosTokenId().isEmpty());
        assertTrue(c.eosTokenIds().isEmpty());
    }

    @Test
    void readsListsAndRawRopeScaling() throws IOException {
        Map<String, Object> m = minimal();
        m.put("model_type", "qwen3");
        m.put("eos_token_id", List.of(151645, 151643));
        m.put("bos_token_id", null);
        m.put("head_dim", 128);
        m.put("num_key_value_heads", 2);
        m.put("rope_scaling", Map.of("rope_type", "linear", "factor", 4.0));
        ModelConfig c = parse(JSON.writeValueAsString(m));
        assertEquals(List.of(151645, 151643), c.eosTokenIds());
        assertEquals(128, c.headDim());
        assertEquals(2, c.numKeyValueHeads());
        assertEquals("linear", c.ropeScaling().get("rope_type"));
        assertEquals(4.0, c.ropeScaling().get("factor"));
        assertFalse(c.attentionBias());
        assertTrue(c.bosTokenId().isEmpty());
    }

    /** A RoPE scaling Laneway cannot compute is refused when the config is read, naming it, never ignored. */
    @Test
    void refusesRopeScalingItCannotApply() throws IOException {
        for (var scaling : List.of(Map.of("rope_type", "dynamic", "factor", 2.0), Map.of("type", "su"),
                Map.of("factor", 2.0))) {
            Map<String, Object> m = minimal();
            m.put("rope_scaling", scaling);
            FormatException e = assertThrows(FormatException.class, () -> parse(JSON.writeValueAsString(m)));
            assertTrue(e.getMessage().startsWith("cfg.json: rope_scaling"), e.getMessage());
        }
        Map<String, Object> m = minimal();
        m.put("rope_scaling", Map.of("rope_type", "llama3", "factor", 8.0, "low_freq_factor", 1.0,
                "high_freq_factor", 4.0));
        FormatException e = assertThrows(FormatException.class, () -> parse(JSON.writeValueAsString(m)));
        assertTrue(e.getMessage().contains("rope_scaling.original_max_position_embeddings must be a positive number"),
                e.getMessage());
    }

    @Test
    void namesTheMissingRequiredField() throws IOException {
        for (String field : List.of("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "vocab_size", "max_position_embeddings", "rms_norm_eps")) {
            Map<String, Object> m = minimal();
            m.remove(field);
            Path file = dir.resolve("config.json");
            Files.writeString(file, JSON.writeValueAsString(m));
            FormatException e = assertThrows(FormatException.class, () -> ConfigJson.read(dir), field);
            assertEquals(file + ": missing required config.json field " + field, e.getMessage());
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> minimal() throws IOException {
        return JSON.readValue(MINIMAL + "}", LinkedHashMap.class);
    }

    @Test
    void namesFieldsOfTheWrongType() {
        FormatException e = assertThrows(FormatException.class,
                () -> parse(MINIMAL.replace("896", "\"896\"") + "}"));
        assertTrue(e.getMessage().contains("config.json field hidden_size is \"896\", expected an integer"),
                e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(MINIMAL + ", \"num_key_value_heads\": 5}"));
        assertTrue(e.getMessage().contains("num_attention_heads 14 is not a multiple of num_key_value_heads 5"),
                e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(MINIMAL + ", \"tie_word_embeddings\": 1}"));
        assertTrue(e.getMessage().contains("tie_word_embeddings is 1, expected true or false"), e.getMessage());
        e = assertThrows(FormatException.class, () -> parse("{\"a\": "));
        assertTrue(e.getMessage().startsWith("cfg.json: not valid JSON"), e.getMessage());
    }

    @Test
    void writesJsonThatReadsBackTheSame() throws IOException {
        ModelConfig c = parse(MINIMAL + ", \"eos_token_id\": [1, 2], \"bos_token_id\": 5,"
                + " \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}}");
        ConfigJson.write(c, dir);
        String json = Files.readString(dir.resolve("config.json"));
        assertTrue(json.contains("\"Qwen2ForCausalLM\""), json);
        assertEquals(c, ConfigJson.read(dir));
        ModelConfig tiny = ConfigJson.read(Shared.tinystoriesCheckpoint());
        assertEquals(tiny, ConfigJson.parse(dir, ConfigJson.toJson(tiny).getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void derivesTheConfigOfStories260kFromGguf() throws IOException {
        ModelConfig c = GgufConfig.from(GgufFile.open(Shared.stories260kGguf()));
        assertEquals("llama", c.modelType());
        assertEquals(64, c.hiddenSize());
        assertEquals(5, c.numHiddenLayers());
        assertEquals(8, c.numAttentionHeads());
        assertEquals(4, c.numKeyValueHeads());
        assertEquals(8, c.headDim());
        assertEquals(172, c.intermediateSize());
        assertEquals(512, c.vocabSize());
        assertEquals(2048, c.maxPositionEmbeddings());
        assertEquals(10000.0, c.ropeTheta());
        assertEquals(1e-5, c.rmsNormEps(), 1e-12);
        assertFalse(c.tieWordEmbeddings()); // the file stores output.weight
        assertFalse(c.attentionBias());
        assertEquals(OptionalInt.of(1), c.bosTokenId());
        assertEquals(List.of(2), c.eosTokenIds());
        // and it survives config.json
        assertEquals(c, ConfigJson.parse(dir, ConfigJson.toJson(c).getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void derivesQwenConfigsFromGguf() throws IOException {
        Path file = qwen(new GgufBuilder(3).string("general.architecture", "qwen3"), "qwen3")
                .u32("qwen3.attention.key_length", 128)
                .kv("qwen3.rope.scaling.type", GgufBuilder.STRING, b -> b.str("linear"))
                .f32("qwen3.rope.scaling.factor", 4f)
                .u32("qwen3.rope.scaling.original_context_length", 32768)
                .tensor("blk.0.attn_q.bias", DType.F32, new long[]{2048}, new byte[8192])
                .write(dir.resolve("q.gguf"));
        ModelConfig c = GgufConfig.from(GgufFile.open(file));
        assertEquals("qwen3", c.modelType());
        assertEquals(128, c.headDim());
        assertEquals(1_000_000.0, c.ropeTheta());
        assertEquals(3, c.vocabSize());
        assertTrue(c.tieWordEmbeddings());
        assertTrue(c.attentionBias());
        assertEquals(Map.of("rope_type", "linear", "factor", 4.0, "original_max_position_embeddings", 32768),
                c.ropeScaling());

        Path yarn = qwen(new GgufBuilder(3).string("general.architecture", "qwen3"), "qwen3")
                .kv("qwen3.rope.scaling.type", GgufBuilder.STRING, b -> b.str("yarn"))
                .f32("qwen3.rope.scaling.factor", 4f)
                .write(dir.resolve("y.gguf"));
        FormatException e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(yarn)));
        assertEquals(yarn + ": rope_scaling.original_max_position_embeddings must be a positive number, got null",
                e.getMessage());
        Path longrope = qwen(new GgufBuilder(3).string("general.architecture", "qwen3"), "qwen3")
                .kv("qwen3.rope.scaling.type", GgufBuilder.STRING, b -> b.str("longrope"))
                .f32("qwen3.rope.scaling.factor", 4f)
                .write(dir.resolve("l.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(longrope)));
        assertEquals(longrope + ": qwen3.rope.scaling.type longrope is supported only as Phi-3's "
                + "rope_factors_short.weight and rope_factors_long.weight tensors", e.getMessage());
        Path logMul = qwen(new GgufBuilder(3).string("general.architecture", "qwen3"), "qwen3")
                .kv("qwen3.rope.scaling.type", GgufBuilder.STRING, b -> b.str("yarn"))
                .f32("qwen3.rope.scaling.factor", 4f)
                .f32("qwen3.rope.scaling.yarn_log_multiplier", 0.1f)
                .write(dir.resolve("m.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(logMul)));
        assertEquals(logMul + ": qwen3.rope.scaling.yarn_log_multiplier is not supported", e.getMessage());
    }

    @Test
    void namesTheMissingGgufKey() throws IOException {
        Path file = new GgufBuilder(3).string("general.architecture", "qwen2")
                .u32("qwen2.embedding_length", 896).write(dir.resolve("m.gguf"));
        FormatException e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(file)));
        assertEquals(file + ": missing GGUF metadata key qwen2.attention.head_count", e.getMessage());

        Path gpt = new GgufBuilder(3).string("general.architecture", "gpt2").write(dir.resolve("g.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(gpt)));
        assertTrue(e.getMessage().contains("general.architecture is \"gpt2\"; supported: llama, mistral, qwen2, qwen3"),
                e.getMessage());

        Path bad = qwen(new GgufBuilder(3).string("general.architecture", "qwen2"), "qwen2")
                .f32("qwen2.block_count", 2.5f).write(dir.resolve("b.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(bad)));
        assertTrue(e.getMessage().contains("GGUF metadata qwen2.block_count is 2.5, expected a non-negative integer"),
                e.getMessage());
    }

    /**
     * No attention heads, in config.json or GGUF metadata, is refused by name before a head's width is derived from
     * them (it was a division by zero), and a head too wide for its RoPE table before the table is made.
     */
    @Test
    void refusesNoHeadsAndHeadsTooWide() throws IOException {
        FormatException e = assertThrows(FormatException.class,
                () -> parse(MINIMAL.replace("\"num_attention_heads\": 14", "\"num_attention_heads\": 0") + "}"));
        assertEquals("cfg.json: num_attention_heads must be positive, got 0", e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(MINIMAL + ", \"head_dim\": 1073741824}"));
        assertEquals("cfg.json: head_dim 1073741824 is over 16384, the most Laneway supports", e.getMessage());
        Path none = new GgufBuilder(3).string("general.architecture", "qwen2").u32("qwen2.embedding_length", 896)
                .u32("qwen2.attention.head_count", 0).write(dir.resolve("h.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(none)));
        assertEquals(none + ": GGUF metadata qwen2.attention.head_count is 0, expected at least one attention head",
                e.getMessage());
    }

    /** 1e999 reads as infinity, which no config.json could be written back with: refused where it is read. */
    @Test
    void refusesInfiniteNumbers() {
        FormatException e = assertThrows(FormatException.class, () -> parse(MINIMAL.replace("1e-6", "1e999") + "}"));
        assertEquals("cfg.json: config.json field rms_norm_eps holds a number too large for a double (it reads as"
                + " infinity)", e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(MINIMAL + ", \"rope_scaling\": {\"type\": \"linear\","
                + " \"factor\": 2, \"note\": [1e999]}}"));
        assertEquals("cfg.json: config.json field rope_scaling holds a number too large for a double (it reads as"
                + " infinity)", e.getMessage());
    }

    /** The metadata of a small qwen model, all but the block count for qwen2 (added by the caller). */
    private static GgufBuilder qwen(GgufBuilder b, String arch) {
        String p = arch + ".";
        if (!arch.equals("qwen2")) {
            b.u32(p + "block_count", 28);
        }
        return b.u32(p + "embedding_length", 1024)
                .u32(p + "attention.head_count", 16)
                .u32(p + "attention.head_count_kv", 8)
                .u32(p + "feed_forward_length", 3072)
                .u32(p + "context_length", 40960)
                .f32(p + "rope.freq_base", 1_000_000f)
                .f32(p + "attention.layer_norm_rms_epsilon", 1e-6f)
                .strings("tokenizer.ggml.tokens", "a", "b", "c")
                .u32("tokenizer.ggml.eos_token_id", 2);
    }

    /**
     * Gemma 3's layer_types give its sliding-window period when they repeat one; anything else, a multimodal config
     * and Transformers' rope_parameters are refused by name rather than read as something they are not.
     */
    @Test
    void readsGemmasLayerTypesAndRefusesWhatItCannotRead() throws FormatException {
        String gemma = "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_hidden_layers\": 6, "
                + "\"num_attention_heads\": 4, \"head_dim\": 16, \"intermediate_size\": 160, \"vocab_size\": 512, "
                + "\"max_position_embeddings\": 512, \"rms_norm_eps\": 1e-6, \"sliding_window\": 4, ";
        String s = "\"sliding_attention\"";
        String full = "\"full_attention\"";
        ModelConfig c = parse(gemma + "\"layer_types\": [" + String.join(", ", s, s, full, s, s, full) + "]}");
        assertEquals("gemma3", c.modelType());
        assertEquals(3, c.slidingWindowPattern());
        FormatException e = assertThrows(FormatException.class, () -> parse(gemma + "\"layer_types\": ["
                + String.join(", ", s, full, s, s, full, s) + "]}"));
        assertTrue(e.getMessage().contains("config.json field layer_types") && e.getMessage().contains("layer 3 is "
                + "\"sliding_attention\""), e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(gemma + "\"layer_types\": ["
                + String.join(", ", s, s, full, s, s, full) + "], \"sliding_window_pattern\": 6}"));
        assertTrue(e.getMessage().contains("sliding_window_pattern says 6"), e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(gemma + "\"rope_parameters\": {\"rope_theta\": 1e6}}"));
        assertTrue(e.getMessage().contains("config.json field rope_parameters"), e.getMessage());
        e = assertThrows(FormatException.class, () -> parse(gemma + "\"text_config\": {}}"));
        assertTrue(e.getMessage().contains("config.json field text_config"), e.getMessage());
    }

    /**
     * The two families of mixtures size their experts with fields of their own, which the table names: each reads
     * and writes back its own, and what neither implements (dense layers between sparse ones) is refused for both.
     */
    @Test
    void readsAndWritesEachMixturesOwnFields() throws IOException {
        String common = "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                + "\"vocab_size\": 512, \"max_position_embeddings\": 512, \"rms_norm_eps\": 1e-6, "
                + "\"num_experts_per_tok\": 2, ";
        ModelConfig qwen = parse("{\"model_type\": \"qwen3_moe\", " + common + "\"intermediate_size\": 160, "
                + "\"num_experts\": 8, \"moe_intermediate_size\": 32, \"norm_topk_prob\": true}");
        assertEquals(new Experts(8, 2, 32, true), qwen.experts());
        ModelConfig mixtral = parse("{\"model_type\": \"mixtral\", " + common + "\"intermediate_size\": 48, "
                + "\"num_local_experts\": 4}");
        assertEquals(new Experts(4, 2, 48, true), mixtral.experts(), "Mixtral always renormalises");
        for (ModelConfig c : List.of(qwen, mixtral)) {
            assertEquals(c, parse(ConfigJson.toJson(c)));
        }
        assertFalse(ConfigJson.toJson(mixtral).contains("norm_topk_prob"), ConfigJson.toJson(mixtral));
        FormatException e = assertThrows(FormatException.class, () -> parse("{\"model_type\": \"mixtral\", "
                + common + "\"intermediate_size\": 48, \"num_local_experts\": 4, \"decoder_sparse_step\": 2}"));
        assertTrue(e.getMessage().contains("config.json field decoder_sparse_step"), e.getMessage());
        e = assertThrows(FormatException.class, () -> parse("{\"model_type\": \"qwen3_moe\", " + common
                + "\"intermediate_size\": 160, \"moe_intermediate_size\": 32}"));
        assertTrue(e.getMessage().contains("num_experts"), e.getMessage());
    }

    /** A GGUF file's experts are read by its architecture's keys, and refused by name where it has none. */
    @Test
    void readsGgufExpertsByTheArchitecturesKeys() throws IOException {
        Path moe = qwen(new GgufBuilder(3).string("general.architecture", "qwen3moe"), "qwen3moe")
                .u32("qwen3moe.expert_count", 8).u32("qwen3moe.expert_used_count", 2)
                .u32("qwen3moe.expert_feed_forward_length", 96).write(dir.resolve("moe.gguf"));
        ModelConfig c = GgufConfig.from(GgufFile.open(moe));
        assertEquals("qwen3_moe", c.modelType());
        assertEquals(new Experts(8, 2, 96, true), c.experts());

        Path dense = qwen(new GgufBuilder(3).string("general.architecture", "qwen3moe"), "qwen3moe")
                .write(dir.resolve("dense.gguf"));
        FormatException e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(dense)));
        assertTrue(e.getMessage().contains("missing GGUF metadata key qwen3moe.expert_count"), e.getMessage());

        Path qwen3 = qwen(new GgufBuilder(3).string("general.architecture", "qwen3"), "qwen3")
                .u32("qwen3.expert_count", 8).write(dir.resolve("q.gguf"));
        e = assertThrows(FormatException.class, () -> GgufConfig.from(GgufFile.open(qwen3)));
        assertTrue(e.getMessage().contains("qwen3.expert_count 8: experts of a qwen3 model are not supported "
                + "(supported for qwen3moe and llama)"), e.getMessage());
    }

    private ModelConfig parse(String json) throws FormatException {
        return ConfigJson.parse(Path.of("cfg.json"), json.getBytes(StandardCharsets.UTF_8));
    }
}
