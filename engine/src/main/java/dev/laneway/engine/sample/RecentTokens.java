package dev.laneway.engine.sample;

import java.util.Arrays;

/** The last {@code window} tokens, for the repetition penalty. */
final class RecentTokens {
    private final int[] ring;
    private int size;
    private int next;

    RecentTokens(int window) {
        this.ring = new int[window];
    }

    void add(int token) {
        if (ring.length == 0) {
            return;
        }
        ring[next] = token;
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
    }

    /**
     * Penalises each distinct recent token once: positive logits are divided by the penalty, negative ones
     * multiplied, so a penalty above 1 always makes the token less likely.
     */
    void penalise(float[] logits, float penalty) {
        int[] distinct = Arrays.copyOf(ring, size);
        Arrays.sort(distinct);
        for (int i = 0; i < distinct.length; i++) {
            if (i > 0 && distinct[i] == distinct[i - 1]) {
                continue;
            }
            int t = distinct[i];
            if (t >= 0 && t < logits.length) {
                logits[t] = logits[t] > 0 ? logits[t] / penalty : logits[t] * penalty;
            }
        }
    }
}
