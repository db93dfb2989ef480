package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.serve.KeepAlive;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Ollama's {@code POST /api/chat} and {@code /api/generate} requests, read as the chat or completion request they
 * amount to: messages (their tool calls with arguments as objects, tool results, thinking), {@code tools},
 * {@code format} (JSON, or a JSON schema) as the response format, {@code think} as the chat template's thinking switch,
 * and the sampling {@code options} under their llama-server names. Ollama streams unless {@code stream} is false.
 * What has no equivalent here is refused by its Ollama name.
 */
final class OllamaRequest {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Set<String> CHAT_FIELDS = Set.of("model", "messages", "tools", "format", "options",
            "stream", "keep_alive", "think");
    private static final Set<String> GENERATE_FIELDS = Set.of("model", "prompt", "system", "format", "options",
            "stream", "keep_alive", "think", "raw", "suffix", "template", "context", "images");

    /** Ollama's sampling options and the fields they are in a chat or completion request. */
    private static final Map<String, String> OPTIONS = Map.ofEntries(Map.entry("num_predict", "max_tokens"),
            Map.entry("temperature", "temperature"), Map.entry("top_k", "top_k"), Map.entry("top_p", "top_p"),
            Map.entry("min_p", "min_p"), Map.entry("seed", "seed"), Map.entry("stop", "stop"),
            Map.entry("repeat_penalty", "repeat_penalty"), Map.entry("repeat_last_n", "repeat_last_n"),
            Map.entry("presence_penalty", "presence_penalty"), Map.entry("frequency_penalty", "frequency_penalty"),
            Map.entry("typical_p", "typical_p"), Map.entry("mirostat", "mirostat"), Map.entry("num_keep", "n_keep"));

    private OllamaRequest() {
    }

    /** The chat request for an {@code /api/chat} request to a model of {@code context} positions. */
    static ObjectNode chat(JsonRequest r, int context) {
        refuseUnknown(r, CHAT_FIELDS);
        ObjectNode chat = common(r, context);
        JsonNode given = r.raw("messages");
        if (given == null || !given.isArray()) {
            throw ApiException.invalidValue("messages", "messages must be a list of messages");
        }
        ArrayNode messages = chat.putArray("messages");
        for (int i = 0; i < given.size(); i++) {
            message(given.get(i), "messages[" + i + "]", messages);
        }
        tools(r.raw("tools"), chat);
        return chat;
    }

    /**
     * The request for an {@code /api/generate} request: with {@code raw}, a completion of the prompt as it is;
     * otherwise a chat of the system prompt and the prompt as the user's message, as Ollama renders it with the
     * model's template.
     */
    static ObjectNode generate(JsonRequest r, int context) {
        refuseUnknown(r, GENERATE_FIELDS);
        for (String field : new String[]{"suffix", "template", "context", "images"}) {
            JsonNode value = r.raw(field);
            if (value != null && !(value.isTextual() && value.textValue().isEmpty())
                    && !(value.isArray() && value.isEmpty())) {
                throw ApiException.invalidValue(field, field + " is not supported" + switch (field) {
                    case "suffix" -> ": use POST /infill for fill-in-the-middle";
                    case "template" -> ": the model's own chat template renders the prompt (or give raw: true)";
                    case "context" -> ": give the conversation as /api/chat messages";
                    default -> ": the served model reads text only";
                });
            }
        }
        ObjectNode request = common(r, context);
        String prompt = r.string("prompt").orElse("");
        if (r.bool("raw").orElse(false)) {
            if (r.raw("system") != null) {
                throw ApiException.invalidValue("system", "system is not read with raw: true; put it in the prompt");
            }
            request.put("prompt", prompt);
            return request;
        }
        ArrayNode messages = request.putArray("messages");
        r.string("system").ifPresent(s -> messages.addObject().put("role", "system").put("content", s));
        messages.addObject().put("role", "user").put("content", prompt);
        return request;
    }

    /** What both requests share: the model, streaming (Ollama's default is on), format, think and the options. */
    private static ObjectNode common(JsonRequest r, int context) {
        ObjectNode out = NODES.objectNode();
        r.string("model").ifPresent(m -> out.put("model", OllamaResource.modelName(m)));
        out.put("stream", r.bool("stream").orElse(true));
        format(r.raw("format"), out);
        think(r.raw("think"), out);
        options(r.raw("options"), context, out);
        return out;
    }

