package dev.laneway.engine.sample;

import dev.laneway.spi.GeneratedToken;

import java.util.ArrayList;
import java.util.List;

/** Log-probabilities under the full softmax of the raw logits, as llama-server reports them. */
public final class Logprobs {
    private final int[] ids;

    public Logprobs(int vocab) {
        this.ids = new int[vocab];
    }

    /** log Σ exp(logits), computed stably. */
    public static double logSumExp(float[] logits, int vocab) {
        float max = logits[Sampler.argmax(logits, vocab)];
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(logits[i] - max);
        }
        return max + Math.log(sum);
    }

    /** The {@code k} most likely tokens with their log-probabilities, most likely first. */
    public List<GeneratedToken.TokenLogprob> top(float[] logits, int vocab, int k, double logSumExp) {
        for (int i = 0; i < vocab; i++) {
            ids[i] = i;
        }
        int n = Math.min(k, vocab);
        TopSelection.selectTop(ids, vocab, n, logits);
        List<GeneratedToken.TokenLogprob> top = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            top.add(new GeneratedToken.TokenLogprob(ids[i], (float) (logits[ids[i]] - logSumExp)));
        }
        return top;
    }
}
