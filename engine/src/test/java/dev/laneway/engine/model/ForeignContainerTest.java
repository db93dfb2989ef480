package dev.laneway.engine.model;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q8CodeOrder;
import dev.laneway.engine.testing.ForeignContainers;
import dev.laneway.engine.testing.ForeignContainers.Options;
import dev.laneway.engine.testing.ForeignContainers.Style;
import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.LogitComparison;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Containers laid out as the 1bit engine's and FastFlowLM's converters write them (no plan.json, no recorded tile
 * shapes, with or without {@code __metadata__}, both tile shapes) are served, on the per-op forward and the fused one
 * dx uses, with the greedy output of Laneway's own pack of the same weights; where the file cannot say how to read
 * its numbers, they are refused by name.
 */
class ForeignContainerTest {
    private static final int TOKENS = 32;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1} {2} {3}")
    @CsvSource({
            "stories260k, q8, ENGINE, java", "stories260k, q4_1, ENGINE, fused", "stories260k, q4_1, FLM, java",
            "stories260k, q8, FLM_GRID, fused", "tinystories, q8, ENGINE, fused", "tinystories, q4_1, FLM_GRID, java",
            "tinystories, q4_1, FLM, fused", "tinystories, q8, FLM, java"})
    void servesWhatLanewaysOwnPackOfTheSameWeightsServes(String model, String quant, Style style, String kernels)
            throws IOException {
        Path foreign = foreign(model, quant, style, saysItsOrder(quant, style));
        Container c = Container.open(foreign);
        assertTrue(c.derivations().stream().anyMatch(d -> d.startsWith("the plan from config.json's model_type")),
                c.derivations().toString());
        assertTrue(c.describe().contains("derived: "), c.describe());
        assertEquals(greedy(own(model, quant), kernels), greedy(foreign, kernels), model + " " + quant + " " + style);
    }

    /**
     * The embedding then holds the head's Q8 values rather than BF16 ones: fed the same tokens, the logits stay as
     * close to those of a pack with its own embedding as q8 stays to f32.
     */
    @Test
    void aContainerWithOnlyTheHeadReadsTheEmbeddingFromItsTiles() throws IOException {
        Path foreign = foreign("tinystories", "q8", Style.FLM, saysItsOrder("q8", Style.FLM).withHeadOnly());
        Container c = Container.open(foreign);
        assertTrue(c.derivations().stream().anyMatch(d -> d.contains("from lm_head.weight")), c.derivations()
                .toString());
        var weights = c.weightSource();
        assertSame(weights.matrix(StandardPlans.HEAD).orElseThrow(),
                weights.matrix(StandardPlans.EMBEDDING).orElseThrow());
        double worst = LogitComparison.maxDifference(c, Container.open(own("tinystories", "q8")));
        assertTrue(worst < 0.35, "max logit difference " + worst);
    }

    /** A container's own word for its Q8 code order: the order its style writes. */
    private static Options saysItsOrder(String quant, Style style) {
        if (!quant.equals("q8")) {
            return Options.NONE;
        }
        return Options.NONE.withMetadata(Q8CodeOrder.KEY, style == Style.ENGINE ? Q8CodeOrder.COLUMN_MAJOR.value()
                : Q8CodeOrder.ROW_HALVES.value());
    }

    @Test
    void aVocabularyPaddedToWholeTilesIsTheEmbeddingsRowsAndPaddingIsNeverSampled() throws IOException {
        Path foreign = foreign("stories260k", "q8", Style.ENGINE, saysItsOrder("q8", Style.ENGINE)
                .withPaddedVocab(32));
        Container c = Container.open(foreign);
        assertEquals(512, c.config().vocabSize());
        assertTrue(c.derivations().stream().anyMatch(d -> d.contains("vocabulary of 512 tokens")), c.derivations()
                .toString());
        assertEquals(greedy(own("stories260k", "q8"), "java"), greedy(foreign, "java"));
    }

    /**
     * A file that does not say its Q8 code order is read in the order its codes show (every absmax group holds its
     * ±127 in the true order): both engines' files then generate what Laneway's own pack does.
     */
    @Test
    void q8TilesOfAFileThatDoesNotSayTheirOrderAreReadInTheOrderTheirCodesShow() throws IOException {
        var own = greedy(own("stories260k", "q8"), "java");
        for (Style style : new Style[]{Style.FLM, Style.ENGINE}) {
            assertEquals(own, greedy(foreign("stories260k", "q8", style, Options.NONE), "java"), style.toString());
        }
    }

    @Test
    void anOrderNamedWronglyIsNotReadSilently() throws IOException {
        // FastFlowLM's row-halves codes declared column-major read as other numbers: the output changes
        Path wrong = foreign("stories260k", "q8", Style.FLM,
                Options.NONE.withMetadata(Q8CodeOrder.KEY, Q8CodeOrder.COLUMN_MAJOR.value()));
        assertTrue(!greedy(own("stories260k", "q8"), "java").equals(greedy(wrong, "java")));
        Path unknown = foreign("stories260k", "q8", Style.FLM, Options.NONE.withMetadata(Q8CodeOrder.KEY, "diagonal"));
        FormatException e = assertThrows(FormatException.class, () -> Container.open(unknown));
        assertTrue(e.getMessage().contains("q8_order is \"diagonal\""), e.getMessage());
    }

    @Test
    void q4TilesWithoutZeroPointsAreRefusedRatherThanReadAsUnsignedCodes() {
        Path foreign = foreign("tinystories", "q4_1", Style.FLM, Options.NONE.withSignedQ4());
        RuntimeException e = assertThrows(RuntimeException.class, () -> Packed.open(foreign, "java").close());
        assertTrue(String.valueOf(e.getMessage()).contains("q4_1 tiles whose zero points are all 0"), e.getMessage());
    }

    @Test
    void aTensorTheDerivedPlanDoesNotReadIsRefusedByName() {
        Path foreign = foreign("tinystories", "q4_1", Style.ENGINE,
                Options.NONE.withExtraTensor("model.layers.0.self_attn.sinks"));
        FormatException e = assertThrows(FormatException.class, () -> Container.open(foreign));
        assertTrue(e.getMessage().contains("tensor model.layers.0.self_attn.sinks is not one the llama plan reads"),
                e.getMessage());
    }

    private Path foreign(String model, String quant, Style style, Options options) {
        Path f32 = model.equals("stories260k") ? Packed.stories260k("f32") : Packed.tinystories("f32");
        Matrix.Layout layout = quant.equals("q8") ? Matrix.Layout.TILES_Q8 : Matrix.Layout.TILES_Q4_1;
        String name = model + "-" + quant + "-" + style + "-" + options.hashCode();
        return ForeignContainers.write(f32, dir.resolve(name), style, layout, options);
    }

    private static Path own(String model, String quant) {
        return model.equals("stories260k") ? Packed.stories260k(quant) : Packed.tinystories(quant);
    }

    /** The greedy continuation of each golden prompt. */
    private static List<List<Integer>> greedy(Path container, String kernels) {
        List<List<Integer>> all = new ArrayList<>();
        try (LanewayModel model = Packed.open(container, kernels)) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                List<Integer> ids = new ArrayList<>();
                int[] prompt = model.tokenize(r.prompt(), true, true);
                model.generate(new GenerationRequest(prompt, TOKENS, Sampling.GREEDY), t -> ids.add(t.id()));
                all.add(ids);
            }
        } catch (UncheckedIOException e) {
            throw e;
        }
        return all;
    }
}
