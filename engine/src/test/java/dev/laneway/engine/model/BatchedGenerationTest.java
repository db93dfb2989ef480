package dev.laneway.engine.model;

import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
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
