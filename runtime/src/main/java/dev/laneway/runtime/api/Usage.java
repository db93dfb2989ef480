package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.List;

/**
 * OpenAI's token accounting of a response; {@code prompt_tokens_details.cached_tokens} of the prompt tokens were served
 * from the KV cache of an earlier request.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Usage(int promptTokens, int completionTokens, int totalTokens, PromptTokensDetails promptTokensDetails) {

    /** The part of the prompt served from the cache. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record PromptTokensDetails(int cachedTokens) {
    }

    /**
     * Each prompt counts once, however many choices it has; every choice's tokens count. Cached tokens are summed over
     * the choices, at most the prompt tokens.
     */
    static Usage of(int promptTokens, List<ChoiceOutcome> outcomes) {
        int completion = outcomes.stream().mapToInt(o -> o.result().generatedTokens()).sum();
        int cached = Math.min(promptTokens, outcomes.stream().mapToInt(o -> o.result().cachedTokens()).sum());
        return new Usage(promptTokens, completion, promptTokens + completion, new PromptTokensDetails(cached));
    }
}
