package dev.laneway.engine.sample;

import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Sampling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Chooses the next token from logits, in llama.cpp's order: logit biases, repetition penalty over the recent window,
 * presence and frequency penalties over the output so far, top-k, top-p, min-p, then temperature and a seeded draw;
 * temperature 0 takes the most likely token. The filters and the draw do llama.cpp's arithmetic (single precision
 * where it uses it, its Mersenne Twister), so that a seed draws the tokens llama-server draws from the same logits.
 * One sampler per generation: it owns its scratch arrays and its random generator.
 */
public final class Sampler {
    private final Sampling params;
    private final MersenneTwister random;
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
    /** Whether {@code candidates} is sorted by logit, most likely first (top-k and top-p sort it). */
    private boolean sorted;
    /** The candidates the last token was drawn from ({@code weights} their unnormalised probabilities); 0: greedy. */
    private int drawn;
    private double drawnTotal;

    /**
     * @throws InvalidRequestException when a logit bias names a token outside the vocabulary
     */
    public Sampler(Sampling params, int vocab) {
        this.params = params;
        this.random = new MersenneTwister(params.seed().orElseGet(() -> new SplittableRandom().nextLong()));
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
        drawn = 0;
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
        n = topP(logits, n, (float) params.topP());
        n = minP(logits, n, (float) params.minP());
        return draw(logits, n, (float) params.temperature());
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

    /**
     * Puts the k most likely tokens into {@code candidates}, sorted by logit, most likely first; with k 0, every token
     * in the order of its id, unsorted, as llama.cpp leaves them.
     */
    private int topK(float[] logits, int vocab, int k) {
        for (int i = 0; i < vocab; i++) {
            candidates[i] = i;
        }
        if (k <= 0) {
            sorted = false;
            return vocab;
        }
        int n = Math.min(k, vocab);
        TopSelection.selectTop(candidates, vocab, n, logits);
        sorted = true;
        return n;
    }

    /**
     * Keeps the smallest prefix of the candidates whose probability at temperature 1 reaches p: the probabilities and
     * their running sum in single precision, as llama.cpp sums them.
     */
    private int topP(float[] logits, int n, float p) {
        if (p >= 1f) {
            return n;
        }
        if (!sorted) {
            TopSelection.selectTop(candidates, n, n, logits);
            sorted = true;
        }
        float max = logits[candidates[0]];
        float sum = 0;
        for (int i = 0; i < n; i++) {
            weights[i] = (float) Math.exp(logits[candidates[i]] - max);
            sum += weights[i];
        }
        float cumulative = 0;
        for (int i = 0; i < n; i++) {
            cumulative += weights[i] / sum;
            if (cumulative >= p) {
                return i + 1;
            }
        }
        return n;
    }

    /** Drops candidates less likely than minP times the most likely one, compared as logits. */
    private int minP(float[] logits, int n, float minP) {
        if (minP <= 0) {
            return n;
        }
        if (!sorted) {
            float threshold = max(logits, n) + (float) Math.log(minP);
            int kept = 0;
            for (int i = 0; i < n; i++) {
                if (logits[candidates[i]] >= threshold) {
                    candidates[kept++] = candidates[i];
                }
            }
            return kept;
        }
        float threshold = logits[candidates[0]] + (float) Math.log(minP);
        int kept = 1;
        while (kept < n && logits[candidates[kept]] >= threshold) {
            kept++;
        }
        return kept;
    }

    /**
     * Draws one candidate from the softmax of its logits divided by the temperature: one uniform double, and the
     * first candidate at which the running sum reaches that share of the total.
     */
    private int draw(float[] logits, int n, float temperature) {
        float max = (sorted ? logits[candidates[0]] : max(logits, n)) / temperature;
        double total = 0;
        for (int i = 0; i < n; i++) {
            weights[i] = (float) Math.exp(logits[candidates[i]] / temperature - max);
            total += weights[i];
        }
        drawn = n;
        drawnTotal = total;
        double target = total * random.nextDouble();
        double running = 0;
        for (int i = 0; i < n; i++) {
            running += weights[i];
            if (running >= target && weights[i] > 0) {
                return candidates[i];
            }
        }
        return candidates[n - 1];
    }

    /**
     * The log-probability of the token just chosen in the distribution it was drawn from (after the filters and the
     * temperature); a greedy choice had probability 1.
     */
    public float drawnLogprob(int chosen) {
        if (drawn == 0) {
            return 0f;
        }
        for (int i = 0; i < drawn; i++) {
            if (candidates[i] == chosen) {
                return (float) Math.log(weights[i] / drawnTotal);
            }
        }
        return Float.NEGATIVE_INFINITY;
    }

    /** The {@code k} most likely tokens of that distribution with their log-probabilities, those above zero only. */
    public List<GeneratedToken.TokenLogprob> drawnTop(int k, int chosen) {
        if (drawn == 0) {
            return k > 0 ? List.of(new GeneratedToken.TokenLogprob(chosen, 0f)) : List.of();
        }
        Integer[] order = new Integer[drawn];
        for (int i = 0; i < drawn; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Float.compare(weights[b], weights[a]));
        List<GeneratedToken.TokenLogprob> top = new ArrayList<>();
        for (int i = 0; i < drawn && top.size() < k; i++) {
            if (weights[order[i]] > 0) {
                top.add(new GeneratedToken.TokenLogprob(candidates[order[i]],
                        (float) Math.log(weights[order[i]] / drawnTotal)));
            }
        }
        return top;
    }

    private float max(float[] logits, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, logits[candidates[i]]);
        }
        return max;
    }
}
