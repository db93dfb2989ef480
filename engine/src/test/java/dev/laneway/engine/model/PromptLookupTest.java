package dev.laneway.engine.model;

import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Stories260k;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prompt lookup ({@code --opt lookup=N}) on the shared stories260K model (q8), through the per-op and the fused forward: a
 * generation with drafts gives the tokens (and log-probabilities) it gives without, greedy and sampled with a seed,
 * alone and with several streams at once; on a copy-heavy prompt (a story, then its beginning again: the model retells
 * much of it) the drafts hold often enough that each forward step yields at least 1.5 tokens over 200.
 */
class PromptLookupTest {
    private static Path stories;
    /** A story the model tells itself, then its first twelve tokens again: the model goes on retelling it. */
    private static int[] retell;

    @BeforeAll
    static void prompts() {
        stories = Packed.stories260k("q8");
        List<GeneratedToken> told = new ArrayList<>();
        try (LanewayModel m = Packed.open(stories, "java")) {
            m.generate(new GenerationRequest(new int[]{Stories260k.BOS}, 90, Sampling.GREEDY), told::add);
        }
        int[] story = IntStream.concat(IntStream.of(Stories260k.BOS), told.stream().mapToInt(GeneratedToken::id))
                .toArray();
        retell = IntStream.concat(IntStream.of(story), IntStream.of(story).skip(1).limit(12)).toArray();
    }

    private static LanewayModel open(String forward, int streams, int lookup) {
        return Packed.open(stories, forward, RouteOptions.defaults().withStreams(streams)
                .withOpt("lookup", Integer.toString(lookup)));
    }

    private static final Sampling SEEDED = new Sampling(0.8, 40, 0.95, 0.05, 1.1, 64, OptionalLong.of(7));

    private record Run(GenerationResult result, List<GeneratedToken> tokens) {
        List<Integer> ids() {
            return tokens.stream().map(GeneratedToken::id).toList();
        }
    }

    private static GenerationRequest request(int[] prompt, int n, Sampling sampling) {
        return new GenerationRequest(prompt, n, sampling, 3, false);
    }

    private static Run run(LanewayModel m, GenerationRequest request) {
        List<GeneratedToken> tokens = new ArrayList<>();
        GenerationResult r = m.generate(request, tokens::add);
        return new Run(r, tokens);
    }

    /**
     * The same tokens and the same log-probabilities, bit for bit: the q8 products give a row the same bits however
     * many rows run with it (a drafted step's, or other streams').
     */
    private static void assertSame(Run expected, Run actual, String label) {
        assertEquals(expected.ids(), actual.ids(), label + ": tokens");
        for (int i = 0; i < expected.tokens().size(); i++) {
            assertEquals(expected.tokens().get(i).logprob(), actual.tokens().get(i).logprob(), 0,
                    label + ": log-probability of token " + i);
        }
        assertEquals(expected.result().finish(), actual.result().finish(), label + ": finish");
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void draftsChangeNothingButTheStepsGreedyAndSampled(String forward) {
        List<GenerationRequest> requests = List.of(request(retell, 60, Sampling.GREEDY), request(retell, 60, SEEDED),
                request(new int[]{Stories260k.BOS}, 60, Sampling.GREEDY));
        List<Run> plain = new ArrayList<>();
        try (LanewayModel m = open(forward, 1, 0)) {
            for (GenerationRequest r : requests) {
                plain.add(run(m, r));
            }
        }
        try (LanewayModel m = open(forward, 1, 4)) {
            for (int i = 0; i < requests.size(); i++) {
                Run drafted = run(m, requests.get(i));
                assertSame(plain.get(i), drafted, forward + " request " + i);
                assertTrue(drafted.result().draftedTokens() > 0, forward + " request " + i + " drafted");
                assertEquals(0, plain.get(i).result().draftedTokens());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java", "fused"})
    void aRetoldStoryTakesAtLeastOneAndAHalfTokensPerStep(String forward) {
        try (LanewayModel m = open(forward, 1, 8)) {
            GenerationResult r = run(m, request(retell, 300, Sampling.GREEDY)).result();
            int steps = r.generatedTokens() - r.acceptedDrafts();
            double perStep = (double) r.generatedTokens() / steps;
            assertTrue(perStep >= 1.5, forward + ": " + r.generatedTokens() + " tokens in " + steps + " steps ("
                    + r.acceptedDrafts() + " of " + r.draftedTokens() + " drafts taken)");
        }
    }

    @Test
    void severalStreamsAtOnceEachGetTheirTokensAlone() throws Exception {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] prompt = i % 3 == 2 ? new int[]{Stories260k.BOS, 300 + i} : IntStream.of(retell).limit(retell.length
                    - i).toArray();
            Sampling sampling = i % 2 == 0 ? Sampling.GREEDY
                    : new Sampling(0.9, 0, 1, 0, 1, 64, OptionalLong.of(100 + i));
            requests.add(request(prompt, 40 + 5 * i, sampling));
        }
        List<Run> alone = new ArrayList<>();
        try (LanewayModel m = open("fused", 1, 0)) {
            for (GenerationRequest r : requests) {
                alone.add(run(m, r));
            }
        }
        try (LanewayModel m = open("fused", 4, 6)) {
            List<List<GeneratedToken>> sinks = new ArrayList<>();
            List<CompletableFuture<List<GenerationResult>>> futures = new ArrayList<>();
            for (GenerationRequest r : requests) {
                List<GeneratedToken> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
                sinks.add(tokens);
                dev.laneway.spi.TokenSink sink = tokens::add;
                futures.add(m.submit(List.of(r), java.util.Optional.empty(), List.of(sink)));
            }
            int drafted = 0;
            for (int i = 0; i < requests.size(); i++) {
                GenerationResult r = futures.get(i).get(60, TimeUnit.SECONDS).get(0);
                assertSame(alone.get(i), new Run(r, sinks.get(i)), "stream " + i);
                drafted += r.draftedTokens();
            }
            assertTrue(drafted > 0, "the streams drafted");
        }
    }

    @Test
    void aLookupOutsideItsRangeIsRefusedByName() {
        for (String v : List.of("-1", "65", "many")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineOptions.of(
                    RouteOptions.defaults().withOpt("lookup", v)));
            assertTrue(e.getMessage().contains("--opt lookup=" + v), e.getMessage());
        }
    }
}
