package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.pack.GgufPacker;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Gemma 3 as llama.cpp computes it: a random-weight model of the tiny shape in Gemma 3's tensor names and metadata
 * (√hidden embedding scale, pre- and post-norms, per-head q/k norms, GeGLU, a 4-position sliding window on every
 * other layer with its own RoPE base) generates what llama-server generates for it, on the per-op forward with either
 * kernels; the fused forward steps aside by name. So does Gemma 2's tiny shape. The references were made by:
 * <pre>
 * bench/random-model tiny-gemma3 F32 gemma3.gguf 7
 * bench/llamacpp-reference.py gemma3.gguf "$PROMPTS" -n 32 > engine/src/test/resources/arch/gemma3.json
 * bench/random-model tiny-gemma2 F32 gemma2.gguf 7
 * bench/llamacpp-reference.py gemma2.gguf "$PROMPTS" -n 32 > engine/src/test/resources/arch/gemma2.json
 * </pre>
 * with {@code PROMPTS} as {@link RopeLlamaCppTest#PROMPTS}.
 */
class GemmaLlamaCppTest {
    private static final double LOGPROB_TOLERANCE = 1e-3;

    @TempDir
    static Path dir;
    private static Path container;
    private static Path gemma2;

    @BeforeAll
    static void pack() throws IOException {
        container = pack(ModelShape.TINY_GEMMA3, "gemma3");
        gemma2 = pack(ModelShape.TINY_GEMMA2, "gemma2");
    }

    private static Path pack(ModelShape shape, String name) throws IOException {
        Path gguf = dir.resolve(name + ".gguf");
        RandomModel.write(shape, DType.F32, 7, gguf);
        Path packed = dir.resolve(name);
        new GgufPacker().pack(gguf, packed, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
        return packed;
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native"})
    void generatesWhatLlamaCppGenerates(String kernels) throws IOException {
        try (LanewayModel m = open(container, kernels)) {
            LlamaCppReference.assertGenerates(m, reference(), kernels, LOGPROB_TOLERANCE);
        }
    }

    /**
     * Gemma 2 (no q/k norms, one RoPE base, a window on every other layer, attention scores and logits soft-capped:
     * the tiny shape's caps, 1.5 and 3, bite on random weights) generates what llama-server generates, over a float
     * and a half-precision cache.
     */
    @ParameterizedTest
    @CsvSource({"java,f32", "native,f32", "java,f16", "native,f16"})
    void gemma2GeneratesWhatLlamaCppGenerates(String kernels, String kv) throws IOException {
        try (LanewayModel m = Packed.open(gemma2, kernels, RouteOptions.defaults().withOpt("kv", kv))) {
            LlamaCppReference.assertGenerates(m, LlamaCppReference.read("/arch/gemma2.json"), kernels + " " + kv,
                    kv.equals("f32") ? LOGPROB_TOLERANCE : 5e-3);
        }
        ModelConfig c = Container.open(gemma2).config();
        assertEquals(1.5, c.attnLogitSoftcapping(), 1e-6);
        assertEquals(3.0, c.finalLogitSoftcapping(), 1e-6);
        assertTrue(c.slidingLayer(0) && !c.slidingLayer(1));
    }

    /**
     * Without its attention soft cap Gemma 2 computes other probabilities (its tied head repeats a random model's
     * tokens, so they are what differs): the cap is applied, not dropped.
     */
    @Test
    void theAttentionCapChangesTheOutput() throws IOException {
        Path uncapped = withConfig(gemma2, "uncapped", "\"attn_logit_softcapping\" : 1.5",
                "\"attn_logit_softcapping\" : 0.0");
        assertEquals(0, ConfigJson.read(uncapped).attnLogitSoftcapping());
        JsonNode r = LlamaCppReference.read("/arch/gemma2.json").get("records").get(1);
        try (LanewayModel m = open(uncapped, "java")) {
            GeneratedToken first = LlamaCppReference.generate(m, LlamaCppReference.ints(r.get("prompt_ids")), 1)
                    .get(0);
            double expected = r.get("top").get(0).get(0).get("logprob").asDouble();
            double got = first.top().get(0).logprob();
            assertTrue(Math.abs(expected - got) > 0.01, "uncapped " + got + ", capped " + expected);
        }
    }

    /** The config keeps what makes it Gemma, through the container's config.json. */
    @Test
    void theContainerKeepsGemmasParameters() throws IOException {
        ModelConfig c = Container.open(container).config();
        assertEquals("gemma3", c.modelType());
        assertEquals("gelu_pytorch_tanh", c.hiddenAct());
        assertEquals(4, c.slidingWindow());
        assertEquals(2, c.slidingWindowPattern());
        assertEquals(10_000.0, c.ropeLocalTheta());
        assertEquals(1_000_000.0, c.ropeTheta());
        assertTrue(c.slidingLayer(0));
        assertFalse(c.slidingLayer(1));
    }

    /** Without its sliding window the same weights generate something else: the window is not dropped. */
    @Test
    void theWindowChangesTheOutput() throws IOException {
        Path full = withConfig(container, "full-attention", "\"sliding_window\" : 4", "\"sliding_window\" : 0");
        assertEquals(0, ConfigJson.read(full).slidingWindow());
        JsonNode r = reference().get("records").get(1);
        try (LanewayModel m = open(full, "java")) {
            int[] got = LlamaCppReference.generate(m, LlamaCppReference.ints(r.get("prompt_ids")), 32).stream()
                    .mapToInt(GeneratedToken::id).toArray();
            assertFalse(java.util.Arrays.equals(LlamaCppReference.ints(r.get("completion_ids")), got));
        }
    }

    /** The fused forward runs the llama family's layers only, and says so by name. */
    @Test
    void theFusedForwardStepsAsideByName() {
        RuntimeException e = assertThrows(RuntimeException.class, () -> open(container, "fused").close());
        Throwable cause = e;
        while (!(cause instanceof PlanException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertTrue(cause.getMessage().contains("model_type 'gemma3'"), cause.getMessage());
    }

    /** An activation the architecture does not compute is refused, naming it. */
    @Test
    void refusesAnotherActivation() {
        var e = assertThrows(IllegalArgumentException.class, () -> new ModelConfig("llama", 64, 2, 4, 2, 16, 160,
                512, 512, 10000, 1e-5, false, false, "gelu", java.util.OptionalInt.empty(), List.of(), Map.of()));
        assertTrue(e.getMessage().contains("hidden_act \"gelu\""), e.getMessage());
    }

    /** A copy of a container named {@code name} whose config.json has {@code field} in place of {@code was}. */
    private static Path withConfig(Path container, String name, String was, String field) throws IOException {
        Path copy = dir.resolve(name);
        Packed.copy(container, copy);
        String json = Files.readString(copy.resolve(Container.CONFIG));
        Files.writeString(copy.resolve(Container.CONFIG), json.replaceFirst(was, field));
        return copy;
    }

    private static LanewayModel open(Path container, String kernels) {
        return Packed.open(container, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
    }

    private static JsonNode reference() throws IOException {
        return LlamaCppReference.read("/arch/gemma3.json");
    }
}
