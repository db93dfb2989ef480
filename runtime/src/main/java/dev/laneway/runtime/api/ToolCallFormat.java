package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a model family writes tool calls into its text, told by its chat template, and how that text is read back
 * into OpenAI's {@code tool_calls}. Text that does not parse as the format's calls is an ordinary answer: the client
 * gets it as content, never an error.
 */
enum ToolCallFormat {
    /** Hermes, Qwen 2.5/3: {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>}, or Qwen 3.5 and Coder's
     * {@code <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>}. */
    HERMES("<tool_call>"),
    /** Mistral: {@code [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]}, or {@code [TOOL_CALLS]NAME[ARGS]{...}}. */
    MISTRAL("[TOOL_CALLS]"),
    /** DeepSeek R1/V3: {@code <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```
     * <｜tool▁call▁end｜>...}, or V3.1 and later's {@code <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>}. */
    DEEPSEEK(DeepSeekTokens.CALLS_BEGIN),
    /** Llama 3.x: the whole answer one JSON object, {@code {"name": ..., "parameters": {...}}}, maybe after
     * {@code <|python_tag|>}. */
    LLAMA3("{"),
    /** A template without a format of its own: the answer one JSON object, {@code {"tool_call": {"name": ...,
     * "arguments": {...}}}}, {@code {"tool_calls": [...]}} or {@code {"response": "..."}}, held to that by a grammar
     * (see {@link GenericToolPrompt}). */
    GENERIC("{");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern HERMES_CALL = Pattern.compile("<tool_call>(.*?)(?:</tool_call>|$)", Pattern.DOTALL);
    private static final Pattern XML_FUNCTION = Pattern.compile(
            "^<function=([^>\\n]+)>(.*?)(?:</function>)?\\s*$", Pattern.DOTALL);
    private static final Pattern XML_PARAMETER = Pattern.compile(
            "<parameter=([^>\\n]+)>\\n?(.*?)\\n?</parameter>", Pattern.DOTALL);
    private static final String PYTHON_TAG = "<|python_tag|>";

    /** Where a call begins: text from here on is held back while streaming until the answer is complete. */
    final String marker;

    ToolCallFormat(String marker) {
        this.marker = marker;
    }

    /** One call: the function's name and its arguments as JSON text, as OpenAI sends them. */
    record Call(String name, String arguments) {
    }

    /** An answer read back: its content (null when there is none) and its calls (empty for an ordinary answer). */
    record Parsed(String content, List<Call> calls) {
    }

    /** The format a chat template writes, from the markers its source holds; empty: it has none of its own. */
    static Optional<ToolCallFormat> of(String templateSource) {
        if (templateSource.contains("<tool_call>")) {
            return Optional.of(HERMES);
        }
        if (templateSource.contains(DeepSeekTokens.CALLS_BEGIN)) {
            return Optional.of(DEEPSEEK);
        }
        if (templateSource.contains("[TOOL_CALLS]")) {
            return Optional.of(MISTRAL);
        }
        if (templateSource.contains("<|start_header_id|>") && templateSource.contains("\"parameters\"")) {
            return Optional.of(LLAMA3);
        }
        return Optional.empty();
    }

    /** Where held-back text begins in {@code text} (its length when no call has begun). */
    int callStart(String text) {
        if (this == GENERIC) {
            return 0;
        }
        if (this == LLAMA3) {
            String lead = text.stripLeading();
            boolean mayBeCall = lead.isEmpty() || lead.startsWith("{") || lead.startsWith(PYTHON_TAG)
                    || PYTHON_TAG.startsWith(lead);
            return mayBeCall ? 0 : text.length();
        }
        int at = text.indexOf(marker);
        if (at >= 0) {
            return at;
        }
        // A marker's beginning at the very end may be the rest of it arriving.
        for (int k = Math.min(marker.length() - 1, text.length()); k > 0; k--) {
            if (text.endsWith(marker.substring(0, k))) {
                return text.length() - k;
            }
        }
        return text.length();
    }

    /** Reads an answer's calls; an answer that holds none, or holds malformed ones, is all content. */
    Parsed parse(String text) {
        try {
            if (this == GENERIC) {
                return generic(text);
            }
            List<Call> calls = switch (this) {
                case HERMES -> hermes(text);
                case MISTRAL -> mistral(text);
                case DEEPSEEK -> deepseek(text);
                case LLAMA3 -> llama3(text);
                case GENERIC -> throw new IllegalStateException("read above");
            };
            if (calls.isEmpty()) {
                return new Parsed(text, List.of());
            }
            String content = text.substring(0, callStart(text)).strip();
            return new Parsed(content.isEmpty() ? null : content, calls);
        } catch (JsonProcessingException | IllegalArgumentException malformed) {
            return new Parsed(text, List.of());
        }
    }

