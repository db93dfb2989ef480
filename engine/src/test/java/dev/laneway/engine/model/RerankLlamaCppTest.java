package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.TokenSink;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reranking as llama.cpp ranks: random-weight Qwen3 rerankers of the tiny shape, one with a rerank template and one
 * without, score a query against documents as llama-server {@code --reranking} scores them
 * ({@code rerank/qwen3-reranker.json}, with the commands that made it): the same prompts (their token counts add up to
 * llama-server's usage), the same relevance scores and so the same order, on the fused, native and Java forwards.
 */
class RerankLlamaCppTest {
    /**
     * Both sides keep the KV cache at half precision but round differently, which random weights turn into up to this
     * much of a score (with an F32 cache, Laneway's scores are within 1e-3 of llama-server's).
     */
    private static final double TOLERANCE = 3e-3;
    private static final TokenSink STAYING = token -> false;

    @TempDir
    static Path dir;
    private static JsonNode reference;

    @BeforeAll
    static void pack() throws IOException {
        reference = LlamaCppReference.read("/rerank/qwen3-reranker.json");
        RandomModel.writeReranker(ModelShape.TINY_QWEN3, DType.F32, 7, dir.resolve("plain.gguf"), null);
        RandomModel.writeReranker(ModelShape.TINY_QWEN3, DType.F32, 7, dir.resolve("templated.gguf"),
                reference.get("template").asText());
        for (String name : List.of("plain", "templated")) {
            new GgufPacker().pack(dir.resolve(name + ".gguf"), dir.resolve(name), new PackOptions(Optional.of("f32"),
                    false), PackProgress.NONE);
        }
    }

    @ParameterizedTest
    @CsvSource({"plain,fused", "plain,native", "plain,java", "templated,fused", "templated,native",
            "templated,java"})
    void scoresAreLlamaServers(String model, String kernels) throws Exception {
        JsonNode expected = reference.get(model);
        try (LanewayModel m = Packed.open(dir.resolve(model), kernels, RouteOptions.defaults().withStreams(2))) {
            assertEquals("rank", m.info().metadata().get("pooling"));
            List<int[]> prompts = new ArrayList<>();
            for (JsonNode document : reference.get("documents")) {
                prompts.add(m.rankPrompt(reference.get("query").asText(), document.asText()));
            }
            assertEquals(expected.get("prompt_tokens").asInt(), prompts.stream().mapToInt(p -> p.length).sum());
            List<float[]> scores = m.embed(prompts, Pooling.RANK, STAYING).get();
            for (int i = 0; i < prompts.size(); i++) {
                assertEquals(2, scores.get(i).length, "a score per label");
                assertEquals(1.0, scores.get(i)[0] + scores.get(i)[1], 1e-5, "softmaxed");
                assertEquals(expected.get("scores").get(i).asDouble(), scores.get(i)[0], TOLERANCE,
                        model + " " + kernels + " document " + i);
            }
            assertEquals(order(i -> expected.get("scores").get(i).asDouble(), prompts.size()),
                    order(i -> scores.get(i)[0], prompts.size()));
        }
    }

    /** The template's own text spells special tokens; a client's query or document that spells one is text. */
    @Test
    void aClientsTextNeverBecomesASpecialToken() throws Exception {
        try (LanewayModel m = Packed.open(dir.resolve("templated"), "java", RouteOptions.defaults())) {
            int eos = 2;
            int[] plain = m.rankPrompt("What is a panda?", "a bear");
            int[] spelled = m.rankPrompt("What is a panda?</s>", "a bear</s><s>");
            assertEquals(count(plain, eos), count(spelled, eos), Arrays.toString(spelled));
            assertEquals(count(plain, 1), count(spelled, 1), Arrays.toString(spelled));
            assertTrue(spelled.length > plain.length + 6, "the spelled tokens are text");
            // and the placeholders are filled once: a query that spells one stays text
            int[] braces = m.rankPrompt("{document}", "x");
            assertFalse(Arrays.equals(braces, m.rankPrompt("x", "x")));
        }
    }

    @Test
    void aModelWithoutRankingHeadRefusesToRank() throws Exception {
        try (LanewayModel m = Packed.open(Packed.stories260k("f32"), "java", RouteOptions.defaults())) {
            assertFalse("rank".equals(m.info().metadata().get("pooling")));
            assertThrows(UnsupportedOperationException.class, () -> m.rankPrompt("q", "d"));
            assertThrows(UnsupportedOperationException.class, () -> m.embed(List.of(new int[]{1, 2}), Pooling.RANK,
                    STAYING));
        }
    }

    @Test
    void theHeadStaysF32InAQuantizedContainer() throws Exception {
        Path q8 = dir.resolve("plain-q8");
        new GgufPacker().pack(dir.resolve("plain.gguf"), q8, new PackOptions(Optional.of("q8"), false),
                PackProgress.NONE);
        assertEquals(DType.F32, Container.open(q8).weights().tensor(StandardPlans.RANKING_HEAD).orElseThrow().dtype());
    }

    /** The documents' indices, best first. */
    private static List<Integer> order(java.util.function.IntToDoubleFunction score, int n) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        order.sort(java.util.Comparator.comparingDouble((Integer i) -> score.applyAsDouble(i)).reversed());
        return order;
    }

    private static long count(int[] ids, int id) {
        return Arrays.stream(ids).filter(t -> t == id).count();
    }
}
