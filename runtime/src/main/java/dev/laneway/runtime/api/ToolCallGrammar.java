package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.OutputGrammar;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static dev.laneway.spi.OutputGrammar.literal;

/**
 * The grammar that makes an answer a tool call, in the syntax the model's template writes calls in, each call's
 * arguments held to its function's JSON Schema: so that {@code tool_choice} {@code required} and a named function
 * are enforced rather than hoped for. A generic answer (a template without a format of its own) is always held to its
 * JSON, a reply or a call.
 */
final class ToolCallGrammar {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FIELD = "tool_choice";

    private ToolCallGrammar() {
    }

    /**
     * The grammar for an answer to a request offering {@code tools}; empty when the answer is free (the model may
     * call a tool or not, in its own format).
     *
     * @param template the chat template's source, which tells the variants of a format apart
     * @param parallel whether one answer may make several calls
     */
    static Optional<OutputGrammar> of(ToolCallFormat format, String template, List<OfferedTool> tools,
                                      ToolChoice choice, boolean parallel) {
        if (!choice.required() && format != ToolCallFormat.GENERIC) {
            return Optional.empty();
        }
        List<OutputGrammar.SchemaRule> rules = new ArrayList<>();
        List<Integer> callable = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            if (choice.function().map(tools.get(i).name()::equals).orElse(true)) {
                rules.add(new OutputGrammar.SchemaRule(arguments(i), tools.get(i).parameters(),
                        "tools[" + i + "].function.parameters"));
                callable.add(i);
            }
        }
        boolean many = parallel && choice.function().isEmpty() && format != ToolCallFormat.LLAMA3;
        StringBuilder g = new StringBuilder();
        switch (format) {
            case HERMES -> {
                g.append("root ::= call").append(many ? " (\"\\n\" call)*" : "").append('\n');
                g.append("call ::= \"<tool_call>\\n\" (").append(jsonCalls(tools, callable, "arguments"))
                        .append(") \"\\n</tool_call>\"\n");
            }
            case MISTRAL -> {
                if (template.contains("[ARGS]")) {
                    // [TOOL_CALLS]NAME[ARGS]{...}, once per call.
                    g.append("root ::= call").append(many ? " call*" : "").append('\n');
                    g.append("call ::= ").append(literal("[TOOL_CALLS]")).append(" (")
                            .append(namedCalls(tools, callable, "[ARGS]", "")).append(")\n");
                } else {
                    g.append("root ::= ").append(literal("[TOOL_CALLS][")).append(" call")
                            .append(many ? " (\", \" call)*" : "").append(" \"]\"\n");
                    g.append("call ::= ").append(jsonCalls(tools, callable, "arguments")).append('\n');
                }
            }
            case DEEPSEEK -> {
                String begin = ToolCallFormat.DeepSeekTokens.CALL_BEGIN;
                g.append("root ::= ").append(literal(ToolCallFormat.DeepSeekTokens.CALLS_BEGIN)).append(" call")
                        .append(many ? " (\"\\n\" call)*" : "").append(' ')
                        .append(literal(ToolCallFormat.DeepSeekTokens.CALLS_END)).append('\n');
                if (template.contains("```json")) {
                    // R1 and V3: function<sep>NAME, then the arguments in a json code block.
                    g.append("call ::= ").append(literal(begin + "function" + ToolCallFormat.DeepSeekTokens.SEP))
                            .append(" (").append(namedCalls(tools, callable, "\n```json\n", "\n```")).append(") ");
                } else {
                    g.append("call ::= ").append(literal(begin)).append(" (")
                            .append(namedCalls(tools, callable, ToolCallFormat.DeepSeekTokens.SEP, "")).append(") ");
                }
                g.append(literal(ToolCallFormat.DeepSeekTokens.CALL_END)).append('\n');
            }
            case LLAMA3 -> g.append("root ::= ").append(jsonCalls(tools, callable, "parameters")).append('\n');
            case GENERIC -> {
                g.append("root ::= ").append(many ? literal("{\"tool_calls\": [") + " call (\", \" call)* "
                        + literal("]}") : literal("{\"tool_call\": ") + " call \"}\"");
                if (!choice.required()) {
                    g.append(" | ").append(literal("{\"response\": ")).append(" reply \"}\"");
                    rules.add(new OutputGrammar.SchemaRule("reply", "{\"type\":\"string\"}", FIELD));
                }
                g.append('\n');
                g.append("call ::= ").append(jsonCalls(tools, callable, "arguments")).append('\n');
            }
        }
        return Optional.of(OutputGrammar.gbnf(g.toString(), rules, FIELD));
    }

    /** The rule of tool {@code i}'s arguments. */
    private static String arguments(int i) {
        return "tool" + i;
    }

    /** Alternatives of {@code {"name": NAME, "KEY": ARGUMENTS}}, one per callable tool. */
    private static String jsonCalls(List<OfferedTool> tools, List<Integer> callable, String key) {
        List<String> alternatives = new ArrayList<>();
        for (int i : callable) {
            alternatives.add(literal("{\"name\": " + json(tools.get(i).name()) + ", \"" + key + "\": ") + " "
                    + arguments(i) + " \"}\"");
        }
        return String.join(" | ", alternatives);
    }

    /** Alternatives of {@code NAME BEFORE ARGUMENTS AFTER}, the name as it is, one per callable tool. */
    private static String namedCalls(List<OfferedTool> tools, List<Integer> callable, String before, String after) {
        List<String> alternatives = new ArrayList<>();
        for (int i : callable) {
            alternatives.add(literal(tools.get(i).name() + before) + " " + arguments(i)
                    + (after.isEmpty() ? "" : " " + literal(after)));
        }
        return String.join(" | ", alternatives);
    }

    private static String json(String text) {
        try {
            return JSON.writeValueAsString(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