    private static List<Call> hermes(String text) throws JsonProcessingException {
        List<Call> calls = new ArrayList<>();
        Matcher m = HERMES_CALL.matcher(text);
        while (m.find()) {
            String body = m.group(1).strip();
            Matcher xml = XML_FUNCTION.matcher(body);
            if (xml.matches()) {
                StringBuilder args = new StringBuilder();
                com.fasterxml.jackson.databind.node.ObjectNode object = JSON.createObjectNode();
                Matcher p = XML_PARAMETER.matcher(xml.group(2));
                while (p.find()) {
                    object.set(p.group(1).strip(), xmlValue(p.group(2)));
                }
                args.append(JSON.writeValueAsString(object));
                calls.add(new Call(xml.group(1).strip(), args.toString()));
            } else {
                calls.add(call(JSON.readTree(body), "arguments"));
            }
        }
        return calls;
    }

    /** A parameter's value: JSON when it reads as JSON (numbers, objects, ...), else the text itself. */
    private static JsonNode xmlValue(String value) {
        try {
            return JSON.readTree(value);
        } catch (JsonProcessingException notJson) {
            return JSON.getNodeFactory().textNode(value);
        }
    }

    private static List<Call> mistral(String text) throws JsonProcessingException {
        int at = text.indexOf(MISTRAL.marker);
        if (at < 0) {
            return List.of();
        }
        String rest = text.substring(at + MISTRAL.marker.length()).strip();
        List<Call> calls = new ArrayList<>();
        if (rest.startsWith("[")) {
            for (JsonNode call : JSON.readTree(rest)) {
                calls.add(call(call, "arguments"));
            }
            return calls;
        }
        for (String part : rest.split(Pattern.quote(MISTRAL.marker))) {
            int args = part.indexOf("[ARGS]");
            if (args < 0) {
                throw new IllegalArgumentException("a Mistral call without [ARGS]");
            }
            calls.add(new Call(part.substring(0, args).strip(), arguments(JSON.readTree(part.substring(args + 6)))));
        }
        return calls;
    }

    private static List<Call> deepseek(String text) throws JsonProcessingException {
        List<Call> calls = new ArrayList<>();
        Matcher m = DeepSeekTokens.CALL.matcher(text);
        while (m.find()) {
            String head = m.group(1).strip();
            String body = m.group(2).strip();
            if (head.equals("function")) {
                // R1/V3: the name on the first line, the arguments in a json code block.
                Matcher fenced = DeepSeekTokens.FENCED.matcher(body);
                if (!fenced.matches()) {
                    throw new IllegalArgumentException("a DeepSeek call without its json block");
                }
                calls.add(new Call(fenced.group(1).strip(), arguments(JSON.readTree(fenced.group(2)))));
            } else {
                calls.add(new Call(head, arguments(JSON.readTree(body))));
            }
        }
        return calls;
    }

    /** DeepSeek's tool tokens, spelled with its full-width bar and its word-boundary block. */
    static final class DeepSeekTokens {
        static final String CALLS_BEGIN = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
        static final String CALLS_END = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
        static final String CALL_BEGIN = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>";
        static final String SEP = "<\uFF5Ctool\u2581sep\uFF5C>";
        static final String CALL_END = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
        static final Pattern CALL = Pattern.compile(Pattern.quote(CALL_BEGIN) + "(.*?)" + Pattern.quote(SEP)
                + "(.*?)(?:" + Pattern.quote(CALL_END) + "|$)", Pattern.DOTALL);
        static final Pattern FENCED = Pattern.compile("([^\\n]+)\\n```json\\n(.*?)\\n?```", Pattern.DOTALL);
    }

    private static List<Call> llama3(String text) throws JsonProcessingException {
        String body = text.strip();
        if (body.startsWith(PYTHON_TAG)) {
            body = body.substring(PYTHON_TAG.length()).strip();
        }
        if (!body.startsWith("{")) {
            return List.of();
        }
        JsonNode call = JSON.readTree(body);
        return List.of(call(call, call.has("parameters") ? "parameters" : "arguments"));
    }

    /** A generic answer: a reply's text as content, or its calls. */
    private static Parsed generic(String text) throws JsonProcessingException {
        JsonNode answer = JSON.readTree(text);
        if (answer != null && answer.path("response").isTextual()) {
            return new Parsed(answer.get("response").textValue(), List.of());
        }
        List<Call> calls = new ArrayList<>();
        if (answer != null && answer.has("tool_call")) {
            calls.add(call(answer.get("tool_call"), "arguments"));
        } else if (answer != null && answer.path("tool_calls").isArray()) {
            for (JsonNode call : answer.get("tool_calls")) {
                calls.add(call(call, "arguments"));
            }
        }
        return new Parsed(calls.isEmpty() ? text : null, calls);
    }

    /** {@code {"name": ..., field: {...}}} as a call. */
    private static Call call(JsonNode node, String field) {
        if (node == null || !node.isObject() || !node.path("name").isTextual() || !node.has(field)) {
            throw new IllegalArgumentException("not a call: " + node);
        }
        return new Call(node.get("name").textValue(), arguments(node.get(field)));
    }

    /** Arguments as JSON text: an object written out, or a string that already holds one. */
    private static String arguments(JsonNode node) {
        if (node.isTextual()) {
            try {
                if (JSON.readTree(node.textValue()).isObject()) {
                    return node.textValue();
                }
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("arguments are not JSON");
            }
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("arguments are not an object");
        }
        return node.toString();
    }
}
