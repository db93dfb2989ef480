package dev.laneway.engine.model;

import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.TokenSink;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every architecture, four sequences at a time in one engine loop, gives each the greedy tokens it gives alone: llama,
 * Gemma 2 and 3 (sliding windows, soft caps), Phi-3 (fused projections, partial RoPE), and the mixtures Qwen3-MoE and
 * Mixtral (rows grouped by expert across sequences), on random Q8 weights of the tiny shapes, with prompts of
 * different lengths that join the batch in different steps.
 */
class ArchitecturesBatchedTest {
    private static final Map<String, ModelShape> SHAPES = Map.of("llama", ModelShape.TINY,
            "gemma2", ModelShape.TINY_GEMMA2, "gemma3", ModelShape.TINY_GEMMA3, "phi3", ModelShape.TINY_PHI3,
            "qwen3moe", ModelShape.TINY_QWEN3MOE, "mixtral", ModelShape.TINY_MIXTRAL);

    @TempDir
    static Path dir;

    @ParameterizedTest
    @CsvSource({"llama,fused", "llama,native", "gemma2,native", "gemma3,native", "phi3,fused", "phi3,native",
            "qwen3moe,native", "mixtral,native"})
    void fourSequencesTogetherGiveWhatEachGivesAlone(String architecture, String kernels) throws Exception {
        Path gguf = dir.resolve(architecture + ".gguf");
        Path container = dir.resolve(architecture + "-" + kernels);
        RandomModel.write(SHAPES.get(architecture), DType.Q8_0, 5, gguf);
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("q8"), false), PackProgress.NONE);
        SplittableRandom random = new SplittableRandom(architecture.hashCode());
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            prompts.add(random.ints(3 + 7 * i, 3, 512).toArray());
        }
        List<List<Integer>> alone = new ArrayList<>();
        try (LanewayModel model = Packed.open(container, kernels)) {
            for (int i = 0; i < prompts.size(); i++) {
                alone.add(ids(LlamaCppReference.generate(model, prompts.get(i), 20 + 4 * i)));
            }
        }
        RouteOptions four = RouteOptions.defaults().withStreams(4).withOpt("batch", "8");
        try (LanewayModel model = Packed.open(container, kernels, four)) {
            // The first holds the loop at its first token until all are submitted: the others join it from there.
            CountDownLatch submitted = new CountDownLatch(1);
            List<List<GeneratedToken>> together = new ArrayList<>();
            List<CompletableFuture<List<GenerationResult>>> runs = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                List<GeneratedToken> tokens = new ArrayList<>();
                together.add(tokens);
                TokenSink sink = token -> {
                    try {
                        submitted.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return tokens.add(token);
                };
                runs.add(model.submit(List.of(new GenerationRequest(prompts.get(i), 20 + 4 * i, Sampling.GREEDY, 10,
                        true)), Optional.empty(), List.of(sink)));
            }
            submitted.countDown();
            for (int i = 0; i < prompts.size(); i++) {
                runs.get(i).get(60, TimeUnit.SECONDS);
                assertEquals(alone.get(i), ids(together.get(i)), architecture + " " + kernels + ": prompt " + i);
            }
            assertTrue(model.steps().sequences() > model.steps().steps(), "the sequences ran together: "
                    + model.steps());
        }
    }

    private static List<Integer> ids(List<GeneratedToken> tokens) {
        return tokens.stream().map(GeneratedToken::id).toList();
    }
}
