package dev.laneway.spi;

import java.util.Objects;

/**
 * How a generation went.
 *
 * @param finish           why it ended
 * @param promptTokens     the prompt's tokens, those served from the KV cache included
 * @param generatedTokens  tokens handed to the sink (the end-of-text token is not counted)
 * @param promptNanos      time spent on the prompt
 * @param generationNanos  time spent generating after the prompt
 * @param cachedTokens     leading prompt tokens whose keys and values were reused from an earlier request, not
 *                         computed again
 * @param draftedTokens    tokens drafted (by prompt lookup) and verified alongside the generated ones
 * @param acceptedDrafts   drafted tokens the text took: each saved a forward step
 */
public record GenerationResult(FinishReason finish, int promptTokens, int generatedTokens, long promptNanos,
                               long generationNanos, int cachedTokens, int draftedTokens, int acceptedDrafts) {
    public GenerationResult {
        Objects.requireNonNull(finish, "finish");
        if (cachedTokens < 0 || cachedTokens > promptTokens) {
            throw new IllegalArgumentException("cached tokens " + cachedTokens + " outside 0.." + promptTokens);
        }
        if (acceptedDrafts < 0 || acceptedDrafts > draftedTokens) {
            throw new IllegalArgumentException("accepted drafts " + acceptedDrafts + " outside 0.." + draftedTokens);
        }
    }

    /** A generation that drafted nothing. */
    public GenerationResult(FinishReason finish, int promptTokens, int generatedTokens, long promptNanos,
                            long generationNanos, int cachedTokens) {
        this(finish, promptTokens, generatedTokens, promptNanos, generationNanos, cachedTokens, 0, 0);
    }

    /** A generation that reused nothing. */
    public GenerationResult(FinishReason finish, int promptTokens, int generatedTokens, long promptNanos,
                            long generationNanos) {
        this(finish, promptTokens, generatedTokens, promptNanos, generationNanos, 0);
    }

    /** Prompt tokens computed by this generation. */
    public int computedPromptTokens() {
        return promptTokens - cachedTokens;
    }
}
