package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Anthropic's Messages answer: a {@code message} with content blocks ({@code thinking}, {@code text},
 * {@code tool_use}); streamed as Anthropic streams it, {@code message_start}, each block's {@code content_block_start},
 * deltas and {@code content_block_stop}, then {@code message_delta} with the stop reason and {@code message_stop}.
 * One per request: it keeps the open block of the stream.
 */
final class AnthropicFormat implements ReplyFormat {
    static final String PATH = "/v1/messages";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private final String id = "msg_" + token();
    private final String model;
    private final int promptTokens;
    /** The type of the block the stream has open ({@code thinking} or {@code text}), or null. */
    private String open;
    private int blocks;

    AnthropicFormat(String model, int promptTokens) {
        this.model = model;
        this.promptTokens = promptTokens;
    }

    @Override
    public boolean endsWithDone() {
        return false;
    }

    @Override
    public Optional<Object> opening(int index) {
        Message start = new Message(id, "message", "assistant", model, List.of(), null, null,
                new Usage(promptTokens, 0, 0, 0));
        return Optional.of(new SseEvents.Builder().add("message_start", Map.of("type", "message_start", "message",
                start)).build());
    }

    @Override
    public Object progress(int index) {
        throw new IllegalStateException("Anthropic's stream has no progress events (return_progress is refused)");
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        return delta("text", "text_delta", text);
    }

    @Override
    public Object reasoning(int index, String text, List<TokenLogprob> logprobs) {
        return delta("thinking", "thinking_delta", text);
    }

    /** A delta of a block of {@code type}, opening it (and closing another) first. */
    private SseEvents delta(String type, String deltaType, String text) {
        SseEvents.Builder events = new SseEvents.Builder();
        if (text.isEmpty()) {
            return events.build();
        }
        if (!type.equals(open)) {
            close(events);
            ObjectNode block = NODES.objectNode().put("type", type).put(type, "");
            events.add("content_block_start", Map.of("type", "content_block_start", "index", blocks,
                    "content_block", block));
            open = type;
        }
        ObjectNode delta = NODES.objectNode().put("type", deltaType).put(type, text);
        events.add("content_block_delta", Map.of("type", "content_block_delta", "index", blocks, "delta", delta));
        return events.build();
    }

    /** Closes the open block; a thinking block gets its (empty: nothing is signed here) signature first. */
    private void close(SseEvents.Builder events) {
        if (open == null) {
            return;
        }
        if (open.equals("thinking")) {
            events.add("content_block_delta", Map.of("type", "content_block_delta", "index", blocks, "delta",
                    Map.of("type", "signature_delta", "signature", "")));
        }
        events.add("content_block_stop", Map.of("type", "content_block_stop", "index", blocks));
        open = null;
        blocks++;
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        SseEvents.Builder events = new SseEvents.Builder();
        if (blocks == 0 && open == null && outcome.toolCalls().isEmpty()) {
            events.add("content_block_start", Map.of("type", "content_block_start", "index", 0, "content_block",
                    Map.of("type", "text", "text", "")));
            open = "text";
        }
        close(events);
        for (ToolCallFormat.Call call : outcome.toolCalls()) {
            events.add("content_block_start", Map.of("type", "content_block_start", "index", blocks,
                    "content_block", Map.of("type", "tool_use", "id", "toolu_" + token(), "name", call.name(),
                            "input", Map.of())));
            events.add("content_block_delta", Map.of("type", "content_block_delta", "index", blocks, "delta",
                    Map.of("type", "input_json_delta", "partial_json", call.arguments())));
            events.add("content_block_stop", Map.of("type", "content_block_stop", "index", blocks));
            blocks++;
        }
        ObjectNode delta = NODES.objectNode().put("stop_reason", stopReason(outcome));
        delta.put("stop_sequence", stopSequence(outcome));
        events.add("message_delta", Map.of("type", "message_delta", "delta", delta, "usage",
                usage(outcome.result().cachedTokens(), outcome.result().generatedTokens())));
        events.add("message_stop", Map.of("type", "message_stop"));
        return events.build();
    }

    @Override
    public Object usage(dev.laneway.runtime.api.Usage usage, Timings timings) {
        throw new IllegalStateException("Anthropic's streams carry their usage in message_delta");
    }

    @Override
    public Object error(ApiException error) {
        return new SseEvents.Builder().add("error", error.anthropicBody()).build();
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, dev.laneway.runtime.api.Usage usage, Timings timings) {
        ChoiceOutcome o = outcomes.get(0);
        List<Object> content = new ArrayList<>();
        if (o.reasoning() != null) {
            content.add(Map.of("type", "thinking", "thinking", o.reasoning(), "signature", ""));
        }
        if ((o.text() != null && !o.text().isEmpty()) || o.toolCalls().isEmpty()) {
            content.add(Map.of("type", "text", "text", o.text() == null ? "" : o.text()));
        }
        for (ToolCallFormat.Call call : o.toolCalls()) {
            content.add(Map.of("type", "tool_use", "id", "toolu_" + token(), "name", call.name(), "input",
                    input(call.arguments())));
        }
        return new Message(id, "message", "assistant", model, content, stopReason(o), stopSequence(o),
                usage(usage.promptTokensDetails().cachedTokens(), usage.completionTokens()));
    }

    /** A call's arguments (JSON text) as the input object Anthropic's clients read. */
    static Object input(String arguments) {
        try {
            com.fasterxml.jackson.databind.JsonNode node = MAPPER.readTree(arguments);
            return node != null && node.isObject() ? node : Map.of();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return Map.of();
        }
    }

    private Usage usage(int cached, int output) {
        return new Usage(promptTokens - cached, output, cached, 0);
    }

    /** {@code end_turn}, {@code max_tokens}, {@code stop_sequence} or {@code tool_use}. */
    private static String stopReason(ChoiceOutcome o) {
        if (!o.toolCalls().isEmpty()) {
            return "tool_use";
        }
        return switch (o.ending().type()) {
            case "limit" -> "max_tokens";
            case "word" -> "stop_sequence";
            default -> "end_turn";
        };
    }

    private static String stopSequence(ChoiceOutcome o) {
        return o.ending().type().equals("word") && o.toolCalls().isEmpty() ? o.ending().word() : null;
    }

    private static String token() {
        byte[] bytes = new byte[18];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The message; {@code stop_reason} and {@code stop_sequence} are null while it streams. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record Message(String id, String type, String role, String model, List<Object> content, String stopReason,
                   String stopSequence, Usage usage) {
    }

    /** Input tokens are those computed; those served from the prefix cache are the cache reads. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Usage(int inputTokens, int outputTokens, int cacheReadInputTokens, int cacheCreationInputTokens) {
    }

    /** {@code {"type": "error", "error": {"type", "message"}}}. */
    record ErrorBody(String type, Error error) {
        record Error(String type, String message) {
        }
    }
}
