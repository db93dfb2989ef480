package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.spi.ChatMessage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code POST /v1/chat/completions}: a conversation, rendered with the model's chat template.
 *
 * @param model    the model asked for; empty: the served one
 * @param messages          the conversation, content flattened to text; each message's tool calls, tool call id,
 *                          name and reasoning content kept for the chat template
 * @param tools             the tools offered, as the template sees them; empty when none are (or
 *                          {@code tool_choice} is {@code none})
 * @param toolChoice        whether the answer must call a tool, and which ({@code tool_choice} {@code required} or
 *                          a named function); ignored when no tools are offered
 * @param parallelToolCalls whether an answer may make more than one call
 * @param reasoningSplit    whether a thinking model's reasoning goes to {@code reasoning_content} (llama-server's
 *                          {@code reasoning_format}: {@code auto} or {@code deepseek}, the default) or stays in the
 *                          content ({@code none})
 * @param templateKwargs    {@code chat_template_kwargs}: extra variables for the chat template, such as
 *                          {@code enable_thinking}
 * @param addGenerationPrompt whether the template opens the assistant's turn ({@code add_generation_prompt})
 * @param continueFinal     whether the answer continues the last message, an assistant's ({@code
 *                          continue_final_message}, and by default when the conversation ends with an assistant
 *                          message without tool calls: a prefill, as llama-server and Anthropic's API read it)
 * @param verbose           llama-server's {@code verbose}: the answer also carries {@code __verbose}
 */
