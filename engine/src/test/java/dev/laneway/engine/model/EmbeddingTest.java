package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.TokenSink;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Embeddings are llama.cpp's: stories260K's hidden states after the final norm, pooled by mean, first or last token
 * and normalised, equal llama-server's {@code --embeddings} answers for the same inputs
 * ({@code llama-server-embeddings-stories260K.json}, with the command that made them) on the fused, native and Java
 * forwards, within the half-precision KV cache's rounding. In small chunks, beside a generation in another stream,
 * they are the same vectors, and the generation the same tokens.
 */
class EmbeddingTest {
    private static final double TOLERANCE = 2e-3;
    private static final TokenSink STAYING = token -> false;

    @ParameterizedTest
    @CsvSource({"fused,128", "native,128", "java,128", "fused,3"})
    void pooledHiddenStatesAreLlamaCppsEmbeddings(String kernels, int batch) throws Exception {
        JsonNode reference;
        try (InputStream in = EmbeddingTest.class.getResourceAsStream("/llama-server-embeddings-stories260K.json")) {
            reference = new ObjectMapper().readTree(in);
        }
        RouteOptions options = RouteOptions.defaults().withStreams(2).withOpt("batch", Integer.toString(batch));
        try (LanewayModel model = Packed.open(Packed.stories260k("f32"), kernels, options)) {
            List<int[]> prompts = new ArrayList<>();
            reference.get("inputs").forEach(text -> prompts.add(model.tokenize(text.asText(), true, true)));
            assertEquals(reference.get("usage_prompt_tokens").asInt(), prompts.stream().mapToInt(p -> p.length).sum());
            int[] story = model.tokenize("Once upon a time", true, true);
            List<dev.laneway.spi.GeneratedToken> alone = new ArrayList<>();
            model.generate(new GenerationRequest(story, 24, Sampling.GREEDY), alone::add);
            for (Pooling pooling : List.of(Pooling.MEAN, Pooling.CLS, Pooling.LAST)) {
                // A generation runs in the other stream meanwhile, and gets what it gets alone.
                List<dev.laneway.spi.GeneratedToken> beside = new ArrayList<>();
                CompletableFuture<?> generation = CompletableFuture.runAsync(() -> model.generate(
                        new GenerationRequest(story, 24, Sampling.GREEDY), beside::add));
                List<float[]> vectors = model.embed(prompts, pooling, STAYING).get();
                generation.get();
                assertArrayEquals(alone.stream().mapToInt(t -> t.id()).toArray(),
                        beside.stream().mapToInt(t -> t.id()).toArray());
                JsonNode expected = reference.get(pooling.name().toLowerCase());
                for (int i = 0; i < prompts.size(); i++) {
                    float[] v = unit(vectors.get(i));
                    assertEquals(expected.get(i).size(), v.length);
                    double worst = 0;
                    for (int d = 0; d < v.length; d++) {
                        worst = Math.max(worst, Math.abs(v[d] - expected.get(i).get(d).asDouble()));
                    }
                    assertTrue(worst < TOLERANCE, kernels + " " + pooling + " input " + i + ": off by " + worst);
                }
            }
        }
    }

    private static float[] unit(float[] v) {
        double sum = 0;
        for (float x : v) {
            sum += (double) x * x;
        }
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] / Math.sqrt(sum));
        }
        return out;
    }
}
