package dev.laneway.engine.forward;

/**
 * Which experts a token goes to, and with what weights: the softmax of the router's scores over all experts (the sum
 * in double precision, as llama.cpp computes it), the {@code perToken} most probable kept, renormalised to sum to 1
 * when asked (the sum clamped below at 2^-14, as llama.cpp does).
 */
final class ExpertChoice {
    private ExpertChoice() {
    }

    /** Replaces the {@code experts} scores at {@code offset} by the chosen experts' weights, the others' by 0. */
    static void choose(float[] scores, int offset, int experts, int perToken, boolean normalize) {
        float max = Float.NEGATIVE_INFINITY;
        for (int e = 0; e < experts; e++) {
            max = Math.max(max, scores[offset + e]);
        }
        double sum = 0;
        for (int e = 0; e < experts; e++) {
            float v = (float) Math.exp(scores[offset + e] - max);
            scores[offset + e] = v;
            sum += v;
        }
        float inverse = (float) (1.0 / sum);
        for (int e = 0; e < experts; e++) {
            scores[offset + e] *= inverse;
        }
        // a chosen expert is marked by its probability's sign bit (probabilities are never negative): nothing is
        // allocated per token
        float kept = 0;
        for (int round = 0; round < perToken; round++) {
            int best = -1;
            for (int e = 0; e < experts; e++) {
                if (!chosen(scores[offset + e]) && (best < 0 || scores[offset + e] > scores[offset + best])) {
                    best = e;
                }
            }
            kept += scores[offset + best];
            scores[offset + best] = -scores[offset + best];
        }
        float divisor = normalize ? Math.max(kept, 6.103515625e-5f) : 1f;
        for (int e = 0; e < experts; e++) {
            float v = scores[offset + e];
            scores[offset + e] = chosen(v) ? -v / divisor : 0f;
        }
    }

    private static boolean chosen(float v) {
        return Float.floatToRawIntBits(v) < 0;
    }
}
