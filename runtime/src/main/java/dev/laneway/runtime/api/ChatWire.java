package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.List;

/** The JSON shapes of {@code /v1/chat/completions}. */
final class ChatWire {
    private ChatWire() {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ChatCompletion(String id, String object, long created, String model, String systemFingerprint,
                          List<Choice> choices, Usage usage, Timings timings) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Choice(int index, Message message, Logprobs logprobs, String finishReason) {
    }

    /** The answer: content is null when it only calls tools; tool_calls appear when it calls any. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Message(String role, String content,
                   @JsonInclude(JsonInclude.Include.NON_NULL) String reasoningContent,
                   @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ToolCall> toolCalls) {
    }

    /** A tool call; {@code index} only in a streamed delta, where it says which call a piece belongs to. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ToolCall(Integer index, String id, String type, Function function) {
    }

    record Function(String name, String arguments) {
    }

    /** A streamed chunk; usage and timings appear only at the end. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ChatChunk(String id, String object, long created, String model, String systemFingerprint,
                     List<ChunkChoice> choices,
                     @JsonInclude(JsonInclude.Include.NON_NULL) Usage usage,
                     @JsonInclude(JsonInclude.Include.NON_NULL) Timings timings) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ChunkChoice(int index, ChunkDelta delta, Logprobs logprobs, String finishReason) {
    }

    /** What a chunk's choice carries: the opening role, or a piece of the message. */
    sealed interface ChunkDelta permits Opening, Delta {
    }

    /** The first chunk's delta: the role, with {@code content} written as null as clients check for it. */
    record Opening(String role, String content) implements ChunkDelta {
    }

    /**
     * What a chunk adds to the message after the opening: reasoning and content, the tool calls whole in the last
     * chunk, or {@code {}} there when there are none.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Delta(String content, String reasoningContent, List<ToolCall> toolCalls) implements ChunkDelta {
    }

    /** Chat logprobs: one entry per token. */
    record Logprobs(List<Entry> content) {

        /** Null when log-probabilities were not asked for. */
        static Logprobs of(List<TokenLogprob> entries, boolean asked) {
            if (!asked) {
                return null;
            }
            return new Logprobs(entries.stream().map(e -> new Entry(e.token(), e.logprob(), TokenLogprob.utf8(e.token()),
                    e.top().stream().map(c -> new Top(c.token(), c.logprob(), TokenLogprob.utf8(c.token()))).toList())).toList());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Entry(String token, float logprob, int[] bytes, List<Top> topLogprobs) {
    }

    record Top(String token, float logprob, int[] bytes) {
    }

}
