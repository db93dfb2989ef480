package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
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
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Q4_K file served at its own bits: a random-weight model of the tiny-wide shape (rows of whole 256-element
 * super-blocks) written in Q4_K is packed, by default, into {@code Q4_K} tiles (its codes, 6-bit scales and minima as
 * they are; d and dmin in bfloat16, as the tile format keeps them) and generates what llama-server generates for the
 * same file, on the per-op forward with either kernels and on the fused one (which reads the tiles from their lanes
 * copy). The reference was made by:
 * <pre>
 * bench/random-model tiny-wide Q4_K q4_k.gguf 7
 * bench/llamacpp-reference.py q4_k.gguf "1,300,301,302,303;1" -n 16 > engine/src/test/resources/quant/q4_k.json
 * </pre>
 * llama.cpp itself multiplies Q4_K weights by activations rounded to 8 bits: the same file unpacked to F32 and computed
 * exactly by Laneway's Java kernels is 0.08 from its log-probabilities, and a random model's flat distributions put
 * near-ties in its top tokens (a third prompt, {@code 1,260,470,…}, parts from llama.cpp's first token at every
 * precision, the exact one included, and is left out). So the tiles are held to llama.cpp's tokens and to
 * log-probabilities within 0.15, and, more closely, to Laneway's own exact computation of the same weights.
 */
class KQuantLlamaCppTest {
    private static final double LLAMA_CPP_TOLERANCE = 0.15;
    /**
     * From the tiles' bfloat16 d and dmin (the Java kernels stay within 0.05) and, in the native kernels, the
     * activations' 8-bit rounding per 32 columns (0.06 at most here); a scale or a minimum misread moves a
     * log-probability by far more.
     */
    private static final double EXACT_TOLERANCE = 0.1;

    @TempDir
    static Path dir;
    private static Path tiles;
    private static Path exact;

    @BeforeAll
    static void pack() throws IOException {
        Path gguf = dir.resolve("q4_k.gguf");
        RandomModel.write(ModelShape.TINY_WIDE, DType.Q4_K, 7, gguf);
        tiles = dir.resolve("q4_k");
        new GgufPacker().pack(gguf, tiles, PackOptions.defaults(), PackProgress.NONE);
        exact = dir.resolve("f32");
        new GgufPacker().pack(gguf, exact, new PackOptions(Optional.of("f32"), false), PackProgress.NONE);
    }

    @Test
    void q4kMatricesArePackedAsQ4kTiles() throws IOException {
        Container c = Container.open(tiles);
        // 7 projections per layer and the head are tiles; the embedding and the norms are bfloat16
        assertEquals(Map.of("Q4_K", 15, "bf16", 6), c.weightFormats());
        assertEquals("q4_k", c.weights().metadata().get("quant"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void generatesWhatLlamaCppGenerates(String kernels) throws IOException {
        try (LanewayModel m = Packed.open(tiles, kernels, RouteOptions.defaults().withOpt("kv", "f32"))) {
            LlamaCppReference.assertGenerates(m, reference(), kernels, LLAMA_CPP_TOLERANCE);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void computesWhatTheExactWeightsCompute(String kernels) throws IOException {
        try (LanewayModel q = Packed.open(tiles, kernels, RouteOptions.defaults().withOpt("kv", "f32"));
             LanewayModel f = Packed.open(exact, "java", RouteOptions.defaults().withOpt("kv", "f32"))) {
            for (JsonNode r : reference().get("records")) {
                int[] prompt = LlamaCppReference.ints(r.get("prompt_ids"));
                List<GeneratedToken> want = LlamaCppReference.generate(f, prompt, 16);
                List<GeneratedToken> got = LlamaCppReference.generate(q, prompt, 16);
                assertArrayEquals(want.stream().mapToInt(GeneratedToken::id).toArray(),
                        got.stream().mapToInt(GeneratedToken::id).toArray(), kernels + " " + r.get("prompt_ids"));
                for (int p = 0; p < want.size(); p++) {
                    for (int k = 0; k < 5; k++) {
                        double diff = Math.abs(want.get(p).top().get(k).logprob() - got.get(p).top().get(k).logprob());
                        assertTrue(diff <= EXACT_TOLERANCE, kernels + " position " + p + " candidate " + k + ": "
                                + got.get(p).top().get(k) + ", exactly " + want.get(p).top().get(k));
                    }
                }
            }
        }
    }

    private static JsonNode reference() throws IOException {
        return LlamaCppReference.read("/quant/q4_k.json");
    }
}
