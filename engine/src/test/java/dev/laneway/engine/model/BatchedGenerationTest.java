package dev.laneway.engine.model;

import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.StepCounts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests that run at once share each step's forward and still generate what each generates alone: at 1, 2, 4 and 8
 * concurrent sequences, on every forward, with llama.cpp's tokens at f32 and the same tokens and log-probabilities as
 * alone at q8, where a batch gives every row the same bits. Some requests wait for a stream, join a running batch and
 * leave it before others (their lengths differ); with a small batch, prompts run in chunks beside the others' tokens.
 */
class BatchedGenerationTest {
    private static final int TOP = 5;

    @ParameterizedTest
    @CsvSource({"f32,java,4,128", "f32,native,2,128", "f32,fused,8,128", "q8,native,4,128", "q8,fused,4,128",
            "q4_1,fused,8,128", "q8,java,1,128", "f32,native,4,3", "q8,fused,8,2", "f32,java,1,3"})
    void concurrentRequestsGenerateWhatTheyGenerateAlone(String quant, String kernels, int streams, int batch)
            throws Exception {
        List<Golden.Record> golden = Golden.stories260kPublic();
        Path container = Packed.stories260k(quant);
        List<List<GeneratedToken>> alone = new ArrayList<>();
        try (LanewayModel model = open(container, kernels, 1, 128)) {
            for (int i = 0; i < golden.size(); i++) {
                alone.add(generate(model, golden.get(i).promptIds(), length(i)));
            }
        }
        try (LanewayModel model = open(container, kernels, streams, batch)) {
            ExecutorService clients = Executors.newFixedThreadPool(8);
            try {
                for (int round = 0; round < 2; round++) {
                    List<Future<List<GeneratedToken>>> runs = new ArrayList<>();
                    for (int c = 0; c < 8; c++) {
                        int i = c % golden.size();
                        runs.add(clients.submit(() -> generate(model, golden.get(i).promptIds(), length(i))));
                    }
                    for (int c = 0; c < runs.size(); c++) {
                        int i = c % golden.size();
                        List<GeneratedToken> got = runs.get(c).get();
                        String where = quant + " " + kernels + " streams " + streams + ": prompt " + i;
                        assertArrayEquals(ids(alone.get(i)), ids(got), where);
                        if (quant.equals("f32")) {
                            int[] expected = java.util.Arrays.copyOf(golden.get(i).completionIds(), length(i));
                            assertArrayEquals(expected, ids(got), where + " against llama.cpp");
                        } else {
                            for (int t = 0; t < got.size(); t++) {
                                assertEquals(alone.get(i).get(t).logprob(), got.get(t).logprob(), where + " " + t);
                            }
                        }
                    }
                }
            } finally {
                clients.shutdownNow();
            }
        }
    }

    /**
     * Prompts that begin with the same 60 tokens and arrive at once: one of them computes those tokens, every other
     * copies them from its slot (or waits for it to get there), and each generates what it generates alone.
     */
    @ParameterizedTest
    @CsvSource({"q8,fused,4,16", "f32,java,4,128", "q8,native,3,8"})
    void concurrentPromptsComputeTheirSharedPrefixOnce(String quant, String kernels, int streams, int batch)
            throws Exception {
        List<Golden.Record> golden = Golden.stories260kPublic();
        int[] shared = new int[60];
        for (int i = 0; i < shared.length; i++) {
            int[] source = golden.get(i % golden.size()).promptIds();
            shared[i] = source[i % source.length];
        }
        List<int[]> prompts = new ArrayList<>();
        for (int c = 0; c < streams; c++) {
            int[] tail = golden.get(c % golden.size()).promptIds();
            int[] prompt = java.util.Arrays.copyOf(shared, shared.length + tail.length - 1 + c);
            System.arraycopy(tail, 1, prompt, shared.length + c, tail.length - 1);
            prompts.add(prompt);
        }
        Path container = Packed.stories260k(quant);
        List<List<GeneratedToken>> alone = new ArrayList<>();
        try (LanewayModel model = open(container, kernels, 1, batch)) {
            for (int[] prompt : prompts) {
                alone.add(generate(model, prompt, 24));
            }
        }
        try (LanewayModel model = open(container, kernels, streams, batch)) {
            ExecutorService clients = Executors.newFixedThreadPool(streams);
            try {
                // every client waits at the latch until all are started: they arrive at once, however slowly the
                // pool's threads start, rather than one after another's whole generation
                java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(prompts.size());
                List<Future<Run>> runs = new ArrayList<>();
                for (int[] prompt : prompts) {
                    runs.add(clients.submit(() -> {
                        start.countDown();
                        start.await();
                        return run(model, prompt, 24);
                    }));
                }
                int computedShared = 0;
                for (int c = 0; c < runs.size(); c++) {
                    Run got = runs.get(c).get();
                    String where = quant + " " + kernels + ": prompt " + c;
                    assertArrayEquals(ids(alone.get(c)), ids(got.tokens()), where);
                    if (!quant.equals("f32")) {
                        for (int t = 0; t < got.tokens().size(); t++) {
                            assertEquals(alone.get(c).get(t).logprob(), got.tokens().get(t).logprob(), where + " " + t);
                        }
                    }
                    if (got.result().cachedTokens() < shared.length) {
                        computedShared++;
                    }
                }
                assertEquals(1, computedShared, "requests that computed the shared prefix themselves");
            } finally {
                clients.shutdownNow();
            }
        }
    }

