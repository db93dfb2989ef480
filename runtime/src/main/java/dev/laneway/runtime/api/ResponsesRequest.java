package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Set;

/**
 * OpenAI's {@code POST /v1/responses} request, read as the chat request it amounts to: {@code instructions} a system
 * message, {@code input} (a string or items) the conversation, where {@code function_call} items are an assistant's
 * tool calls, {@code function_call_output} items tool messages and {@code reasoning} items an earlier answer's
 * reasoning; function tools, {@code text.format} and {@code max_output_tokens} in their chat equivalents. Nothing is
 * stored, so what needs a stored response is refused by name.
 */
final class ResponsesRequest {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Every top-level field this server reads; any other is refused. */
    private static final Set<String> FIELDS = Set.of("model", "input", "instructions", "max_output_tokens",
            "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls", "stream", "text", "store",
            "metadata", "user", "truncation", "reasoning", "service_tier", "include", "stream_options",
            "safety_identifier", "prompt_cache_key", "timings_per_token", "return_progress");

    private ResponsesRequest() {
    }

    static ObjectNode toChat(JsonRequest r) {
        for (String field : r.fieldNames()) {
            if (!FIELDS.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported"
                        + (field.equals("previous_response_id") || field.equals("conversation")
                        ? ": this server stores no responses; send the whole conversation as input" : ""));
            }
        }
        if (r.bool("store").orElse(false)) {
            throw ApiException.invalidValue("store", "store true is not supported: this server keeps no responses");
        }
        r.string("truncation").filter(t -> !t.equals("disabled")).ifPresent(t -> {
            throw ApiException.invalidValue("truncation", "truncation must be disabled, was " + t
                    + ": a conversation too long for the context is refused, never cut");
        });
        JsonNode include = r.raw("include");
        if (include != null && !include.isEmpty()) {
            throw ApiException.invalidValue("include", "include is not supported");
        }
        JsonNode reasoning = r.raw("reasoning");
        if (reasoning != null && reasoning.hasNonNull("effort")
                && !Set.of("none", "minimal", "low", "medium", "high").contains(reasoning.get("effort").asText())) {
            throw ApiException.invalidValue("reasoning.effort", "reasoning.effort must be none, minimal, low,"
                    + " medium or high, was " + reasoning.get("effort").asText());
        }
        ObjectNode chat = NODES.objectNode();
        r.string("model").ifPresent(m -> chat.put("model", m));
        ArrayNode messages = chat.putArray("messages");
        r.string("instructions").ifPresent(i -> messages.addObject().put("role", "system").put("content", i));
        input(r.raw("input"), messages);
        copy(r, "max_output_tokens", chat, "max_tokens");
        for (String same : new String[]{"temperature", "top_p", "stream", "parallel_tool_calls", "timings_per_token",
                "return_progress"}) {
            copy(r, same, chat, same);
        }
        tools(r.raw("tools"), chat);
        JsonNode choice = r.raw("tool_choice");
        if (choice != null) {
            chat.set("tool_choice", choice.isObject() ? NODES.objectNode().put("type", "function")
                    .set("function", NODES.objectNode().put("name", choice.path("name").asText())) : choice);
        }
        format(r.raw("text"), chat);
        if (reasoning != null && reasoning.hasNonNull("effort")) {
            // Effort means "think or not" here: none and minimal turn the template's thinking off.
            String effort = reasoning.get("effort").asText();
            chat.putObject("chat_template_kwargs").put("enable_thinking", !effort.equals("none")
                    && !effort.equals("minimal"));
        }
        return chat;
    }

    private static void copy(JsonRequest r, String from, ObjectNode chat, String to) {
        JsonNode value = r.raw(from);
        if (value != null) {
            chat.set(to, value);
        }
    }

    /** A string (one user message) or a list of items. */
    private static void input(JsonNode node, ArrayNode messages) {
        if (node == null) {
            throw ApiException.invalidValue("input", "input is required");
        }
        if (node.isTextual()) {
            messages.addObject().put("role", "user").put("content", node.textValue());
            return;
        }
        if (!node.isArray() || node.isEmpty()) {
            throw ApiException.invalidType("input", "input must be a string or a list of at least one item");
        }
        String reasoning = null;
        for (int i = 0; i < node.size(); i++) {
            JsonNode item = node.get(i);
            String param = "input[" + i + "]";
            String type = item.path("type").asText(item.has("role") ? "message" : "");
            switch (type) {
                case "message" -> {
                    String role = item.path("role").asText("");
                    if (!Set.of("user", "assistant", "system", "developer").contains(role)) {
                        throw ApiException.invalidValue(param + ".role", param + ".role must be user, assistant,"
                                + " system or developer, was '" + role + "'");
                    }
                    ObjectNode message = messages.addObject().put("role", role)
                            .put("content", content(item.get("content"), param + ".content"));
                    if (reasoning != null && role.equals("assistant")) {
                        message.put("reasoning_content", reasoning);
                        reasoning = null;
                    }
                }
                case "function_call" -> {
                    ObjectNode last = lastAssistantWithCalls(messages, reasoning);
                    reasoning = null;
                    ObjectNode call = ((ArrayNode) last.get("tool_calls")).addObject();
                    call.put("id", JsonRequest.string(item, "call_id", param)).put("type", "function");
                    call.putObject("function").put("name", JsonRequest.string(item, "name", param))
                            .put("arguments", JsonRequest.string(item, "arguments", param));
                }
                case "function_call_output" -> {
                    JsonNode output = item.get("output");
                    messages.addObject().put("role", "tool")
                            .put("tool_call_id", JsonRequest.string(item, "call_id", param))
                            .put("content", output == null ? "" : content(output, param + ".output"));
                }
                case "reasoning" -> reasoning = reasoningText(item, param);
                default -> throw ApiException.invalidValue(param + ".type", "input items of type '" + type
                        + "' are not supported; message, function_call, function_call_output and reasoning are");
            }
        }
    }

    /** The assistant message the next function call joins: the last one if it already calls, else a new one. */
    private static ObjectNode lastAssistantWithCalls(ArrayNode messages, String reasoning) {
        JsonNode last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
        if (last != null && "assistant".equals(last.path("role").asText()) && last.has("tool_calls")
                && reasoning == null) {
            return (ObjectNode) last;
        }
        ObjectNode message = messages.addObject().put("role", "assistant");
        message.putNull("content");
        if (reasoning != null) {
            message.put("reasoning_content", reasoning);
        }
        message.putArray("tool_calls");
        return message;
    }

    private static String reasoningText(JsonNode item, String param) {
        StringBuilder text = new StringBuilder();
        for (String field : new String[]{"content", "summary"}) {
            JsonNode parts = item.get(field);
            if (parts != null && parts.isArray()) {
                for (JsonNode part : parts) {
                    text.append(part.path("text").asText(""));
                }
                if (!text.isEmpty()) {
                    break;
                }
            }
        }
        return text.toString();
    }

    /** A string, or parts of type input_text or output_text joined; images and files are refused. */
    private static String content(JsonNode node, String param) {
        if (node == null || node.isNull()) {
            return "";
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        if (!node.isArray()) {
            throw ApiException.invalidType(param, param + " must be a string or a list of content parts");
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < node.size(); i++) {
            JsonNode part = node.get(i);
            String type = part.path("type").asText("");
            if (!type.equals("input_text") && !type.equals("output_text")) {
                throw ApiException.invalidValue(param + "[" + i + "].type", "content parts of type '" + type
                        + "' are not supported: the served model reads text only");
            }
            text.append(JsonRequest.string(part, "text", param + "[" + i + "]"));
        }
        return text.toString();
    }

    /** {@code [{"type": "function", "name", "description", "parameters"}]} as chat's function tools. */
    private static void tools(JsonNode node, ObjectNode chat) {
        if (node == null || node.isEmpty()) {
            return;
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("tools", "tools must be a list of tools");
        }
        ArrayNode tools = chat.putArray("tools");
        for (int i = 0; i < node.size(); i++) {
            JsonNode tool = node.get(i);
            String param = "tools[" + i + "]";
            String type = tool.path("type").asText("");
            if (!type.equals("function")) {
                throw ApiException.invalidValue(param + ".type", "tools of type '" + type + "' are not supported;"
                        + " function tools are");
            }
            ObjectNode function = tools.addObject().put("type", "function").putObject("function");
            function.put("name", JsonRequest.string(tool, "name", param));
            if (tool.hasNonNull("description")) {
                function.put("description", JsonRequest.string(tool, "description", param));
            }
            if (tool.hasNonNull("parameters")) {
                function.set("parameters", tool.get("parameters"));
            }
        }
    }

    /** {@code text.format}: text, json_object, or json_schema with its schema (a flat object here). */
    private static void format(JsonNode text, ObjectNode chat) {
        if (text == null || text.isNull()) {
            return;
        }
        JsonNode format = text.get("format");
        if (text.hasNonNull("verbosity") && !text.get("verbosity").asText().equals("medium")) {
            throw ApiException.invalidValue("text.verbosity", "text.verbosity other than medium is not supported");
        }
        if (format == null || format.isNull()) {
            return;
        }
        String type = format.path("type").asText("");
        switch (type) {
            case "text" -> { }
            case "json_object" -> chat.putObject("response_format").put("type", "json_object");
            case "json_schema" -> {
                ObjectNode schema = chat.putObject("response_format").put("type", "json_schema")
                        .putObject("json_schema");
                schema.set("schema", format.get("schema"));
            }
            default -> throw ApiException.invalidValue("text.format.type", "text.format.type must be text,"
                    + " json_object or json_schema, was '" + type + "'");
        }
    }
}
