package dev.laneway.route.dx;

import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.testing.ForeignContainers;
import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.Claim;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acceptance check: dx generates exactly what the model-generic route generates, greedily, on every golden prompt
 * of the shared models, at f32, q8 and q4_1; and at f32 both match llama.cpp's own continuations.
 */
class DxMatchesGenericTest {
    private static final RouteContext CONTEXT = new RouteContext(Path.of(System.getProperty("java.io.tmpdir")));

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"stories260k, f32", "stories260k, q8", "stories260k, q4_1",
            "tinystories, f32", "tinystories, q8", "tinystories, q4_1"})
    void greedyOutputIsTheGenericRoutesOnEveryGoldenPrompt(String model, String quant) throws Exception {
        Path container = model.equals("stories260k") ? Packed.stories260k(quant) : Packed.tinystories(quant);
        try (LanewayModel dx = (LanewayModel) new DxRoute().open(container, RouteOptions.defaults(), CONTEXT);
             LanewayModel generic = ModelAssembly.perOp(container, RouteOptions.defaults(), "generic", CONTEXT)) {
            assertEquals("dx", dx.info().route());
            assertEquals("fused", dx.info().metadata().get("forward"));
            assertEquals("per-op", generic.info().metadata().get("forward"));
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = dx.tokenize(r.prompt(), true, true);
                int[] expected = greedy(generic, prompt, r.completionIds().length);
                assertArrayEquals(expected, greedy(dx, prompt, r.completionIds().length), model + " " + quant + ": "
                        + r.prompt());
                if (model.equals("stories260k") && quant.equals("f32")) {
                    assertArrayEquals(r.completionIds(), expected, "llama.cpp's continuation of " + r.prompt());
                }
            }
            int bos = model.equals("stories260k") ? 1 : Golden.greedyFromBos("tinystories-656k-greedy-from-bos.json")[0];
            assertArrayEquals(greedy(generic, new int[] {bos}, 200), greedy(dx, new int[] {bos}, 200), "from BOS");
        }
    }

    /** Containers laid out as the 1bit engine and FastFlowLM write them: dx claims and serves them as generic does. */
    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({"stories260k, q4_1, ENGINE", "tinystories, q8, FLM_GRID", "tinystories, q4_1, FLM"})
    void containersOfTheOtherEnginesAreServedAlike(String model, String quant, ForeignContainers.Style style,
                                                   @TempDir Path tmp) throws Exception {
        Path f32 = model.equals("stories260k") ? Packed.stories260k("f32") : Packed.tinystories("f32");
        var options = quant.equals("q8") ? ForeignContainers.Options.NONE.withMetadata("q8_order", "row-halves")
                : ForeignContainers.Options.NONE;
        Path container = ForeignContainers.write(f32, tmp.resolve("foreign"), style,
                quant.equals("q8") ? Matrix.Layout.TILES_Q8 : Matrix.Layout.TILES_Q4_1, options);
        Claim.Mine claim = assertInstanceOf(Claim.Mine.class, new DxRoute().claim(container,
                RouteOptions.defaults()));
        assertTrue(claim.shape().contains("derived: the plan from config.json's model_type"), claim.shape());
        try (LanewayModel dx = (LanewayModel) new DxRoute().open(container, RouteOptions.defaults(), CONTEXT);
             LanewayModel generic = ModelAssembly.perOp(container, RouteOptions.defaults(), "generic", CONTEXT)) {
            assertEquals("fused", dx.info().metadata().get("forward"));
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = dx.tokenize(r.prompt(), true, true);
                assertArrayEquals(greedy(generic, prompt, 32), greedy(dx, prompt, 32), r.prompt());
            }
        }
    }

    private static int[] greedy(LanewayModel model, int[] prompt, int n) {
        List<GeneratedToken> tokens = new ArrayList<>();
        model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY), tokens::add);
        return tokens.stream().mapToInt(GeneratedToken::id).toArray();
    }
}
