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

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A prompt whose leading tokens a stream's KV cache already holds reuses them: the output is the same token for
 * token, and the log-probabilities agree within 1e-4, whether the prefix came from the cache or was computed, on every
 * forward and weight format. A greedy continuation of (prompt + its first k generated tokens) is the rest of the first
 * generation, so at f32 llama.cpp's outputs check the reused positions too.
 *
 * <p>One exception: the native product of plain float weights sums a block of four batch rows in another order than
 * a single row, so positions computed in a prompt batch and the same positions computed one token at a time differ in
 * their last bits (through the half-precision KV cache, up to a few thousandths in the log-probability of an unlikely
 * token); there probabilities are compared, within 1e-3, as against llama.cpp. The int8 products of q8 and q4_1 weights give every row the same bits at any batch size.
 */
class PrefixCacheTest {
    private static final double LOGPROB_TOLERANCE = 1e-4;
    /** A negative tolerance: probabilities within its magnitude, rather than log-probabilities. */
    private static final double PLAIN_FLOAT_NATIVE_TOLERANCE = -1e-3;
    /** Each run reports its 10 likeliest tokens; the first run's 5 likeliest must be among the other's 10. */
    private static final int TOP = 10;
    /** The stream's own cache only: another prompt then forgets what it held (PromptCacheTest has the other). */
    private static final RouteOptions ONE_CACHE = RouteOptions.defaults().withOpt("cache-ram", "0");

    @ParameterizedTest
    @CsvSource({"f32,java", "f32,native", "f32,fused", "q8,java", "q8,native", "q8,fused", "q4_1,java",
            "q4_1,native", "q4_1,fused"})
    void stories260kReusesPrefixesWithoutChangingAToken(String quant, String kernels) {
        try (LanewayModel model = Packed.open(Packed.stories260k(quant), kernels, ONE_CACHE)) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                checkReuse(model, r.promptIds(), quant.equals("f32") ? r.completionIds() : null,
                        r.completionIds().length, tolerance(quant, kernels));
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"f32,java", "f32,native", "f32,fused", "q8,native", "q4_1,fused"})
    void tinystoriesReusesPrefixesWithoutChangingAToken(String quant, String kernels) {
        int[] fromBos = Golden.greedyFromBos("tinystories-656k-greedy-from-bos.json");
        try (LanewayModel model = Packed.open(Packed.tinystories(quant), kernels, ONE_CACHE)) {
            for (int promptLength : new int[]{1, 9, 40}) {
                int[] prompt = Arrays.copyOf(fromBos, promptLength);
                int[] rest = Arrays.copyOfRange(fromBos, promptLength, Math.min(fromBos.length - 1, promptLength + 48));
                checkReuse(model, prompt, quant.equals("f32") ? rest : null, rest.length, tolerance(quant, kernels));
            }
        }
    }

    private static double tolerance(String quant, String kernels) {
        return quant.equals("f32") && !kernels.equals("java") ? PLAIN_FLOAT_NATIVE_TOLERANCE : LOGPROB_TOLERANCE;
    }

    /**
     * Runs {@code prompt} for {@code n} tokens with nothing reusable (checked against the reference's continuation
     * {@code expected} unless null), then again (all but the last prompt token cached), then continues from the first
     * k generated tokens with the cache holding the prompt and k − 1 of them, and once more with nothing cached.
     */
    private static void checkReuse(LanewayModel model, int[] prompt, int[] expected, int n, double tolerance) {
        clear(model);
        Run fresh = run(model, prompt, n);
        assertEquals(0, fresh.result.cachedTokens());
        if (expected != null) {
            assertArrayEquals(expected, fresh.ids(), "computed");
        }

        Run again = run(model, prompt, n);
        assertEquals(prompt.length - 1, again.result.cachedTokens());
        assertSame(fresh, again, 0, tolerance, "the same prompt again");

        int k = n / 2;
        int[] longer = concat(prompt, Arrays.copyOf(fresh.ids(), k));
        Run continued = run(model, longer, n - k);
        assertEquals(longer.length - 1, continued.result.cachedTokens(), "prompt and generated tokens reused");
        assertSame(fresh, continued, k, tolerance, "continued from the cache");
        clear(model);
        Run computed = run(model, longer, n - k);
        assertEquals(0, computed.result.cachedTokens());
        assertSame(continued, computed, 0, tolerance, "continued, computed");
    }

    /** Leaves the model's stream holding a prompt that shares at most its first token with any other. */
    private static void clear(LanewayModel model) {
        run(model, new int[]{3, 4, 5}, 1);
    }

    private record Run(List<GeneratedToken> tokens, GenerationResult result) {
        int[] ids() {
            return tokens.stream().mapToInt(GeneratedToken::id).toArray();
        }
    }

    private static Run run(LanewayModel model, int[] prompt, int n) {
        List<GeneratedToken> tokens = new ArrayList<>();
        GenerationResult result = model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY, TOP, true),
                tokens::add);
        return new Run(tokens, result);
    }

    /** {@code later}'s tokens are {@code first}'s from {@code skip} on, with the same log-probabilities. */
    private static void assertSame(Run first, Run later, int skip, double tolerance, String what) {
        assertArrayEquals(Arrays.copyOfRange(first.ids(), skip, skip + later.tokens.size()), later.ids(), what);
        for (int i = 0; i < later.tokens.size(); i++) {
            GeneratedToken a = first.tokens.get(skip + i);
            GeneratedToken b = later.tokens.get(i);
            assertClose(a.logprob(), b.logprob(), tolerance, what + " position " + i);
            Map<Integer, Float> top = new HashMap<>();
            b.top().forEach(t -> top.put(t.id(), t.logprob()));
            for (var t : a.top().subList(0, Math.min(5, a.top().size()))) {
                Float lp = top.get(t.id());
                assertNotNull(lp, what + " position " + i + ": token " + t.id() + " left the top " + TOP);
                assertClose(t.logprob(), lp, tolerance, what + " position " + i + " token " + t.id());
            }
        }
    }

    private static void assertClose(double logprob, double actual, double tolerance, String what) {
        if (tolerance < 0) {
            assertEquals(Math.exp(logprob), Math.exp(actual), -tolerance, what);
        } else {
            assertEquals(logprob, actual, tolerance, what);
        }
    }

    private static int[] concat(int[] a, int[] b) {
        int[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