    private static void refuseUnknown(JsonRequest r, Set<String> fields) {
        for (String field : r.fieldNames()) {
            if (!fields.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
    }

    /**
     * {@code keep_alive}: seconds as a number, or a duration as Go writes it ({@code "5m"}, {@code "1h30m"},
     * {@code "0"}); negative keeps the model open until the server stops. Empty when not given.
     */
    static Optional<Duration> keepAlive(JsonRequest r) {
        JsonNode value = r.raw("keep_alive");
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (value.isNumber()) {
            return Optional.of(KeepAlive.ofSeconds(value.doubleValue()));
        }
        return (value.isTextual() ? KeepAlive.parse(value.textValue()) : Optional.<Duration>empty())
                .map(Optional::of).orElseThrow(() -> ApiException.invalidValue("keep_alive", "keep_alive must be a"
                        + " number of seconds or a duration such as \"5m\" or \"1h30m\", was " + value));
    }

    /** {@code "json"}, or a JSON schema, as the response format. */
    private static void format(JsonNode format, ObjectNode out) {
        if (format == null || format.isNull() || (format.isTextual() && format.textValue().isEmpty())) {
            return;
        }
        if (format.isTextual() && format.textValue().equals("json")) {
            out.putObject("response_format").put("type", "json_object");
        } else if (format.isObject()) {
            ObjectNode schema = out.putObject("response_format").put("type", "json_schema").putObject("json_schema");
            schema.put("name", "format");
            schema.set("schema", format);
        } else {
            throw ApiException.invalidValue("format", "format must be \"json\" or a JSON schema object");
        }
    }

    /** {@code think}: true or false switches the template's thinking; a level is a reasoning effort. */
    private static void think(JsonNode think, ObjectNode out) {
        if (think == null || think.isNull()) {
            return;
        }
        if (think.isBoolean()) {
            out.putObject("chat_template_kwargs").put("enable_thinking", think.booleanValue());
        } else if (think.isTextual() && Set.of("low", "medium", "high").contains(think.textValue())) {
            out.put("reasoning_effort", think.textValue());
        } else {
            throw ApiException.invalidValue("think", "think must be true, false, low, medium or high");
        }
    }

    /**
     * Ollama's sampling options under their llama-server names; {@code num_ctx} within the served context; a load
     * option or an unknown one is refused.
     */
    private static void options(JsonNode options, int context, ObjectNode out) {
        if (options == null || options.isNull()) {
            return;
        }
        if (!options.isObject()) {
            throw ApiException.invalidType("options", "options must be an object");
        }
        for (var field : (Iterable<Map.Entry<String, JsonNode>>) options::fields) {
            String name = field.getKey();
            JsonNode value = field.getValue();
            String param = "options." + name;
            if (name.equals("num_ctx")) {
                // the context is sized when the server starts: a request is served in it when it asks for no more
                if (!value.isIntegralNumber() || value.asLong() < 1 || value.asLong() > context) {
                    throw ApiException.invalidValue(param, param + " must be from 1 to the served context of "
                            + context + " (set when the server starts: --opt ctx), was " + value);
                }
                continue;
            }
            if (name.equals("num_predict") && value.isIntegralNumber() && value.asLong() < 0) {
                continue;  // -1 (no limit) and -2 (fill the context): the request then ends where the context does
            }
            String mapped = OPTIONS.get(name);
            if (mapped == null) {
                throw ApiException.invalidValue(param, param + " is not supported (the sampling options are: "
                        + String.join(", ", new java.util.TreeSet<>(OPTIONS.keySet())) + ", num_ctx)");
            }
            out.set(mapped, value);
        }
    }

    /** One message in chat's form: its tool calls with their arguments as JSON text, a tool's name as its name. */
    private static void message(JsonNode node, String param, ArrayNode out) {
        if (!node.isObject()) {
            throw ApiException.invalidType(param, param + " must be an object with a role and a content");
        }
        ObjectNode m = out.addObject();
        for (var field : (Iterable<Map.Entry<String, JsonNode>>) node::fields) {
            String name = field.getKey();
            JsonNode value = field.getValue();
            switch (name) {
                case "role" -> {
                    String role = value.asText("");
                    if (!Set.of("system", "user", "assistant", "tool").contains(role)) {
                        throw ApiException.invalidValue(param + ".role", param + ".role must be system, user,"
                                + " assistant or tool, was '" + role + "'");
                    }
                    m.put("role", role);
                }
                case "content" -> m.put("content", value.isNull() ? "" : JsonRequest.string(node, "content", param));
                case "thinking" -> m.put("reasoning_content", JsonRequest.string(node, "thinking", param));
                case "tool_name" -> m.put("name", JsonRequest.string(node, "tool_name", param));
                case "tool_calls" -> m.set("tool_calls", toolCalls(value, param + ".tool_calls"));
                case "images" -> {
                    if (!value.isNull() && !(value.isArray() && value.isEmpty())) {
                        throw ApiException.invalidValue(param + ".images", param + ".images: image input is not"
                                + " supported, the served model reads text only");
                    }
                }
                default -> throw ApiException.invalidValue(param + "." + name, param + "." + name
                        + " is not supported");
            }
        }
        if (!m.has("role")) {
            throw ApiException.invalidValue(param + ".role", param + ".role is required");
        }
        if (!m.has("content")) {
            m.put("content", "");
        }
    }

    /** Ollama's {@code [{"function": {"name", "arguments": {...}}}]} as chat's calls, arguments as JSON text. */
    private static ArrayNode toolCalls(JsonNode calls, String param) {
        if (!calls.isArray()) {
            throw ApiException.invalidType(param, param + " must be a list");
        }
        ArrayNode out = NODES.arrayNode();
        for (int i = 0; i < calls.size(); i++) {
            JsonNode function = calls.get(i).get("function");
            String callParam = param + "[" + i + "].function";
            if (function == null || !function.isObject()) {
                throw ApiException.invalidType(callParam, callParam + " must be an object with a name");
            }
            JsonNode arguments = function.get("arguments");
            String text;
            try {
                text = arguments == null || arguments.isNull() ? "{}" : arguments.isTextual() ? arguments.textValue()
                        : JSON.writeValueAsString(arguments);
            } catch (JsonProcessingException e) {
                throw ApiException.invalidValue(callParam + ".arguments", callParam + ".arguments is not JSON");
            }
            ObjectNode call = out.addObject().put("id", "call_" + i).put("type", "function");
            call.putObject("function").put("name", JsonRequest.string(function, "name", callParam))
                    .put("arguments", text);
        }
        return out;
    }

    /** Ollama's function tools are chat's; the same shape, checked there. */
    private static void tools(JsonNode tools, ObjectNode out) {
        if (tools != null && !tools.isNull()) {
            if (!tools.isArray()) {
                throw ApiException.invalidType("tools", "tools must be a list of tools");
            }
            if (!tools.isEmpty()) {
                out.set("tools", tools);
            }
        }
    }
}
