package dev.laneway.engine.model;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nxWriter;
import dev.laneway.engine.quant.PlainConverter;
import dev.laneway.engine.quant.TileQuantizer;
import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.LogitComparison;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Containers in the layout earlier versions of {@code pack} wrote are read as before: a GGUF llama model's q/k rows in
 * llama.cpp's order with a plan.json that rotates interleaved pairs, F32 norms, a tied embedding in tiles and no
 * {@code lm_head.weight}. Rebuilt here from today's packs: stories260K at f32 gives llama.cpp's tokens, tinystories at
 * q8 the logits of today's q8 pack within what q8 changes.
 */
class EarlierContainerTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"java", "fused"})
    void anF32ContainerWithInterleavedRowsAndItsPlanGivesLlamaCppsTokens(String kernels) throws IOException {
        Path earlier = earlierLayout(Packed.stories260k("f32"), dir.resolve("earlier-f32"), null);
        try (LanewayModel model = Packed.open(earlier, kernels)) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = model.tokenize(r.prompt(), true, true);
                assertArrayEquals(r.completionIds(), greedy(model, prompt, r.completionIds().length), r.prompt());
            }
        }
    }

    /** Fed the same tokens, its logits stay as close to today's q8 pack's as q8 stays to f32. */
    @Test
    void aQ8ContainerWithATiledTiedEmbeddingIsServed() throws IOException {
        Path earlier = earlierLayout(Packed.tinystories("f32"), dir.resolve("earlier-q8"), Matrix.Layout.TILES_Q8);
        double worst = LogitComparison.maxDifference(Container.open(earlier),
                Container.open(Packed.tinystories("q8")));
        assertTrue(worst < 0.35, "max logit difference " + worst);
    }

    /**
     * A container as earlier versions wrote it from the container {@code source} (f32, Hugging Face q/k order):
     * every matrix plain F32 ({@code tiles} null) or in tiles, the q/k rows of a GGUF source in llama.cpp's order
     * with an interleaved plan.json, and when tiled the embedding tied to the head.
     */
    private static Path earlierLayout(Path source, Path target, Matrix.Layout tiles) throws IOException {
        Container c = Container.open(source);
        Files.createDirectories(target);
        for (String file : List.of(Container.CONFIG, Container.TOKENIZER, Container.TOKENIZER_CONFIG)) {
            Files.copy(source.resolve(file), target.resolve(file));
        }
        boolean interleaved = c.weights().metadata().get("source").endsWith(".gguf");
        int headDim = c.config().headDim();
        int half = headDim / 2;
        // llama.cpp's row 2i + k of a head is Hugging Face's row k * half + i
        IntUnaryOperator toInterleaved = row -> {
            int head = row / headDim;
            int j = row % headDim;
            return head * headDim + (j % 2) * half + j / 2;
        };
        boolean tied = tiles != null;
        List<Q4nxWriter.Entry> entries = new ArrayList<>();
        List<Object> converters = new ArrayList<>();
        for (Tensor t : c.weights().tensors()) {
            if (tied && t.name().equals(StandardPlans.HEAD)) {
                continue;
            }
            boolean qk = interleaved && (t.name().endsWith("q_proj.weight") || t.name().endsWith("k_proj.weight"));
            IntUnaryOperator order = qk ? toInterleaved : IntUnaryOperator.identity();
            if (tiles != null && t.rank() == 2) {
                TileQuantizer q = TileQuantizer.of(t, tiles, order);
                entries.add(Q4nxWriter.Entry.tiles(t.name(), tiles, q.rows(), q.cols()));
                converters.add(q);
            } else {
                PlainConverter p = PlainConverter.of(t, DType.F32, qk ? order : null);
                entries.add(Q4nxWriter.Entry.plain(t.name(), DType.F32, p.shape()));
                converters.add(p);
            }
        }
        try (Q4nxWriter w = Q4nxWriter.create(target, Map.of("source", "stories260K.gguf"), entries)) {
            for (int i = 0; i < entries.size(); i++) {
                String name = entries.get(i).name();
                if (converters.get(i) instanceof TileQuantizer q) {
                    q.forEachBand(b -> w.write(name, b));
                } else {
                    ((PlainConverter) converters.get(i)).forEachChunk(b -> w.write(name, b));
                }
            }
            w.finish();
        }
        var variant = StandardPlans.variant("llama", interleaved ? Rope.Style.INTERLEAVED : Rope.Style.HALVES,
                tied || c.weights().tensor(StandardPlans.HEAD).isEmpty());
        PlanJson.write(StandardPlans.plan(variant), target.resolve(Container.PLAN));
        return target;
    }

    private static int[] greedy(LanewayModel model, int[] prompt, int n) {
        List<GeneratedToken> tokens = new ArrayList<>();
        model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY), tokens::add);
        return tokens.stream().mapToInt(GeneratedToken::id).toArray();
    }
}
