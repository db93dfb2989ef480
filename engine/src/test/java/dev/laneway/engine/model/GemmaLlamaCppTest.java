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
 * kernels; the fused forward steps aside by name. The reference was made by:
 * <pre>
 * bench/random-model tiny-gemma3 F32 gemma3.gguf 7
 * bench/llamacpp-reference.py gemma3.gguf "$PROMPTS" -n 32 > engine/src/test/resources/arch/gemma3.json
 * </pre>
 * with {@code PROMPTS} as {@link RopeLlamaCppTest#PROMPTS}.
 */
class GemmaLlamaCppTest {
    private static final double LOGPROB_TOLERANCE = 1e-3;

    @TempDir
    static Path dir;
    private static Path container;

    @BeforeAll
    static void pack() throws IOException {
        Path gguf = dir.resolve("gemma3.gguf");
        RandomModel.write(ModelShape.TINY_GEMMA3, DType.F32, 7, gguf);
        container = dir.resolve("gemma3");
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native"})
    void generatesWhatLlamaCppGenerates(String kernels) throws IOException {
        try (LanewayModel m = open(container, kernels)) {
            LlamaCppReference.assertGenerates(m, reference(), kernels, LOGPROB_TOLERANCE);
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
        Path full = dir.resolve("full-attention");
        Packed.copy(container, full);
        String json = Files.readString(full.resolve(Container.CONFIG));
        Files.writeString(full.resolve(Container.CONFIG), json.replaceFirst("\"sliding_window\" : 4",
                "\"sliding_window\" : 0"));
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

    private static LanewayModel open(Path container, String kernels) {
        return Packed.open(container, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
    }

    private static JsonNode reference() throws IOException {
        return LlamaCppReference.read("/arch/gemma3.json");
    }
}