    /**
     * Cache salts keep caches apart: the same prompt from four clients at once, two of them under one salt, one under
     * another and one under none. Only the two with the same salt may share the prompt; each generates what it
     * generates alone. Afterwards each salt finds its own prompt cached and a new salt finds nothing.
     */
    @Test
    void promptsUnderDifferentCacheSaltsShareNothing() throws Exception {
        int[] prompt = Golden.stories260kPublic().get(1).promptIds();
        String[] salts = {"alice", "bob", "alice", GenerationRequest.NO_SALT};
        Path container = Packed.stories260k("q8");
        List<GeneratedToken> alone;
        try (LanewayModel model = open(container, "fused", 1, 128)) {
            alone = generate(model, prompt, 16);
        }
        try (LanewayModel model = open(container, "fused", 4, 128)) {
            ExecutorService clients = Executors.newFixedThreadPool(salts.length);
            try {
                java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(salts.length);
                List<Future<Run>> runs = new ArrayList<>();
                for (String salt : salts) {
                    runs.add(clients.submit(() -> {
                        start.countDown();
                        start.await();
                        return run(model, prompt, 16, salt);
                    }));
                }
                int alice = 0;
                for (int c = 0; c < salts.length; c++) {
                    Run got = runs.get(c).get();
                    assertArrayEquals(ids(alone), ids(got.tokens()), "salt " + salts[c]);
                    if (salts[c].equals("alice")) {
                        alice += got.result().cachedTokens();
                    } else {
                        assertEquals(0, got.result().cachedTokens(), "salt '" + salts[c] + "' reused another's cache");
                    }
                }
                assertTrue(alice == 0 || alice == prompt.length - 1, "alice's two requests reused " + alice);
            } finally {
                clients.shutdownNow();
            }
            for (String salt : new String[]{"bob", GenerationRequest.NO_SALT, "alice"}) {
                assertEquals(prompt.length - 1, run(model, prompt, 4, salt).result().cachedTokens(), "salt " + salt);
            }
            assertEquals(0, run(model, prompt, 4, "carol").result().cachedTokens(), "a new salt");
        }
    }

    /**
     * The four choices of one request (sampled, each with its own seed): run together they draw what each draws
     * alone; the prompt is computed once and copied to the other three, and they decode in the same steps.
     */
    @ParameterizedTest
    @CsvSource({"q8,fused", "f32,java", "q4_1,native"})
    void theChoicesOfOneRequestShareTheirPromptAndDecodeTogether(String quant, String kernels) {
        int[] prompt = Golden.stories260kPublic().get(1).promptIds();
        List<GenerationRequest> requests = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            requests.add(new GenerationRequest(prompt, 24, new Sampling(1.0, 0, 1, 0, 1, 64,
                    java.util.OptionalLong.of(7 + j)), TOP, true));
        }
        Path container = Packed.stories260k(quant);
        List<List<GeneratedToken>> alone = choices(open(container, kernels, 1, 128), requests, null);
        List<GenerationResult> results = new ArrayList<>();
        LanewayModel model = open(container, kernels, 4, 128);
        List<List<GeneratedToken>> together = choices(model, requests, results);
        StepCounts steps = model.steps();
        for (int j = 0; j < 4; j++) {
            assertArrayEquals(ids(alone.get(j)), ids(together.get(j)), "choice " + j);
            for (int t = 0; t < 24; t++) {
                assertEquals(alone.get(j).get(t).logprob(), together.get(j).get(t).logprob(), "choice " + j + " " + t);
            }
        }
        assertEquals(3, results.stream().filter(r -> r.cachedTokens() == prompt.length - 1).count(),
                "choices that copied the prompt: " + results);
        assertTrue(steps.sequences() >= 3.5 * steps.steps(), "sequences per step: " + steps);
    }

    /** Runs the requests as the choices of one request; closes the model. */
    private static List<List<GeneratedToken>> choices(LanewayModel model, List<GenerationRequest> requests,
                                                      List<GenerationResult> results) {
        try (model) {
            List<List<GeneratedToken>> tokens = new ArrayList<>();
            List<dev.laneway.spi.TokenSink> sinks = new ArrayList<>();
            for (int j = 0; j < requests.size(); j++) {
                List<GeneratedToken> mine = new ArrayList<>();
                tokens.add(mine);
                sinks.add(mine::add);
            }
            List<GenerationResult> got = model.generateAll(requests, sinks);
            if (results != null) {
                results.addAll(got);
            }
            return tokens;
        }
    }

    private record Run(List<GeneratedToken> tokens, GenerationResult result) {
    }

    private static Run run(LanewayModel model, int[] prompt, int n) {
        return run(model, prompt, n, GenerationRequest.NO_SALT);
    }

    private static Run run(LanewayModel model, int[] prompt, int n, String salt) {
        List<GeneratedToken> tokens = new ArrayList<>();
        GenerationResult r = model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY, TOP, true,
                java.util.Optional.empty(), true, GenerationRequest.ANY_SLOT, false, salt), tokens::add);
        return new Run(tokens, r);
    }

    /** Lengths differ so that sequences leave the batch at different steps. */
    private static int length(int prompt) {
        return 20 + 9 * prompt;
    }

    /** {@code batch}: the prompt tokens per forward; below a prompt's length, prompts run in chunks. */
    private static LanewayModel open(Path container, String kernels, int streams, int batch) {
        return Packed.open(container, kernels,
                RouteOptions.defaults().withStreams(streams).withOpt("batch", Integer.toString(batch)));
    }

    private static List<GeneratedToken> generate(LanewayModel model, int[] prompt, int n) {
        List<GeneratedToken> tokens = new ArrayList<>();
        GenerationResult r = model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY, TOP, true), tokens::add);
        assertEquals(n, r.generatedTokens());
        return tokens;
    }

    private static int[] ids(List<GeneratedToken> tokens) {
        return tokens.stream().mapToInt(GeneratedToken::id).toArray();
    }
}
