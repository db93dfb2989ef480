package dev.laneway.spi;

import java.util.Objects;

/**
 * One message of a conversation.
 *
 * @param role    {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param content its text
 */
public record ChatMessage(String role, String content) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }
}
