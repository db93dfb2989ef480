package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.List;

/** OpenAI's token accounting of a response. */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Usage(int promptTokens, int completionTokens, int totalTokens) {

    /** Each prompt counts once, however many choices it has; every choice's tokens count. */
    static Usage of(int promptTokens, List<ChoiceOutcome> outcomes) {
        int completion = outcomes.stream().mapToInt(o -> o.result().generatedTokens()).sum();
        return new Usage(promptTokens, completion, promptTokens + completion);
    }
}
