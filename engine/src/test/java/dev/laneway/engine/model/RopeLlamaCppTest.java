package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RoPE as llama.cpp computes it, never plain RoPE in its place: random-weight models of the tiny shape, identical but
 * for their RoPE, generate what llama.cpp generates for each of them, on every forward. Llama 3.x files carry
 * frequency factors as a {@code rope_freqs.weight} tensor; others name a {@code rope.scaling.type} (linear, yarn).
 * The references are llama-server's greedy outputs, made by (see the {@code generator} field of each file):
 * <pre>
 * bench/random-model tiny F32 plain.gguf 7
 * bench/random-model tiny F32 eight.gguf 7 --rope-freqs 8,8,8,8,8,8,8,8
 * bench/random-model tiny F32 profile.gguf 7 --rope-freqs 1,1,1.5,2,4,8,16,32
 * bench/random-model tiny F32 linear.gguf 7 --rope-scaling type=linear,factor=4.0
 * bench/random-model tiny F32 yarn.gguf 7 --rope-scaling type=yarn,factor=4.0,original_context_length=128
 * bench/random-model tiny F32 yarn8.gguf 7 --rope-scaling type=yarn,factor=8.0,original_context_length=256
 * bench/llamacpp-reference.py NAME.gguf "$PROMPTS" -n 32 > engine/src/test/resources/rope/NAME.json
 * </pre>
 */
class RopeLlamaCppTest {
    static final String PROMPTS = "1,300,301,302,303;1,260,470,311,299,505,401,263,288,277,350,333,321;1";
    private static final Map<String, float[]> FACTORS = Map.of(
            "plain", new float[0],
            "eight", new float[]{8, 8, 8, 8, 8, 8, 8, 8},
            "profile", new float[]{1, 1, 1.5f, 2, 4, 8, 16, 32});
    private static final Map<String, Map<String, Object>> SCALING = Map.of(
            "linear", Map.of("type", "linear", "factor", 4.0f),
            "yarn", Map.of("type", "yarn", "factor", 4.0f, "original_context_length", 128),
            "yarn8", Map.of("type", "yarn", "factor", 8.0f, "original_context_length", 256));
    private static final double LOGPROB_TOLERANCE = 1e-3;

    @TempDir
    static Path dir;
    private static final Map<String, Path> CONTAINERS = new HashMap<>();

    @BeforeAll
    static void packModels() throws IOException {
        for (var e : FACTORS.entrySet()) {
            pack(e.getKey(), e.getValue().length == 0 ? null : e.getValue(), Map.of());
        }
        for (var e : SCALING.entrySet()) {
            pack(e.getKey(), null, e.getValue());
        }
    }

    private static void pack(String name, float[] factors, Map<String, Object> scaling) throws IOException {
        Path gguf = dir.resolve(name + ".gguf");
        RandomModel.write(ModelShape.TINY, DType.F32, 7, gguf, factors, scaling);
        Path container = dir.resolve(name);
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
        CONTAINERS.put(name, container);
    }

    @ParameterizedTest
    @CsvSource({"plain,java", "plain,native", "plain,fused", "eight,java", "eight,native", "eight,fused",
            "profile,java", "profile,native", "profile,fused", "linear,java", "linear,fused", "yarn,java",
            "yarn,native", "yarn,fused", "yarn8,java", "yarn8,fused"})
    void generatesWhatLlamaCppGenerates(String model, String kernels) throws IOException {
        try (LanewayModel m = open(CONTAINERS.get(model), kernels)) {
            LlamaCppReference.assertGenerates(m, reference(model), model, LOGPROB_TOLERANCE);
        }
    }

    /** The factors and scalings change what is generated, as they do in llama.cpp: they are not dropped. */
    @Test
    void theFactorsChangeTheOutput() throws IOException {
        for (String model : List.of("eight", "profile", "linear", "yarn", "yarn8")) {
            assertFalse(reference("plain").get("records").equals(reference(model).get("records")), model);
        }
        assertFalse(reference("yarn").get("records").equals(reference("yarn8").get("records")));
        assertEquals(0.1 * Math.log(4) + 1, Container.open(CONTAINERS.get("yarn")).dims(64).rope().magnitude(), 1e-9);
        Container c = Container.open(CONTAINERS.get("profile"));
        assertTrue(c.weights().tensor(RopeFrequencies.FACTORS_TENSOR).isPresent(), "the container keeps the factors");
        assertEquals(Math.pow(10000, -2.0 * 7 / 16) / 32, c.dims(64).rope().at(7), 1e-12);
    }

    /** A GGUF tensor Laneway does not know is refused by name when packing, never dropped. */
    @Test
    void refusesATensorItDoesNotKnow() throws IOException {
        Path plain = dir.resolve("plain.gguf");
        Path odd = dir.resolve("odd.gguf");
        dev.laneway.engine.gguf.GgufFile source = dev.laneway.engine.gguf.GgufFile.open(plain);
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", "llama");
        source.metadata().forEach((k, v) -> {
            if (!k.equals("general.architecture")) {
                w.put(k, v instanceof dev.laneway.engine.gguf.GgufArray a ? a.values() : v);
            }
        });
        for (var t : source.tensors()) {
            w.declare(t.name(), t.dtype(), t.shape());
        }
        w.declare("blk.0.attn_sinks.weight", DType.F32, 4);
        try (GgufWriter.TensorStream out = w.begin(odd)) {
            for (var t : source.tensors()) {
                out.write(t.data());
            }
            out.write(ByteBuffer.allocate(16));
        }
        FormatException e = assertThrows(FormatException.class, () -> new GgufPacker().pack(odd, dir.resolve("odd"),
                new PackOptions(Optional.of("f32"), false), PackProgress.NONE));
        assertTrue(e.getMessage().contains("tensor blk.0.attn_sinks.weight is not one Laneway knows"),
                e.getMessage());
    }

    /** A rotary dimension smaller than the head (Phi's partial rotary) is refused by name, not rotated in full. */
    @Test
    void refusesAPartialRotaryEmbedding() throws IOException {
        Path plain = dir.resolve("plain.gguf");
        Path partial = dir.resolve("partial.gguf");
        dev.laneway.engine.gguf.GgufFile source = dev.laneway.engine.gguf.GgufFile.open(plain);
        GgufWriter w = new GgufWriter();
        source.metadata().forEach((k, v) -> w.put(k, k.equals("llama.rope.dimension_count") ? (Object) 8
                : v instanceof dev.laneway.engine.gguf.GgufArray a ? a.values() : v));
        w.put("llama.attention.key_length", 16);
        for (var t : source.tensors()) {
            w.declare(t.name(), t.dtype(), t.shape());
        }
        try (GgufWriter.TensorStream out = w.begin(partial)) {
            for (var t : source.tensors()) {
                out.write(t.data());
            }
        }
        FormatException e = assertThrows(FormatException.class, () -> new GgufPacker().pack(partial,
                dir.resolve("partial"), new PackOptions(Optional.of("f32"), false), PackProgress.NONE));
        assertTrue(e.getMessage().contains("rope.dimension_count 8 rotates part of a head of 16"), e.getMessage());
    }

    private static LanewayModel open(Path container, String kernels) {
        return Packed.open(container, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
    }

    private static JsonNode reference(String model) throws IOException {
        return LlamaCppReference.read("/rope/" + model + ".json");
    }
}
