package dev.laneway.engine.model;

import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The f32 containers generate exactly what llama.cpp (and an independent reference) generate: token ids, text and
 * the top-5 probabilities, on the reference kernels, on the native ones, and through the fused forward.
 */
class GoldenOutputTest {
    private static final double PROBABILITY_TOLERANCE = 1e-3;

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void stories260kMatchesLlamaCppOnEveryPublicPrompt(String kernels) {
        try (LanewayModel model = Packed.open(Packed.stories260k("f32"), kernels)) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = model.tokenize(r.prompt(), true, true);
                assertArrayEquals(r.promptIds(), prompt, r.prompt());
                List<GeneratedToken> tokens = new ArrayList<>();
                GenerationResult result = model.generate(new GenerationRequest(prompt, r.completionIds().length,
                        Sampling.GREEDY, 10, false), tokens::add);
                int[] ids = tokens.stream().mapToInt(GeneratedToken::id).toArray();
                assertArrayEquals(r.completionIds(), ids, r.prompt());
                assertEquals(FinishReason.LENGTH, result.finish());
                assertEquals(r.completionText(), model.detokenize(ids), r.prompt());
                for (int pos = 0; pos < r.top5().size(); pos++) {
                    Golden.Position expected = r.top5().get(pos);
                    // Near-ties may order differently; each of llama.cpp's top 5 must be among ours, as likely.
                    Map<Integer, Double> ours = new HashMap<>();
                    tokens.get(pos).top().forEach(t -> ours.put(t.id(), Math.exp(t.logprob())));
                    for (int i = 0; i < expected.ids().length; i++) {
                        Double p = ours.get(expected.ids()[i]);
                        assertTrue(p != null, r.prompt() + " position " + pos + ": token " + expected.ids()[i]
                                + " is not among our 10 most likely");
                        assertEquals(expected.probs()[i], p, PROBABILITY_TOLERANCE,
                                r.prompt() + " position " + pos + " candidate " + i);
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void stories260kFromBosMatchesTheReference(String kernels) {
        int[] expected = Golden.greedyFromBos("stories260K-greedy-from-bos.json");
        try (LanewayModel model = Packed.open(Packed.stories260k("f32"), kernels)) {
            assertArrayEquals(expected, fromBos(model, expected.length - 1, expected[0]));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void tinystoriesCheckpointFromBosMatchesTheReferenceUntilItsEndOfText(String kernels) {
        int[] expected = Golden.greedyFromBos("tinystories-656k-greedy-from-bos.json");
        try (LanewayModel model = Packed.open(Packed.tinystories("f32"), kernels)) {
            int[] got = fromBos(model, 400, expected[0]);
            assertTrue(got.length < 400, "generation ends at the end-of-text token");
            int eos = expected[expected.length - 1];
            int[] withEos = Arrays.copyOf(got, got.length + 1);
            withEos[got.length] = eos;
            assertArrayEquals(expected, withEos);
        }
    }

    /** BOS followed by the greedy continuation (without the end-of-text token). */
    static int[] fromBos(LanewayModel model, int maxTokens, int bos) {
        List<Integer> ids = new ArrayList<>(List.of(bos));
        model.generate(new GenerationRequest(new int[]{bos}, maxTokens, Sampling.GREEDY), t -> ids.add(t.id()));
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }
}