record ChatRequest(Optional<String> model, List<ChatMessage> messages, GenerationParams params, List<Object> tools,
                   ToolChoice toolChoice, boolean parallelToolCalls, boolean reasoningSplit,
                   Map<String, Object> templateKwargs, boolean addGenerationPrompt, boolean continueFinal,
                   boolean verbose) {

    /** The roles a message may have; {@code developer} is OpenAI's newer name for {@code system}. */
    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private static final Map<String, String> ROLES = Map.of("system", "system", "developer", "system",
            "user", "user", "assistant", "assistant", "tool", "tool");

    ChatRequest {
        messages = List.copyOf(messages);
        tools = List.copyOf(tools);
        templateKwargs = Collections.unmodifiableMap(new LinkedHashMap<>(templateKwargs));
    }

    static ChatRequest read(JsonRequest r, RequestDefaults defaults) {
        List<Object> tools = tools(r.raw("tools"));
        ToolChoice choice = toolChoice(r.raw("tool_choice"), tools);
        if (choice == null) {
            tools = List.of();
            choice = ToolChoice.AUTO;
        }
        boolean parallel = r.bool("parallel_tool_calls").orElse(true);
        String reasoning = r.string("reasoning_format").orElse("auto");
        if (!List.of("auto", "deepseek", "none").contains(reasoning)) {
            throw ApiException.invalidValue("reasoning_format", "reasoning_format must be auto, deepseek or none, was "
                    + reasoning);
        }
        List<ChatMessage> messages = messages(r.raw("messages"));
        boolean addGenerationPrompt = r.bool("add_generation_prompt").orElse(true);
        boolean continueFinal = r.bool("continue_final_message").orElse(false);
        if (addGenerationPrompt && continueFinal && r.raw("add_generation_prompt") != null) {
            throw ApiException.invalidValue("continue_final_message", "continue_final_message and"
                    + " add_generation_prompt cannot both be true");
        }
        ChatMessage last = messages.get(messages.size() - 1);
        boolean prefill = last.role().equals("assistant") && !last.fields().containsKey("tool_calls");
        if (continueFinal && !prefill) {
            throw ApiException.invalidValue("continue_final_message", "continue_final_message needs the last message"
                    + " to be an assistant's, without tool calls");
        }
        if (prefill && messages.size() >= 2 && messages.get(messages.size() - 2).role().equals("assistant")) {
            // Which of the two would the answer continue? llama-server refuses this too.
            throw ApiException.invalidValue("messages", "messages ends with two assistant messages; an answer can"
                    + " continue only one");
        }
        JsonNode lastContent = r.raw("messages").get(messages.size() - 1).get("content");
        if (prefill && lastContent != null && lastContent.isArray()) {
            // The answer continues a prefill's text parts joined by a blank line, as llama-server joins them.
            messages = new ArrayList<>(messages);
            messages.set(messages.size() - 1, new ChatMessage(last.role(), content(lastContent, "messages["
                    + (messages.size() - 1) + "].content", "\n\n"), last.fields()));
        }
        return new ChatRequest(r.string("model"), messages, GenerationParams.read(r, GenerationParams.Dialect.CHAT,
                defaults), tools, choice, parallel, !reasoning.equals("none"),
                withThinking(templateKwargs(r.raw("chat_template_kwargs")), r.string("reasoning_effort")),
                addGenerationPrompt, continueFinal || (prefill && addGenerationPrompt),
                r.bool("verbose").orElse(false));
    }

    /**
     * The chat template's {@code enable_thinking}: as {@code chat_template_kwargs} sets it, else from OpenAI's
     * {@code reasoning_effort} ({@code none} and {@code minimal} off, the others on); else unset, for the server's
     * default ({@link GenerationService#prompt}).
     */
    private static Map<String, Object> withThinking(Map<String, Object> kwargs, Optional<String> effort) {
        if (kwargs.containsKey("enable_thinking") || effort.isEmpty()) {
            return kwargs;
        }
        Map<String, Object> with = new LinkedHashMap<>(kwargs);
        with.put("enable_thinking", !effort.get().equals("none") && !effort.get().equals("minimal"));
        return with;
    }

    /**
     * {@code tool_choice}: {@code auto} (the default), {@code required}, {@code {"type": "function", "function":
     * {"name": ...}}} naming one of the tools, or {@code none}, which is returned as null: the tools are then not
     * offered at all.
     */
    private static ToolChoice toolChoice(JsonNode node, List<Object> tools) {
        if (node == null || node.isNull()) {
            return ToolChoice.AUTO;
        }
        if (node.isTextual()) {
            ToolChoice choice = switch (node.textValue()) {
                case "none" -> null;
                case "auto" -> ToolChoice.AUTO;
                case "required" -> ToolChoice.REQUIRED;
                default -> throw ApiException.invalidValue("tool_choice", "tool_choice must be none, auto, required"
                        + " or {\"type\": \"function\", \"function\": {\"name\": ...}}, was " + node.textValue());
            };
            if (choice == ToolChoice.REQUIRED && tools.isEmpty()) {
                throw ApiException.invalidValue("tool_choice", "tool_choice required needs tools to choose from");
            }
            return choice;
        }
        JsonNode name = node.path("function").path("name");
        if (!node.isObject() || !"function".equals(node.path("type").asText()) || !name.isTextual()) {
            throw ApiException.invalidType("tool_choice", "a named tool_choice must be {\"type\": \"function\","
                    + " \"function\": {\"name\": ...}}");
        }
        if (OfferedTool.of(tools).stream().noneMatch(t -> t.name().equals(name.textValue()))) {
            throw ApiException.invalidValue("tool_choice", "tool_choice names " + name.textValue()
                    + ", which is not among the tools");
        }
        return ToolChoice.named(name.textValue());
    }

    /** {@code chat_template_kwargs}: an object of variables; {@code messages}, {@code tools} and the like stay ours. */
    private static Map<String, Object> templateKwargs(JsonNode node) {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw ApiException.invalidType("chat_template_kwargs", "chat_template_kwargs must be an object");
        }
        Map<String, Object> kwargs = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : (Iterable<Map.Entry<String, JsonNode>>) node::fields) {
            if (List.of("messages", "tools", "add_generation_prompt", "bos_token", "eos_token").contains(e.getKey())) {
                throw ApiException.invalidValue("chat_template_kwargs." + e.getKey(), e.getKey()
                        + " is set by the request itself, not by chat_template_kwargs");
            }
            kwargs.put(e.getKey(), MAPPER.convertValue(e.getValue(), Object.class));
        }
        return kwargs;
    }

    /** {@code [{"type": "function", "function": {"name", "description", "parameters"}}]}, checked, for the template. */
    private static List<Object> tools(JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("tools", "tools must be a list of tools");
        }
        RequestBounds.atMost("tools", node.size(), RequestBounds.TOOLS, "tools");
        List<Object> tools = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String param = "tools[" + i + "]";
            JsonNode tool = node.get(i);
            if (!tool.isObject() || !"function".equals(tool.path("type").asText())) {
                throw ApiException.invalidValue(param, param + " must be {\"type\": \"function\", \"function\":"
                        + " {...}}; only function tools are supported");
            }
            JsonNode function = tool.get("function");
            if (function == null || !function.isObject() || !function.path("name").isTextual()) {
                throw ApiException.invalidType(param + ".function", param + ".function must be an object with a"
                        + " name");
            }
            JsonNode parameters = function.get("parameters");
            if (parameters != null && !parameters.isObject()) {
                throw ApiException.invalidType(param + ".function.parameters", "the parameters must be a JSON"
                        + " schema object");
            }
            tools.add(MAPPER.convertValue(tool, Object.class));
        }
        return tools;
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
        RequestBounds.atMost("messages", node.size(), RequestBounds.MESSAGES, "messages");
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
        Map<String, Object> fields = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> field : (Iterable<Map.Entry<String, JsonNode>>) node::fields) {
            String name = field.getKey();
            JsonNode value = field.getValue();
            String fieldParam = param + "." + name;
            switch (name) {
                case "role", "content" -> {
                }
                case "name", "tool_call_id", "reasoning_content" -> {
                    if (!value.isNull()) {
                        if (!value.isTextual()) {
                            throw ApiException.invalidType(fieldParam, fieldParam + " must be a string");
                        }
                        fields.put(name, value.textValue());
                    }
                }
                case "tool_calls" -> {
                    if (!value.isNull() && !value.isEmpty()) {
                        fields.put(name, toolCalls(value, fieldParam));
                    }
                }
                default -> {
                    // What OpenAI's SDKs send back with an assistant message they received, empty, carries nothing.
                    if (!value.isNull() && !(value.isContainerNode() && value.isEmpty())) {
                        throw ApiException.invalidValue(fieldParam, fieldParam + " is not supported");
                    }
                }
            }
        }
        JsonNode content = node.get("content");
        if ((content == null || content.isNull()) && fields.containsKey("tool_calls")) {
            return new ChatMessage(mapped, null, fields);
        }
        return new ChatMessage(mapped, content(content, param + ".content", "\n"), fields);
    }

    /**
     * An assistant message's tool calls, for the chat template: each {@code {id, type: "function", function: {name,
     * arguments}}}, the arguments (a JSON text, as OpenAI sends them) parsed into the object templates expect.
     */
    private static List<Object> toolCalls(JsonNode node, String param) {
        if (!node.isArray()) {
            throw ApiException.invalidType(param, param + " must be a list of tool calls");
        }
        List<Object> calls = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String callParam = param + "[" + i + "]";
            JsonNode call = node.get(i);
            JsonNode function = call.path("function");
            if (!call.isObject() || !function.isObject() || !function.path("name").isTextual()) {
                throw ApiException.invalidType(callParam, callParam + " must be {\"id\", \"type\": \"function\","
                        + " \"function\": {\"name\", \"arguments\"}}");
            }
            if (!"function".equals(call.path("type").asText("function"))) {
                throw ApiException.invalidValue(callParam + ".type", "only function tool calls are supported");
            }
            Map<String, Object> parsed = new LinkedHashMap<>();
            if (call.hasNonNull("id")) {
                parsed.put("id", call.get("id").asText());
            }
            parsed.put("type", "function");
            Map<String, Object> fn = new LinkedHashMap<>();
            fn.put("name", function.get("name").textValue());
            fn.put("arguments", arguments(function.get("arguments"), callParam + ".function.arguments"));
            parsed.put("function", fn);
            calls.add(parsed);
        }
        return calls;
    }

    private static Object arguments(JsonNode node, String param) {
        JsonNode value = node;
        if (node != null && node.isTextual()) {
            try {
                value = MAPPER.readTree(node.textValue());
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw ApiException.invalidValue(param, param + " must be a JSON object, was not JSON: "
                        + e.getOriginalMessage());
            }
        }
        if (value == null || !value.isObject()) {
            throw ApiException.invalidType(param, param + " must be a JSON object (or the text of one)");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> object = MAPPER.convertValue(value, Map.class);
        return new ToolCallArguments(object, node.isTextual() ? node.textValue() : value.toString());
    }

    /** A string, or a list of {@code {"type":"text","text":...}} parts joined by {@code delimiter}; null reads as empty. */
    private static String content(JsonNode node, String param, String delimiter) {
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
        return String.join(delimiter, texts);
    }
}
