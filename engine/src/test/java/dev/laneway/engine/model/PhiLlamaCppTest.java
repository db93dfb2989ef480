package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.plan.StandardPlans;
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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Phi-3 (and Phi-4-mini, the same architecture) as llama.cpp computes it: random-weight models of the tiny shape in
 * Phi-3's tensor names and metadata (fused q/k/v and gate/up projections, RoPE over three quarters of each head) with
 * no RoPE scaling, and with longrope factors whose short set applies (original context 1024, as wide as llama-server's
 * context) or whose long set applies (original context 128), generate what llama-server generates for them, on every
 * forward. The references were made by:
 * <pre>
 * bench/random-model tiny-phi3 F32 phi3.gguf 7
 * bench/random-model tiny-phi3 F32 phi3-long.gguf 7 --rope-scaling original_context_length=128,attn_factor=1.1339 \
 *     --longrope-short 1.0,1.2,1.5,2.0,3.0,4.0 --longrope-long 1.5,2.5,4.0,6.0,10.0,16.0
 * bench/random-model tiny-phi3 F32 phi3-short.gguf 7 --rope-scaling original_context_length=1024,attn_factor=1.1339 \
 *     --longrope-short 1.0,1.2,1.5,2.0,3.0,4.0 --longrope-long 1.5,2.5,4.0,6.0,10.0,16.0
 * bench/llamacpp-reference.py NAME.gguf "$PROMPTS" -n 32 > engine/src/test/resources/arch/NAME.json
 * </pre>
 * with {@code PROMPTS} as {@link RopeLlamaCppTest#PROMPTS}. Laneway serves the tiny shape's 512 positions, llama-server
 * 1,024: both beyond 128 and within 1,024, so both take the same factors.
 */
class PhiLlamaCppTest {
    private static final double LOGPROB_TOLERANCE = 1e-3;
    private static final float[] SHORT = {1.0f, 1.2f, 1.5f, 2.0f, 3.0f, 4.0f};
    private static final float[] LONG = {1.5f, 2.5f, 4.0f, 6.0f, 10.0f, 16.0f};
    private static final float ATTN_FACTOR = 1.1339f;

    @TempDir
    static Path dir;
    private static final Map<String, Path> CONTAINERS = new HashMap<>();

    @BeforeAll
    static void pack() throws IOException {
        Path plain = dir.resolve("phi3.gguf");
        RandomModel.write(ModelShape.TINY_PHI3, DType.F32, 7, plain);
        pack("phi3", plain);
        for (var original : Map.of("phi3-long", 128, "phi3-short", 1024).entrySet()) {
            Path gguf = dir.resolve(original.getKey() + ".gguf");
            RandomModel.writeLongrope(ModelShape.TINY_PHI3, DType.F32, 7, gguf, SHORT, LONG,
                    Map.of("original_context_length", original.getValue(), "attn_factor", ATTN_FACTOR));
            pack(original.getKey(), gguf);
        }
    }

    private static void pack(String name, Path gguf) throws IOException {
        Path container = dir.resolve(name);
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
        CONTAINERS.put(name, container);
    }

    @ParameterizedTest
    @CsvSource({"phi3,java", "phi3,native", "phi3,fused", "phi3-long,java", "phi3-long,native", "phi3-long,fused",
            "phi3-short,java", "phi3-short,native", "phi3-short,fused"})
    void generatesWhatLlamaCppGenerates(String model, String kernels) throws IOException {
        try (LanewayModel m = open(CONTAINERS.get(model), kernels)) {
            LlamaCppReference.assertGenerates(m, reference(model), model + " " + kernels, LOGPROB_TOLERANCE);
        }
    }

    /**
     * The container holds llama's layer under llama's names (the fused matrices split into their rows), and Phi-3's
     * partial rotary and longrope in config.json; the factors change what is generated, the short and long ones
     * differently.
     */
    @Test
    void theContainerKeepsPhisParameters() throws IOException {
        Container c = Container.open(CONTAINERS.get("phi3-long"));
        ModelConfig config = c.config();
        assertEquals("phi3", config.modelType());
        assertEquals(12, config.rotaryDim());
        assertEquals("longrope", config.ropeScaling().get("rope_type"));
        assertEquals(128, config.ropeScaling().get("original_max_position_embeddings"));
        assertTrue(c.weights().tensor("model.layers.1.self_attn.k_proj.weight").isPresent());
        assertTrue(c.weights().tensor("model.layers.1.mlp.gate_proj.weight").isPresent());
        assertTrue(c.weights().tensors().stream().noneMatch(t -> t.name().contains("qkv")
                || t.name().contains("gate_up") || t.name().contains("rope_factors")));
        assertEquals(StandardPlans.plan(StandardPlans.variant("llama", dev.laneway.engine.kernels.Rope.Style.HALVES,
                false)), c.plan());
        Dims dims = c.dims(512);
        assertEquals(12, dims.rotaryDim());
        assertEquals(ATTN_FACTOR, dims.rope().magnitude(), 1e-6);
        assertEquals(Math.pow(10000, -2.0 * 5 / 12) / LONG[5], dims.rope().at(5), 1e-7);
        assertEquals(Math.pow(10000, -2.0 * 5 / 12) / SHORT[5], c.dims(128).rope().at(5), 1e-7);
        JsonNode plain = reference("phi3").get("records");
        assertFalse(plain.equals(reference("phi3-long").get("records")));
        assertFalse(plain.equals(reference("phi3-short").get("records")));
        assertFalse(reference("phi3-long").get("records").equals(reference("phi3-short").get("records")));
    }

    /**
     * Phi-3's sliding window covers every layer (as Hugging Face applies it; llama.cpp ignores it, so there is no
     * reference): a window narrower than the context changes what is generated, one as wide changes nothing.
     */
    @Test
    void aSlidingWindowCoversEveryLayer() throws IOException {
        Path windowed = dir.resolve("windowed");
        Packed.copy(CONTAINERS.get("phi3"), windowed);
        String json = Files.readString(windowed.resolve(Container.CONFIG));
        Files.writeString(windowed.resolve(Container.CONFIG), json.replaceFirst("\"sliding_window\" : null",
                "\"sliding_window\" : 4"));
        ModelConfig config = ConfigJson.read(windowed);
        assertEquals(4, config.slidingWindow());
        assertTrue(config.slidingLayer(0) && config.slidingLayer(1));
        Dims dims = Container.open(windowed).dims(512);
        assertTrue(dims.sliding().covers(0) && dims.sliding().covers(1));
        assertEquals(dims.rope(), dims.sliding().rope());
        assertEquals(Dims.SlidingWindow.NONE, Container.open(windowed).dims(4).sliding());
        JsonNode r = reference("phi3").get("records").get(1);
        try (LanewayModel m = open(windowed, "java")) {
            int[] got = LlamaCppReference.generate(m, LlamaCppReference.ints(r.get("prompt_ids")), 32).stream()
                    .mapToInt(GeneratedToken::id).toArray();
            assertFalse(Arrays.equals(LlamaCppReference.ints(r.get("completion_ids")), got));
        }
    }

    /** Partial rotary and longrope factors belong to Phi-3 here: another architecture with them is refused by name. */
    @Test
    void refusesPhisRopeElsewhere() throws IOException {
        Path odd = dir.resolve("llama-with-factors.gguf");
        GgufFile source = GgufFile.open(dir.resolve("phi3-long.gguf"));
        GgufWriter w = new GgufWriter();
        source.metadata().forEach((k, v) -> w.put(k.startsWith("phi3.") ? "llama." + k.substring(5)
                : k, k.equals("general.architecture") ? "llama" : v instanceof GgufArray a ? a.values() : v));
        w.put("llama.attention.key_length", 16);
        w.put("llama.rope.dimension_count", 16);
        for (var t : source.tensors()) {
            w.declare(t.name(), t.dtype(), t.shape());
        }
        try (GgufWriter.TensorStream out = w.begin(odd)) {
            for (var t : source.tensors()) {
                out.write(t.data());
            }
        }
        FormatException e = assertThrows(FormatException.class, () -> new GgufPacker().pack(odd, dir.resolve("odd"),
                new PackOptions(Optional.of("f32"), false), PackProgress.NONE));
        assertTrue(e.getMessage().contains("longrope factor tensors"), e.getMessage());
        var partial = assertThrows(IllegalArgumentException.class, () -> new ModelConfig("llama", 64, 2, 4, 2, 16,
                160, 512, 512, 10000, 1e-5, false, false, "silu", java.util.OptionalInt.empty(), List.of(), Map.of(),
                0, 1, 10000, 0, 0, 0.75, dev.laneway.engine.config.Experts.NONE, 0));
        assertTrue(partial.getMessage().startsWith("partial_rotary_factor 0.75 of a llama model is not supported"),
                partial.getMessage());
    }

    private static LanewayModel open(Path container, String kernels) {
        return Packed.open(container, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
    }

    private static JsonNode reference(String model) throws IOException {
        return LlamaCppReference.read("/arch/" + model + ".json");
    }
}
