package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON shapes of {@code /v1/completions}. */
final class CompletionWire {
    private CompletionWire() {
    }

    /** A whole response, or one streamed chunk (then usage and timings are left out until the end). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record TextCompletion(String id, String object, long created, String model, String systemFingerprint,
                          List<Choice> choices,
                          @JsonInclude(JsonInclude.Include.NON_NULL) Usage usage,
                          @JsonInclude(JsonInclude.Include.NON_NULL) Timings timings) {
    }

    /** A choice, or its part in a chunk; finish_reason is null until its last chunk. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Choice(String text, int index, Logprobs logprobs, String finishReason) {
    }

    /** The legacy completions logprobs object; text_offset counts from the start of the choice's text. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Logprobs(List<String> tokens, List<Float> tokenLogprobs, List<Map<String, Float>> topLogprobs,
                    List<Integer> textOffset) {

        /** Null when log-probabilities were not asked for. */
        static Logprobs of(List<TokenLogprob> entries, boolean asked) {
            if (!asked) {
                return null;
            }
            List<String> tokens = entries.stream().map(TokenLogprob::token).toList();
            List<Float> logprobs = entries.stream().map(TokenLogprob::logprob).toList();
            List<Integer> offsets = entries.stream().map(TokenLogprob::textOffset).toList();
            List<Map<String, Float>> top = entries.stream().map(Logprobs::topOf).toList();
            return new Logprobs(tokens, logprobs, top, offsets);
        }

        /** The k most likely tokens and, as OpenAI does, the chosen one when it is not among them. */
        private static Map<String, Float> topOf(TokenLogprob entry) {
            Map<String, Float> top = new LinkedHashMap<>();
            for (TokenLogprob.Candidate c : entry.top()) {
                top.putIfAbsent(c.token(), c.logprob());
            }
            top.putIfAbsent(entry.token(), entry.logprob());
            return top;
        }
    }
}
