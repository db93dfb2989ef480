package dev.laneway.spi;

import java.util.Map;
import java.util.Objects;

/**
 * One message of a conversation.
 *
 * @param role    {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param content its text; null for an assistant message that only calls tools
 * @param fields  the message's other fields for the chat template, as the client sent them ({@code name},
 *                {@code tool_calls}, {@code tool_call_id}, {@code reasoning_content}): JSON values as maps, lists,
 *                strings, numbers, booleans and nulls
 */
public record ChatMessage(String role, String content, Map<String, Object> fields) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        fields = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(fields));
        if (fields.containsKey("role") || fields.containsKey("content")) {
            throw new IllegalArgumentException("role and content are not among a message's other fields");
        }
    }

    /** A message of only a role and text. */
    public ChatMessage(String role, String content) {
        this(role, Objects.requireNonNull(content, "content"), Map.of());
    }

    /** The text, {@code ""} when there is none. */
    public String text() {
        return content == null ? "" : content;
    }
}
