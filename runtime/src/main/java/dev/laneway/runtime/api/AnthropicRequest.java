package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Set;

/**
 * Anthropic's {@code POST /v1/messages} request, read as the chat request it amounts to: the system prompt a first
 * message, content blocks text, {@code tool_use} blocks an assistant's tool calls, {@code tool_result} blocks tool
 * messages, {@code thinking} blocks the reasoning of an earlier answer; tools, tool choice, stop sequences and
 * thinking in their chat equivalents. What has no equivalent here is refused by its Anthropic name.
 */
final class AnthropicRequest {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Every top-level field of the Messages request this server reads; any other is refused. */
    private static final Set<String> FIELDS = Set.of("model", "messages", "max_tokens", "system", "stop_sequences",
            "stream", "temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "metadata",
            "service_tier");

    private AnthropicRequest() {
    }

    /**
     * The chat request for a messages request; {@code counting}: for {@code count_tokens}, which needs no
     * {@code max_tokens}.
     */
    static ObjectNode toChat(JsonRequest r, boolean counting) {
        ObjectNode chat = NODES.objectNode();
        for (String field : r.fieldNames()) {
            if (!FIELDS.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        r.string("model").ifPresent(m -> chat.put("model", m));
        ArrayNode messages = chat.putArray("messages");
        JsonNode system = r.raw("system");
        if (system != null && !system.isNull()) {
            messages.addObject().put("role", "system").put("content", text(system, "system"));
        }
        JsonNode given = r.raw("messages");
        if (given == null || !given.isArray() || given.isEmpty()) {
            throw ApiException.invalidValue("messages", "messages must be a list of at least one message");
        }
        for (int i = 0; i < given.size(); i++) {
            message(given.get(i), "messages[" + i + "]", messages);
        }
        JsonNode maxTokens = r.raw("max_tokens");
        if (maxTokens == null && !counting) {
            throw ApiException.invalidValue("max_tokens", "max_tokens is required");
        }
        if (maxTokens != null) {
            chat.set("max_tokens", maxTokens);
        }
        for (String same : new String[]{"temperature", "top_p", "top_k", "stream"}) {
            JsonNode value = r.raw(same);
            if (value != null) {
                chat.set(same, value);
            }
        }
        JsonNode stops = r.raw("stop_sequences");
        if (stops != null && !stops.isNull()) {
            chat.set("stop", stops);
        }
        tools(r.raw("tools"), chat);
        toolChoice(r.raw("tool_choice"), chat);
        thinking(r.raw("thinking"), maxTokens, chat);
        JsonNode metadata = r.raw("metadata");
        if (metadata != null && !metadata.isNull() && !metadata.isObject()) {
            throw ApiException.invalidType("metadata", "metadata must be an object");
        }
        r.string("service_tier").filter(t -> !t.equals("auto") && !t.equals("standard_only")).ifPresent(t -> {
            throw ApiException.invalidValue("service_tier", "service_tier must be auto or standard_only, was " + t);
        });
        return chat;
    }

    /** One message: its blocks split into what the chat template takes (tool results become tool messages). */
    private static void message(JsonNode node, String param, ArrayNode out) {
        if (!node.isObject()) {
            throw ApiException.invalidType(param, param + " must be an object with a role and a content");
        }
        String role = node.path("role").asText("");
        if (!role.equals("user") && !role.equals("assistant")) {
            throw ApiException.invalidValue(param + ".role", param + ".role must be user or assistant, was '"
                    + role + "'");
        }
        JsonNode content = node.get("content");
        if (content != null && content.isTextual()) {
            out.addObject().put("role", role).put("content", content.textValue());
            return;
        }
        if (content == null || !content.isArray()) {
            throw ApiException.invalidType(param + ".content", param + ".content must be a string or a list of"
                    + " content blocks");
        }
        StringBuilder text = new StringBuilder();
        StringBuilder thinking = new StringBuilder();
        ArrayNode calls = NODES.arrayNode();
        for (int j = 0; j < content.size(); j++) {
            JsonNode block = content.get(j);
            String blockParam = param + ".content[" + j + "]";
            String type = block.path("type").asText("");
            switch (type) {
                case "text" -> text.append(JsonRequest.string(block, "text", blockParam));
                case "image", "document" -> throw ApiException.invalidValue(blockParam, "image input is not"
                        + " supported: the served model reads text only (" + blockParam + " is a " + type + ")");
                case "thinking" -> {
                    requireRole(role, "assistant", blockParam, type);
                    thinking.append(JsonRequest.string(block, "thinking", blockParam));
                }
                case "tool_use" -> {
                    requireRole(role, "assistant", blockParam, type);
                    JsonNode input = block.get("input");
                    if (input == null || !input.isObject()) {
                        throw ApiException.invalidType(blockParam + ".input", blockParam + ".input must be an"
                                + " object");
                    }
                    ObjectNode call = calls.addObject();
                    call.put("id", JsonRequest.string(block, "id", blockParam)).put("type", "function");
                    call.putObject("function").put("name", JsonRequest.string(block, "name", blockParam))
                            .put("arguments", input.toString());
                }
                case "tool_result" -> {
                    requireRole(role, "user", blockParam, type);
                    String result = toolResult(block.get("content"), blockParam + ".content");
                    if (block.path("is_error").asBoolean(false)) {
                        result = "Error: " + result;
                    }
                    out.addObject().put("role", "tool").put("tool_call_id", JsonRequest.string(block, "tool_use_id",
                            blockParam)).put("content", result);
                }
                default -> throw ApiException.invalidValue(blockParam + ".type", "content blocks of type '" + type
                        + "' are not supported; text, tool_use, tool_result and thinking are");
            }
        }
        if (text.isEmpty() && thinking.isEmpty() && calls.isEmpty()) {
            return;
        }
        ObjectNode message = out.addObject().put("role", role);
        if (!text.isEmpty() || calls.isEmpty()) {
            message.put("content", text.toString());
        }
        if (!thinking.isEmpty()) {
            message.put("reasoning_content", thinking.toString());
        }
        if (!calls.isEmpty()) {
            message.set("tool_calls", calls);
        }
    }

    private static void requireRole(String role, String needed, String param, String type) {
        if (!role.equals(needed)) {
            throw ApiException.invalidValue(param, type + " blocks belong in " + needed + " messages");
        }
    }

    /** A tool result's content: a string, or text blocks joined (an image is refused as in a message). */
    private static String toolResult(JsonNode node, String param) {
        if (node == null || node.isNull()) {
            return "";
        }
        return text(node, param);
    }

    /** A string, or a list of text blocks joined. */
    private static String text(JsonNode node, String param) {
        if (node.isTextual()) {
            return node.textValue();
        }
        if (!node.isArray()) {
            throw ApiException.invalidType(param, param + " must be a string or a list of text blocks");
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < node.size(); i++) {
            JsonNode block = node.get(i);
            String blockParam = param + "[" + i + "]";
            String type = block.path("type").asText("");
            if (type.equals("image") || type.equals("document")) {
                throw ApiException.invalidValue(blockParam, "image input is not supported: the served model reads"
                        + " text only (" + blockParam + " is a " + type + ")");
            }
            if (!type.equals("text")) {
                throw ApiException.invalidValue(blockParam + ".type", blockParam + " must be a text block");
            }
            text.append(JsonRequest.string(block, "text", blockParam));
        }
        return text.toString();
    }

    /** {@code [{"name", "description", "input_schema"}]} as chat's function tools; server tools are refused. */
    private static void tools(JsonNode node, ObjectNode chat) {
        if (node == null || node.isNull()) {
            return;
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("tools", "tools must be a list of tools");
        }
        ArrayNode tools = chat.putArray("tools");
        for (int i = 0; i < node.size(); i++) {
            JsonNode tool = node.get(i);
            String param = "tools[" + i + "]";
            String type = tool.path("type").asText("custom");
            if (!type.equals("custom")) {
                throw ApiException.invalidValue(param + ".type", "server tools (" + type + ") are not supported;"
                        + " give custom tools with a name and an input_schema");
            }
            JsonNode schema = tool.get("input_schema");
            if (schema == null || !schema.isObject()) {
                throw ApiException.invalidType(param + ".input_schema", param + ".input_schema must be a JSON"
                        + " schema object");
            }
            ObjectNode function = tools.addObject().put("type", "function").putObject("function");
            function.put("name", JsonRequest.string(tool, "name", param));
            if (tool.hasNonNull("description")) {
                function.put("description", JsonRequest.string(tool, "description", param));
            }
            function.set("parameters", schema);
        }
    }

    /** {@code {"type": "auto" | "any" | "tool" | "none", "name", "disable_parallel_tool_use"}}. */
    private static void toolChoice(JsonNode node, ObjectNode chat) {
        if (node == null || node.isNull()) {
            return;
        }
        if (!node.isObject()) {
            throw ApiException.invalidType("tool_choice", "tool_choice must be an object with a type");
        }
        String type = node.path("type").asText("");
        switch (type) {
            case "auto" -> chat.put("tool_choice", "auto");
            case "any" -> chat.put("tool_choice", "required");
            case "none" -> chat.put("tool_choice", "none");
            case "tool" -> chat.putObject("tool_choice").put("type", "function").putObject("function")
                    .put("name", JsonRequest.string(node, "name", "tool_choice"));
            default -> throw ApiException.invalidValue("tool_choice.type", "tool_choice.type must be auto, any,"
                    + " tool or none, was '" + type + "'");
        }
        if (node.path("disable_parallel_tool_use").asBoolean(false)) {
            chat.put("parallel_tool_calls", false);
        }
    }

    /**
     * {@code {"type": "enabled", "budget_tokens"}} turns the template's thinking on ({@code enable_thinking}) and
     * {@code {"type": "disabled"}} off; the budget must lie below max_tokens, which bounds thinking and answer together.
     */
    private static void thinking(JsonNode node, JsonNode maxTokens, ObjectNode chat) {
        if (node == null || node.isNull()) {
            return;
        }
        String type = node.path("type").asText("");
        switch (type) {
            case "enabled" -> {
                JsonNode budget = node.get("budget_tokens");
                if (budget == null || !budget.canConvertToInt() || budget.intValue() < 1) {
                    throw ApiException.invalidValue("thinking.budget_tokens", "thinking.budget_tokens must be a"
                            + " positive integer");
                }
                if (maxTokens != null && maxTokens.canConvertToInt() && budget.intValue() >= maxTokens.intValue()) {
                    throw ApiException.invalidValue("thinking.budget_tokens", "thinking.budget_tokens must be less"
                            + " than max_tokens");
                }
                chat.putObject("chat_template_kwargs").put("enable_thinking", true);
            }
            case "disabled" -> chat.putObject("chat_template_kwargs").put("enable_thinking", false);
            default -> throw ApiException.invalidValue("thinking.type", "thinking.type must be enabled or disabled,"
                    + " was '" + type + "'");
        }
    }
}
