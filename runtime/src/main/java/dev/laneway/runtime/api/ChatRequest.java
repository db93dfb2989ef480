package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.spi.ChatMessage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code POST /v1/chat/completions}: a conversation, rendered with the model's chat template.
 *
 * @param model    the model asked for; empty: the served one
 * @param messages the conversation, content flattened to text
 */
record ChatRequest(Optional<String> model, List<ChatMessage> messages, GenerationParams params) {

    /** The roles a message may have; {@code developer} is OpenAI's newer name for {@code system}. */
    private static final Map<String, String> ROLES = Map.of("system", "system", "developer", "system",
            "user", "user", "assistant", "assistant", "tool", "tool");

    ChatRequest {
        messages = List.copyOf(messages);
    }

    static ChatRequest read(JsonRequest r) {
        return new ChatRequest(r.string("model"), messages(r.raw("messages")), GenerationParams.read(r, true));
    }

    private static List<ChatMessage> messages(JsonNode node) {
        if (node == null) {
            throw ApiException.invalidValue("messages", "messages is required");
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("messages", "messages must be a list of messages");
        }
        if (node.isEmpty()) {
            throw ApiException.invalidValue("messages", "messages must hold at least one message");
        }
        List<ChatMessage> messages = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            messages.add(message(node.get(i), "messages[" + i + "]"));
        }
        return messages;
    }

    private static ChatMessage message(JsonNode node, String param) {
        if (!node.isObject()) {
            throw ApiException.invalidType(param, param + " must be an object with a role and a content");
        }
        JsonNode role = node.get("role");
        if (role == null || !role.isTextual()) {
            throw ApiException.invalidType(param + ".role", param + ".role must be a string");
        }
        String mapped = ROLES.get(role.textValue());
        if (mapped == null) {
            throw ApiException.invalidValue(param + ".role", "unknown role '" + role.textValue()
                    + "'; expected system, developer, user, assistant or tool");
        }
        return new ChatMessage(mapped, content(node.get("content"), param + ".content"));
    }

    /** A string, or a list of {@code {"type":"text","text":...}} parts joined by newlines; null reads as empty. */
    private static String content(JsonNode node, String param) {
        if (node == null || node.isNull()) {
            return "";
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        if (!node.isArray()) {
            throw ApiException.invalidType(param, param + " must be a string or a list of text parts");
        }
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            JsonNode part = node.get(i);
            String partParam = param + "[" + i + "]";
            if (!part.isObject() || !"text".equals(part.path("type").asText())) {
                throw ApiException.invalidValue(partParam, partParam + " must be a text part; only text content "
                        + "is supported");
            }
            JsonNode text = part.get("text");
            if (text == null || !text.isTextual()) {
                throw ApiException.invalidType(partParam + ".text", partParam + ".text must be a string");
            }
            texts.add(text.textValue());
        }
        return String.join("\n", texts);
    }
}
