package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.List;

/**
 * llama-server's {@code timings}: the work the model did for a response, summed over its choices. {@code cache_n}
 * prompt tokens were served from the KV cache and {@code prompt_n} computed. A choice's first token comes from the
 * prompt's last step, so the generation rate counts the tokens after each choice's first over the time after it.
 * With prompt lookup, {@code draft_n} tokens were drafted and {@code draft_n_accepted} of them taken (absent when
 * nothing was drafted, and while a stream runs).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Timings(int cacheN, int promptN, double promptMs, double promptPerTokenMs, double promptPerSecond,
                      int predictedN, double predictedMs, double predictedPerTokenMs, double predictedPerSecond,
                      @JsonInclude(JsonInclude.Include.NON_NULL) Integer draftN,
                      @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("draft_n_accepted")
                      Integer draftNAccepted) {

    static Timings of(List<ChoiceOutcome> outcomes) {
        int cacheN = 0;
        int promptN = 0;
        int predictedN = 0;
        int decoded = 0;
        long promptNanos = 0;
        long predictedNanos = 0;
        int drafted = 0;
        int accepted = 0;
        for (ChoiceOutcome o : outcomes) {
            drafted += o.result().draftedTokens();
            accepted += o.result().acceptedDrafts();
            cacheN += o.result().cachedTokens();
            promptN += o.result().computedPromptTokens();
            predictedN += o.result().generatedTokens();
            decoded += Math.max(0, o.result().generatedTokens() - 1);
            promptNanos += o.result().promptNanos();
            predictedNanos += o.result().generationNanos();
        }
        Timings t = of(cacheN, promptN, promptNanos, predictedN, decoded, predictedNanos);
        return drafted == 0 ? t : new Timings(t.cacheN, t.promptN, t.promptMs, t.promptPerTokenMs, t.promptPerSecond,
                t.predictedN, t.predictedMs, t.predictedPerTokenMs, t.predictedPerSecond, drafted, accepted);
    }

    /**
     * The timings of {@code promptN} computed and {@code cacheN} cached prompt tokens, and {@code predictedN} generated
     * ones of which {@code decoded} (those after the first) took {@code predictedNanos}.
     */
    static Timings of(int cacheN, int promptN, long promptNanos, int predictedN, int decoded, long predictedNanos) {
        double promptMs = promptNanos / 1e6;
        double predictedMs = predictedNanos / 1e6;
        return new Timings(cacheN, promptN, promptMs, perToken(promptMs, promptN), perSecond(promptN, promptMs),
                predictedN, predictedMs, perToken(predictedMs, decoded), perSecond(decoded, predictedMs), null, null);
    }

    private static double perToken(double ms, int tokens) {
        return tokens > 0 ? ms / tokens : 0;
    }

    private static double perSecond(int tokens, double ms) {
        return ms > 0 ? tokens * 1000.0 / ms : 0;
    }
}
