package dev.laneway.engine.laya;

import java.util.List;

/**
 * Turns scores over {@link RequestClass#CHOICES} into a classification: the probabilities are the softmax of the
 * scores, the class is the most likely choice, and the confidence is {@code 1 − H(p)/ln k}, the entropy of the
 * choices' distribution measured against its largest possible value (k equally likely choices).
 */
public final class Choices {
    /** Ties go to the first of these: prose is the catch-all class, code the most specific. */
    private static final List<RequestClass> TIE_ORDER = List.of(RequestClass.PROSE, RequestClass.SHORT,
            RequestClass.CODE);

    private Choices() {
    }

    /**
     * Classifies by scores that act as logits, one per {@link RequestClass#CHOICES} entry in its order.
     *
     * @throws IllegalArgumentException when there is not one finite score per choice
     */
    public static Classification fromScores(double[] scores) {
        return fromProbabilities(softmax(scores));
    }

    /** Classifies by probabilities, one per {@link RequestClass#CHOICES} entry, summing to 1. */
    public static Classification fromProbabilities(double[] p) {
        if (p.length != RequestClass.CHOICES.size()) {
            throw new IllegalArgumentException("expected " + RequestClass.CHOICES.size() + " probabilities, got "
                    + p.length);
        }
        RequestClass best = null;
        double bestP = -1;
        for (RequestClass c : TIE_ORDER) {
            double pc = p[RequestClass.CHOICES.indexOf(c)];
            if (pc > bestP) {
                best = c;
                bestP = pc;
            }
        }
        return new Classification(best, confidence(p));
    }

    /** {@code exp(s_i) / Σ exp(s_j)}, computed stably. */
    public static double[] softmax(double[] scores) {
        double max = Double.NEGATIVE_INFINITY;
        for (double s : scores) {
            if (!Double.isFinite(s)) {
                throw new IllegalArgumentException("scores must be finite, got " + s);
            }
            max = Math.max(max, s);
        }
        double[] p = new double[scores.length];
        double sum = 0;
        for (int i = 0; i < scores.length; i++) {
            p[i] = Math.exp(scores[i] - max);
            sum += p[i];
        }
        for (int i = 0; i < p.length; i++) {
            p[i] /= sum;
        }
        return p;
    }

    /** {@code 1 − H(p)/ln k} with {@code H(p) = −Σ p_i ln p_i} (a zero probability adds nothing), clamped to [0, 1]. */
    public static double confidence(double[] p) {
        double entropy = 0;
        for (double pi : p) {
            if (pi > 0) {
                entropy -= pi * Math.log(pi);
            }
        }
        double c = 1 - entropy / Math.log(p.length);
        return Math.min(1, Math.max(0, c));
    }
}
