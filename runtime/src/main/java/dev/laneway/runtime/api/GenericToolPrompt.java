package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.spi.ChatMessage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A conversation with tools for a chat template that knows no tool format ({@link ToolCallFormat#GENERIC}): the
 * tools and the answer's JSON are described in the system message, and the conversation's earlier calls and results
 * become plain turns in that JSON, so that the template sees only system, user and assistant text.
 */
final class GenericToolPrompt {
    private static final ObjectMapper JSON = new ObjectMapper();

    private GenericToolPrompt() {
    }

    /** Whether a conversation needs rewriting: it offers tools, or holds calls or their results. */
    static boolean needed(List<ChatMessage> messages, List<Object> tools) {
        return !tools.isEmpty() || messages.stream().anyMatch(m -> m.role().equals("tool")
                || m.fields().containsKey("tool_calls"));
    }

    /**
     * {@code messages} as plain turns; when {@code tools} are offered, the system message tells of them and of how to
     * answer.
     */
    static List<ChatMessage> messages(List<ChatMessage> messages, List<OfferedTool> tools, ToolChoice choice,
                                      boolean parallel) {
        List<ChatMessage> plain = new ArrayList<>();
        int first = 0;
        if (!tools.isEmpty()) {
            String instructions = instructions(tools, choice, parallel);
            if (!messages.isEmpty() && messages.get(0).role().equals("system")) {
                plain.add(new ChatMessage("system", messages.get(0).text() + "\n\n" + instructions));
                first = 1;
            } else {
                plain.add(new ChatMessage("system", instructions));
            }
        }
        boolean afterResult = false;
        for (ChatMessage m : messages.subList(first, messages.size())) {
            if (m.role().equals("tool")) {
                String result = write(JSON.createObjectNode().set("tool_response", JSON.createObjectNode()
                        .put("tool_call_id", (String) m.fields().get("tool_call_id")).put("content", m.text())));
                // The results of parallel calls are one user turn, so that turns still alternate.
                if (afterResult) {
                    ChatMessage last = plain.remove(plain.size() - 1);
                    result = last.text() + "\n" + result;
                }
                plain.add(new ChatMessage("user", result));
                afterResult = true;
                continue;
            }
            afterResult = false;
            if (m.fields().containsKey("tool_calls")) {
                plain.add(new ChatMessage("assistant", calls((List<?>) m.fields().get("tool_calls"), parallel)));
            } else {
                plain.add(m);
            }
        }
        return plain;
    }

    private static String instructions(List<OfferedTool> tools, ToolChoice choice, boolean parallel) {
        ArrayNode described = JSON.createArrayNode();
        for (OfferedTool t : tools) {
            if (choice.function().map(t.name()::equals).orElse(true)) {
                ObjectNode d = described.addObject().put("name", t.name());
                if (!t.description().isEmpty()) {
                    d.put("description", t.description());
                }
                try {
                    d.set("parameters", JSON.readTree(t.parameters()));
                } catch (JsonProcessingException e) {
                    throw new IllegalStateException("a checked tool's parameters did not read as JSON", e);
                }
            }
        }
        String call = parallel && choice.function().isEmpty()
                ? "{\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}, ...]} to call tools"
                : "{\"tool_call\": {\"name\": ..., \"arguments\": {...}}} to call a tool";
        return "You can call these tools (their arguments as JSON Schemas):\n" + write(described) + "\n\n"
                + "Answer with one JSON object: " + call
                + (choice.required() ? "." : ", or {\"response\": \"...\"} to reply to the user.");
    }

    /** An earlier answer's calls, as the JSON the answer was. */
    private static String calls(List<?> toolCalls, boolean parallel) {
        ArrayNode calls = JSON.createArrayNode();
        for (Object c : toolCalls) {
            Map<?, ?> function = (Map<?, ?>) ((Map<?, ?>) c).get("function");
            ObjectNode call = calls.addObject().put("name", (String) function.get("name"));
            call.set("arguments", JSON.valueToTree(function.get("arguments")));
        }
        ObjectNode answer = JSON.createObjectNode();
        if (calls.size() == 1 && !parallel) {
            answer.set("tool_call", calls.get(0));
        } else {
            answer.set("tool_calls", calls);
        }
        return write(answer);
    }

    private static String write(Object node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
