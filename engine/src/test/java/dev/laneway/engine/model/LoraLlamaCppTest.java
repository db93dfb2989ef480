package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomAdapter;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.AdapterUse;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LoRA adapters as llama.cpp applies them: random-weight adapters, written as llama.cpp's converter lays them out, of
 * stories260K (llama: its q and k rows reordered as the converter reorders them) and of a random Qwen3 (q/k norms)
 * generate what llama-server generates with them, on every kernel set and through the per-op and the fused forward; two adapters at once, one at half
 * scale, as well; and a batch mixing the base model and adapters gives each row what it gets alone. The references
 * were made by:
 * <pre>
 * bench/random-adapter stories260K.gguf a1.gguf 4 8 0.08 1
 * bench/random-adapter stories260K.gguf a1h.gguf 4 8 0.08 1 all F16
 * bench/random-adapter stories260K.gguf a2.gguf 8 0 0.05 2 attn_q.weight,attn_k.weight,ffn_up.weight,ffn_down.weight
 * bench/random-model tiny-qwen3 F32 qwen3.gguf 7
 * bench/random-adapter qwen3.gguf q1.gguf 4 16 0.05 3
 * bench/llamacpp-reference.py stories260K.gguf "$P" -n 24 --lora a1.gguf > lora/stories260K-a1.json
 * bench/llamacpp-reference.py stories260K.gguf "$P" -n 24 --lora a1h.gguf > lora/stories260K-a1h.json
 * bench/adapter-as-f32.py a1h.gguf a1h-f32.gguf
 * bench/llamacpp-reference.py stories260K.gguf "$P" -n 24 --lora a1h-f32.gguf > lora/stories260K-a1h-f32.json
 * bench/llamacpp-reference.py stories260K.gguf "$P" -n 24 --lora a1.gguf:0.5 --lora a2.gguf > lora/stories260K-a1-half-a2.json
 * bench/llamacpp-reference.py qwen3.gguf "$Q" -n 24 --lora q1.gguf > lora/qwen3-q1.json
 * </pre>
 * with the prompts each reference records.
 */
class LoraLlamaCppTest {
    private static final double LOGPROB_TOLERANCE = 2e-3;

    @TempDir
    static Path dir;
    private static Path stories;
    private static Path qwen3;

