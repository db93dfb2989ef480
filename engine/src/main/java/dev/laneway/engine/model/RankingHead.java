package dev.laneway.engine.model;

import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.tokenizer.TextTokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A reranker's ranking head, run as llama.cpp runs a Qwen3 reranker's: the last prompt token's hidden state after the
 * final norm, times the head's rows ({@value StandardPlans#RANKING_HEAD}), softmaxed; the first output is the
 * relevance score. With it, the prompt a reranker reads: the model's rerank template with the query and the document
 * in place, or, without one, the query and the document each ended as the tokenizer ends a text (llama.cpp's
 * {@code format_prompt_rerank}).
 */
final class RankingHead {
    private final float[] rows;
    private final int labels;
    private final int hidden;
    private final TextTokenizer tokenizer;
    private final Optional<String> template;

    private RankingHead(float[] rows, int labels, int hidden, TextTokenizer tokenizer) {
        this.rows = rows;
        this.labels = labels;
        this.hidden = hidden;
        this.tokenizer = tokenizer;
        this.template = tokenizer.rankTemplate();
    }

    /** The head a container's weights hold, if any, for a model of {@code hidden} dimensions. */
    static Optional<RankingHead> of(Q4nxFile weights, int hidden, TextTokenizer tokenizer) {
        return weights.tensor(StandardPlans.RANKING_HEAD).map(t -> {
            if (t.rank() != 2 || t.shape()[1] != hidden) {
                throw new IllegalArgumentException(weights.path() + ": " + StandardPlans.RANKING_HEAD + " must be [labels, "
                        + hidden + "], has shape " + java.util.Arrays.toString(t.shape()));
            }
            return new RankingHead(Dequant.toFloat(t), (int) t.shape()[0], hidden, tokenizer);
        });
    }

    /** The head's softmaxed outputs for a pooled hidden state. */
    float[] scores(float[] state) {
        float[] out = new float[labels];
        float max = Float.NEGATIVE_INFINITY;
        for (int l = 0; l < labels; l++) {
            float sum = 0;
            for (int i = 0; i < hidden; i++) {
                sum += rows[l * hidden + i] * state[i];
            }
            out[l] = sum;
            max = Math.max(max, sum);
        }
        double total = 0;
        for (int l = 0; l < labels; l++) {
            out[l] = (float) Math.exp(out[l] - max);
            total += out[l];
        }
        for (int l = 0; l < labels; l++) {
            out[l] = (float) (out[l] / total);
        }
        return out;
    }

    /**
     * The tokens of a query and a document as the reranker reads them. The template's own text may spell special
     * tokens; the client's never does: where its query or document spells one, each piece is tokenized apart, the
     * client's as plain text.
     */
    int[] prompt(String query, String document) {
        if (template.isEmpty()) {
            return concat(List.of(tokenizer.encode(query, true, false), tokenizer.encode(document, false, false),
                    tokenizer.specialSuffix()));
        }
        List<String[]> pieces = pieces(template.get(), query, document);
        boolean spelled = false;
        StringBuilder whole = new StringBuilder();
        for (String[] p : pieces) {
            whole.append(p[0]);
            spelled |= p[1] != null && tokenizer.specialTexts().stream().anyMatch(p[0]::contains);
        }
        if (!spelled) {
            return tokenizer.encode(whole.toString(), false, true);
        }
        List<int[]> ids = new ArrayList<>();
        for (String[] p : pieces) {
            ids.add(tokenizer.encode(p[0], false, p[1] == null));
        }
        return concat(ids);
    }

    /** The template cut at its placeholders: each piece's text, and for the client's pieces a non-null mark. */
    private static List<String[]> pieces(String template, String query, String document) {
        List<String[]> pieces = new ArrayList<>();
        int at = 0;
        while (true) {
            int q = template.indexOf("{query}", at);
            int d = template.indexOf("{document}", at);
            int next = q < 0 ? d : d < 0 ? q : Math.min(q, d);
            if (next < 0) {
                pieces.add(new String[]{template.substring(at), null});
                return pieces;
            }
            pieces.add(new String[]{template.substring(at, next), null});
            boolean isQuery = next == q;
            pieces.add(new String[]{isQuery ? query : document, "client"});
            at = next + (isQuery ? "{query}" : "{document}").length();
        }
    }

    private static int[] concat(List<int[]> parts) {
        int[] out = new int[parts.stream().mapToInt(p -> p.length).sum()];
        int at = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
