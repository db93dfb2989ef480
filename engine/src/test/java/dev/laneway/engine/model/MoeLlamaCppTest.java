package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.config.Experts;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.plan.Op;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mixtures of experts as llama.cpp computes them: random-weight models of the tiny shape as Qwen3-MoE (8 experts of
 * width 32, 2 per token, q/k norms) and as Mixtral (a llama file with 4 experts, 2 per token) generate what
 * llama-server generates for them, on the per-op forward with either kernels, prompts of several tokens included
 * (their rows grouped by expert); the fused forward steps aside by name. The references were made by:
 * <pre>
 * bench/random-model tiny-qwen3moe F32 qwen3moe.gguf 7
 * bench/random-model tiny-mixtral F32 mixtral.gguf 7
 * bench/llamacpp-reference.py NAME.gguf "$PROMPTS" -n 32 > engine/src/test/resources/arch/NAME.json
 * </pre>
 * with {@code PROMPTS} as {@link RopeLlamaCppTest#PROMPTS}.
 */
class MoeLlamaCppTest {
    private static final double LOGPROB_TOLERANCE = 1e-3;

    @TempDir
    static Path dir;
    private static final Map<String, Path> CONTAINERS = new HashMap<>();

    @BeforeAll
    static void pack() throws IOException {
        for (var shape : Map.of("qwen3moe", ModelShape.TINY_QWEN3MOE, "mixtral", ModelShape.TINY_MIXTRAL).entrySet()) {
            Path gguf = dir.resolve(shape.getKey() + ".gguf");
            RandomModel.write(shape.getValue(), DType.F32, 7, gguf);
            Path container = dir.resolve(shape.getKey());
            new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
            CONTAINERS.put(shape.getKey(), container);
        }
    }

    @ParameterizedTest
    @CsvSource({"qwen3moe,java", "qwen3moe,native", "mixtral,java", "mixtral,native"})
    void generatesWhatLlamaCppGenerates(String model, String kernels) throws IOException {
        try (LanewayModel m = open(CONTAINERS.get(model), kernels, RouteOptions.defaults().withOpt("kv", "f32"))) {
            LlamaCppReference.assertGenerates(m, reference(model), model + " " + kernels, LOGPROB_TOLERANCE);
        }
    }

    /** Prompts fed one token per forward call choose their experts row by row, and generate the same. */
    @ParameterizedTest
    @ValueSource(strings = {"qwen3moe", "mixtral"})
    void aBatchOfOneRowGivesTheSameTokens(String model) throws IOException {
        RouteOptions oneRow = RouteOptions.defaults().withOpt("kv", "f32").withOpt("batch", "1");
        try (LanewayModel m = open(CONTAINERS.get(model), "java", oneRow)) {
            LlamaCppReference.assertGenerates(m, reference(model), model + " batch 1", LOGPROB_TOLERANCE);
        }
    }

    /**
     * Sequences decoded together, their rows grouped by expert across sequences and joining and leaving at different
     * steps, generate what each generates alone, with the same log-probabilities: the experts' q8 products compute
     * each row the same in any batch; the router, kept F32 as llama.cpp keeps it, is a plain float product whose sums
     * AVX-512 orders by batch size, so its last bits may differ (within 1e-5 here).
     */
    @Test
    void sequencesBatchedTogetherGenerateWhatEachGeneratesAlone() throws Exception {
        Path gguf = dir.resolve("qwen3moe.gguf");
        Path q8 = dir.resolve("qwen3moe-q8");
        new GgufPacker().pack(gguf, q8, new PackOptions(Optional.of("q8"), false), PackProgress.NONE);
        var weights = Container.open(q8).weights();
        assertEquals(DType.F32, weights.tensor("model.layers.0.mlp.gate.weight").orElseThrow().dtype(),
                "the router stays F32, as llama.cpp keeps it");
        assertTrue(weights.tiled("model.layers.0.mlp.experts.0.gate_proj.weight"));
        List<int[]> prompts = new ArrayList<>();
        for (JsonNode r : reference("qwen3moe").get("records")) {
            prompts.add(LlamaCppReference.ints(r.get("prompt_ids")));
        }
        List<List<GeneratedToken>> alone = new ArrayList<>();
        try (LanewayModel m = open(q8, "native", RouteOptions.defaults())) {
            for (int i = 0; i < prompts.size(); i++) {
                alone.add(LlamaCppReference.generate(m, prompts.get(i), 12 + 6 * i));
            }
        }
        RouteOptions together = RouteOptions.defaults().withStreams(prompts.size()).withOpt("batch", "4");
        try (LanewayModel m = open(q8, "native", together)) {
            ExecutorService clients = Executors.newFixedThreadPool(prompts.size());
            try {
                List<Future<List<GeneratedToken>>> runs = new ArrayList<>();
                for (int i = 0; i < prompts.size(); i++) {
                    int n = 12 + 6 * i;
                    int[] prompt = prompts.get(i);
                    runs.add(clients.submit(() -> LlamaCppReference.generate(m, prompt, n)));
                }
                for (int i = 0; i < prompts.size(); i++) {
                    List<GeneratedToken> got = runs.get(i).get();
                    assertEquals(ids(alone.get(i)), ids(got), "prompt " + i);
                    for (int t = 0; t < got.size(); t++) {
                        assertEquals(alone.get(i).get(t).logprob(), got.get(t).logprob(), 1e-5,
                                "prompt " + i + " " + t);
                    }
                }
            } finally {
                clients.shutdownNow();
            }
        }
    }

    private static List<Integer> ids(List<GeneratedToken> tokens) {
        return tokens.stream().map(GeneratedToken::id).toList();
    }

    /** Without plan.json, the plan is built from config.json: the same tokens. */
    @Test
    void aContainerWithoutPlanJsonGetsItsPlanFromTheConfig() throws IOException {
        Path planless = dir.resolve("qwen3moe-planless");
        Packed.copy(CONTAINERS.get("qwen3moe"), planless);
        java.nio.file.Files.delete(planless.resolve(Container.PLAN));
        Container c = Container.open(planless);
        assertEquals(Container.open(CONTAINERS.get("qwen3moe")).plan(), c.plan());
        assertTrue(c.derivations().stream().anyMatch(d -> d.contains("no plan.json")), c.derivations().toString());
        try (LanewayModel m = open(planless, "java", RouteOptions.defaults().withOpt("kv", "f32"))) {
            LlamaCppReference.assertGenerates(m, reference("qwen3moe"), "qwen3moe without plan.json",
                    LOGPROB_TOLERANCE);
        }
    }

    /** The container keeps one matrix per expert, and its plan a moe op with the config's experts. */
    @Test
    void theContainerHoldsEachExpert() throws IOException {
        Container c = Container.open(CONTAINERS.get("qwen3moe"));
        ModelConfig config = c.config();
        assertEquals("qwen3_moe", config.modelType());
        assertEquals(new Experts(8, 2, 32, true), config.experts());
        assertTrue(c.weights().tensor("model.layers.1.mlp.experts.7.down_proj.weight").isPresent());
        assertTrue(c.weights().tensor("model.layers.0.mlp.gate.weight").isPresent());
        Op.Moe moe = c.plan().layer().stream().filter(o -> o instanceof Op.Moe).map(o -> (Op.Moe) o).findFirst()
                .orElseThrow();
        assertEquals(8, moe.experts());
        assertEquals(2, moe.perToken());
        assertEquals("mixtral", Container.open(CONTAINERS.get("mixtral")).config().modelType());
    }

    /** The fused forward runs the dense llama family's layers only, and says so by name. */
    @Test
    void theFusedForwardStepsAsideByName() {
        RuntimeException e = assertThrows(RuntimeException.class, () -> open(CONTAINERS.get("qwen3moe"), "fused",
                RouteOptions.defaults()).close());
        Throwable cause = e;
        while (!(cause instanceof PlanException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertTrue(cause.getMessage().contains("model_type 'qwen3_moe'"), cause.getMessage());
    }

    /** Experts in an architecture that has none, or a mixture without them, are refused by name. */
    @Test
    void refusesExpertsWhereTheArchitectureHasNone() {
        var e = assertThrows(IllegalArgumentException.class, () -> new ModelConfig("qwen3", 64, 2, 4, 2, 16, 160,
                512, 512, 10000, 1e-5, false, false, "silu", java.util.OptionalInt.empty(), java.util.List.of(),
                Map.of(), 0, 1, 10000, 0, 0, 1, new Experts(8, 2, 32, true), 0));
        assertTrue(e.getMessage().startsWith("num_experts 8 of a qwen3 model is not supported"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ModelConfig("qwen3_moe", 64, 2, 4, 2, 16, 160,
                512, 512, 10000, 1e-5, false, false, "silu", java.util.OptionalInt.empty(), java.util.List.of(),
                Map.of()));
        assertTrue(e.getMessage().contains("needs num_experts"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Experts(1 << 30, 2, 32, true));
        assertTrue(e.getMessage().contains("at most 1024 experts"), e.getMessage());
    }

    private static LanewayModel open(Path container, String kernels, RouteOptions options) {
        return Packed.open(container, kernels, options);
    }

    private static JsonNode reference(String model) throws IOException {
        return LlamaCppReference.read("/arch/" + model + ".json");
    }
}