    @BeforeAll
    static void write() throws IOException {
        Path gguf = Shared.stories260kGguf();
        RandomAdapter.write(gguf, dir.resolve("a1.gguf"), 4, 8, RandomAdapter.PROJECTIONS, 0.08f, 1);
        RandomAdapter.write(gguf, dir.resolve("a1h.gguf"), 4, 8, RandomAdapter.PROJECTIONS, 0.08f, 1, DType.F16);
        RandomAdapter.write(gguf, dir.resolve("a2.gguf"), 8, 0, Set.of("attn_q.weight", "attn_k.weight",
                "ffn_up.weight", "ffn_down.weight"), 0.05f, 2);
        stories = Packed.stories260k("f32");
        Path qwen3Gguf = dir.resolve("qwen3.gguf");
        RandomModel.write(ModelShape.TINY_QWEN3, DType.F32, 7, qwen3Gguf);
        RandomAdapter.write(qwen3Gguf, dir.resolve("q1.gguf"), 4, 16, RandomAdapter.PROJECTIONS, 0.05f, 3);
        qwen3 = dir.resolve("qwen3");
        new GgufPacker().pack(qwen3Gguf, qwen3, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void generatesWhatLlamaCppGeneratesWithTheAdapter(String kernels) throws IOException {
        try (LanewayModel m = open(stories, kernels)) {
            m.loadAdapter("a1", dir.resolve("a1.gguf"));
            LlamaCppReference.assertGenerates(m, List.of(new AdapterUse("a1", 1f)), reference("stories260K-a1"),
                    "a1 " + kernels, LOGPROB_TOLERANCE);
        }
        try (LanewayModel m = open(stories, kernels)) {
            m.loadAdapter("a1h", dir.resolve("a1h.gguf"));
            var pair = dev.laneway.engine.lora.LoraReader.read("a1h", dir.resolve("a1h.gguf"),
                    dev.laneway.engine.container.Container.open(stories).config()).pairs().values().iterator().next();
            assertEquals(dev.laneway.engine.kernels.Matrix.Layout.F16, pair.bt().layout(),
                    "a half-precision file's pairs stay half precision");
            // llama.cpp rounds the activations to half precision before it multiplies by a half-precision matrix;
            // Laneway keeps them float, as llama.cpp does for the same values written as F32: the tokens are the same
            // either way, the log-probabilities those of the F32 copy.
            List<AdapterUse> a1h = List.of(new AdapterUse("a1h", 1f));
            LlamaCppReference.assertGenerates(m, a1h, reference("stories260K-a1h-f32"), "a1h " + kernels,
                    LOGPROB_TOLERANCE);
            for (JsonNode r : reference("stories260K-a1h").get("records")) {
                int[] expected = LlamaCppReference.ints(r.get("completion_ids"));
                assertEquals(java.util.Arrays.stream(expected).boxed().toList(), ids(LlamaCppReference.generate(m,
                        a1h, LlamaCppReference.ints(r.get("prompt_ids")), expected.length)), "a1h " + kernels);
            }
        }
        try (LanewayModel m = open(qwen3, kernels)) {
            m.loadAdapter("q1", dir.resolve("q1.gguf"));
            LlamaCppReference.assertGenerates(m, List.of(new AdapterUse("q1", 1f)), reference("qwen3-q1"),
                    "q1 " + kernels, LOGPROB_TOLERANCE);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void twoAdaptersAtTheirScalesAddUp(String kernels) throws IOException {
        try (LanewayModel m = open(stories, kernels)) {
            m.loadAdapter("a1", dir.resolve("a1.gguf"));
            m.loadAdapter("a2", dir.resolve("a2.gguf"));
            LlamaCppReference.assertGenerates(m, List.of(new AdapterUse("a1", 0.5f), new AdapterUse("a2", 1f)),
                    reference("stories260K-a1-half-a2"), "a1/2 + a2 " + kernels, LOGPROB_TOLERANCE);
        }
    }

    /**
     * Streams decoding together, some on the base model and some on either adapter, joining at different times: each
     * generates what it generates alone, and the adapters change what they generate.
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "fused"})
    void aBatchMixingTheBaseModelAndTwoAdaptersGivesEachRowWhatItGetsAlone(String forward) throws Exception {
        JsonNode ref = reference("stories260K-a1");
        List<int[]> prompts = new ArrayList<>();
        for (JsonNode r : ref.get("records")) {
            prompts.add(LlamaCppReference.ints(r.get("prompt_ids")));
        }
        List<List<AdapterUse>> uses = List.of(List.of(), List.of(new AdapterUse("a1", 1f)),
                List.of(new AdapterUse("a2", 1f)), List.of(new AdapterUse("a1", 0.5f), new AdapterUse("a2", 1f)));
        int runs = 3 * uses.size();
        List<List<Integer>> alone = new ArrayList<>();
        try (LanewayModel m = Packed.open(stories, forward, RouteOptions.defaults().withStreams(runs))) {
            m.loadAdapter("a1", dir.resolve("a1.gguf"));
            m.loadAdapter("a2", dir.resolve("a2.gguf"));
            for (int i = 0; i < runs; i++) {
                alone.add(ids(LlamaCppReference.generate(m, uses.get(i % uses.size()), prompts.get(i % prompts.size()),
                        20)));
            }
            ExecutorService clients = Executors.newFixedThreadPool(runs);
            try {
                List<Future<List<GeneratedToken>>> together = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    int run = i;
                    together.add(clients.submit(() -> {
                        Thread.sleep(3L * (run % 5));
                        return LlamaCppReference.generate(m, uses.get(run % uses.size()),
                                prompts.get(run % prompts.size()), 20);
                    }));
                }
                for (int i = 0; i < runs; i++) {
                    assertEquals(alone.get(i), ids(together.get(i).get()), forward + " run " + i + " with "
                            + uses.get(i % 4));
                }
            } finally {
                clients.shutdownNow();
            }
        }
        for (int p = 0; p < prompts.size(); p++) {
            assertNotEquals(alone.get(p * 4 % runs), alone.get((p * 4 + 1) % runs), "a1 changes prompt " + p);
        }
    }

    /** A cached prompt is reused only by requests applying the same adapters. */
    @Test
    void thePromptCacheKeepsAdaptersApart() throws IOException {
        int[] prompt = LlamaCppReference.ints(reference("stories260K-a1").get("records").get(0).get("prompt_ids"));
        try (LanewayModel m = open(stories, "native")) {
            m.loadAdapter("a1", dir.resolve("a1.gguf"));
            List<Integer> base = ids(LlamaCppReference.generate(m, List.of(), prompt, 16));
            List<Integer> adapted = ids(LlamaCppReference.generate(m, List.of(new AdapterUse("a1", 1f)), prompt, 16));
            assertNotEquals(base, adapted);
            assertEquals(base, ids(LlamaCppReference.generate(m, List.of(), prompt, 16)));
            assertEquals(adapted, ids(LlamaCppReference.generate(m, List.of(new AdapterUse("a1", 1f)), prompt, 16)));
            assertEquals(base, ids(LlamaCppReference.generate(m, List.of(new AdapterUse("a1", 0f)), prompt, 16)),
                    "scale 0 is the base model");
        }
    }

    @Test
    void refusesWhatDoesNotFitByName() throws IOException {
        try (LanewayModel m = open(stories, "native")) {
            var wrongArch = assertThrows(IOException.class, () -> m.loadAdapter("q1", dir.resolve("q1.gguf")));
            assertTrue(wrongArch.getMessage().contains("for architecture 'qwen3'"), wrongArch.getMessage());
            var notAnAdapter = assertThrows(IOException.class, () -> m.loadAdapter("x", Shared.stories260kGguf()));
            assertTrue(notAnAdapter.getMessage().contains("not a LoRA adapter"), notAnAdapter.getMessage());
            var missing = assertThrows(IOException.class, () -> m.loadAdapter("x", dir.resolve("none.gguf")));
            assertTrue(missing.getMessage().contains("no such adapter"), missing.getMessage());
            var unknown = assertThrows(InvalidRequestException.class, () -> LlamaCppReference.generate(m,
                    List.of(new AdapterUse("a9", 1f)), new int[] {1, 2}, 2));
            assertTrue(unknown.getMessage().contains("no adapter 'a9' is loaded"), unknown.getMessage());
            assertTrue(m.adapters().isEmpty());
            m.loadAdapter("a1", dir.resolve("a1.gguf"));
            assertEquals(List.of("a1"), m.adapters().stream().map(a -> a.name()).toList());
            assertEquals(35, m.adapters().get(0).tensors(), "7 matrices in each of 5 layers");
            assertTrue(m.unloadAdapter("a1"));
            assertFalse(m.unloadAdapter("a1"));
        }
        try (LanewayModel m = open(qwen3, "native")) {
            var shape = assertThrows(IOException.class, () -> m.loadAdapter("a1", dir.resolve("a1.gguf")));
            assertTrue(shape.getMessage().contains("for architecture 'llama'"), shape.getMessage());
        }
        for (String forward : List.of("native", "fused")) {
            try (LanewayModel m = open(stories, forward)) {
                var shape = assertThrows(IllegalArgumentException.class, () -> m.loadAdapter("x",
                        adapter("narrow.gguf", "blk.0.attn_q.weight", 4, 32, 64)));
                assertTrue(shape.getMessage().contains("changes model.layers.0.self_attn.q_proj.weight as 64x32; the"
                        + " model's is 64x64"), forward + ": " + shape.getMessage());
                var target = assertThrows(IllegalArgumentException.class, () -> m.loadAdapter("x",
                        adapter("embedding.gguf", "token_embd.weight", 4, 64, 512)));
                assertTrue(target.getMessage().contains("changes model.embed_tokens.weight, which is not"),
                        forward + ": " + target.getMessage());
                assertTrue(m.adapters().isEmpty());
            }
        }
    }

    /** A GGUF adapter of one pair, {@code rank × in} and {@code out × rank}, for stories260K's architecture. */
    private static Path adapter(String file, String matrix, int rank, int in, int out) throws IOException {
        var w = new dev.laneway.engine.gguf.GgufWriter();
        w.put("general.architecture", "llama");
        w.put("general.type", "adapter");
        w.put("adapter.type", "lora");
        w.put("adapter.lora.alpha", 8f);
        w.declare(matrix + ".lora_a", DType.F32, rank, in);
        w.declare(matrix + ".lora_b", DType.F32, out, rank);
        Path path = dir.resolve(file);
        try (var stream = w.begin(path)) {
            stream.write(java.nio.ByteBuffer.allocate(4 * rank * in));
            stream.write(java.nio.ByteBuffer.allocate(4 * out * rank));
        }
        return path;
    }

    /**
     * The same adapter as a PEFT checkpoint (Hugging Face's names and row order, {@code r} and {@code lora_alpha} in
     * adapter_config.json) generates what llama.cpp generates with the GGUF one; what PEFT can ask for and Laneway
     * does not apply is refused by name.
     */
    @Test
    void aPeftCheckpointOfTheAdapterGeneratesTheSame() throws IOException {
        Path peft = dir.resolve("a1-peft");
        java.nio.file.Files.createDirectories(peft);
        var config = dev.laneway.engine.container.Container.open(stories).config();
        var adapter = dev.laneway.engine.lora.LoraReader.read("a1", dir.resolve("a1.gguf"), config);
        java.util.Map<String, float[]> tensors = new java.util.LinkedHashMap<>();
        java.util.Map<String, int[]> shapes = new java.util.LinkedHashMap<>();
        adapter.pairs().forEach((name, pair) -> {
            String module = "base_model.model." + name.substring(0, name.length() - ".weight".length());
            tensors.put(module + ".lora_A.weight", floats(pair.a()));
            shapes.put(module + ".lora_A.weight", new int[] {pair.a().rows(), pair.a().cols()});
            float[] bt = floats(pair.bt());
            float[] b = new float[bt.length];
            for (int i = 0; i < pair.rank(); i++) {
                for (int o = 0; o < pair.out(); o++) {
                    b[o * pair.rank() + i] = bt[i * pair.out() + o];
                }
            }
            tensors.put(module + ".lora_B.weight", b);
            shapes.put(module + ".lora_B.weight", new int[] {pair.out(), pair.rank()});
        });
        writeSafetensors(peft.resolve("adapter_model.safetensors"), tensors, shapes);
        String json = """
                {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 4, "lora_alpha": 8, "lora_dropout": 0.0,
                 "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                 "bias": "none", "use_dora": false, "use_rslora": false, "fan_in_fan_out": false,
                 "modules_to_save": null, "layer_replication": null, "inference_mode": true%s}
                """;
        java.nio.file.Files.writeString(peft.resolve("adapter_config.json"), json.formatted(""));
        try (LanewayModel m = open(stories, "native")) {
            assertEquals(4, m.loadAdapter("p1", peft).rank());
            LlamaCppReference.assertGenerates(m, List.of(new AdapterUse("p1", 1f)), reference("stories260K-a1"),
                    "PEFT a1", LOGPROB_TOLERANCE);
            java.nio.file.Files.writeString(peft.resolve("adapter_config.json"),
                    json.formatted(", \"layers_to_transform\": [0], \"megatron_core\": \"megatron.core\""));
            m.loadAdapter("p1", peft);
            java.nio.file.Files.writeString(peft.resolve("adapter_config.json"),
                    json.replace("\"use_dora\": false", "\"use_dora\": true").formatted(""));
            var dora = assertThrows(IOException.class, () -> m.loadAdapter("p2", peft));
            assertTrue(dora.getMessage().contains("use_dora: DoRA adapters are not supported"), dora.getMessage());
            java.nio.file.Files.writeString(peft.resolve("adapter_config.json"),
                    json.formatted(", \"trainable_token_indices\": [5, 6]"));
            var tokens = assertThrows(IOException.class, () -> m.loadAdapter("p2", peft));
            assertTrue(tokens.getMessage().contains("trainable_token_indices is set"), tokens.getMessage());
        }
    }

    private static float[] floats(dev.laneway.engine.kernels.Matrix m) {
        float[] v = new float[m.rows() * m.cols()];
        for (int i = 0; i < v.length; i++) {
            v[i] = dev.laneway.engine.lora.LoraAdapter.Pair.at(m, i);
        }
        return v;
    }

    /** A safetensors file of float32 tensors: the header's length, its JSON, the bytes in order. */
    private static void writeSafetensors(Path file, java.util.Map<String, float[]> tensors,
                                         java.util.Map<String, int[]> shapes) throws IOException {
        StringBuilder header = new StringBuilder("{");
        long offset = 0;
        for (var e : tensors.entrySet()) {
            int[] shape = shapes.get(e.getKey());
            long end = offset + 4L * e.getValue().length;
            header.append(header.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":{\"dtype\":")
                    .append("\"F32\",\"shape\":[").append(shape[0]).append(',').append(shape[1])
                    .append("],\"data_offsets\":[").append(offset).append(',').append(end).append("]}");
            offset = end;
        }
        byte[] json = header.append('}').toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(8 + json.length + (int) offset)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        out.putLong(json.length).put(json);
        tensors.values().forEach(v -> {
            for (float f : v) {
                out.putFloat(f);
            }
        });
        java.nio.file.Files.write(file, out.array());
    }

    private static LanewayModel open(Path container, String kernels) {
        return Packed.open(container, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
    }

    private static List<Integer> ids(List<GeneratedToken> tokens) {
        return tokens.stream().map(GeneratedToken::id).toList();
    }

    private static JsonNode reference(String name) throws IOException {
        return LlamaCppReference.read("/lora/" + name + ".json");
    }
}
