package dev.laneway.engine.sample;

import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Sampling;

import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Chooses the next token from logits, in llama.cpp's order: logit biases, repetition penalty over the recent window,
 * presence and frequency penalties over the output so far, top-k, top-p, min-p, then temperature and a seeded draw;
 * temperature 0 takes the most likely token. One sampler per generation: it owns its scratch arrays and its random
 * generator, so the same seed gives the same tokens.
 */
public final class Sampler {
    private final Sampling params;
    private final SplittableRandom random;
    private final RecentTokens recent;
    private final int[] candidates;
    private final float[] weights;
    private final int[] biasIds;
    private final float[] biases;
    /** How often each token is in the output, when presence or frequency penalties are on (else null). */
    private final int[] counts;
    /** The distinct tokens of the output, in order of their first appearance. */
    private int[] distinct = new int[0];
    private int distinctCount;

    /**
     * @throws InvalidRequestException when a logit bias names a token outside the vocabulary
     */
    public Sampler(Sampling params, int vocab) {
        this.params = params;
        this.random = new SplittableRandom(params.seed().orElseGet(() -> new SplittableRandom().nextLong()));
        this.recent = new RecentTokens(params.repeatWindow());
        this.candidates = new int[vocab];
        this.weights = new float[vocab];
        this.biasIds = new int[params.logitBias().size()];
        this.biases = new float[biasIds.length];
        int i = 0;
        for (Map.Entry<Integer, Float> bias : new TreeMap<>(params.logitBias()).entrySet()) {
            if (bias.getKey() >= vocab) {
                throw new InvalidRequestException("logit_bias", "logit_bias names token " + bias.getKey()
                        + ", outside the vocabulary of " + vocab + " tokens");
            }
            biasIds[i] = bias.getKey();
            biases[i++] = bias.getValue();
        }
        boolean penalised = params.presencePenalty() != 0 || params.frequencyPenalty() != 0;
        this.counts = penalised ? new int[vocab] : null;
    }

    /** Records a token of the prompt for the repetition penalty. */
    public void seen(int token) {
        recent.add(token);
    }

    /** Records a token of the output: for the repetition penalty, and the presence and frequency penalties. */
    public void accepted(int token) {
        recent.add(token);
        if (counts != null && counts[token]++ == 0) {
            if (distinctCount == distinct.length) {
                distinct = Arrays.copyOf(distinct, Math.max(16, 2 * distinctCount));
            }
            distinct[distinctCount++] = token;
        }
    }

    /** The next token. {@code logits} may be modified. */
    public int sample(float[] logits, int vocab) {
        return sample(logits, vocab, null);
    }

    /**
     * The next token among those {@code constraint} allows (any, when it is null), as if the others had a logit of
     * negative infinity. Greedy sampling tries the most likely token first and restricts the logits only when the
     * constraint refuses it: the result is the same, and the common case skips the mask.
     *
     * @return the token, or -1 when the constraint allows none
     */
    public int sample(float[] logits, int vocab, TokenConstraint constraint) {
        for (int i = 0; i < biasIds.length; i++) {
            logits[biasIds[i]] += biases[i];
        }
        if (params.repetitionPenalty() != 1.0) {
            recent.penalise(logits, (float) params.repetitionPenalty());
        }
        if (counts != null) {
            float presence = (float) params.presencePenalty();
            float frequency = (float) params.frequencyPenalty();
            for (int i = 0; i < distinctCount; i++) {
                int t = distinct[i];
                logits[t] -= counts[t] * frequency + presence;
            }
        }
        if (constraint != null) {
            if (params.greedy()) {
                int best = argmax(logits, vocab);
                if (constraint.allows(best)) {
                    return best;
                }
            }
            if (!constraint.restrict(logits, vocab)) {
                return -1;
            }
        }
        if (params.greedy()) {
            return argmax(logits, vocab);
        }
        int n = topK(logits, vocab, params.topK());
        // Probabilities of the candidates, most likely first, at temperature 1 for the filters.
        softmax(logits, n, 1f);
        n = topP(n, params.topP());
        n = minP(n, params.minP());
        softmax(logits, n, (float) params.temperature());
        return draw(n);
    }

    /** The index of the largest logit; the lowest index wins a tie. */
    public static int argmax(float[] logits, int vocab) {
        int best = 0;
        for (int i = 1; i < vocab; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Puts the k most likely tokens (all when k is 0) into {@code candidates}, sorted by logit, most likely first. */
    private int topK(float[] logits, int vocab, int k) {
        int n = k <= 0 || k > vocab ? vocab : k;
        for (int i = 0; i < vocab; i++) {
            candidates[i] = i;
        }
        TopSelection.selectTop(candidates, vocab, n, logits);
        return n;
    }

    /** Writes the softmax of the candidates' logits at temperature {@code t} into {@code weights}. */
    private void softmax(float[] logits, int n, float t) {
        float max = logits[candidates[0]];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float w = (float) Math.exp((logits[candidates[i]] - max) / t);
            weights[i] = w;
            sum += w;
        }
        for (int i = 0; i < n; i++) {
            weights[i] = (float) (weights[i] / sum);
        }
    }

    /** Keeps the smallest prefix whose probability reaches p. */
    private int topP(int n, double p) {
        if (p >= 1.0) {
            return n;
        }
        double cumulative = 0;
        for (int i = 0; i < n; i++) {
            cumulative += weights[i];
            if (cumulative >= p) {
                return i + 1;
            }
        }
        return n;
    }

    /** Drops candidates less likely than minP times the most likely one. */
    private int minP(int n, double minP) {
        if (minP <= 0) {
            return n;
        }
        float threshold = (float) (weights[0] * minP);
        int kept = 1;
        while (kept < n && weights[kept] >= threshold) {
            kept++;
        }
        return kept;
    }

    private int draw(int n) {
        double u = random.nextDouble();
        double cumulative = 0;
        int last = 0;
        for (int i = 0; i < n; i++) {
            cumulative += weights[i];
            if (u < cumulative) {
                return candidates[i];
            }
            if (weights[i] > 0) {
                last = i;
            }
        }
        // Rounding left u above the sum: the least likely candidate that has any weight at all.
        return candidates[last];
    }
}
