package dev.laneway.engine.tokenizer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * BPE merges for a SentencePiece vocabulary, which has scores instead of merges. SentencePiece's BPE repeatedly joins
 * the adjacent pair whose concatenation is the best-scoring token; the same result comes from a merge list holding
 * every pair of tokens that concatenates to a token, ranked by that token's score (best first).
 */
final class SentencePieceMerges {
    private SentencePieceMerges() {
    }

    /** One merge: {@code left + right} makes the token {@code id}. */
    record Merge(String left, String right, float score, int id) {
    }

    /**
     * @param tokens the token texts, by id
     * @param scores the scores, by id
     * @param ids    the id of each token text (the one the tokenizer uses, where texts repeat)
     */
    static List<Merge> derive(String[] tokens, float[] scores, Map<String, Integer> ids) {
        List<Merge> merges = new ArrayList<>();
        for (int id = 0; id < tokens.length; id++) {
            String token = tokens[id];
            if (ids.get(token) != id) {
                continue;
            }
            // Split only between code points.
            for (int k = token.offsetByCodePoints(0, Math.min(1, token.length())); k < token.length();
                 k = token.offsetByCodePoints(k, 1)) {
                String left = token.substring(0, k);
                String right = token.substring(k);
                if (ids.containsKey(left) && ids.containsKey(right)) {
                    merges.add(new Merge(left, right, scores[id], id));
                }
            }
        }
        // Best score first; for equal scores the lower id, then the shorter left part, so the order is total.
        merges.sort(Comparator.comparingDouble((Merge m) -> -m.score)
                .thenComparingInt(Merge::id)
                .thenComparingInt(m -> m.left.length()));
        return merges;
    }
}
